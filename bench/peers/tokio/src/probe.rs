// SPDX-License-Identifier: MIT
//! What the process and its threads used: CPU clocks, and every other
//! thread's context switches and CPU from /proc/self/task (W3's process CPU, W4's
//! readings around the idle window; bench/harness/sysprobe.c does the same on
//! the C side).

use std::fs;

fn clock_ns(id: libc::clockid_t) -> Option<i64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    if rc == 0 {
        // time_t and long are 32 bits on some targets: the casts stay
        #[allow(clippy::unnecessary_cast)]
        Some(ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64)
    } else {
        None
    }
}

/// The whole process's CPU time (user + system, every thread), in ns.
pub fn process_cpu_ns() -> i64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(0)
}

/// One thread's use so far.
#[derive(Clone, Copy)]
pub struct ThreadUse {
    pub tid: i64,
    /// voluntary + nonvoluntary context switches (/proc/self/task/TID/status)
    pub ctxt: u64,
    pub cpu_ns: i64,
}

/// Thread tid's CPU time: its CPU clock, which the kernel makes from the
/// thread id (MAKE_THREAD_CPUCLOCK: ~tid << 3, per-thread 4, scheduler clock
/// 2; what pthread_getcpuclockid() returns), exact to the ns and the same
/// counter /proc/self/task/TID/schedstat shows first (schedstat is not there
/// on a kernel without CONFIG_SCHED_INFO); else utime + stime of
/// /proc/self/task/TID/stat, in clock ticks. None if the thread is gone.
fn thread_cpu_ns(tid: i64) -> Option<i64> {
    let id = ((!(tid as u64)) << 3 | 4 | 2) as libc::clockid_t;
    clock_ns(id).or_else(|| stat_cpu_ns(tid))
}

fn stat_cpu_ns(tid: i64) -> Option<i64> {
    let text = fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // the fields after the command name, which ends at the last ')':
    // state is field 3, utime 14, stime 15
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: i64 = f.get(11)?.parse().ok()?;
    let stime: i64 = f.get(12)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as i64;
    Some((utime + stime) * (1_000_000_000 / hz))
}

fn thread_ctxt(tid: i64) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
    let mut total = 0;
    for line in text.lines() {
        for key in ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"] {
            if let Some(v) = line.strip_prefix(key) {
                total += v.trim().parse::<u64>().ok()?;
            }
        }
    }
    Some(total)
}

/// When a reading takes the threads' CPU clocks: after their context
/// switches (the reading before a window) or before them (the one after), so
/// that the clocks are read as close to the window as the reading allows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CpuClocks {
    Last,
    First,
}

/// Every thread of this process but the calling one (tkb_threads_read()):
/// the thread that measures, and sleeps through W4's window, is left out, as
/// tkbench's in-process W4 leaves out its own; every other thread counts,
/// whenever it started.
pub fn threads_read(order: CpuClocks) -> Vec<ThreadUse> {
    // SAFETY: gettid takes no arguments and cannot fail.
    let me = unsafe { libc::syscall(libc::SYS_gettid) } as i64;
    let tids: Vec<i64> = match fs::read_dir("/proc/self/task") {
        Ok(dir) => dir
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
            .filter(|&t| t != me)
            .collect(),
        Err(_) => return Vec::new(),
    };
    let cpu = || -> Vec<Option<i64>> { tids.iter().map(|&t| thread_cpu_ns(t)).collect() };
    let ctxt = || -> Vec<Option<u64>> { tids.iter().map(|&t| thread_ctxt(t)).collect() };
    let (cpus, ctxts) = if order == CpuClocks::Last {
        let x = ctxt();
        (cpu(), x)
    } else {
        let c = cpu();
        (c, ctxt())
    };
    // a thread that ended meanwhile is left out
    tids.iter()
        .zip(cpus.into_iter().zip(ctxts))
        .filter_map(|(&tid, pair)| match pair {
            (Some(cpu_ns), Some(ctxt)) => Some(ThreadUse { tid, ctxt, cpu_ns }),
            _ => None,
        })
        .collect()
}

/// What the threads of reading b did since reading a (tkb_threads_since()):
/// a thread that started between the two is counted whole; one that ended
/// between them is counted in `ended` only (what it did is gone with it).
pub struct Delta {
    pub threads: usize,
    pub started: usize,
    pub ended: usize,
    pub ctxt: u64,
    pub cpu_ns: i64,
}

pub fn threads_since(a: &[ThreadUse], b: &[ThreadUse]) -> Delta {
    let mut d = Delta {
        threads: b.len(),
        started: 0,
        ended: 0,
        ctxt: 0,
        cpu_ns: 0,
    };
    for t in b {
        match a.iter().find(|w| w.tid == t.tid) {
            Some(w) => {
                d.ctxt += t.ctxt.saturating_sub(w.ctxt);
                d.cpu_ns += t.cpu_ns - w.cpu_ns;
            }
            None => {
                d.ctxt += t.ctxt;
                d.cpu_ns += t.cpu_ns;
                d.started += 1;
            }
        }
    }
    d.ended = a.iter().filter(|w| !b.iter().any(|t| t.tid == w.tid)).count();
    d
}
