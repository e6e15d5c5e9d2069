//! Sleeping on a futex in shared memory: the [`Wake`] of the `processes`
//! engine's barrier, and the futex wait and wake it is made of (keyed by
//! address: they work across the processes of a run, and between threads).

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::engine::barrier::{Check, Wake};

/// Sleeping on a futex in shared memory: waiters read `seq` before their
/// check and sleep only while it is unchanged; `notify` bumps it before
/// waking, so a notification after a check is never lost.
pub(crate) struct Futex {
    pub(super) seq: AtomicU32,
}

impl Wake for Futex {
    /// None: with more processes than cores, the one we wait for most
    /// likely waits for our core, and each spin (`pause`) costs ~100
    /// cycles: at p = 32 on 2 cores, spinning 64 times took half of the
    /// CPU time of an empty sync (40 us a sync; 17 us without).
    const OVERSUBSCRIBED_SPINS: u32 = 0;

    fn park(&self, mut check: impl FnMut() -> Check, until: Option<std::time::Instant>) {
        loop {
            let seq = self.seq.load(Ordering::Acquire);
            match check() {
                Check::Done => return,
                Check::Retry => continue,
                Check::Sleep => {
                    // A bounded sleep: the wake-up is not lost (see above),
                    // the timeout only bounds the damage of a bug, or stops
                    // at the run's deadline.
                    let left = until.map_or(Duration::from_secs(1), |t| {
                        t.saturating_duration_since(std::time::Instant::now())
                            .min(Duration::from_secs(1))
                    });
                    futex_wait(&self.seq, seq, left);
                }
            }
        }
    }

    fn notify(&self) {
        self.seq.fetch_add(1, Ordering::Release);
        futex_wake(&self.seq);
    }
}

/// Sleeps on `word` while it holds `seen`, at most `limit` (a futex keyed
/// by address: it works across the processes of a run on a shared
/// mapping, and between threads). Spurious returns are the caller's to
/// check.
pub(crate) fn futex_wait(word: &AtomicU32, seen: u32, limit: Duration) {
    let timeout = libc::timespec {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_nsec: limit.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT reads the aligned, live 32-bit `word`; the other
    // arguments are plain values and a pointer to a live timespec.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            seen,
            &timeout as *const libc::timespec,
        );
    }
}

/// Wakes every sleeper of [`futex_wait`] on `word`.
pub(crate) fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address of the live, aligned word
    // as a key.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX) };
}
