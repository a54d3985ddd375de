// SPDX-License-Identifier: MIT
//! The timer service: a Tokio runtime, as tkbench's tkb_svc_ops sees a peer.
//!
//! Tokio has no "schedule this callback after d" call: its timers are futures
//! (tokio::time::Sleep) that a task awaits, kept in the runtime's time driver,
//! a hierarchical wheel (6 levels of 64 slots, 1 ms per slot at level 0). A
//! scheduled task is therefore what a Tokio user writes for one:
//!
//!   handle.spawn(async move { sleep_until(deadline).await; fire() })
//!
//! spawned from the harness's thread (not a runtime thread, as the C
//! workloads schedule from a user thread), onto a multi-thread runtime with
//! ONE worker thread: the counterpart of the JDK's ScheduledThreadPoolExecutor
//! with one thread, whose thread both keeps the timers and runs the tasks.
//! The handle is the task's JoinHandle; cancel is JoinHandle::abort(), and a
//! timer scheduled without a handle is a task whose JoinHandle is dropped
//! (detached). Only the time driver is enabled (no I/O driver): the worker
//! parks on a condition variable with the next timer's deadline as timeout.
//!
//! The deadline is taken on the harness's thread at schedule time (now +
//! delay), as a ScheduledThreadPoolExecutor takes it in schedule(); a plain
//! `sleep(delay)` would start counting only when the worker first polls the
//! task.
//!
//! What happens where: spawn() allocates the task (its future, the Sleep
//! inside it, the task header: one allocation) and pushes it onto the
//! runtime's injection queue, waking the worker if it sleeps; the worker
//! polls the task, which puts the Sleep into the wheel. abort() from outside
//! marks the task cancelled and queues it the same way; the worker then
//! drops its future (the Sleep leaves the wheel) and the task is freed once
//! its JoinHandle is gone too. Both hand work to the worker, as Netty's
//! HashedWheelTimer hands new and cancelled timeouts to its tick thread.

use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::runtime::{Builder, Runtime};
use tokio::task::JoinHandle;

/// A handle: what cancel() takes.
pub type Handle = JoinHandle<()>;

/// The runtime's shape, for --describe.
pub const SHAPE: &str = "multi-thread scheduler, 1 worker thread, time driver only (no I/O \
                         driver); timer = a spawned task awaiting sleep_until(deadline), \
                         cancel = JoinHandle::abort()";

pub struct Service {
    rt: Runtime,
}

impl Service {
    /// A runtime with one worker thread and the time driver. Its worker
    /// starts at once and parks until the first task.
    pub fn new() -> Result<Service, String> {
        let rt = Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("tkbench-tokio")
            .enable_time()
            .build()
            .map_err(|e| format!("cannot build the runtime: {e}"))?;
        Ok(Service { rt })
    }

    /// Runs `fire` at `deadline` (the monotonic clock's Instant).
    pub fn schedule_at<F>(&self, deadline: Instant, fire: F) -> Handle
    where
        F: FnOnce() + Send + 'static,
    {
        let at = tokio::time::Instant::from_std(deadline);
        self.rt.spawn(async move {
            tokio::time::sleep_until(at).await;
            fire();
        })
    }

    /// Runs `fire` after `delay_ns` from now.
    pub fn schedule<F>(&self, delay_ns: i64, fire: F) -> Handle
    where
        F: FnOnce() + Send + 'static,
    {
        self.schedule_at(Instant::now() + Duration::from_nanos(delay_ns.max(0) as u64), fire)
    }

    /// A timer that does nothing when it fires (the workloads' tkb_noop).
    pub fn schedule_noop(&self, delay_ns: i64) -> Handle {
        self.schedule(delay_ns, || {})
    }

    pub fn cancel(h: &Handle) {
        h.abort();
    }

    /// Waits until the worker has taken in everything handed to it so far
    /// (tkb_svc_ops's sync()): a marker task, spawned now, runs only once
    /// the worker has polled every task queued before it (the injection
    /// queue is first in, first out, and this runtime has one worker), so
    /// every timer scheduled before is in the wheel and every task aborted
    /// before has dropped its future. Returns false if the marker did not run
    /// within `give_up`.
    pub fn sync(&self, give_up: Duration) -> bool {
        let (tx, rx) = mpsc::channel::<()>();
        // the marker's JoinHandle is dropped: it is detached
        drop(self.rt.spawn(async move {
            let _ = tx.send(());
        }));
        rx.recv_timeout(give_up).is_ok()
    }

    /// Stops the service: the runtime shuts down, its worker drops every
    /// task still pending, and this returns once the worker has ended.
    pub fn close(self) {
        drop(self.rt);
    }
}
