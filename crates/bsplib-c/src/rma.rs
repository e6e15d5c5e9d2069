//! `bsp_rma.h`: the one-sided extensions of MPI-2 over the core (design
//! in `crates/bsplib/src/ONE_SIDED.md`). Built so far: deterministic
//! accumulate in the superstep (`bsp_accumulate`). The location macros are
//! written in `cbindgen-rma.toml`.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_long, c_void};

use crate::with_raw;

/// An element type of `bsp_accumulate`: one of the `BSP_INT8` ...
/// `BSP_DOUBLE_INT64` constants.
pub type bsp_type = c_int;

/// A combining operator of `bsp_accumulate`: one of the `BSP_SUM` ...
/// `BSP_MAXLOC` constants.
pub type bsp_op = c_int;

/// `int8_t`.
pub const BSP_INT8: bsp_type = 0;
/// `int16_t`.
pub const BSP_INT16: bsp_type = 1;
/// `int32_t`.
pub const BSP_INT32: bsp_type = 2;
/// `int64_t`.
pub const BSP_INT64: bsp_type = 3;
/// `uint8_t`.
pub const BSP_UINT8: bsp_type = 4;
/// `uint16_t`.
pub const BSP_UINT16: bsp_type = 5;
/// `uint32_t`.
pub const BSP_UINT32: bsp_type = 6;
/// `uint64_t`.
pub const BSP_UINT64: bsp_type = 7;
/// `float`.
pub const BSP_FLOAT: bsp_type = 8;
/// `double`.
pub const BSP_DOUBLE: bsp_type = 9;
/// `bsp_2int`: an `int` value and an `int` index (MPI's `MPI_2INT`).
pub const BSP_2INT: bsp_type = 10;
/// `bsp_float_int`: a `float` value and an `int` index (`MPI_FLOAT_INT`).
pub const BSP_FLOAT_INT: bsp_type = 11;
/// `bsp_2int64`: an `int64_t` value and an `int64_t` index.
pub const BSP_2INT64: bsp_type = 12;
/// `bsp_double_int64`: a `double` value and an `int64_t` index.
pub const BSP_DOUBLE_INT64: bsp_type = 13;
/// `int` (32 bits on every platform bsplib supports).
pub const BSP_INT: bsp_type = BSP_INT32;
/// `long` (64 bits: LP64).
pub const BSP_LONG: bsp_type = BSP_INT64;

/// `a + b` (integers wrap).
pub const BSP_SUM: bsp_op = 0;
/// `a * b` (integers wrap).
pub const BSP_PROD: bsp_op = 1;
/// The smaller (floats: a NaN operand is ignored).
pub const BSP_MIN: bsp_op = 2;
/// The larger (floats: a NaN operand is ignored).
pub const BSP_MAX: bsp_op = 3;
/// Bitwise and (integer types).
pub const BSP_BAND: bsp_op = 4;
/// Bitwise or (integer types).
pub const BSP_BOR: bsp_op = 5;
/// Bitwise exclusive or (integer types).
pub const BSP_BXOR: bsp_op = 6;
/// 1 if both are non-zero, else 0 (integer types).
pub const BSP_LAND: bsp_op = 7;
/// 1 if either is non-zero, else 0 (integer types).
pub const BSP_LOR: bsp_op = 8;
/// 1 if exactly one is non-zero, else 0 (integer types).
pub const BSP_LXOR: bsp_op = 9;
/// The contribution replaces the value (every type).
pub const BSP_REPLACE: bsp_op = 10;
/// The pair with the smaller value; on equal values the smaller index
/// (pair types only).
pub const BSP_MINLOC: bsp_op = 11;
/// The pair with the larger value; on equal values the smaller index
/// (pair types only).
pub const BSP_MAXLOC: bsp_op = 12;

/// The element of `BSP_2INT`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct bsp_2int {
    /// The value compared.
    pub value: c_int,
    /// Its index.
    pub index: c_int,
}

/// The element of `BSP_FLOAT_INT`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct bsp_float_int {
    /// The value compared.
    pub value: f32,
    /// Its index.
    pub index: c_int,
}

/// The element of `BSP_2INT64`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct bsp_2int64 {
    /// The value compared.
    pub value: i64,
    /// Its index.
    pub index: i64,
}

/// The element of `BSP_DOUBLE_INT64`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct bsp_double_int64 {
    /// The value compared.
    pub value: f64,
    /// Its index.
    pub index: i64,
}

/// `void bsp_accumulate(int pid, const void *src, void *dst, long offset,
/// int count, bsp_type ty, bsp_op op)`: combines the `count` elements of
/// type `ty` at `src` (copied now) with `op` into the area registered on
/// process `pid` in the slot of `dst`, from byte `offset`, at the next
/// `bsp_sync`: `dst[i] = dst[i] op src[i]`. The sync applies them after
/// its gets have read and its puts have written, origin by origin in
/// increasing pid order and each origin's in call order, so
/// floating-point results are the same on every engine and run. All
/// accumulates into one area in one superstep must use one operator and
/// one type. Errors (the run stops, naming the call, process, superstep
/// and line): an operator not defined on the type, an unknown id, another
/// operator or type than an earlier accumulate into that area in this
/// superstep (found at the call, or by the owner at the sync when two
/// processes disagree), out of the remote area, unregistered, `pid` out
/// of range, a negative offset or count, a NULL `src` with `count > 0`.
#[no_mangle]
pub unsafe extern "C" fn bsp_accumulate(
    pid: c_int,
    src: *const c_void,
    dst: *mut c_void,
    offset: c_long,
    count: c_int,
    ty: bsp_type,
    op: bsp_op,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_accumulate_at(pid, src, dst, offset, count, ty, op, std::ptr::null(), 0) }
}

/// `bsp_accumulate` with the caller's location.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn bsplib_accumulate_at(
    pid: c_int,
    src: *const c_void,
    dst: *mut c_void,
    offset: c_long,
    count: c_int,
    ty: bsp_type,
    op: bsp_op,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: the caller's contract (bsp_rma.h): `src` is readable for
    // `count` elements of `ty`.
    with_raw("bsp_accumulate", file, line, |raw| unsafe {
        raw.accumulate_ids(
            pid.into(),
            src,
            dst,
            offset, // `long` is 64 bits (LP64), as `BSP_LONG` says
            count.into(),
            ty.into(),
            op.into(),
        )
    })
}

/// `bsp_sync_hint` flag (MPI's `MPI_MODE_NOPRECEDE`): this process issued
/// no transfer (put, hpput, get, hpget, send, accumulate) in the
/// superstep the sync ends. Registrations and tag sizes are allowed.
pub const BSP_MODE_NOPRECEDE: c_int = 1;
/// `bsp_sync_hint` flag (`MPI_MODE_NOSUCCEED`): this process will issue no
/// transfer in the superstep the sync starts; a transfer call there stops
/// the run, always.
pub const BSP_MODE_NOSUCCEED: c_int = 2;
/// `bsp_sync_hint` flag (`MPI_MODE_NOSTORE`): local code did not write
/// the registered areas since the last sync. Accepted, not used.
pub const BSP_MODE_NOSTORE: c_int = 4;
/// `bsp_sync_hint` flag (`MPI_MODE_NOPUT`): no process puts or
/// accumulates into this process's memory in the superstep the sync ends.
pub const BSP_MODE_NOPUT: c_int = 8;

/// `void bsp_sync_hint(int flags)`: `bsp_sync` with fence hints, the
/// `BSP_MODE_*` flags or-ed (0: a plain `bsp_sync`). A transfer call in
/// the superstep after a sync with `BSP_MODE_NOSUCCEED` stops the run at
/// that call; with `BSPLIB_CHECK=1` every hint is checked, and a false
/// one stops the run naming the hint, the process, the superstep and the
/// line (for `BSP_MODE_NOPUT`, the origin that wrote). Outside the
/// checking mode a false `BSP_MODE_NOPRECEDE` or `BSP_MODE_NOPUT` gives
/// undefined results, never unsafe ones. A bit that names no hint stops
/// the run.
#[no_mangle]
pub extern "C" fn bsp_sync_hint(flags: c_int) {
    bsplib_sync_hint_at(flags, std::ptr::null(), 0)
}

/// `bsp_sync_hint` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_sync_hint_at(flags: c_int, file: *const c_char, line: c_int) {
    crate::with_bsp("bsp_sync_hint", file, line, |bsp, loc| {
        bsplib::raw::Raw::sync_hint(bsp, flags.into(), loc)?;
        crate::startup::note(bsp.pid(), bsp.superstep());
        Ok(())
    })
}
