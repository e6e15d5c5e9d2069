//! The bookkeeping a run keeps per pair of processes before any traffic,
//! and the check that refuses a run whose bookkeeping alone would not fit
//! in this machine's memory.

/// Bytes of bookkeeping a run keeps per pair of processes before any
/// traffic: each process's two mailbox halves hold a 4-byte index per
/// destination (the lists themselves are made on first use), and its get
/// replies a directory entry per requester.
const BYTES_PER_PAIR: usize = 2 * 4 + 16;

/// Refuses a run whose per-pair bookkeeping alone would exceed half of the
/// machine's memory: a clear error at the start instead of the
/// out-of-memory killer later.
pub(super) fn check_memory(nprocs: usize) -> Result<(), String> {
    let need = nprocs
        .checked_mul(nprocs)
        .and_then(|n| n.checked_mul(BYTES_PER_PAIR));
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let have = usize::try_from(pages)
        .ok()
        .zip(usize::try_from(page).ok())
        .map_or(usize::MAX, |(n, size)| n.saturating_mul(size));
    match need {
        Some(need) if need <= have / 2 => Ok(()),
        _ => Err(out_of_memory(nprocs)),
    }
}

/// The error of a run too large for this machine's memory.
pub(super) fn out_of_memory(nprocs: usize) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    let need = (nprocs as f64) * (nprocs as f64) * BYTES_PER_PAIR as f64;
    // SAFETY: sysconf has no preconditions.
    let have = unsafe {
        libc::sysconf(libc::_SC_PHYS_PAGES) as f64 * libc::sysconf(libc::_SC_PAGESIZE) as f64
    };
    format!(
        "{nprocs} processes need about {:.1} GiB of message bookkeeping ({BYTES_PER_PAIR} bytes per pair of processes), more than half of this machine's {:.1} GiB: use fewer processes",
        need / GIB,
        have / GIB
    )
}
