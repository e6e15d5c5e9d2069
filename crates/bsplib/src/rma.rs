//! One-sided extensions from MPI-2 (issue 12; design in `ONE_SIDED.md`
//! beside this file): **deterministic accumulate** in the fence epoch,
//! that is, in the superstep.
//!
//! [`Bsp::accumulate`] combines elements into a registered area of any
//! process with an [`Op`] (sum, product, min, max, bitwise and logical
//! and/or/xor, replace, min/max with location). The contributions land
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
//! use bsplib::rma::Op;
//! let bins = bsplib::run(3, |bsp| {
//!     let hist = bsplib::Area::<u64>::new(bsp, 4);
//!     bsp.push_reg(&hist)?;
//!     bsp.sync()?;
//!     for v in [bsp.pid(), 3] {
//!         bsp.accumulate(0, &[1u64], &hist, v, Op::Sum)?;
//!     }
//!     bsp.sync()?;
//!     Ok(hist.as_slice(bsp).to_vec())
//! })?;
//! assert_eq!(bins[0], vec![1, 1, 1, 3]);
//! # Ok::<(), bsplib::Error>(())
//! ```

use std::collections::HashMap;

use bytemuck::{Pod, Zeroable};

use crate::area::Area;
use crate::bsp::{pid_arg, Bsp};
use crate::drma::BULK_FROM;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::mailbox::DATA;
use crate::mem::{Records, PUT_BULK};
use crate::process::{Loc, Process};
use crate::registration::Registry;
use crate::superstep::own_range;

/// Flag of a put-section record's slot word: an accumulate record
/// `[slot | ACCUMULATE][offset][len][type | op << 8 | line << 32]
/// [payload]`. No registration slot has this bit (nor `VECTOR`'s, bit
/// 62, nor `DESCRIPTOR`'s, bit 63).
pub(crate) const ACCUMULATE: u64 = 1 << 61;

/// Bytes of an accumulate record's header.
const HEADER: usize = 32;

/// A combining operator of [`Bsp::accumulate`] (C: `BSP_SUM` ... in
/// `bsp_rma.h`, whose values are these discriminants).
///
/// Where each is defined: `Sum`, `Product`, `Min`, `Max` on integers and
/// floats; the bitwise and logical operators on integers; `Replace` on
/// every element type; `MinLoc`, `MaxLoc` on [`ValueIndex`] pairs only.
///
/// # Examples
///
/// ```
/// use bsplib::rma::{ElemType, Op};
/// assert!(Op::Sum.is_defined_on(ElemType::F64));
/// assert!(!Op::BitXor.is_defined_on(ElemType::F64));
/// assert!(Op::MinLoc.is_defined_on(ElemType::F64I64));
/// assert_eq!(Op::LogicalOr.name(), "logical or");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Op {
    /// `a + b` (wrapping for integers).
    Sum = 0,
    /// `a * b` (wrapping for integers).
    Product = 1,
    /// The smaller (floats: `f64::min`, which ignores a NaN operand).
    Min = 2,
    /// The larger (floats: `f64::max`).
    Max = 3,
    /// Bitwise and (integers).
    BitAnd = 4,
    /// Bitwise or (integers).
    BitOr = 5,
    /// Bitwise exclusive or (integers).
    BitXor = 6,
    /// `1` if both are non-zero, else `0` (integers).
    LogicalAnd = 7,
    /// `1` if either is non-zero, else `0` (integers).
    LogicalOr = 8,
    /// `1` if exactly one is non-zero, else `0` (integers).
    LogicalXor = 9,
    /// The contribution replaces the value (every type).
    Replace = 10,
    /// The pair with the smaller value; on equal values, the smaller
    /// index ([`ValueIndex`] pairs only; a NaN contribution never wins).
    MinLoc = 11,
    /// The pair with the larger value; on equal values, the smaller
    /// index ([`ValueIndex`] pairs only).
    MaxLoc = 12,
}

const OPS: [Op; 13] = [
    Op::Sum,
    Op::Product,
    Op::Min,
    Op::Max,
    Op::BitAnd,
    Op::BitOr,
    Op::BitXor,
    Op::LogicalAnd,
    Op::LogicalOr,
    Op::LogicalXor,
    Op::Replace,
    Op::MinLoc,
    Op::MaxLoc,
];

impl Op {
    /// Every operator, in id order.
    pub const ALL: [Op; 13] = OPS;

    /// Its id in a collective's descriptor (the discriminant plus one: 0
    /// stands for a closure).
    pub(crate) fn id(self) -> u64 {
        self as u64 + 1
    }

    /// The operator whose id (discriminant, the C constant) is `id`.
    pub fn from_id(id: i64) -> Option<Op> {
        usize::try_from(id).ok().and_then(|i| OPS.get(i).copied())
    }

    /// Its name in error messages (`sum`, `bitwise and`, `min with
    /// location`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Product => "product",
            Op::Min => "min",
            Op::Max => "max",
            Op::BitAnd => "bitwise and",
            Op::BitOr => "bitwise or",
            Op::BitXor => "bitwise xor",
            Op::LogicalAnd => "logical and",
            Op::LogicalOr => "logical or",
            Op::LogicalXor => "logical xor",
            Op::Replace => "replace",
            Op::MinLoc => "min with location",
            Op::MaxLoc => "max with location",
        }
    }

    /// Whether the operator is defined on elements of type `ty` (see the
    /// type's docs).
    pub fn is_defined_on(self, ty: ElemType) -> bool {
        match self {
            Op::Replace => true,
            Op::MinLoc | Op::MaxLoc => ty.is_pair(),
            Op::Sum | Op::Product | Op::Min | Op::Max => !ty.is_pair(),
            _ => ty.is_integer(),
        }
    }
}

/// The element type of an accumulate (C: `BSP_INT8` ... in `bsp_rma.h`,
/// whose values are these discriminants). The pairs are
/// [`ValueIndex`]`<value, index>`.
///
/// # Examples
///
/// ```
/// use bsplib::rma::{ElemType, Element, ValueIndex};
/// assert_eq!(<f64 as Element>::TYPE, ElemType::F64);
/// assert_eq!(<ValueIndex<f32, i32> as Element>::TYPE, ElemType::F32I32);
/// assert_eq!(ElemType::F64I64.size(), 16);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ElemType {
    /// `i8` (C `int8_t`).
    I8 = 0,
    /// `i16`.
    I16 = 1,
    /// `i32` (C `int`).
    I32 = 2,
    /// `i64` (C `long` on LP64).
    I64 = 3,
    /// `u8`.
    U8 = 4,
    /// `u16`.
    U16 = 5,
    /// `u32`.
    U32 = 6,
    /// `u64`.
    U64 = 7,
    /// `f32` (C `float`).
    F32 = 8,
    /// `f64` (C `double`).
    F64 = 9,
    /// `ValueIndex<i32, i32>` (MPI's `MPI_2INT`).
    I32I32 = 10,
    /// `ValueIndex<f32, i32>` (MPI's `MPI_FLOAT_INT`).
    F32I32 = 11,
    /// `ValueIndex<i64, i64>`.
    I64I64 = 12,
    /// `ValueIndex<f64, i64>`.
    F64I64 = 13,
}

const TYPES: [ElemType; 14] = [
    ElemType::I8,
    ElemType::I16,
    ElemType::I32,
    ElemType::I64,
    ElemType::U8,
    ElemType::U16,
    ElemType::U32,
    ElemType::U64,
    ElemType::F32,
    ElemType::F64,
    ElemType::I32I32,
    ElemType::F32I32,
    ElemType::I64I64,
    ElemType::F64I64,
];

impl ElemType {
    /// Every element type, in id order.
    pub const ALL: [ElemType; 14] = TYPES;

    /// The type whose id (discriminant, the C constant) is `id`.
    pub fn from_id(id: i64) -> Option<ElemType> {
        usize::try_from(id).ok().and_then(|i| TYPES.get(i).copied())
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        use ElemType as T;
        match self {
            T::I8 | T::U8 => 1,
            T::I16 | T::U16 => 2,
            T::I32 | T::U32 | T::F32 => 4,
            T::I64 | T::U64 | T::F64 | T::I32I32 | T::F32I32 => 8,
            T::I64I64 | T::F64I64 => 16,
        }
    }

    /// Its name in error messages (the Rust type).
    pub fn name(self) -> &'static str {
        use ElemType as T;
        match self {
            T::I8 => "i8",
            T::I16 => "i16",
            T::I32 => "i32",
            T::I64 => "i64",
            T::U8 => "u8",
            T::U16 => "u16",
            T::U32 => "u32",
            T::U64 => "u64",
            T::F32 => "f32",
            T::F64 => "f64",
            T::I32I32 => "ValueIndex<i32, i32>",
            T::F32I32 => "ValueIndex<f32, i32>",
            T::I64I64 => "ValueIndex<i64, i64>",
            T::F64I64 => "ValueIndex<f64, i64>",
        }
    }

    fn is_pair(self) -> bool {
        (self as u8) >= ElemType::I32I32 as u8
    }

    fn is_integer(self) -> bool {
        (self as u8) < ElemType::F32 as u8
    }
}

/// A value with an index, the element of [`Op::MinLoc`] and
/// [`Op::MaxLoc`] (MPI's `MINLOC` / `MAXLOC` pairs). Implemented as an
/// [`Element`] for `(i32, i32)`, `(f32, i32)`, `(i64, i64)` and `(f64,
/// i64)`: pairs without padding, laid out as the C structs `bsp_2int`,
/// `bsp_float_int`, `bsp_2int64` and `bsp_double_int64` of `bsp_rma.h`.
///
/// # Examples
///
/// ```
/// use bsplib::rma::{Op, ValueIndex};
/// // Where is the global minimum, and which process has it?
/// let r = bsplib::run(3, |bsp| {
///     let best = bsplib::Area::from_vec(bsp, vec![ValueIndex { value: f64::INFINITY, index: -1i64 }]);
///     bsp.push_reg(&best)?;
///     bsp.sync()?;
///     let mine = ValueIndex { value: (bsp.pid() as f64 - 1.0).abs(), index: bsp.pid() as i64 };
///     bsp.accumulate(0, &[mine], &best, 0, Op::MinLoc)?;
///     bsp.sync()?;
///     Ok(best.as_slice(bsp)[0].index)
/// })?;
/// assert_eq!(r[0], 1);
/// # Ok::<(), bsplib::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
#[repr(C)]
pub struct ValueIndex<V, I> {
    /// The value compared.
    pub value: V,
    /// Its index (a position, a process id, ...).
    pub index: I,
}

macro_rules! pair_pod {
    ($($v:ty, $i:ty);*) => {$(
        // SAFETY: `repr(C)` with two fields of the same size and
        // alignment: no padding; every bit pattern of the fields is valid,
        // and all-zero is valid.
        unsafe impl Zeroable for ValueIndex<$v, $i> {}
        // SAFETY: as above; `Copy` and `'static`.
        unsafe impl Pod for ValueIndex<$v, $i> {}
    )*};
}
pair_pod!(i32, i32; f32, i32; i64, i64; f64, i64);

mod sealed {
    pub trait Sealed {}
}

/// An element type of [`Bsp::accumulate`]: the primitive integers and
/// floats, and four [`ValueIndex`] pairs. Sealed.
///
/// # Examples
///
/// Code generic over the element type:
///
/// ```
/// use bsplib::rma::{Element, Op};
/// fn add_into_zero<T: Element>(bsp: &bsplib::Bsp, x: &[T], area: &bsplib::Area<T>) -> Result<(), bsplib::Error> {
///     bsp.accumulate(0, x, area, 0, Op::Sum)
/// }
/// let r = bsplib::run(2, |bsp| {
///     let a = bsplib::Area::<u8>::new(bsp, 2);
///     bsp.push_reg(&a)?;
///     bsp.sync()?;
///     add_into_zero(bsp, &[1u8, 2], &a)?;
///     bsp.sync()?;
///     Ok(a.as_slice(bsp).to_vec())
/// })?;
/// assert_eq!(r[0], [2, 4]);
/// # Ok::<(), bsplib::Error>(())
/// ```
pub trait Element: Pod + sealed::Sealed {
    /// Its type id.
    const TYPE: ElemType;
}

macro_rules! element {
    ($($t:ty => $id:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const TYPE: ElemType = ElemType::$id;
        }
    )*};
}
element!(
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f32 => F32, f64 => F64,
    ValueIndex<i32, i32> => I32I32, ValueIndex<f32, i32> => F32I32,
    ValueIndex<i64, i64> => I64I64, ValueIndex<f64, i64> => F64I64,
);

// ----- the safe API ----------------------------------------------------------

impl Bsp {
    /// Accumulate (MPI's `MPI_Accumulate`, deterministic): combines `src`
    /// element by element into the area registered on process `pid` in
    /// the slot of `dst`, from element `offset`: `dst[offset + i] =
    /// dst[offset + i] op src[i]`. `src` is copied now; the combination
    /// happens at the next sync, **after the superstep's gets have read
    /// and its puts have written**, in a fixed order: origin by origin in
    /// increasing pid order, each origin's accumulates in issue order. So
    /// floating-point results are the same on every engine and every run.
    /// Each element's combination is atomic (only the owner writes its
    /// memory during the sync). An accumulate to oneself also lands at
    /// the sync. Design: `ONE_SIDED.md` in the source tree.
    ///
    /// Every accumulate into one area in one superstep, from any process,
    /// must use the same operator and element type.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AccumulateOperator`] if `op` is not defined on `T`
    /// (see [`Op`]); [`ErrorKind::AccumulateMismatch`] if this process
    /// already accumulated into that area of `pid` in this superstep with
    /// another operator or type (from two processes, the owner reports it
    /// at the sync); [`ErrorKind::ForeignArea`];
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::NotRegistered`] if
    /// `dst` has no live slot here; [`ErrorKind::RemoteNull`] if `pid`
    /// registered `NULL` in it; [`ErrorKind::OutOfBounds`] if the
    /// elements do not fit the extent registered on `pid`. Any error stops
    /// the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes (and a 32-byte header) towards this
    /// process's outgoing and `pid`'s incoming h-relation, and `src.len()`
    /// operations of `pid`'s work in the sync.
    ///
    /// # Examples
    ///
    /// The MPI-2 example `B(map(i)) += A(i)`: each process adds its
    /// elements into the global array `B`, distributed in blocks of `m`.
    ///
    /// ```
    /// use bsplib::rma::Op;
    /// let m = 4;
    /// let b = bsplib::run(2, move |bsp| {
    ///     let (p, s) = (bsp.nprocs(), bsp.pid());
    ///     let b = bsplib::Area::<f64>::new(bsp, m);
    ///     bsp.push_reg(&b)?;
    ///     bsp.sync()?;
    ///     for i in 0..m {
    ///         let a = (s * m + i) as f64;
    ///         let j = (s * m + i) * 3 % (p * m); // map(i)
    ///         bsp.accumulate(j / m, &[a], &b, j % m, Op::Sum)?;
    ///     }
    ///     bsp.sync()?;
    ///     Ok(b.as_slice(bsp).to_vec())
    /// })?;
    /// assert_eq!(b.concat(), [0.0, 3.0, 6.0, 1.0, 4.0, 7.0, 2.0, 5.0]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn accumulate<T: Element>(
        &self,
        pid: usize,
        src: &[T],
        dst: &Area<T>,
        offset: usize,
        op: Op,
    ) -> Result<(), Error> {
        self.accumulate_at(pid, src, dst, offset, op, Some(SourceLocation::caller()))
    }

    /// [`accumulate`](Bsp::accumulate) at `loc` (the one-sided epochs'
    /// guards).
    pub(crate) fn accumulate_at<T: Element>(
        &self,
        pid: usize,
        src: &[T],
        dst: &Area<T>,
        offset: usize,
        op: Op,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        const CALL: &str = "bsp_accumulate";
        let mut p = self.process();
        self.own(&p, dst, CALL, loc)?;
        let size = std::mem::size_of::<T>();
        let offset = offset
            .checked_mul(size)
            .and_then(|b| i64::try_from(b).ok())
            .ok_or_else(|| p.fail(ErrorKind::Overflow { what: "offset" }, CALL, loc))?;
        let count = i64::try_from(src.len())
            .map_err(|_| p.fail(ErrorKind::Overflow { what: "count" }, CALL, loc))?;
        // SAFETY: `src` is a live slice of `count` elements of `T::TYPE`;
        // `accumulate` copies it before returning.
        unsafe {
            p.accumulate(
                pid_arg(pid),
                src.as_ptr().cast(),
                dst.addr(),
                offset,
                count,
                T::TYPE,
                op,
                CALL,
                loc,
            )
        }
    }
}

// ----- the core: the origin's checks and the record ------------------------

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
    /// The owner, during a sync: the accumulate records to combine after
    /// the puts, `(sender, byte offset in its put section)`, in order.
    pending: Vec<(usize, usize)>,
    seen: Vec<SeenSlot>,
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

impl Process {
    /// `bsp_accumulate`: `count` elements of type `ty` read from `src`
    /// now, combined with `op` at the sync into byte `offset` of the area
    /// registered on `pid` in the slot of `dst`. One record
    /// `[slot | ACCUMULATE][offset][len][type | op << 8 | line << 32]
    /// [payload]` in the put section, checked again by the owner.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `count * ty.size()` bytes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn accumulate(
        &mut self,
        pid: i64,
        src: *const u8,
        dst: usize,
        offset: i64,
        count: i64,
        ty: ElemType,
        op: Op,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.note_transfer(call, loc)?;
        let pid = self.check_pid(pid, call, loc)?;
        let offset = self.check_nonneg(offset, "offset", call, loc)?;
        let count = self.check_nonneg(count, "count", call, loc)?;
        if !op.is_defined_on(ty) {
            return Err(self.fail(
                ErrorKind::AccumulateOperator {
                    op: op.name(),
                    ty: ty.name(),
                },
                call,
                loc,
            ));
        }
        let nbytes = count
            .checked_mul(ty.size())
            .ok_or_else(|| self.fail(ErrorKind::Overflow { what: "count" }, call, loc))?;
        if nbytes == 0 {
            return Ok(());
        }
        self.check_pointer(src, nbytes, "src", call, loc)?;
        let slot = self.resolve(pid, dst, offset, nbytes, call, loc)?;
        if self.epochs.routing() && self.epoch_route(pid, slot, call, loc)? {
            // SAFETY: the caller vouches for `nbytes` bytes at `src`.
            return unsafe {
                self.epoch_accumulate(pid, slot, offset, src, nbytes, ty, op, call, loc)
            };
        }
        let d = desc(ty, op);
        self.note_issued(pid, slot, d, call, loc)?;
        if self.check.is_some() {
            // For fence hints' NO_PUT (not compared for overlaps).
            let note = slot | crate::check::ACCUMULATE_NOTE;
            let whole = crate::mem::Shape::contiguous(nbytes);
            self.check_note_put(pid, note, offset, whole, call, loc);
        }
        let line = loc.map_or(0, |l| l.line()) as usize;
        if nbytes >= BULK_FROM {
            // `processes`: the payload goes into the top of our channel
            // now, where the owner reads it in place (one copy fewer).
            // SAFETY: the caller vouches for `nbytes` bytes at `src`.
            if let Some(at) = unsafe { self.stage_bulk(src, nbytes) } {
                self.dest(pid).puts.push_words([
                    (slot | ACCUMULATE) as usize,
                    offset,
                    nbytes | PUT_BULK,
                    d as usize | line << 32,
                    at,
                ]);
                self.flags |= DATA;
                return Ok(());
            }
        }
        let header = [
            (slot | ACCUMULATE) as usize,
            offset,
            nbytes,
            d as usize | line << 32,
        ];
        let room = self.dest(pid).puts.try_reserve_record(nbytes + 8);
        room.map_err(|bytes| self.fail(ErrorKind::OutOfMemory { bytes }, call, loc))?;
        // SAFETY: the caller vouches for `nbytes` bytes at `src`.
        unsafe { self.dest(pid).puts.push_record4(header, src, nbytes) };
        self.flags |= DATA;
        Ok(())
    }

    /// The origin's check: this process accumulates into one (target,
    /// slot) with one operator and type per superstep.
    fn note_issued(
        &mut self,
        pid: usize,
        slot: u64,
        d: u16,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let superstep = self.superstep;
        let state = &mut self.rma;
        if state.superstep != superstep {
            state.superstep = superstep;
            state.issued.clear();
            state.last = None;
        }
        if state.last == Some((pid, slot, d)) {
            return Ok(());
        }
        let (prev, first) = *state.issued.entry((pid, slot)).or_insert((d, loc));
        if prev == d {
            state.last = Some((pid, slot, d));
            return Ok(());
        }
        let detail = format!(
            "this call accumulates with {} into registration slot {slot} of process {pid}, \
             into which this process accumulated with {} earlier in this superstep{}",
            describe(d),
            describe(prev),
            first.map_or(String::new(), |l| format!(" (at {l})")),
        );
        Err(self.fail(ErrorKind::AccumulateMismatch { detail }, call, loc))
    }
}

/// The error of an accumulate record the owner refuses.
fn invalid(sender: usize, detail: String) -> ErrorKind {
    ErrorKind::InvalidRecord {
        what: "accumulate",
        sender,
        detail,
    }
}

fn cut_short(sender: usize) -> ErrorKind {
    invalid(
        sender,
        "is cut short (its length runs past the end of the stream)".into(),
    )
}

impl RmaState {
    /// The first walk of `sender`'s put section (step 5 of the sync, which
    /// writes the puts) met an accumulate record at byte `at`: notes it
    /// for step 5b and returns its bytes (header and padded payload);
    /// `Err` if it does not fit the section.
    pub(crate) fn note_record(
        &mut self,
        puts: Records<'_>,
        at: usize,
        sender: usize,
    ) -> Result<usize, ErrorKind> {
        let len = puts.try_word(at + 16).ok_or_else(|| cut_short(sender))?;
        let bytes = if len & PUT_BULK != 0 {
            HEADER + 8
        } else {
            len.checked_add(HEADER + 7)
                .map(|b| b & !7)
                .ok_or_else(|| cut_short(sender))?
        };
        puts.try_ptr(at, bytes).ok_or_else(|| cut_short(sender))?;
        self.pending.push((sender, at));
        Ok(bytes)
    }

    /// Whether step 5b has records to combine.
    pub(crate) fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Step 5b of the sync, after every put of it was written: combines
    /// the accumulate records noted by [`note_record`](Self::note_record),
    /// in the order they were noted: senders in increasing pid order (the
    /// order step 5 walks them in on every engine), each sender's in
    /// issue order. `section(sender)` is the put section `sender` sent
    /// us, and on `processes` its channel (where large payloads are).
    /// Each record is resolved and checked in our own table.
    pub(crate) fn apply<'a>(
        &mut self,
        reg: &Registry,
        mut section: impl FnMut(usize) -> Option<Section<'a>>,
    ) -> Result<(), ErrorKind> {
        self.seen.clear();
        let pending = std::mem::take(&mut self.pending);
        let mut view: Option<(usize, Section<'a>)> = None;
        let mut result = Ok(());
        for &(sender, at) in &pending {
            let puts = match view {
                Some((s, v)) if s == sender => v,
                _ => match section(sender) {
                    Some(v) => {
                        view = Some((sender, v));
                        v
                    }
                    None => {
                        result = Err(cut_short(sender));
                        break;
                    }
                },
            };
            result = apply_record(reg, &mut self.seen, sender, puts, at);
            if result.is_err() {
                break;
            }
        }
        self.pending = pending;
        self.pending.clear();
        result
    }
}

/// What step 5b reads of one sender: its put section, and on
/// `processes` its channel of the superstep (large payloads).
pub(crate) type Section<'a> = (Records<'a>, Option<Records<'a>>);

/// Combines the accumulate record at byte `at` of `sender`'s put section
/// (noted, so its header is in the view) into our memory.
fn apply_record(
    reg: &Registry,
    seen: &mut Vec<SeenSlot>,
    sender: usize,
    (puts, bulk): Section<'_>,
    at: usize,
) -> Result<(), ErrorKind> {
    let (Some(slot), Some(offset), Some(len), Some(word)) = (
        puts.try_word(at),
        puts.try_word(at + 8),
        puts.try_word(at + 16),
        puts.try_word(at + 24),
    ) else {
        return Err(cut_short(sender));
    };
    let (len, bulk_len) = (len & !PUT_BULK, len & PUT_BULK != 0);
    let d = word as u16;
    let line = (word >> 32) as u32;
    let valid = undesc(d).filter(|(ty, op)| op.is_defined_on(*ty) && (word >> 16) & 0xffff == 0);
    let Some((ty, op)) = valid else {
        return Err(invalid(
            sender,
            format!(
                "names element type and operator {:#x}, which are not a valid pair",
                word & 0xffff_ffff
            ),
        ));
    };
    if len % ty.size() != 0 {
        return Err(invalid(
            sender,
            format!(
                "has {len} bytes, not a whole number of {} elements",
                ty.name()
            ),
        ));
    }
    let slot = slot as u64 & !ACCUMULATE;
    match seen.iter().find(|s| s.slot == slot) {
        None => seen.push(SeenSlot {
            slot,
            desc: d,
            origin: sender,
            line,
        }),
        Some(first) if first.desc != d => {
            return Err(ErrorKind::AccumulateMismatch {
                detail: format!(
                    "process {sender}{} accumulates with {} into registration slot {slot} of this \
                     process, into which process {}{} accumulates with {} in the same superstep",
                    at_line(line),
                    describe(d),
                    first.origin,
                    at_line(first.line),
                    describe(first.desc),
                ),
            })
        }
        Some(_) => {}
    }
    let dst = own_range(reg, "accumulate", sender, slot, offset, len)?;
    let src = if bulk_len {
        // The payload is in the sender's channel (`Process::stage_bulk`).
        let from = puts
            .try_word(at + HEADER)
            .ok_or_else(|| cut_short(sender))?;
        bulk.and_then(|b| b.try_ptr(from, len)).ok_or_else(|| {
            invalid(
                sender,
                format!("names {len} bytes at offset {from} of its channel, which are not in it"),
            )
        })?
    } else {
        puts.try_ptr(at + HEADER, len)
            .ok_or_else(|| cut_short(sender))?
    };
    // SAFETY: `dst` is `len` bytes of memory we registered (resolved and
    // checked in our own table), alive until this sync settles
    // registrations, and written by nobody else now; `src` is `len` bytes
    // of the view, which does not overlap our registered memory (a
    // mailbox or channel of the library's).
    unsafe { combine(ty, op, dst, src, len / ty.size()) };
    Ok(())
}

// ----- the kernels -----------------------------------------------------------

/// `dst[i] = f(dst[i], src[i])` for `n` elements of `T`, neither side
/// necessarily aligned.
///
/// # Safety
///
/// `dst` must be valid for reads and writes and `src` for reads of `n`
/// elements of `T`, not overlapping.
#[inline(always)]
unsafe fn each<T: Copy>(dst: *mut u8, src: *const u8, n: usize, f: impl Fn(T, T) -> T) {
    let (d, s) = (dst.cast::<T>(), src.cast::<T>());
    for i in 0..n {
        // SAFETY: the caller's contract.
        unsafe {
            let a = d.add(i).read_unaligned();
            let b = s.add(i).read_unaligned();
            d.add(i).write_unaligned(f(a, b));
        }
    }
}

macro_rules! int_kernel {
    ($t:ty, $op:expr, $d:expr, $s:expr, $n:expr) => {{
        let b = |x: bool| -> $t { x as $t };
        // SAFETY: forwarded from `combine`'s caller.
        unsafe {
            match $op {
                Op::Sum => each::<$t>($d, $s, $n, |a, c| a.wrapping_add(c)),
                Op::Product => each::<$t>($d, $s, $n, |a, c| a.wrapping_mul(c)),
                Op::Min => each::<$t>($d, $s, $n, |a, c| a.min(c)),
                Op::Max => each::<$t>($d, $s, $n, |a, c| a.max(c)),
                Op::BitAnd => each::<$t>($d, $s, $n, |a, c| a & c),
                Op::BitOr => each::<$t>($d, $s, $n, |a, c| a | c),
                Op::BitXor => each::<$t>($d, $s, $n, |a, c| a ^ c),
                Op::LogicalAnd => each::<$t>($d, $s, $n, |a, c| b(a != 0 && c != 0)),
                Op::LogicalOr => each::<$t>($d, $s, $n, |a, c| b(a != 0 || c != 0)),
                Op::LogicalXor => each::<$t>($d, $s, $n, |a, c| b((a != 0) != (c != 0))),
                Op::Replace => each::<$t>($d, $s, $n, |_, c| c),
                Op::MinLoc | Op::MaxLoc => {}
            }
        }
    }};
}

macro_rules! float_kernel {
    ($t:ty, $op:expr, $d:expr, $s:expr, $n:expr) => {{
        // SAFETY: forwarded from `combine`'s caller.
        unsafe {
            match $op {
                Op::Sum => each::<$t>($d, $s, $n, |a, c| a + c),
                Op::Product => each::<$t>($d, $s, $n, |a, c| a * c),
                Op::Min => each::<$t>($d, $s, $n, <$t>::min),
                Op::Max => each::<$t>($d, $s, $n, <$t>::max),
                Op::Replace => each::<$t>($d, $s, $n, |_, c| c),
                _ => {}
            }
        }
    }};
}

/// `MinLoc` (`less`) or `MaxLoc`: the contribution `c` wins if its value
/// is strictly better, or equal with a smaller index.
fn pick<V: PartialOrd + Copy, I: Ord + Copy>(
    a: ValueIndex<V, I>,
    c: ValueIndex<V, I>,
    less: bool,
) -> ValueIndex<V, I> {
    let better = if less {
        c.value < a.value
    } else {
        c.value > a.value
    };
    if better || (c.value == a.value && c.index < a.index) {
        c
    } else {
        a
    }
}

macro_rules! pair_kernel {
    ($v:ty, $i:ty, $op:expr, $d:expr, $s:expr, $n:expr) => {{
        type P = ValueIndex<$v, $i>;
        // SAFETY: forwarded from `combine`'s caller.
        unsafe {
            match $op {
                Op::MinLoc => each::<P>($d, $s, $n, |a, c| pick(a, c, true)),
                Op::MaxLoc => each::<P>($d, $s, $n, |a, c| pick(a, c, false)),
                Op::Replace => each::<P>($d, $s, $n, |_, c| c),
                _ => {}
            }
        }
    }};
}

/// Combines `n` elements of type `ty` from `src` into `dst` with `op`
/// (which is defined on `ty`: callers check; an undefined pair does
/// nothing).
///
/// # Safety
///
/// As for [`each`], with `T` of size `ty.size()`.
pub(crate) unsafe fn combine(ty: ElemType, op: Op, dst: *mut u8, src: *const u8, n: usize) {
    use ElemType as T;
    match ty {
        T::I8 => int_kernel!(i8, op, dst, src, n),
        T::I16 => int_kernel!(i16, op, dst, src, n),
        T::I32 => int_kernel!(i32, op, dst, src, n),
        T::I64 => int_kernel!(i64, op, dst, src, n),
        T::U8 => int_kernel!(u8, op, dst, src, n),
        T::U16 => int_kernel!(u16, op, dst, src, n),
        T::U32 => int_kernel!(u32, op, dst, src, n),
        T::U64 => int_kernel!(u64, op, dst, src, n),
        T::F32 => float_kernel!(f32, op, dst, src, n),
        T::F64 => float_kernel!(f64, op, dst, src, n),
        T::I32I32 => pair_kernel!(i32, i32, op, dst, src, n),
        T::F32I32 => pair_kernel!(f32, i32, op, dst, src, n),
        T::I64I64 => pair_kernel!(i64, i64, op, dst, src, n),
        T::F64I64 => pair_kernel!(f64, i64, op, dst, src, n),
    }
}
