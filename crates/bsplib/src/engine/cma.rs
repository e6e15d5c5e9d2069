//! Cross-memory attach (`process_vm_readv`) for the `processes` engine:
//! one process copies bytes out of another's address space in one kernel
//! copy, with no shared memory in between. It serves the one-copy paths
//! of that engine: an `hpput` (the receiver reads the sender's source at
//! the sync) and a get into memory outside the requester's registered
//! areas (the requester reads the owner's registered memory between
//! barriers A and B), as the engines sharing one address space do with a
//! plain copy.
//!
//! The kernel checks every access: an address that is not mapped readable
//! in the other process fails with `EFAULT`, whatever a record said, so a
//! forged record can at worst read its own sender's memory. Reading a
//! sibling needs the right to trace it: the same user, and, under Yama's
//! `ptrace_scope = 1` (descendants only), the target's consent, which each
//! process gives with `PR_SET_PTRACER_ANY` ([`allow_siblings`]). Where
//! the kernel refuses anyway (a seccomp filter, Yama's scope 2 or 3, an
//! LSM), the probe [`available`] fails and the engine keeps its two-copy
//! paths.
//!
//! **Off unless `BSPLIB_CMA=1`**, chosen by measurement: on the project's
//! 2-core VM the kernel's copy (pinning every page) is slower than two
//! `memcpy`s through shared memory at every size tried, both processes
//! sending (`peers_bench hpput`, fastest of 40 supersteps, µs, two copies
//! / kernel copy: 64 KiB 1.4–2.6 / 5.9, 256 KiB 7.3 / 16.7–17.9, 1 MiB
//! 31.8–32.3 / 67.5–68.8, 4 MiB 152–188 / 282; `bench --only b`, 16 MiB:
//! 12.2 / 8.6 GiB/s for hpput, 11.7 / 8.1 for get). Large `Area`s need
//! neither: they live in memory every process maps (`area_memory.rs`).

use std::sync::OnceLock;

/// Whether this OS process may read other processes' memory with
/// `process_vm_readv`: a probe of our own memory (which fails under
/// seccomp filters that refuse the call), Yama's scope at most 1, and
/// `BSPLIB_CMA=1`. Probed once per OS process.
pub(crate) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        if !std::env::var("BSPLIB_CMA").is_ok_and(|v| v.trim() == "1") {
            return false;
        }
        if yama_scope().is_some_and(|s| s > 1) {
            return false;
        }
        let src = [0x5au8; 64];
        let mut dst = [0u8; 64];
        // SAFETY: both buffers are live locals of 64 bytes.
        let ok = unsafe { read(libc::getpid(), src.as_ptr().addr(), dst.as_mut_ptr(), 64) };
        ok.is_ok() && dst == src
    })
}

/// Yama's `ptrace_scope`, if the module is there.
fn yama_scope() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Lets the other processes of the run read this one's memory under
/// Yama's scope 1 (where only ancestors may, by default). Under scope 0
/// any process of the same user already may: nothing to do.
pub(crate) fn allow_siblings() {
    if yama_scope() == Some(1) {
        // SAFETY: `prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY)` changes only
        // who may trace this process.
        unsafe { libc::prctl(libc::PR_SET_PTRACER, libc::PR_SET_PTRACER_ANY, 0, 0, 0) };
    }
}

/// Copies `len` bytes at address `remote` of process `os_pid` into `dst`.
///
/// # Safety
///
/// `dst` must be writable for `len` bytes and not accessed by anyone else
/// during the call. (The remote side needs nothing: the kernel checks it.)
pub(crate) unsafe fn read(
    os_pid: libc::pid_t,
    remote: usize,
    dst: *mut u8,
    len: usize,
) -> Result<(), std::io::Error> {
    let mut done = 0;
    while done < len {
        let local = libc::iovec {
            iov_base: dst.wrapping_add(done).cast(),
            iov_len: len - done,
        };
        let far = libc::iovec {
            iov_base: std::ptr::without_provenance_mut(remote.wrapping_add(done)),
            iov_len: len - done,
        };
        // SAFETY: `local` is writable (the caller's contract); the kernel
        // checks `far` in the other process and writes only `local`.
        let n = unsafe { libc::process_vm_readv(os_pid, &local, 1, &far, 1, 0) };
        match n {
            n if n > 0 => done += n as usize,
            0 => return Err(std::io::Error::from_raw_os_error(libc::EFAULT)),
            _ => {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() != Some(libc::EINTR) {
                    return Err(err);
                }
            }
        }
    }
    Ok(())
}
