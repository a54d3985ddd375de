// SPDX-License-Identifier: MIT
//! The live-heap counter of the memory measurement: the process's allocator
//! (the system's malloc) wrapped so that it adds every allocation's size to a
//! counter and takes every release off it, while counting is on. Counting is
//! turned on once, at the start of a `memory` child (main.rs), and never off,
//! so every release of a counted block is counted too; the other measurements
//! leave it off and pay one relaxed load per allocation.
//!
//! What it counts is the bytes Rust asked for (Layout::size), as the JVM
//! harness counts the live heap: not malloc's own header and rounding (glibc:
//! 8 bytes per block, sizes rounded up to 16, 32 at least), which the C
//! peers' RSS readings include. docs/workloads.md says so.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::Relaxed};

pub struct Counting;

static ON: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicI64 = AtomicI64::new(0);

/// Starts counting (for good).
pub fn start() {
    ON.store(true, Relaxed);
}

/// The bytes allocated and not yet released since start().
pub fn live_bytes() -> i64 {
    LIVE.load(Relaxed)
}

fn add(bytes: usize) {
    if ON.load(Relaxed) {
        LIVE.fetch_add(bytes as i64, Relaxed);
    }
}

fn sub(bytes: usize) {
    if ON.load(Relaxed) {
        LIVE.fetch_sub(bytes as i64, Relaxed);
    }
}

// SAFETY: every call goes to System with the caller's arguments unchanged;
// the counter is bookkeeping beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            add(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            add(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        sub(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            sub(layout.size());
            add(new_size);
        }
        p
    }
}
