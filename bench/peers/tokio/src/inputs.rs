// SPDX-License-Identifier: MIT
//! The workloads' inputs and pauses, as the C workloads make them
//! (bench/tkbench.h's tkb_rng, bench/harness/drive-core.c,
//! bench/harness/drive-service.c) and the JVM harness ports them: the same
//! generator, seeds and formulas, so that the delays, permutations and victims
//! are the very ones the C peers get.

use std::thread;
use std::time::{Duration, Instant};

pub const NS_PER_MS: i64 = 1_000_000;
pub const NS_PER_S: i64 = 1_000_000_000;
/// bench/tkbench.h: TKB_SEED ("timerkit")
pub const SEED: u64 = 0x7469_6d65_726b_6974;
/// bench/harness/harness.h: TKB_W1_LO, TKB_W1_HI (the population's delays)
pub const W1_LO: i64 = 10 * NS_PER_S;
pub const W1_HI: i64 = 20 * NS_PER_S;

/// splitmix64: tkb_rng_next().
pub struct Rng {
    s: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { s: seed }
    }

    pub fn next(&mut self) -> u64 {
        self.s = self.s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// tkb_uniform_deadlines(): n delays uniform in [lo, hi] (ns).
pub fn uniform(n: usize, lo: i64, hi: i64, seed: u64) -> Vec<i64> {
    let mut r = Rng::new(seed);
    let span = (hi - lo + 1) as u64;
    (0..n).map(|_| lo + (r.next() % span) as i64).collect()
}

/// tkb_permutation(): a Fisher-Yates shuffle of 0..n, drawn from the top.
pub fn permutation(n: usize, seed: u64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    let mut r = Rng::new(seed);
    let mut i = n;
    while i > 1 {
        let j = (r.next() % i as u64) as usize;
        p.swap(i - 1, j);
        i -= 1;
    }
    p
}

/// tkb_random_indices(): `count` indices uniform in [0, n).
pub fn random_indices(count: usize, n: usize, seed: u64) -> Vec<u32> {
    let mut r = Rng::new(seed);
    (0..count).map(|_| (r.next() % n as u64) as u32).collect()
}

// ---- the clock and the pauses ------------------------------------------------

/// Nanoseconds on the monotonic clock (std's Instant: CLOCK_MONOTONIC), from
/// a base taken once per process, so that differences are plain integers.
pub fn now_ns() -> i64 {
    since_base(Instant::now())
}

/// An Instant of the monotonic clock as now_ns() counts it.
pub fn since_base(t: Instant) -> i64 {
    let base = base();
    match t.checked_duration_since(base) {
        Some(d) => d.as_nanos() as i64,
        None => -(base.duration_since(t).as_nanos() as i64),
    }
}

/// The Instant `ns` nanoseconds after the base (ns >= 0).
pub fn instant_at(ns: i64) -> Instant {
    base() + Duration::from_nanos(ns.max(0) as u64)
}

/// The process's base instant, taken at the first call. (std::sync::OnceLock
/// is newer than Debian bookworm's rustc 1.63: a Once and a static instead.)
fn base() -> Instant {
    use std::sync::Once;
    static ONCE: Once = Once::new();
    static mut BASE: Option<Instant> = None;
    // SAFETY: BASE is written once, inside call_once, and read only after
    // call_once returned, which orders every read after that write.
    unsafe {
        ONCE.call_once(|| BASE = Some(Instant::now()));
        BASE.expect("set by call_once")
    }
}

/// Sleeps `ns` nanoseconds (nothing if ns <= 0).
pub fn sleep_ns(ns: i64) {
    if ns > 0 {
        thread::sleep(Duration::from_nanos(ns as u64));
    }
}

/// Sleeps until now_ns() reaches `deadline`.
pub fn sleep_until_ns(deadline: i64) {
    sleep_ns(deadline - now_ns());
}

/// tkb_settle(): 20 ms + 200 ns per timer.
pub fn settle(n: usize) {
    sleep_ns(20 * NS_PER_MS + 200 * n as i64);
}

/// tkb_w2_offset_ns(): max(200 ms, 2 us x n).
pub fn w2_offset(n: usize) -> i64 {
    (2000 * n as i64).max(200 * NS_PER_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference() {
        // splitmix64 from seed 0: the reference generator's first outputs
        let mut r = Rng::new(0);
        assert_eq!(r.next(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn permutation_is_one() {
        let mut p = permutation(1000, SEED.wrapping_mul(3).wrapping_add(1000));
        p.sort_unstable();
        assert!(p.iter().enumerate().all(|(i, &v)| v as usize == i));
    }
}
