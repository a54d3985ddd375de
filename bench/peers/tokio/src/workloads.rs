// SPDX-License-Identifier: MIT
//! The measurements: the C workloads (bench/workloads/w1_exec.c, w2_burst.c,
//! w3_latency.c, w4_idle.c, w5_memory.c) step by step, as the JVM harness
//! (bench/peers/jvm/timerkit/bench/JvmHarness.java) follows them, on a Tokio
//! runtime (service.rs). Each prints its values into a Sink; an Err is a
//! failure of the run (exit status 1).

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::alloc;
use crate::inputs::*;
use crate::probe;
use crate::service::{Handle, Service};
use crate::Sink;

pub type Outcome = Result<(), String>;

/// How long a sync() may wait for the worker to take in what it was handed.
const SYNC_GIVE_UP: Duration = Duration::from_secs(60);

/// The service's thread started: one no-op timer due now, and 20 ms (the C
/// workloads' and the JVM harness's warm-up).
fn warm_up(s: &Service) {
    drop(s.schedule_noop(0));
    sleep_ns(20 * NS_PER_MS);
}

fn sync(s: &Service, what: &str) -> Outcome {
    if s.sync(SYNC_GIVE_UP) {
        Ok(())
    } else {
        Err(format!("{what}: the worker took in nothing for {} s", SYNC_GIVE_UP.as_secs()))
    }
}

/// Waits, sleeping 2 ms at a time, until `fired` reaches n; false once
/// now_ns() passes give_up_ns first (tkb_wait_fired()).
fn wait_fired(fired: &AtomicU64, n: u64, give_up_ns: i64) -> bool {
    while fired.load(Ordering::Acquire) < n {
        if now_ns() > give_up_ns {
            return false;
        }
        sleep_ns(2 * NS_PER_MS);
    }
    true
}

// ---- ops: schedule, cancel, churn (w1_exec.c) -----------------------------------

/// Cancel N (random order), schedule N without keeping a handle, churn
/// `pairs` pairs at population N; nanoseconds per operation. As w1_exec.c:
/// after each fill and after the cancels, sync() (the worker has taken in
/// every task) and then tkb_settle().
pub fn ops(n: usize, pairs: usize, sink: &mut Sink) -> Outcome {
    let delays = uniform(n, W1_LO, W1_HI, SEED.wrapping_add(n as u64));
    let next = uniform(pairs, W1_LO, W1_HI, SEED.wrapping_mul(5).wrapping_add(n as u64));
    let perm = permutation(n, SEED.wrapping_mul(3).wrapping_add(n as u64));
    let victims = random_indices(pairs, n, SEED.wrapping_mul(7).wrapping_add(n as u64));

    // cancel N, then schedule N without a handle
    let s = Service::new()?;
    warm_up(&s);
    let h: Vec<Handle> = delays.iter().map(|&d| s.schedule_noop(d)).collect();
    sync(&s, "ops")?;
    settle(n);
    let t2 = now_ns();
    for &i in &perm {
        Service::cancel(&h[i as usize]);
    }
    let t3 = now_ns();
    sync(&s, "ops")?;
    settle(n);
    drop(h); // the cancelled tasks' handles: untimed, as the JVM's garbage
    let t0 = now_ns();
    for &d in &delays {
        drop(s.schedule_noop(d)); // detached: no handle kept
    }
    let t1 = now_ns();
    s.close(); // drops the N pending tasks (untimed)

    // churn: a fresh service filled to N, then cancel one, schedule one
    let s = Service::new()?;
    warm_up(&s);
    let mut h: Vec<Handle> = delays.iter().map(|&d| s.schedule_noop(d)).collect();
    sync(&s, "ops")?;
    settle(n);
    let t4 = now_ns();
    for (k, &v) in victims.iter().enumerate() {
        let v = v as usize;
        Service::cancel(&h[v]);
        // the old handle is dropped here, inside the timed loop: it is part of
        // replacing a timer in Tokio (the JVM's old future only becomes garbage)
        h[v] = s.schedule_noop(next[k]);
    }
    let t5 = now_ns();
    drop(h);
    s.close();

    sink.put("schedule_ns", (t1 - t0) as f64 / n as f64);
    sink.put("cancel_ns", (t3 - t2) as f64 / n as f64);
    sink.put("churn_ns", (t5 - t4) as f64 / pairs as f64);
    sink.put("iteration_s", ((t1 - t0) + (t3 - t2) + (t5 - t4)) as f64 / 1e9);
    Ok(())
}

// ---- burst: firing throughput (w2_burst.c) ---------------------------------------

/// What the burst's tasks share: the firings counted, the first and the last
/// one's time.
struct Burst {
    n: u64,
    fired: AtomicU64,
    first_ns: AtomicI64,
    last_ns: AtomicI64,
}

impl Burst {
    fn fire(&self) {
        let k = self.fired.fetch_add(1, Ordering::AcqRel) + 1;
        if k == 1 {
            self.first_ns.store(now_ns(), Ordering::Relaxed);
        }
        if k == self.n {
            self.last_ns.store(now_ns(), Ordering::Release);
        }
    }
}

/// N timers due at one instant; callbacks per second from it to the last.
/// Tokio takes a deadline, so every task gets the very instant `due`
/// (the C workload's tkb_schedule_for(); the JVM APIs take delays only).
pub fn burst(n: usize, sink: &mut Sink) -> Outcome {
    // shared by reference, as the JVM's one Task object is: one small block per
    // iteration left allocated on purpose, so that no reference count is
    // touched per timer (an Arc would add two atomic operations to each)
    let b: &'static Burst = Box::leak(Box::new(Burst {
        n: n as u64,
        fired: AtomicU64::new(0),
        first_ns: AtomicI64::new(0),
        last_ns: AtomicI64::new(0),
    }));
    let s = Service::new()?;
    warm_up(&s);
    let due = now_ns() + w2_offset(n);
    let at = instant_at(due);
    for _ in 0..n {
        drop(s.schedule_at(at, move || b.fire()));
    }
    let sched_end = now_ns();
    let all = wait_fired(&b.fired, n as u64, due + 60 * NS_PER_S);
    let last = b.last_ns.load(Ordering::Acquire);
    s.close();
    if !all {
        return Err("burst: not every timer fired within 60 s".to_string());
    }
    if sched_end > due {
        eprintln!(
            "tkbench-tokio: burst: scheduling overran the offset by {:.1} ms",
            (sched_end - due) as f64 / 1e6
        );
    }
    let span = (last - due).max(1);
    let drain = (last - b.first_ns.load(Ordering::Relaxed)).max(1);
    sink.put("burst_fire_rate_per_s", n as f64 / (span as f64 / 1e9));
    sink.put("burst_drain_rate_per_s", n as f64 / (drain as f64 / 1e9));
    sink.put("iteration_s", span as f64 / 1e9);
    Ok(())
}

// ---- latency: lateness under a steady load (w3_latency.c) -------------------------

/// What the latency's tasks share: each one's lateness, and how many fired.
struct Late {
    late: Vec<AtomicI64>,
    fired: AtomicU64,
}

/// N timers, delays uniform in [1 ms, 100 ms], scheduled at a steady rate over
/// `window` seconds; prints every lateness (against the deadline taken at
/// schedule time, on the monotonic clock; early is negative) and the
/// process's CPU share.
pub fn latency(n: usize, window: f64, sink: &mut Sink) -> Outcome {
    let delay = uniform(n, NS_PER_MS, 100 * NS_PER_MS, SEED.wrapping_add(29));
    let rec = Arc::new(Late {
        late: (0..n).map(|_| AtomicI64::new(0)).collect(),
        fired: AtomicU64::new(0),
    });
    let interval = (window * 1e9 / n as f64) as i64;
    let s = Service::new()?;
    warm_up(&s);
    let start = now_ns();
    let cpu0 = probe::process_cpu_ns();
    for (i, &d) in delay.iter().enumerate() {
        sleep_until_ns(start + i as i64 * interval);
        let deadline = now_ns() + d;
        let r = Arc::clone(&rec); // ~2000 a second: the count costs nothing here
        drop(s.schedule_at(instant_at(deadline), move || {
            r.late[i].store(now_ns() - deadline, Ordering::Relaxed);
            r.fired.fetch_add(1, Ordering::Release); // publishes late[i]
        }));
    }
    let all = wait_fired(&rec.fired, n as u64, now_ns() + 30 * NS_PER_S);
    let end = now_ns();
    let cpu1 = probe::process_cpu_ns();
    s.close();
    if !all {
        return Err("latency: not every timer fired within 30 s".to_string());
    }
    for l in &rec.late {
        sink.put_int("late_ns", l.load(Ordering::Relaxed));
    }
    sink.put("process_cpu_pct", 100.0 * (cpu1 - cpu0) as f64 / (end - start) as f64);
    sink.put("iteration_s", (end - start) as f64 / 1e9);
    Ok(())
}

// ---- memory: live heap per timer (w5_memory.c) --------------------------------------

/// Live-heap growth per outstanding timer with the handles kept (the user's
/// vector of them included, as the C side counts its timer storage), the live
/// heap left after cancelling them all, and the growth per timer when the
/// handles are dropped. The live heap is the counting allocator's (alloc.rs):
/// exact, so no collection or settling is needed, only the worker's intake
/// (sync()) and 50 ms as the other sides wait.
pub fn memory(n: usize, sink: &mut Sink) -> Outcome {
    let t0 = now_ns();
    let delays = uniform(n, W1_LO, W1_HI, SEED.wrapping_add(n as u64));
    let s = Service::new()?;
    Service::cancel(&s.schedule_noop(3600 * NS_PER_S)); // the whole path once
    sync(&s, "memory")?;
    sleep_ns(50 * NS_PER_MS);
    let heap0 = alloc::live_bytes();
    let mut h: Vec<Handle> = Vec::with_capacity(n);
    for &d in &delays {
        h.push(s.schedule_noop(d));
    }
    sync(&s, "memory")?; // every task polled: its Sleep is in the wheel
    sleep_ns(50 * NS_PER_MS);
    let heap1 = alloc::live_bytes();
    for x in &h {
        Service::cancel(x);
    }
    drop(h);
    sync(&s, "memory")?; // every aborted task dropped its future, and was freed
    sleep_ns(50 * NS_PER_MS);
    let heap2 = alloc::live_bytes();
    s.close();

    let s = Service::new()?;
    Service::cancel(&s.schedule_noop(3600 * NS_PER_S));
    sync(&s, "memory")?;
    sleep_ns(50 * NS_PER_MS);
    let heap3 = alloc::live_bytes();
    for &d in &delays {
        drop(s.schedule_noop(d));
    }
    sync(&s, "memory")?;
    sleep_ns(50 * NS_PER_MS);
    let heap4 = alloc::live_bytes();
    s.close();

    sink.put("bytes_per_timer", (heap1 - heap0) as f64 / n as f64);
    sink.put_int("rss_after_cancel_bytes", heap2 - heap0);
    sink.put("bytes_per_timer_no_handle", (heap4 - heap3) as f64 / n as f64);
    sink.put("iteration_s", (now_ns() - t0) as f64 / 1e9);
    Ok(())
}

// ---- idle: what a waiting runtime costs (w4_idle.c) -----------------------------------

/// A started service (one task run first and waited for), its queue empty or
/// one timer an hour ahead (`hour`), 200 ms to settle, then a window of
/// `window` seconds during which this thread only sleeps. Every other thread
/// of the process is read before and after the window (the runtime's worker;
/// a blocking-pool thread, had one started); this one, which measures and
/// sleeps, is left out, as tkbench's in-process W4 leaves out its own. The
/// whole process's CPU (this thread's included) is beside it.
pub fn idle(hour: bool, window: f64, sink: &mut Sink) -> Outcome {
    let window_ns = (window * 1e9) as i64;
    let s = Service::new()?;
    // the warm-up task, run and waited for (at most 10 s): the worker started
    if !s.sync(Duration::from_secs(10)) {
        return Err("idle: the warm-up task did not run within 10 s".to_string());
    }
    let timer = if hour { Some(s.schedule_noop(3600 * NS_PER_S)) } else { None };
    if hour {
        sync(&s, "idle")?; // the hour's timer is in the wheel
    }
    sleep_ns(200 * NS_PER_MS); // the worker asleep
    let before = probe::threads_read(probe::CpuClocks::Last);
    let c0 = probe::process_cpu_ns();
    sleep_ns(window_ns);
    let proc_cpu = probe::process_cpu_ns() - c0;
    let after = probe::threads_read(probe::CpuClocks::First);
    if let Some(t) = timer {
        Service::cancel(&t);
    }
    s.close();
    let d = probe::threads_since(&before, &after);
    sink.put_int("idle_wakeups", d.ctxt as i64);
    sink.put("idle_cpu_ms", d.cpu_ns as f64 / 1e6);
    sink.put("idle_cpu_process_ms", proc_cpu as f64 / 1e6);
    sink.put_int("idle_threads", d.threads as i64);
    if d.started + d.ended > 0 {
        // as w4_idle.c: only when a thread came or went during the window
        sink.put_int("idle_threads_changed", (d.started + d.ended) as i64);
    }
    sink.put("iteration_s", window_ns as f64 / 1e9);
    Ok(())
}
