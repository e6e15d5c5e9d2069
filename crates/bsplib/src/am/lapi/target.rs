//! The target of a C message: its C header handler called, the data
//! landed where the handler's vector says (its form checked against the
//! origin's), the completion handler and the target counter.

use std::cell::RefCell;
use std::ffi::{c_int, c_uint, c_ulong, c_void};

use super::handler::{Enter, Frame, InHandler, Phase};
use super::{bump_c, FLAG_ADDR, FLAG_AMSEND, HANDLE, MAX_INDEX};
use crate::am::{pad8, Context, Dispatch, Kind};
use crate::engine::World;
use crate::error::ErrorKind;
use crate::vector::{self, OriginError, TargetError, Vector};

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
