//! The outgoing side of a superstep: what a process publishes to the others
//! at `bsp_sync`.
//!
//! Each process owns one [`Mailbox`] with two [`Outgoing`] halves, used in
//! alternate supersteps (superstep parity). During superstep `s` the owner
//! appends to half `s % 2` and nobody else touches it. From the first barrier
//! of the sync ending superstep `s` until the first barrier of the next sync,
//! the other processes read half `s % 2` (puts, messages, registration calls);
//! the owner meanwhile writes only half `(s + 1) % 2`, and clears it just
//! after that first barrier of sync `s`, when every reader of superstep
//! `s - 1` has finished. Two halves therefore make a third barrier
//! unnecessary (see `engine/threads/README.md`).

use crate::error::SourceLocation;
use std::cell::UnsafeCell;

use crossbeam_utils::CachePadded;

use crate::mem::AlignedBuf;
use crate::registration::RegOp;
use crate::stream::Outbox;

/// Flag: some process made a registration or `bsp_set_tagsize` call.
pub(crate) const REG: u32 = 1;
/// Flag: some process issued a put, an hpput or a send.
pub(crate) const DATA: u32 = 2;
/// Flag: some process issued a get or an hpget.
pub(crate) const GET: u32 = 4;
/// Flag: some process issued an hpput (its source must stay readable until
/// every receiver has copied it, so the sync closes with a barrier).
pub(crate) const HPPUT: u32 = 8;

/// An unbuffered put on an engine sharing one address space: the receiver
/// copies straight from the sender's source (an address in that one
/// address space, which the sender vouched for) into the range of its own
/// registration slot `slot` that it resolves and checks itself.
#[derive(Clone, Copy)]
pub(crate) struct HpPut {
    pub(crate) src: *const u8,
    pub(crate) slot: u64,
    pub(crate) offset: usize,
    pub(crate) len: usize,
}

/// The `bsp_set_tagsize` calls of one superstep on one process.
#[derive(Clone, Copy, Default)]
pub(crate) struct TagCalls {
    pub(crate) calls: u32,
    pub(crate) last: usize,
    pub(crate) location: Option<SourceLocation>,
}

/// Everything one process sends in one superstep. Each per-destination
/// list has its own cache line: the lists of different processes are
/// allocated side by side, and a write to one must not evict another
/// process's from its core.
pub(crate) struct Outgoing {
    /// Per destination: records `[slot][offset][len][payload, padded to
    /// 8]`, resolved and checked by the destination.
    pub(crate) puts: Box<[CachePadded<AlignedBuf>]>,
    /// Per destination (the owner of the source): get requests `[slot]
    /// [offset][len]`, in call order, resolved and checked by the owner.
    pub(crate) gets: Box<[CachePadded<AlignedBuf>]>,
    /// Per destination: unbuffered puts.
    pub(crate) hpputs: Box<[CachePadded<Vec<HpPut>>]>,
    /// Per destination: records `[tag len][payload len][tag][payload]`,
    /// tag and payload each padded to 8 so both start aligned.
    pub(crate) sends: Box<[CachePadded<AlignedBuf>]>,
    /// Registration calls in call order.
    pub(crate) reg_ops: Vec<RegOp>,
    /// Tag-size calls.
    pub(crate) tag: TagCalls,
}

impl Outgoing {
    fn new(nprocs: usize) -> Self {
        Outgoing {
            puts: (0..nprocs).map(|_| CachePadded::default()).collect(),
            gets: (0..nprocs).map(|_| CachePadded::default()).collect(),
            hpputs: (0..nprocs).map(|_| CachePadded::default()).collect(),
            sends: (0..nprocs).map(|_| CachePadded::default()).collect(),
            reg_ops: Vec::new(),
            tag: TagCalls::default(),
        }
    }

    /// Empties every list, keeping capacities.
    pub(crate) fn clear(&mut self) {
        self.puts.iter_mut().for_each(|b| b.clear());
        self.gets.iter_mut().for_each(|b| b.clear());
        self.hpputs.iter_mut().for_each(|v| v.clear());
        self.sends.iter_mut().for_each(|b| b.clear());
        self.reg_ops.clear();
        self.tag = TagCalls::default();
    }
}

/// The two halves of one process's outgoing state, and its get replies.
pub(crate) struct Mailbox {
    halves: [UnsafeCell<Outgoing>; 2],
    /// The get replies of engines sharing one address space (their
    /// `REPLIES` channel): one stream per requester, written by the owner
    /// between the first and second barriers of a sync with gets, read by
    /// the requesters between the second barrier and the end of that sync.
    replies: UnsafeCell<Outbox>,
}

// SAFETY: a `Mailbox` is shared between the threads of a run, and its halves
// are accessed under the superstep discipline stated in the module docs:
// during a superstep only the owner touches the half of that superstep's
// parity, and only the owner (clearing) or readers (between the barriers
// named above) touch the other; the barriers order these accesses with
// acquire/release. The raw pointers inside (`HpPut::src`) are only
// dereferenced by receivers within the sync whose closing barrier keeps the
// source alive.
unsafe impl Sync for Mailbox {}
// SAFETY: as above; a `Mailbox` holds no thread-affine data.
unsafe impl Send for Mailbox {}

impl Mailbox {
    pub(crate) fn new(nprocs: usize) -> Self {
        Mailbox {
            halves: [
                UnsafeCell::new(Outgoing::new(nprocs)),
                UnsafeCell::new(Outgoing::new(nprocs)),
            ],
            replies: UnsafeCell::new(Outbox::default()),
        }
    }

    /// The owner's view of its get replies.
    ///
    /// # Safety
    ///
    /// Only the owner, inside a sync between its first and second
    /// barriers (no requester reads the replies then: they read them after
    /// the second barrier of the previous sync with gets, and have left
    /// that sync), and not two views at once.
    #[allow(clippy::mut_from_ref)]
    #[inline]
    pub(crate) unsafe fn replies_owner(&self) -> &mut Outbox {
        // SAFETY: the caller is the only one accessing the replies now.
        unsafe { &mut *self.replies.get() }
    }

    /// A requester's view of the owner's get replies.
    ///
    /// # Safety
    ///
    /// Only between the second barrier of a sync with gets and the end of
    /// that sync (the owner writes them again only after the first
    /// barrier of a later sync).
    #[inline]
    pub(crate) unsafe fn replies(&self) -> &Outbox {
        // SAFETY: the caller is inside the window in which no one writes.
        unsafe { &*self.replies.get() }
    }

    /// The owner's mutable view of half `parity`.
    ///
    /// # Safety
    ///
    /// Only the owning process may call this, for the half of its current
    /// superstep (or, inside a sync after the first barrier, the half of the
    /// next superstep), and must not hold two views at once.
    #[allow(clippy::mut_from_ref)]
    #[inline]
    pub(crate) unsafe fn owner(&self, parity: usize) -> &mut Outgoing {
        // SAFETY: the caller is the only one accessing this half now.
        unsafe { &mut *self.halves[parity].get() }
    }

    /// A reader's view of half `parity`.
    ///
    /// # Safety
    ///
    /// Only between the first barrier of the sync ending the superstep of
    /// that parity and the first barrier of the following sync, during which
    /// the owner does not write it.
    #[inline]
    pub(crate) unsafe fn reader(&self, parity: usize) -> &Outgoing {
        // SAFETY: the caller is inside the window in which no one writes.
        unsafe { &*self.halves[parity].get() }
    }
}
