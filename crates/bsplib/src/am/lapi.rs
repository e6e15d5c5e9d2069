//! The C side of active messages: what `lapi.h` (crate `bsplib-c`) needs
//! from the core, reached through [`Raw`](crate::raw::Raw) and the free
//! functions re-exported in [`crate::raw`].
//!
//! It shares the Rust side's context, records, sequence numbers, ACKs,
//! fences, backlogs and held sends (`../am.rs`); what differs:
//!
//! - handlers are C function addresses: an index `1..MAX_INDEX` set by
//!   `LAPI_Addr_set`, or an address the target set or published with
//!   `LAPI_Address_init` (a record naming anything else fails on the
//!   target: the library never jumps to an address because a record
//!   carried it);
//! - the data lands where the C header handler's vector says (addresses
//!   of the target's own memory, trusted like a `memcpy` of the program,
//!   the vector's form checked by `vector.rs`);
//! - counters are `int`s in user memory, moved with atomic adds; a target
//!   counter must be an address the target passed to `LAPI_Setcntr`;
//! - origin argument errors are return codes ([`Code`]), not run errors.

// The C side of the LAPI subset is compiled in every build (the dispatch
// knows C handlers and C counters), but only the pointer layer (feature
// `raw`, the C crate's) makes C messages: without it, it is unused.
#![cfg_attr(not(feature = "raw"), allow(dead_code, unused_imports))]

use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::{c_int, c_uint};
use std::sync::atomic::{AtomicI32, Ordering};

use super::Context;
use crate::process::Process;
use crate::vector::{self, OriginError};

mod handler;
mod origin;
mod target;

pub use handler::{handler_addr_get, handler_send, handler_setcntr, in_handler, InHandler, Phase};
pub(crate) use target::Msg;

/// Record flags (bits 56.. of word 0): a C message.
pub(crate) const FLAG_C: u64 = 1;
/// A `LAPI_Amsend` message: its handler is an `hdr_hndlr_t`.
pub(crate) const FLAG_AMSEND: u64 = 2;
/// An address of `LAPI_Address_init`, not a message for a handler.
pub(crate) const FLAG_ADDR: u64 = 4;

/// The value of every live `lapi_handle_t` (one per run, resolved against
/// the calling process, so a handle in a global shared by the `threads`
/// engine works).
pub const HANDLE: c_uint = 1;

/// Handler indices run `1..MAX_INDEX` (`LAPI_MAX_INDEX`).
pub const MAX_INDEX: usize = 256;

/// The largest user header (`MAX_UHDR_SZ`).
pub const MAX_UHDR_SZ: usize = super::MAX_UHDR;

/// The largest message (`LAPI_MAX_MSG_SZ`).
pub const MAX_MSG_SZ: usize = vector::MAX_MSG_SZ;

/// Why a C call was refused at the origin: a LAPI return code. Nothing
/// was sent, counted or copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// `LAPI_ERR_HNDL_INVALID`: not in LAPI mode (before `LAPI_Init`,
    /// after `LAPI_Term`), or not the live handle.
    HndlInvalid,
    /// `LAPI_ERR_TGT`: no such task.
    Tgt,
    /// `LAPI_ERR_HDR_HNDLR_NULL`: a NULL header handler.
    HdrHndlrNull,
    /// `LAPI_ERR_UHDR_NULL`: a NULL user header of nonzero length.
    UhdrNull,
    /// `LAPI_ERR_UHDR_LEN`: a user header over `MAX_UHDR_SZ` or not a
    /// multiple of 8 bytes.
    UhdrLen,
    /// `LAPI_ERR_ORG_VEC_NULL`.
    OrgVecNull,
    /// `LAPI_ERR_ORG_VEC_TYPE`.
    OrgVecType,
    /// `LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL`.
    StrideOrgVecAddrNull,
    /// `LAPI_ERR_ORG_STRIDE`.
    OrgStride,
    /// `LAPI_ERR_ORG_EXTENT`.
    OrgExtent,
    /// `LAPI_ERR_ORG_VEC_LEN`.
    OrgVecLen,
    /// `LAPI_ERR_ORG_VEC_ADDR`.
    OrgVecAddr,
    /// `LAPI_ERR_ORG_ADDR_NULL`: `LAPI_Amsend` data NULL with a nonzero
    /// length.
    OrgAddrNull,
    /// `LAPI_ERR_DATA_LEN`: more data than one message carries.
    DataLen,
    /// `LAPI_ERR_ADDR_INDEX`: a handler index outside `1..MAX_INDEX`.
    AddrIndex,
}

impl Code {
    /// The code's name in `lapi.h`.
    pub fn name(self) -> &'static str {
        match self {
            Code::HndlInvalid => "LAPI_ERR_HNDL_INVALID",
            Code::Tgt => "LAPI_ERR_TGT",
            Code::HdrHndlrNull => "LAPI_ERR_HDR_HNDLR_NULL",
            Code::UhdrNull => "LAPI_ERR_UHDR_NULL",
            Code::UhdrLen => "LAPI_ERR_UHDR_LEN",
            Code::OrgVecNull => "LAPI_ERR_ORG_VEC_NULL",
            Code::OrgVecType => "LAPI_ERR_ORG_VEC_TYPE",
            Code::StrideOrgVecAddrNull => "LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL",
            Code::OrgStride => "LAPI_ERR_ORG_STRIDE",
            Code::OrgExtent => "LAPI_ERR_ORG_EXTENT",
            Code::OrgVecLen => "LAPI_ERR_ORG_VEC_LEN",
            Code::OrgVecAddr => "LAPI_ERR_ORG_VEC_ADDR",
            Code::OrgAddrNull => "LAPI_ERR_ORG_ADDR_NULL",
            Code::DataLen => "LAPI_ERR_DATA_LEN",
            Code::AddrIndex => "LAPI_ERR_ADDR_INDEX",
        }
    }
}

impl From<OriginError> for Code {
    fn from(e: OriginError) -> Code {
        match e {
            OriginError::VecNull => Code::OrgVecNull,
            OriginError::VecType => Code::OrgVecType,
            OriginError::StrideAddrNull => Code::StrideOrgVecAddrNull,
            OriginError::Stride => Code::OrgStride,
            OriginError::Extent => Code::OrgExtent,
            OriginError::VecLen => Code::OrgVecLen,
            OriginError::VecAddr => Code::OrgVecAddr,
        }
    }
}

/// A C vector (`lapi_vec_t`) as the origin passes it: its raw kind
/// (`LAPI_GEN_IOVECTOR` 0, `LAPI_GEN_STRIDED_XFER` 1, `LAPI_GEN_GENERIC`
/// 2), its count, and its `info` (addresses; `{base, block, stride}` for
/// STRIDED) and `len` arrays, either of which may be NULL.
#[derive(Clone, Copy, Debug)]
pub struct CVector {
    /// The raw kind.
    pub kind: c_int,
    /// The number of blocks.
    pub num_vecs: usize,
    /// The `info` array.
    pub info: *const usize,
    /// The `len` array.
    pub len: *const usize,
}

/// The data of a C send.
#[derive(Clone, Copy, Debug)]
pub enum CData {
    /// `LAPI_Amsend`: one block (address, bytes).
    Contiguous(*const u8, usize),
    /// `LAPI_Amsendv`: a vector, `None` for NULL.
    Vector(Option<CVector>),
}

/// A C send's arguments after the handle (checked in the design's order).
#[derive(Clone, Copy, Debug)]
pub struct CSend {
    /// The target task (`LAPI_ERR_TGT` outside `0..NUM_TASKS`).
    pub tgt: i64,
    /// The header handler: an index or an address of the target's.
    pub handler: usize,
    /// The user header and its length.
    pub uhdr: *const u8,
    /// Its length in bytes.
    pub uhdr_len: usize,
    /// The data.
    pub data: CData,
    /// The target's counter (an address of the target's), 0 for none.
    pub tgt_cntr: usize,
    /// This process's origin counter, NULL for none.
    pub org_cntr: *mut c_int,
    /// This process's completion counter, NULL for none.
    pub cmpl_cntr: *mut c_int,
}

/// The C state of a process in LAPI mode.
pub(crate) struct CSide {
    /// `LAPI_Addr_set`'s table (0: none).
    table: [usize; MAX_INDEX],
    /// Addresses set or published as this process's handlers.
    known: HashSet<usize>,
    /// Addresses passed to `LAPI_Setcntr` since `LAPI_Init`.
    counters: HashSet<usize>,
    /// `LAPI_Address_init`: the calls this process made, and per origin
    /// the addresses it sent, with the number of its call (records of a
    /// process's next call may arrive while this one still waits in the
    /// sync of the previous).
    addr_calls: u64,
    addrs: Vec<Vec<(u64, usize)>>,
}

impl CSide {
    pub(crate) fn new(nprocs: usize) -> CSide {
        CSide {
            table: [0; MAX_INDEX],
            known: HashSet::new(),
            counters: HashSet::new(),
            addr_calls: 0,
            addrs: vec![Vec::new(); nprocs],
        }
    }

    /// Sets handler `index` to `addr` (`LAPI_Addr_set`).
    pub(crate) fn addr_set(&mut self, addr: usize, index: usize) -> Result<(), Code> {
        if !(1..MAX_INDEX).contains(&index) {
            return Err(Code::AddrIndex);
        }
        self.table[index] = addr;
        if addr != 0 {
            self.known.insert(addr);
        }
        Ok(())
    }

    /// Handler `index` (`LAPI_Addr_get`).
    pub(crate) fn addr_get(&self, index: usize) -> Result<usize, Code> {
        if !(1..MAX_INDEX).contains(&index) {
            return Err(Code::AddrIndex);
        }
        Ok(self.table[index])
    }

    /// Publishes `addr` as a handler of this process
    /// (`LAPI_Address_init`).
    pub(crate) fn publish(&mut self, addr: usize) {
        if addr != 0 {
            self.known.insert(addr);
        }
    }

    /// Makes `addr` a counter of this process (`LAPI_Setcntr`).
    pub(crate) fn add_counter(&mut self, addr: usize) {
        self.counters.insert(addr);
    }

    /// Takes the addresses of this process's latest `LAPI_Address_init`
    /// call: `None` for processes that sent none for it.
    pub(crate) fn take_addrs(&mut self) -> Vec<Option<usize>> {
        let call = self.addr_calls;
        self.addrs
            .iter_mut()
            .map(|q| {
                let at = q.iter().position(|&(c, _)| c == call)?;
                Some(q.remove(at).1)
            })
            .collect()
    }
}

/// Adds 1 to the C counter at `addr`.
///
/// # Safety
///
/// `addr` is a live, aligned `int` that this process's library calls may
/// update (the senders' and `LAPI_Setcntr`'s contracts).
pub(crate) unsafe fn bump_c(addr: usize) {
    // SAFETY: the caller's contract.
    unsafe { AtomicI32::from_ptr(std::ptr::with_exposed_provenance_mut(addr)) }
        .fetch_add(1, Ordering::AcqRel);
}

/// The C counter at `cntr`.
///
/// # Safety
///
/// `cntr` is a live, aligned `int`, accessed only atomically meanwhile.
pub(crate) unsafe fn counter<'a>(cntr: *mut c_int) -> &'a AtomicI32 {
    // SAFETY: the caller's contract.
    unsafe { AtomicI32::from_ptr(cntr) }
}

// ----- the process's side --------------------------------------------------------

impl Process {
    /// The C side of this process's context, if it is in LAPI mode.
    fn cside(&self) -> Option<&RefCell<CSide>> {
        self.ext.am().ctx.as_ref().and_then(|c| c.c.as_ref())
    }

    /// Whether this process is in C LAPI mode.
    pub(crate) fn lapi_active(&self) -> bool {
        self.cside().is_some()
    }
}

impl Context {
    /// A context for the C API: no Rust handlers, the C side.
    pub(crate) fn new_c(p: &mut Process) -> Context {
        let mut ctx = Context::new(p, super::Handlers::new());
        ctx.c = Some(RefCell::new(CSide::new(p.nprocs)));
        ctx
    }

    /// The C side, in LAPI mode.
    pub(crate) fn c_side(&self) -> Option<&RefCell<CSide>> {
        self.c.as_ref()
    }
}
