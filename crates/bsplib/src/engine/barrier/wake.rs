//! How the barrier's waiters sleep and are woken ([`Wake`]): the check a
//! parked waiter runs, and [`Local`], a mutex and a condition variable for
//! threads of one OS process.

#[cfg(loom)]
use loom::sync::{Condvar, Mutex};
#[cfg(not(loom))]
use std::sync::{Condvar, Mutex};

/// What a parked waiter's check found.
pub(crate) enum Check {
    /// Stop waiting: the episode is complete or the wait was interrupted.
    Done,
    /// The state changed under us: check again.
    Retry,
    /// Our parked flag is set and nothing changed: sleep.
    Sleep,
}

/// How waiters sleep and are woken. `park` must not lose a `notify` that
/// follows a `check` returning [`Check::Sleep`].
pub(crate) trait Wake {
    /// Sleeps until `check` returns [`Check::Done`], calling it before each
    /// sleep and after each wake-up; sleeps at most until `until` (then
    /// checks again).
    fn park(&self, check: impl FnMut() -> Check, until: Option<std::time::Instant>);
    /// How long a waiter busy-waits before yielding when the processes
    /// outnumber the cores (a multiple of 64).
    const OVERSUBSCRIBED_SPINS: u32 = 1 << 6;
    /// Wakes every parked waiter.
    fn notify(&self);
}

/// Sleeping for threads of one OS process: a mutex and a condition variable.
/// The check runs under the mutex and `notify` takes it, so a notification
/// cannot fall between a check and the wait.
#[derive(Default)]
pub(crate) struct Local {
    lock: Mutex<()>,
    cv: Condvar,
}

impl Wake for Local {
    const OVERSUBSCRIBED_SPINS: u32 = 0;

    fn park(&self, mut check: impl FnMut() -> Check, until: Option<std::time::Instant>) {
        let mut guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match check() {
                Check::Done => return,
                Check::Retry => continue,
                Check::Sleep => match until {
                    #[cfg(not(loom))]
                    Some(until) => {
                        let left = until.saturating_duration_since(std::time::Instant::now());
                        guard = self
                            .cv
                            .wait_timeout(guard, left)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                    }
                    _ => guard = self.cv.wait(guard).unwrap_or_else(|p| p.into_inner()),
                },
            }
        }
    }

    fn notify(&self) {
        drop(self.lock.lock().unwrap_or_else(|p| p.into_inner()));
        self.cv.notify_all();
    }
}
