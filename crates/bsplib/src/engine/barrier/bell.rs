//! Point-to-point notifications on the barrier's machinery: a [`Bell`] is
//! a counter of the process notified, rung with [`Barrier::ring`] and
//! waited for with [`Barrier::await_bell`], with the barrier's spin, yield
//! and park and the same argument against lost wake-ups.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};

use super::{yield_now, Barrier, Check, Wake, STOPPED};
use crate::engine::Interrupt;

/// A notification counter ([`Barrier::ring`]): the barrier's own atomic
/// type, so that the loom model covers the engines' counters too.
pub(crate) type Bell = AtomicU64;

impl<W: Wake> Barrier<W> {
    /// Point-to-point notification: adds one to `bell`, a counter of the
    /// process notified (in units of 2: bit 0 says it sleeps), with
    /// release ordering, and wakes it if it sleeps. Everything the caller
    /// wrote before is visible to the notified process once its
    /// [`await_bell`](Self::await_bell) has seen this notification.
    pub(crate) fn ring(&self, bell: &AtomicU64) {
        let old = bell.fetch_add(2, Ordering::AcqRel);
        if old & 1 != 0 {
            bell.fetch_and(!1, Ordering::Relaxed);
            self.notify();
        }
    }

    /// Waits until `bell` (this process's) has been rung `target` times in
    /// all. Interrupted by [`stop`](Self::stop) and by the run's deadline;
    /// a notification that never comes otherwise waits forever, as a
    /// receive with no sender does. The same spin, yield and park as a
    /// barrier, and the same argument against lost wake-ups: the waiter
    /// sets the sleep bit with a compare-exchange that fails if a
    /// notification came in between; a notifier that finds the bit set
    /// wakes it.
    #[cfg_attr(not(feature = "raw"), allow(dead_code))]
    pub(crate) fn await_bell(&self, bell: &AtomicU64, target: u64) -> Result<(), Interrupt> {
        self.await_bell_until(bell, target, None)
    }

    /// [`await_bell`](Self::await_bell) that also returns (with `Ok`, as
    /// if woken) once `soft` has passed, for a caller that must look at
    /// something else from time to time (whether a process it waits for
    /// has ended).
    pub(crate) fn await_bell_until(
        &self,
        bell: &AtomicU64,
        target: u64,
        soft: Option<std::time::Instant>,
    ) -> Result<(), Interrupt> {
        let reached = |word: u64| word >> 1 >= target;
        let past =
            |t: Option<std::time::Instant>| t.is_some_and(|t| std::time::Instant::now() >= t);
        let mut spins = 0u32;
        let mut yields = 0u32;
        let mut until: Option<Option<std::time::Instant>> = None;
        loop {
            let word = bell.load(Ordering::Acquire);
            if reached(word) {
                return Ok(());
            }
            if self.arrivals.load(Ordering::Acquire) & STOPPED != 0 {
                return Err(Interrupt::Stopped);
            }
            if !cfg!(loom) && past(soft) {
                return Ok(());
            }
            if spins < self.patience.spins {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            let until = *until.get_or_insert_with(|| self.deadline_from_now());
            if until.is_some_and(|t| std::time::Instant::now() >= t) {
                return Err(Interrupt::Deadline);
            }
            if yields < self.patience.yields {
                yields += 1;
                yield_now();
                continue;
            }
            let wake_at = match (until, if cfg!(loom) { None } else { soft }) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            self.wake.park(
                || {
                    let word = bell.load(Ordering::Acquire);
                    if reached(word)
                        || self.arrivals.load(Ordering::Acquire) & STOPPED != 0
                        || past(wake_at)
                    {
                        return Check::Done;
                    }
                    if word & 1 == 0
                        && bell
                            .compare_exchange(word, word | 1, Ordering::AcqRel, Ordering::Acquire)
                            .is_err()
                    {
                        return Check::Retry;
                    }
                    Check::Sleep
                },
                wake_at,
            );
        }
    }
}
