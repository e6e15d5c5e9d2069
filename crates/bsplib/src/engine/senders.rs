//! Senders lists: who wrote to each process in the superstep of each
//! parity (shared memory from [`SPARSE_FROM`] processes on; on `processes`
//! the index of its channels), so that a receiver reads only the mailboxes
//! or channels that wrote to it.

use std::sync::atomic::{AtomicU32, Ordering};

use super::{Sync, World};

/// From this many processes on, engines sharing memory keep senders lists
/// ([`World::note_sender`]) so that a receiver reads only the mailboxes
/// that wrote to it. Below, reading every mailbox's index is cheaper than
/// the two cache-line transfers of noting a sender (measured at p = 2: a
/// superstep of one put went from 0.95 to 1.2 us with the lists; at
/// p = 1024, from 17.8 ms to 1.5 ms).
pub(super) const SPARSE_FROM: usize = 64;

/// Who wrote to one process in the superstep of each parity: a count and
/// the pids, appended by the writers (each at most once per superstep).
pub(crate) struct Senders {
    count: [AtomicU32; 2],
    pids: [Box<[AtomicU32]>; 2],
}

impl Senders {
    pub(super) fn new(nprocs: usize) -> Self {
        let list = || (0..nprocs).map(|_| AtomicU32::new(0)).collect();
        Senders {
            count: [AtomicU32::new(0), AtomicU32::new(0)],
            pids: [list(), list()],
        }
    }
}

impl World {
    /// Shared memory, p >= `SPARSE_FROM`: process `from` writes to `to` for
    /// the first time in the superstep of parity `parity` (one atomic add
    /// on `to`'s line). `processes`: `from` lists `to` in its own memory,
    /// for its publish (`exchange.rs`). Otherwise nothing: every stream is
    /// read.
    #[inline]
    pub(crate) fn note_sender(&self, to: usize, parity: usize, from: usize) {
        if let Some(s) = self.senders.get(to) {
            let at = s.count[parity].fetch_add(1, Ordering::Relaxed) as usize;
            // At most one note per sender and superstep: `at < p`.
            if let Some(slot) = s.pids[parity].get(at) {
                slot.store(from as u32, Ordering::Relaxed);
            }
        } else if let Sync::Processes(s) = &self.sync {
            // The sender's own list of destinations, for its publish.
            s.note_dest(parity, to);
        }
    }

    /// True when the run keeps senders lists (shared memory, p >=
    /// `SPARSE_FROM`; `processes`: the index of its channels): a receiver
    /// reads only the mailboxes or channels listed.
    #[inline]
    pub(crate) fn tracks_senders(&self) -> bool {
        !self.senders.is_empty() || matches!(self.sync, Sync::Processes(_))
    }

    /// Shared memory: the processes that wrote to `me` in the superstep of
    /// parity `parity`, in no set order. Only between barrier A of the sync
    /// ending that superstep and [`reset_senders`](Self::reset_senders)
    /// (the barrier orders the writers' notes before the reads).
    ///
    /// `processes`: the senders the index of channel `parity` lists (see
    /// `processes::Shared::senders`), in pid order.
    pub(crate) fn senders(&self, me: usize, parity: usize) -> impl Iterator<Item = usize> + '_ {
        let (listed, indexed) = match &self.sync {
            Sync::Processes(s) => (None, Some(s.senders(me, parity))),
            _ => {
                let s = &self.senders[me];
                let n = s.count[parity].load(Ordering::Relaxed) as usize;
                (Some(&s.pids[parity][..n.min(s.pids[parity].len())]), None)
            }
        };
        let listed = listed
            .into_iter()
            .flatten()
            .map(|p| p.load(Ordering::Relaxed) as usize);
        listed.chain(indexed.into_iter().flatten())
    }

    /// Shared memory: `me` has read its senders of parity `parity`. Within
    /// its sync: nobody notes a sender of that parity again before the
    /// next barrier A (they are in the superstep of the other parity).
    pub(crate) fn reset_senders(&self, me: usize, parity: usize) {
        if let Some(s) = self.senders.get(me) {
            s.count[parity].store(0, Ordering::Relaxed);
        }
    }
}
