//! The status board: where every process of a run is (computing in
//! superstep `s`, waiting in the sync that ends it, ended), and whether the
//! run's error was printed.
//!
//! One small shared mapping per run, written with relaxed stores to each
//! process's own cache line (two per sync). It serves three readers:
//!
//! - a process that waited past the run's **deadline** names the processes
//!   that never arrived and where they were last seen
//!   ([`ErrorKind::Deadline`](crate::ErrorKind::Deadline));
//! - the **processes** engine: the board is mapped before the fork, so every
//!   process, and the monitor naming a dead one, sees the others;
//! - **`bsprun`**: when it passes a memory file descriptor in
//!   `BSPLIB_STATUS_FD`, the first run of the program maps its board there,
//!   so that the launcher can say who waits where on Ctrl-C, and name the
//!   processes and supersteps of a program killed by a signal that no
//!   handler can catch (`SIGKILL`), once nothing of the program is left to
//!   say it.
//!
//! Layout (native endianness, read by `bsprun` through [`describe_fd`]):
//! a 64-byte header (`MAGIC`, `nprocs`, the report state of
//! [`Reported`]), then one 64-byte entry per process: a word
//! `superstep << 2 | state`, then (`processes` engine) its OS process id.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Reported;

const MAGIC: u64 = u64::from_le_bytes(*b"BSPSTAT1");
const LINE: usize = 64;

/// What a process is doing, in the low two bits of its entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Running its own code in a superstep.
    Computing = 0,
    /// Waiting in the sync that ends its superstep.
    Syncing = 1,
    /// Returned from the SPMD function (`bsp_end`).
    Ended = 2,
    /// Not started yet.
    Starting = 3,
}

#[repr(C)]
struct Header {
    magic: AtomicU64,
    nprocs: AtomicU64,
    reported: Reported,
}

/// The board of one run (see the module documentation).
pub(crate) struct Board {
    ptr: NonNull<u8>,
    len: usize,
    nprocs: usize,
}

// SAFETY: the mapping is only accessed through atomics.
unsafe impl Send for Board {}
// SAFETY: as above.
unsafe impl Sync for Board {}

/// Claims `BSPLIB_STATUS_FD` for the first run of this OS process.
static STATUS_FD_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Board {
    /// A board for `nprocs` processes: on the file descriptor `bsprun`
    /// passed (first run of the program only), else anonymous shared memory.
    pub(crate) fn new(nprocs: usize) -> Result<Self, String> {
        let len = LINE * (nprocs + 1);
        let fd = std::env::var("BSPLIB_STATUS_FD")
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok())
            .filter(|&fd| is_status_fd(fd))
            .filter(|_| !STATUS_FD_TAKEN.swap(true, Ordering::Relaxed));
        // SAFETY: ftruncate on a descriptor we were handed only resizes that
        // file; a failure (not a file) falls back to anonymous memory.
        let fd = fd.filter(|&fd| unsafe { libc::ftruncate(fd, len as libc::off_t) } == 0);
        let (flags, fd) = match fd {
            Some(fd) => (libc::MAP_SHARED, fd),
            None => (libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1),
        };
        // SAFETY: a fresh mapping of `len` bytes; no existing memory is
        // affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "mmap of the status board ({len} bytes): {}",
                std::io::Error::last_os_error()
            ));
        }
        let board = Board {
            ptr: NonNull::new(p.cast()).ok_or("mmap returned null")?,
            len,
            nprocs,
        };
        let h = board.header();
        h.nprocs.store(nprocs as u64, Ordering::Relaxed);
        for pid in 0..nprocs {
            board.set(pid, 0, State::Starting);
        }
        h.magic.store(MAGIC, Ordering::Release);
        Ok(board)
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a header-sized, page-aligned
        // line of atomics (zero is a valid value of each).
        unsafe { &*self.ptr.as_ptr().cast::<Header>() }
    }

    fn entry(&self, pid: usize) -> &AtomicU64 {
        assert!(pid < self.nprocs);
        // SAFETY: entry `pid` is line `pid + 1` of the mapping, in bounds
        // (checked above), 64-aligned.
        unsafe { &*self.ptr.as_ptr().add(LINE * (pid + 1)).cast::<AtomicU64>() }
    }

    /// Process `pid` is now in `state` in superstep `superstep`.
    #[inline]
    pub(crate) fn set(&self, pid: usize, superstep: u64, state: State) {
        self.entry(pid)
            .store(superstep << 2 | state as u64, Ordering::Relaxed);
    }

    /// Notes process `pid`'s OS process id (the second word of its line),
    /// for the processes that read its memory (`cma.rs`). Written before
    /// its first sync; read by others after a barrier.
    pub(crate) fn set_os_pid(&self, pid: usize, os_pid: libc::pid_t) {
        self.os_word(pid).store(os_pid as u64, Ordering::Relaxed);
    }

    /// Process `pid`'s OS process id, as it noted it.
    pub(crate) fn os_pid(&self, pid: usize) -> libc::pid_t {
        self.os_word(pid).load(Ordering::Relaxed) as libc::pid_t
    }

    fn os_word(&self, pid: usize) -> &AtomicU64 {
        let entry: *const AtomicU64 = self.entry(pid);
        // SAFETY: the second 8 bytes of process `pid`'s 64-byte line, in
        // bounds (`entry` checked `pid`), aligned.
        unsafe { &*entry.add(1) }
    }

    /// Process `pid`'s word (`superstep << 2 | state`).
    #[cfg_attr(not(feature = "raw"), allow(dead_code))]
    pub(crate) fn word(&self, pid: usize) -> &AtomicU64 {
        self.entry(pid)
    }

    /// Where process `pid` was last seen.
    pub(crate) fn get(&self, pid: usize) -> (u64, State) {
        decode(self.entry(pid).load(Ordering::Relaxed))
    }

    /// Who prints the run's error (shared by every process of the run, and
    /// seen by `bsprun`).
    pub(crate) fn reported(&self) -> &Reported {
        &self.header().reported
    }

    /// Notes that process `pid` waits in barrier A of `superstep` past its
    /// fence (`Some`), or no longer (the third word of its line:
    /// `superstep + 1`, or 0).
    pub(crate) fn set_fenced(&self, pid: usize, superstep: Option<u64>) {
        let v = superstep.map_or(0, |s| s.wrapping_add(1));
        self.fence_word(pid).store(v, Ordering::Release);
    }

    /// The superstep in whose barrier A process `pid` waits past its fence.
    pub(crate) fn fenced(&self, pid: usize) -> Option<u64> {
        self.fence_word(pid).load(Ordering::Acquire).checked_sub(1)
    }

    fn fence_word(&self, pid: usize) -> &AtomicU64 {
        let entry: *const AtomicU64 = self.entry(pid);
        // SAFETY: the third 8 bytes of process `pid`'s 64-byte line, in
        // bounds (`entry` checked `pid`), aligned.
        unsafe { &*entry.add(2) }
    }
}

/// The processes of `0..nprocs` that have not arrived at the sync ending
/// `superstep`, with where each was last seen (`at`), as a sentence.
pub(crate) fn laggards_of(
    nprocs: usize,
    superstep: u64,
    at: impl Fn(usize) -> (u64, State),
) -> String {
    let missing: Vec<String> = (0..nprocs)
        .filter_map(|pid| {
            let (s, state) = at(pid);
            let arrived = s > superstep || (s == superstep && state == State::Syncing);
            (!arrived).then(|| format!("process {pid} ({})", where_(s, state)))
        })
        .collect();
    if missing.is_empty() {
        "every process arrived, but the barrier did not complete".into()
    } else {
        format!("never arrived: {}", missing.join(", "))
    }
}

/// Whether `fd` is the memory file `bsprun` made (never resize a file of
/// the program's own that happens to have the number).
fn is_status_fd(fd: i32) -> bool {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .is_ok_and(|target| target.to_string_lossy().starts_with("/memfd:bsplib-status"))
}

impl Drop for Board {
    fn drop(&mut self) {
        // SAFETY: the mapping was created by `new`; nothing borrowed from it
        // outlives the board.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

pub(crate) fn decode(word: u64) -> (u64, State) {
    let state = match word & 3 {
        0 => State::Computing,
        1 => State::Syncing,
        2 => State::Ended,
        _ => State::Starting,
    };
    (word >> 2, state)
}

/// "computing in superstep 3", "waiting in bsp_sync of superstep 3", ...
fn where_(superstep: u64, state: State) -> String {
    match state {
        State::Computing => format!("computing in superstep {superstep}"),
        State::Syncing => format!("waiting in bsp_sync of superstep {superstep}"),
        State::Ended => format!("ended in superstep {superstep}"),
        State::Starting => "not started".into(),
    }
}

/// What the board in the memory file `fd` says (for `bsprun`): whether the
/// run's error was printed, and for each process its superstep and where
/// it was, as a `process <pid>: <where>` phrase. `None` if no run mapped a
/// board there.
#[cfg_attr(not(feature = "raw"), allow(dead_code))]
pub(crate) fn describe_fd(fd: i32) -> Option<(bool, Vec<(u64, String)>)> {
    // SAFETY: fstat writes the live struct it is given.
    let size = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut st) == 0).then_some(st.st_size as usize)?
    };
    if size < 2 * LINE {
        return None;
    }
    // SAFETY: a fresh read-only mapping of the whole file.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let word = |i: usize| {
        // SAFETY: `i * 8 < size` (checked by the callers below); the mapping
        // is 8-aligned; the library writes these words atomically.
        unsafe { (*p.cast::<u8>().add(i * 8).cast::<AtomicU64>()).load(Ordering::Acquire) }
    };
    let result = (word(0) == MAGIC).then(|| {
        let nprocs = (word(1) as usize).min(size / LINE - 1);
        // SAFETY: the `Reported` word follows `magic` and `nprocs`.
        let reported = unsafe { (*p.cast::<u8>().add(16).cast::<Reported>()).is_claimed() };
        let places = (0..nprocs)
            .map(|pid| {
                let (s, state) = decode(word((pid + 1) * LINE / 8));
                (s, format!("process {pid}: {}", where_(s, state)))
            })
            .collect();
        (reported, places)
    });
    // SAFETY: unmaps the mapping made above; nothing borrowed outlives it.
    unsafe { libc::munmap(p, size) };
    result
}
