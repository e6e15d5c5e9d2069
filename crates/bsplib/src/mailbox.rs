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
/// Flag: some process staged a put payload for the rendezvous (`mpi`,
/// `engine/mpi/rendezvous.rs`): step 5 of the sync moves them.
pub(crate) const LARGE: u32 = 16;
/// A process in active-message mode before or after this sync (`am.rs`)
/// will be in it after the sync: a process that will not be fails the
/// run (some called `am_init` and others a plain sync, say).
pub(crate) const AM_ON: u32 = 32;
/// A process in active-message mode before this sync will not be after it
/// (`am_term`): a process that will be fails the run.
pub(crate) const AM_OFF: u32 = 64;
/// Some process ends this superstep with a collective (`collectives.rs`):
/// one that ends it with a plain sync fails the run.
pub(crate) const COLL: u32 = 128;

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

/// What one process sends one destination in one superstep.
#[derive(Default)]
pub(crate) struct ToDest {
    /// Records `[slot][offset][len][payload, padded to 8]`, resolved and
    /// checked by the destination.
    pub(crate) puts: AlignedBuf,
    /// Get requests `[slot][offset][len]` to the owner of the source, in
    /// call order, resolved and checked by the owner.
    pub(crate) gets: AlignedBuf,
    /// Unbuffered puts (shared memory).
    pub(crate) hpputs: Vec<HpPut>,
    /// Records `[tag len][payload len][tag][payload]`, tag and payload
    /// each padded to 8 so both start aligned.
    pub(crate) sends: AlignedBuf,
}

impl ToDest {
    fn clear(&mut self) {
        self.puts.clear();
        self.gets.clear();
        self.hpputs.clear();
        self.sends.clear();
    }
}

/// Everything one process sends in one superstep. The lists of a
/// destination are made the first time it is sent something, and kept
/// for reuse; a half costs 4 bytes per process of the run until then,
/// and clearing it touches only the destinations it used.
pub(crate) struct Outgoing {
    /// Per destination: 1 + the index of its lists in `lists`; 0 for none.
    index: Box<[u32]>,
    lists: Vec<ToDest>,
    /// Whether each of `lists` was written since the last clear, and
    /// which were.
    in_use: Vec<bool>,
    used: Vec<u32>,
    /// Registration calls in call order.
    pub(crate) reg_ops: Vec<RegOp>,
    /// Tag-size calls.
    pub(crate) tag: TagCalls,
}

impl Outgoing {
    fn new(nprocs: usize) -> Self {
        Outgoing {
            index: vec![0; nprocs].into_boxed_slice(),
            lists: Vec::new(),
            in_use: Vec::new(),
            used: Vec::new(),
            reg_ops: Vec::new(),
            tag: TagCalls::default(),
        }
    }

    /// The lists for `dest`, made on first use, to write; and whether this
    /// is the first write to `dest` since the last clear.
    #[inline(always)]
    pub(crate) fn to(&mut self, dest: usize) -> (&mut ToDest, bool) {
        let i = match self.index[dest] {
            0 => self.make(dest),
            k => k as usize - 1,
        };
        let first = !self.in_use[i];
        if first {
            self.note_used(i);
        }
        (&mut self.lists[i], first)
    }

    /// Makes the lists for `dest` (its first write ever): their index.
    #[cold]
    fn make(&mut self, dest: usize) -> usize {
        self.lists.push(ToDest::default());
        self.in_use.push(false);
        let i = self.lists.len() - 1;
        self.index[dest] = u32::try_from(i + 1).expect("fewer than 2^32 processes");
        i
    }

    /// Notes list `i` used in this superstep (its first write).
    #[inline(never)]
    fn note_used(&mut self, i: usize) {
        self.in_use[i] = true;
        self.used.push(i as u32);
    }

    /// What was sent to `dest`, if it ever was.
    #[inline]
    pub(crate) fn for_dest(&self, dest: usize) -> Option<&ToDest> {
        match self.index[dest] {
            0 => None,
            k => Some(&self.lists[k as usize - 1]),
        }
    }

    /// Empties every list used, keeping capacities.
    pub(crate) fn clear(&mut self) {
        for &i in &self.used {
            self.lists[i as usize].clear();
            self.in_use[i as usize] = false;
        }
        self.used.clear();
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
