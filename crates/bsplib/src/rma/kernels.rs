//! The kernels of an accumulate: `combine`, element by element, for
//! every element type and operator.

use super::{ElemType, Op, ValueIndex};

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
