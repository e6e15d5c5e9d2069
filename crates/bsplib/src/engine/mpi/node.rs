//! Windows in the node's shared memory (MPI-3 `MPI_Win_allocate_shared`),
//! when every rank of the run is on one node (`README.md`, "Windows"):
//! split from `win.rs`, whose windows in MPI memory they replace there.

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::*;

use super::win::{ok, Failed};
use super::{progress, Mpi};

/// A window in the node's shared memory (MPI-3 `MPI_Win_allocate_shared`),
/// when every rank of the run is on one node: the shared-memory protocol
/// of the other engines then runs on it unchanged (the lock words and
/// counters are CPU atomics, a transfer is a copy, a wait sleeps on a
/// futex bell), instead of MPI's one-sided operations.
pub(crate) struct NodeWin {
    win: ffi::MPI_Win,
    /// Every rank's memory, at this rank's addresses.
    heads: Vec<usize>,
}

// SAFETY: as for `BoardWin`: used only by the rank's one thread that makes
// MPI calls; the handle is an opaque MPI object, the memory is the run's.
unsafe impl Send for NodeWin {}
// SAFETY: as above.
unsafe impl Sync for NodeWin {}

impl NodeWin {
    /// The first byte of every rank's memory, at this rank's addresses.
    pub(crate) fn heads(&self) -> &[usize] {
        &self.heads
    }

    /// Frees the window: collective over the run's communicator.
    pub(crate) fn free(self) -> Result<(), Failed> {
        let _mpi = progress::hold();
        let mut win = self.win;
        // SAFETY: a live window, freed once, by every rank (the caller's
        // collective checked it).
        ok(unsafe { ffi::MPI_Win_free(&mut win) }, "MPI_Win_free")
    }
}

impl Mpi {
    /// Whether windows live in node shared memory: every rank is on one
    /// node (`MPI_Comm_split_type` with `MPI_COMM_TYPE_SHARED`) and no
    /// rank set `BSPLIB_MPI_SHARED_WINDOWS=0`. Decided once, by every
    /// rank together (collective: the run's first window or `rma_init`),
    /// so that all make the same kind of window.
    pub(super) fn node_shared(&self) -> Result<bool, Failed> {
        let _mpi = progress::hold();
        if let Some(&b) = self.node.get() {
            return Ok(b);
        }
        let mut node = std::mem::MaybeUninit::<ffi::MPI_Comm>::uninit();
        // SAFETY: MPI is initialised; the communicator and the null info
        // are valid; `node` is an out-parameter, freed below.
        let one_node = unsafe {
            ok(
                ffi::MPI_Comm_split_type(
                    self.comm.as_raw(),
                    ffi::RSMPI_COMM_TYPE_SHARED,
                    0,
                    ffi::RSMPI_INFO_NULL,
                    node.as_mut_ptr(),
                ),
                "MPI_Comm_split_type",
            )?;
            let mut node = node.assume_init();
            let mut size = 0;
            ok(ffi::MPI_Comm_size(node, &mut size), "MPI_Comm_size")?;
            ok(ffi::MPI_Comm_free(&mut node), "MPI_Comm_free")?;
            size as usize == self.nprocs
        };
        let wanted = std::env::var("BSPLIB_MPI_SHARED_WINDOWS").map_or(true, |v| v != "0");
        let mine = i32::from(one_node && wanted);
        let mut all = 0i32;
        // SAFETY: one int in, one out, over the run's communicator, which
        // every rank reaches here (the caller's collective).
        unsafe {
            ok(
                ffi::MPI_Allreduce(
                    (&mine as *const i32).cast(),
                    (&mut all as *mut i32).cast(),
                    1,
                    ffi::RSMPI_INT32_T,
                    ffi::RSMPI_MIN,
                    self.comm.as_raw(),
                ),
                "MPI_Allreduce",
            )?;
        }
        let _ = self.node.set(all == 1);
        Ok(all == 1)
    }

    /// A window of `bytes` (a multiple of 64) on this rank in node shared
    /// memory, zeroed, if windows live there ([`node_shared`](Mpi::node_shared));
    /// `None` otherwise. Collective.
    pub(crate) fn node_allocate(&self, bytes: usize) -> Result<Option<NodeWin>, Failed> {
        let _mpi = progress::hold();
        if !self.node_shared()? {
            return Ok(None);
        }
        let mut base: *mut u8 = std::ptr::null_mut();
        let mut win = std::mem::MaybeUninit::<ffi::MPI_Win>::uninit();
        // SAFETY: MPI is initialised; the out-parameters are live; every
        // rank calls this (collective); the memory written is this rank's
        // own segment.
        let win = unsafe {
            ok(
                ffi::MPI_Win_allocate_shared(
                    bytes.max(64) as ffi::MPI_Aint,
                    1,
                    ffi::RSMPI_INFO_NULL,
                    self.comm.as_raw(),
                    (&mut base as *mut *mut u8).cast(),
                    win.as_mut_ptr(),
                ),
                "MPI_Win_allocate_shared",
            )?;
            let win = win.assume_init();
            ok(
                ffi::MPI_Win_set_errhandler(win, ffi::RSMPI_ERRORS_RETURN),
                "MPI_Win_set_errhandler",
            )?;
            std::ptr::write_bytes(base, 0, bytes.max(64));
            win
        };
        let mut heads = Vec::with_capacity(self.nprocs);
        for q in 0..self.nprocs {
            let (mut size, mut unit) = (0 as ffi::MPI_Aint, 0i32);
            let mut at: *mut u8 = std::ptr::null_mut();
            // SAFETY: a live shared window; out-parameters.
            let rc = unsafe {
                ffi::MPI_Win_shared_query(
                    win,
                    q as i32,
                    &mut size,
                    &mut unit,
                    (&mut at as *mut *mut u8).cast(),
                )
            };
            ok(rc, "MPI_Win_shared_query")?;
            heads.push(at.expose_provenance());
        }
        // Every rank's memory is zeroed before anyone uses it.
        self.comm.barrier();
        // The lock words and the data need 64-byte alignment, which MPI
        // does not promise. Every rank sees the same segments at the same
        // offsets of page-aligned mappings, so all reach the same verdict
        // and fall back to MPI memory together.
        if heads.iter().any(|h| h % 64 != 0) {
            NodeWin { win, heads }.free()?;
            return Ok(None);
        }
        Ok(Some(NodeWin { win, heads }))
    }
}
