//! Windows (`../../window/mod.rs`) on `mpi`: the same protocol as on shared
//! memory (`../../ONE_SIDED.md`, section 10), with MPI's one-sided
//! operations as the memory:
//!
//! - one window from `MPI_Win_allocate` over the run's communicator: per
//!   rank a header (its lock word, then `posts[q]` and `dones[q]` for each
//!   process `q`, 32-bit words, padded to 64 bytes), then the data;
//! - it is in one passive epoch to every rank from creation to release
//!   (`MPI_Win_lock_all`), so no MPI synchronisation call ever waits: the
//!   library's lock word (taken with `MPI_Compare_and_swap` /
//!   `MPI_Fetch_and_op`, released by subtraction, exactly as on shared
//!   memory) orders the transfers, and every wait is the caller's own
//!   polling loop, which also watches the run (a failed process, the
//!   deadline): nothing waits inside MPI for something that may never
//!   happen;
//! - a put is `MPI_Put` (its source staged), a get `MPI_Get` +
//!   `MPI_Win_flush`; a lock's release flushes the data to the target
//!   first, so whoever takes the lock next sees them; a local view
//!   brackets its loads and stores with `MPI_Win_sync`;
//! - the window returns errors (`MPI_ERRORS_RETURN`) and every call here
//!   gives back MPI's own words for the caller's `ErrorKind::Transport`:
//!   nothing ends inside MPI.
//!
//! Every call here is made by the one thread of the rank's BSP process.

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::*;

use super::node::NodeWin;
use super::{progress, Mpi};

/// Puts of up to this many bytes are copied into the window's staging
/// buffer and left to complete at the release of the lock (no
/// `MPI_Win_flush_local` per put: a third of a small lock epoch's time
/// here).
const STAGE: usize = 64 << 10;

/// An MPI failure: which call, its code and MPI's words.
pub(crate) type Failed = String;

/// One window of this rank: its header and its data.
pub(crate) struct MpiWin {
    win: ffi::MPI_Win,
    /// The first byte of this rank's data (after its header).
    base: *mut u8,
    /// Bytes of every rank's header: data displacements start here.
    head: usize,
    /// Where the header starts in every rank's memory: 0, or a control
    /// line's displacement in the run's control window ([`ControlWin`]).
    at: usize,
    /// Whether this handle owns the MPI window (a control line does not:
    /// [`ControlWin`] does).
    owned: bool,
    /// The sources of the puts not yet complete locally: allocated once
    /// with [`STAGE`] bytes and never grown, so that the addresses MPI
    /// holds stay valid until a flush completes them.
    staging: std::cell::RefCell<Vec<u8>>,
    /// The target of the staged puts, and whether they go to more than
    /// one (then only a flush of all completes them).
    staged_to: std::cell::Cell<Option<usize>>,
    mixed: std::cell::Cell<bool>,
}

/// `Ok` unless an MPI call returned an error code; then the call, the code
/// and MPI's words for it.
pub(super) fn ok(rc: i32, what: &str) -> Result<(), Failed> {
    if rc == 0 {
        return Ok(());
    }
    let mut text = [0 as std::ffi::c_char; ffi::MPI_MAX_ERROR_STRING as usize];
    let mut len = 0;
    // SAFETY: `text` has room for MPI_MAX_ERROR_STRING characters; `len`
    // is an out-parameter.
    let words = if unsafe { ffi::MPI_Error_string(rc, text.as_mut_ptr(), &mut len) } == 0 {
        let bytes: Vec<u8> = text[..len.clamp(0, text.len() as i32) as usize]
            .iter()
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        "no description".into()
    };
    Err(format!("{what} returned error code {rc} ({words})"))
}

/// Calls `f(done, n)` for the pieces of at most 1 GiB that `len` bytes
/// make (MPI's counts are `int`), `done` the bytes before the piece.
fn pieces(len: usize, mut f: impl FnMut(usize, i32) -> Result<(), Failed>) -> Result<(), Failed> {
    let mut done = 0;
    while done < len {
        let n = (len - done).min(1 << 30);
        f(done, n as i32)?;
        done += n;
    }
    Ok(())
}

/// `MPI_Fetch_and_op` of `v` with `MPI_SUM` on 32-bit word `word` of
/// `rank`'s memory of `win` (displacement unit 1), flushed: the word's old
/// value.
///
/// # Safety
///
/// `win` is live and in a passive epoch to `rank` (the lock-all epoch);
/// the word is within `rank`'s memory.
unsafe fn fetch_add(win: ffi::MPI_Win, rank: usize, word: usize, v: u32) -> Result<u32, Failed> {
    let mut old = 0u32;
    // SAFETY: the caller's promises; `v` and `old` are one 4-byte integer
    // each.
    unsafe {
        ok(
            ffi::MPI_Fetch_and_op(
                (&v as *const u32).cast(),
                (&mut old as *mut u32).cast(),
                ffi::RSMPI_UINT32_T,
                rank as i32,
                (4 * word) as ffi::MPI_Aint,
                ffi::RSMPI_SUM,
                win,
            ),
            "MPI_Fetch_and_op",
        )?;
        ok(ffi::MPI_Win_flush(rank as i32, win), "MPI_Win_flush")?;
    }
    Ok(old)
}

/// `MPI_Win_allocate` of `bytes` (at least 8) on the communicator `comm`,
/// returning errors, in a lock-all epoch (`MPI_MODE_NOCHECK`: the
/// library's own words order every access), zeroed and made public
/// (`MPI_Win_sync`): the window and this rank's memory. Collective; no
/// other rank may reach the memory before a barrier after it.
fn allocate(comm: ffi::MPI_Comm, bytes: usize) -> Result<(ffi::MPI_Win, *mut u8), Failed> {
    let mut base: *mut u8 = std::ptr::null_mut();
    let mut win = std::mem::MaybeUninit::<ffi::MPI_Win>::uninit();
    // SAFETY: MPI is initialised; `base` and `win` are live out-parameters;
    // the communicator and the null info are valid; the memory written is
    // the allocation's own.
    unsafe {
        ok(
            ffi::MPI_Win_allocate(
                bytes.max(8) as ffi::MPI_Aint,
                1,
                ffi::RSMPI_INFO_NULL,
                comm,
                (&mut base as *mut *mut u8).cast(),
                win.as_mut_ptr(),
            ),
            "MPI_Win_allocate",
        )?;
        // MPI_Win_allocate succeeded and wrote the handle.
        let win = win.assume_init();
        ok(
            ffi::MPI_Win_set_errhandler(win, ffi::RSMPI_ERRORS_RETURN),
            "MPI_Win_set_errhandler",
        )?;
        ok(
            ffi::MPI_Win_lock_all(ffi::MPI_MODE_NOCHECK as i32, win),
            "MPI_Win_lock_all",
        )?;
        std::ptr::write_bytes(base, 0, bytes.max(8));
        ok(ffi::MPI_Win_sync(win), "MPI_Win_sync")?;
        // Other ranks' one-sided calls on it need this rank's progress.
        progress::opened();
        Ok((win, base))
    }
}

/// The lock word's writer bit; the bits below count the readers (as on
/// shared memory, `../../window/mod.rs`, in a 32-bit word).
const WRITER: u32 = 1 << 31;

impl MpiWin {
    /// The first byte of this rank's memory of the window.
    pub(crate) fn base(&self) -> *mut u8 {
        self.base
    }

    /// `MPI_Fetch_and_op` of `v` with `MPI_SUM` on word `word` of `rank`'s
    /// header, complete at `rank` (flushed): the word's old value.
    /// Words are 32 bits: Open MPI 4.1's shared-memory transport emulates
    /// 64-bit atomics wrongly (a segmentation fault, open-mpi/ompi#7967).
    fn fetch_add(&self, rank: usize, word: usize, v: u32) -> Result<u32, Failed> {
        // SAFETY: the window is live and in the lock-all epoch; `word` is
        // within every rank's header (the caller's index), which starts at
        // `at` (a multiple of 64).
        unsafe { fetch_add(self.win, rank, self.at / 4 + word, v) }
    }

    /// One attempt at `rank`'s lock word: true if taken (`exclusive`: the
    /// writer bit; else one more reader, backed out if a writer holds).
    pub(crate) fn try_lock(&self, rank: usize, exclusive: bool) -> Result<bool, Failed> {
        let _mpi = progress::hold();
        if exclusive {
            let (new, cmp, mut old) = (WRITER, 0u32, 0u32);
            // SAFETY: as in `fetch_add`, word 0 (the lock word).
            unsafe {
                ok(
                    ffi::MPI_Compare_and_swap(
                        (&new as *const u32).cast(),
                        (&cmp as *const u32).cast(),
                        (&mut old as *mut u32).cast(),
                        ffi::RSMPI_UINT32_T,
                        rank as i32,
                        self.at as ffi::MPI_Aint,
                        self.win,
                    ),
                    "MPI_Compare_and_swap",
                )?;
                ok(ffi::MPI_Win_flush(rank as i32, self.win), "MPI_Win_flush")?;
            }
            return Ok(old == 0);
        }
        if self.fetch_add(rank, 0, 1)? & WRITER == 0 {
            return Ok(true);
        }
        self.fetch_add(rank, 0, 1u32.wrapping_neg())?;
        Ok(false)
    }

    /// Releases what [`try_lock`](MpiWin::try_lock) took, once every put
    /// to `rank` is complete there (so the next holder sees them).
    pub(crate) fn unlock(&self, rank: usize, exclusive: bool) -> Result<(), Failed> {
        let _mpi = progress::hold();
        // SAFETY: the window is live and in the lock-all epoch.
        let rc = unsafe { ffi::MPI_Win_flush(rank as i32, self.win) };
        ok(rc, "MPI_Win_flush")?;
        if self.mixed.get() {
            // Puts to other targets are staged too (the C interface holds
            // a lock of one target while an epoch reaches another):
            // complete every staged source before the buffer is reused.
            // SAFETY: the window is live and in the lock-all epoch.
            let rc = unsafe { ffi::MPI_Win_flush_local_all(self.win) };
            ok(rc, "MPI_Win_flush_local_all")?;
            self.unstage();
        } else if self.staged_to.get() == Some(rank) {
            // The flush completed them.
            self.unstage();
        }
        let v = if exclusive { WRITER } else { 1 };
        self.fetch_add(rank, 0, v.wrapping_neg()).map(drop)
    }

    /// Forgets the staged sources (every one complete).
    fn unstage(&self) {
        self.staging.borrow_mut().clear();
        self.staged_to.set(None);
        self.mixed.set(false);
    }

    /// Makes this rank's loads and stores of its own memory and the RMA
    /// operations on it agree (`MPI_Win_sync`): after taking the lock of
    /// one's own memory for a view, and before releasing it.
    pub(crate) fn sync_local(&self) -> Result<(), Failed> {
        let _mpi = progress::hold();
        // SAFETY: the window is live and in the lock-all epoch.
        ok(unsafe { ffi::MPI_Win_sync(self.win) }, "MPI_Win_sync")
    }

    /// Adds one to counter `which` (0: posts, 1: dones) of process `from`
    /// in `rank`'s header (`nprocs` processes).
    pub(crate) fn count(
        &self,
        rank: usize,
        which: usize,
        from: usize,
        nprocs: usize,
    ) -> Result<(), Failed> {
        let _mpi = progress::hold();
        self.fetch_add(rank, 1 + which * nprocs + from, 1).map(drop)
    }

    /// Counter `which` of process `from` in this rank's own header
    /// (32 bits: it counts epochs modulo 2^32).
    pub(crate) fn counter(
        &self,
        me: usize,
        which: usize,
        from: usize,
        nprocs: usize,
    ) -> Result<u32, Failed> {
        let _mpi = progress::hold();
        self.fetch_add(me, 1 + which * nprocs + from, 0)
    }

    /// `MPI_Put` of `src` at byte `disp` of `rank`'s memory; `src` may be
    /// reused when this returns (a small one was staged, a large one
    /// completed locally); complete at `rank` when the lock is released.
    ///
    /// # Safety
    ///
    /// This process holds `rank`'s lock exclusively; `disp + src.len()` is
    /// within `rank`'s memory of the window.
    pub(crate) unsafe fn put(&self, src: &[u8], rank: usize, disp: usize) -> Result<(), Failed> {
        let _mpi = progress::hold();
        let mut staging = self.staging.borrow_mut();
        if src.len() <= STAGE {
            if staging.len() + src.len() > STAGE {
                // Full: complete the staged puts (to any target), reuse
                // the buffer.
                // SAFETY: the window is live and in the lock-all epoch.
                let rc = unsafe { ffi::MPI_Win_flush_local_all(self.win) };
                ok(rc, "MPI_Win_flush_local_all")?;
                staging.clear();
                self.staged_to.set(None);
                self.mixed.set(false);
            }
            if self.staged_to.get().is_some_and(|t| t != rank) {
                self.mixed.set(true);
            }
            self.staged_to.set(Some(rank));
            let at = staging.len();
            // Within the capacity: no reallocation moves earlier sources.
            staging.extend_from_slice(src);
            // SAFETY: the caller's promises; the staged copy stays put
            // until a flush completes it.
            return unsafe { self.put_raw(staging[at..].as_ptr(), src.len(), rank, disp) };
        }
        drop(staging);
        // SAFETY: the caller's promises; `src` is live until the flush
        // below completes the transfer locally.
        unsafe { self.put_raw(src.as_ptr(), src.len(), rank, disp)? };
        // SAFETY: the window is live and in the lock-all epoch.
        ok(
            unsafe { ffi::MPI_Win_flush_local(rank as i32, self.win) },
            "MPI_Win_flush_local",
        )
    }

    /// `MPI_Put` of `len` bytes at `src`, in pieces MPI's counts take.
    ///
    /// # Safety
    ///
    /// As for [`put`](MpiWin::put); `src` holds `len` bytes that stay
    /// unchanged until the transfer completes locally.
    unsafe fn put_raw(
        &self,
        src: *const u8,
        len: usize,
        rank: usize,
        disp: usize,
    ) -> Result<(), Failed> {
        let _mpi = progress::hold();
        pieces(len, |done, n| {
            // SAFETY: the caller's promises.
            ok(
                unsafe {
                    ffi::MPI_Put(
                        src.add(done).cast(),
                        n,
                        ffi::RSMPI_UINT8_T,
                        rank as i32,
                        (self.head + disp + done) as ffi::MPI_Aint,
                        n,
                        ffi::RSMPI_UINT8_T,
                        self.win,
                    )
                },
                "MPI_Put",
            )
        })
    }

    /// `MPI_Get` of `dst.len()` bytes at byte `disp` of `rank`'s memory
    /// into `dst`, complete when this returns.
    ///
    /// # Safety
    ///
    /// This process holds a lock of `rank`'s memory; the range is within
    /// it.
    pub(crate) unsafe fn get(
        &self,
        dst: &mut [u8],
        rank: usize,
        disp: usize,
    ) -> Result<(), Failed> {
        let _mpi = progress::hold();
        let at = dst.as_mut_ptr();
        pieces(dst.len(), |done, n| {
            // SAFETY: the caller's promises; `dst` is not read until the
            // flush below completes the transfer.
            ok(
                unsafe {
                    ffi::MPI_Get(
                        at.add(done).cast(),
                        n,
                        ffi::RSMPI_UINT8_T,
                        rank as i32,
                        (self.head + disp + done) as ffi::MPI_Aint,
                        n,
                        ffi::RSMPI_UINT8_T,
                        self.win,
                    )
                },
                "MPI_Get",
            )
        })?;
        // SAFETY: the window is live and in the lock-all epoch.
        ok(
            unsafe { ffi::MPI_Win_flush(rank as i32, self.win) },
            "MPI_Win_flush",
        )
    }

    /// Frees the window: collective over the run's communicator.
    pub(crate) fn free(self) -> Result<(), Failed> {
        let _mpi = progress::hold();
        let mut this = std::mem::ManuallyDrop::new(self);
        // SAFETY: a live window in its lock-all epoch, ended here once
        // (the drop, which would end it again, does not run); every rank
        // calls this (the caller's collective checked it).
        let freed = unsafe {
            ok(ffi::MPI_Win_unlock_all(this.win), "MPI_Win_unlock_all")?;
            ok(ffi::MPI_Win_free(&mut this.win), "MPI_Win_free")
        };
        progress::closed();
        freed
    }
}

impl Drop for MpiWin {
    /// A window dropped without its collective release (a failed run, a
    /// handle dropped early): its memory stays MPI's until the program
    /// ends (other ranks may still reach it), but this rank's lock-all
    /// epochs end here, a local call, so that `MPI_Finalize` does not
    /// find them open.
    fn drop(&mut self) {
        let _mpi = progress::hold();
        if self.owned {
            // SAFETY: a live window in its lock-all epoch, ended once.
            unsafe { ffi::MPI_Win_unlock_all(self.win) };
            progress::closed();
        }
    }
}

impl Mpi {
    /// `MPI_Win_allocate` of `bytes` and a header for `nprocs` processes on
    /// this rank, zeroed, over the run's communicator:
    /// collective (every rank calls it, checked before by the caller's
    /// collective, so that a mismatch fails instead of hanging in MPI).
    /// Returns once every rank's memory is zeroed and in the lock-all
    /// epoch.
    pub(crate) fn win_allocate(&self, bytes: usize, nprocs: usize) -> Result<MpiWin, Failed> {
        let _mpi = progress::hold();
        // The header: the lock word, then posts and dones of every
        // process, 32-bit words (addressed in bytes: the displacement unit
        // is 1), padded so that the data is 64-byte aligned.
        let head = (4 * (1 + 2 * nprocs)).next_multiple_of(64);
        let (win, at) = allocate(self.comm.as_raw(), head + bytes)?;
        self.comm.barrier();
        Ok(MpiWin {
            win,
            // SAFETY: within the allocation of `head + bytes` bytes.
            base: unsafe { at.add(head) },
            head,
            at: 0,
            owned: true,
            staging: std::cell::RefCell::new(Vec::with_capacity(STAGE)),
            staged_to: std::cell::Cell::new(None),
            mixed: std::cell::Cell::new(false),
        })
    }

    /// Errors as values: receives a stop message of a failed process if
    /// one came (then this process is stopped too); true once stopped.
    /// For the library's own polling waits (windows).
    pub(crate) fn poll_stopped(&self) -> bool {
        let _mpi = progress::hold();
        if !self.is_stopped() && self.values() && self.take_stop() {
            self.stop();
        }
        self.is_stopped()
    }
}

/// A status board that every rank can read (`MPI_Win_allocate` of one
/// 32-bit word per rank: its superstep modulo 2^30, then its state in two
/// bits, as `../board.rs` encodes it): made by the first window of a run,
/// so that a window's wait can tell a process that syncs or ended without
/// posting or completing (`EpochUnmatched`) from one that will. Each rank
/// writes only its own word (by adding the difference, with MPI's atomics,
/// so that readers never see half of it).
pub(crate) struct BoardWin {
    win: ffi::MPI_Win,
    /// The last word this rank published.
    mine: std::sync::atomic::AtomicU32,
}

// SAFETY: used only by the rank's one thread that makes MPI calls (MPI is
// initialised serialised); the handle is an opaque MPI object.
unsafe impl Send for BoardWin {}
// SAFETY: as above.
unsafe impl Sync for BoardWin {}

impl BoardWin {
    /// Publishes `word` as this rank's entry.
    fn publish(&self, me: usize, word: u32) -> Result<(), Failed> {
        use std::sync::atomic::Ordering;
        let old = self.mine.swap(word, Ordering::Relaxed);
        // SAFETY: the board window is live, in its lock-all epoch; word 0
        // is every rank's entry.
        unsafe { fetch_add(self.win, me, 0, word.wrapping_sub(old)) }.map(drop)
    }

    /// Rank `q`'s entry.
    fn read(&self, q: usize) -> Result<u32, Failed> {
        // SAFETY: as in `publish`.
        unsafe { fetch_add(self.win, q, 0, 0) }
    }
}

impl Drop for BoardWin {
    /// The board lives as long as its run; its lock-all epoch ends here (a
    /// local call; its memory is MPI's until the program ends, since a
    /// collective release could hang a failed run).
    fn drop(&mut self) {
        let _mpi = progress::hold();
        // SAFETY: a live window in its lock-all epoch, ended once.
        unsafe { ffi::MPI_Win_unlock_all(self.win) };
        progress::closed();
    }
}

impl Mpi {
    /// Makes the run's status board if it has none (collective: called by
    /// every rank in the same window creation), with this rank's entry.
    pub(crate) fn ensure_board(&self, word: u32) -> Result<(), Failed> {
        let _mpi = progress::hold();
        if self.board.get().is_some() {
            return Ok(());
        }
        let (win, base) = allocate(self.comm.as_raw(), 4)?;
        // SAFETY: this rank's own 4 bytes of the new window, before any
        // other rank can reach them (the barrier below).
        unsafe { base.cast::<u32>().write(word) };
        // SAFETY: a live window in its lock-all epoch.
        ok(unsafe { ffi::MPI_Win_sync(win) }, "MPI_Win_sync")?;
        self.comm.barrier();
        let _ = self.board.set(BoardWin {
            win,
            mine: std::sync::atomic::AtomicU32::new(word),
        });
        Ok(())
    }

    /// Publishes this rank's status word on the board, if the run has
    /// one. A failure is ignored: the board only sharpens an error
    /// message (a wait without it ends by the deadline or the run's stop).
    pub(crate) fn publish_state(&self, word: u32) {
        let _mpi = progress::hold();
        if let Some(b) = self.board.get() {
            let _ = b.publish(self.comm.rank() as usize, word);
        }
    }

    /// Rank `q`'s status word, if the run has a board.
    pub(crate) fn peer_state(&self, q: usize) -> Option<u32> {
        let _mpi = progress::hold();
        self.board.get().and_then(|b| b.read(q).ok())
    }
}

/// The run's control window: per rank, `lines` control lines of
/// registered areas in one-sided use (`../../epoch.rs`), each a window's
/// header (a lock word and post counters, no data), in MPI memory reached
/// by MPI's atomics or, when windows live in node shared memory, in that.
/// Made with the status board by `rma_init` (collective); lives as long
/// as the run.
pub(crate) struct ControlWin {
    mem: ControlMem,
    /// Lines per rank.
    lines: usize,
    /// Bytes per line.
    line: usize,
}

enum ControlMem {
    Mpi(ffi::MPI_Win),
    Node(NodeWin),
}

// SAFETY: as for `BoardWin`: used only by the rank's one thread that makes
// MPI calls; the handle is an opaque MPI object.
unsafe impl Send for ControlWin {}
// SAFETY: as above.
unsafe impl Sync for ControlWin {}

impl ControlWin {
    /// Control line `line` of every rank, as a window of no data reached
    /// through MPI (`None` past the last line, or in node shared memory).
    pub(crate) fn line(&self, line: usize) -> Option<MpiWin> {
        let ControlMem::Mpi(win) = self.mem else {
            return None;
        };
        (line < self.lines).then(|| MpiWin {
            win,
            base: std::ptr::null_mut(),
            head: self.line,
            at: line * self.line,
            owned: false,
            staging: std::cell::RefCell::new(Vec::new()),
            staged_to: std::cell::Cell::new(None),
            mixed: std::cell::Cell::new(false),
        })
    }

    /// In node shared memory: control line `line` of every rank, at this
    /// rank's addresses (`None` past the last line, or in MPI memory).
    pub(crate) fn node_line(&self, line: usize) -> Option<Vec<usize>> {
        let ControlMem::Node(w) = &self.mem else {
            return None;
        };
        (line < self.lines).then(|| w.heads().iter().map(|h| h + line * self.line).collect())
    }

    /// Whether the lines are in node shared memory.
    pub(crate) fn in_node(&self) -> bool {
        matches!(self.mem, ControlMem::Node(_))
    }
}

impl Drop for ControlWin {
    /// As for [`BoardWin`]: the lock-all epoch ends here; the memory is
    /// MPI's until the program ends.
    fn drop(&mut self) {
        let _mpi = progress::hold();
        if let ControlMem::Mpi(win) = self.mem {
            // SAFETY: a live window in its lock-all epoch, ended once.
            unsafe { ffi::MPI_Win_unlock_all(win) };
            progress::closed();
        }
    }
}

impl Mpi {
    /// Makes the run's control window if it has none (collective: every
    /// rank makes it in the same `rma_init`): up to 1024 lines, at most
    /// 4 MiB per rank (at least 16 lines), of `node_line` bytes each in
    /// node shared memory ([`node_allocate`](Mpi::node_allocate)), else of
    /// `(4 · (1 + 2 · nprocs))` bytes rounded to 64 in MPI memory.
    pub(crate) fn ensure_control(&self, nprocs: usize, node_line: usize) -> Result<(), Failed> {
        let _mpi = progress::hold();
        if self.control.get().is_some() {
            return Ok(());
        }
        let mpi_line = (4 * (1 + 2 * nprocs)).next_multiple_of(64);
        let lines_of = |line: usize| ((4 << 20) / line).clamp(16, 1024);
        let node = if self.node_shared()? {
            self.node_allocate(lines_of(node_line) * node_line)?
        } else {
            None
        };
        let ctl = if let Some(w) = node {
            ControlWin {
                mem: ControlMem::Node(w),
                lines: lines_of(node_line),
                line: node_line,
            }
        } else {
            let lines = lines_of(mpi_line);
            let (win, _) = allocate(self.comm.as_raw(), lines * mpi_line)?;
            self.comm.barrier();
            ControlWin {
                mem: ControlMem::Mpi(win),
                lines,
                line: mpi_line,
            }
        };
        let _ = self.control.set(ctl);
        Ok(())
    }

    /// The run's control window, if made.
    pub(crate) fn control(&self) -> Option<&ControlWin> {
        self.control.get()
    }
}
