//! The `serial` engine: one process, no threads. The reference engine: the
//! same core runs on it, every barrier completes at once.

use super::barrier::Barrier;
use super::Interrupt;

/// The (trivial) barrier of a one-process run. A barrier of one holds the
/// stopped state, and serves the process's notifications to itself (a
/// wait for more than it sent waits for the deadline, as on any engine).
pub(crate) struct Sync {
    one: Barrier,
}

impl Sync {
    pub(crate) fn new() -> Self {
        Sync {
            one: Barrier::new(1),
        }
    }

    #[inline]
    pub(crate) fn barrier(&self, flags: u32) -> Result<u32, Interrupt> {
        if self.is_stopped() {
            Err(Interrupt::Stopped)
        } else {
            Ok(flags)
        }
    }

    /// The barrier of one (stop state, deadline, notifications).
    pub(crate) fn one(&self) -> &Barrier {
        &self.one
    }

    pub(crate) fn stop(&self) {
        self.one.stop();
    }

    #[inline]
    pub(crate) fn is_stopped(&self) -> bool {
        self.one.is_stopped()
    }
}
