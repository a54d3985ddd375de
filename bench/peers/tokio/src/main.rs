// SPDX-License-Identifier: MIT
//! tkbench's Tokio harness: Tokio's timers (the runtime's time driver, a
//! hierarchical timer wheel) run through tkbench's executor-level workloads,
//! in a process of their own, started by tkbench as a child (the foreign-peer
//! child protocol; the JVM harness, bench/peers/jvm/, is its model).
//!
//!   tkbench-tokio --describe     (two lines: `runtime ...`, `measurements ...`)
//!   tkbench-tokio PEER MEASUREMENT REPS WARMUPS COUNT SECONDS N[,N...]
//!
//! PEER is `tokio` (the row of tkbench's peer table); MEASUREMENT one of ops,
//! burst, latency, memory, idle-empty, idle-hour (bench/workloads/
//! w1_exec.c, w2_burst.c, w3_latency.c, w5_memory.c and w4_idle.c's two variants). For each N in turn the
//! harness runs WARMUPS unreported iterations, then REPS measured ones, and
//! prints one line per value of a measured iteration:
//!
//!   N REP KEY VALUE
//!
//! KEY is a metric of that workload's descriptor (bench/workloads/*.c), or
//! `iteration_s` (the time the iteration measured), or `late_ns` (one
//! lateness sample; latency). The last line is `done`. Bad arguments: a
//! message on stderr and exit status 2; a failed run: a message and status 1.
//!
//! The inputs are those of the C workloads (inputs.rs): the same generator
//! (splitmix64), seeds, delay ranges, counts and pauses, so that the rows
//! compare with the C peers' and the JVM's. docs/workloads.md ("tokio") says
//! how each workload maps onto Tokio, and what it cannot express.

mod alloc;
mod inputs;
mod probe;
mod service;
mod workloads;

use std::io::Write;
use std::process::exit;

/// The counting allocator of the memory measurement (alloc.rs); it only
/// counts in a `memory` child.
#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

const USAGE: &str = "usage: tkbench-tokio --describe\n       \
                     tkbench-tokio PEER MEASUREMENT REPS WARMUPS COUNT SECONDS N[,N...]\n  \
                     PEER: tokio; MEASUREMENT: ops | burst | latency | memory | idle-empty | idle-hour";

/// The peers, by the name tkbench's peer table (bench/peers/peers.c) passes.
const PEERS: [&str; 1] = ["tokio"];

/// The measurements, as --describe lists them.
const MEASUREMENTS: [&str; 6] = ["ops", "burst", "latency", "memory", "idle-empty", "idle-hour"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Measurement {
    Ops,
    Burst,
    Latency,
    Memory,
    IdleEmpty,
    IdleHour,
}

impl Measurement {
    fn parse(s: &str) -> Option<Measurement> {
        Some(match s {
            "ops" => Measurement::Ops,
            "burst" => Measurement::Burst,
            "latency" => Measurement::Latency,
            "memory" => Measurement::Memory,
            "idle-empty" => Measurement::IdleEmpty,
            "idle-hour" => Measurement::IdleHour,
            _ => return None,
        })
    }

    fn is_idle(self) -> bool {
        self == Measurement::IdleEmpty || self == Measurement::IdleHour
    }
}

/// The values of one iteration; printed only for a measured one.
pub struct Sink {
    text: String,
    prefix: String,
}

impl Sink {
    fn new(n: usize, rep: usize) -> Sink {
        Sink {
            text: String::new(),
            prefix: format!("{n} {rep} "),
        }
    }

    /// KEY VALUE, VALUE a finite decimal (Rust prints f64 without an
    /// exponent; a value that is not finite is a bug, and ends the run).
    pub fn put(&mut self, key: &str, v: f64) {
        if !v.is_finite() {
            fail(&format!("{key} is not finite ({v})"));
        }
        self.text.push_str(&format!("{}{key} {v}\n", self.prefix));
    }

    pub fn put_int(&mut self, key: &str, v: i64) {
        self.text.push_str(&format!("{}{key} {v}\n", self.prefix));
    }
}

/// The run's arguments, checked.
struct Args {
    measurement: Measurement,
    reps: usize,
    warmups: usize,
    count: usize,
    seconds: f64,
    sizes: Vec<usize>,
}

fn usage_error(msg: &str) -> ! {
    eprintln!("tkbench-tokio: {msg}\n{USAGE}");
    exit(2);
}

fn fail(msg: &str) -> ! {
    eprintln!("tkbench-tokio: {msg}");
    exit(1);
}

fn parse_args(a: &[String]) -> Args {
    if a.len() != 7 {
        usage_error(&format!("expected 7 arguments, got {}", a.len()));
    }
    if !PEERS.contains(&a[0].as_str()) {
        usage_error(&format!("unknown peer '{}'", a[0]));
    }
    let measurement = Measurement::parse(&a[1])
        .unwrap_or_else(|| usage_error(&format!("unknown measurement '{}'", a[1])));
    let int = |what: &str, s: &str, min: usize| -> usize {
        match s.parse::<usize>() {
            Ok(v) if v >= min => v,
            _ => usage_error(&format!("{what} must be an integer >= {min}, not '{s}'")),
        }
    };
    let reps = int("REPS", &a[2], 1);
    let warmups = int("WARMUPS", &a[3], 0);
    let count = int("COUNT", &a[4], 1);
    let seconds = match a[5].parse::<f64>() {
        Ok(v) if (0.0..=86400.0).contains(&v) => v,
        _ => usage_error(&format!("SECONDS must be a decimal in [0, 86400], not '{}'", a[5])),
    };
    let windowed = measurement == Measurement::Latency || measurement.is_idle();
    if windowed && seconds <= 0.0 {
        usage_error(&format!("{}: SECONDS must be > 0", a[1]));
    }
    // idle runs one size, 0 (protocol.md); the others sizes >= 1
    let min_n = if measurement.is_idle() { 0 } else { 1 };
    let sizes: Vec<usize> = a[6].split(',').map(|s| int("N", s, min_n)).collect();
    // a vector of a handle per timer, and the inputs: keep n sane for 32-bit
    // indices (the inputs are u32, as the C side's)
    if let Some(&big) = sizes.iter().find(|&&n| n > u32::MAX as usize) {
        usage_error(&format!("N {big} is too large"));
    }
    if measurement == Measurement::Ops && count > u32::MAX as usize {
        usage_error("COUNT is too large");
    }
    Args {
        measurement,
        reps,
        warmups,
        count,
        seconds,
        sizes,
    }
}

fn describe() -> String {
    format!(
        "tokio {}, {}, runtime: {}; wheel of 6 levels x 64 slots, 1 ms; \
         opt-level 3, panic=abort",
        env!("TKB_TOKIO_VERSION"),
        env!("TKB_RUSTC_VERSION"),
        service::SHAPE
    )
}

/// One iteration. Warm-ups run as the JVM harness's do, except for ops:
/// burst and memory at a tenth of n (at least 1000; what they measure does
/// not depend on it, and it keeps the suite short), latency and idle over a
/// tenth of the window, and ops at a tenth of n and of the pairs (at least
/// 1000 each) where the JVM warms up at the full n. Tokio has no compiler to
/// warm, and the pages ops's timed phases reuse are touched by its own untimed
/// fill: measured at n = 1e6, its cancel and schedule phases take no page
/// fault with or without full-size warm-ups, and its churn about as many
/// either way (docs/workloads.md), while two full-size warm-ups tripled the
/// workload's share of the quick suite.
fn iteration(a: &Args, n: usize, warm: bool, sink: &mut Sink) -> workloads::Outcome {
    let tenth = if warm { (n / 10).max(1000) } else { n };
    let window = if warm { a.seconds / 10.0 } else { a.seconds };
    match a.measurement {
        Measurement::Ops if warm => {
            workloads::ops((n / 10).max(1000).min(n), (a.count / 10).max(1000).min(a.count), sink)
        }
        Measurement::Ops => workloads::ops(n, a.count, sink),
        Measurement::Burst => workloads::burst(tenth, sink),
        Measurement::Latency => workloads::latency(n, window, sink),
        Measurement::Memory => workloads::memory(tenth, sink),
        Measurement::IdleEmpty => workloads::idle(false, window, sink),
        Measurement::IdleHour => workloads::idle(true, window, sink),
    }
}

/// As tkbench does for its own runs (bench/cli/run-exec.c): freed memory
/// stays in the process (blocks under 32 MiB come from the heap, which is
/// never trimmed), so that a later phase or repetition reuses warm pages, as
/// a long-running program does, instead of paying first-touch page faults
/// inside a timed loop.
fn keep_freed_memory() {
    // SAFETY: mallopt only sets glibc's malloc parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.len() == 1 && argv[0] == "--describe" {
        // the runtime line (metadata.json), the measurements implemented
        println!("runtime {}", describe());
        println!("measurements {}", MEASUREMENTS.join(" "));
        return;
    }
    let a = parse_args(&argv);
    keep_freed_memory();
    if a.measurement == Measurement::Memory {
        alloc::start();
    }
    let stdout = std::io::stdout();
    for &n in &a.sizes {
        for it in 0..a.warmups + a.reps {
            let warm = it < a.warmups;
            let mut sink = Sink::new(n, it.saturating_sub(a.warmups));
            if let Err(e) = iteration(&a, n, warm, &mut sink) {
                fail(&format!("{} {}: {e}", argv[0], argv[1]));
            }
            if !warm {
                let mut out = stdout.lock();
                if out.write_all(sink.text.as_bytes()).and_then(|_| out.flush()).is_err() {
                    fail("cannot write to stdout");
                }
            }
        }
    }
    let mut out = stdout.lock();
    if writeln!(out, "done").and_then(|_| out.flush()).is_err() {
        fail("cannot write to stdout");
    }
}
