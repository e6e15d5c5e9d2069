//! The sync protocol (`bsp_sync`), engine-independent part, for engines
//! that share one address space (`serial`, `threads`); engines that do not
//! use the exchange protocol of `exchange.rs`, which shares steps 3 to 6
//! and every record format.
//!
//! Records never carry an address of the memory they name: a put names a
//! registration slot, an offset and a length; so does a get request. The
//! process that owns the memory resolves the slot in its own table and
//! checks the range before it reads or writes ([`own_range`]), whoever
//! sent the record.
//!
//! With `q` the parity of the superstep that ends:
//!
//! 1. **Barrier A**, arriving with this superstep's flags; everyone leaves
//!    with their OR. Every mailbox half `q` is now readable.
//! 2. Clear our half `1 - q` if we wrote anything into it (its readers
//!    finished before barrier A).
//! 3. If anyone registered or set the tag size: check the calls match
//!    across processes and apply them to the replicated slot table (slots
//!    popped now stay resolvable until step 6: this superstep's records
//!    may name them).
//! 4. If anyone issued a get: serve the requests addressed to us, reading
//!    our own memory into our replies, then **barrier B**, then copy the
//!    replies to our gets' destinations (so every source is read before
//!    anything is written).
//! 5. Write the puts and hpputs addressed to us (after the gets), then
//!    index the messages addressed to us.
//! 6. Tag sizes `(A, B, C) := (B, C, C)`; release popped registrations.
//! 7. If anyone issued an hpput: **barrier C**, so that senders do not
//!    reuse an hpput source before every receiver has copied it.
//!
//! Each process writes only its own memory during a sync, and reads
//! other processes' mailboxes (steps 3 to 5), their replies (step 4) and
//! hpput sources (step 5). An empty superstep costs one barrier.

use crate::engine::board::State;
use crate::engine::World;
use crate::error::{Error, ErrorKind};
use crate::mailbox::{Outgoing, TagCalls, DATA, GET, HPPUT, REG};
use crate::mem::{self, pad8, Records};
use crate::process::{Loc, Process};
use crate::registration::{Applied, RegOp, Registry};

const CALL: &str = "bsp_sync";

/// Half `q` of process `pid`'s mailbox.
///
/// Only called during a sync, between its barrier A and barrier A of the
/// next sync: the window in which half `q` is read-only (mailbox docs).
#[inline]
fn published(world: &World, pid: usize, q: usize) -> &Outgoing {
    // SAFETY: see above; every caller is inside `Process::sync` after
    // barrier A.
    unsafe { world.mailbox(pid).reader(q) }
}

impl Process {
    /// `bsp_sync`.
    ///
    /// A failed sync poisons the process: it may have stopped between two
    /// barriers, while other processes still read its current mailbox half
    /// and registered memory, so from then on every call that would write
    /// them fails (see `Process::check_running`), and the message queue is
    /// emptied.
    pub(crate) fn sync(&mut self, loc: Loc) -> Result<(), Error> {
        self.world
            .board()
            .set(self.pid, self.superstep, State::Syncing);
        let result = self
            .check_running(CALL, loc)
            .and_then(|()| self.sync_steps(loc));
        if result.is_err() {
            self.poisoned = true;
            self.inbox.clear();
        }
        result
    }

    /// The steps of `sync`, in order (module docs).
    fn sync_steps(&mut self, loc: Loc) -> Result<(), Error> {
        if self.world.distributed() {
            return self.sync_exchange(loc);
        }
        let q = self.parity;
        let all = self
            .world
            .barrier(&mut self.episode, self.flags)
            .map_err(|why| self.interrupted(why, CALL, loc))?;
        if self.dirty[q ^ 1] {
            // SAFETY: after barrier A nobody reads half `1 - q` any more (it
            // was read from barrier A of the previous sync until now), and
            // we are its owner.
            unsafe { self.world.mailbox(self.pid).owner(q ^ 1) }.clear();
            self.dirty[q ^ 1] = false;
        }

        let applied = if all & REG != 0 {
            Some(self.apply_collectives(q, loc)?)
        } else {
            None
        };

        if all & GET != 0 {
            self.serve_gets(q, loc)?;
            self.world
                .barrier(&mut self.episode, 0)
                .map_err(|why| self.interrupted(why, CALL, loc))?;
            let world = std::sync::Arc::clone(&self.world);
            let me = self.pid;
            self.write_replies(|owner| {
                // SAFETY: after barrier B of this sync, until its end.
                let r = unsafe { world.mailbox(owner).replies() };
                let (at, len) = r.dir[me];
                Records::of(&r.data).sub(at, len)
            })
            .map_err(|()| self.stopped(CALL, loc))?;
        }
        self.gets.clear();
        self.get_keep.clear();

        self.inbox.clear();
        if all & DATA != 0 {
            self.receive(q, loc)?;
        }

        self.finish_collectives(applied);
        if all & HPPUT != 0 {
            self.world
                .barrier(&mut self.episode, 0)
                .map_err(|why| self.interrupted(why, CALL, loc))?;
        }
        self.next_superstep();
        Ok(())
    }

    /// Step 6: tag sizes `(A, B, C) := (B, C, C)` (A lives in the messages
    /// just indexed); registrations settle.
    pub(crate) fn finish_collectives(&mut self, applied: Option<Applied>) {
        self.tags.send = self.tags.next;
        if let Some(applied) = applied {
            self.reg.forget_retired();
            self.settle_registrations(applied);
        }
    }

    pub(crate) fn next_superstep(&mut self) {
        self.superstep += 1;
        self.parity ^= 1;
        self.flags = 0;
        self.world
            .board()
            .set(self.pid, self.superstep, State::Computing);
    }

    /// Step 3 on an engine sharing memory: the calls are in the mailboxes.
    fn apply_collectives(&mut self, q: usize, loc: Loc) -> Result<Applied, Error> {
        let world = std::sync::Arc::clone(&self.world);
        let tags: Vec<TagCalls> = (0..self.nprocs)
            .map(|pid| published(&world, pid, q).tag)
            .collect();
        let ops: Vec<&[RegOp]> = (0..self.nprocs)
            .map(|pid| published(&world, pid, q).reg_ops.as_slice())
            .collect();
        self.check_collectives(&tags, &ops, loc)
    }

    /// Step 3: registration and tag-size calls (`tags[pid]`, `ops[pid]`)
    /// must match on every process; applies them to the slot table.
    pub(crate) fn check_collectives(
        &mut self,
        tags: &[TagCalls],
        ops: &[&[RegOp]],
        loc: Loc,
    ) -> Result<Applied, Error> {
        let t0 = tags[0];
        for (pid, t) in tags.iter().enumerate().skip(1) {
            if t.calls != t0.calls || (t.calls > 0 && t.last != t0.last) {
                let detail = format!(
                    "process {pid} called it {} time(s), last with {}; process 0 called it {} time(s), last with {}",
                    t.calls, t.last, t0.calls, t0.last
                );
                let err = Error::new(
                    ErrorKind::TagSizeMismatch { detail },
                    "bsp_set_tagsize",
                    pid,
                    self.superstep,
                    t.location.or(t0.location).or(loc),
                );
                self.world.fail_collective(err.clone(), self.pid);
                return Err(err);
            }
        }
        self.reg.apply(ops).map_err(|e| {
            let err = Error::new(e.kind, e.call, e.pid, self.superstep, e.location);
            self.world.fail_collective(err.clone(), self.pid);
            err
        })
    }

    /// Step 4, owner side: the data of every get request addressed to us,
    /// one section per requester in request order, into our replies.
    fn serve_gets(&mut self, q: usize, loc: Loc) -> Result<(), Error> {
        let me = self.pid;
        // SAFETY: we are the owner, between barriers A and B (mailbox docs).
        let replies = unsafe { self.world.mailbox(me).replies_owner() };
        replies.data.clear();
        replies.dir.clear();
        for requester in 0..self.nprocs {
            let at = replies.data.len();
            let reqs = Records::of(&published(&self.world, requester, q).gets[me]);
            serve_gets(&self.reg, requester, reqs, |src, len| {
                // SAFETY: `own_range` resolved `src` in our own table: `len`
                // bytes of memory we registered, alive until this sync
                // settles registrations, written by nobody before barrier B.
                unsafe { replies.data.push_raw(src, len) };
                Ok(())
            })
            .map_err(|refused| match refused {
                Refused::Record(kind) => self.fail(kind, CALL, loc),
                Refused::Full(_) => unreachable!("a growable reply buffer"),
            })?;
            replies.dir.push((at, replies.data.len() - at));
        }
        Ok(())
    }

    /// Step 4, requester side: copies each reply (`replies(owner)`: the
    /// section `owner` wrote for us, in our request order) to its get's
    /// destination. `Err` if an owner's replies are short: it refused a
    /// request (and failed the run) while it served them.
    pub(crate) fn write_replies<'r>(
        &mut self,
        replies: impl Fn(usize) -> Records + 'r,
    ) -> Result<(), ()> {
        let mut cursor = std::mem::take(&mut self.cursors);
        cursor.clear();
        cursor.resize(self.nprocs, 0);
        for g in &self.gets {
            let at = cursor[g.pid];
            let Some(src) = replies(g.pid).try_ptr(at, g.len) else {
                self.cursors = cursor;
                return Err(());
            };
            // SAFETY: `dst` is writable for `len` bytes until the end of
            // this sync (the caller of `get` promised it, or the keepalive
            // of the safe API holds it); `src` is in view, and nobody
            // writes the replies before the end of this sync.
            unsafe { mem::copy(src, g.dst, g.len) };
            cursor[g.pid] = at + pad8(g.len);
        }
        self.cursors = cursor;
        Ok(())
    }

    /// Step 5 (shared memory): apply the puts and hpputs addressed to us and
    /// index our messages.
    fn receive(&mut self, q: usize, loc: Loc) -> Result<(), Error> {
        let me = self.pid;
        for pid in 0..self.nprocs {
            let out = published(&self.world, pid, q);
            apply_puts(&self.reg, pid, Records::of(&out.puts[me]))
                .map_err(|kind| self.fail(kind, CALL, loc))?;
            for h in out.hpputs[me].iter() {
                let dst = own_range(&self.reg, "hpput", pid, h.slot, h.offset, h.len)
                    .map_err(|kind| self.fail(kind, CALL, loc))?;
                // SAFETY: `dst` was resolved in our own table (memory we
                // registered, alive, written by nobody else now); the
                // sender promised `src` stays readable until the end of
                // this sync, which closes with barrier C.
                unsafe { mem::copy(h.src, dst, h.len) };
            }
            // SAFETY: the sender leaves this buffer untouched until barrier
            // A of the next sync, when our inbox is cleared.
            unsafe { self.inbox.collect(Records::of(&out.sends[me])) };
        }
        Ok(())
    }

    /// Step 6: move keepalives of pushed slots in, release popped ones.
    fn settle_registrations(&mut self, applied: Applied) {
        debug_assert_eq!(applied.pushed.len(), self.pending_keep.len());
        for (seq, keep) in applied.pushed.into_iter().zip(self.pending_keep.drain(..)) {
            if let Some(k) = keep {
                self.keep.insert(seq, k);
            }
        }
        for seq in applied.popped {
            self.keep.remove(&seq);
        }
    }
}

/// Why an owner did not serve a stream.
pub(crate) enum Refused {
    /// A record names memory we do not have.
    Record(ErrorKind),
    /// The reply channel is full (`Err(bytes needed)` of a stream writer).
    Full(usize),
}

/// Resolves a record's `(slot, offset, len)` in the owner's own table:
/// the address of the first byte, or the error that refuses the record.
/// This is the check that makes a record from another process harmless:
/// only memory this process registered, within its extent, is ever named.
#[inline]
pub(crate) fn own_range(
    reg: &Registry,
    what: &'static str,
    sender: usize,
    slot: u64,
    offset: usize,
    len: usize,
) -> Result<*mut u8, ErrorKind> {
    let invalid = |detail: String| ErrorKind::InvalidRecord {
        what,
        sender,
        detail,
    };
    let Some(entry) = reg.own(slot) else {
        return Err(invalid(format!(
            "names registration slot {slot}, which this process does not have"
        )));
    };
    if entry.addr == 0 {
        return Err(invalid(format!(
            "names registration slot {slot}, in which this process registered NULL"
        )));
    }
    match offset.checked_add(len) {
        Some(end) if end <= entry.size => {
            Ok(std::ptr::with_exposed_provenance_mut::<u8>(entry.addr).wrapping_add(offset))
        }
        _ => Err(invalid(format!(
            "names bytes {offset}..{} of registration slot {slot}, whose area on this process has {} bytes",
            offset.saturating_add(len),
            entry.size
        ))),
    }
}

/// Writes the put records `[slot][offset][len][payload, padded to 8]` that
/// `sender` addressed to us, each resolved and checked in our own table.
/// Records before a refused one are written.
pub(crate) fn apply_puts(reg: &Registry, sender: usize, puts: Records) -> Result<(), ErrorKind> {
    let mut at = 0;
    while at < puts.len() {
        let header = (
            puts.try_word(at),
            puts.try_word(at + 8),
            puts.try_word(at + 16),
        );
        let (Some(slot), Some(offset), Some(len)) = header else {
            return Err(cut_short("put", sender));
        };
        let Some(src) = puts.try_ptr(at + 24, len) else {
            return Err(cut_short("put", sender));
        };
        let dst = own_range(reg, "put", sender, slot as u64, offset, len)?;
        // SAFETY: `dst` is `len` bytes of memory we registered (resolved
        // and checked in our own table above), alive until this sync
        // settles registrations, and written by nobody else now; `src` is
        // in the view.
        unsafe { mem::copy(src, dst, len) };
        at += 24 + pad8(len);
    }
    Ok(())
}

/// The error of a record that does not fit in its stream.
fn cut_short(what: &'static str, sender: usize) -> ErrorKind {
    ErrorKind::InvalidRecord {
        what,
        sender,
        detail: "is cut short (its length runs past the end of the stream)".into(),
    }
}

/// Serves the get requests `[slot][offset][len]` of `requester`, each
/// resolved and checked in our own table: `emit(source, len)` for each, in
/// request order.
pub(crate) fn serve_gets(
    reg: &Registry,
    requester: usize,
    reqs: Records,
    mut emit: impl FnMut(*const u8, usize) -> Result<(), usize>,
) -> Result<(), Refused> {
    let mut at = 0;
    while at < reqs.len() {
        let header = (
            reqs.try_word(at),
            reqs.try_word(at + 8),
            reqs.try_word(at + 16),
        );
        let (Some(slot), Some(offset), Some(len)) = header else {
            return Err(Refused::Record(cut_short("get", requester)));
        };
        let src =
            own_range(reg, "get", requester, slot as u64, offset, len).map_err(Refused::Record)?;
        emit(src, len).map_err(Refused::Full)?;
        at += 24;
    }
    Ok(())
}
