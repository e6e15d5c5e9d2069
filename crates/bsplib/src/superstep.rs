//! The sync protocol (`bsp_sync`), engine-independent part, for engines
//! that share one address space (`serial`, `threads`); engines that do not
//! use the exchange protocol of `exchange.rs`, which shares steps 3 and 6.
//!
//! With `q` the parity of the superstep that ends:
//!
//! 1. **Barrier A**, arriving with this superstep's flags; everyone leaves
//!    with their OR. Every mailbox half `q` is now readable.
//! 2. Clear our half `1 - q` if we wrote anything into it (its readers
//!    finished before barrier A).
//! 3. If anyone registered or set the tag size: check the calls match
//!    across processes and apply them to the replicated slot table.
//! 4. If anyone issued a get: read the sources (buffered gets into our get
//!    buffer, hpgets straight to their destination), then **barrier B**, so
//!    that every source is read before anything is written.
//! 5. Write the buffered gets' data, then the puts and hpputs addressed to
//!    us (gets before puts), then index the messages addressed to us.
//! 6. Tag sizes `(A, B, C) := (B, C, C)`; release popped registrations.
//! 7. If anyone issued an hpput: **barrier C**, so that senders do not
//!    reuse an hpput source before every receiver has copied it.
//!
//! Each process writes only its own memory during a sync; it reads other
//! processes' memory only in step 4 (get sources) and their mailboxes in
//! steps 3 and 5. An empty superstep costs one barrier.

use std::ptr;

use crate::engine::board::State;
use crate::engine::World;
use crate::error::{Error, ErrorKind};
use crate::mailbox::{Outgoing, TagCalls, DATA, GET, HPPUT, REG};
use crate::mem::{self, pad8, Records};
use crate::process::{Loc, Process};
use crate::registration::{Applied, RegOp};

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
            self.read_gets();
            self.world
                .barrier(&mut self.episode, 0)
                .map_err(|why| self.interrupted(why, CALL, loc))?;
        }
        self.write_gets();

        self.inbox.clear();
        if all & DATA != 0 {
            self.receive(q);
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

    /// Step 4: read every get source.
    fn read_gets(&mut self) {
        for g in &self.gets {
            if g.hp {
                // SAFETY: `g.src` lies inside an area the remote process
                // registered (bounds checked at the call) and keeps alive
                // until this sync's barrier B; no one writes it before
                // barrier B except an hpget whose user broke its contract.
                // `g.dst` was vouched for by the caller of `hpget`.
                unsafe { mem::copy(ptr::with_exposed_provenance(g.src), g.dst, g.len) };
            } else {
                // SAFETY: as above for `g.src`; the get buffer is ours.
                unsafe {
                    self.getbuf
                        .push_raw(ptr::with_exposed_provenance(g.src), g.len)
                };
            }
        }
    }

    /// Step 5a: write the buffered gets' data.
    fn write_gets(&mut self) {
        let mut at = 0;
        let base = self.getbuf.as_ptr();
        for g in &self.gets {
            if !g.hp {
                // SAFETY: bytes `at..at+len` of the get buffer hold this
                // get's data (pushed in the same order); `g.dst` is writable
                // for `len` bytes until the end of this sync (guaranteed by
                // the caller of `get`, or by the keepalive of the safe API).
                unsafe { mem::copy(base.add(at), g.dst, g.len) };
                at += pad8(g.len);
            }
        }
        self.gets.clear();
        self.getbuf.clear();
        self.get_keep.clear();
    }

    /// Step 5b: apply the puts addressed to us and index our messages.
    fn receive(&mut self, q: usize) {
        let me = self.pid;
        for pid in 0..self.nprocs {
            let out = published(&self.world, pid, q);
            // SAFETY: the sender resolved every destination through our
            // registration slots and checked it against their extent.
            unsafe { apply_puts(Records::of(&out.puts[me])) };
            for h in out.hpputs[me].iter() {
                // SAFETY: as for puts for `dst`; the sender promised `src`
                // stays readable until the end of this sync, which closes
                // with barrier C.
                unsafe { mem::copy(h.src, ptr::with_exposed_provenance_mut(h.dst), h.len) };
            }
            // SAFETY: the sender leaves this buffer untouched until barrier
            // A of the next sync, when our inbox is cleared.
            unsafe { self.inbox.collect(Records::of(&out.sends[me])) };
        }
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

/// Writes put records `[dst address][len][payload, padded to 8]`.
///
/// # Safety
///
/// Every record's destination must lie inside memory this process
/// registered, alive, and written by no one else now (the sender resolved
/// it through our registration slot and checked its extent), and the view
/// must be readable.
pub(crate) unsafe fn apply_puts(puts: Records) {
    let mut at = 0;
    while at < puts.len() {
        let dst = puts.word(at);
        let len = puts.word(at + 8);
        let src = puts.ptr(at + 16, len);
        // SAFETY: the caller's contract for `dst`; `src` is in the view.
        unsafe { mem::copy(src, ptr::with_exposed_provenance_mut(dst), len) };
        at += 16 + pad8(len);
    }
}
