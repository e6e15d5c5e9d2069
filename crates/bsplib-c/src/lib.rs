//! `libbsp`: the standard BSPlib C interface (`bsp.h`) over the `bsplib`
//! core.
//!
//! Every function checks nothing itself: arguments go to the core's raw
//! layer ([`bsplib::raw::Raw`]), which makes the same checks for Rust and C
//! callers, and an error comes back as a value. This edge turns it into what
//! the Oxford toolset did: a message on standard error naming the call, the
//! process, the superstep and (through the macros of `bsp.h`) the caller's
//! `__FILE__:__LINE__`, and the end of every process with a non-zero exit
//! status. `guard` is the one panic boundary.
//!
//! Start-up (`bsp_init`, `bsp_begin`, `bsp_end`) is in `startup.rs`; the
//! Fortran binding (`bspbegin` ... `bspmove`) in `fortran.rs`; the C
//! part (variadic `bsp_abort`, `longjmp` out of a thread's SPMD code) in
//! `shim.c`, reached through the trampolines of `trampoline.rs`.

#![allow(clippy::missing_safety_doc)] // the C contract is documented in bsp.h

mod fortran;
pub mod lapi;
pub mod level1;
pub mod rma;
mod startup;
mod trampoline;

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use bsplib::launch::Attached;
use bsplib::raw::Raw;
use bsplib::{Bsp, Error, ErrorKind, SourceLocation};

pub use startup::{
    bsp_begin, bsp_init, bsp_nprocs, bsplib_begin_at, bsplib_end_process, bsplib_init_at,
    bsplib_nprocs_at,
};

thread_local! {
    /// The BSP process this thread runs, between `bsp_begin` and `bsp_end`:
    /// a leaked `Box`, taken out while a call uses it. A plain pointer, so
    /// that this thread-local has no destructor: it stays readable while
    /// the program exits (`exit` runs thread-local destructors before the
    /// `on_exit` handler that names a process exiting in mid-run).
    static CURRENT: Cell<*mut Attached> = const { Cell::new(std::ptr::null_mut()) };
    /// The call this thread is in, for the crash handler of `shim.c`:
    /// (name, name length, C file or null, line); a null name when in no
    /// call (the other fields are then stale). No destructor either.
    static IN_CALL: Cell<(*const u8, usize, *const c_char, c_int)> =
        const { Cell::new((std::ptr::null(), 0, std::ptr::null(), 0)) };
    /// This thread ran a BSP process that called `bsp_end`.
    static ENDED: Cell<bool> = const { Cell::new(false) };
}

/// Makes `attached` this thread's process.
pub(crate) fn attach(attached: Attached) {
    let p = Box::into_raw(Box::new(attached));
    CURRENT.with(|c| c.set(p));
}

/// Takes this thread's process away (`bsp_end`).
pub(crate) fn detach() -> Option<Attached> {
    let p = CURRENT.with(|c| c.replace(std::ptr::null_mut()));
    // SAFETY: a non-null `CURRENT` is the `Box` leaked by `attach`, owned
    // by this thread and not in use (calls take it out while they use it).
    (!p.is_null()).then(|| *unsafe { Box::from_raw(p) })
}

/// This thread's BSP process called `bsp_end`.
pub(crate) fn mark_ended() {
    ENDED.with(|e| e.set(true));
}

/// This thread's process's pid and superstep, if it has one (also while
/// the program exits).
pub(crate) fn attached_place() -> Option<(usize, u64)> {
    let p = CURRENT.try_with(Cell::get).ok()?;
    (!p.is_null()).then(|| {
        // SAFETY: as in `detach`; only read, outside any other call of
        // this thread.
        let bsp = unsafe { &mut *p }.bsp();
        (bsp.pid(), bsp.superstep())
    })
}

/// Whether this thread runs a BSP process that no call of this thread
/// holds now.
pub(crate) fn has_process() -> bool {
    CURRENT.with(|c| !c.get().is_null())
}

/// The location a C macro passed.
fn location(file: *const c_char, line: c_int) -> Option<SourceLocation> {
    // SAFETY: `file` is null or the `__FILE__` of a `bsp.h` macro: a string
    // literal, valid for the rest of the program.
    unsafe { SourceLocation::from_c(file, line) }
}

/// The panic boundary: runs `f`, and turns a panic (a bug of this library)
/// into a message and the end of the program, never an unwind into C.
fn guard<T>(call: &'static str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            eprint_line(&format!("bsplib: internal error in {call}: {what}\n"));
            terminate(1)
        }
    }
}

/// Puts this thread's process back into `CURRENT` and forgets the call,
/// however the call ends.
struct InCall(*mut Attached);

impl Drop for InCall {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
        // A null name is "in no call" (`bsplib_c_in_call`): the rest of
        // the entry is left as it was.
        IN_CALL.with(|c| {
            let (_, len, file, line) = c.get();
            c.set((std::ptr::null(), len, file, line));
        });
    }
}

/// Runs `f` on this thread's BSP process; an error ends the program
/// ([`fail`]). While `f` runs, a crash is reported as a crash of `call`
/// at `file:line` (`shim.c`).
fn with_bsp<T>(
    call: &'static str,
    file: *const c_char,
    line: c_int,
    f: impl FnOnce(&mut Bsp, Option<SourceLocation>) -> Result<T, Error>,
) -> T {
    // The fast path moves little: the error (about 120 bytes) is boxed on
    // the way out of the panic guard, so a successful call carries a
    // `Result<T, Box<Error>>` (for `T = ()` one word), not a
    // `Result<T, Error>` copied twice through `catch_unwind`.
    let result = guard(call, || {
        let p = CURRENT.with(|c| c.replace(std::ptr::null_mut()));
        if p.is_null() {
            let loc = location(file, line);
            // Inside a LAPI handler the dispatching call holds the process.
            if let Some(h) = bsplib::raw::lapi_in_handler() {
                return Err(boxed(lapi::in_handler_error(call, h, loc)));
            }
            return Err(boxed(outside(call, loc)));
        }
        let _in_call = InCall(p);
        IN_CALL.with(|c| c.set((call.as_ptr(), call.len(), file, line)));
        // SAFETY: `p` is this thread's leaked `Box` (see `CURRENT`), taken
        // out of `CURRENT` for this call: no other reference to it exists.
        match f(unsafe { &mut *p }.bsp(), location(file, line)) {
            Ok(v) => Ok(v),
            Err(e) => Err(boxed(e)),
        }
    });
    match result {
        Ok(v) => v,
        Err(e) => fail(*e),
    }
}

/// An error, out of line and off the fast path.
#[cold]
#[inline(never)]
fn boxed(e: Error) -> Box<Error> {
    Box::new(e)
}

/// `shim.c`'s crash handler: the call this thread is in, if any.
///
/// # Safety
///
/// The four pointers must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn bsplib_c_in_call(
    name: *mut *const u8,
    name_len: *mut usize,
    file: *mut *const c_char,
    line: *mut c_int,
) -> c_int {
    let (n, len, f, l) =
        IN_CALL
            .try_with(Cell::get)
            .unwrap_or((std::ptr::null(), 0, std::ptr::null(), 0));
    if n.is_null() {
        return 0;
    }
    // SAFETY: the caller's contract: `shim.c` passes pointers to four
    // live locals.
    unsafe {
        name.write(n);
        name_len.write(len);
        file.write(f);
        line.write(l);
    }
    1
}

/// `shim.c`: true in a process the program forked itself from a BSP
/// process, which must not report anything about the run.
#[no_mangle]
pub extern "C" fn bsplib_c_foreign() -> c_int {
    c_int::from(bsplib::launch::in_foreign_process())
}

/// [`with_bsp`] for a call of the raw layer, reporting the C caller's
/// location (`file`, `line`).
fn with_raw<T>(
    call: &'static str,
    file: *const c_char,
    line: c_int,
    f: impl FnOnce(Raw<'_>) -> Result<T, Error>,
) -> T {
    with_bsp(call, file, line, |bsp, loc| f(bsp.raw().at(loc)))
}

/// The error of a call made by a thread that runs no BSP process: outside
/// `bsp_begin` ... `bsp_end`, or during a run from a thread (or forked
/// process) the program made itself. The latter is named with the BSP
/// process whose OS process it is in, and that process's superstep.
pub(crate) fn outside(call: &'static str, loc: Option<SourceLocation>) -> Error {
    let launch = startup::launch();
    match launch {
        Some(launch) if !ENDED.with(Cell::get) && !startup::this_process_ended() => {
            let what = if bsplib::launch::in_foreign_process() {
                "a process the program forked"
            } else {
                "a thread the program created"
            };
            let pid = startup::os_process_pid();
            Error::new(
                ErrorKind::NotABspProcess { what },
                call,
                pid,
                launch.superstep_of(pid),
                loc,
            )
        }
        _ => Error::new(ErrorKind::OutsideRun, call, 0, 0, loc),
    }
}

/// Ends the program after the error `err`: prints the run's error once (a
/// process stopped by another's failure prints nothing of its own), stops
/// every process, and exits with status 1.
#[cold]
fn fail(err: Error) -> ! {
    if bsplib::launch::in_foreign_process() {
        // A process the program forked itself: say what it did wrong, but
        // leave the run alone.
        eprint_line(&format!("bsplib: {err}\n"));
        terminate(1)
    }
    match startup::launch() {
        Some(launch) => {
            if !err.is_stopped() {
                launch.record_failure(err.clone());
            }
            launch.report();
            // SAFETY: the run's error is recorded (above, or by the process
            // that stopped the run), and this path ends the program
            // (`terminate`): process 0 may be ended by its monitor first,
            // as C programs are meant to be.
            unsafe { launch.stop() };
            startup::end_others(&launch);
            // A process ending as the run failed (on `threads`, in this OS
            // process) finishes writing its profile first.
            launch.settle(std::time::Duration::from_secs(2));
        }
        None => eprint_line(&format!("bsplib: {err}\n")),
    }
    terminate(1)
}

/// Flushes C, Fortran and Rust output and ends the OS process.
fn terminate(status: c_int) -> ! {
    let _ = std::io::Write::flush(&mut std::io::stdout());
    fortran::flush_units();
    // SAFETY: flushing C stdio has no preconditions; `_exit` ends the
    // process without running handlers that could touch a stopped run.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(status)
    }
}

/// An `int` for C, or the error naming the value.
fn to_int(
    what: &'static str,
    v: usize,
    call: &'static str,
    bsp: &Bsp,
    loc: Option<SourceLocation>,
) -> Result<c_int, Error> {
    c_int::try_from(v).map_err(|_| {
        Error::new(
            ErrorKind::IntOverflow {
                what,
                value: v as u64,
            },
            call,
            bsp.pid(),
            bsp.superstep(),
            loc,
        )
    })
}

/// A pointer argument that must not be null.
fn non_null<T>(
    p: *mut T,
    what: &'static str,
    call: &'static str,
    bsp: &Bsp,
    loc: Option<SourceLocation>,
) -> Result<*mut T, Error> {
    if p.is_null() {
        Err(Error::new(
            ErrorKind::NullPointer { what },
            call,
            bsp.pid(),
            bsp.superstep(),
            loc,
        ))
    } else {
        Ok(p)
    }
}

// ----- the primitives, each with its located twin -----------------------

/// `int bsp_pid(void)`.
#[no_mangle]
pub extern "C" fn bsp_pid() -> c_int {
    bsplib_pid_at(std::ptr::null(), 0)
}

/// `bsp_pid` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_pid_at(file: *const c_char, line: c_int) -> c_int {
    with_bsp("bsp_pid", file, line, |bsp, _| Ok(bsp.pid() as c_int))
}

/// `double bsp_time(void)`: seconds since `bsp_begin`.
#[no_mangle]
pub extern "C" fn bsp_time() -> f64 {
    bsplib_time_at(std::ptr::null(), 0)
}

/// `bsp_time` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_time_at(file: *const c_char, line: c_int) -> f64 {
    with_bsp("bsp_time", file, line, |bsp, _| Ok(bsp.time()))
}

/// `void bsp_sync(void)`.
#[no_mangle]
pub extern "C" fn bsp_sync() {
    bsplib_sync_at(std::ptr::null(), 0)
}

/// `bsp_sync` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_sync_at(file: *const c_char, line: c_int) {
    with_bsp("bsp_sync", file, line, |bsp, loc| {
        Raw::sync(bsp, loc)?;
        startup::note(bsp.pid(), bsp.superstep());
        Ok(())
    })
}

/// `void bsp_push_reg(const void *ident, int size)`.
#[no_mangle]
pub unsafe extern "C" fn bsp_push_reg(ident: *const c_void, size: c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_push_reg_at(ident, size, std::ptr::null(), 0) }
}

/// `bsp_push_reg` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_push_reg_at(
    ident: *const c_void,
    size: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: the C caller's contract (bsp.h) is the raw layer's.
    with_raw("bsp_push_reg", file, line, |raw| unsafe {
        raw.push_reg(ident, size.into())
    })
}

/// `void bsp_pop_reg(const void *ident)`.
#[no_mangle]
pub unsafe extern "C" fn bsp_pop_reg(ident: *const c_void) {
    // SAFETY: forwarded.
    unsafe { bsplib_pop_reg_at(ident, std::ptr::null(), 0) }
}

/// `bsp_pop_reg` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_pop_reg_at(ident: *const c_void, file: *const c_char, line: c_int) {
    // SAFETY: as for `bsplib_push_reg_at`.
    with_raw("bsp_pop_reg", file, line, |raw| unsafe {
        raw.pop_reg(ident)
    })
}

/// `void bsp_put(int pid, const void *src, void *dst, int offset, int nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bsp_put(
    pid: c_int,
    src: *const c_void,
    dst: *mut c_void,
    offset: c_int,
    nbytes: c_int,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_put_at(pid, src, dst, offset, nbytes, std::ptr::null(), 0) }
}

/// `bsp_put` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_put_at(
    pid: c_int,
    src: *const c_void,
    dst: *mut c_void,
    offset: c_int,
    nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: as for `bsplib_push_reg_at`.
    with_raw("bsp_put", file, line, |raw| unsafe {
        raw.put(pid.into(), src, dst, offset.into(), nbytes.into())
    })
}

/// One piece of an io-vector transfer (`bsp_put_vec`, `bsp_get_vec`):
/// `nbytes` bytes between local memory at `local` (the source of a put,
/// the destination of a get) and byte `offset` of the remote area.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct bsp_iovec_t {
    /// Local memory: read by `bsp_put_vec`, written by `bsp_get_vec`.
    pub local: *mut c_void,
    /// Byte offset in the remote area.
    pub offset: usize,
    /// Bytes.
    pub nbytes: usize,
}

/// `void bsp_put_strided(int pid, const void *src, size_t src_stride,
/// void *dst, size_t offset, size_t dst_stride, size_t block, size_t
/// count)`: `count` blocks of `block` bytes, block k read now from `src +
/// k*src_stride` and written at the sync at byte `offset + k*dst_stride`
/// of the area registered on `pid` in the slot of `dst` (a matrix column
/// in one call and one record). The destination's blocks must not
/// overlap (`dst_stride >= block`, or one block); the owner checks the
/// whole span against its extent. Sizes and strides are in bytes.
#[no_mangle]
pub unsafe extern "C" fn bsp_put_strided(
    pid: c_int,
    src: *const c_void,
    src_stride: usize,
    dst: *mut c_void,
    offset: usize,
    dst_stride: usize,
    block: usize,
    count: usize,
) {
    // SAFETY: forwarded.
    unsafe {
        bsplib_put_strided_at(
            pid,
            src,
            src_stride,
            dst,
            offset,
            dst_stride,
            block,
            count,
            std::ptr::null(),
            0,
        )
    }
}

/// `bsp_put_strided` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_put_strided_at(
    pid: c_int,
    src: *const c_void,
    src_stride: usize,
    dst: *mut c_void,
    offset: usize,
    dst_stride: usize,
    block: usize,
    count: usize,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: as for `bsplib_push_reg_at`.
    with_raw("bsp_put_strided", file, line, |raw| unsafe {
        raw.put_strided(
            pid.into(),
            src,
            src_stride,
            dst,
            offset,
            dst_stride,
            block,
            count,
        )
    })
}

/// `void bsp_get_strided(int pid, const void *src, size_t offset, size_t
/// src_stride, void *dst, size_t dst_stride, size_t block, size_t count)`:
/// at the sync, `count` blocks of `block` bytes, block k read from byte
/// `offset + k*src_stride` of the area registered on `pid` in the slot of
/// `src` (its value at the end of the superstep) and written at `dst +
/// k*dst_stride`. The destination's blocks must not overlap.
#[no_mangle]
pub unsafe extern "C" fn bsp_get_strided(
    pid: c_int,
    src: *const c_void,
    offset: usize,
    src_stride: usize,
    dst: *mut c_void,
    dst_stride: usize,
    block: usize,
    count: usize,
) {
    // SAFETY: forwarded.
    unsafe {
        bsplib_get_strided_at(
            pid,
            src,
            offset,
            src_stride,
            dst,
            dst_stride,
            block,
            count,
            std::ptr::null(),
            0,
        )
    }
}

/// `bsp_get_strided` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_get_strided_at(
    pid: c_int,
    src: *const c_void,
    offset: usize,
    src_stride: usize,
    dst: *mut c_void,
    dst_stride: usize,
    block: usize,
    count: usize,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: as for `bsplib_push_reg_at`.
    with_raw("bsp_get_strided", file, line, |raw| unsafe {
        raw.get_strided(
            pid.into(),
            src,
            offset,
            src_stride,
            dst,
            dst_stride,
            block,
            count,
        )
    })
}

/// The pieces of an io-vector call: `n` of them at `v` (`v` may be NULL
/// when `n` is 0).
///
/// # Safety
///
/// `v` must point to `n` readable pieces.
unsafe fn pieces<'a>(v: *const bsp_iovec_t, n: usize) -> &'a [bsp_iovec_t] {
    if n == 0 {
        &[]
    } else {
        // SAFETY: the caller's promise (a NULL `v` with `n > 0` is
        // refused: the callers pass no pieces then).
        unsafe { std::slice::from_raw_parts(v, n) }
    }
}

/// `void bsp_put_vec(int pid, const bsp_iovec_t *v, size_t n, void *dst)`:
/// for each of the `n` pieces, in order, a put of `v[i].nbytes` bytes read
/// now from `v[i].local`, written at the sync at byte `v[i].offset` of the
/// area registered on `pid` in the slot of `dst`.
#[no_mangle]
pub unsafe extern "C" fn bsp_put_vec(
    pid: c_int,
    v: *const bsp_iovec_t,
    n: usize,
    dst: *mut c_void,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_put_vec_at(pid, v, n, dst, std::ptr::null(), 0) }
}

/// `bsp_put_vec` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_put_vec_at(
    pid: c_int,
    v: *const bsp_iovec_t,
    n: usize,
    dst: *mut c_void,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: as for `bsplib_push_reg_at`; `v` holds `n` pieces (checked
    // for NULL first).
    with_raw("bsp_put_vec", file, line, |raw| unsafe {
        let all = (!v.is_null() || n == 0).then(|| {
            pieces(v, n)
                .iter()
                .map(|p| (p.local.cast_const(), p.offset, p.nbytes))
        });
        raw.put_vec(pid.into(), all, dst)
    })
}

/// `void bsp_get_vec(int pid, const void *src, const bsp_iovec_t *v, size_t
/// n)`: for each of the `n` pieces, in order, a get at the sync of
/// `v[i].nbytes` bytes from byte `v[i].offset` of the area registered on
/// `pid` in the slot of `src` into `v[i].local`.
#[no_mangle]
pub unsafe extern "C" fn bsp_get_vec(
    pid: c_int,
    src: *const c_void,
    v: *const bsp_iovec_t,
    n: usize,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_get_vec_at(pid, src, v, n, std::ptr::null(), 0) }
}

/// `bsp_get_vec` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_get_vec_at(
    pid: c_int,
    src: *const c_void,
    v: *const bsp_iovec_t,
    n: usize,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: as for `bsplib_put_vec_at`.
    with_raw("bsp_get_vec", file, line, |raw| unsafe {
        let all = (!v.is_null() || n == 0)
            .then(|| pieces(v, n).iter().map(|p| (p.local, p.offset, p.nbytes)));
        raw.get_vec(pid.into(), src, all)
    })
}

/// `void bsp_hpput(int pid, const void *src, void *dst, int offset, int nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bsp_hpput(
    pid: c_int,
    src: *const c_void,
    dst: *mut c_void,
    offset: c_int,
    nbytes: c_int,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_hpput_at(pid, src, dst, offset, nbytes, std::ptr::null(), 0) }
}

/// `bsp_hpput` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_hpput_at(
    pid: c_int,
    src: *const c_void,
    dst: *mut c_void,
    offset: c_int,
    nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: as for `bsplib_push_reg_at`.
    with_raw("bsp_hpput", file, line, |raw| unsafe {
        raw.hpput(pid.into(), src, dst, offset.into(), nbytes.into())
    })
}

/// `void bsp_get(int pid, const void *src, int offset, void *dst, int nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bsp_get(
    pid: c_int,
    src: *const c_void,
    offset: c_int,
    dst: *mut c_void,
    nbytes: c_int,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_get_at(pid, src, offset, dst, nbytes, std::ptr::null(), 0) }
}

/// `bsp_get` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_get_at(
    pid: c_int,
    src: *const c_void,
    offset: c_int,
    dst: *mut c_void,
    nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: as for `bsplib_push_reg_at`.
    with_raw("bsp_get", file, line, |raw| unsafe {
        raw.get(pid.into(), src, offset.into(), dst, nbytes.into())
    })
}

/// `void bsp_hpget(int pid, const void *src, int offset, void *dst, int nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bsp_hpget(
    pid: c_int,
    src: *const c_void,
    offset: c_int,
    dst: *mut c_void,
    nbytes: c_int,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_hpget_at(pid, src, offset, dst, nbytes, std::ptr::null(), 0) }
}

/// `bsp_hpget` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_hpget_at(
    pid: c_int,
    src: *const c_void,
    offset: c_int,
    dst: *mut c_void,
    nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: as for `bsplib_push_reg_at`.
    with_raw("bsp_hpget", file, line, |raw| unsafe {
        raw.hpget(pid.into(), src, offset.into(), dst, nbytes.into())
    })
}

/// `void bsp_set_tagsize(int *tag_nbytes)`: sets the tag size from the next
/// superstep and writes the previous one back.
#[no_mangle]
pub unsafe extern "C" fn bsp_set_tagsize(tag_nbytes: *mut c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_set_tagsize_at(tag_nbytes, std::ptr::null(), 0) }
}

/// `bsp_set_tagsize` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_set_tagsize_at(
    tag_nbytes: *mut c_int,
    file: *const c_char,
    line: c_int,
) {
    const CALL: &str = "bsp_set_tagsize";
    with_bsp(CALL, file, line, |bsp, loc| {
        let raw = bsp.raw().at(loc);
        let p = non_null(tag_nbytes, "tag_nbytes", CALL, bsp, loc)?;
        // SAFETY: non-null, and the C caller passes a valid `int *`.
        let prev = raw.set_tagsize(unsafe { p.read() }.into())?;
        let prev = to_int("the previous tag size", prev as usize, CALL, bsp, loc)?;
        // SAFETY: as above.
        unsafe { p.write(prev) };
        Ok(())
    })
}

/// `void bsp_send(int pid, const void *tag, const void *payload, int payload_nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bsp_send(
    pid: c_int,
    tag: *const c_void,
    payload: *const c_void,
    payload_nbytes: c_int,
) {
    // SAFETY: forwarded.
    unsafe { bsplib_send_at(pid, tag, payload, payload_nbytes, std::ptr::null(), 0) }
}

/// `bsp_send` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_send_at(
    pid: c_int,
    tag: *const c_void,
    payload: *const c_void,
    payload_nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: as for `bsplib_push_reg_at`.
    with_raw("bsp_send", file, line, |raw| unsafe {
        raw.send(pid.into(), tag, payload, payload_nbytes.into())
    })
}

/// `void bsp_qsize(int *nmessages, int *accum_nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bsp_qsize(nmessages: *mut c_int, accum_nbytes: *mut c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_qsize_at(nmessages, accum_nbytes, std::ptr::null(), 0) }
}

/// `bsp_qsize` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_qsize_at(
    nmessages: *mut c_int,
    accum_nbytes: *mut c_int,
    file: *const c_char,
    line: c_int,
) {
    const CALL: &str = "bsp_qsize";
    with_bsp(CALL, file, line, |bsp, loc| {
        let raw = bsp.raw().at(loc);
        let n = non_null(nmessages, "nmessages", CALL, bsp, loc)?;
        let b = non_null(accum_nbytes, "accum_nbytes", CALL, bsp, loc)?;
        let (msgs, bytes) = raw.qsize();
        let (msgs, bytes) = (
            to_int("the number of messages", msgs, CALL, bsp, loc)?,
            to_int("the payload bytes", bytes, CALL, bsp, loc)?,
        );
        // SAFETY: non-null `int *`s from the C caller.
        unsafe {
            n.write(msgs);
            b.write(bytes);
        }
        Ok(())
    })
}

/// `void bsp_get_tag(int *status, void *tag)`: `*status` is -1 on an empty
/// queue, else the first message's payload length, and its tag is copied.
#[no_mangle]
pub unsafe extern "C" fn bsp_get_tag(status: *mut c_int, tag: *mut c_void) {
    // SAFETY: forwarded.
    unsafe { bsplib_get_tag_at(status, tag, std::ptr::null(), 0) }
}

/// `bsp_get_tag` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_get_tag_at(
    status: *mut c_int,
    tag: *mut c_void,
    file: *const c_char,
    line: c_int,
) {
    const CALL: &str = "bsp_get_tag";
    with_bsp(CALL, file, line, |bsp, loc| {
        let raw = bsp.raw().at(loc);
        let s = non_null(status, "status", CALL, bsp, loc)?;
        // SAFETY: the C caller's `tag` holds the queue's tag size.
        let v = match unsafe { raw.get_tag(tag) }? {
            None => -1,
            Some(len) => to_int("the payload length", len, CALL, bsp, loc)?,
        };
        // SAFETY: a non-null `int *` from the C caller.
        unsafe { s.write(v) };
        Ok(())
    })
}

/// `void bsp_move(void *payload, int reception_nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bsp_move(payload: *mut c_void, reception_nbytes: c_int) {
    // SAFETY: forwarded.
    unsafe { bsplib_move_at(payload, reception_nbytes, std::ptr::null(), 0) }
}

/// `bsp_move` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_move_at(
    payload: *mut c_void,
    reception_nbytes: c_int,
    file: *const c_char,
    line: c_int,
) {
    // SAFETY: as for `bsplib_push_reg_at`.
    with_raw("bsp_move", file, line, |raw| unsafe {
        raw.move_payload(payload, reception_nbytes.into()).map(drop)
    })
}

/// `int bsp_hpmove(void **tag_ptr, void **payload_ptr)`: -1 on an empty
/// queue, else the payload length, with pointers to the tag and payload
/// valid until the end of the superstep.
#[no_mangle]
pub unsafe extern "C" fn bsp_hpmove(
    tag_ptr: *mut *mut c_void,
    payload_ptr: *mut *mut c_void,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { bsplib_hpmove_at(tag_ptr, payload_ptr, std::ptr::null(), 0) }
}

/// `bsp_hpmove` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_hpmove_at(
    tag_ptr: *mut *mut c_void,
    payload_ptr: *mut *mut c_void,
    file: *const c_char,
    line: c_int,
) -> c_int {
    const CALL: &str = "bsp_hpmove";
    with_bsp(CALL, file, line, |bsp, loc| {
        let raw = bsp.raw().at(loc);
        let t = non_null(tag_ptr, "tag_ptr", CALL, bsp, loc)?;
        let p = non_null(payload_ptr, "payload_ptr", CALL, bsp, loc)?;
        Ok(match raw.hpmove() {
            None => -1,
            Some((tag, payload, len)) => {
                let len = to_int("the payload length", len, CALL, bsp, loc)?;
                // SAFETY: non-null `void **`s from the C caller.
                unsafe {
                    t.write(tag.cast_mut());
                    p.write(payload.cast_mut());
                }
                len
            }
        })
    })
}

/// The Rust half of `bsp_abort` (`shim.c` formats the message).
#[no_mangle]
pub unsafe extern "C" fn bsplib_abort_message(
    file: *const c_char,
    line: c_int,
    message: *const c_char,
) {
    let text = if message.is_null() {
        String::new()
    } else {
        // SAFETY: `shim.c` passes a NUL-terminated buffer.
        unsafe { std::ffi::CStr::from_ptr(message) }
            .to_string_lossy()
            .trim_end_matches('\n')
            .to_owned()
    };
    let loc = location(file, line);
    let err = guard("bsp_abort", || {
        let p = CURRENT.with(Cell::get);
        if p.is_null() {
            return Error::new(
                ErrorKind::Aborted {
                    message: text.clone(),
                },
                "bsp_abort",
                0,
                0,
                loc,
            );
        }
        // SAFETY: this thread's leaked `Box` (see `CURRENT`); `bsp_abort`
        // is not called from inside another call of this thread.
        unsafe { &mut *p }.bsp().raw().at(loc).abort(text.clone())
    });
    fail(err)
}

/// Writes `line` (its newline included) to standard error in one write:
/// `eprintln!` writes each formatted piece on its own, and the pieces of
/// several processes' lines would interleave.
fn eprint_line(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(line.as_bytes());
}
