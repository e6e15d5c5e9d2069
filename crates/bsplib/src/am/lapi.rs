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

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::ffi::{c_int, c_uint, c_ulong, c_void};
use std::sync::atomic::{AtomicI32, Ordering};

use super::{
    pad8, Cmpl, Context, Dispatch, Kind, Outgoing, HEADER_WORDS, KIND_AM, VEC_CONTIG, VEC_GENERIC,
    VEC_IO, VEC_STRIDED,
};
use crate::engine::World;
use crate::error::ErrorKind;
use crate::vector::{self, OriginError, TargetError, Vector};

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

// ----- handlers running ------------------------------------------------------------

/// Which C handler this thread is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// A header handler: no library call is allowed.
    Header,
    /// A completion handler: only the non-blocking calls are allowed
    /// (`LAPI_Amsend[v]`, `LAPI_Setcntr`, `LAPI_Getcntr` (reading),
    /// `LAPI_Qenv`, `LAPI_Addr_get`, `LAPI_Msg_string`).
    Completion,
}

/// The C handler this thread is running, and where.
#[derive(Clone, Copy, Debug)]
pub struct InHandler {
    /// Header or completion handler.
    pub phase: Phase,
    /// The process running it.
    pub pid: usize,
    /// The number of processes.
    pub nprocs: usize,
    /// Its superstep.
    pub superstep: u64,
}

struct Frame {
    info: InHandler,
    ctx: *const Context,
    sends: RefCell<Vec<Outgoing>>,
}

thread_local! {
    static FRAME: Cell<*const Frame> = const { Cell::new(std::ptr::null()) };
}

/// Restores the previous frame however the handler call ends.
struct Enter(*const Frame);

impl Enter {
    fn new(f: &Frame) -> Enter {
        Enter(FRAME.with(|c| c.replace(f)))
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        FRAME.with(|c| c.set(self.0));
    }
}

/// The C handler this thread is running, if any: library calls made from
/// it cannot reach the process (the dispatching call holds it).
pub fn in_handler() -> Option<InHandler> {
    let f = FRAME.with(Cell::get);
    // SAFETY: a non-null frame is the one `handle_c` keeps alive on its
    // stack while the handler runs on this thread.
    (!f.is_null()).then(|| unsafe { &*f }.info)
}

/// Runs `f` with the completion handler's frame; `None` outside one.
fn in_completion<T>(f: impl FnOnce(&Frame) -> T) -> Option<T> {
    let p = FRAME.with(Cell::get);
    if p.is_null() {
        return None;
    }
    // SAFETY: as in `in_handler`.
    let frame = unsafe { &*p };
    (frame.info.phase == Phase::Completion).then(|| f(frame))
}

/// `LAPI_Amsend[v]` from a completion handler: the message leaves when
/// the handler returns (or, during a sync, when that sync returns).
/// `None` outside a completion handler.
///
/// # Safety
///
/// As for [`Raw::lapi_send`](crate::raw::Raw::lapi_send).
pub unsafe fn handler_send(send: &CSend) -> Option<Result<(), Code>> {
    in_completion(|f| {
        // SAFETY: the frame's context is alive and not mutably used while
        // the handler runs (see `handle_c`).
        let ctx = unsafe { &*f.ctx };
        // SAFETY: the pointers are the caller's contract.
        match unsafe { build_c(ctx, send) } {
            Ok(out) => {
                f.sends.borrow_mut().push(out);
                Ok(())
            }
            Err(code) => Err(code),
        }
    })
}

/// `LAPI_Setcntr` from a completion handler; `false` outside one.
///
/// # Safety
///
/// As for [`Raw::lapi_setcntr`](crate::raw::Raw::lapi_setcntr).
pub unsafe fn handler_setcntr(cntr: *mut c_int, val: c_int) -> bool {
    in_completion(|f| {
        // SAFETY: as in `handler_send`.
        let ctx = unsafe { &*f.ctx };
        if let Some(c) = &ctx.c {
            c.borrow_mut().add_counter(cntr.expose_provenance());
        }
        // SAFETY: the caller's contract.
        unsafe { counter(cntr) }.store(val, Ordering::Release);
    })
    .is_some()
}

/// `LAPI_Addr_get` from a completion handler; `None` outside one.
pub fn handler_addr_get(index: usize) -> Option<Result<usize, Code>> {
    in_completion(|f| {
        // SAFETY: as in `handler_send`.
        let ctx = unsafe { &*f.ctx };
        ctx.c
            .as_ref()
            .map_or(Err(Code::HndlInvalid), |c| c.borrow().addr_get(index))
    })
}

// ----- the origin -------------------------------------------------------------------

/// Builds the record of a C send, checking its arguments in the design's
/// order (section 5); the origin counter moves once the data is copied.
///
/// # Safety
///
/// As for [`Raw::lapi_send`](crate::raw::Raw::lapi_send).
pub(crate) unsafe fn build_c(ctx: &Context, s: &CSend) -> Result<Outgoing, Code> {
    let to = usize::try_from(s.tgt)
        .ok()
        .filter(|&t| t < ctx.nprocs)
        .ok_or(Code::Tgt)?;
    if s.handler == 0 {
        return Err(Code::HdrHndlrNull);
    }
    if s.uhdr.is_null() && s.uhdr_len != 0 {
        return Err(Code::UhdrNull);
    }
    if s.uhdr_len > MAX_UHDR_SZ || s.uhdr_len % 8 != 0 {
        return Err(Code::UhdrLen);
    }
    let (vec, mut flags, lens, data): (u64, u64, Vec<usize>, Vec<u8>) = match s.data {
        CData::Contiguous(p, n) => {
            if p.is_null() && n != 0 {
                return Err(Code::OrgAddrNull);
            }
            if n > MAX_MSG_SZ {
                return Err(Code::DataLen);
            }
            let data = if n == 0 {
                Vec::new()
            } else {
                // SAFETY: the caller's contract: `p` readable for `n`.
                unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
            };
            (VEC_CONTIG, FLAG_AMSEND, vec![n], data)
        }
        CData::Vector(v) => {
            let raw = v.map(|v| {
                let known = vector::Kind::from_raw(v.kind);
                let strided = known == Some(vector::Kind::Strided);
                let slice = |p: *const usize, n: usize| {
                    // SAFETY: the caller's contract: non-null arrays hold
                    // `num_vecs` entries (`info` 3 for STRIDED).
                    (!p.is_null() && known.is_some())
                        .then(|| unsafe { std::slice::from_raw_parts(p, n) })
                };
                vector::Raw {
                    kind: v.kind,
                    num_vecs: v.num_vecs,
                    info: slice(v.info, if strided { 3 } else { v.num_vecs }),
                    len: if strided {
                        None
                    } else {
                        slice(v.len, v.num_vecs)
                    },
                }
            });
            let checked = vector::check_origin(raw)?;
            let total = checked.total();
            let (vec, lens) = match checked {
                Vector::Blocks { kind, lens, .. } => (
                    if kind == vector::Kind::IoVector {
                        VEC_IO
                    } else {
                        VEC_GENERIC
                    },
                    lens.to_vec(),
                ),
                Vector::Strided { block, count, .. } => (VEC_STRIDED, vec![block; count]),
            };
            let mut data = vec![0u8; total];
            let base = data.as_mut_ptr();
            let packed = Vector::Blocks {
                kind: vector::Kind::Generic,
                addrs: &[base.addr()],
                lens: &[total],
            };
            vector::walk(&checked, &packed, |p| {
                // SAFETY: the source is the caller's (readable, its
                // contract), the destination inside `data` (the walk
                // stays within `total` bytes of `base`).
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        std::ptr::with_exposed_provenance::<u8>(p.src),
                        base.add(p.dst - base.addr()),
                        p.len,
                    )
                }
            });
            (vec, 0, lens, data)
        }
    };
    flags |= FLAG_C;
    let lens_words = if vec == VEC_STRIDED || vec == VEC_CONTIG {
        1
    } else {
        lens.len()
    };
    let len = 8 * (HEADER_WORDS + lens_words) + pad8(s.uhdr_len) + pad8(data.len());
    if len > ctx.largest || len > u32::MAX as usize {
        return Err(Code::DataLen);
    }
    let mut r = Vec::with_capacity(len);
    let mut word = |w: u64| r.extend_from_slice(&w.to_ne_bytes());
    word(len as u64 | KIND_AM << 32 | vec << 40 | flags << 56);
    word(ctx.pid as u64);
    word(s.handler as u64);
    word(s.tgt_cntr as u64);
    word(s.uhdr_len as u64 | (lens.len() as u64) << 32);
    word(data.len() as u64);
    if lens_words == lens.len() && vec != VEC_CONTIG && vec != VEC_STRIDED {
        for l in &lens {
            word(*l as u64);
        }
    } else {
        word(lens.first().copied().unwrap_or(data.len()) as u64);
    }
    if s.uhdr_len > 0 {
        // SAFETY: the caller's contract: `uhdr` readable for `uhdr_len`.
        r.extend_from_slice(unsafe { std::slice::from_raw_parts(s.uhdr, s.uhdr_len) });
    }
    r.resize(r.len() + pad8(s.uhdr_len) - s.uhdr_len, 0);
    r.extend_from_slice(&data);
    r.resize(len, 0);
    if !s.org_cntr.is_null() {
        // SAFETY: the caller's contract.
        unsafe { counter(s.org_cntr) }.fetch_add(1, Ordering::AcqRel);
    }
    Ok(Outgoing {
        to,
        record: r,
        chunks: Vec::new(),
        cmpl: (!s.cmpl_cntr.is_null()).then(|| Cmpl::C(s.cmpl_cntr.expose_provenance())),
    })
}

/// The record of `LAPI_Address_init` carrying `addr` to `to`.
pub(crate) fn addr_record(ctx: &Context, to: usize, call: u64, addr: usize) -> Outgoing {
    let len = 8 * (HEADER_WORDS + 1) + 8;
    let mut r = Vec::with_capacity(len);
    let mut word = |w: u64| r.extend_from_slice(&w.to_ne_bytes());
    word(len as u64 | KIND_AM << 32 | VEC_CONTIG << 40 | (FLAG_C | FLAG_ADDR) << 56);
    word(ctx.pid as u64);
    word(call);
    word(0);
    word(1 << 32);
    word(8);
    word(8);
    word(addr as u64);
    Outgoing {
        to,
        record: r,
        chunks: Vec::new(),
        cmpl: None,
    }
}

// ----- the target -------------------------------------------------------------------

/// A C message as parsed by `Context::handle`.
pub(crate) struct Msg<'a> {
    pub(crate) from: usize,
    pub(crate) seq: u64,
    pub(crate) flags: u64,
    pub(crate) handler: u64,
    pub(crate) tgt: u64,
    pub(crate) kind: Kind,
    pub(crate) lens: &'a [usize],
    pub(crate) uhdr: &'a [u8],
    pub(crate) data: &'a [u8],
}

/// `compl_hndlr_t`.
type ComplFn = unsafe extern "C" fn(*mut c_uint, *mut c_void);
/// `vhdr_hndlr_t`.
type VhdrFn = unsafe extern "C" fn(
    *mut c_uint,
    *mut c_void,
    *mut c_uint,
    *mut *mut c_ulong,
    *mut Option<ComplFn>,
    *mut *mut c_void,
) -> *mut RawVec;
/// `hdr_hndlr_t`.
type HdrFn = unsafe extern "C" fn(
    *mut c_uint,
    *mut c_void,
    *mut c_uint,
    *mut c_ulong,
    *mut Option<ComplFn>,
    *mut *mut c_void,
) -> *mut c_void;

/// `lapi_vec_t`'s layout.
#[repr(C)]
struct RawVec {
    vec_type: c_int,
    num_vecs: c_uint,
    info: *mut usize,
    len: *mut c_ulong,
}

impl Context {
    /// One C message (or `LAPI_Address_init` record) from `m.from`.
    pub(crate) fn handle_c(&mut self, world: &World, m: Msg<'_>) -> Result<(), Dispatch> {
        let err = |reason: String| {
            Dispatch::Target(ErrorKind::AmTarget {
                origin: m.from,
                seq: m.seq,
                reason,
            })
        };
        let Some(cside) = &self.c else {
            return Err(err(
                "is a C (lapi.h) message, and this process uses the Rust API".into(),
            ));
        };
        if m.flags & FLAG_ADDR != 0 {
            let addr = m
                .data
                .get(..8)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()));
            cside.borrow_mut().addrs[m.from].push((m.handler, addr.unwrap_or(0) as usize));
            return Ok(());
        }
        let (handler, tgt_ok) = {
            let c = cside.borrow();
            let v = m.handler as usize;
            let h = if (1..MAX_INDEX).contains(&v) {
                c.table[v]
            } else if c.known.contains(&v) {
                v
            } else {
                0
            };
            (h, m.tgt == 0 || c.counters.contains(&(m.tgt as usize)))
        };
        if handler == 0 {
            return Err(err(if (1..MAX_INDEX).contains(&(m.handler as usize)) {
                format!(
                    "names header handler index {}, which this process did not set \
                     (LAPI_Addr_set)",
                    m.handler
                )
            } else {
                format!(
                    "names header handler {:#x}, which this process neither set \
                     (LAPI_Addr_set) nor published (LAPI_Address_init)",
                    m.handler
                )
            }));
        }
        if !tgt_ok {
            return Err(err(format!(
                "names target counter {:#x}, which is not a counter of this process \
                 (LAPI_Setcntr since LAPI_Init)",
                m.tgt
            )));
        }
        let amsend = m.flags & FLAG_AMSEND != 0;
        if amsend != (m.kind == Kind::Contiguous) {
            return Err(err("has a vector kind that does not match its call".into()));
        }
        // The user header, aligned for the handler to read in place.
        let mut uhdr = vec![0u64; pad8(m.uhdr.len()) / 8];
        bytemuck::cast_slice_mut::<u64, u8>(&mut uhdr)[..m.uhdr.len()].copy_from_slice(m.uhdr);
        let uhdr_ptr = if m.uhdr.is_empty() {
            std::ptr::null_mut()
        } else {
            uhdr.as_mut_ptr().cast::<c_void>()
        };
        let mut uhdr_len = m.uhdr.len() as c_uint;
        let mut hndl = HANDLE;
        let mut comp: Option<ComplFn> = None;
        let mut user_info: *mut c_void = std::ptr::null_mut();
        let total = m.data.len();
        let ctx_ptr: *const Context = &*self;
        let frame = |phase| Frame {
            info: InHandler {
                phase,
                pid: self.pid,
                nprocs: self.nprocs,
                superstep: self.superstep,
            },
            ctx: ctx_ptr,
            sends: RefCell::new(Vec::new()),
        };
        let header = frame(Phase::Header);
        if amsend {
            let mut msg_len = total as c_ulong;
            let buf = {
                let _in = Enter::new(&header);
                // SAFETY: `handler` was set or published by this process
                // as a handler (the contract of `lapi_addr_set` and
                // `lapi_address_init`); a `LAPI_Amsend` message calls it
                // as an `hdr_hndlr_t`; every pointer passed is to a live
                // local.
                unsafe {
                    let f: HdrFn = std::mem::transmute::<usize, HdrFn>(handler);
                    f(
                        &mut hndl,
                        uhdr_ptr,
                        &mut uhdr_len,
                        &mut msg_len,
                        &mut comp,
                        &mut user_info,
                    )
                }
            };
            if total > 0 {
                if buf.is_null() {
                    return Err(err(format!(
                        "carries {total} bytes, and its header handler returned a NULL buffer"
                    )));
                }
                // SAFETY: the handler's buffer is the target program's
                // choice, trusted like its own `memcpy` (design, section
                // 4): it must hold `msg_len` bytes.
                unsafe { std::ptr::copy_nonoverlapping(m.data.as_ptr(), buf.cast::<u8>(), total) };
            }
        } else {
            let mut lens: Vec<c_ulong> = m.lens.iter().map(|&l| l as c_ulong).collect();
            let mut lens_ptr = lens.as_mut_ptr();
            let tv = {
                let _in = Enter::new(&header);
                // SAFETY: as above, called as a `vhdr_hndlr_t`.
                unsafe {
                    let f: VhdrFn = std::mem::transmute::<usize, VhdrFn>(handler);
                    f(
                        &mut hndl,
                        uhdr_ptr,
                        &mut uhdr_len,
                        &mut lens_ptr,
                        &mut comp,
                        &mut user_info,
                    )
                }
            };
            if tv.is_null() {
                if total > 0 {
                    return Err(err(format!(
                        "carries {total} bytes, and its header handler returned a NULL vector"
                    )));
                }
            } else {
                // SAFETY: the handler's vector is the target program's
                // (trusted, section 4), read at once.
                let (kind, num_vecs, info, len) = unsafe {
                    let v = &*tv;
                    (v.vec_type, v.num_vecs as usize, v.info, v.len)
                };
                self.land(&m, kind, num_vecs, info, len).map_err(err)?;
            }
        }
        if let Some(comp) = comp {
            let done = frame(Phase::Completion);
            {
                let _in = Enter::new(&done);
                // SAFETY: the completion handler the target's own header
                // handler named, called as a `compl_hndlr_t`.
                unsafe { comp(&mut hndl, user_info) };
            }
            for out in done.sends.into_inner() {
                self.send(world, out).map_err(Dispatch::Interrupted)?;
            }
        }
        if m.tgt != 0 {
            // SAFETY: a counter of this process (checked above): its
            // `LAPI_Setcntr` vouched for it.
            unsafe { bump_c(m.tgt as usize) };
        }
        Ok(())
    }

    /// Lands `m`'s data in the target vector the header handler returned,
    /// its form checked against the origin's.
    fn land(
        &self,
        m: &Msg<'_>,
        kind: c_int,
        num_vecs: usize,
        info: *mut usize,
        len: *mut c_ulong,
    ) -> Result<(), String> {
        let known = vector::Kind::from_raw(kind);
        let strided = known == Some(vector::Kind::Strided);
        let slice = |p: *const usize, n: usize| {
            // SAFETY: the target program's vector, trusted (section 4):
            // non-null arrays hold `num_vecs` entries (`info` 3 for
            // STRIDED).
            (!p.is_null() && known.is_some()).then(|| unsafe { std::slice::from_raw_parts(p, n) })
        };
        let target = vector::check_origin(Some(vector::Raw {
            kind,
            num_vecs,
            info: slice(info, if strided { 3 } else { num_vecs }),
            len: if strided {
                None
            } else {
                slice(len.cast::<usize>(), num_vecs)
            },
        }))
        .map_err(|e| {
            format!(
                "its header handler returned a target vector that is not valid: {}",
                match e {
                    OriginError::VecType => format!("unknown vector kind {kind}"),
                    OriginError::StrideAddrNull | OriginError::VecAddr =>
                        "a NULL target address with a nonzero length".into(),
                    OriginError::Stride => "a stride below its block".into(),
                    OriginError::VecLen => "a NULL length array, or too long".into(),
                    _ => "too long".into(),
                }
            )
        })?;
        let base = m.data.as_ptr();
        let offsets: Vec<usize> = m
            .lens
            .iter()
            .scan(0usize, |at, &l| {
                let o = *at;
                *at += l;
                Some(base.addr() + o)
            })
            .collect();
        let origin = match m.kind {
            Kind::Strided => Vector::Strided {
                base: base.addr(),
                block: m.lens.first().copied().unwrap_or(0),
                stride: m.lens.first().copied().unwrap_or(0),
                count: m.lens.len(),
            },
            k => Vector::Blocks {
                kind: if k == Kind::Io {
                    vector::Kind::IoVector
                } else {
                    vector::Kind::Generic
                },
                addrs: &offsets,
                lens: m.lens,
            },
        };
        target.check_target(&origin).map_err(|e| match e {
            TargetError::Kind => format!(
                "its header handler returned a {:?} target vector for {:?} data (the kinds must \
                 match)",
                target.kind(),
                origin.kind()
            ),
            TargetError::IoVector { block: None } => format!(
                "its header handler returned {} io-vector blocks for the origin's {}",
                target.count(),
                origin.count()
            ),
            TargetError::IoVector { block: Some(i) } => {
                format!("io-vector block {i} has another length on the target than on the origin")
            }
            TargetError::Strided => "its strided target vector has another count or block than \
                                     the origin's, or a stride below its block"
                .into(),
            TargetError::NullAddress { block } => format!(
                "its header handler returned a NULL target address for block {block}, of nonzero \
                 length"
            ),
        })?;
        vector::walk(&origin, &target, |p| {
            // SAFETY: the source lies in the record (`data`); the
            // destination is the target program's choice, trusted like
            // its own `memcpy` (section 4).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    base.add(p.src - base.addr()),
                    std::ptr::with_exposed_provenance_mut::<u8>(p.dst),
                    p.len,
                )
            }
        });
        Ok(())
    }
}

// ----- the process's side --------------------------------------------------------

use crate::process::Process;

impl Process {
    /// The C side of this process's context, if it is in LAPI mode.
    fn cside(&self) -> Option<&RefCell<CSide>> {
        self.am.as_ref().and_then(|c| c.c.as_ref())
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

    /// Builds a C send's record.
    ///
    /// # Safety
    ///
    /// As for [`Raw::lapi_send`](crate::raw::Raw::lapi_send).
    pub(crate) unsafe fn build_lapi(&self, s: &CSend) -> Result<Outgoing, Code> {
        if self.c.is_none() {
            return Err(Code::HndlInvalid);
        }
        // SAFETY: the caller's contract.
        unsafe { build_c(self, s) }
    }

    /// `LAPI_Address_init`'s sends: `addr` to every process (itself too),
    /// and `addr` becomes a handler address of this process.
    pub(crate) fn address_init(
        &mut self,
        world: &World,
        addr: usize,
    ) -> Result<(), crate::engine::Interrupt> {
        let Some(c) = &self.c else { return Ok(()) };
        let call = {
            let mut c = c.borrow_mut();
            c.publish(addr);
            c.addr_calls += 1;
            c.addr_calls
        };
        for to in 0..self.nprocs {
            let out = addr_record(self, to, call, addr);
            self.send(world, out)?;
        }
        Ok(())
    }
}
