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
/// the registered areas since the last sync (checking mode: compared
/// with the bytes the last sync left, except areas the library wrote
/// since).
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

// ----- one-sided epochs: post/start/complete/wait, locks ---------------------------

/// `bsp_lock` kind: one holder at a time (MPI's `MPI_LOCK_EXCLUSIVE`).
pub const BSP_LOCK_EXCLUSIVE: c_int = 1;
/// `bsp_lock` kind: holders together while none is exclusive
/// (`MPI_LOCK_SHARED`).
pub const BSP_LOCK_SHARED: c_int = 2;

/// `void bsp_rma_init(void)`: enters one-sided mode, in which the epoch
/// calls below work: collective, a `bsp_sync`. (`LAPI_Init` enters it too:
/// the epochs travel on the active-message path, and every sync in this
/// mode serves what arrives while it waits.)
#[no_mangle]
pub extern "C" fn bsp_rma_init() {
    bsplib_rma_init_at(std::ptr::null(), 0)
}

/// `bsp_rma_init` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_rma_init_at(file: *const c_char, line: c_int) {
    crate::with_bsp("bsp_rma_init", file, line, |bsp, loc| {
        bsplib::raw::Raw::rma_init(bsp, loc)?;
        crate::startup::note(bsp.pid(), bsp.superstep());
        Ok(())
    })
}

/// `void bsp_rma_term(void)`: leaves one-sided mode: collective, a
/// `bsp_sync`; no epoch may be open.
#[no_mangle]
pub extern "C" fn bsp_rma_term() {
    bsplib_rma_term_at(std::ptr::null(), 0)
}

/// `bsp_rma_term` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_rma_term_at(file: *const c_char, line: c_int) {
    crate::with_bsp("bsp_rma_term", file, line, |bsp, loc| {
        bsplib::raw::Raw::rma_term(bsp, loc)?;
        crate::startup::note(bsp.pid(), bsp.superstep());
        Ok(())
    })
}

/// The `n` pids at `pids` (a NULL `pids` with `n == 0` is the empty
/// group); `None` if `n < 0` or `pids` is NULL with `n > 0`.
///
/// # Safety
///
/// `pids` readable for `n` ints.
unsafe fn group(pids: *const c_int, n: c_int) -> Option<Vec<i64>> {
    let n = usize::try_from(n).ok()?;
    if n == 0 {
        return Some(Vec::new());
    }
    if pids.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    let s = unsafe { std::slice::from_raw_parts(pids, n) };
    Some(s.iter().map(|&q| i64::from(q)).collect())
}

/// `void bsp_win_post(void *area, const int *origins, int n)`: exposes
/// this process's registered `area` to the `n` processes at `origins`
/// (MPI's `MPI_Win_post`): their puts, gets and accumulates of one access
/// epoch each are complete here when `bsp_win_wait` returns. Never waits.
/// Errors: not in one-sided mode, `area` not registered, a pid out of
/// range, a negative `n` or NULL `origins` with `n > 0`, the area posted
/// already and not waited for.
#[no_mangle]
pub unsafe extern "C" fn bsp_win_post(area: *const c_void, origins: *const c_int, n: c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_win_post_at(area, origins, n, std::ptr::null(), 0) }
}

/// `bsp_win_post` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_win_post_at(
    area: *const c_void,
    origins: *const c_int,
    n: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: the caller's contract: `origins` readable for `n` ints.
    let g = unsafe { group(origins, n) };
    crate::with_bsp("bsp_win_post", file, line, |bsp, loc| match g {
        Some(g) => bsplib::raw::Raw::win_post(bsp, loc, area, &g),
        None => Err(bad_group(bsp, "origins", n, "bsp_win_post", loc)),
    })
}

/// `void bsp_win_start(void *area, const int *targets, int n)`: opens an
/// access epoch of `area` to the `n` processes at `targets` (MPI's
/// `MPI_Win_start`), waiting until each has posted to this process.
/// `bsp_put`, `bsp_hpput`, `bsp_get`, `bsp_hpget` and `bsp_accumulate`
/// naming `area` on a target then belong to the epoch (copied or sent at
/// the call; gets land by `bsp_win_complete`), and naming it on another
/// process are an error. Errors: as for `bsp_win_post`; a target that
/// enters its sync or ends without posting to this process (not a hang).
#[no_mangle]
pub unsafe extern "C" fn bsp_win_start(area: *const c_void, targets: *const c_int, n: c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_win_start_at(area, targets, n, std::ptr::null(), 0) }
}

/// `bsp_win_start` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_win_start_at(
    area: *const c_void,
    targets: *const c_int,
    n: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: the caller's contract: `targets` readable for `n` ints.
    let g = unsafe { group(targets, n) };
    crate::with_bsp("bsp_win_start", file, line, |bsp, loc| match g {
        Some(g) => bsplib::raw::Raw::win_start(bsp, loc, area, &g),
        None => Err(bad_group(bsp, "targets", n, "bsp_win_start", loc)),
    })
}

/// `void bsp_win_complete(void *area)`: ends the access epoch of `area`
/// (MPI's `MPI_Win_complete`): its gets have landed, and each target
/// learns that this process is done. Error: no `bsp_win_start` open on
/// `area`.
#[no_mangle]
pub extern "C" fn bsp_win_complete(area: *const c_void) {
    bsplib_win_complete_at(area, std::ptr::null(), 0)
}

/// `bsp_win_complete` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_win_complete_at(area: *const c_void, file: *const c_char, line: c_int) {
    crate::with_bsp("bsp_win_complete", file, line, |bsp, loc| {
        bsplib::raw::Raw::win_complete(bsp, loc, area)
    })
}

/// `void bsp_win_wait(void *area)`: waits until every origin of the
/// exposure epoch of `area` has completed (MPI's `MPI_Win_wait`): their
/// puts are in `area`, their accumulates combined (origins in pid order,
/// each origin's in call order). Errors: no `bsp_win_post` open on
/// `area`; an origin that enters its sync or ends without completing; two
/// origins accumulating with different operators or types.
#[no_mangle]
pub extern "C" fn bsp_win_wait(area: *const c_void) {
    bsplib_win_wait_at(area, std::ptr::null(), 0)
}

/// `bsp_win_wait` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_win_wait_at(area: *const c_void, file: *const c_char, line: c_int) {
    crate::with_bsp("bsp_win_wait", file, line, |bsp, loc| {
        bsplib::raw::Raw::win_wait(bsp, loc, area, true).map(|_| ())
    })
}

/// `int bsp_win_test(void *area)`: `bsp_win_wait` without waiting (MPI's
/// `MPI_Win_test`): 1, and the exposure epoch is closed, if every origin
/// has completed; 0 otherwise.
#[no_mangle]
pub extern "C" fn bsp_win_test(area: *const c_void) -> c_int {
    bsplib_win_test_at(area, std::ptr::null(), 0)
}

/// `bsp_win_test` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_win_test_at(
    area: *const c_void,
    file: *const c_char,
    line: c_int,
) -> c_int {
    crate::with_bsp("bsp_win_test", file, line, |bsp, loc| {
        bsplib::raw::Raw::win_wait(bsp, loc, area, false).map(c_int::from)
    })
}

/// `void bsp_lock(int pid, void *area, int kind)`: locks `area` on
/// process `pid` (MPI's `MPI_Win_lock`), `BSP_LOCK_EXCLUSIVE` or
/// `BSP_LOCK_SHARED`. Like MPI's, it may return before the lock is held:
/// the request goes with the epoch's first transfers, which `pid` serves
/// once it granted the lock. Transfers naming `area` on `pid` then belong
/// to the lock epoch. `pid` makes no
/// call: it serves the lock at its next bsplib call that waits or syncs.
/// Errors: not in one-sided mode, `area` not registered, `pid` out of
/// range, an unknown kind, this lock held already, `pid` ended.
#[no_mangle]
pub extern "C" fn bsp_lock(pid: c_int, area: *const c_void, kind: c_int) {
    bsplib_lock_at(pid, area, kind, std::ptr::null(), 0)
}

/// `bsp_lock` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_lock_at(
    pid: c_int,
    area: *const c_void,
    kind: c_int,
    file: *const c_char,
    line: c_int,
) {
    crate::with_bsp("bsp_lock", file, line, |bsp, loc| {
        let kind = match kind {
            BSP_LOCK_EXCLUSIVE => bsplib::LockKind::Exclusive,
            BSP_LOCK_SHARED => bsplib::LockKind::Shared,
            k => {
                let detail = format!(
                    "lock kind {k} is neither BSP_LOCK_EXCLUSIVE ({BSP_LOCK_EXCLUSIVE}) nor \
                     BSP_LOCK_SHARED ({BSP_LOCK_SHARED})"
                );
                return Err(bsp
                    .raw()
                    .at(loc)
                    .fail(bsplib::ErrorKind::NoEpoch { detail }, "bsp_lock"));
            }
        };
        bsplib::raw::Raw::lock(bsp, loc, pid.into(), area, kind)
    })
}

/// `void bsp_unlock(int pid, void *area)`: releases the lock of `area`
/// on `pid` (MPI's `MPI_Win_unlock`) once every transfer of the epoch is
/// done there and its gets have landed. Error: the lock not held.
#[no_mangle]
pub extern "C" fn bsp_unlock(pid: c_int, area: *const c_void) {
    bsplib_unlock_at(pid, area, std::ptr::null(), 0)
}

/// `bsp_unlock` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_unlock_at(
    pid: c_int,
    area: *const c_void,
    file: *const c_char,
    line: c_int,
) {
    crate::with_bsp("bsp_unlock", file, line, |bsp, loc| {
        bsplib::raw::Raw::unlock(bsp, loc, pid.into(), area)
    })
}

/// The error of a group argument that is not an array of `n` pids.
fn bad_group(
    bsp: &bsplib::Bsp,
    what: &'static str,
    n: c_int,
    call: &'static str,
    loc: Option<bsplib::SourceLocation>,
) -> bsplib::Error {
    let kind = if n < 0 {
        bsplib::ErrorKind::Negative {
            what,
            value: n.into(),
        }
    } else {
        bsplib::ErrorKind::NullPointer { what }
    };
    bsp.raw().at(loc).fail(kind, call)
}

// ----- windows: passive target straight into memory ------------------------

/// A window (`bsp_window_create`): memory of every process that the
/// others lock and access directly, with no call of its owner: shared
/// memory on `threads` and `processes`, MPI's one-sided operations on
/// memory from `MPI_Win_allocate` on `mpi`. Opaque.
#[allow(non_camel_case_types)]
pub struct bsp_window {
    win: bsplib::Window<u8>,
    /// Per process: the lock of its memory this process holds (0 none,
    /// `BSP_LOCK_EXCLUSIVE`, `BSP_LOCK_SHARED`).
    held: Vec<c_int>,
    /// The open exposure epoch's origins (`bsp_window_post`).
    origins: Option<Vec<usize>>,
    /// The open access epoch's targets (`bsp_window_start`).
    targets: Option<Vec<usize>>,
}

thread_local! {
    /// This process's live windows (each BSP process is one thread of
    /// its OS process), so that a stale or foreign handle is an error,
    /// not a wild pointer; and the window locks it holds.
    static WINDOWS: std::cell::RefCell<(std::collections::HashSet<usize>, usize)> =
        Default::default();
}

/// The window `w` names, or the error of a handle that is not one of
/// this process's live windows.
fn window<'a>(
    bsp: &bsplib::Bsp,
    w: *mut bsp_window,
    call: &'static str,
    loc: Option<bsplib::SourceLocation>,
) -> Result<&'a mut bsp_window, bsplib::Error> {
    if w.is_null() {
        return Err(bsp
            .raw()
            .at(loc)
            .fail(bsplib::ErrorKind::NullPointer { what: "window" }, call));
    }
    if !WINDOWS.with(|s| s.borrow().0.contains(&w.addr())) {
        let detail = "the window handle is not a live window of this process (freed, \
                      or never made by bsp_window_create)"
            .to_string();
        return Err(bsp
            .raw()
            .at(loc)
            .fail(bsplib::ErrorKind::NoEpoch { detail }, call));
    }
    // SAFETY: a live handle of this process (the set holds exactly the
    // boxes `bsp_window_create` leaked and `bsp_window_free` has not
    // taken back), used by this process's thread only.
    Ok(unsafe { &mut *w })
}

/// Stores `v` at `at` unless `at` is NULL.
///
/// # Safety
///
/// `at` is NULL or points to a writable `void *`.
unsafe fn store_ptr(at: *mut *mut c_void, v: *mut c_void) {
    if !at.is_null() {
        // SAFETY: the caller's promise.
        unsafe { *at = v };
    }
}

/// The box of window handle `w`, reclaimed.
///
/// # Safety
///
/// `w` is a box `bsp_window_create` leaked, not reclaimed before.
unsafe fn take_window(w: *mut bsp_window) -> Box<bsp_window> {
    // SAFETY: the caller's promise.
    unsafe { Box::from_raw(w) }
}

/// `pid` as an index of `bsp`'s processes, or its error.
fn window_pid(
    bsp: &bsplib::Bsp,
    pid: c_int,
    call: &'static str,
    loc: Option<bsplib::SourceLocation>,
) -> Result<usize, bsplib::Error> {
    usize::try_from(pid)
        .ok()
        .filter(|&q| q < bsp.nprocs())
        .ok_or_else(|| {
            bsp.raw().at(loc).fail(
                bsplib::ErrorKind::PidOutOfRange {
                    pid: pid.into(),
                    nprocs: bsp.nprocs(),
                },
                call,
            )
        })
}

/// `bsp_window *bsp_window_create(size_t nbytes, void **base)`: makes a
/// window of `nbytes` zeroed bytes on this process (each process gives
/// its own size) and stores the address of this process's memory in
/// `*base` (unless `base` is NULL). Collective, like a `bsp_sync` (it ends
/// the superstep). The program reads and writes its own memory only
/// under a lock of it (`bsp_window_lock(w, bsp_pid(), ...)`), as MPI asks.
/// Errors: some processes create a window and others do not; no room in
/// the process's region of window memory (`BSPLIB_WINDOW_MEMORY`).
///
/// # Safety
///
/// `base` is NULL or points to a writable `void *`.
#[no_mangle]
pub unsafe extern "C" fn bsp_window_create(
    nbytes: usize,
    base: *mut *mut c_void,
) -> *mut bsp_window {
    // SAFETY: forwarded.
    unsafe { bsplib_window_create_at(nbytes, base, std::ptr::null(), 0) }
}

/// `bsp_window_create` with the caller's location.
///
/// # Safety
///
/// As for [`bsp_window_create`].
#[no_mangle]
pub unsafe extern "C" fn bsplib_window_create_at(
    nbytes: usize,
    base: *mut *mut c_void,
    file: *const c_char,
    line: c_int,
) -> *mut bsp_window {
    crate::with_bsp("bsp_window_create", file, line, |bsp, loc| {
        let win = bsplib::Window::<u8>::new_at(bsp, nbytes, "bsp_window_create", loc)?;
        // SAFETY: the caller gives NULL or a pointer to a `void *`.
        unsafe { store_ptr(base, win.base_ptr().cast()) };
        let held = vec![0; bsp.nprocs()];
        let w = Box::into_raw(Box::new(bsp_window {
            win,
            held,
            origins: None,
            targets: None,
        }));
        WINDOWS.with(|s| s.borrow_mut().0.insert(w.addr()));
        Ok(w)
    })
}

/// `void bsp_window_free(bsp_window *w)`: frees the window on every
/// process. Collective, like a `bsp_sync`. Error: a lock of it held, a
/// handle that is not a live window of this process.
///
/// # Safety
///
/// None beyond C's: the handle is checked against this process's live
/// windows before it is used.
#[no_mangle]
pub unsafe extern "C" fn bsp_window_free(w: *mut bsp_window) {
    // SAFETY: forwarded.
    unsafe { bsplib_window_free_at(w, std::ptr::null(), 0) }
}

/// `bsp_window_free` with the caller's location.
///
/// # Safety
///
/// As for [`bsp_window_free`].
#[no_mangle]
pub unsafe extern "C" fn bsplib_window_free_at(
    w: *mut bsp_window,
    file: *const c_char,
    line: c_int,
) {
    crate::with_bsp("bsp_window_free", file, line, |bsp, loc| {
        const CALL: &str = "bsp_window_free";
        let win = window(bsp, w, CALL, loc)?;
        if win.origins.is_some() || win.targets.is_some() {
            let detail = "an epoch of this window is open (bsp_window_complete, \
                          bsp_window_wait first)"
                .to_string();
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::EpochOpen { detail }, CALL));
        }
        if let Some(q) = win.held.iter().position(|&k| k != 0) {
            let detail = format!("a lock of process {q}'s memory of this window is held");
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::EpochOpen { detail }, CALL));
        }
        WINDOWS.with(|s| s.borrow_mut().0.remove(&w.addr()));
        // SAFETY: a live handle of this process, taken out of the set:
        // the box `bsp_window_create` leaked, reclaimed once.
        let b = unsafe { take_window(w) };
        b.win.free_at(bsp, CALL, loc)
    })
}

/// `void bsp_window_lock(bsp_window *w, int pid, int kind)`: locks
/// process `pid`'s memory of `w` (MPI's `MPI_Win_lock`),
/// `BSP_LOCK_EXCLUSIVE` (to read and write) or `BSP_LOCK_SHARED` (to
/// read), waiting until it is held; `pid` makes no call. A process holds
/// one window lock at a time (so that two processes can never wait for
/// each other's), and none across a `bsp_sync`. Errors: an unknown kind,
/// `pid` out of range, a second lock while one is held, a lock of a
/// process inside an access epoch of this window to it.
#[no_mangle]
pub extern "C" fn bsp_window_lock(w: *mut bsp_window, pid: c_int, kind: c_int) {
    bsplib_window_lock_at(w, pid, kind, std::ptr::null(), 0)
}

/// `bsp_window_lock` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_window_lock_at(
    w: *mut bsp_window,
    pid: c_int,
    kind: c_int,
    file: *const c_char,
    line: c_int,
) {
    crate::with_bsp("bsp_window_lock", file, line, |bsp, loc| {
        const CALL: &str = "bsp_window_lock";
        let win = window(bsp, w, CALL, loc)?;
        let q = window_pid(bsp, pid, CALL, loc)?;
        if kind != BSP_LOCK_EXCLUSIVE && kind != BSP_LOCK_SHARED {
            let detail = format!(
                "lock kind {kind} is neither BSP_LOCK_EXCLUSIVE ({BSP_LOCK_EXCLUSIVE}) nor \
                 BSP_LOCK_SHARED ({BSP_LOCK_SHARED})"
            );
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::NoEpoch { detail }, CALL));
        }
        if WINDOWS.with(|s| s.borrow().1) > 0 {
            let detail = format!(
                "a window lock is held already (a process holds one at a time: unlock it \
                 before locking process {q}'s memory)"
            );
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::EpochOpen { detail }, CALL));
        }
        // SAFETY: released once by `bsp_window_unlock` (which checks
        // `held`); no guard of a C window ever exists.
        unsafe {
            win.win
                .lock_raw(bsp, q, kind == BSP_LOCK_EXCLUSIVE, CALL, loc)?
        };
        win.held[q] = kind;
        WINDOWS.with(|s| s.borrow_mut().1 += 1);
        Ok(())
    })
}

/// `void bsp_window_unlock(bsp_window *w, int pid)`: releases the lock
/// of `pid`'s memory (MPI's `MPI_Win_unlock`); the puts under it are in
/// `pid`'s memory. Error: no lock of it held.
#[no_mangle]
pub extern "C" fn bsp_window_unlock(w: *mut bsp_window, pid: c_int) {
    bsplib_window_unlock_at(w, pid, std::ptr::null(), 0)
}

/// `bsp_window_unlock` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_window_unlock_at(
    w: *mut bsp_window,
    pid: c_int,
    file: *const c_char,
    line: c_int,
) {
    crate::with_bsp("bsp_window_unlock", file, line, |bsp, loc| {
        const CALL: &str = "bsp_window_unlock";
        let win = window(bsp, w, CALL, loc)?;
        let q = window_pid(bsp, pid, CALL, loc)?;
        held_lock(bsp, win, q, CALL, loc)?;
        // SAFETY: this process holds that lock (`held`), taken by
        // `bsp_window_lock`.
        unsafe {
            win.win
                .unlock_raw(bsp, q, win.held[q] == BSP_LOCK_EXCLUSIVE)
        };
        win.held[q] = 0;
        WINDOWS.with(|s| s.borrow_mut().1 -= 1);
        Ok(())
    })
}

/// Whether `q` is a target of `win`'s open access epoch.
fn started(win: &bsp_window, q: usize) -> bool {
    win.targets
        .as_ref()
        .is_some_and(|t| t.binary_search(&q).is_ok())
}

/// A C group of `n` pids at `pids` as sorted, distinct pids of `bsp`, or
/// its error.
///
/// # Safety
///
/// `pids` holds `n` readable ints (or is NULL, an error when `n > 0`).
unsafe fn window_group(
    bsp: &bsplib::Bsp,
    pids: *const c_int,
    n: c_int,
    what: &'static str,
    call: &'static str,
    loc: Option<bsplib::SourceLocation>,
) -> Result<Vec<usize>, bsplib::Error> {
    // SAFETY: the caller's promise.
    let Some(g) = (unsafe { group(pids, n) }) else {
        return Err(bad_group(bsp, what, n, call, loc));
    };
    let mut out = Vec::with_capacity(g.len());
    for q in g {
        let q = c_int::try_from(q).unwrap_or(c_int::MAX);
        out.push(window_pid(bsp, q, call, loc)?);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The error of an epoch call made while a window lock is held (the
/// process could wait in it for a process that waits for the lock).
fn no_lock_held(
    bsp: &bsplib::Bsp,
    call: &'static str,
    loc: Option<bsplib::SourceLocation>,
) -> Result<(), bsplib::Error> {
    if WINDOWS.with(|s| s.borrow().1) == 0 {
        return Ok(());
    }
    let detail = "a window lock is held (unlock it before an epoch call, which may wait)".into();
    Err(bsp
        .raw()
        .at(loc)
        .fail(bsplib::ErrorKind::EpochOpen { detail }, call))
}

/// `void bsp_window_post(bsp_window *w, const int *origins, int n)`:
/// exposes this process's memory of `w` to the `n` processes at
/// `origins` (MPI's `MPI_Win_post`); their puts and gets of one access
/// epoch each are complete here when `bsp_window_wait` returns. Never
/// waits. Errors: an exposure epoch of `w` open already, a bad group, a
/// window lock held.
///
/// # Safety
///
/// `origins` holds `n` readable ints (or is NULL, an error when `n > 0`).
#[no_mangle]
pub unsafe extern "C" fn bsp_window_post(w: *mut bsp_window, origins: *const c_int, n: c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_window_post_at(w, origins, n, std::ptr::null(), 0) }
}

/// `bsp_window_post` with the caller's location.
///
/// # Safety
///
/// As for [`bsp_window_post`].
#[no_mangle]
pub unsafe extern "C" fn bsplib_window_post_at(
    w: *mut bsp_window,
    origins: *const c_int,
    n: c_int,
    file: *const c_char,
    line: c_int,
) {
    crate::with_bsp("bsp_window_post", file, line, |bsp, loc| {
        const CALL: &str = "bsp_window_post";
        let win = window(bsp, w, CALL, loc)?;
        // SAFETY: the caller's contract.
        let g = unsafe { window_group(bsp, origins, n, "origins", CALL, loc)? };
        no_lock_held(bsp, CALL, loc)?;
        if win.origins.is_some() {
            let detail = "an exposure epoch of this window is open already (bsp_window_wait \
                          first)"
                .to_string();
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::EpochOpen { detail }, CALL));
        }
        // SAFETY: closed once by bsp_window_wait/test (which check
        // `origins`); no guard of a C window exists.
        unsafe { win.win.open_raw(bsp, Some(&g), None, CALL, loc)? };
        win.origins = Some(g);
        Ok(())
    })
}

/// `void bsp_window_start(bsp_window *w, const int *targets, int n)`:
/// opens an access epoch to the `n` processes at `targets` (MPI's
/// `MPI_Win_start`), waiting until each has posted to this process;
/// `bsp_window_put` and `bsp_window_get` to a target then belong to it
/// (each complete when it returns). Errors: an access
/// epoch open already, a bad group, a window lock held, this process
/// among the targets without an exposure epoch to itself, a target that
/// enters its sync or ends without posting (not a hang).
///
/// # Safety
///
/// `targets` holds `n` readable ints (or is NULL, an error when `n > 0`).
#[no_mangle]
pub unsafe extern "C" fn bsp_window_start(w: *mut bsp_window, targets: *const c_int, n: c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_window_start_at(w, targets, n, std::ptr::null(), 0) }
}

/// `bsp_window_start` with the caller's location.
///
/// # Safety
///
/// As for [`bsp_window_start`].
#[no_mangle]
pub unsafe extern "C" fn bsplib_window_start_at(
    w: *mut bsp_window,
    targets: *const c_int,
    n: c_int,
    file: *const c_char,
    line: c_int,
) {
    crate::with_bsp("bsp_window_start", file, line, |bsp, loc| {
        const CALL: &str = "bsp_window_start";
        let win = window(bsp, w, CALL, loc)?;
        // SAFETY: the caller's contract.
        let g = unsafe { window_group(bsp, targets, n, "targets", CALL, loc)? };
        no_lock_held(bsp, CALL, loc)?;
        if win.targets.is_some() {
            let detail = "an access epoch of this window is open already (bsp_window_complete \
                          first)"
                .to_string();
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::EpochOpen { detail }, CALL));
        }
        let me = bsp.pid();
        let posted_to_me = win
            .origins
            .as_ref()
            .is_some_and(|o| o.binary_search(&me).is_ok());
        if g.binary_search(&me).is_ok() && !posted_to_me {
            let detail = format!(
                "process {me} starts an access epoch to itself without an exposure epoch to \
                 itself (bsp_window_post naming it first)"
            );
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::EpochUnmatched { detail }, CALL));
        }
        // SAFETY: closed once by bsp_window_complete (which checks
        // `targets`); no guard of a C window exists.
        unsafe { win.win.open_raw(bsp, None, Some(&g), CALL, loc)? };
        win.targets = Some(g);
        Ok(())
    })
}

/// `void bsp_window_complete(bsp_window *w)`: ends the access epoch
/// (MPI's `MPI_Win_complete`): the targets' `bsp_window_wait` can count
/// this process (its puts and gets are complete already). Error: no
/// access epoch open.
#[no_mangle]
pub extern "C" fn bsp_window_complete(w: *mut bsp_window) {
    bsplib_window_complete_at(w, std::ptr::null(), 0)
}

/// `bsp_window_complete` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_window_complete_at(w: *mut bsp_window, file: *const c_char, line: c_int) {
    crate::with_bsp("bsp_window_complete", file, line, |bsp, loc| {
        const CALL: &str = "bsp_window_complete";
        let win = window(bsp, w, CALL, loc)?;
        if win.targets.take().is_none() {
            let detail = "bsp_window_complete without an access epoch (bsp_window_start)".into();
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::NoEpoch { detail }, CALL));
        }
        win.win.complete_raw(bsp, CALL, loc)
    })
}

/// `bsp_window_wait` and `bsp_window_test`: the exposure epoch's end,
/// waiting or not.
fn window_wait(
    w: *mut bsp_window,
    block: bool,
    call: &'static str,
    file: *const c_char,
    line: c_int,
) -> c_int {
    crate::with_bsp(call, file, line, |bsp, loc| {
        let win = window(bsp, w, call, loc)?;
        if win.origins.is_none() {
            let detail = format!("{call} without an exposure epoch (bsp_window_post)");
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::NoEpoch { detail }, call));
        }
        if block {
            no_lock_held(bsp, call, loc)?;
        }
        // SAFETY: C holds no view of a Rust `Area`.
        let done = unsafe { win.win.wait_raw(bsp, block, call, loc)? };
        if done {
            win.origins = None;
        }
        Ok(c_int::from(done))
    })
}

/// `void bsp_window_wait(bsp_window *w)`: waits until every origin of the
/// exposure epoch has completed (MPI's `MPI_Win_wait`): their puts are in
/// this process's memory. Errors: no exposure epoch open; an origin that
/// enters its sync or ends without completing (not a hang).
#[no_mangle]
pub extern "C" fn bsp_window_wait(w: *mut bsp_window) {
    window_wait(w, true, "bsp_window_wait", std::ptr::null(), 0);
}

/// `bsp_window_wait` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_window_wait_at(w: *mut bsp_window, file: *const c_char, line: c_int) {
    window_wait(w, true, "bsp_window_wait", file, line);
}

/// `int bsp_window_test(bsp_window *w)`: 1 (and the exposure epoch
/// closed) when every origin has completed, else 0, without waiting
/// (MPI's `MPI_Win_test`). Error: no exposure epoch open.
#[no_mangle]
pub extern "C" fn bsp_window_test(w: *mut bsp_window) -> c_int {
    window_wait(w, false, "bsp_window_test", std::ptr::null(), 0)
}

/// `bsp_window_test` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_window_test_at(
    w: *mut bsp_window,
    file: *const c_char,
    line: c_int,
) -> c_int {
    window_wait(w, false, "bsp_window_test", file, line)
}

/// The error of an access to `q`'s memory of `win` without its lock.
fn held_lock(
    bsp: &bsplib::Bsp,
    win: &bsp_window,
    q: usize,
    call: &'static str,
    loc: Option<bsplib::SourceLocation>,
) -> Result<(), bsplib::Error> {
    if win.held[q] != 0 {
        return Ok(());
    }
    let detail =
        format!("no lock of process {q}'s memory of this window is held (bsp_window_lock)");
    Err(bsp
        .raw()
        .at(loc)
        .fail(bsplib::ErrorKind::NoEpoch { detail }, call))
}

/// `void bsp_window_put(bsp_window *w, int pid, const void *src, size_t
/// offset, size_t nbytes)`: writes `nbytes` from `src` at byte `offset`
/// of `pid`'s memory, under an exclusive lock of it; `src` may be reused
/// at once. Errors: no lock, a shared lock, out of bounds, `src` NULL.
///
/// # Safety
///
/// `src` holds `nbytes` readable bytes (or is NULL, an error).
#[no_mangle]
pub unsafe extern "C" fn bsp_window_put(
    w: *mut bsp_window,
    pid: c_int,
    src: *const c_void,
    offset: usize,
    nbytes: usize,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_window_put_at(w, pid, src, offset, nbytes, std::ptr::null(), 0) }
}

/// `bsp_window_put` with the caller's location.
///
/// # Safety
///
/// As for [`bsp_window_put`].
#[no_mangle]
pub unsafe extern "C" fn bsplib_window_put_at(
    w: *mut bsp_window,
    pid: c_int,
    src: *const c_void,
    offset: usize,
    nbytes: usize,
    file: *const c_char,
    line: c_int,
) {
    crate::with_bsp("bsp_window_put", file, line, |bsp, loc| {
        const CALL: &str = "bsp_window_put";
        let win = window(bsp, w, CALL, loc)?;
        let q = window_pid(bsp, pid, CALL, loc)?;
        let in_epoch = started(win, q);
        if !in_epoch {
            held_lock(bsp, win, q, CALL, loc)?;
        }
        if src.is_null() && nbytes > 0 {
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::NullPointer { what: "src" }, CALL));
        }
        let src: &[u8] = if nbytes == 0 {
            &[]
        } else {
            // SAFETY: the caller gives `nbytes` readable bytes at `src`.
            unsafe { std::slice::from_raw_parts(src.cast(), nbytes) }
        };
        if in_epoch {
            // SAFETY: the access epoch on `q` is open.
            return unsafe { win.win.epoch_put_raw(bsp, q, offset, src, CALL, loc) };
        }
        let exclusive = win.held[q] == BSP_LOCK_EXCLUSIVE;
        // SAFETY: this process holds `q`'s lock of that kind.
        unsafe { win.win.put_raw(bsp, q, offset, src, exclusive, CALL, loc) }
    })
}

/// `void bsp_window_get(bsp_window *w, int pid, size_t offset, void *dst,
/// size_t nbytes)`: reads `nbytes` at byte `offset` of `pid`'s memory
/// into `dst`, under a lock of it; complete when it returns. Errors: no
/// lock, out of bounds, `dst` NULL.
///
/// # Safety
///
/// `dst` holds `nbytes` writable bytes (or is NULL, an error).
#[no_mangle]
pub unsafe extern "C" fn bsp_window_get(
    w: *mut bsp_window,
    pid: c_int,
    offset: usize,
    dst: *mut c_void,
    nbytes: usize,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_window_get_at(w, pid, offset, dst, nbytes, std::ptr::null(), 0) }
}

/// `bsp_window_get` with the caller's location.
///
/// # Safety
///
/// As for [`bsp_window_get`].
#[no_mangle]
pub unsafe extern "C" fn bsplib_window_get_at(
    w: *mut bsp_window,
    pid: c_int,
    offset: usize,
    dst: *mut c_void,
    nbytes: usize,
    file: *const c_char,
    line: c_int,
) {
    crate::with_bsp("bsp_window_get", file, line, |bsp, loc| {
        const CALL: &str = "bsp_window_get";
        let win = window(bsp, w, CALL, loc)?;
        let q = window_pid(bsp, pid, CALL, loc)?;
        let in_epoch = started(win, q);
        if !in_epoch {
            held_lock(bsp, win, q, CALL, loc)?;
        }
        if dst.is_null() && nbytes > 0 {
            return Err(bsp
                .raw()
                .at(loc)
                .fail(bsplib::ErrorKind::NullPointer { what: "dst" }, CALL));
        }
        let dst: &mut [u8] = if nbytes == 0 {
            &mut []
        } else {
            // SAFETY: the caller gives `nbytes` writable bytes at `dst`.
            unsafe { std::slice::from_raw_parts_mut(dst.cast(), nbytes) }
        };
        if in_epoch {
            // SAFETY: the access epoch on `q` is open.
            return unsafe { win.win.epoch_get_raw(bsp, q, offset, dst, CALL, loc) };
        }
        // SAFETY: this process holds a lock of `q`'s memory.
        unsafe { win.win.get_raw(bsp, q, offset, dst, CALL, loc) }
    })
}

/// `void bsp_window_accumulate(bsp_window *w, int pid, const void *src,
/// size_t offset, int count, bsp_type type, bsp_op op)`: combines the
/// `count` elements of `type` at `src` with `op` into `pid`'s memory from
/// byte `offset` (`dst[i] = dst[i] op src[i]`, the same kernels as
/// `bsp_accumulate`), under an exclusive lock of it (which makes it
/// atomic; complete when it returns) or to a started target of an access
/// epoch in one-sided mode (`bsp_rma_init`: combined at the target's
/// `bsp_window_wait`, origins in pid order and each origin's in call
/// order, bit-identical on every engine). Errors: no lock or epoch, a
/// shared lock, an epoch outside one-sided mode, out of bounds, an
/// unknown type or operator, an operator not defined on the type, two
/// operators or types into one target in one epoch, `count` negative,
/// `src` NULL.
///
/// # Safety
///
/// `src` holds `count` readable elements of `type` (or is NULL, an
/// error).
#[no_mangle]
pub unsafe extern "C" fn bsp_window_accumulate(
    w: *mut bsp_window,
    pid: c_int,
    src: *const c_void,
    offset: usize,
    count: c_int,
    ty: bsp_type,
    op: bsp_op,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_window_accumulate_at(w, pid, src, offset, count, ty, op, std::ptr::null(), 0) }
}

/// `bsp_window_accumulate` with the caller's location.
///
/// # Safety
///
/// As for [`bsp_window_accumulate`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn bsplib_window_accumulate_at(
    w: *mut bsp_window,
    pid: c_int,
    src: *const c_void,
    offset: usize,
    count: c_int,
    ty: bsp_type,
    op: bsp_op,
    file: *const c_char,
    line: c_int,
) {
    crate::with_bsp("bsp_window_accumulate", file, line, |bsp, loc| {
        const CALL: &str = "bsp_window_accumulate";
        let win = window(bsp, w, CALL, loc)?;
        let q = window_pid(bsp, pid, CALL, loc)?;
        let in_epoch = started(win, q);
        if !in_epoch {
            held_lock(bsp, win, q, CALL, loc)?;
        }
        let fail = |kind| Err(bsp.raw().at(loc).fail(kind, CALL));
        let Some(ty) = bsplib::rma::ElemType::from_id(ty.into()) else {
            return fail(bsplib::ErrorKind::AccumulateUnknown {
                what: "element type",
                value: ty.into(),
            });
        };
        let Some(op) = bsplib::Op::from_id(op.into()) else {
            return fail(bsplib::ErrorKind::AccumulateUnknown {
                what: "operator",
                value: op.into(),
            });
        };
        let Ok(count) = usize::try_from(count) else {
            return fail(bsplib::ErrorKind::Negative {
                what: "count",
                value: count.into(),
            });
        };
        let nbytes = count * ty.size();
        if src.is_null() && nbytes > 0 {
            return fail(bsplib::ErrorKind::NullPointer { what: "src" });
        }
        let src: &[u8] = if nbytes == 0 {
            &[]
        } else {
            // SAFETY: the caller gives `count` elements of `ty` at `src`.
            unsafe { std::slice::from_raw_parts(src.cast(), nbytes) }
        };
        if in_epoch {
            // Combined at `q`'s wait, in pid order (one-sided mode).
            return win
                .win
                .epoch_accumulate_raw(bsp, q, offset, src, ty, op, CALL, loc);
        }
        let exclusive = win.held[q] == BSP_LOCK_EXCLUSIVE;
        // SAFETY: this process holds `q`'s lock of that kind; whole
        // elements of `ty`.
        unsafe {
            win.win
                .accumulate_raw(bsp, q, offset, src, ty, op, exclusive, CALL, loc)
        }
    })
}
