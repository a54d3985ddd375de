// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"time"
)

// ---- memory: live heap per timer (bench/workloads/w5_memory.c) ------------

// memoryPhaseFlag starts this program as the child of one memory phase
// (memoryPhase): an internal entry point, not part of the protocol.
const memoryPhaseFlag = "--memory-phase"

// memory measures the live-heap growth per outstanding timer with the
// handles kept (bytes_per_timer; the user's slice of them included, as the C
// side counts its timer storage), the live heap left after stopping them all
// (rss_after_cancel_bytes: the name is the C side's, the value is live heap,
// as for the JVM peers), and the growth per timer when the handles are dropped
// (bytes_per_timer_no_handle).
//
// Each of the two phases runs in a fresh process, as the C side runs each in
// a `tkbench _w5` child: the runtime's timer heap of a P (a slice of
// pointers) grows with its population and is never shrunk, so in the same
// process only the first phase to reach a size would pay for its growth.
// This process starts itself again (os.Executable) for each.
func (h *harness) memory(n int, warm bool, s *sink) error {
	n = tenth(n, warm)
	t0 := now()
	withHandle, err := runMemoryPhase("handle", n)
	if err != nil {
		return err
	}
	noHandle, err := runMemoryPhase("no-handle", n)
	if err != nil {
		return err
	}
	s.put("bytes_per_timer", float64(withHandle[0])/float64(n))
	s.putInt("rss_after_cancel_bytes", withHandle[1])
	s.put("bytes_per_timer_no_handle", float64(noHandle[0])/float64(n))
	s.put("iteration_s", float64(now()-t0)/1e9)
	return nil
}

// runMemoryPhase runs memoryPhase(mode, n) in a child and returns what it
// printed: the live-heap growth, and what was left after the cancels.
func runMemoryPhase(mode string, n int) ([2]int64, error) {
	var v [2]int64
	self, err := os.Executable()
	if err != nil {
		return v, fmt.Errorf("memory: cannot find this program to run it again: %v", err)
	}
	cmd := exec.Command(self, memoryPhaseFlag, mode, strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return v, fmt.Errorf("memory: the %s phase's child: %v", mode, err)
	}
	f := bytes.Fields(out)
	if len(f) != 2 {
		return v, fmt.Errorf("memory: the %s phase's child printed %q", mode, out)
	}
	for i := range v {
		if v[i], err = strconv.ParseInt(string(f[i]), 10, 64); err != nil {
			return v, fmt.Errorf("memory: the %s phase's child printed %q", mode, out)
		}
	}
	return v, nil
}

// liveHeap is the bytes of live heap objects: runtime.GC() (a full, blocking
// collection that also finishes sweeping) twice, so that nothing freed before
// the call is still counted, then HeapAlloc. Not the RSS: the runtime keeps
// freed spans and hands them back to the OS only in the background.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// memoryPhase is one phase of memory, in a process of its own: the timer
// path taken once, a first reading of the live heap, n timers scheduled, 50
// ms, a second reading. Mode "handle" keeps the *Timer handles in a slice
// made after the first reading, then stops them all and reads a third time
// after 50 ms (in which the runtime clears the deleted timers from its heap).
// It prints the growth and what the third reading left above the first (0
// for "no-handle").
//
// Dropping the handle changes nothing the runtime keeps: its heap points into
// the Timer (its runtimeTimer field), so the whole Timer stays live until it
// fires or is removed. Mode "no-handle" counts that; it keeps the handles in
// a slice made before its first reading (not counted) only to stop them
// before exiting.
func memoryPhase(mode string, n int) error {
	if (mode != "handle" && mode != "no-handle") || n <= 0 {
		return errors.New("memory phase: bad arguments")
	}
	delays := uniform(n, w1Lo, w1Hi, seed+uint64(n)) // the harness's, not counted
	var keep []*time.Timer
	if mode == "no-handle" {
		keep = make([]*time.Timer, n)
	}
	time.AfterFunc(3600*time.Second, noop).Stop() // the whole path once
	sleepNs(50 * nsPerMs)
	heap0 := liveHeap()
	handles := keep
	if mode == "handle" {
		handles = make([]*time.Timer, n)
	}
	for i, d := range delays {
		handles[i] = time.AfterFunc(time.Duration(d), noop)
	}
	sleepNs(50 * nsPerMs)
	heap1 := liveHeap()
	stopAll(handles)
	var left int64
	if mode == "handle" {
		handles = nil
		sleepNs(50 * nsPerMs)
		left = liveHeap() - heap0
	}
	// delays and keep were made before the first reading: they must stay
	// live until the last, or the collector frees them in between and the
	// difference comes out short by their size
	runtime.KeepAlive(delays)
	runtime.KeepAlive(keep)
	_, err := fmt.Printf("%d %d\n", heap1-heap0, left)
	return err
}
