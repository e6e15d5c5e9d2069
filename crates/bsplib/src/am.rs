//! Active messages with vector transfers and counters, after IBM's LAPI
//! (`LAPI_Amsendv`): beyond BSPlib.
//!
//! An origin sends a vector of data and a small user header to a target;
//! a **header handler** on the target looks at the header and says where
//! the data lands (a [`Landing`]), and may name a **completion handler**
//! that runs once it has landed. Three **counters** tell the origin when
//! its buffer may be reused (`org`), the target when the data has landed
//! and the completion handler has run (`tgt`), and the origin when that
//! happened (`cmpl`).
//!
//! # The model in BSP terms
//!
//! - Handlers run on the target's own thread, inside its **progress
//!   points**: [`Bsp::wait`], [`Bsp::probe`], [`Bsp::fence`] and
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
//! - [`Bsp::am_init`] and [`Bsp::am_term`] are collective: syncs that
//!   switch every process into and out of active-message mode together.
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
//! that owns its bin; the handler adds it there.
//!
//! ```
//! use bsplib::am::{Counters, Handlers, Landing, Source};
//! use bsplib::Area;
//! let r = bsplib::run(3, |bsp| {
//!     let (me, p) = (bsp.pid(), bsp.nprocs());
//!     let bins = Area::<u64>::new(bsp, 4);
//!     let mut hs = Handlers::new();
//!     let mine = bins.am_ref();
//!     let add = hs.add("add", move |a| {
//!         let keys: Vec<u32> = a.uhdr_as_vec();
//!         let bins = mine.clone();
//!         Landing::none().then(move |d| {
//!             for k in keys {
//!                 d.area_mut(&bins)[k as usize / 3] += 1;
//!             }
//!         })
//!     });
//!     bsp.am_init(hs)?;
//!     // Keys 0..12: bin k / 3 of process k % 3.
//!     for k in 0..12u32 {
//!         if k as usize % p == me {
//!             let owner = (k % 3) as usize;
//!             bsp.am_send(owner, add, &[k], Source::<u8>::Contiguous(&[]), Counters::none())?;
//!         }
//!     }
//!     bsp.sync()?; // every message handled
//!     let out = bins.as_slice(bsp).to_vec();
//!     bsp.am_term()?;
//!     Ok(out)
//! })?;
//! assert_eq!(r[0], [1, 1, 1, 1]);
//! # Ok::<(), bsplib::Error>(())
//! ```

use std::cell::Cell;
use std::collections::VecDeque;
use std::ops::Range;
use std::rc::{Rc, Weak};

use bytemuck::Pod;

use crate::area::AreaRef;
use crate::bsp::{pid_arg, Bsp};
use crate::engine::{Interrupt, World};
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::{Loc, Process};
use crate::strided::Strided;

pub(crate) mod lapi;

/// The largest user header, in bytes (LAPI's `MAX_UHDR_SZ`).
pub const MAX_UHDR: usize = 4096;

/// The record kinds on the active-message path.
const KIND_AM: u64 = 1;
const KIND_ACK: u64 = 2;
/// A piece of the data of a large message: `[len | DATA << 32][src | seq
/// << 32][offset][bytes]`, following its message's record in order.
const KIND_DATA: u64 = 3;

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

// ----- handlers ----------------------------------------------------------------

type HeaderFn = Box<dyn FnMut(&Arrival<'_>) -> Landing>;
type CompletionFn = Box<dyn FnOnce(&mut Done<'_>)>;

/// The handlers of a run, registered by every process in the same order
/// (see [`Bsp::am_init`]).
#[derive(Default)]
pub struct Handlers {
    list: Vec<(String, HeaderFn)>,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.list.iter().map(|(n, _)| n))
            .finish()
    }
}

/// A handler, as messages name it: its index in the [`Handlers`] and a
/// hash of its name, which the target checks against its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handler {
    index: u32,
    hash: u32,
}

impl Handlers {
    /// No handlers yet.
    pub fn new() -> Handlers {
        Handlers::default()
    }

    /// Adds the header handler `header` under `name`; every process adds
    /// the same names in the same order. The handler gets the message's
    /// [`Arrival`] and says where its data lands.
    pub fn add(
        &mut self,
        name: &str,
        header: impl FnMut(&Arrival<'_>) -> Landing + 'static,
    ) -> Handler {
        let index = self.list.len() as u32;
        self.list.push((name.to_owned(), Box::new(header)));
        Handler {
            index,
            hash: name_hash(name),
        }
    }
}

/// FNV-1a of a handler's name, folded to 32 bits.
fn name_hash(name: &str) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h ^ (h >> 32)) as u32
}

// ----- what the target sees ----------------------------------------------------

/// How the origin laid out a message's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One contiguous block ([`Source::Contiguous`], LAPI's `LAPI_Amsend`).
    Contiguous,
    /// Blocks of any lengths, landing block for block
    /// ([`Source::Io`], `LAPI_GEN_IOVECTOR`).
    Io,
    /// Equal blocks at a stride ([`Source::Strided`],
    /// `LAPI_GEN_STRIDED_XFER`).
    Strided,
    /// Blocks of any lengths, the bytes flowing in order into target blocks
    /// of any lengths ([`Source::Generic`], `LAPI_GEN_GENERIC`).
    Generic,
}

/// A message as its header handler sees it.
pub struct Arrival<'a> {
    owner: (u64, usize),
    src: usize,
    uhdr: &'a [u8],
    lens: &'a [usize],
    total: usize,
    kind: Kind,
}

impl Arrival<'_> {
    /// The origin.
    pub fn src(&self) -> usize {
        self.src
    }

    /// The user header's bytes.
    pub fn uhdr(&self) -> &[u8] {
        self.uhdr
    }

    /// The user header read as one `T` (`None` if it is shorter).
    pub fn uhdr_as<T: Pod>(&self) -> Option<T> {
        let n = std::mem::size_of::<T>();
        (self.uhdr.len() >= n).then(|| bytemuck::pod_read_unaligned(&self.uhdr[..n]))
    }

    /// The user header read as `T`s (trailing bytes that do not make a
    /// whole `T` are ignored).
    pub fn uhdr_as_vec<T: Pod>(&self) -> Vec<T> {
        let n = std::mem::size_of::<T>().max(1);
        self.uhdr
            .chunks_exact(n)
            .map(bytemuck::pod_read_unaligned)
            .collect()
    }

    /// The byte length of each of the origin's blocks.
    pub fn lens(&self) -> &[usize] {
        self.lens
    }

    /// The data's bytes in all.
    pub fn total(&self) -> usize {
        self.total
    }

    /// How the origin laid out the data.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The elements of `area`, an area of this process, to read (to decide
    /// where the data goes).
    ///
    /// # Panics
    ///
    /// If `area` belongs to another process or run.
    pub fn area<'b, T: Pod>(&'b self, area: &'b AreaRef<T>) -> &'b [T] {
        assert_eq!(
            area.owner(),
            self.owner,
            "a header handler may only read areas of its own process"
        );
        // SAFETY: this process's area (checked), alive (`area` holds it);
        // handlers run only inside `&mut Bsp` calls, where no view exists,
        // and a header handler has no way to write it meanwhile.
        unsafe { std::slice::from_raw_parts(area.ptr().cast::<T>(), area.len()) }
    }
}

/// Where a message's data lands on the target, and what runs once it has:
/// returned by the header handler.
pub struct Landing {
    to: To,
    then: Option<CompletionFn>,
}

enum To {
    /// Nowhere: the message must carry no data.
    None,
    /// A library buffer handed to the completion handler.
    Buffer,
    /// Blocks of an area of this process: its owner, base, length in
    /// bytes, the element size, the target vector, and its storage kept
    /// alive until the data has landed.
    Area {
        owner: (u64, usize),
        base: *mut u8,
        bytes: usize,
        size: usize,
        target: Target,
        _keep: std::rc::Rc<dyn std::any::Any>,
    },
}

/// The blocks of an area a message's data lands in, in elements of the
/// area's type. The kind must be the origin's ([`Arrival::kind`]), with
/// LAPI's rules: [`At`](Target::At) for contiguous data; for
/// [`Io`](Target::Io), as many blocks as the origin, of the same byte
/// lengths; for [`Strided`](Target::Strided), as many blocks as the
/// origin, of the same byte length, disjoint; for
/// [`Generic`](Target::Generic), any blocks, the bytes flowing in order
/// (bytes beyond the target's total are not copied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Contiguous, from this element.
    At(usize),
    /// These element ranges, block for block.
    Io(Vec<Range<usize>>),
    /// This strided selection.
    Strided(Strided),
    /// These element ranges, filled in order.
    Generic(Vec<Range<usize>>),
}

impl Landing {
    /// No data lands (a message with data and this landing is an error on
    /// the target).
    pub fn none() -> Landing {
        Landing {
            to: To::None,
            then: None,
        }
    }

    /// The data lands in a buffer of the library's, which the completion
    /// handler gets ([`Done::data`]).
    pub fn buffer() -> Landing {
        Landing {
            to: To::Buffer,
            then: None,
        }
    }

    /// The data lands in `target` of `area`, an area of this process
    /// (registered or not: the target's own handler names it).
    pub fn into<T: Pod>(area: &AreaRef<T>, target: Target) -> Landing {
        Landing {
            to: To::Area {
                owner: area.owner(),
                base: area.ptr(),
                bytes: area.size_bytes(),
                size: std::mem::size_of::<T>(),
                target,
                _keep: area.keepalive(),
            },
            then: None,
        }
    }

    /// Runs `completion` on the target once the data has landed (before
    /// the target counter moves).
    pub fn then(mut self, completion: impl FnOnce(&mut Done<'_>) + 'static) -> Landing {
        self.then = Some(Box::new(completion));
        self
    }
}

/// What a completion handler gets: the message's origin, its data if it
/// landed in a buffer, this process's areas, and the right to send.
pub struct Done<'a> {
    src: usize,
    data: Vec<u8>,
    owner: (u64, usize),
    sends: &'a mut Vec<Outgoing>,
    ctx: &'a Context,
    error: Option<ErrorKind>,
}

impl Done<'_> {
    /// The origin.
    pub fn src(&self) -> usize {
        self.src
    }

    /// The data, if it landed in a buffer ([`Landing::buffer`]); empty
    /// otherwise.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The data read as `T`s (a copy: the buffer need not be aligned).
    pub fn data_as<T: Pod>(&self) -> Vec<T> {
        let n = std::mem::size_of::<T>().max(1);
        self.data
            .chunks_exact(n)
            .map(bytemuck::pod_read_unaligned)
            .collect()
    }

    /// Takes the data buffer.
    pub fn take_data(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.data)
    }

    /// The elements of `area`, an area of this process, to read and write.
    ///
    /// # Panics
    ///
    /// If `area` belongs to another process or run (a handler is code of
    /// this process: that is a bug in it).
    ///
    /// The slice borrows `area` as well as the `Done`: the area cannot be
    /// dropped while the slice is alive.
    ///
    /// ```compile_fail
    /// # use bsplib::am::{Done, Landing};
    /// fn f(d: &mut Done<'_>, r: bsplib::AreaRef<u64>) {
    ///     let s = d.area_mut(&r);
    ///     drop(r); // error: `r` is borrowed by `s`
    ///     s[0] = 1;
    /// }
    /// ```
    pub fn area_mut<'s, T: Pod>(&'s mut self, area: &'s AreaRef<T>) -> &'s mut [T] {
        assert_eq!(
            area.owner(),
            self.owner,
            "a completion handler may only touch areas of its own process"
        );
        // SAFETY: the area is this process's (checked), its storage alive
        // while the returned slice is (it borrows `area`, whose `Rc` holds
        // the storage); handlers run only inside `&mut Bsp` calls,
        // so no other view of it exists, and the returned borrow ends
        // before this `Done` (borrowed mutably) can hand out another.
        unsafe { std::slice::from_raw_parts_mut(area.ptr().cast::<T>(), area.len()) }
    }

    /// Sends an active message, as [`Bsp::am_send`] does; it leaves when
    /// this handler returns (or, while this process waits in a sync, when
    /// that sync returns).
    ///
    /// # Errors
    ///
    /// As for [`Bsp::am_send`]; the error also stops the run when the
    /// handler returns.
    pub fn send<T: Pod>(
        &mut self,
        pid: usize,
        handler: Handler,
        uhdr: &[impl Pod],
        src: Source<'_, T>,
        counters: Counters<'_>,
    ) -> Result<(), ErrorKind> {
        match self
            .ctx
            .build(pid, handler, bytemuck::cast_slice(uhdr), &src, &counters)
        {
            Ok(out) => {
                self.sends.push(out);
                Ok(())
            }
            Err(e) => {
                self.error.get_or_insert(e.clone());
                Err(e)
            }
        }
    }
}

// ----- what the origin sends -----------------------------------------------------

/// A message's data on the origin, copied at the send (so the origin
/// counter moves before [`Bsp::am_send`] returns).
#[derive(Clone, Copy, Debug)]
pub enum Source<'a, T> {
    /// One block.
    Contiguous(&'a [T]),
    /// Element ranges of a slice, each a block (`LAPI_GEN_IOVECTOR`).
    Io(&'a [T], &'a [Range<usize>]),
    /// A strided selection of a slice (`LAPI_GEN_STRIDED_XFER`).
    Strided(&'a [T], Strided),
    /// Element ranges of a slice, the bytes flowing in order into the
    /// target's blocks (`LAPI_GEN_GENERIC`).
    Generic(&'a [T], &'a [Range<usize>]),
}

/// The counters of a send: `tgt` on the target (an id it gave us), `org`
/// and `cmpl` on this process.
#[derive(Clone, Copy, Default)]
pub struct Counters<'a> {
    tgt: Option<CounterId>,
    org: Option<&'a Counter>,
    cmpl: Option<&'a Counter>,
}

impl<'a> Counters<'a> {
    /// No counter.
    pub fn none() -> Counters<'a> {
        Counters::default()
    }

    /// The target's counter `id`, which moves once the data has landed and
    /// the completion handler has run.
    pub fn tgt(mut self, id: CounterId) -> Self {
        self.tgt = Some(id);
        self
    }

    /// This process's counter that moves once the data was copied out of
    /// the source (before `am_send` returns: the data is copied at once).
    pub fn org(mut self, c: &'a Counter) -> Self {
        self.org = Some(c);
        self
    }

    /// This process's counter that moves once the target has handled the
    /// message (its completion handler ran).
    pub fn cmpl(mut self, c: &'a Counter) -> Self {
        self.cmpl = Some(c);
        self
    }
}

// ----- counters ----------------------------------------------------------------------

/// A counter of this process ([`Bsp::counter`]): it moves when the
/// messages it was given to complete. Local: neither `Send` nor `Sync`.
/// Dropping it makes its id stale: a message naming it fails on arrival.
pub struct Counter {
    cell: Rc<CounterCell>,
    id: CounterId,
    owner: (u64, usize),
    /// The `am_init` session of the process it belongs to (its ids are
    /// meaningless in another).
    session: u32,
}

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counter")
            .field("value", &self.cell.value.get())
            .field("id", &self.id)
            .finish()
    }
}

#[derive(Default)]
pub(crate) struct CounterCell {
    value: Cell<u64>,
}

/// How other processes name a [`Counter`] of this one (in
/// [`Counters::tgt`]): plain data, to be sent by a put, a message or an
/// active message.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CounterId {
    index: u32,
    generation: u32,
}

// SAFETY: `repr(C)` with two `u32`s: no padding, every bit pattern valid
// (a stale or forged id is refused by the target's table).
unsafe impl bytemuck::Zeroable for CounterId {}
// SAFETY: as above; `Copy` and `'static`.
unsafe impl bytemuck::Pod for CounterId {}

impl Counter {
    /// The value now (moved by messages handled so far: the counter does
    /// not dispatch; [`Bsp::wait`] and [`Bsp::probe`] do).
    pub fn get(&self) -> u64 {
        self.cell.value.get()
    }

    /// Sets the value.
    pub fn set(&self, v: u64) {
        self.cell.value.set(v);
    }

    /// The id other processes name it by.
    pub fn id(&self) -> CounterId {
        self.id
    }
}

fn bump(c: &CounterCell) {
    c.value.set(c.value.get() + 1);
}

// ----- the context ---------------------------------------------------------------

/// A record ready to go to `to`.
pub(crate) struct Outgoing {
    to: usize,
    record: Vec<u8>,
    /// The `DATA` records of a large message, in order.
    pub(crate) chunks: Vec<Vec<u8>>,
    cmpl: Option<Cmpl>,
}

/// The completion counter of a message in flight: a Rust [`Counter`]'s
/// cell, or a C `lapi_cntr_t` (its address, which the unsafe send vouched
/// for until the message is acknowledged).
pub(crate) enum Cmpl {
    Rust(Weak<CounterCell>),
    C(usize),
}

impl Cmpl {
    fn bump(self) {
        match self {
            Cmpl::Rust(w) => {
                if let Some(c) = w.upgrade() {
                    bump(&c);
                }
            }
            // SAFETY: `lapi::send`'s contract: the counter stays valid
            // until the message is acknowledged, which is now.
            Cmpl::C(addr) => unsafe { lapi::bump_c(addr) },
        }
    }
}

/// A message whose header handler ran and whose data is still arriving
/// (or has all arrived, and is being finished).
struct Pending {
    seq: u64,
    total: usize,
    received: usize,
    sink: Sink,
    then: Option<CompletionFn>,
    tgt: u64,
}

/// Where a message's data goes on the target.
enum Sink {
    /// Nowhere (the message has none).
    None,
    /// A buffer for the completion handler.
    Buffer(Vec<u8>),
    /// Blocks `(offset, len)` of an area from `base`, filled in order;
    /// bytes beyond them are dropped (GENERIC); `_keep` holds the area.
    Blocks {
        base: *mut u8,
        blocks: Vec<(usize, usize)>,
        _keep: std::rc::Rc<dyn std::any::Any>,
    },
}

impl Sink {
    /// Writes `bytes`, which start at byte `offset` of the message's data.
    fn deliver(&mut self, offset: usize, bytes: &[u8]) {
        match self {
            Sink::None => {}
            Sink::Buffer(b) => b[offset..offset + bytes.len()].copy_from_slice(bytes),
            Sink::Blocks { base, blocks, .. } => {
                let (mut skip, mut left) = (offset, bytes);
                for &(at, n) in blocks.iter() {
                    if skip >= n {
                        skip -= n;
                        continue;
                    }
                    let k = (n - skip).min(left.len());
                    // SAFETY: `at + n` lies inside the area's storage
                    // (`target_blocks` checked it against its size), which
                    // `_keep` holds and this process owns; we run inside a
                    // `&mut Bsp` call, so no view of it is alive; `left`
                    // is a received record, not in the area.
                    unsafe { std::ptr::copy_nonoverlapping(left.as_ptr(), base.add(at + skip), k) };
                    left = &left[k..];
                    skip = 0;
                    if left.is_empty() {
                        break;
                    }
                }
            }
        }
    }
}

/// A message sent and not yet acknowledged.
struct InFlight {
    seq: u64,
    cmpl: Option<Cmpl>,
}

/// The active-message state of one process, between `am_init` and
/// `am_term`.
pub(crate) struct Context {
    pid: usize,
    nprocs: usize,
    owner: (u64, usize),
    handlers: Vec<(u32, HeaderFn)>,
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
    /// whole and in arrival order, for [`crate::epoch::serve`].
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
        p.am_sessions = p.am_sessions.wrapping_add(1);
        let n = p.nprocs;
        Context {
            pid: p.pid,
            nprocs: n,
            owner: (p.world.id(), p.pid),
            handlers: handlers
                .list
                .into_iter()
                .map(|(name, h)| (name_hash(&name), h))
                .collect(),
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
            session: p.am_sessions,
            deferred: Vec::new(),
            buf: Vec::new(),
            rma_in: Vec::new(),
            landed: false,
            largest: p.world.am_max_record(),
            c: None,
            superstep: p.superstep,
        }
    }

    /// Builds the record of a send, checking its arguments: what the
    /// origin can get wrong, with LAPI's codes.
    fn build<T: Pod>(
        &self,
        pid: usize,
        handler: Handler,
        uhdr: &[u8],
        src: &Source<'_, T>,
        counters: &Counters<'_>,
    ) -> Result<Outgoing, ErrorKind> {
        let arg = |code: &'static str, detail: String| ErrorKind::AmArgument { code, detail };
        if pid >= self.nprocs {
            return Err(arg(
                "LAPI_ERR_TGT",
                format!("target {pid} is not a process (there are {})", self.nprocs),
            ));
        }
        match self.handlers.get(handler.index as usize) {
            Some((hash, _)) if *hash == handler.hash => {}
            _ => {
                return Err(arg(
                    "LAPI_ERR_HDR_HNDLR_NULL",
                    format!("handler {} is not one of this run's", handler.index),
                ))
            }
        }
        if [counters.org, counters.cmpl]
            .into_iter()
            .flatten()
            .any(|c| !self.mine(c))
        {
            return Err(arg(
                "LAPI_ERR_CNTR_NULL",
                "an origin or completion counter of another process, run or am_init session".into(),
            ));
        }
        if uhdr.len() > MAX_UHDR {
            return Err(arg(
                "LAPI_ERR_UHDR_LEN",
                format!(
                    "the user header has {} bytes, more than {MAX_UHDR}",
                    uhdr.len()
                ),
            ));
        }
        let size = std::mem::size_of::<T>();
        let bytes_of = |r: &Range<usize>, len: usize, what: &'static str| {
            if r.start > r.end || r.end > len {
                Err(arg(
                    "LAPI_ERR_ORG_VEC_ADDR",
                    format!("{what} range {r:?} is not inside the source's {len} elements"),
                ))
            } else {
                Ok((r.start * size, (r.end - r.start) * size))
            }
        };
        // The blocks of the source as byte ranges `(offset, len)`, checked,
        // before anything is copied; then the vector kind and the lengths.
        let elems: &[T] = match *src {
            Source::Contiguous(s)
            | Source::Io(s, _)
            | Source::Generic(s, _)
            | Source::Strided(s, _) => s,
        };
        let (b, n_elems): (&[u8], usize) = (bytemuck::cast_slice(elems), elems.len());
        let (vec, blocks): (u64, Vec<(usize, usize)>) = match *src {
            Source::Contiguous(_) => (VEC_CONTIG, vec![(0, b.len())]),
            Source::Io(_, ranges) | Source::Generic(_, ranges) => {
                let blocks = ranges
                    .iter()
                    .map(|r| bytes_of(r, n_elems, "an io-vector"))
                    .collect::<Result<Vec<_>, _>>()?;
                let vec = if matches!(src, Source::Io(..)) {
                    VEC_IO
                } else {
                    VEC_GENERIC
                };
                (vec, blocks)
            }
            Source::Strided(_, st) => {
                if st.count > 1 && st.stride < st.block {
                    return Err(arg(
                        "LAPI_ERR_ORG_STRIDE",
                        format!(
                            "the stride {} is less than the block {}",
                            st.stride, st.block
                        ),
                    ));
                }
                let blocks = st
                    .indices_blocks()
                    .ok_or_else(|| {
                        arg(
                            "LAPI_ERR_ORG_EXTENT",
                            "the strided selection overflows the address space".into(),
                        )
                    })?
                    .map(|r| bytes_of(&r, n_elems, "a strided block"))
                    .collect::<Result<Vec<_>, _>>()?;
                (VEC_STRIDED, blocks)
            }
        };
        let total = blocks
            .iter()
            .try_fold(0usize, |a, &(_, n)| a.checked_add(n))
            .filter(|&t| t <= MAX_DATA)
            .ok_or_else(|| {
                arg(
                    "LAPI_ERR_DATA_LEN",
                    format!("the message has more than {MAX_DATA} bytes of data"),
                )
            })?;
        let lens: Vec<usize> = blocks.iter().map(|&(_, n)| n).collect();
        let mut data = Vec::with_capacity(total);
        for &(at, n) in &blocks {
            data.extend_from_slice(&b[at..at + n]);
        }
        let lens_words = if vec == VEC_STRIDED || vec == VEC_CONTIG {
            1
        } else {
            lens.len()
        };
        let head = 8 * (HEADER_WORDS + lens_words) + pad8(uhdr.len());
        // Larger messages send their data in pieces after the record.
        let eager = EAGER.min(self.largest);
        let chunked = head + pad8(data.len()) > eager;
        let len = if chunked {
            head
        } else {
            head + pad8(data.len())
        };
        if len > self.largest {
            return Err(arg(
                "LAPI_ERR_DATA_LEN",
                format!(
                    "the message's header and block lengths need {len} bytes; this engine \
                     carries records of at most {}",
                    self.largest
                ),
            ));
        }
        let tgt = counters.tgt.map_or(0, |c| {
            // `index + 1` (0 is "no counter") in 32 bits: an id whose
            // index is `u32::MAX` (forged through `Pod`) becomes an index
            // the target does not have.
            u64::from(c.index.wrapping_add(1).max(1)) | (u64::from(c.generation) << 32)
        });
        let mut r = Vec::with_capacity(len);
        let mut word = |w: u64| r.extend_from_slice(&w.to_ne_bytes());
        word(len as u64 | KIND_AM << 32 | vec << 40 | if chunked { CHUNKED } else { 0 });
        word(self.pid as u64); // the sequence number is set when it is sent
        word(u64::from(handler.index) | u64::from(handler.hash) << 32);
        word(tgt);
        word(uhdr.len() as u64 | (lens.len() as u64) << 32);
        word(data.len() as u64);
        if lens_words == lens.len() && vec != VEC_CONTIG {
            for l in &lens {
                word(*l as u64);
            }
        } else {
            word(lens.first().copied().unwrap_or(0) as u64);
        }
        r.extend_from_slice(uhdr);
        r.resize(r.len() + pad8(uhdr.len()) - uhdr.len(), 0);
        let mut chunks = Vec::new();
        if chunked {
            let piece = eager - 24;
            for (i, part) in data.chunks(piece).enumerate() {
                let n = 24 + pad8(part.len());
                let mut c = Vec::with_capacity(n);
                c.extend_from_slice(&(n as u64 | KIND_DATA << 32).to_ne_bytes());
                c.extend_from_slice(&(self.pid as u64).to_ne_bytes());
                c.extend_from_slice(&((i * piece) as u64).to_ne_bytes());
                c.extend_from_slice(part);
                c.resize(n, 0);
                chunks.push(c);
            }
        } else {
            r.extend_from_slice(&data);
        }
        r.resize(len, 0);
        if let Some(c) = counters.org {
            bump(&c.cell);
        }
        Ok(Outgoing {
            to: pid,
            record: r,
            chunks,
            cmpl: counters.cmpl.map(|c| Cmpl::Rust(Rc::downgrade(&c.cell))),
        })
    }

    /// Sends a built record now (or holds it while in a barrier), in order
    /// behind any backlog for its destination.
    pub(crate) fn send(&mut self, world: &World, out: Outgoing) -> Result<(), Interrupt> {
        if self.in_barrier {
            self.held.push(out);
            return Ok(());
        }
        let to = out.to;
        self.sent[to] += 1;
        let seq = self.sent[to];
        let word1 = (self.pid as u64 | seq << 32).to_ne_bytes();
        let epoch = (self.epoch & 1) << 48;
        let stamp = |r: &mut Vec<u8>| {
            let w0 = u64::from_ne_bytes(r[..8].try_into().unwrap_or_default());
            r[..8].copy_from_slice(&((w0 & !EPOCH) | epoch).to_ne_bytes());
            r[8..16].copy_from_slice(&word1);
        };
        let mut record = out.record;
        stamp(&mut record);
        self.in_flight[to].push_back(InFlight {
            seq,
            cmpl: out.cmpl,
        });
        self.post(world, to, record)?;
        for mut chunk in out.chunks {
            stamp(&mut chunk);
            self.post(world, to, chunk)?;
        }
        Ok(())
    }

    /// Posts a record to `to` behind its backlog.
    pub(crate) fn post(
        &mut self,
        world: &World,
        to: usize,
        record: Vec<u8>,
    ) -> Result<(), Interrupt> {
        if self.backlog[to].is_empty() && world.am_post(self.pid, to, &[&record])? {
            return Ok(());
        }
        self.backlog[to].push_back(record);
        Ok(())
    }

    /// [`post`](Self::post) of a record the caller keeps (copied only if
    /// it must wait for room).
    pub(crate) fn post_slice(
        &mut self,
        world: &World,
        to: usize,
        record: &[u8],
    ) -> Result<(), Interrupt> {
        if self.backlog[to].is_empty() && world.am_post(self.pid, to, &[record])? {
            return Ok(());
        }
        self.backlog[to].push_back(record.to_vec());
        Ok(())
    }

    /// Posts what the backlogs hold, as far as the inboxes take it.
    fn flush(&mut self, world: &World) -> Result<(), Interrupt> {
        for to in 0..self.nprocs {
            while let Some(r) = self.backlog[to].front() {
                if !world.am_post(self.pid, to, &[r])? {
                    break;
                }
                self.backlog[to].pop_front();
            }
        }
        Ok(())
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

    /// Handles everything that arrived: messages (header handler, landing,
    /// completion handler, target counter) and acknowledgements; then
    /// acknowledges what was handled. Errors found on the target are the
    /// run's.
    /// With `waiting_in_sync`, records of the next superstep are set aside
    /// (see [`EPOCH`]).
    fn dispatch(&mut self, world: &World, waiting_in_sync: bool) -> Result<(), Dispatch> {
        self.flush(world).map_err(Dispatch::Interrupted)?;
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        if !waiting_in_sync {
            // What was set aside came before anything still in the inbox.
            std::mem::swap(&mut buf, &mut self.deferred);
        }
        let taken = world.am_take(self.pid, &mut buf);
        let defer = waiting_in_sync.then_some((self.epoch & 1) ^ 1);
        let result = taken
            .map_err(Dispatch::Interrupted)
            .and_then(|()| self.handle_all(world, &buf, defer));
        buf.clear();
        self.buf = buf;
        result?;
        let epoch = (self.epoch & 1) << 48;
        for from in 0..self.nprocs {
            if let Some(seq) = self.to_ack[from].take() {
                let mut ack = Vec::with_capacity(16);
                ack.extend_from_slice(&(16 | KIND_ACK << 32 | epoch).to_ne_bytes());
                ack.extend_from_slice(&(self.pid as u64 | seq << 32).to_ne_bytes());
                self.post(world, from, ack).map_err(Dispatch::Interrupted)?;
            }
        }
        Ok(())
    }

    /// Handles the records in `bytes`; those whose epoch bit is `defer`
    /// are set aside instead.
    fn handle_all(
        &mut self,
        world: &World,
        bytes: &[u8],
        defer: Option<u64>,
    ) -> Result<(), Dispatch> {
        let word = |at: usize| u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        let mut at = 0;
        while at < bytes.len() {
            let invalid = |detail: String, sender: usize| {
                Dispatch::Target(ErrorKind::InvalidRecord {
                    what: "active message",
                    sender,
                    detail,
                })
            };
            if bytes.len() - at < 16 {
                return Err(invalid("is cut short".into(), usize::MAX));
            }
            let w0 = word(at);
            let len = w0 as u32 as usize;
            let from = (word(at + 8) as u32) as usize;
            let seq = word(at + 8) >> 32;
            if len < 16 || len % 8 != 0 || len > bytes.len() - at || from >= self.nprocs {
                return Err(invalid(format!("has a bad length ({len}) or origin"), from));
            }
            let rec = &bytes[at..at + len];
            if defer == Some(w0 >> 48 & 1) {
                self.deferred.extend_from_slice(rec);
                at += len;
                continue;
            }
            match w0 >> 32 & 0xff {
                crate::epoch::KIND_RMA => self.rma_in.extend_from_slice(rec),
                KIND_ACK => self.acknowledged(from, seq).map_err(|d| invalid(d, from))?,
                KIND_AM => {
                    if seq != (self.handled[from] + 1) & 0xffff_ffff || self.open[from].is_some() {
                        return Err(invalid(
                            format!(
                                "has sequence number {seq}, expected {} (or came before the \
                                 data of the previous one)",
                                self.handled[from] + 1
                            ),
                            from,
                        ));
                    }
                    let pending = self.begin(world, from, seq, rec)?;
                    self.handled[from] += 1;
                    match pending {
                        // A C message: handled whole.
                        None => self.to_ack[from] = Some(seq),
                        Some(p) if p.received == p.total => self.finish(world, from, p)?,
                        Some(p) => self.open[from] = Some(p),
                    }
                }
                KIND_DATA => {
                    let offset = if len >= 24 {
                        word(at + 16) as usize
                    } else {
                        usize::MAX
                    };
                    let Some(mut pending) = self.open[from].take() else {
                        return Err(invalid("is data of no message".into(), from));
                    };
                    let bytes = &rec[24.min(len)..];
                    let n = bytes.len().min(pending.total - pending.received);
                    if pending.seq != seq || offset != pending.received || n == 0 {
                        return Err(invalid(
                            format!(
                                "is data of message {seq} at byte {offset}, expected message {} \
                                 at byte {}",
                                pending.seq, pending.received
                            ),
                            from,
                        ));
                    }
                    self.landed |= matches!(pending.sink, Sink::Blocks { .. });
                    pending.sink.deliver(offset, &bytes[..n]);
                    pending.received += n;
                    if pending.received == pending.total {
                        self.finish(world, from, pending)?;
                    } else {
                        self.open[from] = Some(pending);
                    }
                }
                k => return Err(invalid(format!("has an unknown kind {k}"), from)),
            }
            at += len;
        }
        Ok(())
    }

    /// An acknowledgement from `from` of every message up to `seq` (its
    /// low 32 bits: sequence numbers travel modulo 2^32).
    fn acknowledged(&mut self, from: usize, seq: u64) -> Result<(), String> {
        let sent = self.sent[from];
        let behind = u64::from((sent as u32).wrapping_sub(seq as u32));
        if behind > self.in_flight[from].len() as u64 {
            return Err(format!(
                "acknowledges message {seq}, which is not one in flight (the last sent is {})",
                sent & 0xffff_ffff
            ));
        }
        let seq = sent - behind;
        while self.in_flight[from].front().is_some_and(|f| f.seq <= seq) {
            if let Some(f) = self.in_flight[from].pop_front() {
                if let Some(c) = f.cmpl {
                    c.bump();
                }
            }
        }
        Ok(())
    }

    /// The record of message `seq` from `from`: runs its header handler
    /// and resolves its landing; the data the record carries (all of it,
    /// unless `CHUNKED`) is delivered.
    fn begin(
        &mut self,
        world: &World,
        from: usize,
        seq: u64,
        rec: &[u8],
    ) -> Result<Option<Pending>, Dispatch> {
        let target_err = |reason: String| {
            Dispatch::Target(ErrorKind::AmTarget {
                origin: from,
                seq,
                reason,
            })
        };
        let word = |at: usize| -> Result<u64, Dispatch> {
            rec.get(at..at + 8)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
                .ok_or_else(|| target_err("the record is cut short".into()))
        };
        let w0 = word(0)?;
        let vec = w0 >> 40 & 0xff;
        let chunked = w0 & CHUNKED != 0;
        let (hindex, hhash) = {
            let w = word(16)?;
            (w as u32 as usize, (w >> 32) as u32)
        };
        let tgt = word(24)?;
        let (uhdr_len, num_vecs) = {
            let w = word(32)?;
            ((w as u32) as usize, (w >> 32) as usize)
        };
        let total = word(40)? as usize;
        let kind = match vec {
            VEC_CONTIG => Kind::Contiguous,
            VEC_IO => Kind::Io,
            VEC_STRIDED => Kind::Strided,
            VEC_GENERIC => Kind::Generic,
            v => return Err(target_err(format!("unknown vector kind {v}"))),
        };
        let lens_words = match kind {
            Kind::Io | Kind::Generic => num_vecs,
            _ => 1,
        };
        if 8 * (HEADER_WORDS + lens_words) > rec.len() || total > MAX_DATA {
            return Err(target_err("the record is cut short".into()));
        }
        let lens: Vec<usize> = match kind {
            Kind::Io | Kind::Generic => (0..num_vecs)
                .map(|i| word(48 + 8 * i).map(|w| w as usize))
                .collect::<Result<_, _>>()?,
            Kind::Strided => {
                let block = word(48)? as usize;
                if block.checked_mul(num_vecs) != Some(total) {
                    return Err(target_err(format!(
                        "has {num_vecs} strided blocks of {block} bytes for {total} bytes"
                    )));
                }
                vec![block; num_vecs]
            }
            Kind::Contiguous => vec![total],
        };
        let uhdr_at = 8 * (HEADER_WORDS + lens_words);
        let data_at = uhdr_at + pad8(uhdr_len);
        let carried = if chunked { 0 } else { total };
        if lens.iter().try_fold(0usize, |a, &l| a.checked_add(l)) != Some(total)
            || data_at
                .checked_add(carried)
                .is_none_or(|end| end > rec.len())
        {
            return Err(target_err("the record's lengths do not add up".into()));
        }
        let uhdr = &rec[uhdr_at..uhdr_at + uhdr_len];
        let flags = w0 >> 56;
        if flags & lapi::FLAG_C != 0 {
            if chunked {
                return Err(target_err(
                    "is a C message in pieces, which C sends never make".into(),
                ));
            }
            let m = lapi::Msg {
                from,
                seq,
                flags,
                handler: word(16)?,
                tgt,
                kind,
                lens: &lens,
                uhdr,
                data: &rec[data_at..data_at + total],
            };
            self.handle_c(world, m)?;
            return Ok(None);
        }
        let arrival = Arrival {
            owner: self.owner,
            src: from,
            uhdr,
            lens: &lens,
            total,
            kind,
        };
        let Some((hash, header)) = self.handlers.get_mut(hindex) else {
            return Err(target_err(format!(
                "names handler {hindex}, which this process does not have"
            )));
        };
        if *hash != hhash {
            return Err(target_err(format!(
                "names handler {hindex} with another name than this process registered there \
                 (every process must add the same handlers in the same order)"
            )));
        }
        let landing = header(&arrival);
        let sink = match landing.to {
            To::None if total != 0 => {
                return Err(target_err(format!(
                    "carries {total} bytes, and its header handler gave no landing for them"
                )))
            }
            To::None => Sink::None,
            To::Buffer => Sink::Buffer(vec![0; total]),
            To::Area {
                owner,
                base,
                bytes,
                size,
                target,
                _keep,
            } => {
                if owner != self.owner {
                    return Err(target_err(
                        "its header handler names an area of another process or run".into(),
                    ));
                }
                let blocks =
                    target_blocks(&target, kind, &lens, bytes, size).map_err(target_err)?;
                Sink::Blocks {
                    base,
                    blocks,
                    _keep,
                }
            }
        };
        let mut pending = Pending {
            seq,
            total,
            received: 0,
            sink,
            then: landing.then,
            tgt,
        };
        if !chunked {
            self.landed |= matches!(pending.sink, Sink::Blocks { .. });
            pending.sink.deliver(0, &rec[data_at..data_at + total]);
            pending.received = total;
        }
        Ok(Some(pending))
    }

    /// Message `pending` from `from` has all its data: runs its completion
    /// handler, moves its target counter, and marks it for acknowledgement.
    fn finish(&mut self, world: &World, from: usize, pending: Pending) -> Result<(), Dispatch> {
        let seq = pending.seq;
        let target_err = |reason: String| {
            Dispatch::Target(ErrorKind::AmTarget {
                origin: from,
                seq,
                reason,
            })
        };
        if let Some(then) = pending.then {
            let kept = match pending.sink {
                Sink::Buffer(b) => b,
                _ => Vec::new(),
            };
            let mut sends = Vec::new();
            let mut done = Done {
                src: from,
                data: kept,
                owner: self.owner,
                sends: &mut sends,
                ctx: self,
                error: None,
            };
            then(&mut done);
            if let Some(e) = done.error.take() {
                return Err(Dispatch::Target(e));
            }
            for out in sends {
                self.send(world, out).map_err(Dispatch::Interrupted)?;
            }
        }
        let tgt = pending.tgt;
        if tgt != 0 {
            let (index, generation) = (((tgt as u32).wrapping_sub(1)) as usize, (tgt >> 32) as u32);
            match self.counters.get(index) {
                Some((g, w)) if *g == generation => match w.upgrade() {
                    Some(c) => bump(&c),
                    None => {
                        return Err(target_err(format!(
                            "names counter {index} of this process, which was dropped"
                        )))
                    }
                },
                _ => {
                    return Err(target_err(format!(
                        "names counter {index} (generation {generation}), which is not a \
                         counter of this process"
                    )))
                }
            }
        }
        self.to_ack[from] = Some(seq);
        Ok(())
    }

    /// A new counter.
    fn counter(&mut self) -> Counter {
        let cell = Rc::new(CounterCell::default());
        let weak = Rc::downgrade(&cell);
        let index = match self
            .counters
            .iter()
            .position(|(_, w)| w.strong_count() == 0)
        {
            Some(i) => {
                let g = self.counters[i].0.wrapping_add(1);
                self.counters[i] = (g, weak);
                i
            }
            None => {
                // Generations start at the session's base: an id of an
                // earlier session names no counter of this one.
                self.counters.push((self.session << 20, weak));
                self.counters.len() - 1
            }
        };
        Counter {
            cell,
            id: CounterId {
                index: index as u32,
                generation: self.counters[index].0,
            },
            owner: self.owner,
            session: self.session,
        }
    }

    /// Whether `c` is a counter of this process and session.
    fn mine(&self, c: &Counter) -> bool {
        c.owner == self.owner && c.session == self.session
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

/// The byte blocks `(offset, len)` of `target` in an area of `bytes`
/// bytes of elements of `size` bytes, checked against the origin's kind and
/// block lengths with LAPI's rules.
fn target_blocks(
    target: &Target,
    kind: Kind,
    lens: &[usize],
    bytes: usize,
    size: usize,
) -> Result<Vec<(usize, usize)>, String> {
    let range = |r: &Range<usize>| -> Result<(usize, usize), String> {
        let (s, e) = (r.start.checked_mul(size), r.end.checked_mul(size));
        match (s, e) {
            (Some(s), Some(e)) if s <= e && e <= bytes => Ok((s, e - s)),
            _ => Err(format!(
                "its header handler names elements {r:?} of an area of {} elements",
                bytes / size.max(1)
            )),
        }
    };
    let total: usize = lens.iter().sum();
    let mismatch = |what: &str| {
        Err(format!(
            "its header handler gives a {what} target for {kind:?} data (the kinds must match)"
        ))
    };
    match (target, kind) {
        (Target::At(start), Kind::Contiguous) => {
            match start.checked_mul(size).and_then(|s| Some((s, s.checked_add(total)?))) {
                Some((s, e)) if e <= bytes => Ok(vec![(s, total)]),
                _ => Err(format!(
                    "its header handler lands {total} bytes at element {start} of an area of {} elements",
                    bytes / size.max(1)
                )),
            }
        }
        (Target::Io(ranges), Kind::Io) => {
            if ranges.len() != lens.len() {
                return Err(format!(
                    "its header handler gives {} io-vector blocks for the origin's {}",
                    ranges.len(),
                    lens.len()
                ));
            }
            let blocks = ranges.iter().map(range).collect::<Result<Vec<_>, _>>()?;
            for (i, (b, l)) in blocks.iter().zip(lens).enumerate() {
                if b.1 != *l {
                    return Err(format!(
                        "io-vector block {i} has {} bytes on the target and {l} on the origin",
                        b.1
                    ));
                }
            }
            Ok(blocks)
        }
        (Target::Strided(st), Kind::Strided) => {
            let block = lens.first().copied().unwrap_or(0);
            if st.count != lens.len() || st.block.checked_mul(size) != Some(block) {
                return Err(format!(
                    "its strided target has {} blocks of {} elements of {size} bytes, the \
                     origin {} of {block} bytes",
                    st.count,
                    st.block,
                    lens.len()
                ));
            }
            if st.count > 1 && st.stride < st.block {
                return Err(format!(
                    "its strided target's stride {} is less than its block {}",
                    st.stride, st.block
                ));
            }
            st.indices_blocks()
                .ok_or_else(|| "its strided target overflows the address space".to_string())?
                .map(|r| range(&r))
                .collect()
        }
        (Target::Generic(ranges), Kind::Generic) => ranges.iter().map(range).collect(),
        (Target::At(_), _) => mismatch("contiguous"),
        (Target::Io(_), _) => mismatch("io-vector"),
        (Target::Strided(_), _) => mismatch("strided"),
        (Target::Generic(_), _) => mismatch("generic"),
    }
}

impl Strided {
    /// The element range of each block; `None` if the selection does not
    /// fit the address space (then no block is computed: every block ends
    /// at or before the last one's end, which is checked).
    fn indices_blocks(&self) -> Option<impl Iterator<Item = Range<usize>> + '_> {
        self.end()?;
        Some((0..self.count).map(move |k| {
            let s = self.start + k * self.stride;
            s..s + self.block
        }))
    }
}

// ----- the process's side ---------------------------------------------------------

impl Process {
    /// Whether this process is in active-message mode.
    pub(crate) fn am_active(&self) -> bool {
        self.am.is_some()
    }

    /// The error of a dispatch that stopped, as `call`'s.
    fn dispatch_error(&self, d: Dispatch, call: &'static str, loc: Loc) -> Error {
        match d {
            Dispatch::Interrupted(why) => self.interrupted(why, call, loc),
            Dispatch::Target(kind) => self.fail(kind, call, loc),
        }
    }

    /// Handles what arrived (a progress point).
    pub(crate) fn am_dispatch(&mut self, call: &'static str, loc: Loc) -> Result<(), Error> {
        let Some(mut ctx) = self.am.take() else {
            return Ok(());
        };
        ctx.superstep = self.superstep;
        let r = ctx
            .dispatch(&self.world, false)
            .and_then(|()| crate::epoch::serve(&mut ctx, &mut self.epochs, &self.reg, &self.world));
        self.am = Some(ctx);
        r.map_err(|d| self.dispatch_error(d, call, loc))
    }

    /// Waits, dispatching, until every message this process sent has been
    /// handled (and acknowledged), including those its own completion
    /// handlers send meanwhile.
    pub(crate) fn am_fence(&mut self, call: &'static str, loc: Loc) -> Result<(), Error> {
        let mut started = None;
        loop {
            let mark = self.world.am_mark(self.pid);
            self.am_dispatch(call, loc)?;
            match &self.am {
                Some(ctx) if ctx.outstanding() => {}
                _ => return Ok(()),
            }
            self.am_pause(mark, &mut started, call, loc)?;
        }
    }

    /// The wait of a dispatching loop (`wait`, `fence`): for a ring if
    /// nothing of ours waits for room in an inbox, else a yield (an inbox
    /// that frees room rings no one), checking the run's stop and deadline,
    /// and that no process we owe messages to has ended.
    pub(crate) fn am_pause(
        &self,
        mark: u64,
        started: &mut Option<std::time::Instant>,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.am_pause_or_yield(mark, started, true, call, loc)
    }

    /// [`am_pause`](Process::am_pause), with a yield instead of the wait
    /// for a record unless `sleep`: for a wait on a word of shared or MPI
    /// memory (a lock word, a post counter) whose change rings no bell.
    pub(crate) fn am_pause_or_yield(
        &self,
        mark: u64,
        started: &mut Option<std::time::Instant>,
        sleep: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let Some(ctx) = self.am.as_ref() else {
            return Ok(());
        };
        if let Some(q) = (0..self.nprocs).find(|&q| {
            q != self.pid
                && ctx.owes(q)
                && self.world.board().get(q).1 == crate::engine::board::State::Ended
        }) {
            return Err(self.fail(
                ErrorKind::AmMismatch {
                    detail: format!(
                        "process {q} ended with active messages for it pending (sent and not \
                         handled)"
                    ),
                },
                call,
                loc,
            ));
        }
        // Nothing of ours in flight, nothing arrived since the mark, and
        // every other process has ended: nothing can ever come.
        let ended = |q: usize| self.world.board().get(q).1 == crate::engine::board::State::Ended;
        if !ctx.outstanding()
            && self.world.am_mark(self.pid) == mark
            && (0..self.nprocs).all(|q| q == self.pid || ended(q))
        {
            return Err(self.fail(
                ErrorKind::AmMismatch {
                    detail: "waits for active messages that cannot come: none of this \
                             process's is in flight, and every other process has ended"
                        .into(),
                },
                call,
                loc,
            ));
        }
        if self.world.is_stopped() {
            return Err(self.stopped(call, loc));
        }
        // The deadline counts from the start of this wait (`am_wait`
        // returns every 50 ms to let us look at ended processes).
        let t0 = *started.get_or_insert_with(std::time::Instant::now);
        if self.world.deadline().is_some_and(|d| t0.elapsed() > d) {
            return Err(self.interrupted(Interrupt::Deadline, call, loc));
        }
        if sleep && !ctx.backlogged() {
            return self
                .world
                .am_wait(self.pid, mark)
                .map_err(|why| self.interrupted(why, call, loc));
        }
        std::thread::yield_now();
        // The wait for a record takes a failed process's stop message on
        // `mpi`; without it, look for one here.
        if !sleep && self.world.poll_stopped() {
            return Err(self.stopped(call, loc));
        }
        Ok(())
    }

    /// Barrier A of a sync in active-message mode: dispatches while it
    /// waits; completion handlers' sends are held until the sync returns.
    pub(crate) fn am_barrier(
        &mut self,
        flags: u32,
        call: &'static str,
        loc: Loc,
    ) -> Result<u32, Error> {
        let Some(mut ctx) = self.am.take() else {
            return self
                .world
                .barrier(&mut self.episode, flags)
                .map_err(|why| self.interrupted(why, call, loc));
        };
        ctx.in_barrier = true;
        ctx.superstep = self.superstep;
        let world = self.world.clone();
        let (name, superstep) = (self.call_name(call), self.superstep);
        let mut failure: Option<Dispatch> = None;
        let (epochs, reg) = (&mut self.epochs, &self.reg);
        let done = world.barrier_polling(&mut self.episode, flags, self.pid, &mut || {
            if failure.is_some() {
                return false;
            }
            let served = ctx
                .dispatch(&world, true)
                .and_then(|()| crate::epoch::serve(&mut ctx, epochs, reg, &world));
            if let Err(d) = served {
                if let Dispatch::Target(kind) = &d {
                    // Stop the others now: they may be waiting for us.
                    let err = Error::new(kind.clone(), name, ctx.pid, superstep, loc);
                    world.fail_in_barrier(err);
                }
                failure = Some(d);
                return false;
            }
            // Acknowledgements waiting for room in an inbox: poll again.
            ctx.backlogged()
        });
        ctx.in_barrier = false;
        self.am = Some(ctx);
        if let Some(d) = failure {
            return Err(self.dispatch_error(d, call, loc));
        }
        done.map_err(|why| self.interrupted(why, call, loc))
    }

    /// After a sync: sends what completion handlers sent during it.
    pub(crate) fn am_release_held(&mut self, call: &'static str, loc: Loc) -> Result<(), Error> {
        let Some(mut ctx) = self.am.take() else {
            return Ok(());
        };
        ctx.epoch = self.superstep;
        let held = std::mem::take(&mut ctx.held);
        let mut r = Ok(());
        for out in held {
            if let Err(why) = ctx.send(&self.world, out) {
                r = Err(why);
                break;
            }
        }
        self.am = Some(ctx);
        r.map_err(|why| self.interrupted(why, call, loc))
    }
}

// ----- the API on Bsp -----------------------------------------------------------------

impl Bsp {
    /// Enters active-message mode with `handlers`: collective, a sync.
    /// Every process calls it in the same superstep, with the same handler
    /// names in the same order (a message naming a handler the target
    /// registered under another name fails there).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`] if some processes call it and others
    /// sync; a second `am_init` without `am_term`; as for
    /// [`sync`](Bsp::sync).
    ///
    /// # BSP cost
    ///
    /// One sync.
    #[track_caller]
    pub fn am_init(&mut self, handlers: Handlers) -> Result<(), Error> {
        self.am_init_at(handlers, "am_init", Some(SourceLocation::caller()))
    }

    /// [`am_init`](Bsp::am_init) as `call` at `loc`.
    pub(crate) fn am_init_at(
        &mut self,
        handlers: Handlers,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        const CALL: &str = "am_init";
        {
            let mut p = self.process();
            p.check_running(call, loc)?;
            if p.am.is_some() || p.am_switch.is_some() {
                return Err(p.fail(
                    ErrorKind::AmMismatch {
                        detail: "am_init called again without am_term".into(),
                    },
                    call,
                    loc,
                ));
            }
            let ctx = Context::new(&mut p, handlers);
            p.am_switch = Some(Some(Box::new(ctx)));
            p.sync_name = (call != CALL).then_some(call);
        }
        let r = self.sync_at(loc);
        self.process().sync_name = None;
        r
    }

    /// Leaves active-message mode: collective, a sync, which first waits
    /// until every message this process sent has been handled.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`] if some processes call it and others
    /// sync, or it is called outside active-message mode; as for
    /// [`sync`](Bsp::sync).
    ///
    /// # BSP cost
    ///
    /// One sync.
    #[track_caller]
    pub fn am_term(&mut self) -> Result<(), Error> {
        self.am_term_at("am_term", Some(SourceLocation::caller()))
    }

    /// [`am_term`](Bsp::am_term) as `call` at `loc`.
    pub(crate) fn am_term_at(
        &mut self,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        const CALL: &str = "am_term";
        {
            let mut p = self.process();
            p.check_running(call, loc)?;
            if p.am.is_none() || p.am_switch.is_some() {
                return Err(p.fail(
                    ErrorKind::AmMismatch {
                        detail: "am_term called outside active-message mode".into(),
                    },
                    call,
                    loc,
                ));
            }
            p.am_switch = Some(None);
            p.sync_name = (call != CALL).then_some(call);
        }
        let r = self.sync_at(loc);
        self.process().sync_name = None;
        r
    }

    /// A new counter of this process, at 0.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`] outside active-message mode.
    #[track_caller]
    pub fn counter(&self) -> Result<Counter, Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        match p.am.as_mut() {
            Some(ctx) => Ok(ctx.counter()),
            None => Err(not_active(&p, "counter", loc)),
        }
    }

    /// Sends an active message to process `pid` (itself included): the
    /// user header `uhdr` and the data of `src`, both copied now (so the
    /// `org` counter moves before this returns). The target's header
    /// handler `handler` runs at its next progress point.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmArgument`] with LAPI's code: `LAPI_ERR_TGT` (a pid
    /// out of range), `LAPI_ERR_HDR_HNDLR_NULL` (a handler not of this
    /// run), `LAPI_ERR_UHDR_LEN` (a header over [`MAX_UHDR`] bytes),
    /// `LAPI_ERR_ORG_STRIDE` (a stride below the block),
    /// `LAPI_ERR_ORG_VEC_ADDR` (a range outside the source),
    /// `LAPI_ERR_DATA_LEN` (more data than the engine carries in one
    /// message); [`ErrorKind::AmMismatch`] outside active-message mode.
    /// Errors found on the target (a landing that does not fit, an unknown
    /// counter) stop the run there. Any error stops the run.
    ///
    /// # BSP cost
    ///
    /// `uhdr` and the data's bytes towards this process's outgoing and
    /// `pid`'s incoming h-relation of this superstep.
    #[track_caller]
    pub fn am_send<T: Pod, U: Pod>(
        &self,
        pid: usize,
        handler: Handler,
        uhdr: &[U],
        src: Source<'_, T>,
        counters: Counters<'_>,
    ) -> Result<(), Error> {
        const CALL: &str = "am_send";
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        p.check_running(CALL, loc)?;
        let Some(mut ctx) = p.am.take() else {
            return Err(not_active(&p, CALL, loc));
        };
        let pid = usize::try_from(pid_arg(pid)).unwrap_or(usize::MAX);
        let built = ctx.build(pid, handler, bytemuck::cast_slice(uhdr), &src, &counters);
        let r = match built {
            Ok(out) => ctx
                .send(&p.world, out)
                .map_err(|why| p.interrupted(why, CALL, loc)),
            Err(kind) => Err(p.fail(kind, CALL, loc)),
        };
        p.am = Some(ctx);
        r
    }

    /// Waits until `counter` reaches `n`, handling the messages that
    /// arrive meanwhile (a progress point), then subtracts `n` (LAPI's
    /// `LAPI_Waitcntr`).
    ///
    /// # Errors
    ///
    /// Errors found handling messages; [`ErrorKind::AmMismatch`] outside
    /// active-message mode or for a counter of another process; the run
    /// stopped, or its deadline passed, while waiting.
    #[track_caller]
    pub fn wait(&mut self, counter: &Counter, n: u64) -> Result<(), Error> {
        const CALL: &str = "am_wait";
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        p.check_running(CALL, loc)?;
        if !p.am.as_ref().is_some_and(|c| c.mine(counter)) {
            return Err(not_active(&p, CALL, loc));
        }
        let mut started = None;
        loop {
            let mark = p.world.am_mark(p.pid);
            p.am_dispatch(CALL, loc)?;
            let v = counter.get();
            if v >= n {
                counter.set(v - n);
                return Ok(());
            }
            p.am_pause(mark, &mut started, CALL, loc)?;
        }
    }

    /// Handles the messages that have arrived, without waiting (LAPI's
    /// `LAPI_Probe`).
    ///
    /// # Errors
    ///
    /// Errors found handling them; [`ErrorKind::AmMismatch`] outside
    /// active-message mode.
    #[track_caller]
    pub fn probe(&mut self) -> Result<(), Error> {
        const CALL: &str = "am_probe";
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        p.check_running(CALL, loc)?;
        if !p.am_active() {
            return Err(not_active(&p, CALL, loc));
        }
        p.am_dispatch(CALL, loc)
    }

    /// Waits, handling what arrives, until every message this process sent
    /// has been handled by its target (LAPI's `LAPI_Fence`).
    ///
    /// # Errors
    ///
    /// As for [`wait`](Bsp::wait).
    #[track_caller]
    pub fn fence(&mut self) -> Result<(), Error> {
        const CALL: &str = "am_fence";
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        p.check_running(CALL, loc)?;
        if !p.am_active() {
            return Err(not_active(&p, CALL, loc));
        }
        p.am_fence(CALL, loc)
    }
}

fn not_active(p: &Process, call: &'static str, loc: Option<SourceLocation>) -> Error {
    p.fail(
        ErrorKind::AmMismatch {
            detail: "not in active-message mode (am_init first), or a counter of another \
                     process, run or am_init session"
                .into(),
        },
        call,
        loc,
    )
}
