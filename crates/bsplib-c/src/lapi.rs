//! `lapi.h`: a subset of IBM's LAPI over the core's active messages
//! (`bsplib::raw::Raw::lapi_*`, design in
//! `crates/bsplib/src/engine/ACTIVE_MESSAGES.md`).
//!
//! Argument errors at the origin are return codes, and the run goes on;
//! errors found on a target, calls from header handlers and mismatched
//! collective calls stop the run with the usual `bsplib:` line. The
//! handler typedefs (`compl_hndlr_t`, `vhdr_hndlr_t`, `hdr_hndlr_t`), the
//! enums and the location macros are written by hand in
//! `cbindgen-lapi.toml`.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void};

use bsplib::raw::{
    lapi_handler_addr_get, lapi_handler_send, lapi_handler_setcntr, lapi_in_handler, LapiCode,
    LapiData, LapiInHandler, LapiPhase, LapiSend, LapiVector, Raw, LAPI_HANDLE, LAPI_MAX_UHDR_SZ,
};
use bsplib::{Bsp, Error, ErrorKind, SourceLocation};

use crate::{fail, guard, has_process, location, with_bsp};

/// A LAPI handle: one value per run, resolved against the calling process
/// (a handle kept in a global shared by the `threads` engine works).
pub type lapi_handle_t = c_uint;
/// `lapi_vectype_t` (an enum written in `cbindgen-lapi.toml`).
pub type lapi_vectype_t = c_int;
/// `lapi_query_t` (an enum written in `cbindgen-lapi.toml`).
pub type lapi_query_t = c_int;

/// A vector of blocks (`LAPI_Amsendv`'s origin, a header handler's
/// target): `num_vecs` blocks at the addresses of `info` with the byte
/// counts of `len`; for `LAPI_GEN_STRIDED_XFER`, `info = {base, block,
/// stride}` and `len` is not read.
#[repr(C)]
pub struct lapi_vec_t {
    /// `LAPI_GEN_IOVECTOR`, `LAPI_GEN_STRIDED_XFER` or `LAPI_GEN_GENERIC`.
    pub vec_type: lapi_vectype_t,
    /// The number of blocks.
    pub num_vecs: c_uint,
    /// The addresses (STRIDED: base, block, stride).
    pub info: *mut *mut c_void,
    /// The byte counts.
    pub len: *mut c_ulong,
}

/// A counter: give it a value with `LAPI_Setcntr`, read it with
/// `LAPI_Getcntr`, wait on it with `LAPI_Waitcntr`; the library adds to
/// `value` in this process's progress calls. Opaque otherwise.
#[repr(C)]
pub struct lapi_cntr_t {
    /// The value (read it through `LAPI_Getcntr`).
    pub value: c_int,
    /// Reserved.
    pub reserved: c_int,
}

/// `LAPI_Init`'s information: accepted and ignored (NULL allowed).
#[repr(C)]
pub struct lapi_info_t {
    /// Reserved.
    pub reserved: [c_long; 8],
}

/// Success.
pub const LAPI_SUCCESS: c_int = 0;
/// `hdr_hdl` is NULL.
pub const LAPI_ERR_HDR_HNDLR_NULL: c_int = 401;
/// `org_vec` is NULL.
pub const LAPI_ERR_ORG_VEC_NULL: c_int = 402;
/// `org_vec->vec_type` is not one of the three kinds.
pub const LAPI_ERR_ORG_VEC_TYPE: c_int = 403;
/// A strided `org_vec`'s stride is below its block.
pub const LAPI_ERR_ORG_STRIDE: c_int = 404;
/// `org_vec->info[i]` is NULL while `org_vec->len[i]` is not 0.
pub const LAPI_ERR_ORG_VEC_ADDR: c_int = 405;
/// A strided `org_vec` without its `info` array or base address.
pub const LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL: c_int = 406;
/// A strided `org_vec`'s extent (`stride * num_vecs`) is over
/// `LAPI_MAX_MSG_SZ`.
pub const LAPI_ERR_ORG_EXTENT: c_int = 407;
/// `org_vec->len` is NULL, or its sum is over `LAPI_MAX_MSG_SZ`.
pub const LAPI_ERR_ORG_VEC_LEN: c_int = 408;
/// `tgt` is not a task (`0 <= tgt < NUM_TASKS`).
pub const LAPI_ERR_TGT: c_int = 409;
/// `uhdr_len` is over `MAX_UHDR_SZ` or not a multiple of 8.
pub const LAPI_ERR_UHDR_LEN: c_int = 410;
/// `uhdr` is NULL while `uhdr_len` is not 0.
pub const LAPI_ERR_UHDR_NULL: c_int = 411;
/// The handle is not valid (before `LAPI_Init`, after `LAPI_Term`, outside
/// a run).
pub const LAPI_ERR_HNDL_INVALID: c_int = 412;
/// Never returned (this subset has no `LAPI_Purge_totask`).
pub const LAPI_ERR_TGT_PURGED: c_int = 413;
/// `LAPI_Amsend`'s `udata` is NULL while `udata_len` is not 0.
pub const LAPI_ERR_ORG_ADDR_NULL: c_int = 420;
/// More data than one message carries.
pub const LAPI_ERR_DATA_LEN: c_int = 421;
/// A NULL counter.
pub const LAPI_ERR_CNTR_NULL: c_int = 422;
/// A negative value to wait for.
pub const LAPI_ERR_CNTR_VAL: c_int = 423;
/// Not a `lapi_query_t`.
pub const LAPI_ERR_QUERY_TYPE: c_int = 424;
/// A NULL pointer for a result.
pub const LAPI_ERR_RET_PTR_NULL: c_int = 425;
/// A handler index outside `1 .. LAPI_MAX_INDEX - 1`.
pub const LAPI_ERR_ADDR_INDEX: c_int = 426;

/// The largest message, in bytes.
pub const LAPI_MAX_MSG_SZ: c_long = 2147483647;
/// Handler indices of `LAPI_Addr_set` run from 1 to `LAPI_MAX_INDEX - 1`.
pub const LAPI_MAX_INDEX: c_int = 256;
/// The size of `LAPI_Msg_string`'s buffer.
pub const LAPI_MAX_ERR_STRING: c_int = 256;

const LAPI_GEN_STRIDED_XFER: c_int = 1;
const TASK_ID: c_int = 0;
const NUM_TASKS: c_int = 1;
const MAX_UHDR_SZ: c_int = 2;

fn code(c: LapiCode) -> c_int {
    match c {
        LapiCode::HndlInvalid => LAPI_ERR_HNDL_INVALID,
        LapiCode::Tgt => LAPI_ERR_TGT,
        LapiCode::HdrHndlrNull => LAPI_ERR_HDR_HNDLR_NULL,
        LapiCode::UhdrNull => LAPI_ERR_UHDR_NULL,
        LapiCode::UhdrLen => LAPI_ERR_UHDR_LEN,
        LapiCode::OrgVecNull => LAPI_ERR_ORG_VEC_NULL,
        LapiCode::OrgVecType => LAPI_ERR_ORG_VEC_TYPE,
        LapiCode::StrideOrgVecAddrNull => LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL,
        LapiCode::OrgStride => LAPI_ERR_ORG_STRIDE,
        LapiCode::OrgExtent => LAPI_ERR_ORG_EXTENT,
        LapiCode::OrgVecLen => LAPI_ERR_ORG_VEC_LEN,
        LapiCode::OrgVecAddr => LAPI_ERR_ORG_VEC_ADDR,
        LapiCode::OrgAddrNull => LAPI_ERR_ORG_ADDR_NULL,
        LapiCode::DataLen => LAPI_ERR_DATA_LEN,
        LapiCode::AddrIndex => LAPI_ERR_ADDR_INDEX,
        _ => LAPI_ERR_HNDL_INVALID,
    }
}

/// Where a LAPI call runs: on its process, or inside a completion handler
/// (which cannot reach the process: the dispatching call holds it).
enum At<'a> {
    Process(&'a mut Bsp, Option<SourceLocation>),
    Handler(LapiInHandler),
}

/// The error of `call` made from a handler where it is not allowed.
pub(crate) fn in_handler_error(
    call: &'static str,
    h: LapiInHandler,
    loc: Option<SourceLocation>,
) -> Error {
    let detail = match h.phase {
        LapiPhase::Header => {
            format!("{call} called from a header handler, which makes no library calls")
        }
        _ => format!(
            "{call} called from a completion handler, which may call only LAPI_Amsend, \
             LAPI_Amsendv, LAPI_Setcntr, LAPI_Getcntr, LAPI_Qenv, LAPI_Addr_get and \
             LAPI_Msg_string"
        ),
    };
    Error::new(
        ErrorKind::AmMismatch { detail },
        call,
        h.pid,
        h.superstep,
        loc,
    )
}

/// Runs a LAPI call: on the caller's process; from a completion handler
/// if `in_completion` allows it; outside a run it returns
/// `LAPI_ERR_HNDL_INVALID`. Any other call from a handler stops the run.
fn lapi(
    call: &'static str,
    file: *const c_char,
    line: c_int,
    in_completion: bool,
    f: impl FnOnce(At<'_>) -> Result<c_int, Error>,
) -> c_int {
    if !has_process() {
        let loc = location(file, line);
        return match lapi_in_handler() {
            Some(h) if in_completion && h.phase == LapiPhase::Completion => {
                guard(call, || f(At::Handler(h))).unwrap_or_else(|e| fail(e))
            }
            Some(h) => fail(in_handler_error(call, h, loc)),
            None => LAPI_ERR_HNDL_INVALID,
        };
    }
    with_bsp(call, file, line, |bsp, loc| f(At::Process(bsp, loc)))
}

/// Whether `hndl` is the live handle of the caller.
fn valid(at: &At<'_>, hndl: lapi_handle_t) -> bool {
    hndl == LAPI_HANDLE
        && match at {
            At::Process(bsp, _) => bsp.raw().lapi_active(),
            At::Handler(_) => true,
        }
}

macro_rules! check_handle {
    ($at:expr, $hndl:expr) => {
        if !valid(&$at, $hndl) {
            return Ok(LAPI_ERR_HNDL_INVALID);
        }
    };
}

// ----- set-up --------------------------------------------------------------------

/// `int LAPI_Init(lapi_handle_t *hndl, lapi_info_t *info)`: enters LAPI
/// mode. Collective: a sync of every process. `info` is ignored.
#[no_mangle]
pub unsafe extern "C" fn LAPI_Init(hndl: *mut lapi_handle_t, info: *mut lapi_info_t) -> c_int {
    // SAFETY: forwarded.
    unsafe { bsplib_lapi_init_at(hndl, info, std::ptr::null(), 0) }
}

/// `LAPI_Init` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_lapi_init_at(
    hndl: *mut lapi_handle_t,
    _info: *mut lapi_info_t,
    file: *const c_char,
    line: c_int,
) -> c_int {
    with_bsp("LAPI_Init", file, line, |bsp, loc| {
        if hndl.is_null() {
            return Ok(LAPI_ERR_RET_PTR_NULL);
        }
        Raw::lapi_init(bsp, loc)?;
        crate::startup::note(bsp.pid(), bsp.superstep());
        // SAFETY: the caller's pointer to its handle (checked non-null).
        unsafe { hndl.write(LAPI_HANDLE) };
        Ok(LAPI_SUCCESS)
    })
}

/// `int LAPI_Term(lapi_handle_t hndl)`: leaves LAPI mode once every message
/// this process sent has been handled. Collective: a sync.
#[no_mangle]
pub extern "C" fn LAPI_Term(hndl: lapi_handle_t) -> c_int {
    bsplib_lapi_term_at(hndl, std::ptr::null(), 0)
}

/// `LAPI_Term` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_lapi_term_at(
    hndl: lapi_handle_t,
    file: *const c_char,
    line: c_int,
) -> c_int {
    lapi("LAPI_Term", file, line, false, |at| {
        check_handle!(at, hndl);
        let At::Process(bsp, loc) = at else {
            unreachable!()
        };
        Raw::lapi_term(bsp, loc)?;
        crate::startup::note(bsp.pid(), bsp.superstep());
        Ok(LAPI_SUCCESS)
    })
}

/// `int LAPI_Qenv(lapi_handle_t hndl, lapi_query_t query, int *ret)`:
/// `TASK_ID` (this process), `NUM_TASKS`, `MAX_UHDR_SZ`.
#[no_mangle]
pub unsafe extern "C" fn LAPI_Qenv(
    hndl: lapi_handle_t,
    query: lapi_query_t,
    ret: *mut c_int,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { bsplib_lapi_qenv_at(hndl, query, ret, std::ptr::null(), 0) }
}

/// `LAPI_Qenv` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_lapi_qenv_at(
    hndl: lapi_handle_t,
    query: lapi_query_t,
    ret: *mut c_int,
    file: *const c_char,
    line: c_int,
) -> c_int {
    lapi("LAPI_Qenv", file, line, true, |at| {
        check_handle!(at, hndl);
        if ret.is_null() {
            return Ok(LAPI_ERR_RET_PTR_NULL);
        }
        let (pid, nprocs) = match &at {
            At::Process(bsp, _) => (bsp.pid(), bsp.nprocs()),
            At::Handler(h) => (h.pid, h.nprocs),
        };
        let v = match query {
            TASK_ID => pid as c_int,
            NUM_TASKS => nprocs as c_int,
            MAX_UHDR_SZ => LAPI_MAX_UHDR_SZ as c_int,
            _ => return Ok(LAPI_ERR_QUERY_TYPE),
        };
        // SAFETY: the caller's pointer (checked non-null).
        unsafe { ret.write(v) };
        Ok(LAPI_SUCCESS)
    })
}

// ----- sending ----------------------------------------------------------------

/// Sends `s`: from the process, or from a completion handler.
///
/// # Safety
///
/// `Raw::lapi_send`'s contract.
unsafe fn send(at: At<'_>, call: &'static str, s: &LapiSend) -> Result<c_int, Error> {
    let r = match at {
        // SAFETY: forwarded.
        At::Process(bsp, loc) => unsafe { bsp.raw().at(loc).lapi_send(call, s) }?,
        // SAFETY: forwarded.
        At::Handler(_) => unsafe { lapi_handler_send(s) }.unwrap_or(Err(LapiCode::HndlInvalid)),
    };
    Ok(r.map_or_else(code, |()| LAPI_SUCCESS))
}

/// `int LAPI_Amsend(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void
/// *uhdr, uint uhdr_len, void *udata, ulong udata_len, lapi_cntr_t
/// *tgt_cntr, lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr)`: sends the
/// user header and `udata_len` bytes to `tgt`, whose header handler
/// (`hdr_hndlr_t`: an index set with `LAPI_Addr_set`, or an address the
/// target set or published) returns the buffer they land in.
#[no_mangle]
pub unsafe extern "C" fn LAPI_Amsend(
    hndl: lapi_handle_t,
    tgt: c_uint,
    hdr_hdl: *mut c_void,
    uhdr: *mut c_void,
    uhdr_len: c_uint,
    udata: *mut c_void,
    udata_len: c_ulong,
    tgt_cntr: *mut lapi_cntr_t,
    org_cntr: *mut lapi_cntr_t,
    cmpl_cntr: *mut lapi_cntr_t,
) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        bsplib_lapi_amsend_at(
            hndl,
            tgt,
            hdr_hdl,
            uhdr,
            uhdr_len,
            udata,
            udata_len,
            tgt_cntr,
            org_cntr,
            cmpl_cntr,
            std::ptr::null(),
            0,
        )
    }
}

/// `LAPI_Amsend` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_lapi_amsend_at(
    hndl: lapi_handle_t,
    tgt: c_uint,
    hdr_hdl: *mut c_void,
    uhdr: *mut c_void,
    uhdr_len: c_uint,
    udata: *mut c_void,
    udata_len: c_ulong,
    tgt_cntr: *mut lapi_cntr_t,
    org_cntr: *mut lapi_cntr_t,
    cmpl_cntr: *mut lapi_cntr_t,
    file: *const c_char,
    line: c_int,
) -> c_int {
    let s = LapiSend {
        tgt: tgt.into(),
        handler: hdr_hdl.expose_provenance(),
        uhdr: uhdr.cast(),
        uhdr_len: uhdr_len as usize,
        data: LapiData::Contiguous(udata.cast(), udata_len as usize),
        tgt_cntr: tgt_cntr.expose_provenance(),
        org_cntr: org_cntr.cast(),
        cmpl_cntr: cmpl_cntr.cast(),
    };
    lapi("LAPI_Amsend", file, line, true, |at| {
        check_handle!(at, hndl);
        // SAFETY: the C caller's contract (lapi.h) is the raw layer's.
        unsafe { send(at, "LAPI_Amsend", &s) }
    })
}

/// `int LAPI_Amsendv(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void
/// *uhdr, uint uhdr_len, lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
/// lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr)`: sends the user header
/// and the blocks of `org_vec` to `tgt`, whose header handler
/// (`vhdr_hndlr_t`) returns the target vector they land in.
#[no_mangle]
pub unsafe extern "C" fn LAPI_Amsendv(
    hndl: lapi_handle_t,
    tgt: c_uint,
    hdr_hdl: *mut c_void,
    uhdr: *mut c_void,
    uhdr_len: c_uint,
    org_vec: *mut lapi_vec_t,
    tgt_cntr: *mut lapi_cntr_t,
    org_cntr: *mut lapi_cntr_t,
    cmpl_cntr: *mut lapi_cntr_t,
) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        bsplib_lapi_amsendv_at(
            hndl,
            tgt,
            hdr_hdl,
            uhdr,
            uhdr_len,
            org_vec,
            tgt_cntr,
            org_cntr,
            cmpl_cntr,
            std::ptr::null(),
            0,
        )
    }
}

/// `LAPI_Amsendv` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_lapi_amsendv_at(
    hndl: lapi_handle_t,
    tgt: c_uint,
    hdr_hdl: *mut c_void,
    uhdr: *mut c_void,
    uhdr_len: c_uint,
    org_vec: *mut lapi_vec_t,
    tgt_cntr: *mut lapi_cntr_t,
    org_cntr: *mut lapi_cntr_t,
    cmpl_cntr: *mut lapi_cntr_t,
    file: *const c_char,
    line: c_int,
) -> c_int {
    // SAFETY: the caller's vector, read at once.
    let vector = (!org_vec.is_null()).then(|| unsafe {
        let v = &*org_vec;
        LapiVector {
            kind: v.vec_type,
            num_vecs: v.num_vecs as usize,
            info: v.info.cast::<usize>().cast_const(),
            len: if v.vec_type == LAPI_GEN_STRIDED_XFER {
                std::ptr::null()
            } else {
                v.len.cast::<usize>().cast_const()
            },
        }
    });
    let s = LapiSend {
        tgt: tgt.into(),
        handler: hdr_hdl.expose_provenance(),
        uhdr: uhdr.cast(),
        uhdr_len: uhdr_len as usize,
        data: LapiData::Vector(vector),
        tgt_cntr: tgt_cntr.expose_provenance(),
        org_cntr: org_cntr.cast(),
        cmpl_cntr: cmpl_cntr.cast(),
    };
    lapi("LAPI_Amsendv", file, line, true, |at| {
        check_handle!(at, hndl);
        // SAFETY: as for `LAPI_Amsend`.
        unsafe { send(at, "LAPI_Amsendv", &s) }
    })
}

// ----- handlers -------------------------------------------------------------------

/// `int LAPI_Addr_set(lapi_handle_t hndl, void *addr, int addr_hndl)`:
/// makes `addr` this process's header handler number `addr_hndl` (1 to
/// `LAPI_MAX_INDEX - 1`); origins name it by `(void *)(uintptr_t)
/// addr_hndl`.
#[no_mangle]
pub unsafe extern "C" fn LAPI_Addr_set(
    hndl: lapi_handle_t,
    addr: *mut c_void,
    addr_hndl: c_int,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { bsplib_lapi_addr_set_at(hndl, addr, addr_hndl, std::ptr::null(), 0) }
}

/// `LAPI_Addr_set` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_lapi_addr_set_at(
    hndl: lapi_handle_t,
    addr: *mut c_void,
    addr_hndl: c_int,
    file: *const c_char,
    line: c_int,
) -> c_int {
    lapi("LAPI_Addr_set", file, line, false, |at| {
        check_handle!(at, hndl);
        let At::Process(bsp, _) = at else {
            unreachable!()
        };
        let index = usize::try_from(addr_hndl).unwrap_or(usize::MAX);
        // SAFETY: the C caller's contract (lapi.h): `addr` is a handler.
        let r = unsafe { bsp.raw().lapi_addr_set(addr.expose_provenance(), index) };
        Ok(r.map_or_else(code, |()| LAPI_SUCCESS))
    })
}

/// `int LAPI_Addr_get(lapi_handle_t hndl, void **addr, int addr_hndl)`:
/// this process's handler number `addr_hndl` (NULL if none).
#[no_mangle]
pub unsafe extern "C" fn LAPI_Addr_get(
    hndl: lapi_handle_t,
    addr: *mut *mut c_void,
    addr_hndl: c_int,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { bsplib_lapi_addr_get_at(hndl, addr, addr_hndl, std::ptr::null(), 0) }
}

/// `LAPI_Addr_get` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_lapi_addr_get_at(
    hndl: lapi_handle_t,
    addr: *mut *mut c_void,
    addr_hndl: c_int,
    file: *const c_char,
    line: c_int,
) -> c_int {
    lapi("LAPI_Addr_get", file, line, true, |at| {
        check_handle!(at, hndl);
        if addr.is_null() {
            return Ok(LAPI_ERR_RET_PTR_NULL);
        }
        let index = usize::try_from(addr_hndl).unwrap_or(usize::MAX);
        let r = match at {
            At::Process(bsp, _) => bsp.raw().lapi_addr_get(index),
            At::Handler(_) => lapi_handler_addr_get(index).unwrap_or(Err(LapiCode::HndlInvalid)),
        };
        Ok(match r {
            Ok(a) => {
                // SAFETY: the caller's pointer (checked non-null).
                unsafe { addr.write(std::ptr::with_exposed_provenance_mut(a)) };
                LAPI_SUCCESS
            }
            Err(c) => code(c),
        })
    })
}

/// `int LAPI_Address_init(lapi_handle_t hndl, void *my_addr, void
/// *add_tab[])`: every process's `my_addr` into `add_tab` (of `NUM_TASKS`
/// entries), `my_addr` becoming a handler address of this process.
/// Collective: a sync.
#[no_mangle]
pub unsafe extern "C" fn LAPI_Address_init(
    hndl: lapi_handle_t,
    my_addr: *mut c_void,
    add_tab: *mut *mut c_void,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { bsplib_lapi_address_init_at(hndl, my_addr, add_tab, std::ptr::null(), 0) }
}

/// `LAPI_Address_init` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_lapi_address_init_at(
    hndl: lapi_handle_t,
    my_addr: *mut c_void,
    add_tab: *mut *mut c_void,
    file: *const c_char,
    line: c_int,
) -> c_int {
    lapi("LAPI_Address_init", file, line, false, |at| {
        check_handle!(at, hndl);
        if add_tab.is_null() {
            return Ok(LAPI_ERR_RET_PTR_NULL);
        }
        let At::Process(bsp, loc) = at else {
            unreachable!()
        };
        // SAFETY: the C caller's contract (lapi.h).
        let table = unsafe { Raw::lapi_address_init(bsp, loc, my_addr.expose_provenance()) }?;
        crate::startup::note(bsp.pid(), bsp.superstep());
        for (i, a) in table.into_iter().enumerate() {
            // SAFETY: the caller's table holds NUM_TASKS entries.
            unsafe {
                add_tab
                    .add(i)
                    .write(std::ptr::with_exposed_provenance_mut(a))
            };
        }
        Ok(LAPI_SUCCESS)
    })
}

// ----- counters ----------------------------------------------------------------

/// `int LAPI_Setcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val)`:
/// sets the counter, and makes it one that messages may name as their
/// target counter. The counter must stay allocated until `LAPI_Term`.
#[no_mangle]
pub unsafe extern "C" fn LAPI_Setcntr(
    hndl: lapi_handle_t,
    cntr: *mut lapi_cntr_t,
    val: c_int,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { bsplib_lapi_setcntr_at(hndl, cntr, val, std::ptr::null(), 0) }
}

/// `LAPI_Setcntr` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_lapi_setcntr_at(
    hndl: lapi_handle_t,
    cntr: *mut lapi_cntr_t,
    val: c_int,
    file: *const c_char,
    line: c_int,
) -> c_int {
    lapi("LAPI_Setcntr", file, line, true, |at| {
        check_handle!(at, hndl);
        if cntr.is_null() {
            return Ok(LAPI_ERR_CNTR_NULL);
        }
        match at {
            // SAFETY: the C caller's contract (lapi.h).
            At::Process(bsp, _) => Ok(unsafe { bsp.raw().lapi_setcntr(cntr.cast(), val) }
                .map_or_else(code, |()| LAPI_SUCCESS)),
            // SAFETY: as above.
            At::Handler(_) => Ok(if unsafe { lapi_handler_setcntr(cntr.cast(), val) } {
                LAPI_SUCCESS
            } else {
                LAPI_ERR_HNDL_INVALID
            }),
        }
    })
}

/// `int LAPI_Getcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int *val)`:
/// handles the messages that arrived (not inside a completion handler,
/// where it only reads), then reads the counter.
#[no_mangle]
pub unsafe extern "C" fn LAPI_Getcntr(
    hndl: lapi_handle_t,
    cntr: *mut lapi_cntr_t,
    val: *mut c_int,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { bsplib_lapi_getcntr_at(hndl, cntr, val, std::ptr::null(), 0) }
}

/// `LAPI_Getcntr` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_lapi_getcntr_at(
    hndl: lapi_handle_t,
    cntr: *mut lapi_cntr_t,
    val: *mut c_int,
    file: *const c_char,
    line: c_int,
) -> c_int {
    const CALL: &str = "LAPI_Getcntr";
    lapi(CALL, file, line, true, |at| {
        check_handle!(at, hndl);
        if cntr.is_null() {
            return Ok(LAPI_ERR_CNTR_NULL);
        }
        if val.is_null() {
            return Ok(LAPI_ERR_RET_PTR_NULL);
        }
        let v = match at {
            // SAFETY: the C caller's contract (lapi.h).
            At::Process(bsp, loc) => unsafe { Raw::lapi_getcntr(bsp, loc, CALL, cntr.cast()) }?,
            // SAFETY: as above; a handler runs on the counter's process.
            At::Handler(_) => unsafe {
                std::sync::atomic::AtomicI32::from_ptr(cntr.cast())
                    .load(std::sync::atomic::Ordering::Acquire)
            },
        };
        // SAFETY: the caller's pointer (checked non-null).
        unsafe { val.write(v) };
        Ok(LAPI_SUCCESS)
    })
}

/// `int LAPI_Waitcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val, int
/// *cur_cntr_val)`: handles what arrives until the counter reaches `val`,
/// then subtracts `val`; `*cur_cntr_val` (if not NULL) gets what is left.
#[no_mangle]
pub unsafe extern "C" fn LAPI_Waitcntr(
    hndl: lapi_handle_t,
    cntr: *mut lapi_cntr_t,
    val: c_int,
    cur_cntr_val: *mut c_int,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { bsplib_lapi_waitcntr_at(hndl, cntr, val, cur_cntr_val, std::ptr::null(), 0) }
}

/// `LAPI_Waitcntr` with the caller's location.
#[no_mangle]
pub unsafe extern "C" fn bsplib_lapi_waitcntr_at(
    hndl: lapi_handle_t,
    cntr: *mut lapi_cntr_t,
    val: c_int,
    cur_cntr_val: *mut c_int,
    file: *const c_char,
    line: c_int,
) -> c_int {
    const CALL: &str = "LAPI_Waitcntr";
    lapi(CALL, file, line, false, |at| {
        check_handle!(at, hndl);
        if cntr.is_null() {
            return Ok(LAPI_ERR_CNTR_NULL);
        }
        if val < 0 {
            return Ok(LAPI_ERR_CNTR_VAL);
        }
        let At::Process(bsp, loc) = at else {
            unreachable!()
        };
        // SAFETY: the C caller's contract (lapi.h).
        let left = unsafe { Raw::lapi_waitcntr(bsp, loc, CALL, cntr.cast(), val) }?;
        if !cur_cntr_val.is_null() {
            // SAFETY: the caller's pointer (checked non-null).
            unsafe { cur_cntr_val.write(left) };
        }
        Ok(LAPI_SUCCESS)
    })
}

// ----- progress ----------------------------------------------------------------

/// `int LAPI_Probe(lapi_handle_t hndl)`: handles the messages that have
/// arrived, without waiting.
#[no_mangle]
pub extern "C" fn LAPI_Probe(hndl: lapi_handle_t) -> c_int {
    bsplib_lapi_probe_at(hndl, std::ptr::null(), 0)
}

/// `LAPI_Probe` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_lapi_probe_at(
    hndl: lapi_handle_t,
    file: *const c_char,
    line: c_int,
) -> c_int {
    lapi("LAPI_Probe", file, line, false, |at| {
        check_handle!(at, hndl);
        let At::Process(bsp, loc) = at else {
            unreachable!()
        };
        Raw::lapi_probe(bsp, loc, "LAPI_Probe")?;
        Ok(LAPI_SUCCESS)
    })
}

/// `int LAPI_Fence(lapi_handle_t hndl)`: handles what arrives until every
/// message this process sent has been handled by its target.
#[no_mangle]
pub extern "C" fn LAPI_Fence(hndl: lapi_handle_t) -> c_int {
    bsplib_lapi_fence_at(hndl, std::ptr::null(), 0)
}

/// `LAPI_Fence` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_lapi_fence_at(
    hndl: lapi_handle_t,
    file: *const c_char,
    line: c_int,
) -> c_int {
    lapi("LAPI_Fence", file, line, false, |at| {
        check_handle!(at, hndl);
        let At::Process(bsp, loc) = at else {
            unreachable!()
        };
        Raw::lapi_fence(bsp, loc, "LAPI_Fence")?;
        Ok(LAPI_SUCCESS)
    })
}

/// `int LAPI_Gfence(lapi_handle_t hndl)`: `bsp_sync` (every message sent
/// before any process's `LAPI_Gfence` has been handled when it returns).
#[no_mangle]
pub extern "C" fn LAPI_Gfence(hndl: lapi_handle_t) -> c_int {
    bsplib_lapi_gfence_at(hndl, std::ptr::null(), 0)
}

/// `LAPI_Gfence` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_lapi_gfence_at(
    hndl: lapi_handle_t,
    file: *const c_char,
    line: c_int,
) -> c_int {
    lapi("LAPI_Gfence", file, line, false, |at| {
        check_handle!(at, hndl);
        let At::Process(bsp, loc) = at else {
            unreachable!()
        };
        Raw::lapi_sync(bsp, loc, "LAPI_Gfence")?;
        crate::startup::note(bsp.pid(), bsp.superstep());
        Ok(LAPI_SUCCESS)
    })
}

/// `int LAPI_Msg_string(int error_code, void *buf)`: the message of a
/// return code into `buf` (`LAPI_MAX_ERR_STRING` bytes).
#[no_mangle]
pub unsafe extern "C" fn LAPI_Msg_string(error_code: c_int, buf: *mut c_void) -> c_int {
    if buf.is_null() {
        return LAPI_ERR_RET_PTR_NULL;
    }
    let msg = match error_code {
        LAPI_SUCCESS => "LAPI_SUCCESS: the call succeeded",
        LAPI_ERR_HDR_HNDLR_NULL => "LAPI_ERR_HDR_HNDLR_NULL: the header handler is NULL",
        LAPI_ERR_ORG_VEC_NULL => "LAPI_ERR_ORG_VEC_NULL: the origin vector is NULL",
        LAPI_ERR_ORG_VEC_TYPE => "LAPI_ERR_ORG_VEC_TYPE: the origin vector's type is not valid",
        LAPI_ERR_ORG_STRIDE => "LAPI_ERR_ORG_STRIDE: the origin vector's stride is less than its block",
        LAPI_ERR_ORG_VEC_ADDR => {
            "LAPI_ERR_ORG_VEC_ADDR: an origin vector address is NULL while its length is not 0"
        }
        LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL => {
            "LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL: the strided origin vector's address is NULL"
        }
        LAPI_ERR_ORG_EXTENT => "LAPI_ERR_ORG_EXTENT: the strided origin vector's extent is over LAPI_MAX_MSG_SZ",
        LAPI_ERR_ORG_VEC_LEN => {
            "LAPI_ERR_ORG_VEC_LEN: the origin vector's lengths are NULL or add up to more than LAPI_MAX_MSG_SZ"
        }
        LAPI_ERR_TGT => "LAPI_ERR_TGT: the target is not a task of the job",
        LAPI_ERR_UHDR_LEN => "LAPI_ERR_UHDR_LEN: the user header is over MAX_UHDR_SZ or not a multiple of 8 bytes",
        LAPI_ERR_UHDR_NULL => "LAPI_ERR_UHDR_NULL: the user header is NULL while its length is not 0",
        LAPI_ERR_HNDL_INVALID => "LAPI_ERR_HNDL_INVALID: the handle is not valid (not initialised, or terminated)",
        LAPI_ERR_TGT_PURGED => "LAPI_ERR_TGT_PURGED: the call returned early because of LAPI_Purge_totask",
        LAPI_ERR_ORG_ADDR_NULL => "LAPI_ERR_ORG_ADDR_NULL: the data is NULL while its length is not 0",
        LAPI_ERR_DATA_LEN => "LAPI_ERR_DATA_LEN: more data than one message carries",
        LAPI_ERR_CNTR_NULL => "LAPI_ERR_CNTR_NULL: the counter is NULL",
        LAPI_ERR_CNTR_VAL => "LAPI_ERR_CNTR_VAL: the value to wait for is negative",
        LAPI_ERR_QUERY_TYPE => "LAPI_ERR_QUERY_TYPE: not a lapi_query_t",
        LAPI_ERR_RET_PTR_NULL => "LAPI_ERR_RET_PTR_NULL: a result pointer is NULL",
        LAPI_ERR_ADDR_INDEX => "LAPI_ERR_ADDR_INDEX: the handler index is outside 1 .. LAPI_MAX_INDEX - 1",
        _ => "unknown LAPI return code",
    };
    let n = msg.len().min(LAPI_MAX_ERR_STRING as usize - 1);
    // SAFETY: the caller's buffer holds LAPI_MAX_ERR_STRING bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(msg.as_ptr(), buf.cast::<u8>(), n);
        buf.cast::<u8>().add(n).write(0);
    }
    LAPI_SUCCESS
}
