//! The safe API: the guards [`Epoch`] (a post/start/complete/wait round)
//! and [`Lock`] (a lock of an area on one process), whose transfers are
//! methods, and the calls that open them.

use super::{Awaited, LockKind};
use crate::bsp::area::{Area, AreaRange};
use crate::bsp::{pid_arg, Bsp};
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::{Loc, Process};
use crate::rma::Rma;
use crate::rma::{Element, Op};
use bytemuck::Pod;

// ----- the Rust API ----------------------------------------------------------------

/// An open post/start/complete/wait round on one area ([`Rma::epoch`](crate::rma::Rma::epoch)):
/// an exposure epoch to some origins and an access epoch to some targets.
/// Its transfers are methods, so none can be issued once it is closed;
/// it holds the handle, so no sync can happen while it is open. Dropping it
/// closes it ([`wait`](Epoch::wait)); an error then stops the run and is
/// reported by the next call.
pub struct Epoch<'a, T: Pod> {
    bsp: &'a mut Bsp,
    area: &'a Area<T>,
    /// Whether the access epoch is still open.
    access: bool,
    /// Whether the exposure epoch is still open.
    exposure: bool,
}

/// A lock of one area on one process ([`Rma::lock`](crate::rma::Rma::lock)), released by
/// [`unlock`](Lock::unlock) or when dropped.
pub struct Lock<'a, T: Pod> {
    bsp: &'a mut Bsp,
    area: &'a Area<T>,
    pid: usize,
    held: bool,
}

/// `f` of the pids as the pointer API's `i64`s (on the stack for small
/// groups).
fn with_pids<R>(pids: &[usize], f: impl FnOnce(&[i64]) -> R) -> R {
    let mut small = [0i64; 16];
    if pids.len() <= small.len() {
        for (s, &q) in small.iter_mut().zip(pids) {
            *s = pid_arg(q);
        }
        return f(&small[..pids.len()]);
    }
    let v: Vec<i64> = pids.iter().map(|&q| pid_arg(q)).collect();
    f(&v)
}

fn typed<T>(offset: usize, len: usize) -> Option<(i64, i64)> {
    let size = std::mem::size_of::<T>();
    let o = i64::try_from(offset.checked_mul(size)?).ok()?;
    let n = i64::try_from(len.checked_mul(size)?).ok()?;
    Some((o, n))
}

fn overflow(p: &Process, call: &'static str, loc: Loc) -> Error {
    p.fail(ErrorKind::Overflow { what: "offset" }, call, loc)
}

/// A get of a guard into `dst` (kept alive until the reply lands): the
/// core routes it into the open epoch.
fn get_in<T: Pod>(
    bsp: &Bsp,
    pid: usize,
    area: &Area<T>,
    offset: usize,
    dst: AreaRange<'_, T>,
    loc: Loc,
) -> Result<(), Error> {
    // SAFETY: `get_into` checks `dst` and keeps its storage alive until
    // the reply lands, in a progress point (a `&mut Bsp` call), when no
    // view of it is alive.
    unsafe { bsp.get_into(pid, area, offset, dst, false, loc) }
}

impl<'a> Rma<'a> {
    /// Opens a post/start/complete/wait round on `area`: exposes this
    /// process's `area` to `origins` (MPI's `MPI_Win_post`), then, once
    /// every process of `targets` has posted to this one, opens an access
    /// epoch to them (`MPI_Win_start`). Either group may be empty. Only
    /// the members of the groups synchronise: no barrier of all.
    ///
    /// Transfers of the access epoch ([`Epoch::put`], [`Epoch::get`],
    /// [`Epoch::accumulate`]) are complete at each target when its
    /// [`wait`](Epoch::wait) returns; puts land as they arrive, and
    /// accumulates are combined at `wait`, origins in pid order and each
    /// origin's in issue order, so floating-point results are the same on
    /// every engine and run.
    ///
    /// # Examples
    ///
    /// See [the module](crate::epoch).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] outside one-sided mode
    /// ([`rma_init`](Rma::init)); [`ErrorKind::NotRegistered`],
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::EpochUnmatched`] if a
    /// target enters its sync or ends without posting to this process.
    ///
    /// # BSP cost
    ///
    /// A partial superstep: `w + h·g + c·(k + m)` for `k` origins and `m`
    /// targets, `c` a message's latency, instead of `l(p)`; no superstep
    /// is counted.
    #[track_caller]
    pub fn epoch<T: Pod>(
        self,
        area: &'a Area<T>,
        origins: &[usize],
        targets: &[usize],
    ) -> Result<Epoch<'a, T>, Error> {
        let loc = Some(SourceLocation::caller());
        {
            let mut p = self.bsp.process();
            self.bsp.own(&p, area, "bsp_win_post", loc)?;
            with_pids(origins, |g| p.rma_post(area.addr(), g, "bsp_win_post", loc))?;
            with_pids(targets, |g| {
                p.rma_start(area.addr(), g, "bsp_win_start", loc)
            })?;
        }
        Ok(Epoch {
            bsp: self.bsp,
            area,
            access: true,
            exposure: true,
        })
    }

    /// Locks `area` on process `pid` (MPI's `MPI_Win_lock`), exclusively
    /// or shared with other shared holders: takes the lock word of the
    /// area's control line (the same word and code as a
    /// [`Window`](crate::Window)'s lock), with no call of `pid`, waiting
    /// (and serving what arrives for this process) while another process
    /// holds it. The epoch's transfers travel as records that `pid`
    /// applies at its next progress point (any `&mut Bsp` call: a sync's
    /// barrier, an epoch call, [`am().poll`](crate::am::Am::poll)), as MPI
    /// implementations without a progress thread do;
    /// [`unlock`](Lock::unlock) returns once `pid` applied them all. A
    /// process holds one lock at a time (of an area or a window).
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::LockKind;
    /// let r = bsplib::run(3, |bsp| {
    ///     let x = bsplib::Area::<u64>::new(bsp, 1);
    ///     bsp.push_reg(&x)?;
    ///     bsp.rma().init()?;
    ///     // Every process adds its pid + 1 into process 0's counter.
    ///     let mut l = bsp.rma().lock(0, &x, LockKind::Exclusive)?;
    ///     let v = l.read(0, 1)?[0];
    ///     l.put(0, &[v + l.bsp().pid() as u64 + 1])?;
    ///     l.unlock()?;
    ///     bsp.sync()?;
    ///     let total = x.as_slice(bsp)[0];
    ///     bsp.rma().term()?;
    ///     Ok(total)
    /// })?;
    /// assert_eq!(r[0], 6);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] outside one-sided mode;
    /// [`ErrorKind::NotRegistered`], [`ErrorKind::PidOutOfRange`];
    /// [`ErrorKind::EpochUnmatched`] if `pid` ended;
    /// [`ErrorKind::EpochOpen`] while this process holds another lock or
    /// a window view (of a forgotten guard, or from C);
    /// [`ErrorKind::OutOfMemory`] when the slot has no control line (more
    /// live registrations than lines: `window/control.rs`).
    ///
    /// # BSP cost
    ///
    /// With [`unlock`](Lock::unlock): one atomic on the lock word, one
    /// round trip to `pid` (`2c`) and the bytes, plus the wait for earlier
    /// holders.
    #[track_caller]
    pub fn lock<T: Pod>(
        self,
        pid: usize,
        area: &'a Area<T>,
        kind: LockKind,
    ) -> Result<Lock<'a, T>, Error> {
        let loc = Some(SourceLocation::caller());
        {
            let mut p = self.bsp.process();
            self.bsp.own(&p, area, "bsp_lock", loc)?;
            p.rma_lock(pid_arg(pid), area.addr(), kind, "bsp_lock", loc)?;
        }
        Ok(Lock {
            bsp: self.bsp,
            area,
            pid,
            held: true,
        })
    }
}

impl<'a, T: Pod> Epoch<'a, T> {
    /// The handle, for views of local areas between transfers.
    pub fn bsp(&self) -> &Bsp {
        self.bsp
    }

    /// Puts `src` into the area on `pid` (a target of the round) from
    /// element `offset`; `src` is copied now.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] if `pid` is not a target or the access epoch
    /// is complete; the checks of [`Bsp::put`].
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes towards the h-relation of the round.
    #[track_caller]
    pub fn put(&self, pid: usize, offset: usize, src: &[T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.open(loc)?;
        self.bsp.put_at(pid, self.area, offset, src, loc)
    }

    /// Gets `dst.len()` elements from element `offset` of the area on `pid`
    /// into `dst` (an area, or [part of one](Area::range)); they land by
    /// [`complete`](Epoch::complete).
    /// They read the target's area as it is when the target serves them
    /// (the target must not change it during its exposure epoch).
    ///
    /// # Errors
    ///
    /// As for [`put`](Epoch::put) and [`Bsp::get`].
    ///
    /// # BSP cost
    ///
    /// `dst.len()` elements towards the h-relation of the round.
    #[track_caller]
    pub fn get<'d>(
        &self,
        pid: usize,
        offset: usize,
        dst: impl Into<AreaRange<'d, T>>,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.open(loc)?;
        get_in(self.bsp, pid, self.area, offset, dst.into(), loc)
    }

    /// Accumulates `src` into the area on `pid` with `op` (see
    /// [`Bsp::accumulate`]), combined at the target's `wait` in the
    /// deterministic order.
    ///
    /// # Errors
    ///
    /// As for [`put`](Epoch::put) and [`Bsp::accumulate`]; one operator
    /// and type per target in an epoch ([`ErrorKind::AccumulateMismatch`]).
    ///
    /// # BSP cost
    ///
    /// As for [`put`](Epoch::put), plus the combine at the target.
    #[track_caller]
    pub fn accumulate(&self, pid: usize, offset: usize, src: &[T], op: Op) -> Result<(), Error>
    where
        T: Element,
    {
        let loc = Some(SourceLocation::caller());
        self.open(loc)?;
        self.bsp.accumulate_at(pid, self.area, offset, src, op, loc)
    }

    fn open(&self, loc: Loc) -> Result<(), Error> {
        if self.access {
            return Ok(());
        }
        let p = self.bsp.process();
        Err(p.fail(
            ErrorKind::NoEpoch {
                detail: "a transfer after complete".into(),
            },
            "bsp_put",
            loc,
        ))
    }

    /// Ends the access epoch (MPI's `MPI_Win_complete`): its gets have
    /// landed, and each target learns that this origin is done.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EpochUnmatched`] if a target ended; the run stopped.
    ///
    /// # BSP cost
    ///
    /// One message to each target; waits for the gets' replies.
    #[track_caller]
    pub fn complete(&mut self) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        if !self.access {
            return Ok(());
        }
        self.access = false;
        self.bsp
            .process()
            .rma_complete(self.area.addr(), "bsp_win_complete", loc)
    }

    /// Whether every origin has completed, without waiting (MPI's
    /// `MPI_Win_test`); when true, the round is over as after
    /// [`wait`](Epoch::wait), and the guard can only be dropped. Completes
    /// this process's access epoch first.
    ///
    /// # Errors
    ///
    /// As for [`wait`](Epoch::wait).
    #[track_caller]
    pub fn test(&mut self) -> Result<bool, Error> {
        let loc = Some(SourceLocation::caller());
        self.complete()?;
        if !self.exposure {
            return Ok(true);
        }
        let over = self
            .bsp
            .process()
            .rma_wait(self.area.addr(), false, "bsp_win_test", loc)?;
        self.exposure = !over;
        Ok(over)
    }

    /// Completes the access epoch if still open, then waits until every
    /// origin has completed (MPI's `MPI_Win_wait`): their puts are in this
    /// process's area and their accumulates combined.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EpochUnmatched`] if an origin enters its sync or ends
    /// without completing; [`ErrorKind::AccumulateMismatch`] if origins
    /// accumulated into the area with different operators or types; the
    /// run stopped.
    ///
    /// # BSP cost
    ///
    /// Waits for one message from each origin.
    #[track_caller]
    pub fn wait(mut self) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.close(loc)
    }

    fn close(&mut self, loc: Loc) -> Result<(), Error> {
        self.complete()?;
        if !self.exposure {
            return Ok(());
        }
        self.exposure = false;
        self.bsp
            .process()
            .rma_wait(self.area.addr(), true, "bsp_win_wait", loc)
            .map(|_| ())
    }
}

impl<T: Pod> Drop for Epoch<'_, T> {
    fn drop(&mut self) {
        if self.access || self.exposure {
            // An error stops the run; the next call reports it.
            let _ = self.close(None);
        }
    }
}

impl<'a, T: Pod> Lock<'a, T> {
    /// The handle, for views of local areas between transfers.
    pub fn bsp(&self) -> &Bsp {
        self.bsp
    }

    /// Puts `src` into the locked area from element `offset` (copied now,
    /// in place at the target by [`unlock`](Lock::unlock)).
    ///
    /// # Errors
    ///
    /// The checks of [`Bsp::put`].
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes to the target.
    #[track_caller]
    pub fn put(&self, offset: usize, src: &[T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp.put_at(self.pid, self.area, offset, src, loc)
    }

    /// Gets `dst.len()` elements from element `offset` of the locked area
    /// into `dst` (an area, or [part of one](Area::range)), landing by
    /// [`unlock`](Lock::unlock).
    ///
    /// # Errors
    ///
    /// The checks of [`Bsp::get`].
    ///
    /// # BSP cost
    ///
    /// `dst.len()` elements from the target.
    #[track_caller]
    pub fn get<'d>(&self, offset: usize, dst: impl Into<AreaRange<'d, T>>) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        get_in(self.bsp, self.pid, self.area, offset, dst.into(), loc)
    }

    /// Reads `len` elements from element `offset` of the locked area now
    /// (a get and a wait for its reply).
    ///
    /// # Errors
    ///
    /// The checks of [`Bsp::get`]; [`ErrorKind::EpochUnmatched`] if the
    /// target ended.
    ///
    /// # BSP cost
    ///
    /// A round trip to the target and `len` elements.
    #[track_caller]
    pub fn read(&mut self, offset: usize, len: usize) -> Result<Vec<T>, Error> {
        let loc = Some(SourceLocation::caller());
        const CALL: &str = "bsp_get";
        let mut out = vec![T::zeroed(); len];
        let mut p = self.bsp.process();
        let Some((o, n)) = typed::<T>(offset, len) else {
            return Err(overflow(&p, CALL, loc));
        };
        let slot = p.resolve(
            self.pid,
            self.area.addr(),
            o as usize,
            n as usize,
            CALL,
            loc,
        )?;
        // SAFETY: `out` is `n` writable bytes, alive until the reply lands
        // (we wait for it below, before returning it).
        unsafe {
            p.epoch_get(
                self.pid,
                slot,
                o as usize,
                out.as_mut_ptr().cast(),
                n as usize,
                None,
                CALL,
                loc,
            )?;
        }
        let pid = self.pid;
        p.rma_progress(
            |_| vec![pid],
            Awaited::Answer,
            CALL,
            loc,
            |ep| Ok(!ep.gets.values().any(|g| g.pid == pid && g.slot == slot)),
        )?;
        Ok(out)
    }

    /// Combines `src` into the locked area with `op` (see
    /// [`Bsp::accumulate`]): under an exclusive lock in issue order;
    /// element-wise atomic under shared locks, in the order the target
    /// serves the holders.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::accumulate`]; one operator and type per lock epoch.
    ///
    /// # BSP cost
    ///
    /// As for [`put`](Lock::put), plus the combine at the target.
    #[track_caller]
    pub fn accumulate(&self, offset: usize, src: &[T], op: Op) -> Result<(), Error>
    where
        T: Element,
    {
        let loc = Some(SourceLocation::caller());
        self.bsp
            .accumulate_at(self.pid, self.area, offset, src, op, loc)
    }

    /// Releases the lock (MPI's `MPI_Win_unlock`) once every transfer of
    /// the epoch is done at the target and its gets have landed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EpochUnmatched`] if the target ended; the run stopped.
    ///
    /// # BSP cost
    ///
    /// A round trip to the target.
    #[track_caller]
    pub fn unlock(mut self) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.release(loc)
    }

    fn release(&mut self, loc: Loc) -> Result<(), Error> {
        if !self.held {
            return Ok(());
        }
        self.held = false;
        self.bsp
            .process()
            .rma_unlock(pid_arg(self.pid), self.area.addr(), "bsp_unlock", loc)
    }
}

impl<T: Pod> Drop for Lock<'_, T> {
    fn drop(&mut self) {
        // An error stops the run; the next call reports it.
        let _ = self.release(None);
    }
}
