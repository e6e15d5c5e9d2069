//! The C interface's entry points (`bsp_window_*`, all `#[doc(hidden)]`):
//! locks, transfers and epochs without guards, unsafe where the caller's
//! promises stand in for a guard's borrows.

use bytemuck::Pod;

use super::Window;
use crate::bsp::Bsp;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::rma::Op;

#[cfg_attr(docsrs, doc(cfg(feature = "raw")))]
impl<T: Pod> Window<T> {
    /// The first byte of this process's own memory of the window (the C
    /// interface gives it to the program, whose rule is MPI's: lock one's
    /// own window around loads and stores).
    #[doc(hidden)]
    pub fn base_ptr(&self) -> *mut T {
        self.data(self.owner.1).cast()
    }

    /// Takes `pid`'s lock without a guard (the C interface's
    /// `bsp_window_lock`): waits as [`lock`](Window::lock) does.
    ///
    /// # Errors
    ///
    /// As for [`lock`](Window::lock).
    ///
    /// # Safety
    ///
    /// Released exactly once by [`unlock_raw`](Window::unlock_raw) with
    /// the same `pid` and kind; no guard of this window alive in this
    /// process meanwhile (it could wait for this very lock).
    #[doc(hidden)]
    pub unsafe fn lock_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        exclusive: bool,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        // SAFETY: the caller's promise: released once by `unlock_raw`.
        unsafe { self.lock_counted(bsp, pid, exclusive, call, loc) }
    }

    /// Releases a lock [`lock_raw`](Window::lock_raw) took.
    ///
    /// # Safety
    ///
    /// This process holds that lock (`pid`, kind), taken by `lock_raw`.
    #[doc(hidden)]
    pub unsafe fn unlock_raw(&self, bsp: &Bsp, pid: usize, exclusive: bool) {
        self.unlock_counted(bsp, pid, exclusive);
    }

    /// Writes `src` at byte `off` of `pid`'s memory under a lock taken by
    /// [`lock_raw`](Window::lock_raw) (`exclusive` its kind).
    ///
    /// # Errors
    ///
    /// As for [`WinLock::put`].
    ///
    /// # Safety
    ///
    /// This process holds `pid`'s lock of that kind.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn put_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        src: &[u8],
        exclusive: bool,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let p = bsp.process();
        let off = self.check_raw(&p, pid, off, src.len(), !exclusive, call, loc)?;
        // SAFETY: in bounds, under the exclusive lock (the caller's).
        unsafe { self.copy_in(&p, pid, off, src, call, loc) }
    }

    /// Reads `dst.len()` bytes at byte `off` of `pid`'s memory under a
    /// lock taken by [`lock_raw`](Window::lock_raw).
    ///
    /// # Errors
    ///
    /// As for [`WinLock::get`].
    ///
    /// # Safety
    ///
    /// This process holds a lock of `pid`'s memory.
    #[doc(hidden)]
    pub unsafe fn get_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        dst: &mut [u8],
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let p = bsp.process();
        let off = self.check_raw(&p, pid, off, dst.len(), false, call, loc)?;
        // SAFETY: in bounds, under a lock (the caller's).
        unsafe { self.copy_out(&p, pid, off, dst, call, loc) }
    }

    /// Combines `src`, whole elements of `ty`, with `op` into byte `off` of
    /// `pid`'s memory under an exclusive lock taken by
    /// [`lock_raw`](Window::lock_raw) (the C interface's
    /// `bsp_window_accumulate`); complete when this returns.
    ///
    /// # Errors
    ///
    /// As for [`WinLock::accumulate`]; [`ErrorKind::NoEpoch`] under a
    /// shared lock.
    ///
    /// # Safety
    ///
    /// This process holds `pid`'s lock (`exclusive` tells its kind);
    /// `src.len()` is a multiple of `ty.size()`.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn accumulate_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        src: &[u8],
        ty: crate::rma::ElemType,
        op: Op,
        exclusive: bool,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let p = bsp.process();
        let off = self.check_raw(&p, pid, off, src.len(), !exclusive, call, loc)?;
        // SAFETY: in bounds, under the exclusive lock (the caller's, and
        // `check_raw` refused a shared one); whole elements.
        unsafe { self.combine_in(&p, pid, off, src, ty, op, call, loc) }
    }

    /// Opens the epochs of the C interface's `bsp_window_post` (`origins`)
    /// or `bsp_window_start` (`targets`), sorted and distinct; counted as
    /// open window epochs (a sync with one open is an error).
    ///
    /// # Errors
    ///
    /// As for [`epoch`](Window::epoch).
    ///
    /// # Safety
    ///
    /// Each epoch opened is closed once by
    /// [`complete_raw`](Window::complete_raw) (an access epoch) or
    /// [`wait_raw`](Window::wait_raw) (an exposure epoch); no guard of
    /// this window alive in this process meanwhile; no view of a
    /// registered [`Area`](crate::Area) of this process alive during the
    /// call (a start may serve one-sided records, which write areas: the
    /// C interface has no such views).
    #[doc(hidden)]
    pub unsafe fn open_raw(
        &self,
        bsp: &Bsp,
        origins: Option<&[usize]>,
        targets: Option<&[usize]>,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        self.own(bsp, call, loc)?;
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        self.open_epoch(&mut p, origins, targets, call, loc)
    }

    /// Completes the access epoch that [`open_raw`](Window::open_raw)
    /// started (nothing if none is open).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Transport`] when MPI fails.
    #[doc(hidden)]
    pub fn complete_raw(
        &self,
        bsp: &Bsp,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        self.close_access(&mut bsp.process(), call, loc)
    }

    /// Waits for (`block`) or looks at the completions of the exposure
    /// epoch that [`open_raw`](Window::open_raw) posted; true when it is
    /// closed (or none was open).
    ///
    /// # Errors
    ///
    /// As for [`WinEpoch::wait`].
    ///
    /// # Safety
    ///
    /// No view of a registered [`Area`](crate::Area) of this process is
    /// alive during the call: a blocking wait serves one-sided records
    /// (in active-message mode), which write areas. The C interface has
    /// no such views.
    #[doc(hidden)]
    pub unsafe fn wait_raw(
        &self,
        bsp: &Bsp,
        block: bool,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<bool, Error> {
        self.close_exposure(&mut bsp.process(), block, call, loc)
    }

    /// An access epoch's put (the C interface's `bsp_window_put` to a
    /// started target): `src` at byte `off` of `pid`'s memory, there when
    /// this returns.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::OutOfBounds`].
    ///
    /// # Safety
    ///
    /// An access epoch on `pid` is open (`open_raw`).
    #[doc(hidden)]
    pub unsafe fn epoch_put_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        src: &[u8],
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let mut p = bsp.process();
        let off = self.check_raw(&p, pid, off, src.len(), false, call, loc)?;
        // SAFETY: in bounds; the caller's epoch.
        unsafe { self.ep_put(&p, pid, off, src, call, loc)? };
        p.win_note_put(self.id, pid, off, src.len(), call, loc)
    }

    /// An access epoch's accumulate (the C interface's
    /// `bsp_window_accumulate` to a started target): `src`, whole
    /// elements of `ty` (the target refuses a record of part of one),
    /// combined with `op` into byte `off` of `pid`'s
    /// memory at `pid`'s `wait` ([`WinEpoch::accumulate`]).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] without an access epoch of this window to
    /// `pid`, or outside one-sided mode; [`ErrorKind::OutOfBounds`];
    /// [`ErrorKind::AccumulateOperator`].
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub fn epoch_accumulate_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        src: &[u8],
        ty: crate::rma::ElemType,
        op: Op,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let mut p = bsp.process();
        if p.holds.access(self.id).is_none_or(|t| !t.contains(&pid)) {
            let detail = format!("no access epoch of this window to process {pid} is open");
            return Err(p.fail(ErrorKind::NoEpoch { detail }, call, loc));
        }
        let off = self.check_raw(&p, pid, off, src.len(), false, call, loc)?;
        p.win_accumulate(self.id, pid, off, src, ty, op, call, loc)
    }

    /// An access epoch's get (the C interface's `bsp_window_get` from a
    /// started target): `dst.len()` bytes at byte `off` of `pid`'s
    /// memory, in `dst` when this returns.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::OutOfBounds`].
    ///
    /// # Safety
    ///
    /// An access epoch on `pid` is open.
    #[doc(hidden)]
    pub unsafe fn epoch_get_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        dst: &mut [u8],
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let p = bsp.process();
        let off = self.check_raw(&p, pid, off, dst.len(), false, call, loc)?;
        // SAFETY: in bounds; the caller's epoch and `dst`.
        unsafe { self.ep_get(&p, pid, off, dst, call, loc) }
    }
}
