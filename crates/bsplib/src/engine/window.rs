//! The memory of windows (`../window.rs`, design in `ONE_SIDED.md`
//! section 9) on the engines whose processes share memory: one mapping
//! per run, a region of [`per_process`] bytes per process, reserved and
//! not committed (`MAP_NORESERVE`: pages exist once touched).
//!
//! - `processes`: a shared anonymous mapping made before the fork, so
//!   every process sees every region at the same address;
//! - `threads`, `serial`: a private anonymous mapping made on the first
//!   window of the run, owned by the run (not by any process's handle),
//!   so that no process can free memory another process is writing.
//!
//! Each process allocates its windows in its own region only (the free
//! list is the process's own, `../window.rs`).
//!
//! This is the transport's *window memory* capability; with it come the
//! wait for a word of that memory to change (a futex on shared memory)
//! and, on `mpi`, the *native windows* (MPI-3 RMA windows, in shared
//! memory when every rank is on one node).

#[cfg(feature = "mpi")]
pub(crate) use super::mpi::node::NodeWin;
#[cfg(feature = "mpi")]
pub(crate) use super::mpi::win::MpiWin;
pub(crate) use super::processes::{futex_wait, futex_wake};

/// The window memory per process the run agreed on (`mpi`: process 0's
/// `BSPLIB_WINDOW_MEMORY`, `engine/mpi/README.md`, "Start"); 0 when the
/// environment of this process decides.
static AGREED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `BSPLIB_WINDOW_MEMORY` in this process's environment, in bytes.
pub(crate) fn memory_from_env() -> Option<usize> {
    std::env::var("BSPLIB_WINDOW_MEMORY")
        .ok()
        .and_then(|v| super::processes::parse_size(&v))
}

/// Sets the window memory per process every process of the run uses
/// (`None`: the default for the run's size), in place of the
/// environment's: the `mpi` start, with process 0's setting.
#[cfg(feature = "mpi")]
pub(crate) fn agree_memory(bytes: Option<usize>) {
    AGREED.store(
        bytes.map_or(usize::MAX, |b| b.max(1)),
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// The bytes of each process's region: `BSPLIB_WINDOW_MEMORY` if set
/// (suffixes `K`, `M`, `G`; process 0's on `mpi`),
/// else 1 GiB for up to 16 processes and 16 GiB shared out among more
/// (at least 16 MiB each): address space only, until windows are used.
pub(crate) fn per_process(nprocs: usize) -> usize {
    const GIB: usize = 1 << 30;
    let bytes = match AGREED.load(std::sync::atomic::Ordering::Relaxed) {
        0 => memory_from_env(),
        usize::MAX => None,
        b => Some(b),
    };
    if let Some(bytes) = bytes {
        return bytes.next_multiple_of(4096).max(4096);
    }
    (16 * GIB / nprocs.max(1)).clamp(16 << 20, GIB) & !4095
}

/// One run's window memory.
pub(crate) struct Arena {
    map: super::processes::Mapping,
    per: usize,
    shared: bool,
}

impl Arena {
    /// Reserves the regions of `nprocs` processes; `shared` for the
    /// `processes` engine (before the fork).
    pub(crate) fn new(nprocs: usize, shared: bool) -> Result<Self, String> {
        Self::with_per(nprocs, per_process(nprocs), shared)
            .map_err(|e| format!("window memory ({e}; BSPLIB_WINDOW_MEMORY sets it)"))
    }

    /// Reserves regions of `per` bytes (a multiple of the page size) for
    /// `nprocs` processes.
    pub(crate) fn with_per(nprocs: usize, per: usize, shared: bool) -> Result<Self, String> {
        let len = per
            .checked_mul(nprocs.max(1))
            .ok_or("the regions overflow the address space")?;
        let map = super::processes::Mapping::with(len, true, shared)
            .map_err(|e| format!("{per} bytes per process: {e}"))?;
        Ok(Arena { map, per, shared })
    }

    /// The bytes of each process's region.
    pub(crate) fn per(&self) -> usize {
        self.per
    }

    /// Whether any of the `len` bytes at `addr` lie in the arena (any
    /// process's region).
    pub(crate) fn overlaps(&self, addr: usize, len: usize) -> bool {
        let start = self.map.ptr().addr();
        addr < start + self.map.len() && addr.saturating_add(len) > start
    }

    /// The first byte of process `pid`'s region.
    pub(crate) fn region(&self, pid: usize) -> *mut u8 {
        // Within the mapping (`pid` < nprocs).
        self.map.ptr().wrapping_add(pid * self.per)
    }

    /// Gives the pages of `len` bytes at `offset` of `pid`'s region back
    /// to the system (a freed window); they read as zeros afterwards.
    pub(crate) fn release(&self, pid: usize, offset: usize, len: usize) {
        // Whole pages inside the range only.
        let start = offset.next_multiple_of(4096);
        let end = (offset + len) & !4095;
        if end <= start {
            return;
        }
        let advice = if self.shared {
            libc::MADV_REMOVE
        } else {
            libc::MADV_DONTNEED
        };
        // SAFETY: whole pages of our own mapping that no window uses any
        // more (the caller freed them collectively); dropping their
        // contents is what is wanted.
        unsafe { libc::madvise(self.region(pid).add(start).cast(), end - start, advice) };
    }
}

/// What is free in one process's region of an [`Arena`]: the allocator of
/// windows and of areas (each process allocates in its own region only).
#[derive(Default)]
pub(crate) struct FreeList {
    /// Free ranges below `top`, `offset -> len`, coalesced.
    free: std::collections::BTreeMap<usize, usize>,
    /// Everything from here to the end of the region was never used (and
    /// reads as zeros).
    top: usize,
}

impl FreeList {
    /// `n` bytes from a region of `per` bytes (first fit): the offset, and
    /// whether the bytes were used before (not zero). Offsets stay
    /// multiples of the granularity every caller rounds `n` to.
    pub(crate) fn alloc(&mut self, per: usize, n: usize) -> Option<(usize, bool)> {
        if let Some((&off, &len)) = self.free.iter().find(|&(_, &len)| len >= n) {
            self.free.remove(&off);
            if len > n {
                self.free.insert(off + n, len - n);
            }
            return Some((off, true));
        }
        let off = self.top;
        (off.checked_add(n)? <= per).then(|| {
            self.top = off + n;
            (off, false)
        })
    }

    /// Gives back `n` bytes at `off` (from [`alloc`](FreeList::alloc)).
    pub(crate) fn free(&mut self, mut off: usize, mut n: usize) {
        if let Some((&before, &len)) = self.free.range(..off).next_back() {
            if before + len == off {
                self.free.remove(&before);
                off = before;
                n += len;
            }
        }
        if let Some(len) = self.free.remove(&(off + n)) {
            n += len;
        }
        self.free.insert(off, n);
    }
}
