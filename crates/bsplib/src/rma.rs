//! One-sided extensions from MPI-2 (issue 12; design in `ONE_SIDED.md`
//! beside this file): **deterministic accumulate** in the fence epoch,
//! that is, in the superstep.
//!
//! [`Bsp::accumulate`](crate::Bsp::accumulate) combines elements into a
//! registered area of any process with an [`Op`] (sum, product, min, max,
//! bitwise and logical and/or/xor, replace, min/max with location). The contributions land
//! at the sync that ends the superstep, **after its puts**, combined by
//! the owner **origin by origin in increasing pid order, and each
//! origin's in issue order**: floating-point results are bit-identical on
//! every engine and every run. Every accumulate into one area in one
//! superstep must use one operator and one element type.
//!
//! # Examples
//!
//! A histogram: every process counts its values into the bins of
//! process 0.
//!
//! ```
//! use bsplib::Op;
//! let bins = bsplib::run(3, |bsp| {
//!     let hist = bsplib::Area::<u64>::new(bsp, 4);
//!     bsp.push_reg(&hist)?;
//!     bsp.sync()?;
//!     for v in [bsp.pid(), 3] {
//!         bsp.accumulate(0, &hist, v, &[1u64], Op::Sum)?;
//!     }
//!     bsp.sync()?;
//!     Ok(hist.as_slice(bsp).to_vec())
//! })?;
//! assert_eq!(bins[0], vec![1, 1, 1, 3]);
//! # Ok::<(), bsplib::Error>(())
//! ```

mod element;
mod kernels;
pub(crate) mod op;
mod origin;
mod owner;

use crate::bsp::Bsp;

use std::collections::HashMap;

use crate::process::Loc;

pub use element::{ElemType, Element, ValueIndex};
pub(crate) use kernels::combine;
pub(crate) use op::Op;

/// Flag of a put-section record's slot word: an accumulate record
/// `[slot | ACCUMULATE][offset][len][type | op << 8 | line << 32]
/// [payload]`, the core's extended record (`mem::EXTENDED`, bit 61; no
/// registration slot has it, nor `VECTOR`'s, bit 62, nor
/// `DESCRIPTOR`'s, bit 63).
pub(crate) const ACCUMULATE: u64 = crate::mem::EXTENDED;

/// Bytes of an accumulate record's header.
const HEADER: usize = crate::mem::EXTENDED_HEADER;

// ----- the superstep's state and the record's descriptor --------------------

/// What a process remembers of the accumulates of one superstep: at the
/// origin, the (target, slot) pairs it accumulated into with their
/// operator and type; at the owner during a sync, the first origin that
/// accumulated into each slot. Reused across supersteps.
#[derive(Default)]
pub(crate) struct RmaState {
    /// The superstep `issued` belongs to (cleared lazily).
    superstep: u64,
    /// By (target, slot): the operator and type, and the first call's
    /// location. A hash map: a histogram over `p` targets makes many
    /// calls into `p` pairs, and each call looks once.
    issued: HashMap<(usize, u64), (u16, Loc)>,
    /// The pair of the last call, and its `desc`: runs of calls into one
    /// target skip the map.
    last: Option<(usize, u64, u16)>,
    seen: Vec<SeenSlot>,
}

/// Installs the accumulate's state in a new process: every process may
/// be the owner of accumulate records.
pub(crate) fn install(p: &mut crate::process::Process) {
    p.install(RmaState::default());
}

impl crate::process::extension::Slotted for RmaState {
    const KEY: usize = 2;
}

impl crate::process::extension::Extension for RmaState {
    fn wants(&self) -> u32 {
        crate::process::extension::RECORDS
    }

    /// Step 5b: the accumulate records, after every put.
    fn records<'a>(
        &mut self,
        p: &mut crate::process::Process,
        records: &[(usize, usize)],
        section: &mut dyn FnMut(usize) -> Option<crate::process::extension::Section<'a>>,
    ) -> Result<(), crate::error::ErrorKind> {
        self.apply(&p.reg, records, section)
    }
}

/// The first accumulate an owner applied into one of its slots in a sync.
#[derive(Clone, Copy)]
struct SeenSlot {
    slot: u64,
    desc: u16,
    origin: usize,
    line: u32,
}

/// `type | op << 8`.
fn desc(ty: ElemType, op: Op) -> u16 {
    ty as u16 | (op as u16) << 8
}

fn undesc(d: u16) -> Option<(ElemType, Op)> {
    Some((
        ElemType::from_id(i64::from(d & 0xff))?,
        Op::from_id(i64::from(d >> 8))?,
    ))
}

pub(crate) fn describe(d: u16) -> String {
    match undesc(d) {
        Some((ty, op)) => format!("{} over {}", op.name(), ty.name()),
        None => "an unknown operator or type".into(),
    }
}

fn at_line(line: u32) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(" (line {line})")
    }
}

/// MPI-2's one-sided synchronisation on registered areas ([`Bsp::rma`]):
/// one-sided mode ([`init`](Rma::init), [`term`](Rma::term)) with its
/// post/start/complete/wait [`epoch`](Rma::epoch)s and passive-target
/// [`lock`](Rma::lock)s. The superstep's accumulate is a transfer like a
/// put, on the handle ([`Bsp::accumulate`]); windows
/// ([`Window`](crate::Window)) are the other kind of one-sided memory.
///
/// # Examples
///
/// ```
/// use bsplib::{Area, LockKind};
/// let r = bsplib::run(3, |bsp| {
///     let x = Area::<u64>::new(bsp, 1);
///     bsp.push_reg(&x)?;
///     bsp.rma().init()?;
///     // Every process adds its pid + 1 to process 0's x, under the lock.
///     let mut l = bsp.rma().lock(0, &x, LockKind::Exclusive)?;
///     let v = l.read(0, 1)?[0];
///     l.put(0, &[v + l.bsp().pid() as u64 + 1])?;
///     l.unlock()?;
///     bsp.rma().term()?;
///     Ok(x.to_vec(bsp)[0])
/// })?;
/// assert_eq!(r[0], 6);
/// # Ok::<(), bsplib::Error>(())
/// ```
pub struct Rma<'a> {
    pub(crate) bsp: &'a mut Bsp,
}

impl std::fmt::Debug for Rma<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rma").finish_non_exhaustive()
    }
}
