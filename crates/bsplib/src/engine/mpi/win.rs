//! Windows (`../../window.rs`) on `mpi`: MPI's own, `MPI_Win_allocate`
//! over the run's communicator, with passive-target synchronisation
//! (`MPI_Win_lock` / `MPI_Win_unlock`, also of one's own rank for the
//! local views, as MPI requires for local loads and stores).
//!
//! Every call here is made by the one thread of the rank's BSP process.

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::*;

use super::Mpi;

/// Puts of up to this many bytes are copied into the window's staging
/// buffer and left to complete at `unlock` (no `MPI_Win_flush_local`
/// per put: a third of a small lock epoch's time here).
const STAGE: usize = 64 << 10;

/// One MPI window of this rank, with the address of its local memory.
pub(crate) struct MpiWin {
    win: ffi::MPI_Win,
    base: *mut u8,
    /// The group of the run's communicator, whose ranks are the pids.
    group: ffi::MPI_Group,
    /// The sources of the puts of the open epoch not yet complete
    /// locally: allocated once with [`STAGE`] bytes and never grown, so
    /// that the addresses MPI holds stay valid until `unlock` (or a
    /// `MPI_Win_flush_local` when it is full).
    staging: std::cell::RefCell<Vec<u8>>,
}

/// Panics (in the library, a bug) unless an MPI call succeeded: the
/// default error handler of the communicator aborts the job before a
/// failing call returns, so this is a second line only.
fn ok(rc: i32, what: &str) {
    assert_eq!(rc, 0, "{what} failed ({rc})");
}

/// Calls `f(done, n)` for the pieces of at most 1 GiB that `len` bytes
/// make (MPI's counts are `int`), `done` the bytes before the piece.
fn pieces(len: usize, mut f: impl FnMut(usize, i32)) {
    let mut done = 0;
    while done < len {
        let n = (len - done).min(1 << 30);
        f(done, n as i32);
        done += n;
    }
}

impl MpiWin {
    /// The first byte of this rank's memory of the window.
    pub(crate) fn base(&self) -> *mut u8 {
        self.base
    }

    /// Opens a passive-target epoch on `rank` (`exclusive` or shared);
    /// returns once the lock is held when `rank` is this rank.
    pub(crate) fn lock(&self, rank: usize, exclusive: bool) {
        let kind = if exclusive {
            ffi::MPI_LOCK_EXCLUSIVE
        } else {
            ffi::MPI_LOCK_SHARED
        };
        // SAFETY: a live window; a valid lock type and rank of its group.
        ok(
            unsafe { ffi::MPI_Win_lock(kind as i32, rank as i32, 0, self.win) },
            "MPI_Win_lock",
        );
    }

    /// Closes the epoch `lock` opened: every transfer of it is complete
    /// at `rank`.
    pub(crate) fn unlock(&self, rank: usize) {
        // SAFETY: a live window with an epoch open on `rank`.
        ok(
            unsafe { ffi::MPI_Win_unlock(rank as i32, self.win) },
            "MPI_Win_unlock",
        );
        // Every put of the epoch is complete: its staged sources are free.
        self.staging.borrow_mut().clear();
    }

    /// `MPI_Put` of `src` at byte `disp` of `rank`'s memory; `src` may be
    /// reused when this returns (a small one was staged, a large one
    /// completed locally); complete at `rank` at `unlock`.
    ///
    /// # Safety
    ///
    /// An epoch on `rank` is open; `disp + src.len()` is within `rank`'s
    /// memory of the window.
    pub(crate) unsafe fn put(&self, src: &[u8], rank: usize, disp: usize) {
        let mut staging = self.staging.borrow_mut();
        if src.len() <= STAGE {
            if staging.len() + src.len() > STAGE {
                // Full: complete the staged puts, reuse the buffer.
                // SAFETY: a live window with an epoch open on `rank`.
                ok(
                    unsafe { ffi::MPI_Win_flush_local(rank as i32, self.win) },
                    "MPI_Win_flush_local",
                );
                staging.clear();
            }
            let at = staging.len();
            // Within the capacity: no reallocation moves earlier sources.
            staging.extend_from_slice(src);
            // SAFETY: the caller's promises; the staged copy stays put
            // until the epoch's `unlock` or a local flush completes it.
            unsafe { self.put_raw(staging[at..].as_ptr(), src.len(), rank, disp) };
            return;
        }
        drop(staging);
        // SAFETY: the caller's promises; `src` is live until the flush
        // below completes the transfer locally.
        unsafe { self.put_raw(src.as_ptr(), src.len(), rank, disp) };
        // SAFETY: a live window with an epoch open on `rank`.
        ok(
            unsafe { ffi::MPI_Win_flush_local(rank as i32, self.win) },
            "MPI_Win_flush_local",
        );
    }

    /// `MPI_Put` of `len` bytes at `src`, in pieces MPI's counts take.
    ///
    /// # Safety
    ///
    /// As for [`put`](MpiWin::put); `src` holds `len` bytes that stay
    /// unchanged until the transfer completes locally.
    unsafe fn put_raw(&self, src: *const u8, len: usize, rank: usize, disp: usize) {
        pieces(len, |done, n| {
            // SAFETY: the caller's promises.
            ok(
                unsafe {
                    ffi::MPI_Put(
                        src.add(done).cast(),
                        n,
                        ffi::RSMPI_UINT8_T,
                        rank as i32,
                        (disp + done) as ffi::MPI_Aint,
                        n,
                        ffi::RSMPI_UINT8_T,
                        self.win,
                    )
                },
                "MPI_Put",
            )
        });
    }

    /// `MPI_Get` of `dst.len()` bytes at byte `disp` of `rank`'s memory
    /// into `dst`, complete when this returns.
    ///
    /// # Safety
    ///
    /// As for [`put`](MpiWin::put).
    pub(crate) unsafe fn get(&self, dst: &mut [u8], rank: usize, disp: usize) {
        // SAFETY: the caller's promises; `dst` is not read until the
        // flush below completes the transfer.
        unsafe { self.get_in_epoch(dst, rank, disp) };
        // SAFETY: a live window with an epoch open on `rank`.
        ok(
            unsafe { ffi::MPI_Win_flush(rank as i32, self.win) },
            "MPI_Win_flush",
        );
    }

    /// Frees the window: collective over the run's communicator.
    pub(crate) fn free(mut self) {
        // SAFETY: a live window no epoch is open on; every rank calls this
        // (the caller's collective checked it); our own group handle.
        unsafe {
            ok(ffi::MPI_Win_free(&mut self.win), "MPI_Win_free");
            ok(ffi::MPI_Group_free(&mut self.group), "MPI_Group_free");
        }
    }

    /// The group of `pids` (distinct ranks of the run), for `f`.
    fn with_group(&self, pids: &[usize], f: impl FnOnce(ffi::MPI_Group)) {
        let ranks: Vec<i32> = pids.iter().map(|&q| q as i32).collect();
        let mut g = std::mem::MaybeUninit::<ffi::MPI_Group>::uninit();
        // SAFETY: our live group; `ranks` holds distinct ranks of it;
        // `g` is an out-parameter, freed once `f` used it (MPI keeps what
        // an epoch needs).
        unsafe {
            ok(
                ffi::MPI_Group_incl(
                    self.group,
                    ranks.len() as i32,
                    ranks.as_ptr(),
                    g.as_mut_ptr(),
                ),
                "MPI_Group_incl",
            );
            let mut g = g.assume_init();
            f(g);
            ok(ffi::MPI_Group_free(&mut g), "MPI_Group_free");
        }
    }

    /// `MPI_Win_post` to `origins` (distinct, not empty).
    pub(crate) fn post(&self, origins: &[usize]) {
        self.with_group(origins, |g| {
            // SAFETY: a live window and group; no assertion.
            let rc = unsafe { ffi::MPI_Win_post(g, 0, self.win) };
            ok(rc, "MPI_Win_post")
        });
    }

    /// `MPI_Win_start` on `targets` (distinct, not empty).
    pub(crate) fn start(&self, targets: &[usize]) {
        self.with_group(targets, |g| {
            // SAFETY: a live window and group; no assertion.
            let rc = unsafe { ffi::MPI_Win_start(g, 0, self.win) };
            ok(rc, "MPI_Win_start")
        });
    }

    /// `MPI_Win_complete`: the access epoch's transfers are complete at
    /// the origin (the staged sources and destinations may be used).
    pub(crate) fn complete(&self) {
        // SAFETY: a live window with an access epoch open.
        ok(
            unsafe { ffi::MPI_Win_complete(self.win) },
            "MPI_Win_complete",
        );
        self.staging.borrow_mut().clear();
    }

    /// `MPI_Win_wait`: every origin of the exposure epoch completed.
    pub(crate) fn wait(&self) {
        // SAFETY: a live window with an exposure epoch open.
        ok(unsafe { ffi::MPI_Win_wait(self.win) }, "MPI_Win_wait");
    }

    /// `MPI_Win_test`: true (and the exposure epoch closed) when every
    /// origin completed.
    pub(crate) fn test(&self) -> bool {
        let mut flag = 0;
        // SAFETY: a live window with an exposure epoch open; `flag` is an
        // out-parameter.
        ok(
            unsafe { ffi::MPI_Win_test(self.win, &mut flag) },
            "MPI_Win_test",
        );
        flag != 0
    }

    /// `MPI_Get` of `dst.len()` bytes at byte `disp` of `rank`'s memory
    /// into `dst`, complete at the epoch's `complete` (or a flush).
    ///
    /// # Safety
    ///
    /// An access epoch on `rank` is open; the range is within `rank`'s
    /// memory; `dst` stays allocated and untouched until it completes.
    pub(crate) unsafe fn get_in_epoch(&self, dst: &mut [u8], rank: usize, disp: usize) {
        let at = dst.as_mut_ptr();
        pieces(dst.len(), |done, n| {
            // SAFETY: the caller's promises.
            ok(
                unsafe {
                    ffi::MPI_Get(
                        at.add(done).cast(),
                        n,
                        ffi::RSMPI_UINT8_T,
                        rank as i32,
                        (disp + done) as ffi::MPI_Aint,
                        n,
                        ffi::RSMPI_UINT8_T,
                        self.win,
                    )
                },
                "MPI_Get",
            )
        });
    }

    /// `MPI_Put` of `src` in an access epoch: complete at `complete`.
    ///
    /// # Safety
    ///
    /// An access epoch on `rank` is open; the range is within `rank`'s
    /// memory; `src` stays allocated and unchanged until `complete`.
    pub(crate) unsafe fn put_in_epoch(&self, src: &[u8], rank: usize, disp: usize) {
        // SAFETY: the caller's promises.
        unsafe { self.put_raw(src.as_ptr(), src.len(), rank, disp) }
    }
}

impl Mpi {
    /// `MPI_Win_allocate` of `bytes` on this rank, zeroed, over the run's
    /// communicator: collective (every rank calls it, checked before by
    /// the caller's collective, so that a mismatch fails instead of
    /// hanging in MPI). Returns once every rank's memory is zeroed.
    pub(crate) fn win_allocate(&self, bytes: usize) -> MpiWin {
        let mut base: *mut u8 = std::ptr::null_mut();
        let mut win = std::mem::MaybeUninit::<ffi::MPI_Win>::uninit();
        // SAFETY: MPI is initialised; `base` and `win` are live
        // out-parameters; the communicator and the null info are valid.
        ok(
            unsafe {
                ffi::MPI_Win_allocate(
                    bytes.max(1) as ffi::MPI_Aint,
                    1,
                    ffi::RSMPI_INFO_NULL,
                    self.comm.as_raw(),
                    (&mut base as *mut *mut u8).cast(),
                    win.as_mut_ptr(),
                )
            },
            "MPI_Win_allocate",
        );
        let mut group = std::mem::MaybeUninit::<ffi::MPI_Group>::uninit();
        // SAFETY: the run's live communicator; `group` is an out-parameter.
        ok(
            unsafe { ffi::MPI_Comm_group(self.comm.as_raw(), group.as_mut_ptr()) },
            "MPI_Comm_group",
        );
        let win = MpiWin {
            // SAFETY: MPI_Win_allocate succeeded and wrote the handle.
            win: unsafe { win.assume_init() },
            base,
            // SAFETY: MPI_Comm_group succeeded and wrote the handle.
            group: unsafe { group.assume_init() },
            staging: std::cell::RefCell::new(Vec::with_capacity(STAGE)),
        };
        // Zeroed before anyone may lock it: no other rank can reach it
        // before the barrier. (No epoch needed for the owner's stores
        // before any other rank has the window in use.)
        win.lock(self.comm.rank() as usize, true);
        // SAFETY: `bytes` bytes of our own window, locked exclusively.
        unsafe { std::ptr::write_bytes(base, 0, bytes) };
        win.unlock(self.comm.rank() as usize);
        self.comm.barrier();
        win
    }
}
