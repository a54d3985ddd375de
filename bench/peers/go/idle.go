// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// ---- idle: what the idle runtime costs (bench/workloads/w4_idle.c) --------

func (h *harness) idleEmpty(n int, warm bool, s *sink) error { return h.idle(false, warm, s) }
func (h *harness) idleHour(n int, warm bool, s *sink) error  { return h.idle(true, warm, s) }

// idle: the runtime's timer machinery started (one timer due now, its
// callback waited for, at most 10 s), then, by variant, no timer or one an
// hour ahead, 200 ms to settle, then a window of SECONDS (a tenth of it for a
// warm-up) in which this goroutine only sleeps. Reported over the window, for
// every thread of the process: the context switches (wake-ups), their CPU,
// the whole process's CPU, and the threads at its end.
//
// Unlike the C side, the thread that sleeps through the window is counted:
// a goroutine is not tied to a thread, so there is no "benchmark thread" to
// leave out. Its sleep is a runtime timer like any other; it wakes at least
// once, at the window's end.
func (h *harness) idle(hour, warm bool, s *sink) error {
	window := int64(h.seconds * 1e9)
	if warm {
		window /= 10
	}
	var ran atomic.Bool
	time.AfterFunc(0, func() { ran.Store(true) })
	for giveUp := now() + 10*nsPerS; !ran.Load() && now() < giveUp; {
		sleepNs(nsPerMs)
	}
	if !ran.Load() {
		return errors.New("idle: the warm-up timer did not fire within 10 s")
	}
	var pending *time.Timer
	if hour {
		pending = time.AfterFunc(time.Hour, noop)
	}
	sleepNs(200 * nsPerMs) // the threads asleep
	before := readThreadsBefore()
	c0 := processCPU()
	w0 := now()
	sleepNs(window)
	w1 := now()
	procCPU := processCPU() - c0
	after := readThreadsAfter(before)
	if pending != nil {
		pending.Stop()
	}
	if before == nil || after == nil {
		return errors.New("idle: cannot read /proc/self/task")
	}
	var ctxt, cpu int64
	changed := 0
	for tid, a := range after {
		b, was := before[tid]
		if !was {
			changed++ // started in the window: counted whole
		}
		ctxt += a.ctxt - b.ctxt
		cpu += a.cpuNs - b.cpuNs
	}
	for tid := range before {
		if _, still := after[tid]; !still {
			changed++ // ended in the window: its counts are lost
		}
	}
	s.putInt("idle_wakeups", ctxt)
	s.put("idle_cpu_ms", float64(cpu)/1e6)
	s.put("idle_cpu_process_ms", float64(procCPU)/1e6)
	s.putInt("idle_threads", int64(len(after)))
	if changed > 0 {
		s.putInt("idle_threads_changed", int64(changed))
	}
	s.put("iteration_s", float64(w1-w0)/1e9)
	return nil
}

// threadUse is one thread's counters at a reading.
type threadUse struct {
	ctxt  int64 // voluntary + nonvoluntary context switches
	cpuNs int64 // user + system CPU
}

// readThreadsBefore reads every thread of the process (/proc/self/task), by
// id; nil if the folder cannot be read. A thread that ends while it is read is
// left out. The CPU clocks are read last: what it costs to read the status
// files (a tenth of a millisecond or more for a few threads) is spent by this
// goroutine's thread before its clock is read, not counted in the window.
func readThreadsBefore() map[int]threadUse {
	tids := taskIDs()
	if tids == nil {
		return nil
	}
	m := make(map[int]threadUse, len(tids))
	for _, tid := range tids {
		if ctxt, ok := threadCtxt(tid); ok {
			m[tid] = threadUse{ctxt: ctxt}
		}
	}
	for tid, u := range m {
		var ok bool
		if u.cpuNs, ok = threadCPU(tid); ok {
			m[tid] = u
		} else {
			delete(m, tid)
		}
	}
	return m
}

// readThreadsAfter reads every thread again, in the reverse order: first the
// CPU clocks of the threads read before (a thread whose clock is gone has
// ended), then the folder, for the threads that started since, then the
// status files.
func readThreadsAfter(before map[int]threadUse) map[int]threadUse {
	m := make(map[int]threadUse, len(before))
	for tid := range before {
		if cpu, ok := threadCPU(tid); ok {
			m[tid] = threadUse{cpuNs: cpu}
		}
	}
	tids := taskIDs()
	if tids == nil {
		return nil
	}
	for _, tid := range tids {
		if _, seen := m[tid]; !seen {
			if cpu, ok := threadCPU(tid); ok {
				m[tid] = threadUse{cpuNs: cpu}
			}
		}
	}
	for tid, u := range m {
		var ok bool
		if u.ctxt, ok = threadCtxt(tid); ok {
			m[tid] = u
		} else {
			delete(m, tid)
		}
	}
	return m
}

// taskIDs lists the threads of the process; nil if it cannot.
func taskIDs() []int {
	dir, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	tids := make([]int, 0, len(dir))
	for _, e := range dir {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// threadCtxt is a thread's voluntary + nonvoluntary context switches, from
// /proc/self/task/TID/status.
func threadCtxt(tid int) (int64, bool) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0, false
	}
	var total int64
	found := 0
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		for _, key := range []string{"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"} {
			if bytes.HasPrefix(line, []byte(key)) {
				v, err := strconv.ParseInt(string(bytes.TrimSpace(line[len(key):])), 10, 64)
				if err != nil {
					return 0, false
				}
				total += v
				found++
			}
		}
	}
	return total, found == 2
}

// threadCPU is a thread's CPU time in ns: its CPU clock, as the C side reads
// it (clock_gettime on the clock id pthread_getcpuclockid() makes from the
// thread's id: the kernel's MAKE_THREAD_CPUCLOCK, ~tid << 3 | per-thread 4 |
// scheduler clock 2), exact to the ns; if the kernel refuses it, utime +
// stime from /proc/self/task/TID/stat, in clock ticks of 10 ms.
func threadCPU(tid int) (int64, bool) {
	id := int32(^uint32(tid)<<3 | 4 | 2)
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(id),
		uintptr(unsafe.Pointer(&ts)), 0)
	if errno == 0 {
		return ts.Nano(), true
	}
	return threadStatCPU(tid)
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on Linux, fixed by
// its ABI whatever the kernel's own tick.
const clockTicks = 100

// threadStatCPU is utime + stime (fields 14 and 15) of /proc/self/task/TID/stat.
func threadStatCPU(tid int) (int64, bool) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return 0, false
	}
	// the command name, field 2, is in parentheses and may hold spaces: the
	// fields from 3 on follow the last ')'
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return (utime + stime) * (nsPerS / clockTicks), true
}
