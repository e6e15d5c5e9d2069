//! The byte-level collectives behind `bsp_level1.h`, the C header
//! compatible with the Oxford BSP toolset's level-1 library (the C side is
//! `bsplib-c`'s `level1.rs`).
//!
//! Each function is one collective of [`Bsp`]'s (one superstep, ending it
//! like [`Bsp::sync`]) run under the C function's name, so that its errors
//! and the descriptors its processes compare name the call the program
//! made (`bsp_fold`, `bsp_sumD`, ...). Arguments are the C ones widened to
//! `i64`: a negative `nbytes` or a root outside `0..p` is an error at the
//! call, as for the core primitives. `call` must be one of the names of
//! `bsp_level1.h` (anything else panics).

use std::ffi::{c_int, c_void};

use super::{Op, NAMES};
use crate::bsp::Bsp;
use crate::error::Error;
use crate::process::Loc;

/// A C operator of `bsp_fold` and `bsp_scan`: `op(res, left, right,
/// &nbytes)` stores `left ⊕ right` (each `nbytes` bytes) at `res`.
pub type FoldOp = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void, *mut c_int);

/// The operator of a typed reduction (`bsp_sumI` ... `bsp_any`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Typed {
    /// `bsp_sum*`: `a + b` (wrapping for `int`).
    Sum,
    /// `bsp_product*`: `a * b` (wrapping for `int`).
    Product,
    /// `bsp_min*`.
    Min,
    /// `bsp_max*`.
    Max,
    /// `bsp_all`: 1 if every value is non-zero, else 0.
    All,
    /// `bsp_any`: 1 if some value is non-zero, else 0.
    Any,
}

impl Typed {
    /// The operator id the descriptors compare.
    fn id(self) -> u64 {
        match self {
            Typed::Sum => Op::Sum.id(),
            Typed::Product => Op::Product.id(),
            Typed::Min => Op::Min.id(),
            Typed::Max => Op::Max.id(),
            Typed::All => 100,
            Typed::Any => 101,
        }
    }
}

/// The index of `call` in [`NAMES`].
fn kind(call: &'static str) -> usize {
    NAMES
        .iter()
        .position(|n| *n == call)
        .unwrap_or_else(|| panic!("{call} is not a level-1 collective"))
}

/// Checks `nbytes` (not negative), `root` (in `0..p`, when given) and
/// that the pointers read or written are not null.
fn check(
    bsp: &Bsp,
    call: &'static str,
    root: Option<i64>,
    nbytes: i64,
    pointers: &[(*const c_void, usize, &'static str)],
    loc: Loc,
) -> Result<(usize, usize), Error> {
    let p = bsp.process();
    p.check_running(call, loc)?;
    let n = p.check_nonneg(nbytes, "nbytes", call, loc)?;
    let r = match root {
        Some(r) => p.check_pid(r, call, loc)?,
        None => 0,
    };
    for &(ptr, times, what) in pointers {
        p.check_pointer(ptr, n.saturating_mul(times), what, call, loc)?;
    }
    Ok((n, r))
}

/// `len` bytes at `ptr` (empty for `len == 0`, whatever `ptr`).
///
/// # Safety
///
/// For `len > 0`, `ptr` is readable for `len` bytes.
unsafe fn bytes<'a>(ptr: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(ptr.cast(), len) }
    }
}

/// Copies `data` to `dst` (which may overlap it).
///
/// # Safety
///
/// For a non-empty `data`, `dst` is writable for `data.len()` bytes.
unsafe fn store(data: &[u8], dst: *mut c_void) {
    if !data.is_empty() {
        // SAFETY: the caller's contract; `copy` allows overlap.
        unsafe { std::ptr::copy(data.as_ptr(), dst.cast(), data.len()) }
    }
}

/// `bsp_bcast(root, src, dst, nbytes)`: root's `nbytes` at `src` into
/// every process's `dst` (the root's too; `src` and `dst` may be the same
/// buffer; `src` is read on the root only).
///
/// # Safety
///
/// On the root `src` is readable, on every process `dst` writable, for
/// `nbytes` bytes.
///
/// # Errors
///
/// [`ErrorKind::Negative`](crate::ErrorKind::Negative), [`ErrorKind::PidOutOfRange`](crate::ErrorKind::PidOutOfRange),
/// [`ErrorKind::NullPointer`](crate::ErrorKind::NullPointer) at the call; as for [`Collectives::broadcast`](crate::Collectives::broadcast).
pub unsafe fn bcast(
    bsp: &mut Bsp,
    call: &'static str,
    root: i64,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: i64,
    loc: Loc,
) -> Result<(), Error> {
    let me = bsp.pid();
    let from = if root == me as i64 { src } else { dst };
    let (n, r) = check(
        bsp,
        call,
        Some(root),
        nbytes,
        &[(from, 1, "src"), (dst, 1, "dst")],
        loc,
    )?;
    // SAFETY: the caller's contract.
    let mut data = unsafe { bytes(if r == me { src } else { dst }, n) }.to_vec();
    bsp.broadcast_as(kind(call), r, &mut data, loc)?;
    // SAFETY: the caller's contract.
    unsafe { store(&data, dst) };
    Ok(())
}

/// `bsp_gather(root, src, dst, nbytes)`: process `i`'s `nbytes` at `src`
/// land at byte `i·nbytes` of the root's `dst` (`p·nbytes` bytes; `dst` is
/// written on the root only).
///
/// # Safety
///
/// `src` is readable for `nbytes` bytes; on the root `dst` is writable for
/// `p·nbytes`.
///
/// # Errors
///
/// As for [`bcast`].
pub unsafe fn gather(
    bsp: &mut Bsp,
    call: &'static str,
    root: i64,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: i64,
    loc: Loc,
) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let times = if root == me as i64 { p } else { 0 };
    let (n, r) = check(
        bsp,
        call,
        Some(root),
        nbytes,
        &[(src, 1, "src"), (dst, times, "dst")],
        loc,
    )?;
    // SAFETY: the caller's contract.
    let mine = unsafe { bytes(src, n) }.to_vec();
    if let Some(all) = bsp.gather_to_as(Some(r), &mine, kind(call), 0, loc)? {
        // SAFETY: the caller's contract (this is the root).
        unsafe { store(&all, dst) };
    }
    Ok(())
}

/// `bsp_scatter(root, src, dst, nbytes)`: bytes `i·nbytes ..` of the
/// root's `src` (`p·nbytes` bytes, read on the root only) into process
/// `i`'s `dst`.
///
/// # Safety
///
/// On the root `src` is readable for `p·nbytes` bytes; `dst` is writable
/// for `nbytes`.
///
/// # Errors
///
/// As for [`bcast`].
pub unsafe fn scatter(
    bsp: &mut Bsp,
    call: &'static str,
    root: i64,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: i64,
    loc: Loc,
) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let times = if root == me as i64 { p } else { 0 };
    let (n, r) = check(
        bsp,
        call,
        Some(root),
        nbytes,
        &[(src, times, "src"), (dst, 1, "dst")],
        loc,
    )?;
    // SAFETY: the caller's contract (the root's source).
    let all = (r == me).then(|| unsafe { bytes(src, n * p) }.to_vec());
    let mut mine = vec![0u8; n];
    bsp.scatter_as(kind(call), r, all.as_deref(), &mut mine, loc)?;
    // SAFETY: the caller's contract.
    unsafe { store(&mine, dst) };
    Ok(())
}

/// `bsp_exchange(src, dst, nbytes)`, the total exchange: block `j` (bytes
/// `j·nbytes ..`) of `src` goes to process `j`, where it becomes block `i`
/// of `dst` for the sender `i`. Both buffers hold `p·nbytes` bytes.
///
/// # Safety
///
/// `src` is readable and `dst` writable for `p·nbytes` bytes.
///
/// # Errors
///
/// As for [`bcast`] (no root).
pub unsafe fn exchange(
    bsp: &mut Bsp,
    call: &'static str,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: i64,
    loc: Loc,
) -> Result<(), Error> {
    let p = bsp.nprocs();
    let (n, _) = check(
        bsp,
        call,
        None,
        nbytes,
        &[(src, p, "src"), (dst, p, "dst")],
        loc,
    )?;
    // SAFETY: the caller's contract.
    let s = unsafe { bytes(src, n * p) }.to_vec();
    let mut d = vec![0u8; n * p];
    bsp.all_to_all_as(kind(call), &s, &mut d, loc)?;
    // SAFETY: the caller's contract.
    unsafe { store(&d, dst) };
    Ok(())
}

/// A buffer of `n` bytes aligned for any C type (16 bytes).
fn aligned(n: usize) -> Vec<u128> {
    vec![0u128; n.div_ceil(16).max(1)]
}

/// `bsp_fold(op, src, dst, nbytes)` (`prefix` false): every process's
/// `dst` gets `x0 ⊕ x1 ⊕ … ⊕ x(p-1)`, `x_i` being process `i`'s `nbytes`
/// at `src`, combined in pid order from the left with `op(res, left,
/// right, &nbytes)`; `bsp_scan` (`prefix` true): process `i` gets `x0 ⊕ …
/// ⊕ xi`. `src` and `dst` may be the same buffer. The operator's three
/// buffers are distinct, 16-byte aligned copies.
///
/// # Safety
///
/// `src` is readable and `dst` writable for `nbytes` bytes; `op` stores
/// at most `nbytes` bytes at `res` and makes no BSPlib call.
///
/// # Errors
///
/// As for [`bcast`] (no root; operators are not compared across
/// processes).
#[allow(clippy::too_many_arguments)]
pub unsafe fn fold(
    bsp: &mut Bsp,
    call: &'static str,
    op: FoldOp,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: i64,
    prefix: bool,
    loc: Loc,
) -> Result<(), Error> {
    let (n, _) = check(
        bsp,
        call,
        None,
        nbytes,
        &[(src, 1, "src"), (dst, 1, "dst")],
        loc,
    )?;
    let me = bsp.pid();
    // SAFETY: the caller's contract.
    let mine = unsafe { bytes(src, n) }.to_vec();
    let all = bsp
        .gather_to_as(None, &mine, kind(call), 0, loc)?
        .unwrap_or_default();
    let last = if prefix { me } else { bsp.nprocs() - 1 };
    let load = |q: usize| {
        let mut b = aligned(n);
        bytemuck::cast_slice_mut::<u128, u8>(&mut b)[..n].copy_from_slice(&all[q * n..(q + 1) * n]);
        b
    };
    let mut acc = load(0);
    for q in 1..=last {
        let mut right = load(q);
        let mut res = aligned(n);
        let mut size = c_int::try_from(n).unwrap_or(c_int::MAX);
        // SAFETY: three live, distinct buffers of at least `n` bytes; the
        // caller's contract for `op`.
        unsafe {
            op(
                res.as_mut_ptr().cast(),
                acc.as_mut_ptr().cast(),
                right.as_mut_ptr().cast(),
                &mut size,
            )
        };
        acc = res;
    }
    // SAFETY: the caller's contract.
    unsafe { store(&bytemuck::cast_slice::<u128, u8>(&acc)[..n], dst) };
    Ok(())
}

/// The element types of the typed reductions: `int` (`I`), `float` (`R`)
/// and `double` (`D`).
pub trait Element: super::Reducible {
    /// Whether the value counts as true (`bsp_all`, `bsp_any`).
    fn truth(self) -> bool;
    /// `1` or `0`.
    fn from_bool(b: bool) -> Self;
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn truth(self) -> bool {
                self != (0 as $t)
            }
            fn from_bool(b: bool) -> Self {
                (b as u8) as $t
            }
        }
    )*};
}
element!(i32, f32, f64);

/// The typed reductions: `bsp_sumI(x)` ... `bsp_maxD_prefix(x)`,
/// `bsp_all(b)`, `bsp_any(b)`. Returns `x0 ⊕ … ⊕ x(p-1)` (or, with
/// `prefix`, `x0 ⊕ … ⊕ xi` on process `i`), combined in pid order from the
/// left; the operator is named in the descriptor, so processes that call
/// different reductions are caught.
///
/// # Errors
///
/// As for [`Collectives::all_reduce`](crate::Collectives::all_reduce).
pub fn reduce<T: Element>(
    bsp: &mut Bsp,
    call: &'static str,
    x: T,
    op: Typed,
    prefix: bool,
    loc: Loc,
) -> Result<T, Error> {
    let x = match op {
        Typed::All | Typed::Any => T::from_bool(x.truth()),
        _ => x,
    };
    let f = move |a: &T, b: &T| -> T {
        let named = match op {
            Typed::Sum => Op::Sum,
            Typed::Product => Op::Product,
            Typed::Min => Op::Min,
            Typed::Max => Op::Max,
            Typed::All => return T::from_bool(a.truth() && b.truth()),
            Typed::Any => return T::from_bool(a.truth() || b.truth()),
        };
        T::apply(named, *a, *b).unwrap_or(*a)
    };
    let k = kind(call);
    let r = if prefix {
        bsp.prefix(&[x], op.id(), k, true, &f, loc)?
    } else {
        bsp.fold(None, &[x], op.id(), k, &f, loc)?
    };
    Ok(r.and_then(|v| v.first().copied()).unwrap_or(x))
}
