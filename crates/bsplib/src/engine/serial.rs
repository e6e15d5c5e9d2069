//! The `serial` engine: one process, no threads. The reference engine: the
//! same core runs on it, every barrier completes at once.

use std::sync::atomic::{AtomicBool, Ordering};

use super::Interrupt;

/// The (trivial) barrier of a one-process run.
pub(crate) struct Sync {
    stopped: AtomicBool,
}

impl Sync {
    pub(crate) fn new() -> Self {
        Sync {
            stopped: AtomicBool::new(false),
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

    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }
}
