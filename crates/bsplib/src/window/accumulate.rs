//! Accumulate into a window: the read-combine-write under an exclusive
//! lock ([`WinLock::accumulate`]), and an epoch's accumulates, sent as
//! records and combined at the target's wait ([`WinEpoch::accumulate`]).

use bytemuck::Pod;

use super::{Mem, WinEpoch, WinLock, Window};
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::{Loc, Process};
use crate::rma::{Element, Op};

impl<T: Pod> Window<T> {
    /// Combines `src` (elements of `ty`) with `op` into byte `off` of
    /// `pid`'s memory: read, combine with the library's kernels, write.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AccumulateOperator`] if `op` is not defined on `ty`;
    /// [`ErrorKind::Transport`].
    ///
    /// # Safety
    ///
    /// In bounds; this process holds `pid`'s lock exclusively (so the
    /// read-combine-write is atomic); `src` holds whole elements of `ty`.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn combine_in(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        src: &[u8],
        ty: crate::rma::ElemType,
        op: Op,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if !op.is_defined_on(ty) {
            return Err(p.fail(
                ErrorKind::AccumulateOperator {
                    op: op.name(),
                    ty: ty.name(),
                },
                call,
                loc,
            ));
        }
        let n = src.len() / ty.size();
        match &self.mem {
            // SAFETY: in bounds; the exclusive lock is held; `src` holds
            // `n` elements of `ty`.
            Mem::Shared { .. } => unsafe {
                crate::rma::combine(ty, op, self.data(pid).add(off), src.as_ptr(), n);
                Ok(())
            },
            #[cfg(feature = "mpi")]
            Mem::Mpi(_) => {
                let mut cur = vec![0u8; src.len()];
                // SAFETY: in bounds; the exclusive lock of `pid` is held,
                // so nothing changes the range between the get and the
                // put; `cur` and `src` hold `n` elements of `ty`.
                unsafe {
                    self.copy_out(p, pid, off, &mut cur, call, loc)?;
                    crate::rma::combine(ty, op, cur.as_mut_ptr(), src.as_ptr(), n);
                    self.copy_in(p, pid, off, &cur, call, loc)
                }
            }
        }
    }

    /// Combines the accumulates of the exposure epoch that just ended
    /// into this process's memory, origins in pid order and each origin's
    /// in issue order (bit-identical results on every engine and run),
    /// under its own exclusive lock (no lock holder reads meanwhile).
    pub(super) fn combine_arrived(
        &self,
        p: &mut Process,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let accs = p.win_take(self.id).map_err(|d| match d {
            crate::am::Dispatch::Target(kind) => p.fail(kind, call, loc),
            crate::am::Dispatch::Interrupted(why) => p.interrupted(why, call, loc),
        })?;
        if accs.is_empty() {
            return Ok(());
        }
        let me = self.owner.1;
        let extent = self.lens[me] * std::mem::size_of::<T>();
        if let Some(a) = accs.iter().find(|a| {
            a.off
                .checked_add(a.data.len())
                .is_none_or(|end| end > extent)
        }) {
            return Err(p.fail(
                ErrorKind::OutOfBounds {
                    remote: me,
                    offset: a.off,
                    nbytes: a.data.len(),
                    extent,
                    elem: std::mem::size_of::<T>(),
                },
                call,
                loc,
            ));
        }
        self.acquire(p, me, true, call, loc)?;
        let mut done = Ok(());
        for a in &accs {
            // SAFETY: in bounds (checked above); this process holds its
            // own memory's lock exclusively; `a.data` holds whole
            // elements of `a.ty` (checked when it arrived).
            done = unsafe { self.combine_in(p, me, a.off, &a.data, a.ty, a.op, call, loc) };
            if done.is_err() {
                break;
            }
        }
        self.release(p, me, true);
        done
    }
}

impl<T: Element> WinLock<'_, T> {
    /// Combines `src` into the locked memory from element `offset` with
    /// `op` (`dst[offset + i] = dst[offset + i] op src[i]`), with the
    /// library's own kernels (the same results as
    /// [`Bsp::accumulate`](crate::Bsp::accumulate)); complete when this returns. Needs an
    /// exclusive lock, which makes it atomic.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AccumulateOperator`] if `op` is not defined on `T`;
    /// as for [`put`](WinLock::put).
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes and `src.len()` operations (on `mpi`, a
    /// get and a put).
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{Op, LockKind, Window};
    /// let r = bsplib::run(4, |bsp| {
    ///     let w = Window::<f64>::new(bsp, 2)?;
    ///     let x = bsp.pid() as f64;
    ///     w.lock(bsp, 0, LockKind::Exclusive)?.accumulate(0, &[x, 1.0], Op::Sum)?;
    ///     bsp.sync()?;
    ///     let v = w.local(bsp)?.to_vec();
    ///     w.free(bsp)?;
    ///     Ok(v)
    /// })?;
    /// assert_eq!(r[0], [6.0, 4.0]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn accumulate(&mut self, offset: usize, src: &[T], op: Op) -> Result<(), Error> {
        const CALL: &str = "WinLock::accumulate";
        let loc = Some(SourceLocation::caller());
        let p = self.bsp.process();
        let (off, _) = self.check(&p, offset, src.len(), true, CALL, loc)?;
        // SAFETY: in bounds (checked); this guard holds `pid`'s lock
        // exclusively (`check` refused a write under a shared one);
        // `src` holds `src.len()` elements of `T::TYPE`.
        unsafe {
            self.win.combine_in(
                &p,
                self.pid,
                off,
                bytemuck::cast_slice(src),
                T::TYPE,
                op,
                CALL,
                loc,
            )
        }
    }
}

impl<T: Element> WinEpoch<'_, T> {
    /// Combines `src` into target `pid`'s memory from element `offset`
    /// with `op` (`dst[offset + i] = dst[offset + i] op src[i]`), at
    /// `pid`'s `wait`: the accumulates of all origins of its exposure
    /// epoch are combined then, origins in pid order and each origin's in
    /// issue order, so floating-point results are bit-identical on every
    /// engine and run (as an [`Area`](crate::Area)'s epoch does). One
    /// operator and type per target and epoch, across origins. `src` may
    /// be reused at once.
    ///
    /// Needs one-sided mode ([`Rma::init`](crate::rma::Rma::init)): the contributions travel
    /// as records the target combines (a window's puts and gets do not
    /// need it).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] outside one-sided mode, or as for
    /// [`put`](WinEpoch::put); [`ErrorKind::AccumulateOperator`] if `op`
    /// is not defined on `T`; [`ErrorKind::AccumulateMismatch`] (at the
    /// target's `wait`) when two origins, or one, use two operators or
    /// types in one epoch. Any error stops the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes to `pid` and `src.len()` operations there
    /// at its `wait`.
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{Op, Window};
    /// let r = bsplib::run(3, |bsp| {
    ///     bsp.rma().init()?;
    ///     let mut w = Window::<f64>::new(bsp, 1)?;
    ///     let me = bsp.pid();
    ///     let all: Vec<usize> = (0..bsp.nprocs()).collect();
    ///     let mut e = w.epoch(bsp, if me == 0 { &all } else { &[] }, &[0])?;
    ///     e.accumulate(0, 0, &[0.1 * (me + 1) as f64], Op::Sum)?;
    ///     e.wait()?;
    ///     let v = w.local(bsp)?[0];
    ///     w.free(bsp)?;
    ///     bsp.rma().term()?;
    ///     Ok(v)
    /// })?;
    /// assert_eq!(r[0].to_bits(), ((0.0 + 0.1) + 0.2 + 0.30000000000000004f64).to_bits());
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn accumulate(
        &mut self,
        pid: usize,
        offset: usize,
        src: &[T],
        op: Op,
    ) -> Result<(), Error> {
        const CALL: &str = "WinEpoch::accumulate";
        let loc = Some(SourceLocation::caller());
        let (off, _) = self.check(pid, offset, src.len(), CALL, loc)?;
        self.bsp.process().win_accumulate(
            self.win.id,
            pid,
            off,
            bytemuck::cast_slice(src),
            T::TYPE,
            op,
            CALL,
            loc,
        )
    }
}
