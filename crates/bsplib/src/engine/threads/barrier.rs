//! A reducing, interruptible, sense-reversing barrier that spins briefly,
//! then yields, then parks.
//!
//! - Arrival: OR the flags into `acc`, then `count.fetch_add` (AcqRel). The
//!   last arriver takes `acc`, publishes it in `result`, resets `count`, and
//!   bumps `epoch` (Release). Waiters leave when they
//!   load a new `epoch` (Acquire), so everything every process wrote before
//!   arriving happens-before everything every process does after leaving.
//! - Interruption: `stopped` (the run failed) and `ended` (a process returned
//!   and will never arrive) end the wait with an [`Interrupt`]. A process
//!   that ends (or fails) after leaving a barrier may be seen as ended (or
//!   the run as stopped) by a slower waiter of that same barrier: the waiter
//!   re-reads `epoch` after seeing the flag, and the process that set it
//!   read the new `epoch` before storing the flag (Release/Acquire), so the
//!   re-read sees the barrier complete and the waiter leaves it normally.
//! - Parking: a waiter registers with a read-modify-write on `sleepers`
//!   (AcqRel) and then checks the wake conditions under `lock`; a waker
//!   changes the condition and then reads `sleepers` with a read-modify-write
//!   too (`fetch_add(0)`, AcqRel), taking `lock` to notify if it is non-zero.
//!   The two RMWs are ordered in `sleepers`' modification order: if the
//!   waker's comes second it sees the waiter and notifies under the lock
//!   (the waiter is then either before its check or inside `wait`); if the
//!   waiter's comes second it synchronises with the waker's and so sees the
//!   changed condition. No wake-up is lost, without relying on SeqCst.

#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
#[cfg(loom)]
use loom::sync::{Condvar, Mutex};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::{Condvar, Mutex};

use crossbeam_utils::CachePadded;

use crate::engine::Interrupt;

const NONE: usize = usize::MAX;

/// How long a waiter busy-waits before yielding and before parking.
#[derive(Clone, Copy, Debug)]
struct Patience {
    spins: u32,
    yields: u32,
}

impl Patience {
    fn for_procs(nprocs: usize) -> Self {
        if cfg!(loom) {
            return Patience {
                spins: 0,
                yields: 1,
            };
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if nprocs <= cores {
            // Every process has a core: spinning is the fastest wait, and a
            // futex wake-up costs ~300 times a spin barrier here.
            Patience {
                spins: 1 << 16,
                yields: 1 << 10,
            }
        } else {
            // Oversubscribed: the process we wait for may need our core.
            Patience {
                spins: 1 << 6,
                yields: 1 << 6,
            }
        }
    }
}

/// See the module documentation.
pub(crate) struct Barrier {
    nprocs: usize,
    patience: Patience,
    count: CachePadded<AtomicUsize>,
    epoch: CachePadded<AtomicUsize>,
    acc: CachePadded<AtomicU32>,
    result: AtomicU32,
    stopped: AtomicBool,
    ended: AtomicUsize,
    sleepers: CachePadded<AtomicUsize>,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Barrier {
    pub(crate) fn new(nprocs: usize) -> Self {
        Barrier {
            nprocs,
            patience: Patience::for_procs(nprocs),
            count: CachePadded::new(AtomicUsize::new(0)),
            epoch: CachePadded::new(AtomicUsize::new(0)),
            acc: CachePadded::new(AtomicU32::new(0)),
            result: AtomicU32::new(0),
            stopped: AtomicBool::new(false),
            ended: AtomicUsize::new(NONE),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Arrives with `flags`; returns the OR of every process's flags once all
    /// have arrived.
    pub(crate) fn wait(&self, flags: u32) -> Result<u32, Interrupt> {
        if self.stopped.load(Ordering::Acquire) {
            return Err(Interrupt::Stopped);
        }
        let e = self.epoch.load(Ordering::Acquire);
        if flags != 0 {
            // Ordered before our release `fetch_add` below.
            self.acc.fetch_or(flags, Ordering::Relaxed);
        }
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.nprocs {
            let all = self.acc.swap(0, Ordering::Relaxed);
            self.result.store(all, Ordering::Relaxed);
            self.count.store(0, Ordering::Relaxed);
            self.epoch.store(e.wrapping_add(1), Ordering::Release);
            self.wake_sleepers();
            return Ok(all);
        }
        self.await_epoch(e)?;
        Ok(self.result.load(Ordering::Relaxed))
    }

    /// Returns once `epoch` moved past `e`, or with the reason it never will.
    fn await_epoch(&self, e: usize) -> Result<(), Interrupt> {
        let mut spins = 0u32;
        let mut yields = 0u32;
        loop {
            if self.epoch.load(Ordering::Acquire) != e {
                return Ok(());
            }
            if self.stopped.load(Ordering::Acquire) {
                // The barrier may have completed before the stop: then this
                // sync completes like everyone else's, and the stop is seen
                // at the next one.
                if self.epoch.load(Ordering::Acquire) != e {
                    return Ok(());
                }
                return Err(Interrupt::Stopped);
            }
            let ended = self.ended.load(Ordering::Acquire);
            if ended != NONE {
                if self.epoch.load(Ordering::Acquire) != e {
                    return Ok(());
                }
                return Err(Interrupt::Ended(ended));
            }
            if spins < self.patience.spins {
                spins += 1;
                std::hint::spin_loop();
            } else if yields < self.patience.yields {
                yields += 1;
                yield_now();
            } else {
                self.park(e);
            }
        }
    }

    /// Sleeps until `epoch` moves past `e` or the wait is interrupted.
    fn park(&self, e: usize) {
        self.sleepers.fetch_add(1, Ordering::AcqRel);
        {
            let mut guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
            while self.epoch.load(Ordering::Acquire) == e
                && !self.stopped.load(Ordering::Acquire)
                && self.ended.load(Ordering::Acquire) == NONE
            {
                guard = self.cv.wait(guard).unwrap_or_else(|p| p.into_inner());
            }
        }
        self.sleepers.fetch_sub(1, Ordering::AcqRel);
    }

    fn wake_sleepers(&self) {
        if self.sleepers.fetch_add(0, Ordering::AcqRel) != 0 {
            drop(self.lock.lock().unwrap_or_else(|p| p.into_inner()));
            self.cv.notify_all();
        }
    }

    /// Stops the run: every current and future wait returns
    /// [`Interrupt::Stopped`].
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.wake_sleepers();
    }

    /// Process `pid` returned from the SPMD function: it will not arrive at
    /// any later barrier.
    pub(crate) fn ended(&self, pid: usize) {
        let _ = self
            .ended
            .compare_exchange(NONE, pid, Ordering::AcqRel, Ordering::Acquire);
        self.wake_sleepers();
    }

    /// True once [`stop`](Self::stop) was called.
    #[inline]
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }
}

#[cfg(loom)]
fn yield_now() {
    loom::thread::yield_now();
}

#[cfg(not(loom))]
fn yield_now() {
    std::thread::yield_now();
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! Model checks of the barrier and stop protocol:
    //! `RUSTFLAGS="--cfg loom" cargo test -p bsplib --lib --release loom`.
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    /// Data written before a barrier is seen after it, flags are reduced,
    /// and the barrier can be reused (two episodes).
    #[test]
    fn loom_barrier_publishes_and_reduces() {
        loom::model(|| {
            let b = Arc::new(Barrier::new(2));
            let data = Arc::new(AtomicUsize::new(0));
            let (b2, d2) = (b.clone(), data.clone());
            let t = thread::spawn(move || {
                d2.store(7, Ordering::Relaxed);
                let all = b2.wait(1).unwrap();
                assert_eq!(all, 3);
                b2.wait(0).unwrap();
            });
            let all = b.wait(2).unwrap();
            assert_eq!(all, 3);
            assert_eq!(data.load(Ordering::Relaxed), 7);
            assert_eq!(b.wait(0).unwrap(), 0);
            t.join().unwrap();
        });
    }

    /// Three processes: every one leaves with the OR of all flags, and the
    /// parked ones are woken.
    #[test]
    fn loom_three_processes_reduce() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(|| {
            let b = Arc::new(Barrier::new(3));
            let ts: Vec<_> = [1u32, 2]
                .into_iter()
                .map(|f| {
                    let b = b.clone();
                    thread::spawn(move || b.wait(f).unwrap())
                })
                .collect();
            assert_eq!(b.wait(4).unwrap(), 7);
            for t in ts {
                assert_eq!(t.join().unwrap(), 7);
            }
        });
    }

    /// A stop while another process waits ends the wait: no hang.
    #[test]
    fn loom_stop_interrupts_waiter() {
        loom::model(|| {
            let b = Arc::new(Barrier::new(2));
            let b2 = b.clone();
            let t = thread::spawn(move || b2.wait(0));
            b.stop();
            assert_eq!(t.join().unwrap(), Err(Interrupt::Stopped));
        });
    }

    /// A stop right after a barrier completes does not fail a slower
    /// waiter of that barrier; its next wait fails.
    #[test]
    fn loom_stop_after_barrier_is_seen_at_the_next() {
        loom::model(|| {
            let b = Arc::new(Barrier::new(2));
            let b2 = b.clone();
            let t = thread::spawn(move || {
                b2.wait(0).unwrap();
                b2.stop();
            });
            assert_eq!(b.wait(0), Ok(0));
            assert_eq!(b.wait(0), Err(Interrupt::Stopped));
            t.join().unwrap();
        });
    }

    /// A process that ends right after a barrier does not make a slower
    /// waiter of that barrier fail; one that ends before arriving does.
    #[test]
    fn loom_end_after_barrier_is_not_an_error() {
        loom::model(|| {
            let b = Arc::new(Barrier::new(2));
            let b2 = b.clone();
            let t = thread::spawn(move || {
                b2.wait(0).unwrap();
                b2.ended(1);
            });
            assert_eq!(b.wait(0), Ok(0));
            assert_eq!(b.wait(0), Err(Interrupt::Ended(1)));
            t.join().unwrap();
        });
    }
}
