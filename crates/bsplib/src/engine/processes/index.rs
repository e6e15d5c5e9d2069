//! The index of channels `q = 0, 1`: who wrote a stream of its own for
//! whom, and each process's common stream, in one dense shared mapping;
//! and a process's publish of its column of it ([`Publish`]).

use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

use super::{Mapping, Shared, CELL};
use crate::mem::{self, Records};

impl Shared {
    /// Process `me` writes to `dst` for the first time in the superstep of
    /// parity `q` (`World::note_sender`): its publish of channel `q` looks
    /// at these destinations only.
    pub(crate) fn note_dest(&self, q: usize, dst: usize) {
        let mut own = self.own.lock().unwrap_or_else(|p| p.into_inner());
        own.pending[q].push(dst as u32);
    }

    /// Process `me` publishes channel `q` (see [`Publish`]).
    ///
    /// # Safety
    ///
    /// As for [`writer`](Self::writer): only `me`, while nobody reads
    /// channel `q`.
    pub(crate) unsafe fn publish(&self, me: usize, q: usize) -> Publish<'_> {
        let mut own = self.own.lock().unwrap_or_else(|p| p.into_inner());
        if own.marked[q].len() != self.nprocs {
            own.marked[q] = vec![0; self.nprocs];
        }
        own.round = own.round.wrapping_add(1).max(1);
        Publish {
            shared: self,
            me,
            q,
            own,
        }
    }

    /// The processes that wrote a stream of their own for `me` on channel
    /// `q`, in pid order. Only after barrier A of the sync that reads
    /// channel `q`, and within it.
    pub(crate) fn senders(&self, me: usize, q: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.nprocs).filter(move |&src| self.index.mark(q, me, src))
    }
}

/// The index of channels `q = 0, 1`, in one shared mapping (reserved, not
/// committed: pages exist where written), three dense arrays:
///
/// - `lens[q][src]` (`u32`): 0, or 1 + the length of `src`'s common stream;
/// - `marks[q][dst][src]` (`u8`, rows by receiver): 1 when `src` wrote a
///   stream of its own for `dst` in its channel `q`;
/// - `cells[q][src]` ([`CELL`] bytes): `src`'s common stream.
///
/// Written by each process for itself (its length and cell, its column of
/// marks) before barrier A, read by the others after it.
pub(super) struct Index {
    map: Mapping,
    nprocs: usize,
    marks_at: usize,
    cells_at: usize,
}

impl Index {
    pub(super) fn new(nprocs: usize) -> Result<Self, String> {
        let marks_at = (2 * nprocs * 4).next_multiple_of(CELL);
        let cells_at = marks_at + (2 * nprocs * nprocs).next_multiple_of(CELL);
        Ok(Index {
            map: Mapping::new(cells_at + 2 * nprocs * CELL, true)?,
            nprocs,
            marks_at,
            cells_at,
        })
    }

    fn len_cell(&self, q: usize, src: usize) -> &AtomicU32 {
        assert!(q < 2 && src < self.nprocs);
        // SAFETY: in bounds of the mapping (the first `8 p` bytes), 4-aligned,
        // zeroed at creation; only accessed atomically.
        unsafe {
            &*self
                .map
                .ptr
                .as_ptr()
                .cast::<AtomicU32>()
                .add(q * self.nprocs + src)
        }
    }

    fn mark_cell(&self, q: usize, dst: usize, src: usize) -> &AtomicU8 {
        assert!(q < 2 && dst < self.nprocs && src < self.nprocs);
        // SAFETY: in bounds of the mapping (`2 p^2` bytes from `marks_at`),
        // zeroed at creation; only accessed atomically.
        unsafe {
            &*self
                .map
                .ptr
                .as_ptr()
                .add(self.marks_at + (q * self.nprocs + dst) * self.nprocs + src)
                .cast::<AtomicU8>()
        }
    }

    /// Whether `src` wrote a stream of its own for `dst` on channel `q`.
    pub(super) fn mark(&self, q: usize, dst: usize, src: usize) -> bool {
        self.mark_cell(q, dst, src).load(Ordering::Relaxed) != 0
    }

    /// The start of the common-stream cell of process `src`, channel `q`.
    fn cell(&self, q: usize, src: usize) -> *mut u8 {
        assert!(q < 2 && src < self.nprocs);
        // SAFETY: in bounds of the mapping (`2 p CELL` bytes from
        // `cells_at`, which is `CELL`-aligned).
        unsafe {
            self.map
                .ptr
                .as_ptr()
                .add(self.cells_at + (q * self.nprocs + src) * CELL)
        }
    }

    /// The common stream `src` published on channel `q` (empty if none);
    /// `None` if its length does not fit its cell (another process's
    /// writing: not trusted).
    ///
    /// # Safety
    ///
    /// As for [`Shared::stream`].
    pub(super) unsafe fn common(&self, src: usize, q: usize) -> Option<Records<'_>> {
        match self.len_cell(q, src).load(Ordering::Relaxed) as usize {
            0 => Some(Records::empty()),
            n if n - 1 <= CELL => {
                // SAFETY: inside the cell, which is 8-aligned; written by
                // `src` before a barrier we passed and unchanged while the
                // view is used (caller's contract).
                Some(unsafe { Records::new(self.cell(q, src), n - 1) })
            }
            _ => None,
        }
    }
}

/// A process's own bookkeeping of its publishing.
#[derive(Default)]
pub(super) struct Own {
    /// Per parity: the destinations written in the current superstep of
    /// that parity, in the order of their first write.
    pending: [Vec<u32>; 2],
    /// Per channel `q`: its column of the index as last written (the round
    /// of the publish that last marked each destination; 0: unmarked) ...
    marked: [Vec<u32>; 2],
    /// ... and the destinations marked.
    listed: [Vec<u32>; 2],
    /// Publishes so far (from 1).
    round: u32,
}

/// One process's publish of channel `q` (from [`Shared::publish`]): its
/// common stream, and its column of the index, which is written only where
/// it changed: [`own`](Self::own) marks the destinations given a stream of
/// their own this time; the others marked last time are unmarked when the
/// publish ends (on drop).
pub(crate) struct Publish<'a> {
    shared: &'a Shared,
    me: usize,
    q: usize,
    own: std::sync::MutexGuard<'a, Own>,
}

impl Publish<'_> {
    /// Stores `common` as the stream every destination not given a stream
    /// of its own receives (`None`: an empty one). False if it does not fit
    /// its cell: every destination then needs a stream of its own.
    pub(crate) fn set_common(&mut self, common: Option<&[u8]>) -> bool {
        let index = &self.shared.index;
        let len = index.len_cell(self.q, self.me);
        match common {
            Some(bytes) if bytes.len() <= CELL => {
                // SAFETY: the cell is `CELL` bytes of the index mapping,
                // written only by `me`, and read by nobody now (contract of
                // `Shared::publish`); `bytes` is a live slice elsewhere.
                unsafe { mem::copy(bytes.as_ptr(), index.cell(self.q, self.me), bytes.len()) };
                len.store(bytes.len() as u32 + 1, Ordering::Relaxed);
                true
            }
            _ => {
                if len.load(Ordering::Relaxed) != 0 {
                    len.store(0, Ordering::Relaxed);
                }
                common.is_none()
            }
        }
    }

    /// The destinations written in this superstep (taken: hand them back
    /// with [`recycle`](Self::recycle) to keep the allocation).
    pub(crate) fn take_pending(&mut self) -> Vec<u32> {
        let q = self.q;
        std::mem::take(&mut self.own.pending[q])
    }

    /// Hands back (emptied) what [`take_pending`](Self::take_pending) gave.
    pub(crate) fn recycle(&mut self, mut pending: Vec<u32>) {
        pending.clear();
        let q = self.q;
        self.own.pending[q] = pending;
    }

    /// `dst` is given a stream of its own in this publish; false if it
    /// already was.
    pub(crate) fn own(&mut self, dst: usize) -> bool {
        let (q, round) = (self.q, self.own.round);
        let own = &mut *self.own;
        match own.marked[q][dst] {
            r if r == round => return false,
            0 => {
                self.shared
                    .index
                    .mark_cell(q, dst, self.me)
                    .store(1, Ordering::Relaxed);
                own.listed[q].push(dst as u32);
            }
            _ => {}
        }
        own.marked[q][dst] = round;
        true
    }
}

impl Drop for Publish<'_> {
    /// Unmarks the destinations marked last time and not this time.
    fn drop(&mut self) {
        let (q, round) = (self.q, self.own.round);
        let own = &mut *self.own;
        let (marked, listed) = (&mut own.marked[q], &mut own.listed[q]);
        listed.retain(|&dst| {
            let dst = dst as usize;
            if marked[dst] == round {
                return true;
            }
            marked[dst] = 0;
            self.shared
                .index
                .mark_cell(q, dst, self.me)
                .store(0, Ordering::Relaxed);
            false
        });
        own.pending[q].clear();
    }
}
