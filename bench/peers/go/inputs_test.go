// SPDX-License-Identifier: MIT

package main

import (
	"reflect"
	"testing"
)

// The inputs must be the C workloads' own (bench/harness/drive-core.c): the
// values below are what tkb_uniform_deadlines(), tkb_permutation() and
// tkb_random_indices() give for these seeds, printed by a C program.
func TestInputsMatchC(t *testing.T) {
	if got, want := uniform(3, w1Lo, w1Hi, seed*5+1000),
		[]int64{13418823223, 15998821701, 10298601488}; !reflect.DeepEqual(got, want) {
		t.Errorf("uniform W1: got %v, want %v", got, want)
	}
	if got, want := permutation(10, seed*3+10),
		[]int{4, 7, 1, 2, 3, 5, 9, 8, 6, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("permutation: got %v, want %v", got, want)
	}
	if got, want := randomIndices(3, 1000, seed*7+1000),
		[]int{249, 789, 76}; !reflect.DeepEqual(got, want) {
		t.Errorf("randomIndices: got %v, want %v", got, want)
	}
	if got, want := uniform(3, nsPerMs, 100*nsPerMs, seed+29),
		[]int64{94988334, 79728696, 20319810}; !reflect.DeepEqual(got, want) {
		t.Errorf("uniform W3: got %v, want %v", got, want)
	}
}
