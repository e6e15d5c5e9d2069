//! The per-process core: the state one BSP process keeps between calls, and
//! the checks shared by every front door (safe Rust API, raw layer, C ABI).
//!
//! The primitives are split by family: `drma.rs` (registration, put, get),
//! `bsmp.rs` (messages), `superstep.rs` (the sync protocol).

use crate::error::SourceLocation;
use std::any::Any;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

pub(crate) mod extension;
pub(crate) mod guard;
pub(crate) mod inbox;

use crate::engine::{Interrupt, World};
use crate::error::{Error, ErrorKind};
use crate::mailbox::Outgoing;
use crate::mem::{AlignedBuf, Shape, VECTOR};
use crate::registration::{Pending, Registry};
use inbox::Inbox;

/// Keeps the memory behind a registration or a pending get alive while the
/// library may still touch it (safe API only; raw callers keep their own).
pub(crate) type Keepalive = Rc<dyn Any>;

/// A source location, when the call came from Rust.
pub(crate) type Loc = Option<SourceLocation>;

/// The requester's side of a get: where the data the owner sends back
/// goes. The request itself (slot, offset, length) is a record in the
/// mailbox, addressed to the owner, which resolves and checks it; replies
/// come back in request order.
///
/// Where the requester can read the owner's memory (one address space;
/// `processes` with cross-memory attach, from 64 KiB), a superstep's gets
/// whose destinations all lie outside this process's registered memory
/// are not sent: the requester copies them itself during the sync, once,
/// from `src` (see `Process::push_get` and `superstep.rs`, step 4).
#[derive(Clone, Copy)]
pub(crate) struct GetReq {
    /// The process that owns the source.
    pub(crate) pid: usize,
    /// Local destination.
    pub(crate) dst: *mut u8,
    pub(crate) len: usize,
    /// The request: the owner's registration slot and the offset in it.
    pub(crate) slot: u64,
    pub(crate) offset: usize,
    /// The address of the source in the owner's memory, from the owner's
    /// entry in our slot table, when we may read it ourselves (one
    /// address space, or cross-memory attach); 0 otherwise.
    pub(crate) src: usize,
    /// The source's shape on the owner (from `offset`) and the
    /// destination's (from `dst`): both [`Shape::contiguous`]`(len)` for
    /// a plain get.
    pub(crate) from: Shape,
    pub(crate) to: Shape,
}

impl GetReq {
    /// Sends the request to its owner: `[slot][offset][len]`, or for a
    /// strided source `[slot | VECTOR][offset][len][block][stride]`.
    pub(crate) fn request(&self, to: &mut AlignedBuf) {
        if self.from.is_contiguous() {
            to.push_words([self.slot as usize, self.offset, self.len]);
        } else {
            to.push_words([
                (self.slot | VECTOR) as usize,
                self.offset,
                self.len,
                self.from.block,
                self.from.stride,
            ]);
        }
    }
}

/// Tag sizes of the paper's BSMP rule `(A, B, C)`: B for messages sent now
/// (`send`), C the last value given (`next`). A, the tag size of the queue
/// being read, is the B of the previous superstep; every message carries its
/// tag length, so A needs no field of its own.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct TagSizes {
    pub(crate) send: usize,
    pub(crate) next: usize,
}

thread_local! {
    /// The superstep of the current thread's process, kept by `Bsp::sync`
    /// for errors raised outside a `Bsp` method (a nested run).
    static SUPERSTEP: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Records that the current thread's process entered superstep `s`.
#[inline]
pub(crate) fn note_superstep(s: u64) {
    SUPERSTEP.with(|c| c.set(s));
}

/// The superstep the current thread's process last noted.
pub(crate) fn noted_superstep() -> u64 {
    SUPERSTEP.with(std::cell::Cell::get)
}

/// One BSP process's private state.
pub(crate) struct Process {
    pub(crate) pid: usize,
    pub(crate) nprocs: usize,
    pub(crate) superstep: u64,
    pub(crate) start: Instant,
    pub(crate) world: Arc<World>,
    /// The element size of the typed call under way (1 otherwise): the
    /// unit its bounds errors count in ([`ErrorKind::OutOfBounds`]).
    pub(crate) unit: usize,
    /// Barriers this process passed (the engine's episode count).
    pub(crate) episode: u64,
    /// Parity of the current superstep: which mailbox half we write.
    pub(crate) parity: usize,
    /// Whether each mailbox half holds anything (clearing a clean half
    /// would only write cache lines other processes read).
    pub(crate) dirty: [bool; 2],
    /// `processes`: bytes at the top of our channel `q` that hold large put
    /// payloads of the superstep of parity `q` (`Process::push_bulk`).
    pub(crate) bulk: [usize; 2],
    /// Flags (see `mailbox`) for the barrier that ends this superstep.
    pub(crate) flags: u32,
    pub(crate) reg: Registry,
    /// This superstep's registration calls, for resolving pops at the call.
    pub(crate) pending_regs: Pending,
    /// Keepalives of this superstep's pushes, one per push in call order
    /// (None for raw pushes).
    pub(crate) pending_keep: Vec<Option<Keepalive>>,
    /// Keepalives of live slots, by slot.
    pub(crate) keep: HashMap<u64, Keepalive>,
    pub(crate) gets: Vec<GetReq>,
    /// The data of this superstep's `put_owned` calls, read by their
    /// receivers during the sync: dropped after it (leaked if it fails).
    pub(crate) owned: Vec<Box<dyn Any>>,
    /// Whether this superstep's gets were sent to their owners as
    /// requests (otherwise we copy them ourselves at the sync).
    pub(crate) gets_sent: bool,
    pub(crate) get_keep: Vec<Keepalive>,
    /// The owner, during a sync: the extended records step 5 met
    /// (`mem::EXTENDED`), `(sender, byte offset in its put section)`, for
    /// step 5b.
    pub(crate) extended: Vec<(usize, usize)>,
    pub(crate) inbox: Inbox,
    pub(crate) tags: TagSizes,
    /// Set when a sync failed: see `Process::sync`.
    pub(crate) poisoned: bool,
    /// The processes that sent us something in the sync in progress
    /// (kept to reuse the allocation).
    pub(crate) sources: Vec<usize>,
    /// A cursor per owner into its get replies (kept to reuse the
    /// allocation).
    pub(crate) cursors: Vec<usize>,
    /// Exchange engines: channel `q` holds only empty streams.
    pub(crate) quiet: [bool; 2],
    /// The library call whose sync this is, when its calls on every
    /// process must agree (a collective's): its name and descriptor, which
    /// the extension taking the [`DESC`](crate::process::extension::DESC) hook
    /// checks; and the OR of the flags of the last sync's barrier A.
    pub(crate) sync_desc: Option<(&'static str, [u64; 4])>,
    /// The window locks, views and epochs this process holds, whether a
    /// guard or the C interface opened them (`holds.rs`): a sync with
    /// one is an error (the others could wait for it).
    pub(crate) holds: crate::holds::Holds,
    pub(crate) last_flags: u32,
    /// How errors name the calls (`Bsp::set_call_names`): the core's own
    /// names (C's, `bsp_put`) if `None`.
    pub(crate) call_names: Option<fn(&'static str) -> &'static str>,
    /// The name errors give to the sync in progress, when it is a C LAPI
    /// call's (`LAPI_Init`, `LAPI_Gfence`, ...).
    pub(crate) sync_name: Option<&'static str>,
    /// The extensions' slots (`extension.rs`).
    pub(crate) ext: crate::process::extension::Slots,
    /// The hook points some extension wants now (`extension.rs`): one
    /// bit test on the core's paths while none does.
    pub(crate) watch: u32,
    /// A panic of user code caught inside a wait of the sync in progress
    /// (a handler dispatched in barrier A, `guard.rs`): the sync completes
    /// its part of the protocol, fails, and then resumes it.
    pub(crate) caught: Option<guard::Panic>,
}

impl Process {
    pub(crate) fn new(pid: usize, world: Arc<World>, start: Instant) -> Self {
        let nprocs = world.nprocs();
        world.set_state(pid, 0, crate::engine::board::State::Computing);
        if world.cross_memory() {
            // The others read our memory directly (hpputs' sources, gets'
            // sources): say who we are, and let them.
            // SAFETY: `getpid` has no preconditions.
            world.board().set_os_pid(pid, unsafe { libc::getpid() });
            crate::engine::cma::allow_siblings();
        }
        Process {
            pid,
            nprocs,
            superstep: 0,
            start,
            world,
            unit: 1,
            episode: 0,
            parity: 0,
            dirty: [false; 2],
            bulk: [0; 2],
            flags: 0,
            reg: Registry::new(pid, nprocs),
            pending_regs: Pending::default(),
            pending_keep: Vec::new(),
            keep: HashMap::new(),
            gets: Vec::new(),
            owned: Vec::new(),
            gets_sent: false,
            get_keep: Vec::new(),
            extended: Vec::new(),
            inbox: Inbox::default(),
            tags: TagSizes::default(),
            poisoned: false,
            sources: Vec::new(),
            cursors: Vec::new(),
            quiet: [false; 2],
            sync_desc: None,
            holds: Default::default(),
            last_flags: 0,
            call_names: None,
            sync_name: None,
            ext: Default::default(),
            watch: 0,
            caught: None,
        }
    }

    /// The name errors give to the call the core knows as `call`.
    #[cold]
    pub(crate) fn call_name(&self, call: &'static str) -> &'static str {
        if let Some(name) = self.sync_name.filter(|_| call == "bsp_sync") {
            return name;
        }
        self.call_names.map_or(call, |name| name(call))
    }

    /// This process's outgoing half for the current superstep. Callers
    /// check `check_running` first: a poisoned process's half may still be
    /// read by others.
    #[inline(always)]
    pub(crate) fn out(&mut self) -> &mut Outgoing {
        debug_assert!(!self.poisoned, "mailbox written after a failed sync");
        self.dirty[self.parity] = true;
        // SAFETY: we are the owner, and outside a sync the half of the
        // current parity is ours alone (mailbox module docs); `&mut self`
        // prevents two views at once.
        unsafe { self.world.mailbox(self.pid).owner(self.parity) }
    }

    /// This superstep's lists for destination `pid`, to write. The first
    /// write to a destination in a superstep tells it, on shared memory,
    /// that we are one of its senders (`World::note_sender`).
    #[inline]
    pub(crate) fn dest(&mut self, pid: usize) -> &mut crate::mailbox::ToDest {
        self.dest_hot(pid)
    }

    /// [`dest`](Self::dest), always inlined (the small put's path).
    #[inline(always)]
    pub(crate) fn dest_hot(&mut self, pid: usize) -> &mut crate::mailbox::ToDest {
        let (me, parity) = (self.pid, self.parity);
        // SAFETY: `self.world` is never reassigned, and its `Arc` keeps the
        // world alive as long as `self` (a reference, not an `Arc` clone:
        // the count is one cache line every process would write).
        let world: &World = unsafe { &*Arc::as_ptr(&self.world) };
        let (to, first) = self.out().to(pid);
        if first {
            world.note_sender(pid, parity, me);
        }
        to
    }

    /// The outgoing message buffer for `pid` (test hooks of `raw.rs`).
    #[cfg_attr(not(feature = "raw"), allow(dead_code))]
    pub(crate) fn out_sends(&mut self, pid: usize) -> &mut crate::mem::AlignedBuf {
        &mut self.dest(pid).sends
    }

    /// A read-only view of the current half (exchange engines compose their
    /// streams from it at the sync).
    pub(crate) fn out_ref(&self) -> &Outgoing {
        // SAFETY: as for `out`; the shared borrow of `self` prevents a
        // mutable view meanwhile.
        unsafe { self.world.mailbox(self.pid).owner(self.parity) }
    }

    /// Builds an error of this process, records it as the error of the run
    /// (unless one is recorded already) and stops every process.
    #[cold]
    pub(crate) fn fail(&self, kind: ErrorKind, call: &'static str, loc: Loc) -> Error {
        let err = Error::new(kind, self.call_name(call), self.pid, self.superstep, loc);
        self.world.fail(err.clone());
        err
    }

    /// `Ok`, or the `EpochOpen` error of `call` for what the process's
    /// holds refused (`holds.rs`).
    pub(crate) fn held_refuses(
        &self,
        r: Result<(), crate::holds::Refused>,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        r.map_err(|crate::holds::Refused(detail)| {
            self.fail(ErrorKind::EpochOpen { detail }, call, loc)
        })
    }

    /// A sync (or a collective) must find no lock, view or epoch held
    /// (`holds.rs`): the others could be waiting for it.
    pub(crate) fn check_no_epoch(&self, call: &'static str, loc: Loc) -> Result<(), Error> {
        self.held_refuses(self.holds.check_none(), call, loc)
    }

    /// Turns a barrier interruption into the error this process reports.
    #[cold]
    pub(crate) fn interrupted(&self, why: Interrupt, call: &'static str, loc: Loc) -> Error {
        match why {
            Interrupt::Stopped => self.stopped(call, loc),
            Interrupt::Ended(ended) => self.fail(ErrorKind::ProcessEnded { ended }, call, loc),
            Interrupt::Deadline => {
                let limit = self.world.deadline().unwrap_or_default();
                let laggards = self.world.laggards(self.pid, self.superstep);
                self.fail(
                    ErrorKind::Deadline {
                        limit_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                        laggards,
                    },
                    call,
                    loc,
                )
            }
        }
    }

    /// Checks a destination/source process id.
    #[inline]
    pub(crate) fn check_pid(&self, pid: i64, call: &'static str, loc: Loc) -> Result<usize, Error> {
        if pid >= 0 && (pid as u64) < self.nprocs as u64 {
            Ok(pid as usize)
        } else {
            Err(self.fail(
                ErrorKind::PidOutOfRange {
                    pid,
                    nprocs: self.nprocs,
                },
                call,
                loc,
            ))
        }
    }

    /// Checks a notification channel.
    #[cfg_attr(not(feature = "raw"), allow(dead_code))]
    pub(crate) fn check_channel(
        &self,
        ch: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if ch < crate::engine::AM_BELL {
            Ok(())
        } else {
            Err(self.fail(
                ErrorKind::Overflow {
                    what: "notification channel",
                },
                call,
                loc,
            ))
        }
    }

    /// Checks that a size or offset is not negative.
    #[inline]
    pub(crate) fn check_nonneg(
        &self,
        value: i64,
        what: &'static str,
        call: &'static str,
        loc: Loc,
    ) -> Result<usize, Error> {
        if value >= 0 {
            usize::try_from(value).map_err(|_| self.fail(ErrorKind::Overflow { what }, call, loc))
        } else {
            Err(self.fail(ErrorKind::Negative { what, value }, call, loc))
        }
    }

    /// Checks that a pointer the call reads or writes `len > 0` bytes
    /// through is not null (the raw layer and C; the safe API has no null
    /// pointers).
    #[inline]
    pub(crate) fn check_pointer<T>(
        &self,
        p: *const T,
        len: usize,
        what: &'static str,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if p.is_null() && len > 0 {
            Err(self.fail(ErrorKind::NullPointer { what }, call, loc))
        } else {
            Ok(())
        }
    }

    /// Fails if the run was stopped or this process's last sync failed.
    /// Every call that writes the mailbox or queues work checks this first.
    #[inline]
    pub(crate) fn check_running(&self, call: &'static str, loc: Loc) -> Result<(), Error> {
        if self.poisoned || self.world.is_stopped() {
            Err(self.stopped(call, loc))
        } else {
            Ok(())
        }
    }

    /// The secondary error of a process whose run was stopped elsewhere
    /// (not recorded: the run already has its error).
    #[cold]
    pub(crate) fn stopped(&self, call: &'static str, loc: Loc) -> Error {
        Error::new(
            ErrorKind::Stopped,
            self.call_name(call),
            self.pid,
            self.superstep,
            loc,
        )
    }

    /// `bsp_time`: seconds since the start of the run, this process's clock.
    pub(crate) fn time(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// `bsp_abort`: records the user's message as the error of the run and
    /// stops every process, without a barrier.
    pub(crate) fn abort(&self, message: String, loc: Loc) -> Error {
        self.fail(ErrorKind::Aborted { message }, "bsp_abort", loc)
    }
}
