//! The element types of an accumulate: [`ElemType`] (the ids, the C
//! constants), the [`ValueIndex`] pairs of `MinLoc` / `MaxLoc`, and the
//! sealed trait [`Element`] of the Rust types.

use bytemuck::{Pod, Zeroable};

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

    pub(super) fn is_pair(self) -> bool {
        (self as u8) >= ElemType::I32I32 as u8
    }

    pub(super) fn is_integer(self) -> bool {
        (self as u8) < ElemType::F32 as u8
    }
}

/// A value with an index, the element of [`Op::MinLoc`](super::Op::MinLoc)
/// and [`Op::MaxLoc`](super::Op::MaxLoc) (MPI's `MINLOC` / `MAXLOC`
/// pairs). Implemented as an [`Element`] for `(i32, i32)`, `(f32, i32)`, `(i64, i64)` and `(f64,
/// i64)`: pairs without padding, laid out as the C structs `bsp_2int`,
/// `bsp_float_int`, `bsp_2int64` and `bsp_double_int64` of `bsp_rma.h`.
///
/// # Examples
///
/// ```
/// use bsplib::{rma::ValueIndex, Op};
/// // Where is the global minimum, and which process has it?
/// let r = bsplib::run(3, |bsp| {
///     let best = bsplib::Area::from_vec(bsp, vec![ValueIndex { value: f64::INFINITY, index: -1i64 }]);
///     bsp.push_reg(&best)?;
///     bsp.sync()?;
///     let mine = ValueIndex { value: (bsp.pid() as f64 - 1.0).abs(), index: bsp.pid() as i64 };
///     bsp.accumulate(0, &best, 0, &[mine], Op::MinLoc)?;
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

/// An element type of [`Bsp::accumulate`](crate::Bsp::accumulate): the
/// primitive integers and floats, and four [`ValueIndex`] pairs. Sealed.
///
/// # Examples
///
/// Code generic over the element type:
///
/// ```
/// use bsplib::{rma::Element, Op};
/// fn add_into_zero<T: Element>(bsp: &bsplib::Bsp, x: &[T], area: &bsplib::Area<T>) -> Result<(), bsplib::Error> {
///     bsp.accumulate(0, area, 0, x, Op::Sum)
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
