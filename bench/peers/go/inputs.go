// SPDX-License-Identifier: MIT

package main

import (
	"sync/atomic"
	"time"
)

// The workloads' constants: bench/harness/harness.h and bench/tkbench.h.
const (
	nsPerMs = int64(time.Millisecond)
	nsPerS  = int64(time.Second)
	// w1Lo, w1Hi: TKB_W1_LO, TKB_W1_HI, the population's delays (W1, W5).
	w1Lo = 10 * nsPerS
	w1Hi = 20 * nsPerS
)

// seed is TKB_SEED ("timerkit"). The workloads derive their seeds from it
// and n with unsigned arithmetic that wraps (TKB_SEED * 5 + n): a variable,
// so that Go wraps too, where a constant expression would not compile.
var seed uint64 = 0x74696d65726b6974

// ---- inputs: bench/tkbench.h's tkb_rng and bench/harness/drive-core.c ----

// rng is tkb_rng, splitmix64: the same sequence as the C and Java sides for
// the same seed, so that every peer gets the same delays, orders and victims.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// uniform is tkb_uniform_deadlines(): n delays in [lo, hi] ns.
func uniform(n int, lo, hi int64, seed uint64) []int64 {
	r := rng{seed}
	d := make([]int64, n)
	for i := range d {
		d[i] = lo + int64(r.next()%uint64(hi-lo+1))
	}
	return d
}

// permutation is tkb_permutation(): 0..n-1 shuffled (Fisher-Yates, from the end).
func permutation(n int, seed uint64) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	r := rng{seed}
	for i := n; i > 1; i-- {
		j := int(r.next() % uint64(i))
		p[i-1], p[j] = p[j], p[i-1]
	}
	return p
}

// randomIndices is tkb_random_indices(): count indices in [0, n).
func randomIndices(count, n int, seed uint64) []int {
	r := rng{seed}
	p := make([]int, count)
	for i := range p {
		p[i] = int(r.next() % uint64(n))
	}
	return p
}

// ---- the clock -------------------------------------------------------------

// epoch carries a reading of the monotonic clock (time.Now() takes one
// besides the wall clock), so that now() is the monotonic clock, in ns from
// the start: the same clock the runtime keeps its timers' deadlines on
// (CLOCK_MONOTONIC on Linux, as the C side's tkb_now_ns()).
var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) }

// ---- pauses: bench/harness/drive-service.c --------------------------------
//
// The harness's own sleeps are runtime timers too (time.Sleep puts the
// goroutine's timer on its P's heap): one at a time, never inside a timed
// phase.

func sleepNs(ns int64) {
	if ns > 0 {
		time.Sleep(time.Duration(ns))
	}
}

func sleepUntil(deadline int64) { sleepNs(deadline - now()) }

// settle is tkb_settle(): 20 ms + 200 ns per timer, for whatever the
// previous phase left to do (here: the runtime clearing deleted timers from
// its heap) to be done before the next phase starts.
func settle(n int) { sleepNs(20*nsPerMs + 200*int64(n)) }

// noop is the callback of the timers that never fire (W1, W4, W5): one func
// value for all, so that a schedule allocates nothing for it.
func noop() {}

// warmUp mirrors the JVM harness's "the service's thread started": one no-op
// timer due now, and 20 ms. The Go runtime has no service to start, but it
// takes the timer path once and lets the runtime clear what the previous
// iteration stopped before this one's timed phases.
func warmUp() {
	time.AfterFunc(0, noop)
	sleepNs(20 * nsPerMs)
}

// w2Offset is tkb_w2_offset_ns(): max(200 ms, 2 us x n).
func w2Offset(n int) int64 {
	if off := 2000 * int64(n); off > 200*nsPerMs {
		return off
	}
	return 200 * nsPerMs
}

// waitFired is tkb_wait_fired(): polls every 2 ms until n callbacks ran
// (true) or giveUp (a now() reading) passed (false).
func waitFired(fired *atomic.Int64, n int64, giveUp int64) bool {
	for fired.Load() < n {
		if now() > giveUp {
			return false
		}
		sleepNs(2 * nsPerMs)
	}
	return true
}

// stopAll is what closing a service is on the other peers (pending timers
// dropped): every timer still pending stopped, so none outlives its
// iteration. Untimed. The runtime removes them from its heap later (lazily).
func stopAll(timers []*time.Timer) {
	for i, t := range timers {
		if t != nil {
			t.Stop()
			timers[i] = nil
		}
	}
}
