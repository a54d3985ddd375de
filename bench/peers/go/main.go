// SPDX-License-Identifier: MIT

// Command tkbench-go is tkbench's Go harness: the Go runtime's own timers
// (time.AfterFunc to schedule, (*time.Timer).Stop to cancel) run through
// tkbench's executor-level workloads, in a process of their own that tkbench
// starts as a child (docs/child-protocol.md is the protocol).
//
//	tkbench-go --describe
//	tkbench-go PEER MEASUREMENT REPS WARMUPS COUNT SECONDS N[,N...]
//
// PEER is go-timers, the one row of tkbench's peer table (bench/peers/peers.c)
// this harness runs. MEASUREMENT is one of ops (bench/workloads/w1_exec.c), burst (w2_burst.c),
// latency (w3_latency.c), memory (w5_memory.c), idle-empty and idle-hour (w4_idle.c's
// two variants). For each N in turn the harness runs WARMUPS unreported
// iterations, then REPS measured ones, and prints one line per value of a
// measured iteration:
//
//	N REP KEY VALUE
//
// KEY is a metric of that workload's descriptor (bench/workloads/*.c), or
// iteration_s (the time the iteration measured, for Google Benchmark's manual
// time), or late_ns (one lateness sample; latency). The last line is `done`.
// Bad arguments: a message on stderr and exit status 2; a measurement that
// fails: a message on stderr and exit status 1.
//
// It is a port of the JVM harness (bench/peers/jvm/timerkit/bench/JvmHarness.java),
// which follows the C workloads step by step: the same generator (splitmix64),
// seeds, delay ranges, counts, pauses and give-up times, so that the rows
// compare with the C and JVM peers'. docs/workloads.md says what each workload
// measures here and where Go differs.
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// peerName is the only peer this harness runs: the runtime's timers, as a
// program uses them. There is nothing to configure (no pool size, no tick):
// the runtime is the service.
const peerName = "go-timers"

// exitUsage and exitFailed are the harness's exit statuses: bad arguments, and
// a measurement that could not be taken.
const (
	exitFailed = 1
	exitUsage  = 2
)

const usage = "usage: tkbench-go --describe\n" +
	"       tkbench-go PEER MEASUREMENT REPS WARMUPS COUNT SECONDS N[,N...]\n" +
	"  PEER: " + peerName + "; MEASUREMENT: ops | burst | latency | memory | idle-empty | idle-hour"

// measurements, by the name tkbench passes: the function that runs one
// iteration, and whether the workload needs a window (SECONDS > 0) and
// accepts the size 0 (W4 passes the single size 0: n is not used there).
var measurements = map[string]struct {
	run        func(h *harness, n int, warm bool, s *sink) error
	needWindow bool
	sizeZero   bool
}{
	"ops":        {run: (*harness).ops},
	"burst":      {run: (*harness).burst},
	"latency":    {run: (*harness).latency, needWindow: true},
	"memory":     {run: (*harness).memory},
	"idle-empty": {run: (*harness).idleEmpty, needWindow: true, sizeZero: true},
	"idle-hour":  {run: (*harness).idleHour, needWindow: true, sizeZero: true},
}

// harness holds the run's arguments that every iteration reads.
type harness struct {
	count   int     // the workload plan's count: W1's churn pairs
	seconds float64 // the workload plan's window: W3's spread, W4's idle window
}

// sink collects the values of one iteration; they are printed only for a
// measured one, all at once when it ends.
type sink struct {
	buf    []byte
	prefix string
	err    error // the first value that was not finite
}

func newSink(n, rep int) *sink {
	return &sink{prefix: strconv.Itoa(n) + " " + strconv.Itoa(rep) + " "}
}

// put records a value; tkbench rejects a value that is not finite, so one
// is an error of the measurement, reported as such.
func (s *sink) put(key string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if s.err == nil {
			s.err = fmt.Errorf("%s is not finite (%v)", key, v)
		}
		return
	}
	s.buf = append(s.buf, s.prefix...)
	s.buf = append(s.buf, key...)
	s.buf = append(s.buf, ' ')
	s.buf = strconv.AppendFloat(s.buf, v, 'g', -1, 64)
	s.buf = append(s.buf, '\n')
}

// putInt records an integer value (a lateness, a count) exactly.
func (s *sink) putInt(key string, v int64) {
	s.buf = append(s.buf, s.prefix...)
	s.buf = append(s.buf, key...)
	s.buf = append(s.buf, ' ')
	s.buf = strconv.AppendInt(s.buf, v, 10)
	s.buf = append(s.buf, '\n')
}

// measurementNames lists the measurements in the order --describe gives them.
var measurementNames = []string{"ops", "burst", "latency", "memory", "idle-empty", "idle-hour"}

// describe is what --describe prints (docs/child-protocol.md): the runtime,
// its version and the settings that matter for the figures (tkbench copies
// the line into metadata.json), then the measurements this harness
// implements.
func describe() string {
	gogc := os.Getenv("GOGC")
	if gogc == "" {
		gogc = "100 (default)"
	}
	return fmt.Sprintf("runtime %s %s/%s, GOMAXPROCS=%d, GOGC=%s\nmeasurements %s\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), gogc,
		strings.Join(measurementNames, " "))
}

// args are the parsed command line of a run.
type args struct {
	measurement          string
	reps, warmups, count int
	seconds              float64
	sizes                []int
}

// parseArgs checks the whole command line before anything runs, so that a
// bad one prints nothing on stdout.
func parseArgs(a []string) (args, error) {
	var r args
	if len(a) != 7 {
		return r, fmt.Errorf("expected 7 arguments, got %d", len(a))
	}
	if a[0] != peerName {
		return r, fmt.Errorf("unknown peer %q (this harness runs %s)", a[0], peerName)
	}
	m, ok := measurements[a[1]]
	if !ok {
		return r, fmt.Errorf("unknown measurement %q", a[1])
	}
	r.measurement = a[1]
	var err error
	atLeast := func(name, text string, min int) int {
		v, e := strconv.Atoi(text)
		if e == nil && v < min {
			e = fmt.Errorf("must be at least %d", min)
		}
		if e != nil && err == nil {
			err = fmt.Errorf("%s %q: %v", name, text, e)
		}
		return v
	}
	r.reps = atLeast("REPS", a[2], 1)
	r.warmups = atLeast("WARMUPS", a[3], 0)
	r.count = atLeast("COUNT", a[4], 1)
	if err != nil {
		return r, err
	}
	r.seconds, err = strconv.ParseFloat(a[5], 64)
	if err != nil || math.IsNaN(r.seconds) || math.IsInf(r.seconds, 0) || r.seconds < 0 {
		return r, fmt.Errorf("SECONDS %q: not a finite number of seconds >= 0", a[5])
	}
	if m.needWindow && r.seconds <= 0 {
		return r, fmt.Errorf("SECONDS %q: %s has a window: it must be above 0", a[5], a[1])
	}
	minN := 1
	if m.sizeZero {
		minN = 0
	}
	for _, f := range strings.Split(a[6], ",") {
		n := atLeast("N", f, minN)
		if err != nil {
			return r, err
		}
		r.sizes = append(r.sizes, n)
	}
	return r, nil
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--describe" {
		if _, err := os.Stdout.WriteString(describe()); err != nil {
			os.Exit(exitFailed)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[1] == memoryPhaseFlag {
		n, err := strconv.Atoi(os.Args[3])
		if err == nil {
			err = memoryPhase(os.Args[2], n)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "tkbench-go: %v\n", err)
			os.Exit(exitFailed)
		}
		return
	}
	a, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "tkbench-go: %v\n%s\n", err, usage)
		os.Exit(exitUsage)
	}
	h := &harness{count: a.count, seconds: a.seconds}
	run := measurements[a.measurement].run
	out := bufio.NewWriter(os.Stdout)
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "tkbench-go: %s %s: %v\n", peerName, a.measurement, err)
		os.Exit(exitFailed)
	}
	for _, n := range a.sizes {
		for it := 0; it < a.warmups+a.reps; it++ {
			warm := it < a.warmups
			s := newSink(n, it-a.warmups)
			if err := run(h, n, warm, s); err != nil {
				fail(err)
			}
			if s.err != nil {
				fail(s.err)
			}
			if warm {
				continue
			}
			// each measured iteration as soon as it ends: tkbench counts a
			// child that stays silent too long as hung
			out.Write(s.buf)
			if err := out.Flush(); err != nil {
				fail(err)
			}
		}
	}
	out.WriteString("done\n")
	if err := out.Flush(); err != nil {
		fail(err)
	}
}
