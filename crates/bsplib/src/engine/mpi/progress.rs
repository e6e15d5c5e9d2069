//! Passive-target progress: a thread that lets MPI move other ranks'
//! one-sided operations on this rank's windows while its BSP process
//! computes (`README.md`, "Progress").
//!
//! Open MPI's one-sided component over TCP (`osc/pt2pt`, the one that
//! works across hosts without UCX) carries a lock, put or get as messages
//! that the *target* must receive: only while the target is inside an MPI
//! call. A window's promise (`bsp_rma.h`: no call of the owner needed)
//! would then hold only on one node (`osc/sm`, plain memory). Measured on
//! two simulated hosts: lock + 8-byte put + unlock while the owner
//! computes 3 s took 3.0 s; with this thread, a few milliseconds.
//!
//! MPI runs with `MPI_THREAD_SERIALIZED` (`osc/pt2pt` refuses
//! `MPI_THREAD_MULTIPLE`: the window fails, measured), so this thread and
//! the BSP process's thread never call MPI at once. The exclusion is one
//! word, [`STATE`]:
//!
//! - the BSP process's thread adds one to its low bits for as long as it
//!   is inside the engine ([`hold`], nested holds count; the high half
//!   counts its entries), and if the progress bit was set, waits until it
//!   clears (one `MPI_Iprobe`, a few microseconds);
//! - the progress thread takes the word only when no hold is in it and no
//!   hold was taken since its last look (compare and swap to the progress
//!   bit), polls once, and clears the bit: a process that calls the
//!   library often progresses MPI itself and is never disturbed, one that
//!   computes is polled for.
//!
//! Holding costs the BSP process's thread two uncontended atomic
//! operations per engine call, whether or not the thread runs. The thread
//! is started by the first window in MPI memory (not node shared memory,
//! where every access is a load or store) and polls only while such a
//! window lives ([`opened`], [`closed`]), every [`PERIOD`]; it parks
//! otherwise. Not started when the program initialised MPI itself (its own
//! MPI calls are not ours to exclude), nor with `BSPLIB_MPI_PROGRESS=0`.
//! Before MPI is finalised or the job aborted, [`shut`] takes the word for
//! good.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;
use std::time::Duration;

use mpi::ffi;

/// The progress thread holds MPI.
const POLLING: u64 = 1 << 31;

/// The BSP process's thread's holds (bits 0 to 30).
const HOLDS: u64 = POLLING - 1;

/// One more entry (the high half counts them, wrapping).
const ENTRY: u64 = 1 << 32;

/// Who is inside MPI: the BSP process's thread's holds ([`HOLDS`]) or the
/// progress thread ([`POLLING`]); and the count of holds taken.
static STATE: AtomicU64 = AtomicU64::new(0);

/// Windows in MPI memory alive on this rank.
static WINDOWS: AtomicUsize = AtomicUsize::new(0);

/// Set once MPI is about to be finalised: the thread never polls again.
static SHUT: AtomicBool = AtomicBool::new(false);

/// Whether the library initialised MPI (then the thread may run).
static OURS: AtomicBool = AtomicBool::new(false);

/// The process that initialised MPI (a child forked from a rank has no
/// progress thread, and whatever the word says was the parent's).
static PID: AtomicI32 = AtomicI32::new(0);

/// The progress thread, once started.
static THREAD: OnceLock<Option<Thread>> = OnceLock::new();

/// How often the thread polls while a window lives: a remote lock, put
/// and unlock need a few of the target's polls.
pub(crate) const PERIOD: Duration = Duration::from_micros(200);

/// The BSP process's thread is inside the engine while this lives.
pub(crate) struct Held(());

/// Excludes the progress thread from MPI until the result is dropped:
/// every engine function that calls MPI holds it (nested holds are fine).
#[must_use]
pub(crate) fn hold() -> Held {
    if STATE.fetch_add(ENTRY + 1, Ordering::Acquire) & POLLING != 0 {
        // The thread is in one `MPI_Iprobe`; it cannot take the word
        // again while a hold is in it. Spin for about that long, then
        // yield: on an oversubscribed node it may be waiting for a core.
        let mut spins = 0u32;
        while STATE.load(Ordering::Acquire) & POLLING != 0 {
            if spins < 2000 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
    Held(())
}

impl Drop for Held {
    fn drop(&mut self) {
        STATE.fetch_sub(1, Ordering::Release);
    }
}

/// Records that MPI was initialised by the library (called once, at its
/// initialisation).
pub(crate) fn ours() {
    OURS.store(true, Ordering::Relaxed);
    PID.store(std::process::id() as i32, Ordering::Relaxed);
    // SAFETY: registers a handler that only stores to atomics (allowed in
    // a forked child of a multi-threaded process).
    unsafe { libc::pthread_atfork(None, None, Some(forked)) };
}

/// In a child forked from this rank: the progress thread is not there,
/// and if it held the word at the fork, nobody would give it back.
extern "C" fn forked() {
    SHUT.store(true, Ordering::Relaxed);
    STATE.fetch_and(!POLLING, Ordering::Relaxed);
}

/// A window in MPI memory was made on this rank: the thread polls (started
/// if this is the first).
pub(crate) fn opened() {
    WINDOWS.fetch_add(1, Ordering::Relaxed);
    if let Some(t) = THREAD.get_or_init(start) {
        t.unpark();
    }
}

/// A window of [`opened`] was freed or dropped.
pub(crate) fn closed() {
    WINDOWS.fetch_sub(1, Ordering::Relaxed);
}

/// MPI is about to be finalised or the job aborted: takes MPI from the
/// progress thread for good (this thread's hold is never released).
pub(crate) fn shut() {
    SHUT.store(true, Ordering::Relaxed);
    if PID.load(Ordering::Relaxed) != std::process::id() as i32 {
        // A forked child: no progress thread here to wait for.
        return;
    }
    std::mem::forget(hold());
}

/// Starts the thread, unless the program owns MPI or the user said no.
fn start() -> Option<Thread> {
    if !OURS.load(Ordering::Relaxed) || std::env::var("BSPLIB_MPI_PROGRESS").is_ok_and(|v| v == "0")
    {
        return None;
    }
    std::thread::Builder::new()
        .name("bsplib-mpi-progress".into())
        .spawn(run)
        .ok()
        .map(|h| h.thread().clone())
}

/// The thread: polls every [`PERIOD`] while a window in MPI memory lives,
/// parks while none does, ends at [`shut`].
fn run() {
    let mut seen = u64::MAX;
    while !SHUT.load(Ordering::Relaxed) {
        if WINDOWS.load(Ordering::Relaxed) == 0 {
            std::thread::park();
            continue;
        }
        poll(&mut seen);
        std::thread::sleep(PERIOD);
    }
}

/// One call into MPI's progress engine, if the BSP process's thread is
/// outside MPI and has not entered it since the last look, `seen` (when
/// it calls, its own calls progress).
fn poll(seen: &mut u64) {
    let now = STATE.load(Ordering::Relaxed);
    let entries = now >> 32;
    if now & (HOLDS | POLLING) != 0 || std::mem::replace(seen, entries) != entries {
        return;
    }
    if STATE
        .compare_exchange(now, now | POLLING, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        return;
    }
    if !SHUT.load(Ordering::Relaxed) {
        let mut flag = 0;
        // SAFETY: MPI is initialised and not finalised (`shut` runs before
        // finalising, and takes the word the thread holds now only after
        // this poll); no other thread calls MPI while the word is held
        // (`MPI_THREAD_SERIALIZED`). A probe of the self communicator
        // matches nothing of the run's and drives MPI's progress engine.
        unsafe {
            ffi::MPI_Iprobe(
                ffi::MPI_ANY_SOURCE,
                ffi::MPI_ANY_TAG,
                ffi::RSMPI_COMM_SELF,
                &mut flag,
                ffi::RSMPI_STATUS_IGNORE,
            );
        }
    }
    STATE.fetch_and(!POLLING, Ordering::Release);
}
