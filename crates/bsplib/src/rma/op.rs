//! The combining operators of an accumulate ([`Op`]): their ids (the C
//! constants), names, and the element types each is defined on.

use super::ElemType;

/// A combining operator of [`Bsp::accumulate`](crate::Bsp::accumulate)
/// (C: `BSP_SUM` ... in `bsp_rma.h`, whose values are these
/// discriminants).
///
/// Where each is defined: `Sum`, `Product`, `Min`, `Max` on integers and
/// floats; the bitwise and logical operators on integers; `Replace` on
/// every element type; `MinLoc`, `MaxLoc` on
/// [`ValueIndex`](super::ValueIndex) pairs only.
///
/// # Examples
///
/// ```
/// use bsplib::{rma::ElemType, Op};
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
    /// index ([`ValueIndex`](super::ValueIndex) pairs only; a NaN
    /// contribution never wins).
    MinLoc = 11,
    /// The pair with the larger value; on equal values, the smaller
    /// index ([`ValueIndex`](super::ValueIndex) pairs only).
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
