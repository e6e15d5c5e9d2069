//! The Fortran binding: the routines of the paper's Fortran synopses
//! (`bspbegin` ... `bspmove`), as gfortran calls them.
//!
//! gfortran's external name of a routine is its name in lower case with a
//! trailing underscore (`bspput_`); every argument is passed by reference
//! (an `INTEGER` is an `int *`, a `<TYPE>` argument the address of its
//! first element), except a procedure argument, which is its address
//! (`bspinit`), and a `CHARACTER(*)` argument's length, which follows the
//! others as a hidden `size_t` by value (`bspabort`). `INTEGER` is
//! gfortran's default kind, 4 bytes (`c_int`); an `INTEGER FUNCTION`
//! returns a `c_int`, a `DOUBLE PRECISION FUNCTION` an `f64`, as C does.
//!
//! Every routine goes to the same core calls as its C twin, with the
//! core's errors named the Fortran way (the C name without underscores:
//! [`fortran_name`], set per call with `Bsp::set_call_names`). Fortran
//! passes no source location: an error names the routine, the process and
//! the superstep. `bspend` is a trampoline to `shim.c`, like `bsp_end`
//! (on `threads` it leaves the thread's SPMD code with `longjmp`).
//!
//! `bspunregistered` is the common block of `include/fbsp.h`: passing its
//! array to `bsppushreg` (or `bsppopreg`) is passing C's NULL
//! ([`ident`]).

use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

use bsplib::{Bsp, Error, ErrorKind};

use crate::startup;
use crate::{non_null, to_int, with_bsp};

/// The Fortran name of a call the core names in C: the C name without
/// underscores, the paper's rule (`bsp_push_reg` is `bsppushreg`). Names
/// that are not BSPlib calls (`exit`) are kept.
pub(crate) fn fortran_name(call: &'static str) -> &'static str {
    match call {
        "bsp_begin" => "bspbegin",
        "bsp_end" => "bspend",
        "bsp_init" => "bspinit",
        "bsp_abort" => "bspabort",
        "bsp_nprocs" => "bspnprocs",
        "bsp_pid" => "bsppid",
        "bsp_time" => "bsptime",
        "bsp_sync" => "bspsync",
        "bsp_push_reg" => "bsppushreg",
        "bsp_pop_reg" => "bsppopreg",
        "bsp_put" => "bspput",
        "bsp_hpput" => "bsphpput",
        "bsp_get" => "bspget",
        "bsp_hpget" => "bsphpget",
        "bsp_set_tagsize" => "bspsettagsize",
        "bsp_send" => "bspsend",
        "bsp_qsize" => "bspqsize",
        "bsp_get_tag" => "bspgettag",
        "bsp_move" => "bspmove",
        "bsp_bcast" => "bspbcast",
        "bsp_gather" => "bspgather",
        "bsp_scatter" => "bspscatter",
        "bsp_exchange" => "bspexchange",
        "bsp_fold" => "bspfold",
        "bsp_scan" => "bspscan",
        other => typed_name(other).unwrap_or(other),
    }
}

/// Runs `f` on this thread's BSP process with the core's errors named
/// the Fortran way; an error ends the program naming `call` (a Fortran
/// name), the process and the superstep.
fn with_fortran<T>(call: &'static str, f: impl FnOnce(&mut Bsp) -> Result<T, Error>) -> T {
    with_bsp(call, std::ptr::null(), 0, |bsp, _| {
        let before = bsp.set_call_names(Some(fortran_name));
        let result = f(bsp);
        bsp.set_call_names(before);
        result
    })
}

/// The value of an `INTEGER, INTENT(IN)` argument.
///
/// # Safety
///
/// `p` is null or points to an `INTEGER` (gfortran passes the address of
/// the actual argument, or of a temporary holding an expression's value).
unsafe fn int(
    p: *const c_int,
    what: &'static str,
    call: &'static str,
    bsp: &Bsp,
) -> Result<i64, Error> {
    let p = non_null(p.cast_mut(), what, call, bsp, None)?;
    // SAFETY: not null, and the caller's promise.
    Ok(i64::from(unsafe { p.read() }))
}

/// The address of the common block `/bspunregistered/` of `fbsp.h`, as
/// the program sees it. A Fortran `COMMON` is a global symbol the
/// executable defines itself; the library's definition (below) keeps
/// programs linking that never mention it, and stands for it in a static
/// link, where the two are one.
fn unregistered() -> usize {
    static ADDR: OnceLock<usize> = OnceLock::new();
    *ADDR.get_or_init(|| {
        // SAFETY: `dlsym` with a NUL-terminated name and the
        // `RTLD_DEFAULT` handle only looks the symbol up.
        let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"bspunregistered_".as_ptr()) };
        if found.is_null() {
            std::ptr::addr_of!(bspunregistered_).addr()
        } else {
            found.addr()
        }
    })
}

/// `COMMON /bspunregistered/ bspunregistered` (`include/fbsp.h`): the
/// array a Fortran program passes to `bsppushreg` to register NULL, the
/// paper's device for the processes that register nothing in a slot.
/// Never read or written by the library: only its address counts.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static mut bspunregistered_: [c_int; 1] = [0];

/// A registration's `ident`: null for `bspunregistered`.
fn ident(p: *const c_void) -> *const c_void {
    if p.addr() == unregistered() || p.addr() == std::ptr::addr_of!(bspunregistered_).addr() {
        std::ptr::null()
    } else {
        p
    }
}

/// `SUBROUTINE bspbegin(maxprocs)`, `INTEGER, INTENT(IN) :: maxprocs`.
#[no_mangle]
pub unsafe extern "C" fn bspbegin_(maxprocs: *const c_int) {
    let n = if maxprocs.is_null() {
        0
    } else {
        // SAFETY: gfortran passes the address of an `INTEGER`.
        unsafe { maxprocs.read() }
    };
    startup::begin(n, fortran_name, None)
}

/// `SUBROUTINE bspinit(spmdproc)`: `spmdproc` is a subroutine without
/// arguments (its address, as gfortran passes a procedure).
#[no_mangle]
pub extern "C" fn bspinit_(spmdproc: Option<extern "C" fn()>) {
    startup::init(spmdproc, fortran_name, None)
}

/// The Rust half of `bspend` (`shim.c`): 1 if the calling thread must
/// leave its SPMD code. A process other than 0 ends in it without running
/// gfortran's exit handlers: its Fortran output is flushed first.
#[no_mangle]
pub extern "C" fn bsplib_fortran_end_process() -> c_int {
    flush_units();
    startup::end_process(fortran_name, None)
}

/// Flushes every unit of the gfortran run-time library, if the program
/// has it (`FLUSH` with no unit: `_gfortran_flush_i4(NULL)`): Fortran
/// output is buffered apart from C's `stdio`, and processes end with
/// `_exit`. Looked up at run time, so that C programs need no gfortran.
pub(crate) fn flush_units() {
    type Flush = unsafe extern "C" fn(*const i32);
    static FLUSH: OnceLock<Option<Flush>> = OnceLock::new();
    let flush = FLUSH.get_or_init(|| {
        // SAFETY: looks a symbol up by its NUL-terminated name.
        let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_gfortran_flush_i4".as_ptr()) };
        // SAFETY: libgfortran's `flush_i4(GFC_INTEGER_4 *unit)`, which
        // flushes every unit when `unit` is null.
        (!f.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, Flush>(f) })
    });
    if let Some(flush) = flush {
        // SAFETY: as above; null asks for every unit.
        unsafe { flush(std::ptr::null()) };
    }
}

/// `SUBROUTINE bspabort(err_string)`, `CHARACTER(*) :: err_string`: prints
/// the string (trailing blanks removed) and stops every process.
#[no_mangle]
pub unsafe extern "C" fn bspabort_(err_string: *const c_char, len: usize) {
    let text = if err_string.is_null() {
        String::new()
    } else {
        // SAFETY: gfortran passes the string's address and its length.
        let bytes = unsafe { std::slice::from_raw_parts(err_string.cast::<u8>(), len) };
        String::from_utf8_lossy(bytes).trim_end().to_owned()
    };
    let err = crate::guard("bspabort", || {
        let p = crate::CURRENT.with(std::cell::Cell::get);
        if p.is_null() {
            return Error::new(
                ErrorKind::Aborted {
                    message: text.clone(),
                },
                "bspabort",
                0,
                0,
                None,
            );
        }
        // SAFETY: this thread's leaked `Box` (see `CURRENT`); `bspabort`
        // is not called from inside another call of this thread.
        let bsp = unsafe { &mut *p }.bsp();
        bsp.set_call_names(Some(fortran_name));
        bsp.raw().at(None).abort(text.clone())
    });
    crate::fail(err)
}

/// `INTEGER FUNCTION bspnprocs()`: the processes of the run, or before
/// `bspbegin` the processes available.
#[no_mangle]
pub extern "C" fn bspnprocs_() -> c_int {
    startup::nprocs(fortran_name, None)
}

/// `INTEGER FUNCTION bsppid()`: this process, from 0.
#[no_mangle]
pub extern "C" fn bsppid_() -> c_int {
    with_fortran("bsppid", |bsp| Ok(bsp.pid() as c_int))
}

/// `DOUBLE PRECISION FUNCTION bsptime()`: seconds since `bspbegin`.
#[no_mangle]
pub extern "C" fn bsptime_() -> f64 {
    with_fortran("bsptime", |bsp| Ok(bsp.time()))
}

/// `DOUBLE PRECISION FUNCTION bspg()`: C's `bsp_g()`, seconds per byte.
#[no_mangle]
pub extern "C" fn bspg_() -> f64 {
    with_fortran("bspg", |bsp| Ok(bsp.machine().g))
}

/// `DOUBLE PRECISION FUNCTION bspl()`: C's `bsp_l()`, seconds.
#[no_mangle]
pub extern "C" fn bspl_() -> f64 {
    with_fortran("bspl", |bsp| Ok(bsp.machine().l))
}

/// `DOUBLE PRECISION FUNCTION bsps()`: C's `bsp_s()`, flop/s.
#[no_mangle]
pub extern "C" fn bsps_() -> f64 {
    with_fortran("bsps", |bsp| Ok(bsp.machine().s))
}

/// `INTEGER FUNCTION bspnhalf()`: C's `bsp_nhalf()`, bytes.
#[no_mangle]
pub extern "C" fn bspnhalf_() -> c_int {
    with_fortran("bspnhalf", |bsp| {
        Ok(bsp.machine().nhalf.round().min(c_int::MAX as f64) as c_int)
    })
}

/// `SUBROUTINE bspsync()`.
#[no_mangle]
pub extern "C" fn bspsync_() {
    with_fortran("bspsync", |bsp| {
        bsplib::raw::Raw::sync(bsp, None)?;
        startup::note(bsp.pid(), bsp.superstep());
        Ok(())
    })
}

/// `SUBROUTINE bsppushreg(ident, size)`, `<TYPE>, INTENT(IN) :: ident`,
/// `INTEGER, INTENT(IN) :: size`.
#[no_mangle]
pub unsafe extern "C" fn bsppushreg_(area: *const c_void, size: *const c_int) {
    const CALL: &str = "bsppushreg";
    with_fortran(CALL, |bsp| {
        // SAFETY: gfortran's arguments (see `int`); the program keeps the
        // area alive while registered, as BSPlib requires.
        unsafe {
            let size = int(size, "size", CALL, bsp)?;
            bsp.raw().at(None).push_reg(ident(area), size)
        }
    })
}

/// `SUBROUTINE bsppopreg(ident)`, `<TYPE>, INTENT(IN) :: ident`.
#[no_mangle]
pub unsafe extern "C" fn bsppopreg_(area: *const c_void) {
    // SAFETY: as for `bsppushreg_`.
    with_fortran("bsppopreg", |bsp| unsafe {
        bsp.raw().at(None).pop_reg(ident(area))
    })
}

/// `SUBROUTINE bspput(pid, src, dst, offset, nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bspput_(
    pid: *const c_int,
    src: *const c_void,
    dst: *mut c_void,
    offset: *const c_int,
    nbytes: *const c_int,
) {
    const CALL: &str = "bspput";
    // SAFETY: gfortran's arguments; `src` holds `nbytes` bytes (the C
    // contract, which the program keeps).
    with_fortran(CALL, |bsp| unsafe {
        let (pid, offset, nbytes) = (
            int(pid, "pid", CALL, bsp)?,
            int(offset, "offset", CALL, bsp)?,
            int(nbytes, "nbytes", CALL, bsp)?,
        );
        bsp.raw().at(None).put(pid, src, dst, offset, nbytes)
    })
}

/// `SUBROUTINE bsphpput(pid, src, dst, offset, nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bsphpput_(
    pid: *const c_int,
    src: *const c_void,
    dst: *mut c_void,
    offset: *const c_int,
    nbytes: *const c_int,
) {
    const CALL: &str = "bsphpput";
    // SAFETY: as for `bspput_`, and the program keeps `bsp_hpput`'s rules.
    with_fortran(CALL, |bsp| unsafe {
        let (pid, offset, nbytes) = (
            int(pid, "pid", CALL, bsp)?,
            int(offset, "offset", CALL, bsp)?,
            int(nbytes, "nbytes", CALL, bsp)?,
        );
        bsp.raw().at(None).hpput(pid, src, dst, offset, nbytes)
    })
}

/// `SUBROUTINE bspget(pid, src, offset, dst, nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bspget_(
    pid: *const c_int,
    src: *const c_void,
    offset: *const c_int,
    dst: *mut c_void,
    nbytes: *const c_int,
) {
    const CALL: &str = "bspget";
    // SAFETY: gfortran's arguments; `dst` stays the program's memory until
    // the sync (the C contract, which the program keeps).
    with_fortran(CALL, |bsp| unsafe {
        let (pid, offset, nbytes) = (
            int(pid, "pid", CALL, bsp)?,
            int(offset, "offset", CALL, bsp)?,
            int(nbytes, "nbytes", CALL, bsp)?,
        );
        bsp.raw().at(None).get(pid, src, offset, dst, nbytes)
    })
}

/// `SUBROUTINE bsphpget(pid, src, offset, dst, nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bsphpget_(
    pid: *const c_int,
    src: *const c_void,
    offset: *const c_int,
    dst: *mut c_void,
    nbytes: *const c_int,
) {
    const CALL: &str = "bsphpget";
    // SAFETY: as for `bspget_`, and the program keeps `bsp_hpget`'s rules.
    with_fortran(CALL, |bsp| unsafe {
        let (pid, offset, nbytes) = (
            int(pid, "pid", CALL, bsp)?,
            int(offset, "offset", CALL, bsp)?,
            int(nbytes, "nbytes", CALL, bsp)?,
        );
        bsp.raw().at(None).hpget(pid, src, offset, dst, nbytes)
    })
}

/// `SUBROUTINE bspsettagsize(tag_nbytes)`, `INTEGER, INTENT(INOUT)`: sets
/// the tag size from the next superstep; `tag_nbytes` returns the
/// previous one.
#[no_mangle]
pub unsafe extern "C" fn bspsettagsize_(tag_nbytes: *mut c_int) {
    const CALL: &str = "bspsettagsize";
    with_fortran(CALL, |bsp| {
        let p = non_null(tag_nbytes, "tag_nbytes", CALL, bsp, None)?;
        // SAFETY: not null; gfortran passes the address of an `INTEGER`.
        let prev = bsp.raw().at(None).set_tagsize(unsafe { p.read() }.into())?;
        let prev = to_int("the previous tag size", prev as usize, CALL, bsp, None)?;
        // SAFETY: as above.
        unsafe { p.write(prev) };
        Ok(())
    })
}

/// `SUBROUTINE bspsend(pid, tag, payload, payload_nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bspsend_(
    pid: *const c_int,
    tag: *const c_void,
    payload: *const c_void,
    payload_nbytes: *const c_int,
) {
    const CALL: &str = "bspsend";
    // SAFETY: gfortran's arguments; `tag` holds the tag size and `payload`
    // `payload_nbytes` bytes (the C contract, which the program keeps).
    with_fortran(CALL, |bsp| unsafe {
        let pid = int(pid, "pid", CALL, bsp)?;
        let n = int(payload_nbytes, "payload_nbytes", CALL, bsp)?;
        bsp.raw().at(None).send(pid, tag, payload, n)
    })
}

/// `SUBROUTINE bspqsize(nmessages, accum_nbytes)`, both `INTENT(OUT)`.
#[no_mangle]
pub unsafe extern "C" fn bspqsize_(nmessages: *mut c_int, accum_nbytes: *mut c_int) {
    const CALL: &str = "bspqsize";
    with_fortran(CALL, |bsp| {
        let n = non_null(nmessages, "nmessages", CALL, bsp, None)?;
        let b = non_null(accum_nbytes, "accum_nbytes", CALL, bsp, None)?;
        let (msgs, bytes) = bsp.raw().qsize();
        let msgs = to_int("the number of messages", msgs, CALL, bsp, None)?;
        let bytes = to_int("the payload bytes", bytes, CALL, bsp, None)?;
        // SAFETY: not null; gfortran passes the addresses of `INTEGER`s.
        unsafe {
            n.write(msgs);
            b.write(bytes);
        }
        Ok(())
    })
}

/// `SUBROUTINE bspgettag(status, tag)`: `status` is -1 on an empty queue,
/// else the first message's payload length, and its tag is copied.
#[no_mangle]
pub unsafe extern "C" fn bspgettag_(status: *mut c_int, tag: *mut c_void) {
    const CALL: &str = "bspgettag";
    with_fortran(CALL, |bsp| {
        let s = non_null(status, "status", CALL, bsp, None)?;
        // SAFETY: `tag` holds the queue's tag size (the C contract).
        let v = match unsafe { bsp.raw().at(None).get_tag(tag) }? {
            None => -1,
            Some(len) => to_int("the payload length", len, CALL, bsp, None)?,
        };
        // SAFETY: not null; gfortran passes the address of an `INTEGER`.
        unsafe { s.write(v) };
        Ok(())
    })
}

/// `SUBROUTINE bspmove(payload, reception_nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bspmove_(payload: *mut c_void, reception_nbytes: *const c_int) {
    const CALL: &str = "bspmove";
    // SAFETY: `payload` holds `reception_nbytes` bytes (the C contract).
    with_fortran(CALL, |bsp| unsafe {
        let n = int(reception_nbytes, "reception_nbytes", CALL, bsp)?;
        bsp.raw().at(None).move_payload(payload, n).map(drop)
    })
}

// ----- the level-1 collectives (bsp_level1.h's, by the same naming rule) -----

/// `SUBROUTINE bspbcast(pid, src, dst, nbytes)`: `bsp_bcast`.
#[no_mangle]
pub unsafe extern "C" fn bspbcast_(
    pid: *const c_int,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: *const c_int,
) {
    const CALL: &str = "bspbcast";
    // SAFETY: gfortran's arguments; the buffers hold `nbytes` bytes (the
    // C contract, which the program keeps).
    with_fortran(CALL, |bsp| unsafe {
        let (pid, nbytes) = (
            int(pid, "pid", CALL, bsp)?,
            int(nbytes, "nbytes", CALL, bsp)?,
        );
        bsplib::level1::bcast(bsp, "bsp_bcast", pid, src, dst, nbytes, None)
    })
}

/// `SUBROUTINE bspgather(pid, src, dst, nbytes)`: `bsp_gather`.
#[no_mangle]
pub unsafe extern "C" fn bspgather_(
    pid: *const c_int,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: *const c_int,
) {
    const CALL: &str = "bspgather";
    // SAFETY: as for `bspbcast_` (`dst` holds `p * nbytes` on `pid`).
    with_fortran(CALL, |bsp| unsafe {
        let (pid, nbytes) = (
            int(pid, "pid", CALL, bsp)?,
            int(nbytes, "nbytes", CALL, bsp)?,
        );
        bsplib::level1::gather(bsp, "bsp_gather", pid, src, dst, nbytes, None)
    })
}

/// `SUBROUTINE bspscatter(pid, src, dst, nbytes)`: `bsp_scatter`.
#[no_mangle]
pub unsafe extern "C" fn bspscatter_(
    pid: *const c_int,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: *const c_int,
) {
    const CALL: &str = "bspscatter";
    // SAFETY: as for `bspbcast_` (`src` holds `p * nbytes` on `pid`).
    with_fortran(CALL, |bsp| unsafe {
        let (pid, nbytes) = (
            int(pid, "pid", CALL, bsp)?,
            int(nbytes, "nbytes", CALL, bsp)?,
        );
        bsplib::level1::scatter(bsp, "bsp_scatter", pid, src, dst, nbytes, None)
    })
}

/// `SUBROUTINE bspexchange(src, dst, nbytes)`: `bsp_exchange`.
#[no_mangle]
pub unsafe extern "C" fn bspexchange_(src: *const c_void, dst: *mut c_void, nbytes: *const c_int) {
    const CALL: &str = "bspexchange";
    // SAFETY: as for `bspbcast_` (both hold `p * nbytes`).
    with_fortran(CALL, |bsp| unsafe {
        let nbytes = int(nbytes, "nbytes", CALL, bsp)?;
        bsplib::level1::exchange(bsp, "bsp_exchange", src, dst, nbytes, None)
    })
}

/// `SUBROUTINE bspfold(op, src, dst, nbytes)` and `bspscan`: `bsp_fold`,
/// `bsp_scan`; `op` is a `SUBROUTINE op(res, left, right, nbytes)`, whose
/// arguments gfortran passes by reference, as C's operator takes them.
unsafe fn fold(
    call: &'static str,
    c_call: &'static str,
    op: Option<bsplib::level1::FoldOp>,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: *const c_int,
    prefix: bool,
) {
    // SAFETY: as for `bspbcast_`; `op` is the program's subroutine.
    with_fortran(call, |bsp| unsafe {
        let nbytes = int(nbytes, "nbytes", call, bsp)?;
        let Some(op) = op else {
            return Err(Error::new(
                ErrorKind::NullPointer { what: "op" },
                call,
                bsp.pid(),
                bsp.superstep(),
                None,
            ));
        };
        bsplib::level1::fold(bsp, c_call, op, src, dst, nbytes, prefix, None)
    })
}

/// `SUBROUTINE bspfold(op, src, dst, nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bspfold_(
    op: Option<bsplib::level1::FoldOp>,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: *const c_int,
) {
    // SAFETY: forwarded.
    unsafe { fold("bspfold", "bsp_fold", op, src, dst, nbytes, false) }
}

/// `SUBROUTINE bspscan(op, src, dst, nbytes)`.
#[no_mangle]
pub unsafe extern "C" fn bspscan_(
    op: Option<bsplib::level1::FoldOp>,
    src: *const c_void,
    dst: *mut c_void,
    nbytes: *const c_int,
) {
    // SAFETY: forwarded.
    unsafe { fold("bspscan", "bsp_scan", op, src, dst, nbytes, true) }
}

/// The typed reductions, `INTEGER FUNCTION bspsumi(x)` ... : `$f` calls
/// `$c`'s core with `$op`.
macro_rules! typed {
    ($($f:ident, $name:literal, $c:literal, $t:ty, $op:ident, $prefix:literal;)*) => {$(
        #[doc = concat!("`", $name, "(x)`: `", $c, "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $f(x: *const $t) -> $t {
            // SAFETY: gfortran passes the address of the argument.
            with_fortran($name, |bsp| unsafe {
                let x = *non_null(x.cast_mut(), "x", $name, bsp, None)?;
                bsplib::level1::reduce(bsp, $c, x, bsplib::level1::Typed::$op, $prefix, None)
            })
        }
    )*

        /// The Fortran name of a typed reduction's C name.
        fn typed_name(c: &str) -> Option<&'static str> {
            match c {
                $($c => Some($name),)*
                _ => None,
            }
        }
    };
}

typed! {
    bspsumi_, "bspsumi", "bsp_sumI", c_int, Sum, false;
    bspsumiprefix_, "bspsumiprefix", "bsp_sumI_prefix", c_int, Sum, true;
    bspproducti_, "bspproducti", "bsp_productI", c_int, Product, false;
    bspproductiprefix_, "bspproductiprefix", "bsp_productI_prefix", c_int, Product, true;
    bspmini_, "bspmini", "bsp_minI", c_int, Min, false;
    bspminiprefix_, "bspminiprefix", "bsp_minI_prefix", c_int, Min, true;
    bspmaxi_, "bspmaxi", "bsp_maxI", c_int, Max, false;
    bspmaxiprefix_, "bspmaxiprefix", "bsp_maxI_prefix", c_int, Max, true;
    bspsumr_, "bspsumr", "bsp_sumR", f32, Sum, false;
    bspsumrprefix_, "bspsumrprefix", "bsp_sumR_prefix", f32, Sum, true;
    bspproductr_, "bspproductr", "bsp_productR", f32, Product, false;
    bspproductrprefix_, "bspproductrprefix", "bsp_productR_prefix", f32, Product, true;
    bspminr_, "bspminr", "bsp_minR", f32, Min, false;
    bspminrprefix_, "bspminrprefix", "bsp_minR_prefix", f32, Min, true;
    bspmaxr_, "bspmaxr", "bsp_maxR", f32, Max, false;
    bspmaxrprefix_, "bspmaxrprefix", "bsp_maxR_prefix", f32, Max, true;
    bspsumd_, "bspsumd", "bsp_sumD", f64, Sum, false;
    bspsumdprefix_, "bspsumdprefix", "bsp_sumD_prefix", f64, Sum, true;
    bspproductd_, "bspproductd", "bsp_productD", f64, Product, false;
    bspproductdprefix_, "bspproductdprefix", "bsp_productD_prefix", f64, Product, true;
    bspmind_, "bspmind", "bsp_minD", f64, Min, false;
    bspmindprefix_, "bspmindprefix", "bsp_minD_prefix", f64, Min, true;
    bspmaxd_, "bspmaxd", "bsp_maxD", f64, Max, false;
    bspmaxdprefix_, "bspmaxdprefix", "bsp_maxD_prefix", f64, Max, true;
    bspall_, "bspall", "bsp_all", c_int, All, false;
    bspany_, "bspany", "bsp_any", c_int, Any, false;
}
