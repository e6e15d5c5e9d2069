//! The raw layer: BSPlib's pointer API over the same core, for the C
//! interface and for Rust callers that manage registered memory themselves.
//!
//! Arguments are the C ones widened to `i64`, so that the core's checks
//! (negative sizes, pid range) are the same for every front door.

use crate::am::lapi;
use std::ffi::c_int;
use std::sync::atomic::Ordering;

pub use crate::am::lapi::{
    handler_addr_get as lapi_handler_addr_get, handler_send as lapi_handler_send,
    handler_setcntr as lapi_handler_setcntr, in_handler as lapi_in_handler, CData as LapiData,
    CSend as LapiSend, CVector as LapiVector, Code as LapiCode, InHandler as LapiInHandler,
    Phase as LapiPhase, HANDLE as LAPI_HANDLE, MAX_INDEX as LAPI_MAX_INDEX,
    MAX_MSG_SZ as LAPI_MAX_MSG_SZ, MAX_UHDR_SZ as LAPI_MAX_UHDR_SZ,
};
use std::ffi::c_void;

use crate::error::{Error, SourceLocation};
use crate::mem::Shape;
use crate::Bsp;

/// BSPlib's pointer API; see [`Bsp::raw`].
///
/// Every method is the C function of the same name, with the same
/// semantics; errors are returned (and stop the run) rather than aborting.
/// `bsp_sync` is [`Bsp::sync`] itself: it needs `&mut Bsp`, which is what
/// keeps the safe API sound.
///
/// # Examples
///
/// ```
/// let r = bsplib::run(2, |bsp| {
///     let mut x: i32 = bsp.pid() as i32;
///     let px = &mut x as *mut i32 as *mut std::ffi::c_void;
///     // SAFETY: `x` outlives its registration (popped before return) and
///     // is not touched by Rust code while the syncs write it.
///     unsafe {
///         bsp.raw().push_reg(px, 4)?;
///         bsp.sync()?;
///         let other = 1 - bsp.pid() as i64;
///         bsp.raw().put(other, px, px, 0, 4)?;
///         bsp.sync()?;
///         bsp.raw().pop_reg(px)?;
///         bsp.sync()?;
///     }
///     Ok(x)
/// })?;
/// assert_eq!(r, vec![1, 0]);
/// # Ok::<(), bsplib::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Raw<'a> {
    bsp: &'a Bsp,
    /// The location to report, when the caller knows it better than
    /// `#[track_caller]` does (the C interface passes `__FILE__`/`__LINE__`).
    at: Option<Option<SourceLocation>>,
}

type Res<T = ()> = Result<T, Error>;

impl<'a> Raw<'a> {
    pub(crate) fn new(bsp: &'a Bsp) -> Self {
        Raw { bsp, at: None }
    }

    /// The same layer, reporting `loc` as the location of the calls made
    /// through it instead of the Rust caller's (front doors in other
    /// languages pass their caller's location; `None` for unknown).
    pub fn at(self, loc: Option<SourceLocation>) -> Self {
        Raw {
            at: Some(loc),
            ..self
        }
    }

    /// The handle (the other layers of the crate).
    pub(crate) fn bsp(&self) -> &'a Bsp {
        self.bsp
    }

    /// The location to report for the current call (the other layers of
    /// the crate).
    #[track_caller]
    pub(crate) fn location(&self) -> Option<SourceLocation> {
        self.loc()
    }

    /// The location to report for the current call.
    #[track_caller]
    #[inline]
    fn loc(&self) -> Option<SourceLocation> {
        match self.at {
            Some(loc) => loc,
            None => Some(SourceLocation::caller()),
        }
    }

    /// `bsp_sync` at this layer's location: see [`Bsp::sync`]. Takes the
    /// handle itself, since a sync needs it exclusively.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::sync`].
    #[track_caller]
    pub fn sync(bsp: &mut Bsp, loc: Option<SourceLocation>) -> Res {
        bsp.sync_at(loc)
    }

    /// `bsp_abort` for front doors that stop the program themselves: records
    /// the abort with `message` as the run's error (stopping every other
    /// process) and returns it, where [`Bsp::abort`] unwinds.
    #[track_caller]
    pub fn abort(&self, message: String) -> Error {
        let loc = self.loc();
        self.bsp.process().abort(message, loc)
    }

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
    pub unsafe fn put(
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
                .put(pid, src.cast(), dst.addr(), offset, nbytes, loc)
        }
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

    /// `bsp_set_tagsize`: returns the previous value (C writes it back
    /// through its pointer argument).
    ///
    /// # Errors
    ///
    /// A negative size; mismatches are reported by the next sync.
    #[track_caller]
    pub fn set_tagsize(&self, nbytes: i64) -> Res<i64> {
        self.bsp
            .process()
            .set_tagsize(nbytes, self.loc())
            .map(|prev| prev as i64)
    }

    /// `bsp_send(pid, tag, payload, nbytes)`; the tag has the tag size in
    /// force for this superstep.
    ///
    /// # Safety
    ///
    /// `tag` must be readable for the tag size in force, `payload` for
    /// `nbytes` bytes (either may be null when its size is 0).
    ///
    /// # Errors
    ///
    /// Pid out of range, negative `nbytes`.
    #[track_caller]
    pub unsafe fn send(
        &self,
        pid: i64,
        tag: *const c_void,
        payload: *const c_void,
        nbytes: i64,
    ) -> Res {
        let loc = self.loc();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.bsp
                .process()
                .send(pid, tag.cast(), payload.cast(), nbytes, loc)
        }
    }

    /// `bsp_qsize`: `(messages, payload bytes)` in the queue.
    pub fn qsize(&self) -> (usize, usize) {
        self.bsp.qsize()
    }

    /// `bsp_get_tag`: `None` (status -1) on an empty queue; otherwise copies
    /// the tag (the queue's tag size) to `tag` and returns the payload
    /// length.
    ///
    /// # Safety
    ///
    /// `tag` must be writable for the queue's tag size.
    ///
    /// # Errors
    ///
    /// A null `tag` when the queue's tag size is not 0.
    #[track_caller]
    pub unsafe fn get_tag(&self, tag: *mut c_void) -> Res<Option<usize>> {
        let loc = self.loc();
        let p = self.bsp.process();
        let Some(m) = p.inbox.front() else {
            return Ok(None);
        };
        p.check_pointer(tag, m.tag_len, "tag", "bsp_get_tag", loc)?;
        // SAFETY: the message is readable until the next sync; the caller
        // vouches for `tag`, which is not null.
        unsafe { crate::mem::copy(m.tag, tag.cast(), m.tag_len) };
        Ok(Some(m.len))
    }

    /// `bsp_move(payload, reception_nbytes)`: returns the bytes copied.
    ///
    /// # Safety
    ///
    /// `payload` must be writable for `reception_nbytes` bytes.
    ///
    /// # Errors
    ///
    /// An empty queue; a negative `reception_nbytes`.
    #[track_caller]
    pub unsafe fn move_payload(&self, payload: *mut c_void, reception_nbytes: i64) -> Res<usize> {
        let loc = self.loc();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.bsp
                .process()
                .move_payload(payload.cast(), reception_nbytes, loc)
        }
    }

    /// `bsp_hpmove`: `None` (-1) on an empty queue; otherwise removes the
    /// first message and returns pointers to its tag and payload, valid
    /// until the end of the superstep, and the payload length.
    pub fn hpmove(&self) -> Option<(*const c_void, *const c_void, usize)> {
        let m = self.bsp.process().inbox.pop_front()?;
        Some((m.tag.cast(), m.payload.cast(), m.len))
    }

    /// Test hook for the owner's checks, not part of the API: sends `pid`
    /// a put record naming registration slot `slot` (slots are numbered
    /// in push order from 0, the same on every process), `offset` and
    /// `data`, with none of the sender's checks. The owner resolves and
    /// checks every record in its own table at the sync, so a record
    /// naming memory it does not have fails the run there with
    /// [`ErrorKind::InvalidRecord`](crate::ErrorKind::InvalidRecord);
    /// nothing is written. Safe for that reason.
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub fn forge_put(&self, pid: i64, slot: u64, offset: usize, data: &[u8]) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_put", loc)?;
        let pid = p.check_pid(pid, "bsp_put", loc)?;
        // SAFETY: `data` is readable for its length.
        unsafe { p.push_put(pid, slot, offset, data.as_ptr(), data.len(), "bsp_put", loc) }
    }

    /// Test hook for the owner's checks of accumulates, not part of the
    /// API: sends `pid` an accumulate record `[slot | ACCUMULATE][offset]
    /// [len][desc][data]` with `desc` as given (`type | op << 8 | line <<
    /// 32`), with none of the sender's checks. The owner refuses a slot it
    /// does not have, a range beyond its area, an unknown or undefined
    /// type and operator pair, or a length that is not a whole number of
    /// elements, with
    /// [`ErrorKind::InvalidRecord`](crate::ErrorKind::InvalidRecord).
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub fn forge_accumulate(
        &self,
        pid: i64,
        slot: u64,
        offset: usize,
        desc: u64,
        data: &[u8],
    ) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_accumulate", loc)?;
        let pid = p.check_pid(pid, "bsp_accumulate", loc)?;
        let header = [
            (slot | crate::rma::ACCUMULATE) as usize,
            offset,
            data.len(),
            desc as usize,
        ];
        let buf = &mut p.dest(pid).puts;
        buf.try_reserve_record(data.len() + 8)
            .expect("room for a test record");
        // SAFETY: `data` is readable for its length.
        unsafe { buf.push_record4(header, data.as_ptr(), data.len()) };
        p.flags |= crate::mailbox::DATA;
        Ok(())
    }

    /// Test hook for the receiver's checks, not part of the API: sends
    /// `pid` a put record saying that its `len` bytes are at byte `at` of
    /// this process's channel (`remote == false`: the record of a large
    /// put on `processes`) or at address `at` of this process's memory
    /// (`remote`: an hpput read with cross-memory attach), whatever is
    /// there. The receiver refuses a range outside the channel, an address
    /// the kernel will not read, or such a record on an engine without
    /// that path, with
    /// [`ErrorKind::InvalidRecord`](crate::ErrorKind::InvalidRecord).
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub fn forge_put_elsewhere(
        &self,
        pid: i64,
        slot: u64,
        offset: usize,
        len: usize,
        at: usize,
        remote: bool,
    ) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_put", loc)?;
        let pid = p.check_pid(pid, "bsp_put", loc)?;
        p.dest(pid).puts.push_words([
            slot as usize,
            offset,
            len | if remote {
                crate::mem::PUT_REMOTE
            } else {
                crate::mem::PUT_BULK
            },
            at,
        ]);
        p.flags |= crate::mailbox::DATA;
        Ok(())
    }

    /// Test hook for the receiver's checks, not part of the API: sends
    /// `pid` a message whose tag is `tag`, whatever the tag size in force
    /// (the receiver refuses a tag of another length at the sync, with
    /// [`ErrorKind::InvalidRecord`](crate::ErrorKind::InvalidRecord)).
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub fn forge_send(&self, pid: i64, tag: &[u8], payload: &[u8]) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_send", loc)?;
        let pid = p.check_pid(pid, "bsp_send", loc)?;
        let out = p.out_sends(pid);
        // SAFETY: both slices are readable for their lengths.
        unsafe {
            out.push_record([tag.len(), payload.len()], tag.as_ptr(), tag.len());
            out.push_raw(payload.as_ptr(), payload.len());
        }
        p.flags |= crate::mailbox::DATA;
        Ok(())
    }

    /// Test hook for the owner's checks, not part of the API: asks `pid`
    /// for `len` bytes at `offset` of registration slot `slot`, with none
    /// of the requester's checks, into a buffer of the library's that is
    /// dropped after the sync. See [`forge_put`](Raw::forge_put).
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub fn forge_get(&self, pid: i64, slot: u64, offset: usize, len: usize) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_get", loc)?;
        let pid = p.check_pid(pid, "bsp_get", loc)?;
        let sink = std::rc::Rc::new(std::cell::UnsafeCell::new(
            vec![0u8; len].into_boxed_slice(),
        ));
        // SAFETY: no reference to the buffer exists; the pointer is used
        // by this sync only, while the keepalive below holds the buffer.
        let dst = unsafe { (*sink.get()).as_mut_ptr() };
        // No source address: always a request, which the owner checks.
        p.push_get(pid, slot, offset, 0, dst, len);
        p.get_keep.push(sink);
        Ok(())
    }

    /// Test hook for the owner's checks, not part of the API: sends `pid`
    /// the strided put record `[slot | VECTOR][offset][len][block][stride]`
    /// followed by `data` (which need not hold `len` bytes), with none of
    /// the sender's checks. The owner refuses a shape whose blocks do not
    /// divide `len` or overlap, a span beyond its area, or a record cut
    /// short, with [`ErrorKind::InvalidRecord`](crate::ErrorKind::InvalidRecord).
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub fn forge_put_strided(
        &self,
        pid: i64,
        slot: u64,
        offset: usize,
        len: usize,
        block: usize,
        stride: usize,
        data: &[u8],
    ) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_put_strided", loc)?;
        let pid = p.check_pid(pid, "bsp_put_strided", loc)?;
        let out = &mut p.dest(pid).puts;
        out.push_words([
            (slot | crate::mem::VECTOR) as usize,
            offset,
            len,
            block,
            stride,
        ]);
        // SAFETY: `data` is readable for its length.
        unsafe { out.push_raw(data.as_ptr(), data.len()) };
        p.flags |= crate::mailbox::DATA;
        Ok(())
    }

    /// Test hook for the owner's checks, not part of the API: asks `pid`
    /// for `count` blocks of `block` bytes at a stride of `stride` from
    /// `offset` of registration slot `slot` (`stride != block`), with none
    /// of the requester's checks, into a buffer of the library's. See
    /// [`forge_put_strided`](Raw::forge_put_strided).
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub fn forge_get_strided(
        &self,
        pid: i64,
        slot: u64,
        offset: usize,
        block: usize,
        stride: usize,
        count: usize,
    ) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_get_strided", loc)?;
        let pid = p.check_pid(pid, "bsp_get_strided", loc)?;
        let len = block.saturating_mul(count);
        let sink = std::rc::Rc::new(std::cell::UnsafeCell::new(
            vec![0u8; len].into_boxed_slice(),
        ));
        // SAFETY: no reference to the buffer exists; the pointer is used
        // by this sync only, while the keepalive below holds the buffer.
        let dst = unsafe { (*sink.get()).as_mut_ptr() };
        let from = crate::mem::Shape {
            block,
            stride,
            count,
        };
        // No source address: always a request, which the owner checks.
        p.push_get_shaped(
            pid,
            slot,
            offset,
            0,
            dst,
            from,
            crate::mem::Shape::contiguous(len),
        );
        p.get_keep.push(sink);
        Ok(())
    }

    /// Transport test hook, not part of the API (the one-sided
    /// synchronisation of a later layer is built on it): notifies process
    /// `pid` on channel `ch` (`0..4`).
    ///
    /// # Errors
    ///
    /// A pid out of range, a channel out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub fn notify(&self, pid: i64, ch: usize) -> Res {
        const CALL: &str = "bsp_notify";
        let loc = self.loc();
        let p = self.bsp.process();
        p.check_running(CALL, loc)?;
        let pid = p.check_pid(pid, CALL, loc)?;
        p.check_channel(ch, CALL, loc)?;
        p.world.notify(pid, ch);
        Ok(())
    }

    /// Transport test hook, not part of the API: waits until this process
    /// has received `target` notifications in all on channel `ch`.
    ///
    /// # Errors
    ///
    /// A channel out of range; the run stopped, or its deadline passed,
    /// while waiting.
    #[doc(hidden)]
    #[track_caller]
    pub fn wait_notified(&self, ch: usize, target: u64) -> Res {
        const CALL: &str = "bsp_wait";
        let loc = self.loc();
        let p = self.bsp.process();
        p.check_running(CALL, loc)?;
        p.check_channel(ch, CALL, loc)?;
        p.world
            .wait_notified(p.pid, ch, target)
            .map_err(|why| p.interrupted(why, CALL, loc))
    }

    /// Transport test hook, not part of the API (the active messages are
    /// built on it): posts `record` (whole 8-byte words, the first one's
    /// low 32 bits its length in bytes) to process `pid`'s active-message
    /// inbox. `Ok(false)` when the inbox has no room now.
    ///
    /// # Safety
    ///
    /// In a run in active-message mode, a forged record (an
    /// acknowledgement above all) can end another process's fence early
    /// and let its handlers write its memory while other processes read it
    /// during a sync: use it only in runs that never enter the mode.
    ///
    /// # Errors
    ///
    /// A pid out of range, a record of the wrong form or too large, a run
    /// stopped.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn am_transport_post(&self, pid: i64, record: &[u8]) -> Res<bool> {
        const CALL: &str = "am_post";
        let loc = self.loc();
        let p = self.bsp.process();
        p.check_running(CALL, loc)?;
        let pid = p.check_pid(pid, CALL, loc)?;
        let word = record
            .get(..8)
            .map(|w| u64::from_ne_bytes(w.try_into().unwrap_or_default()));
        if record.len() % 8 != 0
            || record.len() > p.world.am_max_record()
            || word.is_none_or(|w| w as u32 as usize != record.len())
        {
            return Err(p.fail(
                crate::ErrorKind::Overflow {
                    what: "active-message record",
                },
                CALL,
                loc,
            ));
        }
        p.world
            .am_post(p.pid, pid, &[record])
            .map_err(|why| p.interrupted(why, CALL, loc))
    }

    /// Transport test hook, not part of the API: the records that arrived
    /// for this process, concatenated.
    ///
    /// # Errors
    ///
    /// A run stopped.
    #[doc(hidden)]
    #[track_caller]
    pub fn am_transport_take(&self) -> Res<Vec<u8>> {
        let loc = self.loc();
        let p = self.bsp.process();
        let mut out = Vec::new();
        p.world
            .am_take(p.pid, &mut out)
            .map_err(|why| p.interrupted(why, "am_take", loc))?;
        Ok(out)
    }

    /// Transport test hook, not part of the API: a mark of what arrived so
    /// far (see [`am_transport_wait`](Raw::am_transport_wait)).
    #[doc(hidden)]
    pub fn am_transport_mark(&self) -> u64 {
        let p = self.bsp.process();
        p.world.am_mark(p.pid)
    }

    /// Transport test hook, not part of the API: waits until something
    /// may have arrived since `mark`.
    ///
    /// # Errors
    ///
    /// The run stopped, or its deadline passed, while waiting.
    #[doc(hidden)]
    #[track_caller]
    pub fn am_transport_wait(&self, mark: u64) -> Res {
        let loc = self.loc();
        let p = self.bsp.process();
        p.world
            .am_wait(p.pid, mark)
            .map_err(|why| p.interrupted(why, "am_wait", loc))
    }

    /// Transport test hook, not part of the API: a barrier of every
    /// process (outside any sync: every process must make the same calls)
    /// that hands `poll` what arrives while it waits, and whatever arrived
    /// before it is left to the caller. `poll` may post.
    ///
    /// # Safety
    ///
    /// Every process must make this call where the others make it: a
    /// process in a sync would take this barrier for its own barrier A,
    /// and read this process's memory while it goes on computing.
    ///
    /// # Errors
    ///
    /// The run stopped, a process ended, or the deadline passed.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn am_transport_barrier(&self, poll: &mut dyn FnMut(&[u8])) -> Res {
        let loc = self.loc();
        // The handle is not borrowed while waiting: `poll` may post.
        let (world, me, mut episode) = {
            let p = self.bsp.process();
            (p.world.clone(), p.pid, p.episode)
        };
        let mut buf = Vec::new();
        let mut failed = None;
        let done = world.barrier_polling(&mut episode, 0, me, &mut || {
            buf.clear();
            match world.am_take(me, &mut buf) {
                Ok(()) => poll(&buf),
                Err(why) => failed = Some(why),
            }
            false
        });
        let mut p = self.bsp.process();
        p.episode = episode;
        done.and(failed.map_or(Ok(()), Err))
            .map(|_| ())
            .map_err(|why| p.interrupted(why, "am_barrier", loc))
    }

    // ----- LAPI (`lapi.h`): active messages from C --------------------------------

    /// `LAPI_Init`: enters active-message mode with the C side (handler
    /// table, counter registry): collective, a sync named `LAPI_Init` in
    /// errors.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`](crate::ErrorKind::AmMismatch) if this
    /// process is in active-message mode already, or some processes call it
    /// while others make another sync; as for [`Bsp::sync`].
    pub fn lapi_init(bsp: &mut Bsp, loc: Option<SourceLocation>) -> Res {
        const CALL: &str = "LAPI_Init";
        {
            let mut p = bsp.process();
            p.check_running(CALL, loc)?;
            if p.am.is_some() || p.am_switch.is_some() {
                return Err(p.fail(
                    crate::ErrorKind::AmMismatch {
                        detail: "LAPI_Init called again without LAPI_Term".into(),
                    },
                    CALL,
                    loc,
                ));
            }
            let ctx = crate::am::Context::new_c(&mut p);
            p.am_switch = Some(Some(Box::new(ctx)));
        }
        Self::lapi_sync(bsp, loc, CALL)
    }

    /// `LAPI_Term`: leaves active-message mode once every message this
    /// process sent has been handled: collective, a sync.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`](crate::ErrorKind::AmMismatch) outside C
    /// LAPI mode, or if some processes call it while others make another
    /// sync; as for [`Bsp::sync`].
    pub fn lapi_term(bsp: &mut Bsp, loc: Option<SourceLocation>) -> Res {
        const CALL: &str = "LAPI_Term";
        {
            let mut p = bsp.process();
            p.check_running(CALL, loc)?;
            if !p.lapi_active() || p.am_switch.is_some() {
                return Err(p.fail(
                    crate::ErrorKind::AmMismatch {
                        detail: "LAPI_Term called outside LAPI mode".into(),
                    },
                    CALL,
                    loc,
                ));
            }
            p.am_switch = Some(None);
        }
        Self::lapi_sync(bsp, loc, CALL)
    }

    /// A sync whose errors name `call` (`LAPI_Gfence` is `bsp_sync`).
    ///
    /// # Errors
    ///
    /// As for [`Bsp::sync`].
    pub fn lapi_sync(bsp: &mut Bsp, loc: Option<SourceLocation>, call: &'static str) -> Res {
        bsp.process().sync_name = Some(call);
        let r = bsp.sync_at(loc);
        bsp.process().sync_name = None;
        r
    }

    /// Whether the calling process is in C LAPI mode (between `LAPI_Init`
    /// and `LAPI_Term`): otherwise its handle is not valid.
    pub fn lapi_active(&self) -> bool {
        self.bsp.process().lapi_active()
    }

    /// `LAPI_Addr_set`: makes `addr` this process's header handler number
    /// `index` (`1..LAPI_MAX_INDEX`), and a handler address that messages
    /// may name.
    ///
    /// # Safety
    ///
    /// Until `LAPI_Term`, `addr` (if not 0) must be a function that every
    /// message naming it (by index or address) may call: as a
    /// `hdr_hndlr_t` for `LAPI_Amsend`, a `vhdr_hndlr_t` for
    /// `LAPI_Amsendv`, following `lapi.h`'s contract for handlers (the
    /// buffers and vectors it returns are written).
    ///
    /// # Errors
    ///
    /// [`LapiCode::AddrIndex`] for an index out of range,
    /// [`LapiCode::HndlInvalid`] outside LAPI mode.
    pub unsafe fn lapi_addr_set(&self, addr: usize, index: usize) -> Result<(), LapiCode> {
        let p = self.bsp.process();
        let c =
            p.am.as_ref()
                .and_then(|c| c.c_side())
                .ok_or(LapiCode::HndlInvalid)?;
        let r = c.borrow_mut().addr_set(addr, index);
        r
    }

    /// `LAPI_Addr_get`: handler number `index` (0 if none was set).
    ///
    /// # Errors
    ///
    /// As for [`lapi_addr_set`](Raw::lapi_addr_set).
    pub fn lapi_addr_get(&self, index: usize) -> Result<usize, LapiCode> {
        let p = self.bsp.process();
        let c =
            p.am.as_ref()
                .and_then(|c| c.c_side())
                .ok_or(LapiCode::HndlInvalid)?;
        let r = c.borrow().addr_get(index);
        r
    }

    /// `LAPI_Address_init`: publishes `addr` as a handler address of this
    /// process and returns every process's (collective, a sync named
    /// `LAPI_Address_init`).
    ///
    /// # Safety
    ///
    /// As for [`lapi_addr_set`](Raw::lapi_addr_set), for `addr`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`](crate::ErrorKind::AmMismatch) outside LAPI
    /// mode, or if some processes call it while others make another sync;
    /// as for [`Bsp::sync`].
    pub unsafe fn lapi_address_init(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        addr: usize,
    ) -> Res<Vec<usize>> {
        const CALL: &str = "LAPI_Address_init";
        {
            let mut p = bsp.process();
            p.check_running(CALL, loc)?;
            let p = &mut *p;
            let Some(mut ctx) = p.am.take() else {
                return Err(not_lapi(p, CALL, loc));
            };
            let r = ctx.address_init(&p.world, addr);
            let c = ctx.c_side().is_some();
            p.am = Some(ctx);
            if !c {
                return Err(not_lapi(p, CALL, loc));
            }
            r.map_err(|why| p.interrupted(why, CALL, loc))?;
        }
        Self::lapi_sync(bsp, loc, CALL)?;
        let p = bsp.process();
        let got =
            p.am.as_ref()
                .and_then(|c| c.c_side())
                .map(|c| c.borrow_mut().take_addrs())
                .unwrap_or_default();
        match got.iter().position(Option::is_none) {
            None if got.len() == p.nprocs => Ok(got.into_iter().flatten().collect()),
            q => Err(p.fail(
                crate::ErrorKind::AmMismatch {
                    detail: format!(
                        "process {} made another sync than LAPI_Address_init (it is collective)",
                        q.unwrap_or(0)
                    ),
                },
                CALL,
                loc,
            )),
        }
    }

    /// `LAPI_Setcntr`: stores `val` in the counter at `cntr` and makes it
    /// a counter of this process, that messages may name as their target
    /// counter.
    ///
    /// # Safety
    ///
    /// `cntr` must be a live, aligned `int` (the first field of a
    /// `lapi_cntr_t`) that stays allocated until `LAPI_Term`, and is
    /// accessed meanwhile only through these calls (the library adds to it
    /// atomically in this process's progress calls).
    ///
    /// # Errors
    ///
    /// [`LapiCode::HndlInvalid`] outside LAPI mode.
    pub unsafe fn lapi_setcntr(&self, cntr: *mut c_int, val: c_int) -> Result<(), LapiCode> {
        let p = self.bsp.process();
        let c =
            p.am.as_ref()
                .and_then(|c| c.c_side())
                .ok_or(LapiCode::HndlInvalid)?;
        c.borrow_mut().add_counter(cntr.expose_provenance());
        // SAFETY: the caller's contract.
        unsafe { lapi::counter(cntr) }.store(val, Ordering::Release);
        Ok(())
    }

    /// `LAPI_Getcntr`: handles what arrived (a progress point named `call`
    /// in errors), then reads the counter at `cntr`.
    ///
    /// # Safety
    ///
    /// `cntr` must be a live, aligned `int` accessed only through these
    /// calls while they run.
    ///
    /// # Errors
    ///
    /// Errors found handling messages (they stop the run).
    pub unsafe fn lapi_getcntr(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        call: &'static str,
        cntr: *mut c_int,
    ) -> Res<c_int> {
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        p.am_dispatch(call, loc)?;
        // SAFETY: the caller's contract.
        Ok(unsafe { lapi::counter(cntr) }.load(Ordering::Acquire))
    }

    /// `LAPI_Waitcntr`: handles what arrives until the counter at `cntr`
    /// reaches `val`, then subtracts `val` and returns the value left.
    ///
    /// # Safety
    ///
    /// As for [`lapi_getcntr`](Raw::lapi_getcntr).
    ///
    /// # Errors
    ///
    /// Errors found handling messages; the run stopped, or its deadline
    /// passed, while waiting.
    pub unsafe fn lapi_waitcntr(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        call: &'static str,
        cntr: *mut c_int,
        val: c_int,
    ) -> Res<c_int> {
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        // SAFETY: the caller's contract.
        let c = unsafe { lapi::counter(cntr) };
        let mut started = None;
        loop {
            let mark = p.world.am_mark(p.pid);
            p.am_dispatch(call, loc)?;
            let v = c.load(Ordering::Acquire);
            if v >= val {
                return Ok(c.fetch_sub(val, Ordering::AcqRel) - val);
            }
            p.am_pause(mark, &mut started, call, loc)?;
        }
    }

    /// `LAPI_Probe`: handles what arrived, without waiting.
    ///
    /// # Errors
    ///
    /// Errors found handling messages.
    pub fn lapi_probe(bsp: &mut Bsp, loc: Option<SourceLocation>, call: &'static str) -> Res {
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        p.am_dispatch(call, loc)
    }

    /// `LAPI_Fence`: handles what arrives until every message this process
    /// sent has been handled by its target.
    ///
    /// # Errors
    ///
    /// As for [`lapi_waitcntr`](Raw::lapi_waitcntr).
    pub fn lapi_fence(bsp: &mut Bsp, loc: Option<SourceLocation>, call: &'static str) -> Res {
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        p.am_fence(call, loc)
    }

    /// `LAPI_Amsend` and `LAPI_Amsendv`: checks the arguments in the
    /// design's order and sends; the data and user header are copied now
    /// (so the origin counter moves before this returns). A refused call
    /// returns its code (`Ok(Err(code))`): nothing is sent or counted.
    ///
    /// # Safety
    ///
    /// Non-null pointers of `send` must be valid: the user header for
    /// `uhdr_len` bytes, the data (every block of the vector, whose `info`
    /// and `len` arrays hold `num_vecs` entries, `info` 3 for STRIDED)
    /// readable during the call; `org_cntr` as for
    /// [`lapi_setcntr`](Raw::lapi_setcntr) during the call, and
    /// `cmpl_cntr` until the target has handled the message (the next
    /// `LAPI_Fence`, `LAPI_Waitcntr` on it, or sync).
    ///
    /// # Errors
    ///
    /// The run stopped.
    pub unsafe fn lapi_send(
        &self,
        call: &'static str,
        send: &LapiSend,
    ) -> Res<Result<(), LapiCode>> {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running(call, loc)?;
        let p = &mut *p;
        let Some(mut ctx) = p.am.take() else {
            return Ok(Err(LapiCode::HndlInvalid));
        };
        // SAFETY: the caller's contract.
        let r = match unsafe { ctx.build_lapi(send) } {
            Ok(out) => ctx
                .send(&p.world, out)
                .map(Ok)
                .map_err(|why| p.interrupted(why, call, loc)),
            Err(code) => Ok(Err(code)),
        };
        p.am = Some(ctx);
        r
    }
}

/// The error of a LAPI call outside LAPI mode that cannot return a code.
fn not_lapi(p: &crate::process::Process, call: &'static str, loc: Option<SourceLocation>) -> Error {
    p.fail(
        crate::ErrorKind::AmMismatch {
            detail: "not in LAPI mode (LAPI_Init first)".into(),
        },
        call,
        loc,
    )
}
