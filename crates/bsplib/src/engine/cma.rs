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
//! **Chosen by measurement, per size, on the machine it runs on**
//! (`BSPLIB_CMA` unset or `auto`). Which copy is faster depends on the
//! machine's memory: on the project's 2-core VM the kernel's copy (it
//! pins every page) was slower than two `memcpy`s through shared memory
//! at every size in its fast mode (`peers_bench hpput`, fastest of 40
//! supersteps, µs, two copies / kernel copy: 64 KiB 1.4–2.6 / 5.9, 1 MiB
//! 31.8–32.3 / 67.5–68.8, 4 MiB 152–188 / 282), and 2.4x faster in its
//! slow mode, where a `memcpy` takes twice as long (2026-11-28, the peers
//! driver, medians of 5 rounds: 1 MiB 133.8 / 54.6, 16 MiB 4161 / 1767).
//! So the first transfer of each size class (from 64 KiB, 256 KiB, 1 MiB,
//! 4 MiB) times both on this process's own memory, at twice the class's
//! size, three times each, interleaved: two `memcpy`s (into a buffer and
//! out of it) against one `process_vm_readv` ([`chosen`]); a few
//! milliseconds once per class and OS process (a forked process inherits
//! what its parent measured), nothing for runs without large transfers.
//! `BSPLIB_CMA=1` always takes the kernel's copy from 64 KiB, `0` never.
//! Where it needs the run's processes to consent to being traced by any
//! process of the user (Yama's `ptrace_scope = 1`), only `BSPLIB_CMA=1`
//! turns it on. Large `Area`s need neither: they live in memory every
//! process maps (`area_memory.rs`).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// `BSPLIB_CMA`: `1` on, `0` off, anything else (unset, `auto`) chosen
/// by measurement.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Off,
    Auto,
    On,
}

fn mode() -> Mode {
    static MODE: OnceLock<Mode> = OnceLock::new();
    *MODE.get_or_init(
        || match std::env::var("BSPLIB_CMA").as_deref().map(str::trim) {
            Ok("0") => Mode::Off,
            Ok("1") => Mode::On,
            _ => Mode::Auto,
        },
    )
}

/// Whether this OS process may read other processes' memory with
/// `process_vm_readv`: not `BSPLIB_CMA=0`; Yama's scope at most 1 with
/// `BSPLIB_CMA=1`, none or 0 otherwise (no consent asked for); and a
/// probe of our own memory (which fails under seccomp filters that refuse
/// the call). Probed once per OS process. A receiver reads a record
/// naming its sender's memory whenever this holds; whether a sender or a
/// requester takes this path for a transfer is [`chosen`].
pub(crate) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let scope = yama_scope();
        let allowed = match mode() {
            Mode::Off => false,
            Mode::On => scope.is_none_or(|s| s <= 1),
            Mode::Auto => scope.is_none_or(|s| s == 0),
        };
        if !allowed {
            return false;
        }
        let src = [0x5au8; 64];
        let mut dst = [0u8; 64];
        // SAFETY: both buffers are live locals of 64 bytes.
        let ok = unsafe { read(libc::getpid(), src.as_ptr().addr(), dst.as_mut_ptr(), 64) };
        ok.is_ok() && dst == src
    })
}

/// The lower bounds of the size classes measured apart.
const CLASSES: [usize; 4] = [64 << 10, 256 << 10, 1 << 20, 4 << 20];

/// Whether a transfer of `len` bytes (at least the first class's bound)
/// should take the kernel's copy rather than two copies through shared
/// memory, [`available`] being true: `BSPLIB_CMA=1` always; by default,
/// as measured for its size class (module docs).
pub(crate) fn chosen(len: usize) -> bool {
    // Per class: 0 not measured yet, 1 two copies, 2 the kernel's. Not a
    // `OnceLock`: one being set by another thread when a run forks would
    // stay "being set" in the forked processes, whose first large transfer
    // would wait for ever; two threads measuring at once both store.
    static CHOICE: [AtomicU8; CLASSES.len()] = [const { AtomicU8::new(0) }; CLASSES.len()];
    match mode() {
        Mode::Off => false,
        Mode::On => true,
        Mode::Auto => {
            let choice = &CHOICE[class(len)];
            match choice.load(Ordering::Relaxed) {
                0 => {
                    let kernel = kernel_copy_faster(2 * CLASSES[class(len)]);
                    choice.store(if kernel { 2 } else { 1 }, Ordering::Relaxed);
                    kernel
                }
                c => c == 2,
            }
        }
    }
}

/// The size class of a transfer of `len` bytes (below the first bound:
/// the first).
fn class(len: usize) -> usize {
    CLASSES.iter().rposition(|&c| len >= c).unwrap_or(0)
}

/// Times two `memcpy`s of `n` bytes (into a buffer, out of it) against
/// one `process_vm_readv` of them from this process, three times each,
/// interleaved: whether the kernel's best time is the lower.
fn kernel_copy_faster(n: usize) -> bool {
    use std::time::{Duration, Instant};
    let src = vec![0x5au8; n];
    // Written, so that no page is first touched while timed.
    let (mut mid, mut dst) = (vec![1u8; n], vec![1u8; n]);
    let (mut two, mut one) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        let t = Instant::now();
        mid.copy_from_slice(&src);
        dst.copy_from_slice(std::hint::black_box(&mid));
        two = two.min(t.elapsed());
        std::hint::black_box(&dst);
        let t = Instant::now();
        // SAFETY: `dst` is a live buffer of `n` bytes of ours, `src` too.
        let read = unsafe { read(libc::getpid(), src.as_ptr().addr(), dst.as_mut_ptr(), n) };
        if read.is_err() {
            return false;
        }
        one = one.min(t.elapsed());
        std::hint::black_box(&dst);
    }
    one < two
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_fall_in_their_classes() {
        assert_eq!(class(0), 0);
        assert_eq!(class(64 << 10), 0);
        assert_eq!(class((256 << 10) - 1), 0);
        assert_eq!(class(256 << 10), 1);
        assert_eq!(class(1 << 20), 2);
        assert_eq!(class((4 << 20) - 1), 2);
        assert_eq!(class(4 << 20), 3);
        assert_eq!(class(usize::MAX), 3);
    }
}
