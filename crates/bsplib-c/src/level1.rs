//! `bsp_level1.h`: the collectives of the Oxford BSP toolset's level-1
//! library (`bsp_bcast`, `bsp_gather`, `bsp_scatter`, `bsp_fold`,
//! `bsp_scan`, the typed reductions `bsp_sumI` ... `bsp_maxD_prefix`,
//! `bsp_all`, `bsp_any`) and the paper's total exchange `bsp_exchange`,
//! over the core's collectives (`bsplib::level1`; design in
//! `crates/bsplib/src/COLLECTIVES.md`).
//!
//! Each is collective (every process calls it in the same superstep with
//! the same root, size and operator) and uses one superstep (`bsp_bcast`
//! of large data: two where the two-phase form is cheaper, on machines
//! with more cores than this one has, see the README): it ends the
//! superstep like `bsp_sync` and returns with the result in place. The
//! caller registers nothing. Misuse stops the run as for the core
//! primitives, naming the C function. The location macros are written in
//! `cbindgen-level1.toml`.

#![allow(non_snake_case, non_camel_case_types)]

use std::ffi::{c_char, c_double, c_float, c_int, c_void};

use bsplib::level1::{self, Typed};
use bsplib::{Error, ErrorKind};

use crate::with_bsp;

/// The operator of `bsp_fold` and `bsp_scan`: `op(res, left, right,
/// &nbytes)` stores `left (+) right` at `res`; the three are distinct,
/// 16-byte aligned buffers of `nbytes` bytes, and `op` makes no BSPlib
/// call. It must be associative; it need not commute.
pub type bsp_fold_op_t = Option<
    unsafe extern "C" fn(
        res: *mut c_void,
        left: *mut c_void,
        right: *mut c_void,
        nbytes: *mut c_int,
    ),
>;

/// `void bsp_bcast(int pid, void *src, void *dst, int nbytes)`: copies
/// the `nbytes` at `src` on process `pid` into `dst` on every process
/// (`pid` too; `src` and `dst` may be the same buffer; `src` is read on
/// `pid` only). One superstep; for large data, two where the two-phase
/// form (scatter, then all-gather) is cheaper.
#[no_mangle]
pub unsafe extern "C" fn bsp_bcast(pid: c_int, src: *mut c_void, dst: *mut c_void, nbytes: c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_bcast_at(pid, src, dst, nbytes, std::ptr::null(), 0) }
}

/// `bsp_bcast` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_bcast_at(
    pid: c_int,
    src: *mut c_void,
    dst: *mut c_void,
    nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: the caller's contract (bsp_level1.h).
    with_bsp("bsp_bcast", file, line, |bsp, loc| unsafe {
        level1::bcast(bsp, "bsp_bcast", pid.into(), src, dst, nbytes.into(), loc)
    })
}

/// `void bsp_gather(int pid, void *src, void *dst, int nbytes)`: the
/// `nbytes` at `src` on process `i` land at byte `i*nbytes` of `dst` on
/// process `pid` (`p*nbytes` bytes, written there only). One superstep.
#[no_mangle]
pub unsafe extern "C" fn bsp_gather(pid: c_int, src: *mut c_void, dst: *mut c_void, nbytes: c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_gather_at(pid, src, dst, nbytes, std::ptr::null(), 0) }
}

/// `bsp_gather` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_gather_at(
    pid: c_int,
    src: *mut c_void,
    dst: *mut c_void,
    nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: the caller's contract (bsp_level1.h).
    with_bsp("bsp_gather", file, line, |bsp, loc| unsafe {
        level1::gather(bsp, "bsp_gather", pid.into(), src, dst, nbytes.into(), loc)
    })
}

/// `void bsp_scatter(int pid, void *src, void *dst, int nbytes)`: the
/// inverse of `bsp_gather`: bytes `i*nbytes ..` of `src` on process `pid`
/// (`p*nbytes` bytes, read there only) into `dst` on process `i`. One
/// superstep.
#[no_mangle]
pub unsafe extern "C" fn bsp_scatter(
    pid: c_int,
    src: *mut c_void,
    dst: *mut c_void,
    nbytes: c_int,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_scatter_at(pid, src, dst, nbytes, std::ptr::null(), 0) }
}

/// `bsp_scatter` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_scatter_at(
    pid: c_int,
    src: *mut c_void,
    dst: *mut c_void,
    nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: the caller's contract (bsp_level1.h).
    with_bsp("bsp_scatter", file, line, |bsp, loc| unsafe {
        level1::scatter(bsp, "bsp_scatter", pid.into(), src, dst, nbytes.into(), loc)
    })
}

/// `void bsp_exchange(void *src, void *dst, int nbytes)`, the paper's
/// total exchange: `src` and `dst` hold `p` blocks of `nbytes` bytes;
/// block `j` of `src` goes to process `j`, and block `i` of `dst` comes
/// from process `i` (block `pid` is copied locally). One superstep.
#[no_mangle]
pub unsafe extern "C" fn bsp_exchange(src: *mut c_void, dst: *mut c_void, nbytes: c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_exchange_at(src, dst, nbytes, std::ptr::null(), 0) }
}

/// `bsp_exchange` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_exchange_at(
    src: *mut c_void,
    dst: *mut c_void,
    nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: the caller's contract (bsp_level1.h).
    with_bsp("bsp_exchange", file, line, |bsp, loc| unsafe {
        level1::exchange(bsp, "bsp_exchange", src, dst, nbytes.into(), loc)
    })
}

/// `void bsp_fold(bsp_fold_op_t op, void *src, void *dst, int nbytes)`:
/// every process's `dst` gets `x0 (+) x1 (+) ... (+) x(p-1)`, `xi` being
/// the `nbytes` at `src` on process `i`, combined in pid order from the
/// left (`op(res, left, right, &nbytes)`), so an associative operator
/// that does not commute gives a defined result. `src` and `dst` may be
/// the same buffer. One superstep.
#[no_mangle]
pub unsafe extern "C" fn bsp_fold(
    op: bsp_fold_op_t,
    src: *mut c_void,
    dst: *mut c_void,
    nbytes: c_int,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_fold_at(op, src, dst, nbytes, std::ptr::null(), 0) }
}

/// `bsp_fold` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_fold_at(
    op: bsp_fold_op_t,
    src: *mut c_void,
    dst: *mut c_void,
    nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: the caller's contract (bsp_level1.h).
    with_bsp("bsp_fold", file, line, |bsp, loc| unsafe {
        let Some(op) = op else {
            return Err(null_op(bsp, "bsp_fold", loc));
        };
        level1::fold(bsp, "bsp_fold", op, src, dst, nbytes.into(), false, loc)
    })
}

/// `void bsp_scan(bsp_fold_op_t op, void *src, void *dst, int nbytes)`:
/// the inclusive prefix of `bsp_fold`: process `i`'s `dst` gets `x0 (+)
/// ... (+) xi`, combined in the same order. One superstep.
#[no_mangle]
pub unsafe extern "C" fn bsp_scan(
    op: bsp_fold_op_t,
    src: *mut c_void,
    dst: *mut c_void,
    nbytes: c_int,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_scan_at(op, src, dst, nbytes, std::ptr::null(), 0) }
}

/// `bsp_scan` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_scan_at(
    op: bsp_fold_op_t,
    src: *mut c_void,
    dst: *mut c_void,
    nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: the caller's contract (bsp_level1.h).
    with_bsp("bsp_scan", file, line, |bsp, loc| unsafe {
        let Some(op) = op else {
            return Err(null_op(bsp, "bsp_scan", loc));
        };
        level1::fold(bsp, "bsp_scan", op, src, dst, nbytes.into(), true, loc)
    })
}

/// `int bsp_sumI(int x)`: the sum of every process's `x` (wrapping on overflow),
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_sumI(x: c_int) -> c_int {
    bsplib_sumI_at(x, std::ptr::null(), 0)
}

/// `bsp_sumI` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_sumI_at(x: c_int, file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_sumI", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_sumI", x, Typed::Sum, false, loc)
    })
}

/// `int bsp_sumI_prefix(int x)`: on process `i`, the sum of the `x` of
/// processes `0..=i` (wrapping on overflow), combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_sumI_prefix(x: c_int) -> c_int {
    bsplib_sumI_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_sumI_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_sumI_prefix_at(x: c_int, file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_sumI_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_sumI_prefix", x, Typed::Sum, true, loc)
    })
}

/// `int bsp_productI(int x)`: the product of every process's `x` (wrapping on overflow),
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_productI(x: c_int) -> c_int {
    bsplib_productI_at(x, std::ptr::null(), 0)
}

/// `bsp_productI` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_productI_at(x: c_int, file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_productI", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_productI", x, Typed::Product, false, loc)
    })
}

/// `int bsp_productI_prefix(int x)`: on process `i`, the product of the `x` of
/// processes `0..=i` (wrapping on overflow), combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_productI_prefix(x: c_int) -> c_int {
    bsplib_productI_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_productI_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_productI_prefix_at(x: c_int, file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_productI_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_productI_prefix", x, Typed::Product, true, loc)
    })
}

/// `int bsp_minI(int x)`: the smallest of every process's `x`,
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_minI(x: c_int) -> c_int {
    bsplib_minI_at(x, std::ptr::null(), 0)
}

/// `bsp_minI` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_minI_at(x: c_int, file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_minI", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_minI", x, Typed::Min, false, loc)
    })
}

/// `int bsp_minI_prefix(int x)`: on process `i`, the smallest of the `x` of
/// processes `0..=i`, combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_minI_prefix(x: c_int) -> c_int {
    bsplib_minI_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_minI_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_minI_prefix_at(x: c_int, file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_minI_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_minI_prefix", x, Typed::Min, true, loc)
    })
}

/// `int bsp_maxI(int x)`: the largest of every process's `x`,
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_maxI(x: c_int) -> c_int {
    bsplib_maxI_at(x, std::ptr::null(), 0)
}

/// `bsp_maxI` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_maxI_at(x: c_int, file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_maxI", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_maxI", x, Typed::Max, false, loc)
    })
}

/// `int bsp_maxI_prefix(int x)`: on process `i`, the largest of the `x` of
/// processes `0..=i`, combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_maxI_prefix(x: c_int) -> c_int {
    bsplib_maxI_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_maxI_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_maxI_prefix_at(x: c_int, file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_maxI_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_maxI_prefix", x, Typed::Max, true, loc)
    })
}

/// `float bsp_sumR(float x)`: the sum of every process's `x`,
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_sumR(x: c_float) -> c_float {
    bsplib_sumR_at(x, std::ptr::null(), 0)
}

/// `bsp_sumR` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_sumR_at(x: c_float, file: *const c_char, line: c_int) -> c_float {
    with_bsp("bsp_sumR", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_sumR", x, Typed::Sum, false, loc)
    })
}

/// `float bsp_sumR_prefix(float x)`: on process `i`, the sum of the `x` of
/// processes `0..=i`, combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_sumR_prefix(x: c_float) -> c_float {
    bsplib_sumR_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_sumR_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_sumR_prefix_at(x: c_float, file: *const c_char, line: c_int) -> c_float {
    with_bsp("bsp_sumR_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_sumR_prefix", x, Typed::Sum, true, loc)
    })
}

/// `float bsp_productR(float x)`: the product of every process's `x`,
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_productR(x: c_float) -> c_float {
    bsplib_productR_at(x, std::ptr::null(), 0)
}

/// `bsp_productR` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_productR_at(x: c_float, file: *const c_char, line: c_int) -> c_float {
    with_bsp("bsp_productR", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_productR", x, Typed::Product, false, loc)
    })
}

/// `float bsp_productR_prefix(float x)`: on process `i`, the product of the `x` of
/// processes `0..=i`, combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_productR_prefix(x: c_float) -> c_float {
    bsplib_productR_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_productR_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_productR_prefix_at(
    x: c_float,
    file: *const c_char,
    line: c_int,
) -> c_float {
    with_bsp("bsp_productR_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_productR_prefix", x, Typed::Product, true, loc)
    })
}

/// `float bsp_minR(float x)`: the smallest of every process's `x`,
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_minR(x: c_float) -> c_float {
    bsplib_minR_at(x, std::ptr::null(), 0)
}

/// `bsp_minR` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_minR_at(x: c_float, file: *const c_char, line: c_int) -> c_float {
    with_bsp("bsp_minR", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_minR", x, Typed::Min, false, loc)
    })
}

/// `float bsp_minR_prefix(float x)`: on process `i`, the smallest of the `x` of
/// processes `0..=i`, combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_minR_prefix(x: c_float) -> c_float {
    bsplib_minR_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_minR_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_minR_prefix_at(x: c_float, file: *const c_char, line: c_int) -> c_float {
    with_bsp("bsp_minR_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_minR_prefix", x, Typed::Min, true, loc)
    })
}

/// `float bsp_maxR(float x)`: the largest of every process's `x`,
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_maxR(x: c_float) -> c_float {
    bsplib_maxR_at(x, std::ptr::null(), 0)
}

/// `bsp_maxR` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_maxR_at(x: c_float, file: *const c_char, line: c_int) -> c_float {
    with_bsp("bsp_maxR", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_maxR", x, Typed::Max, false, loc)
    })
}

/// `float bsp_maxR_prefix(float x)`: on process `i`, the largest of the `x` of
/// processes `0..=i`, combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_maxR_prefix(x: c_float) -> c_float {
    bsplib_maxR_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_maxR_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_maxR_prefix_at(x: c_float, file: *const c_char, line: c_int) -> c_float {
    with_bsp("bsp_maxR_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_maxR_prefix", x, Typed::Max, true, loc)
    })
}

/// `double bsp_sumD(double x)`: the sum of every process's `x`,
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_sumD(x: c_double) -> c_double {
    bsplib_sumD_at(x, std::ptr::null(), 0)
}

/// `bsp_sumD` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_sumD_at(x: c_double, file: *const c_char, line: c_int) -> c_double {
    with_bsp("bsp_sumD", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_sumD", x, Typed::Sum, false, loc)
    })
}

/// `double bsp_sumD_prefix(double x)`: on process `i`, the sum of the `x` of
/// processes `0..=i`, combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_sumD_prefix(x: c_double) -> c_double {
    bsplib_sumD_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_sumD_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_sumD_prefix_at(x: c_double, file: *const c_char, line: c_int) -> c_double {
    with_bsp("bsp_sumD_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_sumD_prefix", x, Typed::Sum, true, loc)
    })
}

/// `double bsp_productD(double x)`: the product of every process's `x`,
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_productD(x: c_double) -> c_double {
    bsplib_productD_at(x, std::ptr::null(), 0)
}

/// `bsp_productD` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_productD_at(x: c_double, file: *const c_char, line: c_int) -> c_double {
    with_bsp("bsp_productD", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_productD", x, Typed::Product, false, loc)
    })
}

/// `double bsp_productD_prefix(double x)`: on process `i`, the product of the `x` of
/// processes `0..=i`, combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_productD_prefix(x: c_double) -> c_double {
    bsplib_productD_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_productD_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_productD_prefix_at(
    x: c_double,
    file: *const c_char,
    line: c_int,
) -> c_double {
    with_bsp("bsp_productD_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_productD_prefix", x, Typed::Product, true, loc)
    })
}

/// `double bsp_minD(double x)`: the smallest of every process's `x`,
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_minD(x: c_double) -> c_double {
    bsplib_minD_at(x, std::ptr::null(), 0)
}

/// `bsp_minD` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_minD_at(x: c_double, file: *const c_char, line: c_int) -> c_double {
    with_bsp("bsp_minD", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_minD", x, Typed::Min, false, loc)
    })
}

/// `double bsp_minD_prefix(double x)`: on process `i`, the smallest of the `x` of
/// processes `0..=i`, combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_minD_prefix(x: c_double) -> c_double {
    bsplib_minD_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_minD_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_minD_prefix_at(x: c_double, file: *const c_char, line: c_int) -> c_double {
    with_bsp("bsp_minD_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_minD_prefix", x, Typed::Min, true, loc)
    })
}

/// `double bsp_maxD(double x)`: the largest of every process's `x`,
/// combined in pid order from the left (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_maxD(x: c_double) -> c_double {
    bsplib_maxD_at(x, std::ptr::null(), 0)
}

/// `bsp_maxD` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_maxD_at(x: c_double, file: *const c_char, line: c_int) -> c_double {
    with_bsp("bsp_maxD", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_maxD", x, Typed::Max, false, loc)
    })
}

/// `double bsp_maxD_prefix(double x)`: on process `i`, the largest of the `x` of
/// processes `0..=i`, combined in pid order from the left. One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_maxD_prefix(x: c_double) -> c_double {
    bsplib_maxD_prefix_at(x, std::ptr::null(), 0)
}

/// `bsp_maxD_prefix` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_maxD_prefix_at(x: c_double, file: *const c_char, line: c_int) -> c_double {
    with_bsp("bsp_maxD_prefix", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_maxD_prefix", x, Typed::Max, true, loc)
    })
}

/// `int bsp_all(int b)`: 1 if every process's `b` is non-zero, else 0 (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_all(b: c_int) -> c_int {
    bsplib_all_at(b, std::ptr::null(), 0)
}

/// `bsp_all` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_all_at(b: c_int, file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_all", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_all", b, Typed::All, false, loc)
    })
}

/// `int bsp_any(int b)`: 1 if some process's `b` is non-zero, else 0 (the same on every process). One
/// superstep.
#[no_mangle]
pub extern "C" fn bsp_any(b: c_int) -> c_int {
    bsplib_any_at(b, std::ptr::null(), 0)
}

/// `bsp_any` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_any_at(b: c_int, file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_any", file, line, |bsp, loc| {
        level1::reduce(bsp, "bsp_any", b, Typed::Any, false, loc)
    })
}

/// The error of a `bsp_fold` or `bsp_scan` given a NULL operator.
fn null_op(bsp: &bsplib::Bsp, call: &'static str, loc: Option<bsplib::SourceLocation>) -> Error {
    Error::new(
        ErrorKind::NullPointer { what: "op" },
        call,
        bsp.pid(),
        bsp.superstep(),
        loc,
    )
}

/// `double bsp_g(void)`: this machine's g for the running engine at this
/// run's p, in **seconds per byte** (asymptotic: large puts; a put of `n`
/// bytes costs about `bsp_g() * (n + bsp_nhalf())`), as `bspprobe`
/// measured and stored it on this host for this bsplib version, else the
/// built-in default (0.15e-9). Local; the first enquiry of a process
/// reads the store (`$BSPLIB_MACHINE`, else
/// `$XDG_CACHE_HOME/bsplib/machine.json`, else
/// `~/.cache/bsplib/machine.json`). Between `bsp_begin` and `bsp_end`.
#[no_mangle]
pub extern "C" fn bsp_g() -> c_double {
    with_bsp("bsp_g", std::ptr::null(), 0, |bsp, _| Ok(bsp.machine().g))
}

/// `double bsp_l(void)`: l, the cost of a superstep, in **seconds**
/// (the intercept of the fit over h-relations of single 8-byte puts);
/// stored as for `bsp_g`, else the default 2.0e-6.
#[no_mangle]
pub extern "C" fn bsp_l() -> c_double {
    with_bsp("bsp_l", std::ptr::null(), 0, |bsp, _| Ok(bsp.machine().l))
}

/// `double bsp_s(void)`: the computation rate in **flop/s** (an in-cache
/// DAXPY, `y += a*x`, on one process while all run one: a stand-in for
/// the Oxford toolset's processor speed, which it gave in Mflop/s);
/// stored as for `bsp_g`, else the default 1.0e10.
#[no_mangle]
pub extern "C" fn bsp_s() -> c_double {
    with_bsp("bsp_s", std::ptr::null(), 0, |bsp, _| Ok(bsp.machine().s))
}

/// `int bsp_nhalf(void)`: the message length in **bytes** at which half
/// the asymptotic bandwidth `1/bsp_g()` is reached (rounded); stored as
/// for `bsp_g`, else the default 378.
#[no_mangle]
pub extern "C" fn bsp_nhalf() -> c_int {
    with_bsp("bsp_nhalf", std::ptr::null(), 0, |bsp, _| {
        Ok(bsp.machine().nhalf.round().min(c_int::MAX as f64) as c_int)
    })
}
