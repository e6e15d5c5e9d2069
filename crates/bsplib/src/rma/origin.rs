//! The origin's side of the superstep's accumulate: [`Bsp::accumulate`]
//! and its pointer form, which check the call (one operator and type per
//! target area and superstep) and write the record into the put section.

use crate::bsp::area::Area;
use crate::bsp::{pid_arg, Bsp};
use crate::drma::BULK_FROM;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::mailbox::DATA;
use crate::mem::PUT_BULK;
use crate::process::{Loc, Process};

use super::{desc, describe, ElemType, Element, Op, RmaState, ACCUMULATE};

// ----- the safe API ----------------------------------------------------------

impl Bsp {
    /// [`accumulate`](Bsp::accumulate) at `loc` (the one-sided epochs'
    /// guards).
    pub(crate) fn accumulate_at<T: Element>(
        &self,
        pid: usize,
        dst: &Area<T>,
        offset: usize,
        src: &[T],
        op: Op,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        const CALL: &str = "bsp_accumulate";
        let mut p = self.process_of::<T>();
        self.own(&p, dst, CALL, loc)?;
        let size = std::mem::size_of::<T>();
        let offset = offset
            .checked_mul(size)
            .and_then(|b| i64::try_from(b).ok())
            .ok_or_else(|| p.fail(ErrorKind::Overflow { what: "offset" }, CALL, loc))?;
        let count = i64::try_from(src.len())
            .map_err(|_| p.fail(ErrorKind::Overflow { what: "count" }, CALL, loc))?;
        // SAFETY: `src` is a live slice of `count` elements of `T::TYPE`;
        // `accumulate` copies it before returning.
        unsafe {
            p.accumulate(
                pid_arg(pid),
                src.as_ptr().cast(),
                dst.addr(),
                offset,
                count,
                T::TYPE,
                op,
                CALL,
                loc,
            )
        }
    }
}

impl Bsp {
    /// Accumulate (MPI's `MPI_Accumulate`, deterministic): combines `src`
    /// element by element into the area registered on process `pid` in
    /// the slot of `dst`, from element `offset`: `dst[offset + i] =
    /// dst[offset + i] op src[i]`. `src` is copied now; the combination
    /// happens at the next sync, **after the superstep's gets have read
    /// and its puts have written**, in a fixed order: origin by origin in
    /// increasing pid order, each origin's accumulates in issue order. So
    /// floating-point results are the same on every engine and every run.
    /// Each element's combination is atomic (only the owner writes its
    /// memory during the sync). An accumulate to oneself also lands at
    /// the sync. Design: `ONE_SIDED.md` in the source tree.
    ///
    /// Every accumulate into one area in one superstep, from any process,
    /// must use the same operator and element type.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AccumulateOperator`] if `op` is not defined on `T`
    /// (see [`Op`]); [`ErrorKind::AccumulateMismatch`] if this process
    /// already accumulated into that area of `pid` in this superstep with
    /// another operator or type (from two processes, the owner reports it
    /// at the sync); [`ErrorKind::ForeignArea`];
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::NotRegistered`] if
    /// `dst` has no live slot here; [`ErrorKind::RemoteNull`] if `pid`
    /// registered `NULL` in it; [`ErrorKind::OutOfBounds`] if the
    /// elements do not fit the extent registered on `pid`. Any error stops
    /// the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes (and a 32-byte header) towards this
    /// process's outgoing and `pid`'s incoming h-relation, and `src.len()`
    /// operations of `pid`'s work in the sync.
    ///
    /// # Examples
    ///
    /// The MPI-2 example `B(map(i)) += A(i)`: each process adds its
    /// elements into the global array `B`, distributed in blocks of `m`.
    ///
    /// ```
    /// use bsplib::Op;
    /// let m = 4;
    /// let b = bsplib::run(2, move |bsp| {
    ///     let (p, s) = (bsp.nprocs(), bsp.pid());
    ///     let b = bsplib::Area::<f64>::new(bsp, m);
    ///     bsp.push_reg(&b)?;
    ///     bsp.sync()?;
    ///     for i in 0..m {
    ///         let a = (s * m + i) as f64;
    ///         let j = (s * m + i) * 3 % (p * m); // map(i)
    ///         bsp.accumulate(j / m, &b, j % m, &[a], Op::Sum)?;
    ///     }
    ///     bsp.sync()?;
    ///     Ok(b.as_slice(bsp).to_vec())
    /// })?;
    /// assert_eq!(b.concat(), [0.0, 3.0, 6.0, 1.0, 4.0, 7.0, 2.0, 5.0]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn accumulate<T: Element>(
        &self,
        pid: usize,
        dst: &Area<T>,
        offset: usize,
        src: &[T],
        op: Op,
    ) -> Result<(), Error> {
        self.accumulate_at(pid, dst, offset, src, op, Some(SourceLocation::caller()))
    }
}

// ----- the core: the origin's checks and the record ------------------------

impl Process {
    /// `bsp_accumulate`: `count` elements of type `ty` read from `src`
    /// now, combined with `op` at the sync into byte `offset` of the area
    /// registered on `pid` in the slot of `dst`. One record
    /// `[slot | ACCUMULATE][offset][len][type | op << 8 | line << 32]
    /// [payload]` in the put section, checked again by the owner.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `count * ty.size()` bytes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn accumulate(
        &mut self,
        pid: i64,
        src: *const u8,
        dst: usize,
        offset: i64,
        count: i64,
        ty: ElemType,
        op: Op,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.note_transfer(call, loc)?;
        let pid = self.check_pid(pid, call, loc)?;
        let offset = self.check_nonneg(offset, "offset", call, loc)?;
        let count = self.check_nonneg(count, "count", call, loc)?;
        if !op.is_defined_on(ty) {
            return Err(self.fail(
                ErrorKind::AccumulateOperator {
                    op: op.name(),
                    ty: ty.name(),
                },
                call,
                loc,
            ));
        }
        let nbytes = count
            .checked_mul(ty.size())
            .ok_or_else(|| self.fail(ErrorKind::Overflow { what: "count" }, call, loc))?;
        if nbytes == 0 {
            return Ok(());
        }
        self.check_pointer(src, nbytes, "src", call, loc)?;
        let slot = self.resolve(pid, dst, offset, nbytes, call, loc)?;
        if self.watch & crate::process::extension::ROUTE != 0
            && self.epoch_route(pid, slot, call, loc)?
        {
            // SAFETY: the caller vouches for `nbytes` bytes at `src`.
            return unsafe {
                self.epoch_accumulate(pid, slot, offset, src, nbytes, ty, op, call, loc)
            };
        }
        let d = desc(ty, op);
        self.note_issued(pid, slot, d, call, loc)?;
        if self.checking() {
            // For fence hints' NO_PUT (not compared for overlaps).
            let note = slot | crate::check::ACCUMULATE_NOTE;
            let whole = crate::mem::Shape::contiguous(nbytes);
            self.hook_note_put(pid, note, offset, whole, call, loc);
        }
        let line = loc.map_or(0, |l| l.line()) as usize;
        if nbytes >= BULK_FROM {
            // `processes`: the payload goes into the top of our channel
            // now, where the owner reads it in place (one copy fewer).
            // SAFETY: the caller vouches for `nbytes` bytes at `src`.
            if let Some(at) = unsafe { self.stage_bulk(src, nbytes) } {
                self.dest(pid).puts.push_words([
                    (slot | ACCUMULATE) as usize,
                    offset,
                    nbytes | PUT_BULK,
                    d as usize | line << 32,
                    at,
                ]);
                self.flags |= DATA;
                return Ok(());
            }
        }
        let header = [
            (slot | ACCUMULATE) as usize,
            offset,
            nbytes,
            d as usize | line << 32,
        ];
        let room = self.dest(pid).puts.try_reserve_record(nbytes + 8);
        room.map_err(|bytes| self.fail(ErrorKind::OutOfMemory { bytes }, call, loc))?;
        // SAFETY: the caller vouches for `nbytes` bytes at `src`.
        unsafe { self.dest(pid).puts.push_record4(header, src, nbytes) };
        self.flags |= DATA;
        Ok(())
    }

    /// The origin's check: this process accumulates into one (target,
    /// slot) with one operator and type per superstep.
    fn note_issued(
        &mut self,
        pid: usize,
        slot: u64,
        d: u16,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let superstep = self.superstep;
        self.with_ext(RmaState::default, |state, p| {
            state
                .note_issued(superstep, pid, slot, d, call, loc)
                .map_err(|kind| p.fail(kind, call, loc))
        })
    }
}

impl RmaState {
    /// [`Process::note_issued`] on the origin's state: `Err` is the
    /// mismatch to report.
    fn note_issued(
        &mut self,
        superstep: u64,
        pid: usize,
        slot: u64,
        d: u16,
        _call: &'static str,
        loc: Loc,
    ) -> Result<(), ErrorKind> {
        let state = self;
        if state.superstep != superstep {
            state.superstep = superstep;
            state.issued.clear();
            state.last = None;
        }
        if state.last == Some((pid, slot, d)) {
            return Ok(());
        }
        let (prev, first) = *state.issued.entry((pid, slot)).or_insert((d, loc));
        if prev == d {
            state.last = Some((pid, slot, d));
            return Ok(());
        }
        let detail = format!(
            "this call accumulates with {} into registration slot {slot} of process {pid}, \
             into which this process accumulated with {} earlier in this superstep{}",
            describe(d),
            describe(prev),
            first.map_or(String::new(), |l| format!(" (at {l})")),
        );
        Err(ErrorKind::AccumulateMismatch { detail })
    }
}
