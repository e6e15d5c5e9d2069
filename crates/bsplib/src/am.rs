//! Active messages with vector transfers and counters, after IBM's LAPI
//! (`LAPI_Amsendv`): beyond BSPlib. Reached through [`Bsp::am`], which
//! gives an [`Am`].
//!
//! An origin sends a vector of data and a small header to a target; a
//! **header handler** on the target looks at the header and says where
//! the data lands (a [`Landing`]), and may name a **completion handler**
//! that runs once it has landed. Three **counters** tell the origin when
//! its buffer may be reused (`org`), the target when the data has landed
//! and the completion handler has run (`tgt`), and the origin when that
//! happened (`cmpl`).
//!
//! Messages are typed: a handler is registered with the element type `H`
//! of its header and `D` of its data ([`Handlers::add`]), which gives a
//! [`Handler<H, D>`]; [`Am::send`] takes that handler with a `&[H]`
//! header and `D`s of data (a `&[D]`, or a [`Source<D>`] of blocks), the
//! header handler reads the header as `&[H]` ([`Arrival::header`]), the
//! data lands in an area of `D`s ([`Landing::into`]) or in a buffer of
//! `D`s ([`Done::data`]). Sending with the wrong types does not compile:
//!
//! ```compile_fail,E0308
//! # use bsplib::am::{Counters, Handlers, Landing};
//! # bsplib::run(1, |bsp| {
//! let mut hs = Handlers::new();
//! let h = hs.add::<u32, f64>("h", |_| Landing::none());
//! bsp.am().init(hs)?;
//! bsp.am().send(0, h, &[1u64], &[], Counters::none())?; // a u64 header for u32s
//! # bsp.am().term()
//! # })?;
//! # Ok::<(), bsplib::Error>(())
//! ```
//!
//! ```compile_fail,E0277
//! # use bsplib::am::{Counters, Handlers, Landing};
//! # bsplib::run(1, |bsp| {
//! let mut hs = Handlers::new();
//! let h = hs.add::<u32, f64>("h", |_| Landing::none());
//! bsp.am().init(hs)?;
//! bsp.am().send(0, h, &[1], &[1u8, 2], Counters::none())?; // u8 data for f64s
//! # bsp.am().term()
//! # })?;
//! # Ok::<(), bsplib::Error>(())
//! ```
//!
//! # The model in BSP terms
//!
//! - Handlers run on the target's own thread, inside its **progress
//!   points**: [`Am::wait_counter`], [`Am::poll`], [`Am::fence`] and
//!   [`Bsp::sync`] (the `&mut Bsp` calls). Nothing else dispatches, so a
//!   loop of puts is as fast as ever and no view of an [`Area`](crate::Area) can be
//!   alive while a handler writes one.
//! - **Every sync in active-message mode starts with a fence**: it waits
//!   until every message this process sent has been handled, handling the
//!   messages that arrive meanwhile, also while it waits in the sync's
//!   first barrier. So when a sync returns, every active message sent
//!   before any process's sync has run its handlers, landed its data and
//!   moved its counters; messages a completion handler sends while its
//!   process waits in that barrier are held and sent when the sync
//!   returns (they belong to the next superstep).
//! - Messages from one origin to one target are handled in the order they
//!   were sent. Across origins the order depends on timing: handlers that
//!   commute (a histogram, `+=` assembly) give deterministic results.
//! - An active message of `u` header bytes and `n` data bytes counts `u +
//!   n` in the h-relation of the superstep it is sent in.
//! - [`Am::init`] and [`Am::term`] are collective: syncs that switch
//!   every process into and out of active-message mode together.
//!
//! Handlers are registered by every process in the same order
//! ([`Handlers::add`]) and named in messages by their index and a hash of
//! their name, never by an address. A header handler gets an [`Arrival`]
//! and no [`Bsp`], so it makes no library call; a completion handler gets
//! a [`Done`], through which it may send active messages.
//!
//! # Examples
//!
//! A distributed histogram: every process sends each key to the process
//! that owns its bin, in the header of a message without data; the
//! handler adds it there.
//!
//! ```
//! use bsplib::am::{Counters, Handlers, Landing};
//! use bsplib::Area;
//! let r = bsplib::run(3, |bsp| {
//!     let (me, p) = (bsp.pid(), bsp.nprocs());
//!     let bins = Area::<u64>::new(bsp, 4);
//!     let mut hs = Handlers::new();
//!     let mine = bins.am_ref();
//!     // Headers of `u32` keys; no data (`u8`, never sent).
//!     let add = hs.add::<u32, u8>("add", move |a| {
//!         let keys = a.header().to_vec();
//!         let bins = mine.clone();
//!         Landing::none().then(move |d| {
//!             for k in keys {
//!                 d.area_mut(&bins)[k as usize / 3] += 1;
//!             }
//!         })
//!     });
//!     bsp.am().init(hs)?;
//!     // Keys 0..12: bin k / 3 of process k % 3.
//!     for k in 0..12u32 {
//!         if k as usize % p == me {
//!             let owner = (k % 3) as usize;
//!             bsp.am().send(owner, add, &[k], &[], Counters::none())?;
//!         }
//!     }
//!     bsp.sync()?; // every message handled
//!     let out = bins.as_slice(bsp).to_vec();
//!     bsp.am().term()?;
//!     Ok(out)
//! })?;
//! assert_eq!(r[0], [1, 1, 1, 1]);
//! # Ok::<(), bsplib::Error>(())
//! ```
//!
//! Data lands typed: `f64`s into an area of `f64`s, at the element the
//! header names.
//!
//! ```
//! use bsplib::am::{Counters, Handlers, Landing, Target};
//! use bsplib::Area;
//! let r = bsplib::run(2, |bsp| {
//!     let (me, p) = (bsp.pid(), bsp.nprocs());
//!     let x = Area::<f64>::new(bsp, 2 * p);
//!     let mine = x.am_ref();
//!     let mut hs = Handlers::new();
//!     let store = hs.add::<u64, f64>("store", move |a| {
//!         Landing::into(&mine, Target::At(a.header()[0] as usize))
//!     });
//!     bsp.am().init(hs)?;
//!     let at = 2 * me as u64;
//!     for q in 0..p {
//!         bsp.am().send(q, store, &[at], &[me as f64, 0.5], Counters::none())?;
//!     }
//!     bsp.sync()?;
//!     let out = x.as_slice(bsp).to_vec();
//!     bsp.am().term()?;
//!     Ok(out)
//! })?;
//! assert_eq!(r[1], [0.0, 0.5, 1.0, 0.5]);
//! # Ok::<(), bsplib::Error>(())
//! ```

use std::collections::VecDeque;
use std::rc::Weak;

use crate::bsp::Bsp;
use crate::engine::Interrupt;
use crate::error::ErrorKind;
use crate::process::Process;

mod counters;
mod dispatch;
mod fence;
mod handlers;
mod landing;
pub(crate) mod lapi;
mod mode;
mod send;
mod state;

pub use counters::{Counter, CounterId, Counters};
pub use handlers::{Arrival, Done, Handler, Handlers, Kind};
pub use landing::{Landing, Target};
pub use send::Source;
pub(crate) use state::{install, AmState};

use counters::{Cmpl, CounterCell};
use dispatch::Pending;
use handlers::{name_hash, HeaderFn};
use send::{InFlight, Outgoing};

/// Active messages, reached through [`Bsp::am`]: a borrow of the handle
/// whose methods enter and leave active-message mode ([`init`](Am::init),
/// [`term`](Am::term)), send ([`send`](Am::send)), make counters
/// ([`counter`](Am::counter)) and make progress
/// ([`wait_counter`](Am::wait_counter), [`poll`](Am::poll),
/// [`fence`](Am::fence)). See the [module](self) for the model.
pub struct Am<'a> {
    bsp: &'a mut Bsp,
}

impl std::fmt::Debug for Am<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Am").finish_non_exhaustive()
    }
}

impl Bsp {
    /// Active messages ([`Am`], module [`am`](crate::am)).
    ///
    /// ```
    /// use bsplib::am::{Counters, Handlers, Landing};
    /// bsplib::run(2, |bsp| {
    ///     let mut hs = Handlers::new();
    ///     let hello = hs.add::<u32, u8>("hello", |a| {
    ///         assert_eq!(a.header(), [a.src() as u32]);
    ///         Landing::none()
    ///     });
    ///     bsp.am().init(hs)?;
    ///     let (me, right) = (bsp.pid(), (bsp.pid() + 1) % bsp.nprocs());
    ///     bsp.am().send(right, hello, &[me as u32], &[], Counters::none())?;
    ///     bsp.am().term() // a sync: every message handled
    /// })?;
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    pub fn am(&mut self) -> Am<'_> {
        Am { bsp: self }
    }
}

/// The largest user header, in bytes (LAPI's `MAX_UHDR_SZ`).
pub const MAX_UHDR: usize = 4096;

/// The record kinds on the active-message path.
const KIND_AM: u64 = 1;
const KIND_ACK: u64 = 2;
/// A piece of the data of a large message: `[len | DATA << 32][src | seq
/// << 32][offset][bytes]`, following its message's record in order.
const KIND_DATA: u64 = 3;

/// The record kind the active-message path carries for the one-sided
/// epochs (`epoch/record.rs`): kept whole in [`Context::rma_in`] and
/// handed to the server the epochs install ([`AmState::serve`]).
pub(crate) const KIND_RMA: u64 = 5;

/// The bit of a message record's first word that says its data follows
/// in `DATA` records (the top flag bit; `lapi.rs` uses the low ones).
const CHUNKED: u64 = 1 << 63;

/// The bit of every record's first word that holds the parity of its
/// origin's superstep when it was posted. A process waiting in barrier A of
/// sync `k` handles only records of superstep `k`: a record of `k + 1`
/// (from a process that already left that sync) waits until the sync
/// returns, since by then other processes may be reading this process's
/// memory (gets served after barrier A).
const EPOCH: u64 = 1 << 48;

/// Records up to this size carry their data; larger messages send it in
/// `DATA` records of at most this size (each an inbox holds many of).
const EAGER: usize = 128 << 10;

/// The most data bytes of one message (LAPI's `LAPI_MAX_MSG_SZ`).
pub const MAX_DATA: usize = (1 << 31) - 1;

/// Vector kinds of a record (the origin's): how its data was laid out.
const VEC_CONTIG: u64 = 0;
const VEC_IO: u64 = 1;
const VEC_STRIDED: u64 = 2;
const VEC_GENERIC: u64 = 3;

/// Words of an active-message record's header.
const HEADER_WORDS: usize = 6;

/// The active-message state of one process, between `init` and `term`.
pub(crate) struct Context {
    pid: usize,
    nprocs: usize,
    owner: (u64, usize),
    handlers: Vec<(u32, HeaderFn)>,
    /// The handlers' names, by index (for the error of one that panics).
    names: Vec<String>,
    /// The call whose progress point dispatches now, as errors name it,
    /// and its caller's line: a handler that panics is that call's error.
    site: (&'static str, crate::process::Loc),
    /// A handler's panic, caught by the dispatch (`process/guard.rs`): the
    /// run has failed; the progress point resumes it once the context is
    /// back in its slot.
    panicked: Option<crate::process::guard::Panic>,
    /// Counters of this process by index: generation and the cell.
    counters: Vec<(u32, Weak<CounterCell>)>,
    /// Sequence numbers: the last sent to each process, the last handled
    /// from each process.
    sent: Vec<u64>,
    handled: Vec<u64>,
    /// Per destination: messages sent and not acknowledged, in order.
    in_flight: Vec<VecDeque<InFlight>>,
    /// Per destination: records its inbox had no room for, in order.
    backlog: Vec<VecDeque<Vec<u8>>>,
    /// Records sent by completion handlers while this process waits in a
    /// sync's barrier: sent when the sync returns.
    held: Vec<Outgoing>,
    /// Whether this process waits in a sync's barrier now.
    in_barrier: bool,
    /// Per origin: the last sequence number handled and not acknowledged.
    to_ack: Vec<Option<u64>>,
    /// Per origin: the large message whose data is arriving.
    open: Vec<Option<Pending>>,
    /// This process's superstep (its parity goes into every record).
    pub(crate) epoch: u64,
    /// The number of this `am_init` in the process (counters of earlier
    /// sessions are refused).
    session: u32,
    /// Records of the next superstep that arrived while this process
    /// waited in barrier A: handled first at its next dispatch.
    deferred: Vec<u8>,
    /// Received bytes, reused.
    buf: Vec<u8>,
    /// Records of the one-sided epochs (`epoch.rs`) taken from the inbox,
    /// whole and in arrival order, for the server they install
    /// ([`AmState::serve`]).
    pub(crate) rma_in: Vec<u8>,
    /// Checking mode: a message's data landed in an area since the last
    /// sync (the `NO_STORE` check cannot tell it from local stores).
    pub(crate) landed: bool,
    /// The largest record the engine carries.
    largest: usize,
    /// The C side (`lapi.h`): handler table, counter registry; `None` for
    /// the Rust API.
    c: Option<std::cell::RefCell<lapi::CSide>>,
    /// The superstep of the process, for errors raised from C handlers.
    superstep: u64,
    /// A record's buffer, back from its posting for the next
    /// [`build`](Context::build) (no allocation per message).
    spare: std::cell::Cell<Vec<u8>>,
    /// The sends of completion handlers, reused (`dispatch.rs`).
    done_sends: Vec<Outgoing>,
}

impl Context {
    /// The process this context belongs to.
    pub(crate) fn me(&self) -> usize {
        self.pid
    }

    /// Messages sent and handled so far in this session (the profiler).
    pub(crate) fn message_totals(&self) -> (u64, u64) {
        (self.sent.iter().sum(), self.handled.iter().sum())
    }

    /// A new session's context (the process counts the sessions).
    fn new(p: &mut Process, handlers: Handlers) -> Context {
        p.ext.am_mut().sessions = p.ext.am_mut().sessions.wrapping_add(1);
        let n = p.nprocs;
        let names = handlers.list.iter().map(|(name, _)| name.clone()).collect();
        Context {
            pid: p.pid,
            nprocs: n,
            owner: (p.world.id(), p.pid),
            handlers: handlers
                .list
                .into_iter()
                .map(|(name, h)| (name_hash(&name), h))
                .collect(),
            names,
            site: ("bsp_sync", None),
            panicked: None,
            counters: Vec::new(),
            sent: vec![0; n],
            handled: vec![0; n],
            in_flight: (0..n).map(|_| VecDeque::new()).collect(),
            backlog: (0..n).map(|_| VecDeque::new()).collect(),
            held: Vec::new(),
            in_barrier: false,
            to_ack: vec![None; n],
            open: (0..n).map(|_| None).collect(),
            epoch: p.superstep,
            session: p.ext.am_mut().sessions,
            deferred: Vec::new(),
            // Room for the records of a busy progress point from the
            // start (the buffer grows, once, only beyond it).
            buf: Vec::with_capacity(4 << 10),
            rma_in: Vec::new(),
            landed: false,
            largest: p.world.am_max_record(),
            c: None,
            superstep: p.superstep,
            spare: std::cell::Cell::new(Vec::new()),
            done_sends: Vec::new(),
        }
    }

    /// Whether completion handlers sent messages that wait for the end of
    /// the sync.
    pub(crate) fn holds_sends(&self) -> bool {
        !self.held.is_empty()
    }

    /// Whether records wait for room in an inbox.
    fn backlogged(&self) -> bool {
        self.backlog.iter().any(|q| !q.is_empty())
    }

    /// Whether messages to `q` are in flight or waiting for room.
    fn owes(&self, q: usize) -> bool {
        !self.in_flight[q].is_empty() || !self.backlog[q].is_empty()
    }

    /// Messages sent and not acknowledged, and records not posted yet.
    fn outstanding(&self) -> bool {
        self.in_flight.iter().any(|q| !q.is_empty()) || self.backlog.iter().any(|q| !q.is_empty())
    }
}

/// Why a dispatch stopped.
pub(crate) enum Dispatch {
    /// The run was interrupted.
    Interrupted(Interrupt),
    /// A message broke a rule on the target: the run's error.
    Target(ErrorKind),
}

/// Rounds up to a multiple of 8.
fn pad8(n: usize) -> usize {
    (n + 7) & !7
}
