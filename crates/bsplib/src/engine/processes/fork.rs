//! Forking the processes of a run: telling this library's forks from the
//! program's own, counting the threads that would not survive a fork, the
//! fork itself, and the forked processes' standard input.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::monitor::{kill_all, monitor};
use super::relay::Relay;
use super::Shared;
use crate::engine::World;
use crate::error::{Error, ErrorKind};

thread_local! {
    /// Set while this thread forks the processes of a run: any other fork
    /// is the program's own, another thread's made meanwhile included
    /// (a flag of the whole OS process took a helper forked by another
    /// thread during a run's start for a BSP process, whose `exit` then
    /// ended that run: `tests/child_processes.rs`, under the test
    /// harness's parallel runs, about one run in 20). The child handler
    /// runs on the forking thread's copy, so it reads that thread's flag
    /// (a constant-initialised `Cell`: a plain load, as a handler run
    /// inside `fork` needs).
    static OWN_FORK: Cell<bool> = const { Cell::new(false) };
}
/// This OS process was forked by the program itself from a BSP process (a
/// helper, `popen`, ...): it is not a BSP process and must not touch the run.
static FOREIGN: AtomicBool = AtomicBool::new(false);

extern "C" fn after_fork_in_child() {
    if !OWN_FORK.with(Cell::get) {
        FOREIGN.store(true, Ordering::Relaxed);
    }
}

/// Starts telling this library's forks from the program's own (see
/// [`is_foreign`]); idempotent.
pub(crate) fn watch_forks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a child handler that only stores to an atomic
        // (async-signal-safe, as a handler run inside `fork` must be).
        unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
    });
}

/// True in a process the program forked itself from a BSP process, once
/// [`watch_forks`] was called.
pub(crate) fn is_foreign() -> bool {
    FOREIGN.load(Ordering::Relaxed)
}

/// How long a count of more than one thread is read again before it is
/// believed (see [`threads`]).
const SETTLE: Duration = Duration::from_millis(100);

/// The threads of this OS process, the caller's included, as the kernel
/// counts them (`/proc/self/stat`, field 20); `None` when that cannot be
/// read (no `/proc`): the caller then does not know.
///
/// A thread that was just joined can still be counted for a moment: the
/// kernel wakes its joiner when it lets go of the thread's stack, a few
/// steps before it takes the thread off the count. A program that joins
/// the threads of a `threads` run, or the monitor of an earlier
/// `processes` run, and forks at once must not be refused for them, so a
/// count above one is read again, for up to [`SETTLE`], before it is
/// believed.
pub(crate) fn threads() -> Option<usize> {
    let start = std::time::Instant::now();
    let mut nap = Duration::from_micros(50);
    loop {
        let n = read_threads()?;
        if n <= 1 || start.elapsed() >= SETTLE {
            return Some(n);
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(5));
    }
}

/// One reading of `num_threads` in `/proc/self/stat`.
pub(super) fn read_threads() -> Option<usize> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The second field, the command name in parentheses, may itself hold
    // spaces and parentheses: count fields from the last `)`, which is
    // followed by field 3 (the state); field 20 is 17 fields further.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_ascii_whitespace().nth(17)?.parse().ok()
}

/// Forks processes `1..nprocs` of `world`; returns this process's pid (0 in
/// the caller). Process 0 then runs a thread that reaps the others and
/// stops the run if one dies without ending normally.
pub(crate) fn fork(world: &Arc<World>, shared: &Shared) -> Result<usize, Error> {
    // Buffered output would be written twice, by parent and child: flush
    // Rust's and C's.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // SAFETY: flushing every C stdio stream has no preconditions.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    // Settle the lazily set statics the children read: one that another
    // thread of this program is setting at the fork would stay "being set"
    // forever in the children, whose first reader would then wait for ever
    // (a test harness running runs in parallel hung so, one run in
    // hundreds, in `cma::available`). Settling them here waits for such a
    // thread first.
    let _ = crate::engine::cma::available();
    let _ = crate::engine::cores();
    let parent = std::process::id() as libc::pid_t;
    let startup =
        |detail: String| Error::new(ErrorKind::Startup { detail }, "bsp_begin", 0, 0, None);
    let mut children = shared.children.lock().unwrap_or_else(|p| p.into_inner());
    // The output relay (`relay/`), before anything is forked: its own
    // standard output and error are the run's. Process 0's are relayed
    // too, unless the program has other threads: their output would be
    // taken for process 0's, and another run of theirs would find this
    // one's pipes as its standard output.
    let mut relay = Relay::start(shared.nprocs).map_err(startup)?;
    if let Some(relay) = relay.as_mut() {
        if read_threads().is_none_or(|t| t <= 1) {
            // One that cannot be (a closed standard output) goes on as it
            // is, unrelayed.
            let _ = relay.redirect_self();
        }
    }
    OWN_FORK.with(|f| f.set(true));
    let _own = OwnFork;
    for pid in 1..shared.nprocs {
        let ends = match relay.as_ref().map(|r| r.pipes(pid)).transpose() {
            Ok(ends) => ends,
            Err(detail) => {
                let err = startup(detail);
                world.fail(err.clone());
                kill_all(&children.pids);
                return Err(err);
            }
        };
        // SAFETY: `fork` has no memory-safety preconditions; in the child
        // only this thread exists, and it goes on to run BSP code that
        // allocates (glibc's malloc is fork-safe) and exits with `_exit`.
        match unsafe { libc::fork() } {
            0 => {
                // SAFETY: prctl with PR_SET_PDEATHSIG only sets a signal.
                unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
                // SAFETY: getppid has no preconditions.
                if unsafe { libc::getppid() } != parent {
                    // The parent died before the death signal was armed.
                    // SAFETY: ends this process at once.
                    unsafe { libc::_exit(1) };
                }
                if let (Some(relay), Some(ends)) = (relay.take(), ends) {
                    let tty = relay.tty();
                    relay.leave_in_child();
                    ends.install(tty);
                }
                children.pids.clear();
                return Ok(pid);
            }
            -1 => {
                let err = startup(format!(
                    "fork of process {pid}: {}",
                    std::io::Error::last_os_error()
                ));
                world.fail(err.clone());
                kill_all(&children.pids);
                return Err(err);
            }
            child => children.pids.push(child),
        }
    }
    children.relay = relay;
    let pids = children.pids.clone();
    let watched = Arc::clone(world);
    children.monitor = Some(
        std::thread::Builder::new()
            .name("bsp-monitor".into())
            .spawn(move || monitor(&watched, pids))
            .map_err(|e| startup(format!("monitor thread: {e}")))?,
    );
    Ok(0)
}

/// Clears [`OWN_FORK`] when `fork` returns, whichever way.
struct OwnFork;

impl Drop for OwnFork {
    fn drop(&mut self) {
        OWN_FORK.with(|f| f.set(false));
    }
}

/// Gives a forked process `/dev/null` as standard input: input belongs to
/// process 0.
#[cfg_attr(not(feature = "raw"), allow(dead_code))]
pub(crate) fn detach_stdin() {
    // SAFETY: opening a file and duplicating a descriptor onto 0 only
    // changes this process's descriptor table.
    unsafe {
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if fd >= 0 {
            libc::dup2(fd, 0);
            libc::close(fd);
        }
    }
}
