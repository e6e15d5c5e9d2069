//! Where a window's memory is ([`Mem`]: blocks in shared memory or an MPI
//! window) and how each engine reaches it: the data, the lock word, the
//! copies in and out, and the checks of a transfer's owner and bounds.

use std::sync::atomic::AtomicU64;

use bytemuck::Pod;

use super::Window;
use crate::bsp::Bsp;
use crate::error::{Error, ErrorKind};
use crate::process::{Loc, Process};

/// Where a window's memory is.
pub(super) enum Mem {
    /// `threads`, `serial`, `processes`: the address of each process's
    /// block (its lock word, counters and data: [`header`]), and our own
    /// allocation.
    Shared {
        heads: Vec<usize>,
        offset: usize,
        bytes: usize,
        /// `mpi` with every rank on one node: the MPI-3 shared window
        /// that holds the blocks (else the run's window memory does).
        #[cfg(feature = "mpi")]
        node: Option<crate::engine::window::NodeWin>,
    },
    #[cfg(feature = "mpi")]
    Mpi(crate::engine::window::MpiWin),
}

impl<T: Pod> Window<T> {
    /// Fails unless `bsp` is the handle of the window's process and run.
    pub(super) fn own(&self, bsp: &Bsp, call: &'static str, loc: Loc) -> Result<(), Error> {
        if self.owner == bsp.owner() {
            return Ok(());
        }
        let p = bsp.process();
        Err(p.fail(
            ErrorKind::ForeignArea {
                created_run: self.owner.0,
                created_pid: self.owner.1,
                run: bsp.owner().0,
            },
            call,
            loc,
        ))
    }

    /// The first byte of `pid`'s data.
    pub(super) fn data(&self, pid: usize) -> *mut u8 {
        match &self.mem {
            Mem::Shared { heads, .. } => {
                std::ptr::with_exposed_provenance_mut::<u8>(heads[pid]).wrapping_add(self.header)
            }
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => {
                debug_assert_eq!(pid, self.owner.1);
                win.base()
            }
        }
    }

    /// `pid`'s lock word (shared memory engines).
    pub(super) fn word(&self, pid: usize) -> &AtomicU64 {
        match &self.mem {
            // SAFETY: every process's block starts with its lock word,
            // 64-byte aligned, in memory the run owns and keeps mapped
            // for as long as this handle (which holds the run) lives;
            // only ever accessed atomically.
            Mem::Shared { heads, .. } => unsafe {
                &*std::ptr::with_exposed_provenance::<AtomicU64>(heads[pid])
            },
            #[cfg(feature = "mpi")]
            Mem::Mpi(_) => unreachable!("mpi windows lock through MPI"),
        }
    }

    /// Checks a transfer of `nbytes` at byte `off` of `pid`'s memory
    /// (`None`: overflowed; `shown` are the figures an error gives);
    /// `shared_write` is a write under a shared lock.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check_bytes(
        &self,
        p: &Process,
        pid: usize,
        off: Option<usize>,
        nbytes: Option<usize>,
        shown: (usize, usize),
        shared_write: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<(usize, usize), Error> {
        let extent = self.lens[pid] * std::mem::size_of::<T>();
        let range = off
            .zip(nbytes)
            .filter(|&(o, b)| o.checked_add(b).is_some_and(|end| end <= extent));
        let Some((off, bytes)) = range else {
            return Err(p.fail(
                ErrorKind::OutOfBounds {
                    remote: pid,
                    offset: shown.0,
                    nbytes: shown.1,
                    extent,
                    elem: std::mem::size_of::<T>(),
                },
                call,
                loc,
            ));
        };
        if shared_write {
            return Err(p.fail(
                ErrorKind::NoEpoch {
                    detail: format!(
                        "a write into the window of process {pid} under a shared lock (shared \
                         locks read only: take an exclusive lock to write)"
                    ),
                },
                call,
                loc,
            ));
        }
        Ok((off, bytes))
    }

    /// [`check_bytes`](Window::check_bytes) for the raw entry points,
    /// whose offsets and lengths are bytes already: the byte offset.
    #[cfg_attr(not(feature = "raw"), allow(dead_code))]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check_raw(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        len: usize,
        shared_write: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<usize, Error> {
        self.check_bytes(
            p,
            pid,
            Some(off),
            Some(len),
            (off, len),
            shared_write,
            call,
            loc,
        )
        .map(|(off, _)| off)
    }

    /// Copies `src` to byte `off` of `pid`'s memory.
    ///
    /// # Safety
    ///
    /// In bounds; this process holds `pid`'s lock exclusively (a passive
    /// epoch on `mpi`).
    pub(super) unsafe fn copy_in(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        src: &[u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let _ = (p, call, loc);
        match &self.mem {
            // SAFETY: the caller's promises: nobody else touches the bytes.
            Mem::Shared { .. } => unsafe {
                std::ptr::copy_nonoverlapping(src.as_ptr(), self.data(pid).add(off), src.len());
                Ok(())
            },
            // SAFETY: the caller's promises.
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => unsafe { win.put(src, pid, off) }
                .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc)),
        }
    }

    /// Copies `dst.len()` bytes at byte `off` of `pid`'s memory to `dst`.
    ///
    /// # Safety
    ///
    /// In bounds; this process holds a lock of `pid`'s memory (a passive
    /// epoch on `mpi`).
    pub(super) unsafe fn copy_out(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        dst: &mut [u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let _ = (p, call, loc);
        match &self.mem {
            // SAFETY: the caller's promises: nobody writes the bytes.
            Mem::Shared { .. } => unsafe {
                std::ptr::copy_nonoverlapping(self.data(pid).add(off), dst.as_mut_ptr(), dst.len());
                Ok(())
            },
            // SAFETY: the caller's promises.
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => unsafe { win.get(dst, pid, off) }
                .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc)),
        }
    }

    /// On `mpi`, `MPI_Win_sync` for a view of one's own memory (after its
    /// lock is taken, before it is released); nothing on shared memory.
    pub(super) fn sync_local(
        &self,
        p: &Process,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let _ = (p, call, loc);
        #[cfg(feature = "mpi")]
        if let Mem::Mpi(win) = &self.mem {
            return win
                .sync_local()
                .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc));
        }
        Ok(())
    }
}
