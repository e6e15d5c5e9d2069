//! Passive target: [`Window::lock`] and its guard [`WinLock`] (MPI's
//! `MPI_Win_lock`, `MPI_Put`, `MPI_Get`, `MPI_Win_unlock`), and the taking
//! and releasing of a process's lock, counted in the process's holds.

use bytemuck::Pod;

use super::{lockword, Mem, Window};
use crate::bsp::Bsp;
use crate::engine::Interrupt;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::holds::Held;
use crate::process::{Loc, Process};

/// A lock's kind ([`Rma::lock`](crate::rma::Rma::lock), [`Window::lock`](crate::Window::lock)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    /// One holder at a time (MPI's `MPI_LOCK_EXCLUSIVE`).
    Exclusive,
    /// Any number of holders together, while no exclusive holder
    /// (`MPI_LOCK_SHARED`).
    Shared,
}

impl<T: Pod> Window<T> {
    /// Locks process `pid`'s memory of the window, `Exclusive` (to read
    /// and write) or `Shared` (to read, together with other readers),
    /// waiting until the lock is free; `pid` makes no call for it. The
    /// guard's transfers are complete when they return; dropping the
    /// guard (or [`WinLock::unlock`]) releases the lock. The guard holds
    /// the handle, so no other call (no sync, no second lock) can be made
    /// while it lives: a process waits for at most one lock at a time,
    /// and holds none while it waits (which is why locks cannot
    /// deadlock).
    ///
    /// Exclusive holders take turns; waiting writers do not hold back new
    /// readers (no queue).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::ForeignArea`];
    /// [`ErrorKind::Stopped`] if the run stops while this process waits
    /// (and [`ErrorKind::Deadline`] when the run's deadline passes).
    ///
    /// # BSP cost
    ///
    /// No superstep: about two latencies of the target's memory (a
    /// compare-and-swap to lock, a subtraction to unlock) on shared
    /// memory; on `mpi` the same through `MPI_Compare_and_swap` /
    /// `MPI_Fetch_and_op`, each a round trip.
    ///
    /// # Examples
    ///
    /// See [`Window`].
    #[track_caller]
    pub fn lock<'a>(
        &'a self,
        bsp: &'a mut Bsp,
        pid: usize,
        kind: LockKind,
    ) -> Result<WinLock<'a, T>, Error> {
        const CALL: &str = "Window::lock";
        let loc = Some(SourceLocation::caller());
        // SAFETY: released once, by the guard's drop.
        unsafe { self.lock_counted(bsp, pid, kind == LockKind::Exclusive, CALL, loc)? };
        Ok(WinLock {
            win: self,
            bsp,
            pid,
            exclusive: kind == LockKind::Exclusive,
        })
    }

    /// Takes `pid`'s lock and counts it (checked first: a second lock,
    /// one with a view held, one to a process of an open access epoch of
    /// this window are refused).
    ///
    /// # Safety
    ///
    /// Released exactly once by [`unlock_counted`](Window::unlock_counted)
    /// with the same `pid` and kind.
    pub(super) unsafe fn lock_counted(
        &self,
        bsp: &Bsp,
        pid: usize,
        exclusive: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.own(bsp, call, loc)?;
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        p.check_pid(crate::bsp::pid_arg(pid), call, loc)?;
        p.held_refuses(p.holds.check_lock(p.pid, self.id, pid), call, loc)?;
        self.acquire(&p, pid, exclusive, call, loc)?;
        p.holds.open(
            Held::Lock {
                win: self.id,
                pid,
                exclusive,
            },
            call,
            loc,
        );
        Ok(())
    }

    /// Releases and uncounts a lock [`lock_counted`](Window::lock_counted)
    /// took.
    pub(super) fn unlock_counted(&self, bsp: &Bsp, pid: usize, exclusive: bool) {
        let mut p = bsp.process();
        self.release(&p, pid, exclusive);
        p.holds.close(&Held::Lock {
            win: self.id,
            pid,
            exclusive,
        });
    }

    /// Takes `pid`'s lock, waiting as long as it must (and the run lives).
    pub(super) fn acquire(
        &self,
        p: &Process,
        pid: usize,
        exclusive: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let mut tries = 0u32;
        let mut since: Option<std::time::Instant> = None;
        loop {
            let taken = self
                .try_take(pid, exclusive)
                .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc))?;
            if taken {
                return Ok(());
            }
            tries += 1;
            if tries < self.spins {
                std::hint::spin_loop();
                continue;
            }
            // Let the holder run (it may be waiting for this core).
            std::thread::yield_now();
            if tries % 64 == 0 {
                if self.world.poll_stopped() {
                    return Err(p.stopped(call, loc));
                }
                let t0 = *since.get_or_insert_with(std::time::Instant::now);
                if self.world.deadline().is_some_and(|d| t0.elapsed() > d) {
                    return Err(p.interrupted(Interrupt::Deadline, call, loc));
                }
            }
        }
    }

    /// One attempt at `pid`'s lock: true if taken.
    pub(crate) fn try_take(&self, pid: usize, exclusive: bool) -> Result<bool, String> {
        match &self.mem {
            Mem::Shared { .. } => Ok(lockword::try_lock(self.word(pid), exclusive)),
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => win.try_lock(pid, exclusive),
        }
    }

    /// Releases `pid`'s lock (on `mpi` once the puts under it are
    /// complete at `pid`). An MPI failure fails the run (`p.fail`): the
    /// release is made by drops too, which cannot return it.
    pub(super) fn release(&self, p: &Process, pid: usize, exclusive: bool) {
        if let Err(detail) = self.give_back(pid, exclusive) {
            p.fail(
                ErrorKind::Transport { detail },
                "a window lock's release",
                None,
            );
        }
    }

    /// Releases `pid`'s lock, MPI's failure as its words.
    pub(crate) fn give_back(&self, pid: usize, exclusive: bool) -> Result<(), String> {
        match &self.mem {
            Mem::Shared { .. } => {
                lockword::unlock(self.word(pid), exclusive);
                Ok(())
            }
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => win.unlock(pid, exclusive),
        }
    }
}

/// A lock of one process's window memory ([`Window::lock`]); released
/// when dropped or by [`unlock`](WinLock::unlock).
pub struct WinLock<'a, T: Pod> {
    pub(super) win: &'a Window<T>,
    pub(super) bsp: &'a mut Bsp,
    pub(super) pid: usize,
    pub(super) exclusive: bool,
}

impl<T: Pod> std::fmt::Debug for WinLock<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WinLock")
            .field("pid", &self.pid)
            .field("exclusive", &self.exclusive)
            .finish()
    }
}

impl<'a, T: Pod> WinLock<'a, T> {
    /// The handle this guard holds (for `pid()`, `nprocs()` ...).
    pub fn bsp(&self) -> &Bsp {
        self.bsp
    }

    /// Checks a transfer of `n` elements at `offset` for process `p` (this
    /// guard's), by a writer if `write`; returns its byte offset and
    /// length.
    pub(super) fn check(
        &self,
        p: &Process,
        offset: usize,
        n: usize,
        write: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<(usize, usize), Error> {
        let size = std::mem::size_of::<T>();
        self.win.check_bytes(
            p,
            self.pid,
            offset.checked_mul(size),
            n.checked_mul(size),
            (offset.saturating_mul(size), n.saturating_mul(size)),
            write && !self.exclusive,
            call,
            loc,
        )
    }

    /// Writes `src` into the locked memory from element `offset`;
    /// complete at the target when this returns. Needs an exclusive lock.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::OutOfBounds`] if the elements do not fit the target's
    /// memory; [`ErrorKind::NoEpoch`] under a shared lock. Any error stops
    /// the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes copied (no superstep).
    ///
    /// # Examples
    ///
    /// See [`Window`].
    #[track_caller]
    pub fn put(&mut self, offset: usize, src: &[T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        const CALL: &str = "WinLock::put";
        let p = self.bsp.process();
        let (off, _) = self.check(&p, offset, src.len(), true, CALL, loc)?;
        // SAFETY: in bounds (checked); the exclusive lock of `pid`'s
        // memory is held: nobody else reads or writes these bytes.
        unsafe {
            self.win
                .copy_in(&p, self.pid, off, bytemuck::cast_slice(src), CALL, loc)
        }
    }

    /// Reads the locked memory from element `offset` into `dst`; complete
    /// when this returns.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::OutOfBounds`] if the elements do not fit the target's
    /// memory. Any error stops the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(dst)` bytes copied (on `mpi`, a round trip).
    ///
    /// # Examples
    ///
    /// See [`Window`].
    #[track_caller]
    pub fn get(&mut self, offset: usize, dst: &mut [T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        const CALL: &str = "WinLock::get";
        let p = self.bsp.process();
        let (off, _) = self.check(&p, offset, dst.len(), false, CALL, loc)?;
        // SAFETY: in bounds; a lock of `pid`'s memory is held: nobody
        // writes these bytes meanwhile.
        unsafe {
            self.win
                .copy_out(&p, self.pid, off, bytemuck::cast_slice_mut(dst), CALL, loc)
        }
    }

    /// Releases the lock (as dropping the guard does).
    ///
    /// # Errors
    ///
    /// None today; a `Result` so that an engine whose unlock can fail
    /// reports it.
    ///
    /// # Examples
    ///
    /// See [`Window`].
    pub fn unlock(self) -> Result<(), Error> {
        drop(self);
        Ok(())
    }
}

impl<T: Pod> Drop for WinLock<'_, T> {
    fn drop(&mut self) {
        self.win.unlock_counted(self.bsp, self.pid, self.exclusive);
    }
}
