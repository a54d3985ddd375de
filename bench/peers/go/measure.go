// SPDX-License-Identifier: MIT

package main

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// iteration sizes: as the JVM harness, a warm-up of burst or memory runs at a
// tenth of n (at least 1000: what they measure does not depend on it, and it
// keeps the suite short), one of latency over a tenth of the window, one of
// ops at the full n (its timed phases want the heap grown and its pages
// touched at that size).
func tenth(n int, warm bool) int {
	if !warm {
		return n
	}
	if n/10 > 1000 {
		return n / 10
	}
	return 1000
}

// ---- ops: schedule, cancel, churn (bench/workloads/w1_exec.c) -------------

// ops cancels N timers (random order), schedules N without using the handle,
// and churns `count` pairs (stop one, schedule a new one) at population N;
// nanoseconds per operation, on the calling goroutine.
//
// AfterFunc always returns the *Timer; the schedule phase stores it in a
// slice made and written beforehand (one pointer store per call) only so
// that those timers can be stopped when the phase is over: left alone, they
// would stay in the runtime's heap, a population under every later phase,
// for their 10 to 20 s. The runtime holds every pending Timer anyway.
func (h *harness) ops(n int, warm bool, s *sink) error {
	pairs := h.count
	delays := uniform(n, w1Lo, w1Hi, seed+uint64(n))
	next := uniform(pairs, w1Lo, w1Hi, seed*5+uint64(n))
	perm := permutation(n, seed*3+uint64(n))
	victims := randomIndices(pairs, n, seed*7+uint64(n))
	handles := make([]*time.Timer, n)
	unused := make([]*time.Timer, n)
	for i := range unused { // its pages touched before the timed phase
		unused[i] = nil
	}

	// cancel N, then schedule N
	warmUp()
	for i, d := range delays {
		handles[i] = time.AfterFunc(time.Duration(d), noop)
	}
	settle(n)
	t2 := now()
	for _, i := range perm {
		handles[i].Stop()
	}
	t3 := now()
	settle(n)
	t0 := now()
	for i, d := range delays {
		unused[i] = time.AfterFunc(time.Duration(d), noop)
	}
	t1 := now()
	stopAll(unused)

	// churn at population N: a fresh population, then the pairs
	warmUp()
	for i, d := range delays {
		handles[i] = time.AfterFunc(time.Duration(d), noop)
	}
	settle(n)
	t4 := now()
	for k, v := range victims {
		handles[v].Stop()
		handles[v] = time.AfterFunc(time.Duration(next[k]), noop)
	}
	t5 := now()
	stopAll(handles)

	s.put("schedule_ns", float64(t1-t0)/float64(n))
	s.put("cancel_ns", float64(t3-t2)/float64(n))
	s.put("churn_ns", float64(t5-t4)/float64(pairs))
	s.put("iteration_s", float64((t1-t0)+(t3-t2)+(t5-t4))/1e9)
	return nil
}

// ---- burst: firing throughput (bench/workloads/w2_burst.c) ----------------

// burstCount counts the callbacks of a burst and notes when the first and the
// last ran.
type burstCount struct {
	n                  int64
	fired, first, last atomic.Int64
}

func (b *burstCount) fire() {
	k := b.fired.Add(1)
	if k == 1 {
		b.first.Store(now())
	}
	if k == b.n {
		b.last.Store(now())
	}
}

// burst schedules n timers due at one instant (AfterFunc takes a delay only:
// each is the instant minus a clock read just before the call) and reports
// callbacks per second from that instant to the last callback, and from the
// first callback to the last (the drain). Each callback runs in a goroutine
// of its own (AfterFunc's contract), so the rates include starting them.
func (h *harness) burst(n int, warm bool, s *sink) error {
	n = tenth(n, warm)
	b := &burstCount{n: int64(n)}
	fire := b.fire // one func value for every timer
	warmUp()
	due := now() + w2Offset(n)
	for i := 0; i < n; i++ {
		time.AfterFunc(time.Duration(due-now()), fire)
	}
	schedEnd := now()
	all := waitFired(&b.fired, int64(n), due+60*nsPerS)
	last := b.last.Load()
	if !all {
		return errors.New("burst: not every timer fired within 60 s")
	}
	if schedEnd > due {
		fmt.Fprintf(os.Stderr, "tkbench-go: burst: scheduling overran the offset by %.1f ms\n",
			float64(schedEnd-due)/1e6)
	}
	span := max64(last-due, 1)
	drain := max64(last-b.first.Load(), 1)
	s.put("burst_fire_rate_per_s", float64(n)/(float64(span)/1e9))
	s.put("burst_drain_rate_per_s", float64(n)/(float64(drain)/1e9))
	s.put("iteration_s", float64(span)/1e9)
	return nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// ---- latency: lateness under a steady load (bench/workloads/w3_latency.c) --

// latency schedules n timers, delays uniform in [1 ms, 100 ms], at a steady
// rate over the window from this goroutine, and prints every timer's
// lateness: the start of its callback (in the goroutine AfterFunc starts for
// it) minus its deadline, the clock read just before its AfterFunc call plus
// its delay; negative if early. Also the whole process's CPU over the run as
// a share of one core.
func (h *harness) latency(n int, warm bool, s *sink) error {
	window := h.seconds
	if warm {
		window /= 10
	}
	delay := uniform(n, nsPerMs, 100*nsPerMs, seed+29)
	late := make([]int64, n)
	deadline := make([]int64, n)
	var fired atomic.Int64
	// every timer's callback made beforehand, as the other harnesses make
	// their records: no allocation for it between two schedules
	callbacks := make([]func(), n)
	for i := range callbacks {
		i := i
		callbacks[i] = func() {
			late[i] = now() - deadline[i]
			fired.Add(1) // publishes late[i] to the waiting goroutine
		}
	}
	interval := int64(window * 1e9 / float64(n))
	warmUp()
	start := now()
	cpu0 := processCPU()
	for i := 0; i < n; i++ {
		sleepUntil(start + int64(i)*interval)
		deadline[i] = now() + delay[i]
		time.AfterFunc(time.Duration(delay[i]), callbacks[i])
	}
	all := waitFired(&fired, int64(n), now()+30*nsPerS)
	end := now()
	cpu1 := processCPU()
	if !all {
		return errors.New("latency: not every timer fired within 30 s")
	}
	for _, l := range late {
		s.putInt("late_ns", l)
	}
	s.put("process_cpu_pct", 100*float64(cpu1-cpu0)/float64(end-start))
	s.put("iteration_s", float64(end-start)/1e9)
	return nil
}

// processCPU is the whole process's CPU time (user + system) in ns:
// getrusage(RUSAGE_SELF), as the C side's tkb_cpu_ns().
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
