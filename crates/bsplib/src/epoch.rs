//! One-sided synchronisation after MPI-2: post/start/complete/wait on
//! subsets of processes, and passive-target locks (`ONE_SIDED.md`,
//! sections 1.2 and 1.3; the protocol is in section 8).
//!
//! A registered area plays the role of an MPI window. The epochs travel on
//! the active-message path (`engine/README.md`): records of kind
//! `KIND_RMA` (5), taken from the inbox with the active messages' own and
//! served here, on the target's own thread, at its progress points (the
//! `&mut Bsp` calls: the epoch calls themselves, a sync's barrier, the
//! active-message waits). So one-sided mode is active-message mode
//! ([`Rma::init`](crate::rma::Rma::init)), and no view of an
//! [`Area`](crate::Area) can be alive while a record writes it.
//!
//! # Examples
//!
//! A ring: each process exposes its area to its left neighbour and puts
//! into its right neighbour's, and only neighbours synchronise.
//!
//! ```
//! let r = bsplib::run(3, |bsp| {
//!     let (me, p) = (bsp.pid(), bsp.nprocs());
//!     let (left, right) = ((me + p - 1) % p, (me + 1) % p);
//!     let x = bsplib::Area::<u64>::new(bsp, 1);
//!     bsp.push_reg(&x)?;
//!     bsp.rma().init()?; // a sync: the registration takes effect too
//!     let mut e = bsp.rma().epoch(&x, &[left], &[right])?;
//!     e.put(right, 0, &[me as u64 * 10])?;
//!     e.wait()?; // my access epoch completed, my exposure epoch done
//!     let got = x.as_slice(bsp)[0];
//!     bsp.rma().term()?;
//!     Ok(got)
//! })?;
//! assert_eq!(r, vec![20, 0, 10]);
//! # Ok::<(), bsplib::Error>(())
//! ```

mod access;
mod exposure;
mod guard;
mod lock;
mod mode;
mod progress;
mod record;
mod serve;
mod transfer;
mod window;

use std::collections::HashMap;

use crate::process::{Keepalive, Loc, Process};
use crate::rma::{ElemType, Op};
use crate::window::Window;

pub use guard::{Epoch, Lock};
use serve::serve;

pub use crate::window::LockKind;

/// An access epoch this process opened (`start`).
struct Access {
    slot: u64,
    targets: Vec<usize>,
    loc: Loc,
    /// The operator and type of the accumulates to each target so far.
    accs: Vec<(usize, u16, Loc)>,
}

/// A lock this process holds.
struct Held {
    pid: usize,
    slot: u64,
    exclusive: bool,
    unlocking: bool,
    loc: Loc,
    acc: Option<(u16, Loc)>,
}

/// Checking mode: bytes written in an exposure epoch, `(offset, len,
/// origin, accumulate, line)`.
type Write = (usize, usize, usize, bool, u32);

/// An exposure epoch this process opened (`post`).
struct Exposure {
    slot: u64,
    origins: Vec<usize>,
    done: Vec<bool>,
    /// Accumulate records of the epoch: `(origin, record)`, combined at
    /// `wait`, origins in pid order, each origin's in issue order.
    accs: Vec<(usize, Vec<u8>)>,
    /// The first accumulate's `(origin, desc, line)`.
    first: Option<(usize, u16, u32)>,
    loc: Loc,
    /// Checking mode: the bytes each origin wrote, `(offset, len, origin,
    /// accumulate, line)`, checked for conflicts at `wait`.
    writes: Option<Vec<Write>>,
}

/// What arrived for a window's exposure epoch: the accumulates (origin,
/// record), the first one's `(origin, desc, line)`, and the origins whose
/// completion record came.
#[derive(Default)]
struct WinArrivals {
    accs: Vec<(usize, Vec<u8>)>,
    first: Option<(usize, u16, u32)>,
    done: Vec<usize>,
    /// Checking mode: the epoch's puts, `(offset, len, origin, false,
    /// line)`.
    puts: Vec<Write>,
}

/// A get of an epoch, waiting for its reply.
struct PendingGet {
    dst: usize,
    len: usize,
    pid: usize,
    slot: u64,
    _keep: Option<Keepalive>,
}

/// The one-sided state of a process: its open epochs, its gets in
/// flight, and the control lines of the areas it used.
#[derive(Default)]
pub(crate) struct Epochs {
    access: Vec<Access>,
    locks: Vec<Held>,
    exposures: Vec<Exposure>,
    gets: HashMap<u64, PendingGet>,
    next_id: u64,
    /// The control lines this process used, by line: their lock words and
    /// post counters (and this process's tallies of its starts).
    lines: HashMap<u64, Window<u8>>,
    /// Records gathered per target, each buffer starting with room for
    /// the batch's 16-byte header; sent by `Process::rma_flush`.
    outbox: Vec<Vec<u8>>,
    /// The targets whose outbox holds records, in first-use order.
    dirty: Vec<usize>,
    /// What arrived for this process's window exposure epochs in
    /// one-sided mode, by window identity.
    wins: HashMap<u64, WinArrivals>,
    /// Checking mode: the slots of this process that records wrote since
    /// the last sync (the `NO_STORE` check cannot tell their bytes from
    /// local stores), and whether a get's reply wrote this process's
    /// memory (anywhere); kept only once `track` is set (the checking
    /// mode's first snapshot).
    pub(crate) wrote: Vec<u64>,
    pub(crate) replied: bool,
    pub(crate) track: bool,
}

/// Installs the one-sided state in a new process, and the transfers'
/// [`ROUTE`](crate::process::extension::ROUTE) hook: a put or get to an area in an
/// access or lock epoch travels as a record of that epoch.
pub(crate) fn install(p: &mut Process) {
    p.install(Epochs::default());
    p.set_routes(&ROUTES);
    p.ext.am_mut().serve = Some(serve_slots);
}

/// The active-message path's server of our records
/// (`am::Serve`).
fn serve_slots(
    ctx: &mut crate::am::Context,
    slots: &mut crate::process::extension::Slots,
    reg: &crate::registration::Registry,
    world: &crate::engine::World,
) -> Result<(), crate::am::Dispatch> {
    serve(ctx, slots.epochs_mut(), reg, world)
}

/// The transfers' route through the epochs (`transfer.rs`).
static ROUTES: crate::process::extension::Routes = crate::process::extension::Routes {
    route: Process::epoch_route,
    put: Process::epoch_put,
    get: Process::epoch_get,
};

/// The one-sided state is an extension slot of the process: it asks for
/// the [`ROUTE`](crate::process::extension::ROUTE) hook while an access or lock
/// epoch is open (the code that opens and closes one calls
/// `Process::rewatch`).
impl crate::process::extension::Slotted for Epochs {
    const KEY: usize = 1;
}

impl crate::process::extension::Extension for Epochs {
    fn wants(&self) -> u32 {
        if self.routing() {
            crate::process::extension::ROUTE
        } else {
            0
        }
    }
}

impl crate::process::extension::Slots {
    /// The process's one-sided state (installed in every process).
    #[inline(always)]
    pub(crate) fn epochs(&self) -> &Epochs {
        self.get().expect("one-sided state installed at the start")
    }

    /// The process's one-sided state, to change (see [`Slots::get_mut`](crate::process::extension::Slots::get_mut)).
    #[inline(always)]
    pub(crate) fn epochs_mut(&mut self) -> &mut Epochs {
        self.get_mut()
            .expect("one-sided state installed at the start")
    }
}

impl Epochs {
    /// Whether transfers may belong to an epoch (the put and get paths ask
    /// this first: one branch when no epoch is open).
    #[inline]
    pub(crate) fn routing(&self) -> bool {
        !self.access.is_empty() || !self.locks.is_empty()
    }
}

/// One accumulate of a window's exposure epoch, to combine at `wait`.
pub(crate) struct WinAcc {
    pub(crate) off: usize,
    pub(crate) data: Vec<u8>,
    pub(crate) ty: ElemType,
    pub(crate) op: Op,
}

/// What a wait loop waits for from the processes it watches (for the
/// errors when they can never answer).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Awaited {
    Post,
    Complete,
    Answer,
    /// A lock word (held by any process; the owner watched).
    Lock,
}
