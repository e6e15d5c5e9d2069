//! The sync protocol (`bsp_sync`): one implementation for every engine.
//!
//! A superstep's requests are typed records in per-destination streams:
//! puts `[slot][offset][len][payload]`, get requests `[slot][offset][len]`,
//! messages `[tag len][len][tag][payload]`, and the registration and
//! tag-size calls. Records never carry an address of the memory they name:
//! the process that owns the memory resolves the registration slot in its
//! own table and checks the range before it reads or writes
//! ([`own_range`]), whoever sent the record.
//!
//! The engine is the *transport* (`engine/mod.rs`): a barrier that ORs a
//! word of flags, and the streams. Engines sharing one address space
//! (`serial`, `threads`) read each sender's mailbox half in place, zero
//! copy (`mailbox.rs`); the others (`processes`, `mpi`) deliver the
//! streams the sender wrote into its channel (`exchange.rs`). Get replies
//! travel the same way on every engine: each owner writes one stream per
//! requester on channel `REPLIES`, delivered by barrier B (shared memory)
//! or by the engine.
//!
//! With `q` the parity of the superstep that ends:
//!
//! 1. Exchange engines write their streams into channel `q` (`exchange.rs`)
//!    and recycle their mailbox half, which is staging only there.
//! 2. **Barrier A**, arriving with this superstep's flags; everyone leaves
//!    with their OR. Every process's streams of superstep `q` are now
//!    readable (delivered by the engine if it must). Shared memory: clear
//!    our half `1 - q` if we wrote anything into it (its readers finished
//!    before barrier A). Nothing to do for anyone: done, one barrier.
//! 3. If anyone registered or set the tag size: check the calls match
//!    across processes and apply them to the replicated slot table (slots
//!    popped now stay resolvable until step 6: this superstep's records
//!    may name them).
//! 4. If anyone issued a get: serve the requests addressed to us, each
//!    resolved and checked in our table, from our own memory into our
//!    reply streams; **barrier B** (the delivery of `REPLIES`); copy the
//!    replies to our gets' destinations. Every source is read before
//!    anything is written, so gets see the values of the end of the
//!    superstep.
//! 5. Write the puts (and, shared memory, hpputs) addressed to us, each
//!    resolved and checked in our table, after the gets; index the
//!    messages addressed to us in place. Then (5b) combine the
//!    accumulates addressed to us, after every put, senders in pid order
//!    and each sender's in issue order (`rma.rs`).
//! 6. Tag sizes `(A, B, C) := (B, C, C)`; release popped registrations.
//! 7. If anyone issued an hpput that its receiver reads in the sender's
//!    memory (shared memory; on `processes` a source in the sender's area
//!    memory, or read by cross-memory attach): **barrier C**, so that
//!    senders do not reuse an hpput source before every receiver has
//!    copied it. (Exchange engines send other hpputs as puts.)
//!
//! Each process writes only its own memory during a sync. A process that
//! fails in a sync is poisoned (see [`Process::sync`]); on `mpi`, where a
//! collective cannot be interrupted, it still takes part in the delivery
//! of the get replies of that sync, with empty streams (`drain_replies`).
//! On exchange engines a process's own registration calls are taken from
//! its own mailbox half, never from a channel another process could
//! write: they make the column of the slot table every record sent to it
//! is checked against.

use std::borrow::Cow;
use std::sync::Arc;

use crate::engine::board::State;
use crate::engine::World;
use crate::error::{Error, ErrorKind};
use crate::exchange::{decode_collective, Sections};
use crate::mailbox::COLL;
use crate::mailbox::{Outgoing, TagCalls, DATA, GET, HPPUT, REG};
use crate::mem::{self, pad8, Records, Shape};
use crate::process::extension::AROUND_SYNC;
use crate::process::{Loc, Process};
use crate::registration::{Applied, RegOp};
use crate::stream::REPLIES;

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
        // The profiler (`profile.rs`) and the checking mode (`check.rs`):
        // off, this branch is all they cost.
        if self.watch & AROUND_SYNC != 0 {
            return self.sync_hooked(loc);
        }
        self.sync_unprofiled(loc)
    }

    /// `bsp_sync` itself (see [`Process::sync`]).
    pub(crate) fn sync_unprofiled(&mut self, loc: Loc) -> Result<(), Error> {
        self.world
            .set_state(self.pid, self.superstep, State::Syncing);
        let result = self
            .check_running(CALL, loc)
            .and_then(|()| self.check_no_epoch(CALL, loc))
            .and_then(|()| self.sync_steps(loc))
            .and_then(|()| match self.sync_steps_wanted() {
                Some(s) => (s.end)(self, CALL, loc),
                None => Ok(()),
            })
            .and_then(|()| self.hook_desc_check(loc));
        if result.is_err() {
            // Another process may still be copying from our `put_owned`
            // data (the sync ended early here, not at its last barrier).
            self.poison();
            if self.caught.is_some() {
                // User code panicked while this sync waited: the sync did
                // its part, the run has failed; the panic goes on.
                self.resume_caught();
            }
        } else {
            self.owned.clear();
        }
        result
    }

    /// The steps of `sync`, in order (module docs).
    fn sync_steps(&mut self, loc: Loc) -> Result<(), Error> {
        let q = self.parity;
        let exchange = self.world.distributed();

        // An extension with a progress engine of its own (active
        // messages: `am/state.rs`) takes part in barrier A: first its
        // fence, and the flags it adds (others pay one bit test).
        let steps = self.sync_steps_wanted();
        let mut flags = self.flags;
        if let Some(s) = steps {
            flags |= (s.before_barrier)(self, CALL, loc)?;
        }

        // Step 1.
        if exchange {
            self.publish(q, loc)?;
        }

        // Step 2. (No `Arc` clone before we know there is work: its count
        // is one cache line every process would write at every sync.)
        if self.sync_desc.is_some() {
            flags |= COLL;
        }
        // On `mpi`, barrier A also checks that every process ends the
        // superstep with the same collective (or a plain sync): the
        // extension taking the `DESC` hook point gives the value.
        // Its reduction also carries the streams just published, and tells
        // each process how many it receives (`engine/mpi/nbx.rs`).
        if let Some(m) = self.world.rendezvous() {
            m.set_check(self.hook_desc_hash());
            m.stage_streams(q, self.flags != 0);
        }
        let all = match steps {
            Some(s) => {
                let all = (s.barrier)(self, flags, CALL, loc)?;
                if self.caught.is_some() {
                    return Err(self.leave_after_panic(all, q, loc));
                }
                all
            }
            None => self
                .world
                .barrier(&mut self.episode, flags)
                .map_err(|why| self.interrupted(why, CALL, loc))?,
        };
        self.last_flags = all;
        if self.world.rendezvous().is_some_and(|m| m.check_failed()) {
            return Err(self.hook_desc_mismatch(loc));
        }
        if let Some(s) = self.sync_steps_after(all) {
            (s.after_barrier)(self, all, CALL, loc)?;
        }
        if !exchange && self.dirty[q ^ 1] {
            // SAFETY: after barrier A nobody reads half `1 - q` any more (it
            // was read from barrier A of the previous sync until now), and
            // we are its owner.
            unsafe { self.world.mailbox(self.pid).owner(q ^ 1) }.clear();
            self.dirty[q ^ 1] = false;
        }
        self.inbox.clear();
        if all & (REG | GET | DATA) == 0 {
            if exchange {
                self.recycle_staging(q);
            }
            self.finish_collectives(None);
            self.next_superstep();
            return Ok(());
        }
        // SAFETY: `self.world` is never reassigned, and the `Arc` it holds
        // keeps the world alive for as long as `self`, which outlives this
        // call. (A reference instead of an `Arc` clone: the count is one
        // cache line every process would write at every sync.)
        let world: &World = unsafe { &*Arc::as_ptr(&self.world) };
        world
            .deliver(&mut self.episode, q)
            .map_err(|why| self.interrupted(why, CALL, loc))?;
        let incoming = Incoming {
            world,
            q,
            me: self.pid,
        };
        if let Err(err) = self.check_streams(world, q, all, loc) {
            self.drain_replies(world, all);
            return Err(err);
        }
        self.superstep_steps(world, incoming, all, loc)?;
        if exchange {
            self.recycle_staging(q);
        }

        // Step 7.
        if all & HPPUT != 0 {
            world
                .barrier(&mut self.episode, 0)
                .map_err(|why| self.interrupted(why, CALL, loc))?;
        }
        self.next_superstep();
        Ok(())
    }

    /// Exchange engines: the mailbox half `q` was only the staging of this
    /// superstep's streams, and of our own registration calls until step 3
    /// applied them: reusable now.
    fn recycle_staging(&mut self, q: usize) {
        if self.dirty[q] {
            // SAFETY: we own the mailbox, and in an exchange engine nobody
            // else reads it.
            unsafe { self.world.mailbox(self.pid).owner(q) }.clear();
            self.dirty[q] = false;
        }
    }

    /// User code panicked while this process waited in barrier A (a
    /// handler; the run has failed, `process/guard.rs`), and the barrier
    /// completed: on `mpi`, where the others may go on to deliver the
    /// superstep's streams in MPI collectives, the process joins that
    /// delivery with the streams it published, and the replies' with
    /// empty streams, as a sync that fails after barrier A does. Its
    /// error, to return.
    #[cold]
    fn leave_after_panic(&mut self, all: u32, q: usize, loc: Loc) -> Error {
        let world = Arc::clone(&self.world);
        if world.failures_gathered() && all & (REG | GET | DATA) != 0 {
            let _ = world.deliver(&mut self.episode, q);
            self.drain_replies(&world, all);
        }
        self.stopped(CALL, loc)
    }

    /// A sync that fails before serving gets still takes part in the
    /// delivery of the replies, with empty streams: on `mpi` the others are
    /// in it (elsewhere the delivery is a barrier the failure interrupts).
    fn drain_replies(&mut self, world: &World, all: u32) {
        if all & GET == 0 {
            return;
        }
        // SAFETY: only we write our reply channel; its readers of the
        // previous sync finished before barrier A.
        let mut w = unsafe { world.writer(self.pid, REPLIES) };
        for requester in 0..self.nprocs {
            w.begin(requester);
            w.end();
        }
        drop(w);
        let _ = world.deliver(&mut self.episode, REPLIES);
    }

    /// Exchange engines: checks that every stream addressed to us splits
    /// into its sections (a corrupted header is refused here, once).
    fn check_streams(&self, world: &World, q: usize, all: u32, loc: Loc) -> Result<(), Error> {
        if !world.distributed() {
            return Ok(());
        }
        // Without registration calls only the senders' streams are read
        // (where the engine lists them: `processes`); with them, every
        // process's.
        let listed = all & REG == 0 && world.tracks_senders();
        let every = 0..if listed { 0 } else { self.nprocs };
        let senders = listed.then(|| world.senders(self.pid, q));
        for src in every.chain(senders.into_iter().flatten()) {
            // SAFETY: every process wrote its channel `q` before barrier A
            // and rewrites it only two syncs from now (`exchange.rs`).
            let s = unsafe { world.stream(src, q, self.pid) };
            if s.and_then(Sections::of).is_none() {
                return Err(self.fail(
                    ErrorKind::InvalidRecord {
                        what: "stream",
                        sender: src,
                        detail: "does not fit its channel, or its header does not fit it".into(),
                    },
                    CALL,
                    loc,
                ));
            }
        }
        Ok(())
    }

    /// Steps 3 to 6 on what every process sent us.
    fn superstep_steps(
        &mut self,
        world: &World,
        incoming: Incoming<'_>,
        all: u32,
        loc: Loc,
    ) -> Result<(), Error> {
        // Step 3.
        let applied = if all & REG != 0 {
            match self.apply_collectives(incoming, loc) {
                Ok(applied) => Some(applied),
                Err(err) => {
                    self.drain_replies(world, all);
                    return Err(err);
                }
            }
        } else {
            None
        };

        // Who sent us anything: with senders lists (shared memory, many
        // processes) the processes that noted themselves, in pid order (the
        // order puts are applied and messages queued in, as on every
        // engine); otherwise every process. Reused across syncs: no
        // allocation.
        let mut sources = std::mem::take(&mut self.sources);
        sources.clear();
        if all & (GET | DATA) != 0 {
            if !world.tracks_senders() {
                sources.extend(0..self.nprocs);
            } else {
                sources.extend(world.senders(self.pid, incoming.q));
                sources.sort_unstable();
                world.reset_senders(self.pid, incoming.q);
            }
        }
        let result = self.transfer_steps(world, incoming, &sources, all, loc);
        self.sources = sources;
        result?;

        // Step 6.
        self.finish_collectives(applied);
        Ok(())
    }

    /// Steps 4 and 5, on what `sources` sent us.
    fn transfer_steps(
        &mut self,
        world: &World,
        incoming: Incoming<'_>,
        sources: &[usize],
        all: u32,
        loc: Loc,
    ) -> Result<(), Error> {
        // Step 4.
        if all & GET != 0 {
            let me = self.pid;
            if !self.gets_sent {
                // Our gets were not sent (shared memory, destinations
                // outside our registered memory: `Process::push_get`): we
                // copy them now, in call order, after every process has
                // finished the superstep (barrier A) and before anyone
                // writes registered memory (after barrier B).
                for g in &self.gets {
                    // The source: `g.len` bytes the owner registered
                    // (checked against its entry when the get was issued),
                    // alive until the sync settles registrations, and
                    // written by nobody before barrier B (owners write only
                    // unregistered memory before it: their own direct
                    // gets' destinations). `g.dst` is writable until the
                    // end of this sync (the caller of `get` promised it, or
                    // the keepalive holds it), outside our registered
                    // memory, so nobody reads it.
                    if world.distributed() {
                        // SAFETY: as above (a contiguous get, in the owner's
                        // area memory or read by cross-memory attach, where
                        // the kernel checks the owner's side).
                        unsafe { world.read_elsewhere(g.pid, g.src, g.dst, g.len) }.map_err(|e| {
                            self.fail(
                                ErrorKind::InvalidRecord {
                                    what: "get",
                                    sender: g.pid,
                                    detail: format!(
                                        "its registered memory at {:#x} ({} bytes) cannot be read: {e}",
                                        g.src, g.len
                                    ),
                                },
                                CALL,
                                loc,
                            )
                        })?;
                    } else {
                        let src = std::ptr::with_exposed_provenance::<u8>(g.src);
                        // SAFETY: as above, in this address space, for
                        // every block of the two shapes (checked against
                        // the owner's entry and promised by the caller).
                        unsafe { mem::copy_shaped(src, g.from, g.dst, g.to) };
                    }
                }
            }
            // SAFETY: only we write our reply channel; its readers of the
            // previous sync finished before barrier A.
            let mut w = unsafe { world.writer(me, REPLIES) };
            // A refused request fails the run here, but the delivery still
            // takes place (empty streams from there on): on `mpi` the
            // others are in it, and leave it to find their replies short.
            let mut refusal = None;
            for &requester in sources {
                w.begin(requester);
                if refusal.is_none() {
                    let Some(from) = incoming.get(requester) else {
                        refusal = Some(self.fail(changed(requester), CALL, loc));
                        w.end();
                        continue;
                    };
                    let served = serve_gets(&self.reg, requester, from.gets, |src, shape| {
                        // SAFETY: `serve_gets` resolved `src` in our own
                        // table: the blocks of `shape` are memory we
                        // registered, alive until this sync settles
                        // registrations, and nobody writes it before
                        // barrier B.
                        unsafe { w.gather(src, shape) }
                    });
                    refusal = served.err().map(|refused| match refused {
                        Refused::Record(kind) => self.fail(kind, CALL, loc),
                        Refused::Full(needed) => self.capacity_error(needed, loc),
                    });
                }
                w.end();
            }
            drop(w);
            let delivered = world.deliver(&mut self.episode, REPLIES);
            if let Some(err) = refusal {
                return Err(err);
            }
            delivered.map_err(|why| self.interrupted(why, CALL, loc))?;
            let sent = self.gets_sent;
            // SAFETY: the owners wrote their replies before barrier B and
            // rewrite them only after barrier A of a later sync.
            self.write_replies(|owner| unsafe { world.stream(owner, REPLIES, me) }, sent)
                .map_err(|owner| {
                    if world.is_stopped() || world.failures_gathered() {
                        // The owner refused a request and failed the run
                        // (on `mpi` it records the error itself, and the
                        // run's error is gathered at its end).
                        self.stopped(CALL, loc)
                    } else {
                        self.fail(
                            ErrorKind::InvalidRecord {
                                what: "get reply",
                                sender: owner,
                                detail: "is shorter than the requests, or does not fit its channel"
                                    .into(),
                            },
                            CALL,
                            loc,
                        )
                    }
                })?;
        }
        self.gets.clear();
        self.gets_sent = false;
        self.get_keep.clear();

        // Step 5.
        if all & DATA != 0 {
            // Large payloads by rendezvous (`mpi`): our sends are posted
            // now; an early return abandons the transfers (`Transfers`).
            let large = Transfers::begin(world, all);
            for &src in sources {
                let from = incoming
                    .get(src)
                    .ok_or_else(|| self.fail(changed(src), CALL, loc))?;
                // `processes`: the sender's channel, where its large put
                // payloads are (read only through bounds-checked views).
                let bulk = world.channel_region(src, incoming.q).map(|(base, len)| {
                    // SAFETY: the channel is `len` bytes of the shared
                    // mapping, alive as long as the world, which the view
                    // borrows; the sender does not write it during this
                    // sync (it rewrites channel `q` two supersteps on).
                    unsafe { Records::new(base, len) }
                });
                apply_puts(
                    &self.reg,
                    src,
                    from.puts,
                    Elsewhere {
                        bulk,
                        remote: Some(world),
                        rendezvous: large.rendezvous,
                    },
                    &mut self.extended,
                )
                .map_err(|kind| self.refused(kind, loc))?;
                for h in from.hpputs {
                    let dst = own_range(&self.reg, "hpput", src, h.slot, h.offset, h.len)
                        .map_err(|kind| self.fail(kind, CALL, loc))?;
                    // SAFETY: `dst` was resolved in our own table (memory we
                    // registered, alive, written by nobody else now); the
                    // sender promised `src` stays readable until the end of
                    // this sync, which closes with barrier C.
                    unsafe { mem::copy(h.src, dst, h.len) };
                }
                // SAFETY: the sender leaves its stream untouched until
                // barrier A of the next sync (shared memory: its mailbox
                // half; exchange: its channel is rewritten two syncs from
                // now), and our inbox is cleared at that barrier.
                unsafe { self.inbox.collect(from.sends, self.tags.send, src) }.map_err(|()| {
                    self.fail(
                        ErrorKind::InvalidRecord {
                            what: "message",
                            sender: src,
                            detail: format!(
                                "is cut short, or its tag is not the {} bytes of the superstep's tag size",
                                self.tags.send
                            ),
                        },
                        CALL,
                        loc,
                    )
                })?;
            }
            large.settle().map_err(|_| self.stopped(CALL, loc))?;

            // Step 5b: extended records (the accumulate's: `rma/`,
            // `ONE_SIDED.md`), after every put, senders in pid order and
            // each sender's in issue order, to the extension that takes
            // them (`extension.rs`).
            if !self.extended.is_empty() {
                let records = std::mem::take(&mut self.extended);
                let result = self.hook_records(&records, &mut |src| {
                    let from = incoming.get(src)?;
                    // `processes`: the sender's channel, where its
                    // large accumulate payloads are (as for puts).
                    let bulk = world.channel_region(src, incoming.q).map(|(base, len)| {
                        // SAFETY: as for the puts' channel view above.
                        unsafe { Records::new(base, len) }
                    });
                    Some((from.puts, bulk))
                });
                // The allocation is kept for the next sync.
                self.extended = records;
                self.extended.clear();
                result.map_err(|kind| self.fail(kind, CALL, loc))?;
            }
        }

        Ok(())
    }

    /// The error of a put record refused in step 5 (or of a rendezvous
    /// stopped by a failure elsewhere, which is not this process's error).
    fn refused(&self, kind: ErrorKind, loc: Loc) -> Error {
        match kind {
            ErrorKind::Stopped => self.stopped(CALL, loc),
            kind => self.fail(kind, CALL, loc),
        }
    }

    /// The error of a reply channel too small for this sync's traffic.
    fn capacity_error(&self, needed: usize, loc: Loc) -> Error {
        self.fail(
            ErrorKind::Capacity {
                needed,
                capacity: self.world.capacity(),
            },
            CALL,
            loc,
        )
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
        self.pending_regs.clear();
        self.superstep += 1;
        self.parity ^= 1;
        self.bulk[self.parity] = 0;
        self.flags = 0;
        self.hook_next_superstep();
        self.world
            .set_state(self.pid, self.superstep, State::Computing);
    }

    /// Step 3: every process's registration and tag-size calls, checked
    /// and applied.
    fn apply_collectives(&mut self, incoming: Incoming<'_>, loc: Loc) -> Result<Applied, Error> {
        let mut tags = Vec::with_capacity(self.nprocs);
        let mut decoded = Vec::with_capacity(self.nprocs);
        for src in 0..self.nprocs {
            let from = incoming
                .get(src)
                .ok_or_else(|| self.fail(changed(src), CALL, loc))?;
            let (t, ops) = match from.collective {
                Collective::Calls(t, ops) => (t, Cow::Borrowed(ops)),
                Collective::Encoded(bytes) => {
                    let (t, ops) = decode_collective(bytes.bytes()).ok_or_else(|| {
                        self.fail(
                            ErrorKind::InvalidRecord {
                                what: "registration",
                                sender: src,
                                detail: "does not decode".into(),
                            },
                            CALL,
                            loc,
                        )
                    })?;
                    (t, Cow::Owned(ops))
                }
            };
            tags.push(t);
            decoded.push(ops);
        }
        let ops: Vec<&[RegOp]> = decoded.iter().map(|o| &o[..]).collect();
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
                    self.call_name("bsp_set_tagsize"),
                    pid,
                    self.superstep,
                    t.location.or(t0.location).or(loc),
                );
                self.world.fail_collective(err.clone(), self.pid);
                return Err(err);
            }
        }
        self.reg.apply(ops).map_err(|e| {
            let err = Error::new(
                e.kind,
                self.call_name(e.call),
                e.pid,
                self.superstep,
                e.location,
            );
            self.world.fail_collective(err.clone(), self.pid);
            err
        })
    }

    /// Step 4, requester side: copies each reply (`replies(owner)`: the
    /// section `owner` wrote for us, in our request order) to its get's
    /// destination. `Err(owner)` if an owner's replies are short: it
    /// refused a request (and failed the run) while it served them, or its
    /// channel is corrupted.
    pub(crate) fn write_replies<'r>(
        &mut self,
        replies: impl Fn(usize) -> Option<Records<'r>>,
        sent: bool,
    ) -> Result<(), usize> {
        if !sent {
            // Copied by ourselves before barrier B.
            return Ok(());
        }
        let mut cursor = std::mem::take(&mut self.cursors);
        cursor.clear();
        cursor.resize(self.nprocs, 0);
        for g in &self.gets {
            let at = cursor[g.pid];
            let Some(src) = replies(g.pid).and_then(|r| r.try_ptr(at, g.len)) else {
                let owner = g.pid;
                self.cursors = cursor;
                return Err(owner);
            };
            // SAFETY: the blocks of `g.to` from `dst` are writable until
            // the end of this sync (the caller of `get` promised it, or
            // the keepalive of the safe API holds it); `src` is in view
            // (`g.len` packed bytes), and nobody writes the replies before
            // the end of this sync.
            unsafe { mem::copy_shaped(src, Shape::contiguous(g.len), g.dst, g.to) };
            cursor[g.pid] = at + pad8(g.len);
        }
        self.cursors = cursor;
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

mod incoming;
mod owner;

use incoming::{Collective, Incoming, Transfers};
use owner::changed;
pub(crate) use owner::{apply_puts, own_range, serve_gets, Elsewhere, Refused};
