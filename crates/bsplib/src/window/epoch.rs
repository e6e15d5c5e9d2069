//! Active target: [`Window::epoch`] and its guard [`WinEpoch`], an exposure
//! epoch to origins and an access epoch to targets, and how such epochs
//! are opened and closed (counted in the process's holds).

use bytemuck::Pod;

use super::Window;
use crate::bsp::Bsp;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::holds::Held;
use crate::process::{Loc, Process};

impl<T: Pod> Window<T> {
    /// Opens an epoch on this window: exposes this process's memory to
    /// `origins` (MPI's `MPI_Win_post`) and accesses the memory of
    /// `targets` (`MPI_Win_start`: waits until each of them posted to
    /// this process); either group may be empty. Only the members of the
    /// groups synchronise: a ring of `p` processes exchanging with their
    /// neighbours pays for two neighbours, not a barrier of `p`.
    ///
    /// The guard's [`put`](WinEpoch::put) and [`get`](WinEpoch::get)
    /// reach the targets; [`complete`](WinEpoch::complete) ends the
    /// access (the targets' `wait` can return), [`wait`](WinEpoch::wait)
    /// completes and then waits until every origin completed (their puts
    /// are in this process's memory then), [`test`](WinEpoch::test) does
    /// so without blocking; dropping the guard completes and waits. The
    /// guard holds the window mutably (no local view while the memory is
    /// exposed) and the handle (no sync inside an epoch). Each put and
    /// get also takes the target's lock for its copy, so two origins, or
    /// an origin and a lock holder, never write one byte at once.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::ForeignArea`];
    /// [`ErrorKind::EpochUnmatched`] when a target ends or waits in its
    /// sync without posting to this process (found from the status board
    /// within about 100 ms; on `mpi` the board the run's first window
    /// made), or when this process is among the targets but not
    /// among the origins (nobody else can post to it);
    /// [`ErrorKind::Stopped`].
    ///
    /// # BSP cost
    ///
    /// No superstep: a post is one counter increment in each origin's
    /// memory (an `MPI_Fetch_and_op` on `mpi`), a start waits for one from each
    /// target, `complete` and `wait` the same the other way: `c·(k + m)`
    /// for `k` origins and `m` targets, `c` the latency of one counter,
    /// plus the bytes.
    ///
    /// # Examples
    ///
    /// A ring: each process puts its id into its right neighbour's memory,
    /// synchronising with its two neighbours only.
    ///
    /// ```
    /// let r = bsplib::run(4, |bsp| {
    ///     let (me, p) = (bsp.pid(), bsp.nprocs());
    ///     let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    ///     let mut w = bsplib::Window::<u64>::new(bsp, 1)?;
    ///     let mut e = w.epoch(bsp, &[left], &[right])?;
    ///     e.put(right, 0, &[me as u64])?;
    ///     e.wait()?; // my put is done, and my left neighbour's is here
    ///     let got = w.local(bsp)?[0];
    ///     w.free(bsp)?;
    ///     Ok(got)
    /// })?;
    /// assert_eq!(r, [3, 0, 1, 2]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn epoch<'a>(
        &'a mut self,
        bsp: &'a mut Bsp,
        origins: &[usize],
        targets: &[usize],
    ) -> Result<WinEpoch<'a, T>, Error> {
        const CALL: &str = "Window::epoch";
        let loc = Some(SourceLocation::caller());
        self.own(bsp, CALL, loc)?;
        let group = |pids: &[usize]| -> Result<Vec<usize>, Error> {
            let p = bsp.process();
            let mut g = Vec::with_capacity(pids.len());
            for &q in pids {
                g.push(p.check_pid(crate::bsp::pid_arg(q), CALL, loc)?);
            }
            g.sort_unstable();
            g.dedup();
            Ok(g)
        };
        let (origins, targets) = (group(origins)?, group(targets)?);
        let win: &'a Window<T> = self;
        {
            let mut p = bsp.process();
            p.check_running(CALL, loc)?;
            let me = p.pid;
            // Only this call could post to this process itself: a start
            // on itself without it would wait for ever.
            if targets.binary_search(&me).is_ok() && origins.binary_search(&me).is_err() {
                return Err(p.fail(
                    ErrorKind::EpochUnmatched {
                        detail: format!(
                            "process {me} starts an access epoch to itself without posting to \
                             itself in the same call (name it among the origins too)"
                        ),
                    },
                    CALL,
                    loc,
                ));
            }
            win.open_epoch(&mut p, Some(&origins), Some(&targets), CALL, loc)?;
        }
        Ok(WinEpoch {
            access: !targets.is_empty(),
            exposure: !origins.is_empty(),
            win,
            bsp,
        })
    }

    /// Posts an exposure epoch to `origins` and starts an access epoch to
    /// `targets` (sorted, distinct; `None` or empty: not that epoch), each
    /// counted in the process's holds (checked first: no lock or view
    /// held, no second epoch of one kind on this window).
    pub(super) fn open_epoch(
        &self,
        p: &mut Process,
        origins: Option<&[usize]>,
        targets: Option<&[usize]>,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let origins = origins.filter(|o| !o.is_empty());
        let targets = targets.filter(|t| !t.is_empty());
        let free = p
            .holds
            .check_epoch(self.id, origins.is_some(), targets.is_some());
        p.held_refuses(free, call, loc)?;
        if let Some(o) = origins {
            self.ep_post(p, o, call, loc)?;
            p.holds.open(
                Held::Exposure {
                    win: self.id,
                    origins: o.to_vec(),
                },
                call,
                loc,
            );
        }
        if let Some(t) = targets {
            self.ep_start(p, t, call, loc)?;
            p.holds.open(
                Held::Access {
                    win: self.id,
                    targets: t.to_vec(),
                },
                call,
                loc,
            );
        }
        Ok(())
    }

    /// Completes this window's open access epoch (the one
    /// [`open_epoch`](Window::open_epoch) counted), if any, and uncounts
    /// it.
    pub(super) fn close_access(
        &self,
        p: &mut Process,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        match p.holds.close_epoch(self.id, false) {
            Some(targets) => {
                // In one-sided mode a record first, behind the epoch's
                // accumulates (`win_done`), then the count.
                p.win_done(self.id, &targets, call, loc)?;
                self.ep_complete(p, &targets, call, loc)
            }
            None => Ok(()),
        }
    }

    /// Waits for (`block`) or looks at the completions of this window's
    /// open exposure epoch; uncounts it when they all came (true, as when
    /// none is open).
    pub(super) fn close_exposure(
        &self,
        p: &mut Process,
        block: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<bool, Error> {
        let Some(origins) = p.holds.exposure(self.id).map(<[usize]>::to_vec) else {
            return Ok(true);
        };
        if !block && !p.win_arrived(self.id, &origins, false, call, loc)? {
            return Ok(false);
        }
        if !self.ep_wait(p, &origins, block, call, loc)? {
            return Ok(false);
        }
        // Every origin counted its completion after its records: they
        // are here or on their way (one-sided mode).
        p.win_arrived(self.id, &origins, true, call, loc)?;
        self.combine_arrived(p, call, loc)?;
        p.holds.close_epoch(self.id, true);
        Ok(true)
    }

    /// An epoch's put of `src` at byte `off` of `pid`'s memory, under
    /// `pid`'s exclusive lock (so that no lock holder and no other origin
    /// touches the bytes meanwhile); complete at `pid` when this returns.
    ///
    /// # Safety
    ///
    /// In bounds; an access epoch on `pid` is open.
    pub(super) unsafe fn ep_put(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        src: &[u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.acquire(p, pid, true, call, loc)?;
        // SAFETY: in bounds (the caller's); `pid`'s lock is held
        // exclusively: nobody else reads or writes these bytes.
        let done = unsafe { self.copy_in(p, pid, off, src, call, loc) };
        self.release(p, pid, true);
        done
    }

    /// An epoch's get of `dst.len()` bytes at byte `off` of `pid`'s
    /// memory, under `pid`'s shared lock; in `dst` when this returns.
    ///
    /// # Safety
    ///
    /// In bounds; an access epoch on `pid` is open.
    pub(super) unsafe fn ep_get(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        dst: &mut [u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.acquire(p, pid, false, call, loc)?;
        // SAFETY: in bounds; `pid`'s lock is held (shared): nobody writes
        // these bytes meanwhile.
        let done = unsafe { self.copy_out(p, pid, off, dst, call, loc) };
        self.release(p, pid, false);
        done
    }
}

/// An epoch of post/start/complete/wait on a window ([`Window::epoch`]):
/// an exposure epoch to its origins and an access epoch to its targets.
/// Dropping it completes and waits.
///
/// The groups live in the process's count of what it holds, not in the
/// guard: a guard forgotten with `mem::forget` leaks nothing and stays
/// counted (its calls refuse: [`Window::epoch`]).
pub struct WinEpoch<'a, T: Pod> {
    pub(super) win: &'a Window<T>,
    pub(super) bsp: &'a mut Bsp,
    /// The access epoch is open (started, not completed).
    pub(super) access: bool,
    /// The exposure epoch is open (posted, not waited for).
    pub(super) exposure: bool,
}

impl<T: Pod> std::fmt::Debug for WinEpoch<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WinEpoch")
            .field("access", &self.access)
            .field("exposure", &self.exposure)
            .finish()
    }
}

impl<'a, T: Pod> WinEpoch<'a, T> {
    /// The handle this guard holds (for `pid()`, `nprocs()` ...).
    pub fn bsp(&self) -> &Bsp {
        self.bsp
    }

    /// Checks a transfer to `pid` of `n` elements at `offset` in the
    /// open access epoch; its byte offset and length.
    pub(super) fn check(
        &self,
        pid: usize,
        offset: usize,
        n: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(usize, usize), Error> {
        let p = self.bsp.process();
        p.check_running(call, loc)?;
        let targets = p.holds.access(self.win.id).filter(|_| self.access);
        if targets.is_none_or(|t| t.binary_search(&pid).is_err()) {
            return Err(p.fail(
                ErrorKind::NoEpoch {
                    detail: if let Some(targets) = targets {
                        format!(
                            "process {pid} is not a target of this access epoch (targets \
                             {targets:?})"
                        )
                    } else {
                        "a transfer after this epoch's complete".into()
                    },
                },
                call,
                loc,
            ));
        }
        let size = std::mem::size_of::<T>();
        let extent = self.win.lens[pid] * size;
        offset
            .checked_mul(size)
            .and_then(|o| Some((o, n.checked_mul(size)?)))
            .filter(|&(o, b)| o.checked_add(b).is_some_and(|end| end <= extent))
            .ok_or_else(|| {
                p.fail(
                    ErrorKind::OutOfBounds {
                        remote: pid,
                        offset: offset.saturating_mul(size),
                        nbytes: n.saturating_mul(size),
                        extent,
                        elem: size,
                    },
                    call,
                    loc,
                )
            })
    }

    /// Writes `src` into target `pid`'s memory from element `offset`;
    /// in `pid`'s memory when its `wait` returns. `src` may be reused at
    /// once.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] if `pid` is not a target of the epoch or
    /// the access epoch was completed; [`ErrorKind::OutOfBounds`]. Any
    /// error stops the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes (a lock of the target's word for the copy
    /// on shared memory; `MPI_Put` of a copy on `mpi`).
    ///
    /// # Examples
    ///
    /// See [`Window::epoch`].
    #[track_caller]
    pub fn put(&mut self, pid: usize, offset: usize, src: &[T]) -> Result<(), Error> {
        const CALL: &str = "WinEpoch::put";
        let loc = Some(SourceLocation::caller());
        let (off, n) = self.check(pid, offset, src.len(), CALL, loc)?;
        let mut p = self.bsp.process();
        // SAFETY: in bounds (checked); the access epoch on `pid` is open.
        unsafe {
            self.win
                .ep_put(&p, pid, off, bytemuck::cast_slice(src), CALL, loc)?;
        }
        p.win_note_put(self.win.id, pid, off, n, CALL, loc)
    }

    /// Reads target `pid`'s memory from element `offset` into `dst`,
    /// which holds the data when this returns (what `pid`'s memory held
    /// then: the puts of other origins of this epoch may or may not be
    /// in it, as in MPI).
    ///
    /// # Errors
    ///
    /// As for [`put`](WinEpoch::put).
    ///
    /// # BSP cost
    ///
    /// `size_of_val(dst)` bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| {
    ///     let other = 1 - bsp.pid();
    ///     let mut w = bsplib::Window::<u32>::new(bsp, 1)?;
    ///     w.local_mut(bsp)?[0] = 40 + bsp.pid() as u32;
    ///     let mut got = [0u32];
    ///     let mut e = w.epoch(bsp, &[other], &[other])?;
    ///     e.get(other, 0, &mut got)?;
    ///     e.wait()?;
    ///     w.free(bsp)?;
    ///     Ok(got[0])
    /// })?;
    /// assert_eq!(r, [41, 40]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn get(&mut self, pid: usize, offset: usize, dst: &mut [T]) -> Result<(), Error> {
        const CALL: &str = "WinEpoch::get";
        let loc = Some(SourceLocation::caller());
        let (off, _) = self.check(pid, offset, dst.len(), CALL, loc)?;
        let p = self.bsp.process();
        // SAFETY: in bounds; the access epoch on `pid` is open.
        unsafe {
            self.win
                .ep_get(&p, pid, off, bytemuck::cast_slice_mut(dst), CALL, loc)
        }
    }

    /// Ends the access epoch: its targets' `wait` can count this process
    /// (every transfer of the epoch is complete already). Does nothing
    /// without one.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Transport`] when MPI fails.
    ///
    /// # BSP cost
    ///
    /// A counter increment in each target's memory (MPI's
    /// `MPI_Win_complete`).
    ///
    /// # Examples
    ///
    /// See [`test`](WinEpoch::test).
    pub fn complete(&mut self) -> Result<(), Error> {
        if !self.access {
            return Ok(());
        }
        self.access = false;
        self.win
            .close_access(&mut self.bsp.process(), "WinEpoch::complete", None)
    }

    /// Completes the access epoch, then waits until every origin has
    /// completed its access: their puts are in this process's memory.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EpochUnmatched`] when an origin ends or waits in its
    /// sync without completing (every engine: the status board);
    /// [`ErrorKind::Stopped`].
    ///
    /// # BSP cost
    ///
    /// Waits for one counter per origin (MPI's `MPI_Win_wait`).
    ///
    /// # Examples
    ///
    /// See [`Window::epoch`].
    #[track_caller]
    pub fn wait(mut self) -> Result<(), Error> {
        self.wait_at(Some(SourceLocation::caller()))
    }

    fn wait_at(&mut self, loc: Loc) -> Result<(), Error> {
        self.complete()?;
        if self.exposure {
            let mut p = self.bsp.process();
            self.win
                .close_exposure(&mut p, true, "WinEpoch::wait", loc)?;
            drop(p);
            self.exposure = false;
        }
        Ok(())
    }

    /// Completes the access epoch, then tells without waiting whether
    /// every origin has completed (the exposure epoch ends then: later
    /// calls return true at once).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Stopped`].
    ///
    /// # BSP cost
    ///
    /// One read of each origin's counter (`MPI_Win_test`).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| {
    ///     let other = 1 - bsp.pid();
    ///     let mut w = bsplib::Window::<u8>::new(bsp, 1)?;
    ///     let mut e = w.epoch(bsp, &[other], &[other])?;
    ///     e.put(other, 0, &[9])?;
    ///     e.complete()?;
    ///     let mut polls = 0u64;
    ///     while !e.test()? {
    ///         polls += 1; // free to compute meanwhile
    ///     }
    ///     drop(e);
    ///     let got = w.local(bsp)?[0];
    ///     w.free(bsp)?;
    ///     Ok(got)
    /// })?;
    /// assert_eq!(r, [9, 9]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    pub fn test(&mut self) -> Result<bool, Error> {
        self.complete()?;
        if self.exposure {
            let mut p = self.bsp.process();
            let done = self
                .win
                .close_exposure(&mut p, false, "WinEpoch::test", None)?;
            drop(p);
            self.exposure = !done;
        }
        Ok(!self.exposure)
    }
}

impl<T: Pod> Drop for WinEpoch<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Unwinding: complete (so that no target waits for us), but
            // wait for nobody: the run is failing. The memory stays the
            // run's, and no view of it can be made any more.
            let _ = self.complete();
            return;
        }
        // An error here (the run stopped) is the run's already.
        let _ = self.wait_at(None);
    }
}
