//! The raw layer's DRMA: registration, puts, gets and accumulates
//! (plain, high-performance, strided and vectored) through C pointers.

use std::ffi::c_void;

use super::{Raw, Res};
use crate::error::{Error, SourceLocation};
use crate::mem::Shape;
#[cfg(doc)]
use crate::Bsp;

impl Raw<'_> {
    /// `bsp_push_reg(ident, size)`; `ident` may be null.
    ///
    /// # Safety
    ///
    /// While the registration is live (until the sync after its pop), the
    /// `size` bytes at `ident` must stay allocated, and must not be read or
    /// written by this process while a sync runs (other processes' puts are
    /// written into them, and their gets read them, during syncs).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Negative`](crate::ErrorKind::Negative) for `size < 0`;
    /// mismatches are reported by the next sync.
    #[track_caller]
    pub unsafe fn push_reg(&self, ident: *const c_void, size: i64) -> Res {
        self.bsp
            .process()
            .push_reg(ident.expose_provenance(), size, None, self.loc())
    }

    /// `bsp_pop_reg(ident)`.
    ///
    /// # Safety
    ///
    /// None beyond [`push_reg`](Raw::push_reg)'s; marked unsafe for
    /// symmetry with the rest of the pointer API.
    ///
    /// # Errors
    ///
    /// Reported by the next sync.
    #[track_caller]
    pub unsafe fn pop_reg(&self, ident: *const c_void) -> Res {
        self.bsp.process().pop_reg(ident.addr(), self.loc())
    }

    /// `bsp_put(pid, src, dst, offset, nbytes)`.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes during the call.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::put`], plus negative `offset` or `nbytes`.
    #[track_caller]
    #[inline(always)]
    pub unsafe fn put(
        &self,
        pid: i64,
        src: *const c_void,
        dst: *mut c_void,
        offset: i64,
        nbytes: i64,
    ) -> Res {
        let mut p = self.bsp.process();
        // The small-put fast path first, without the location: C passes it
        // in `self.at`, written just before the call, and reading it back
        // whole stalled every put (a wide load of narrow stores; `perf`
        // put 60% of `Raw::put`'s samples on it). Only the checks that may
        // fail need it.
        // SAFETY: forwarded from the caller.
        if unsafe { p.put_small(pid, src.cast(), dst.addr(), offset, nbytes) } {
            return Ok(());
        }
        let loc = self.loc();
        // SAFETY: forwarded from the caller.
        unsafe { p.put_general(pid, src.cast(), dst.addr(), offset, nbytes, loc) }
    }

    /// `bsp_accumulate(pid, src, dst, offset, count, type, op)`: combines
    /// the `count` elements of type `ty` at `src` (read now) with `op`
    /// at the next sync into byte `offset` of the area registered on
    /// `pid` in the slot of `dst`, after the superstep's puts, in origin
    /// pid order then issue order (see [`Bsp::accumulate`]).
    ///
    /// # Safety
    ///
    /// `src` must be readable for `count * ty.size()` bytes during the
    /// call.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::accumulate`], plus a negative `offset` or `count`.
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn accumulate(
        &self,
        pid: i64,
        src: *const c_void,
        dst: *mut c_void,
        offset: i64,
        count: i64,
        ty: crate::rma::ElemType,
        op: crate::rma::Op,
    ) -> Res {
        let loc = self.loc();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.bsp.process().accumulate(
                pid,
                src.cast(),
                dst.addr(),
                offset,
                count,
                ty,
                op,
                "bsp_accumulate",
                loc,
            )
        }
    }

    /// [`accumulate`](Raw::accumulate) with the element type and operator
    /// given by their ids (the C interface's `bsp_type` and `bsp_op`): an
    /// id naming none fails with
    /// [`ErrorKind::AccumulateUnknown`](crate::ErrorKind::AccumulateUnknown).
    ///
    /// # Safety
    ///
    /// As for [`accumulate`](Raw::accumulate).
    ///
    /// # Errors
    ///
    /// As for [`accumulate`](Raw::accumulate), plus unknown ids.
    #[doc(hidden)]
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn accumulate_ids(
        &self,
        pid: i64,
        src: *const c_void,
        dst: *mut c_void,
        offset: i64,
        count: i64,
        ty: i64,
        op: i64,
    ) -> Res {
        use crate::rma::{ElemType, Op};
        let loc = self.loc();
        let unknown = |what, value| {
            let p = self.bsp.process();
            p.check_running("bsp_accumulate", loc)?;
            Err(p.fail(
                crate::ErrorKind::AccumulateUnknown { what, value },
                "bsp_accumulate",
                loc,
            ))
        };
        let Some(ty) = ElemType::from_id(ty) else {
            return unknown("element type", ty);
        };
        let Some(op) = Op::from_id(op) else {
            return unknown("operator", op);
        };
        // SAFETY: forwarded from the caller.
        unsafe {
            self.at(loc)
                .accumulate(pid, src, dst, offset, count, ty, op)
        }
    }

    /// `bsp_put_strided(pid, src, src_stride, dst, offset, dst_stride,
    /// block, count)`: `count` blocks of `block` bytes, block `k` read now
    /// from `src + k * src_stride` and written at the sync at byte `offset
    /// + k * dst_stride` of the area registered on `pid` in the slot of
    /// `dst`. One record for the whole transfer (see [`Bsp::put_strided`]).
    ///
    /// # Safety
    ///
    /// Every source block must be readable during the call.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::put_strided`].
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn put_strided(
        &self,
        pid: i64,
        src: *const c_void,
        src_stride: usize,
        dst: *mut c_void,
        offset: usize,
        dst_stride: usize,
        block: usize,
        count: usize,
    ) -> Res {
        let loc = self.loc();
        let from = Shape {
            block,
            stride: src_stride,
            count,
        };
        let to = Shape {
            stride: dst_stride,
            ..from
        };
        // SAFETY: forwarded from the caller.
        unsafe {
            self.bsp.process().put_strided(
                pid,
                src.cast(),
                from,
                dst.addr(),
                offset,
                to,
                "bsp_put_strided",
                loc,
            )
        }
    }

    /// The error of a NULL array argument `what` of `call`.
    fn null(&self, what: &'static str, call: &'static str, loc: Option<SourceLocation>) -> Error {
        let p = self.bsp.process();
        p.fail(crate::ErrorKind::NullPointer { what }, call, loc)
    }

    /// `bsp_get_strided(pid, src, offset, src_stride, dst, dst_stride,
    /// block, count)`: at the sync, `count` blocks of `block` bytes, block
    /// `k` read from byte `offset + k * src_stride` of the area registered
    /// on `pid` in the slot of `src` and written at `dst + k * dst_stride`
    /// (see [`Bsp::get_strided`]).
    ///
    /// # Safety
    ///
    /// Every destination block must stay writable until the end of the
    /// next sync and not be accessed by this process while it runs.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::get_strided`].
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn get_strided(
        &self,
        pid: i64,
        src: *const c_void,
        offset: usize,
        src_stride: usize,
        dst: *mut c_void,
        dst_stride: usize,
        block: usize,
        count: usize,
    ) -> Res {
        let loc = self.loc();
        let from = Shape {
            block,
            stride: src_stride,
            count,
        };
        let to = Shape {
            stride: dst_stride,
            ..from
        };
        // SAFETY: forwarded from the caller.
        unsafe {
            self.bsp.process().get_strided(
                pid,
                src.addr(),
                offset,
                from,
                dst.cast(),
                to,
                None,
                "bsp_get_strided",
                loc,
            )
        }
    }

    /// `bsp_put_vec(pid, v, n, dst)`: for each piece `(src, offset,
    /// nbytes)` (`None`: a NULL array of pieces, an error), in order, a put of `nbytes` bytes read now from `src`,
    /// written at the sync at byte `offset` of the area registered on
    /// `pid` in the slot of `dst` (see [`Bsp::put_vec`]).
    ///
    /// # Safety
    ///
    /// Every piece's source must be readable during the call.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::put_vec`]; the pieces before a failing one are sent.
    #[track_caller]
    pub unsafe fn put_vec(
        &self,
        pid: i64,
        pieces: Option<impl IntoIterator<Item = (*const c_void, usize, usize)>>,
        dst: *mut c_void,
    ) -> Res {
        let loc = self.loc();
        let Some(pieces) = pieces else {
            return Err(self.null("v", "bsp_put_vec", loc));
        };
        // The handle is borrowed per piece: `pieces` may be any iterator.
        for (src, offset, nbytes) in pieces {
            let whole = Shape::contiguous(nbytes);
            // SAFETY: forwarded from the caller.
            unsafe {
                self.bsp.process().put_strided(
                    pid,
                    src.cast(),
                    whole,
                    dst.addr(),
                    offset,
                    whole,
                    "bsp_put_vec",
                    loc,
                )?
            };
        }
        Ok(())
    }

    /// `bsp_get_vec(pid, src, v, n)`: for each piece `(dst, offset,
    /// nbytes)` (`None`: a NULL array of pieces, an error), in order, a get of `nbytes` bytes from byte `offset` of
    /// the area registered on `pid` in the slot of `src` into `dst` (see
    /// [`Bsp::get_vec`]).
    ///
    /// # Safety
    ///
    /// Every piece's destination must stay writable until the end of the
    /// next sync and not be accessed by this process while it runs.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::get_vec`]; the pieces before a failing one are
    /// requested.
    #[track_caller]
    pub unsafe fn get_vec(
        &self,
        pid: i64,
        src: *const c_void,
        pieces: Option<impl IntoIterator<Item = (*mut c_void, usize, usize)>>,
    ) -> Res {
        let loc = self.loc();
        let Some(pieces) = pieces else {
            return Err(self.null("v", "bsp_get_vec", loc));
        };
        for (dst, offset, nbytes) in pieces {
            let whole = Shape::contiguous(nbytes);
            // SAFETY: forwarded from the caller.
            unsafe {
                self.bsp.process().get_strided(
                    pid,
                    src.addr(),
                    offset,
                    whole,
                    dst.cast(),
                    whole,
                    None,
                    "bsp_get_vec",
                    loc,
                )?
            };
        }
        Ok(())
    }

    /// `bsp_hpput(pid, src, dst, offset, nbytes)`.
    ///
    /// # Safety
    ///
    /// `src` must stay readable and unchanged for `nbytes` bytes until the
    /// end of the next sync, and the destination range on `pid` must not be
    /// accessed by anything else until then (see [`Bsp::hpput`]).
    ///
    /// # Errors
    ///
    /// As for [`put`](Raw::put).
    #[track_caller]
    pub unsafe fn hpput(
        &self,
        pid: i64,
        src: *const c_void,
        dst: *mut c_void,
        offset: i64,
        nbytes: i64,
    ) -> Res {
        let loc = self.loc();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.bsp
                .process()
                .hpput(pid, src.cast(), dst.addr(), offset, nbytes, loc)
        }
    }

    /// `bsp_get(pid, src, offset, dst, nbytes)`.
    ///
    /// # Safety
    ///
    /// `dst` must stay writable for `nbytes` bytes until the end of the next
    /// sync and must not be accessed by this process while the sync runs.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::get`], plus negative `offset` or `nbytes`.
    #[track_caller]
    pub unsafe fn get(
        &self,
        pid: i64,
        src: *const c_void,
        offset: i64,
        dst: *mut c_void,
        nbytes: i64,
    ) -> Res {
        let loc = self.loc();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.bsp.process().get(
                pid,
                src.addr(),
                offset,
                dst.cast(),
                nbytes,
                false,
                None,
                loc,
            )
        }
    }

    /// `bsp_hpget(pid, src, offset, dst, nbytes)`.
    ///
    /// # Safety
    ///
    /// As for [`get`](Raw::get), and the source range on `pid` must not be
    /// written, nor `dst` accessed by anything else, until the end of the
    /// next sync (see [`Bsp::hpget`]).
    ///
    /// # Errors
    ///
    /// As for [`get`](Raw::get).
    #[track_caller]
    pub unsafe fn hpget(
        &self,
        pid: i64,
        src: *const c_void,
        offset: i64,
        dst: *mut c_void,
        nbytes: i64,
    ) -> Res {
        let loc = self.loc();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.bsp
                .process()
                .get(pid, src.addr(), offset, dst.cast(), nbytes, true, None, loc)
        }
    }
}
