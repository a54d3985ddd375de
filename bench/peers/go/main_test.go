// SPDX-License-Identifier: MIT

package main

import (
	"sort"
	"strings"
	"testing"
)

// --describe must list exactly the measurements the harness dispatches on:
// tkbench asks for no other.
func TestDescribeListsEveryMeasurement(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(describe(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "runtime go") ||
		!strings.HasPrefix(lines[1], "measurements ") {
		t.Fatalf("describe: %q", lines)
	}
	listed := strings.Fields(lines[1])[1:]
	var known []string
	for m := range measurements {
		known = append(known, m)
	}
	sort.Strings(listed)
	sort.Strings(known)
	if strings.Join(listed, " ") != strings.Join(known, " ") {
		t.Errorf("describe lists %v, the harness runs %v", listed, known)
	}
}

// A bad command line is refused before anything runs.
func TestParseArgs(t *testing.T) {
	good := [][]string{
		{"go-timers", "ops", "1", "2", "10000", "0", "1000,10000"},
		{"go-timers", "idle-hour", "1", "0", "1", "0.3", "0"},
		{"go-timers", "latency", "1", "2", "1", "0.5", "500"},
	}
	for _, a := range good {
		if _, err := parseArgs(a); err != nil {
			t.Errorf("%v: %v", a, err)
		}
	}
	bad := [][]string{
		{"go-timers", "ops", "1", "2", "10000", "0"},
		{"tokio", "ops", "1", "2", "10000", "0", "1000"},
		{"go-timers", "nope", "1", "2", "10000", "0", "1000"},
		{"go-timers", "ops", "0", "2", "10000", "0", "1000"},
		{"go-timers", "ops", "1", "-1", "10000", "0", "1000"},
		{"go-timers", "ops", "1", "2", "0", "0", "1000"},
		{"go-timers", "ops", "1", "2", "1", "inf", "1000"},
		{"go-timers", "latency", "1", "2", "1", "0", "500"},
		{"go-timers", "ops", "1", "2", "1", "0", "1000,0"},
		{"go-timers", "ops", "1", "2", "1", "0", "1000,"},
		{"go-timers", "idle-empty", "1", "0", "1", "0.3", "-1"},
	}
	for _, a := range bad {
		if _, err := parseArgs(a); err == nil {
			t.Errorf("%v: accepted", a)
		}
	}
}
