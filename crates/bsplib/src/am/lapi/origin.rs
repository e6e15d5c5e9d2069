//! The origin of a C send: its record built from the C arguments,
//! checked in the design's order, `LAPI_Address_init`'s records, and the
//! sends of the C API's calls.

use std::sync::atomic::Ordering;

use super::{counter, CData, CSend, Code, FLAG_ADDR, FLAG_AMSEND, FLAG_C, MAX_MSG_SZ, MAX_UHDR_SZ};
use crate::am::{
    pad8, Cmpl, Context, Outgoing, HEADER_WORDS, KIND_AM, VEC_CONTIG, VEC_GENERIC, VEC_IO,
    VEC_STRIDED,
};
use crate::engine::World;
use crate::vector::{self, Vector};

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

impl Context {
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
