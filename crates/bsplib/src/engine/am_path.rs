//! The active-message path of the transport (ACTIVE_MESSAGES.md, section
//! 6): posting records to a process's inbox, taking them, waiting for more,
//! and the barrier that dispatches while it waits.

use std::sync::atomic::Ordering;

use super::{am_ring, Interrupt, Sync, World};

/// The notification channel of the active-message path on the
/// shared-memory engines: rung after every record posted to a process
/// (`World::am_post`).
pub(crate) const AM_BELL: usize = 4;

/// Bytes of data of each process's active-message inbox on the
/// shared-memory engines (`am_ring.rs`): the largest record.
pub(crate) const AM_RING: usize = 1 << 20;

impl World {
    /// Process `pid`'s inbox on the shared-memory engines.
    fn am_ring(&self, pid: usize) -> Option<AmRing<'_>> {
        match &self.sync {
            Sync::Processes(s) => Some(AmRing::Shared(s.am_ring(pid))),
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => None,
            _ => Some(AmRing::Local(
                self.am[pid]
                    .get_or_init(|| am_ring::OwnedRing::new(AM_RING))
                    .ring(),
            )),
        }
    }

    /// The largest active-message record this engine carries.
    pub(crate) fn am_max_record(&self) -> usize {
        match &self.sync {
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.am_max_record(),
            _ => AM_RING,
        }
    }

    /// Posts the record made of `parts` (whole 8-byte words, at most
    /// [`am_max_record`](Self::am_max_record) bytes) to process `to`, and
    /// rings its [`AM_BELL`]. Never waits for the receiver: `Ok(false)`
    /// (nothing posted) when its inbox has no room now; the caller keeps
    /// the record and posts it again later, in order.
    pub(crate) fn am_post(&self, me: usize, to: usize, parts: &[&[u8]]) -> Result<bool, Interrupt> {
        let _ = me;
        match self.am_ring(to) {
            Some(ring) => {
                let stopped = || self.is_stopped();
                if !ring
                    .get()
                    .push(parts, &stopped)
                    .map_err(|_| Interrupt::Stopped)?
                {
                    return Ok(false);
                }
                self.notify(to, AM_BELL);
                Ok(true)
            }
            #[cfg(feature = "mpi")]
            None => match &self.sync {
                Sync::Mpi(m) => m.am_post(me, to, parts),
                _ => unreachable!("only mpi has no ring"),
            },
            #[cfg(not(feature = "mpi"))]
            None => unreachable!("only mpi has no ring"),
        }
    }

    /// Appends every record that arrived for process `me` to `out`, whole
    /// and in the order each sender posted them.
    pub(crate) fn am_take(&self, me: usize, out: &mut Vec<u8>) -> Result<(), Interrupt> {
        match self.am_ring(me) {
            Some(ring) => {
                let stopped = || self.is_stopped();
                ring.get()
                    .take(out, &stopped)
                    .map_err(|_| Interrupt::Stopped)
            }
            #[cfg(feature = "mpi")]
            None => match &self.sync {
                Sync::Mpi(m) => m.am_take(me, out),
                _ => unreachable!("only mpi has no ring"),
            },
            #[cfg(not(feature = "mpi"))]
            None => unreachable!("only mpi has no ring"),
        }
    }

    /// A mark of what arrived for `me` so far: read it before an
    /// [`am_take`](Self::am_take), then [`am_wait`](Self::am_wait) for
    /// more with it, and nothing posted in between is missed.
    pub(crate) fn am_mark(&self, me: usize) -> u64 {
        match &self.sync {
            Sync::Processes(s) => s.bell(me, AM_BELL).load(Ordering::Acquire) >> 1,
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.am_mark(),
            _ => self.bells[me][AM_BELL].load(Ordering::Acquire) >> 1,
        }
    }

    /// Waits until something may have arrived for `me` since `mark` was
    /// read (or the run stops, or its deadline passes).
    /// Returns after at most about 50 ms even when nothing came, so that
    /// its caller can look at whether the processes it waits for ended.
    pub(crate) fn am_wait(&self, me: usize, mark: u64) -> Result<(), Interrupt> {
        let soft = Some(std::time::Instant::now() + std::time::Duration::from_millis(50));
        match &self.sync {
            Sync::Serial(s) => s
                .one()
                .await_bell_until(&self.bells[me][AM_BELL], mark + 1, soft),
            Sync::Threads(b) => b.await_bell_until(&self.bells[me][AM_BELL], mark + 1, soft),
            Sync::Processes(s) => s
                .barrier()
                .await_bell_until(s.bell(me, AM_BELL), mark + 1, soft),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.am_wait(mark),
        }
    }

    /// [`barrier`](Self::barrier) that runs `poll` whenever an active
    /// message may have arrived for `me` while it waits, and at every turn
    /// while `poll` returns true (records of ours wait for room in an
    /// inbox): the dispatching barrier A of active-message mode.
    pub(crate) fn barrier_polling(
        &self,
        episode: &mut u64,
        flags: u32,
        me: usize,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<u32, Interrupt> {
        match &self.sync {
            Sync::Serial(s) => {
                // One process: everything it sent itself was handled by
                // its fence; what a poll leaves pending is its own.
                while poll() {}
                s.barrier(flags)
            }
            Sync::Threads(b) => b.wait_polling(episode, flags, &self.bells[me][AM_BELL], poll),
            Sync::Processes(s) => {
                s.barrier()
                    .wait_polling(episode, flags, s.bell(me, AM_BELL), poll)
            }
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => {
                *episode += 1;
                m.barrier_polling(flags, poll)
            }
        }
    }
}

/// An active-message inbox on a shared-memory engine.
enum AmRing<'a> {
    Local(&'a am_ring::Ring),
    Shared(am_ring::Ring),
}

impl AmRing<'_> {
    fn get(&self) -> &am_ring::Ring {
        match self {
            AmRing::Local(r) => r,
            AmRing::Shared(r) => r,
        }
    }
}
