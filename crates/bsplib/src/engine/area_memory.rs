//! Memory for the `Area`s of a `processes` run that the other processes
//! read directly: a shared anonymous mapping made before the fork (every
//! process sees every region at the same address), a region per process,
//! reserved and not committed (`MAP_NORESERVE`), each process allocating
//! in its own region only (design: `processes/README.md`, "Area memory").
//!
//! An hpput whose source lies in its sender's region, and a get whose
//! source lies in its owner's region, are then one `memcpy` by the
//! receiver or the requester during the sync, where they would otherwise
//! be two copies through a channel (or one slower kernel copy by
//! cross-memory attach). C programs' memory is their own and never here.

use std::ptr::NonNull;
use std::sync::Mutex;

use super::window::{Arena, FreeList};

/// Allocations are multiples of this, at offsets that are: the largest
/// alignment an area's element type may have here (larger ones go to the
/// heap), and a cache line, so that no two areas share one.
pub(crate) const GRAIN: usize = 64;

/// Areas smaller than this stay on the heap: their transfers are cheap
/// through the channels, and a first-fit list of many small blocks is not.
pub(crate) const MIN_AREA: usize = 4096;

/// The run's area memory, as one process sees it.
pub(crate) struct AreaMemory {
    arena: Arena,
    /// This process's region: what is free in it (each process has its own
    /// copy of this value after the fork, and uses it for its own region).
    free: Mutex<FreeList>,
}

/// `BSPLIB_AREA_MEMORY` in this process's environment, in bytes (`0`
/// turns area memory off).
fn memory_from_env() -> Option<usize> {
    std::env::var("BSPLIB_AREA_MEMORY")
        .ok()
        .and_then(|v| super::processes::parse_size(&v))
}

/// The bytes of each process's region: `BSPLIB_AREA_MEMORY` if set, else
/// the machine's memory shared out among the processes, at least 64 MiB
/// and at most 64 GiB each (address space only, until areas are made).
fn per_process(nprocs: usize) -> usize {
    if let Some(bytes) = memory_from_env() {
        return bytes.next_multiple_of(4096);
    }
    // SAFETY: `sysconf` reads system constants.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let ram = usize::try_from(pages.max(0))
        .unwrap_or(0)
        .saturating_mul(usize::try_from(page.max(0)).unwrap_or(0));
    (ram / nprocs.max(1)).clamp(64 << 20, 64 << 30) & !4095
}

impl AreaMemory {
    /// Reserves the regions of `nprocs` processes (before the fork). `None`
    /// when `BSPLIB_AREA_MEMORY` is 0 or the address space refuses the
    /// reservation: areas then live on the heap, as on the other engines.
    pub(crate) fn new(nprocs: usize) -> Option<Self> {
        let per = per_process(nprocs);
        if per == 0 {
            return None;
        }
        let arena = Arena::with_per(nprocs, per, true).ok()?;
        Some(AreaMemory {
            arena,
            free: Mutex::default(),
        })
    }

    /// `bytes` bytes (rounded up to [`GRAIN`]) in process `pid`'s region,
    /// which must be this process's: the first byte (aligned to `GRAIN`),
    /// and whether the bytes were used before (not zero). `None` when the
    /// region is full.
    pub(crate) fn alloc(&self, pid: usize, bytes: usize) -> Option<(NonNull<u8>, bool)> {
        let n = bytes.checked_next_multiple_of(GRAIN)?.max(GRAIN);
        let (off, used) = self
            .free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .alloc(self.arena.per(), n)?;
        NonNull::new(self.arena.region(pid).wrapping_add(off)).map(|p| (p, used))
    }

    /// Gives back the `bytes` bytes at `ptr` (from [`alloc`](Self::alloc)
    /// by process `pid`, with the same `bytes`); their pages go back to the
    /// system.
    pub(crate) fn free(&self, pid: usize, ptr: NonNull<u8>, bytes: usize) {
        let n = bytes.next_multiple_of(GRAIN).max(GRAIN);
        let off = ptr.as_ptr().addr() - self.arena.region(pid).addr();
        self.arena.release(pid, off, n);
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .free(off, n);
    }

    /// Whether any of the `len` bytes at `addr` lie in the run's area
    /// memory (any process's region).
    pub(crate) fn overlaps(&self, addr: usize, len: usize) -> bool {
        self.arena.overlaps(addr, len)
    }

    /// Whether the `len` bytes at `addr` lie inside process `pid`'s region
    /// (of any process's view: the mapping is at the same address in all).
    pub(crate) fn contains(&self, pid: usize, addr: usize, len: usize) -> bool {
        let start = self.arena.region(pid).addr();
        addr >= start
            && addr
                .checked_add(len)
                .is_some_and(|end| end <= start + self.arena.per())
    }
}
