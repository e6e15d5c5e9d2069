//! Process 0's monitor of a `processes` run: it reaps the forked
//! processes, stops the run when one dies without ending normally (naming
//! how it died), and kills those that linger once the run failed.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Shared;
use crate::engine::World;
use crate::error::{Error, ErrorKind};

/// Process 0: waits until every forked process exited (killing them if the
/// run failed and they linger), then returns.
pub(crate) fn join(shared: &Shared) {
    let monitor = shared
        .children
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .monitor
        .take();
    if let Some(m) = monitor {
        let _ = m.join();
    }
    // Every process has exited: the relay writes what it holds, and
    // process 0's output goes where it went before the run.
    let relay = shared
        .children
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .relay
        .take();
    if let Some(relay) = relay {
        relay.finish(true);
    }
}

pub(super) fn kill_all(pids: &[libc::pid_t]) {
    for &p in pids {
        // SAFETY: sending a signal to our own child has no memory effects.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
}

/// How long processes may take to exit by themselves once the run failed,
/// before they are killed. A process that waits in the library leaves at
/// once; one that computes leaves at its next call. 200 ms was too short
/// on a loaded two-core machine: a process not scheduled in that time was
/// killed before it could return its `Stopped` (a test of CI saw one of
/// four processes vanish so, once).
const GRACE: Duration = Duration::from_secs(1);

/// Reaps the forked processes `pids` (process `i + 1` is `pids[i]`).
pub(super) fn monitor(world: &World, pids: Vec<libc::pid_t>) {
    let shared = world.shared().expect("monitor of a processes run");
    let mut alive: Vec<(usize, libc::pid_t)> =
        pids.iter().enumerate().map(|(i, &p)| (i + 1, p)).collect();
    let mut nap = Duration::from_micros(100);
    let mut stopped_at = None;
    let mut rounds = 0u32;
    while !alive.is_empty() {
        rounds = rounds.wrapping_add(1);
        // One `waitpid` per process is p system calls a round (p = 1024:
        // 2% of a core): only when a child is waiting to be reaped (and,
        // for safety, every 64th round).
        if rounds % 64 == 0 || child_exited() {
            reap(world, shared, &mut alive);
        }
        if world.is_stopped() {
            let since = *stopped_at.get_or_insert_with(std::time::Instant::now);
            if since.elapsed() > GRACE {
                // Not while a process prints the run's error.
                world.reported().wait(Duration::from_secs(1));
                kill_all(&alive.iter().map(|&(_, p)| p).collect::<Vec<_>>());
            }
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(5));
    }
    if world.is_stopped() && shared.exit_on_stop.load(Ordering::Relaxed) {
        world.report();
        // Everything relayed is written before the program ends (not
        // Rust's output buffer: process 0's thread may hold its lock).
        let relay = shared
            .children
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .relay
            .take();
        if let Some(relay) = relay {
            relay.finish(false);
        }
        // SAFETY: flushing C stdio has no preconditions; `_exit` ends the
        // process (every other process of the run has exited).
        unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::_exit(1);
        }
    }
}

/// True if a child of this OS process has ended and waits to be reaped
/// (any child: the program's own too), or if that cannot be told; reaps
/// nothing.
fn child_exited() -> bool {
    // SAFETY: an all-zero `siginfo_t` is a valid value, which `waitid`
    // overwrites (or leaves zero when no child has ended: WNOHANG); with
    // WNOWAIT the child stays waitable.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        r != 0 || info.si_signo != 0
    }
}

/// Reaps the processes of `alive` that ended; one that did not end
/// normally stops the run with [`ErrorKind::Died`].
fn reap(world: &World, shared: &Shared, alive: &mut Vec<(usize, libc::pid_t)>) {
    alive.retain(|&(pid, os_pid)| {
        let mut status = 0;
        // SAFETY: waits for our own child without blocking; `status`
        // is a live int.
        let r = unsafe { libc::waitpid(os_pid, &mut status, libc::WNOHANG) };
        if r == 0 {
            return true;
        }
        if r == os_pid && !(shared.slot(pid).done.load(Ordering::Acquire) && exited_ok(status)) {
            world.fail(Error::new(
                ErrorKind::Died {
                    detail: death(pid, status),
                },
                "the SPMD function",
                pid,
                world.board().get(pid).0,
                None,
            ));
        }
        false
    });
}

fn exited_ok(status: libc::c_int) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

/// What became of process `pid`, from its wait status.
fn death(pid: usize, status: libc::c_int) -> String {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        // SAFETY: strsignal returns a pointer to a static or thread-local
        // string, valid until the next call on this thread.
        let name = unsafe {
            let s = libc::strsignal(sig);
            if s.is_null() {
                String::from("unknown signal")
            } else {
                std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
            }
        };
        format!("process {pid} was killed by signal {sig} ({name})")
    } else {
        format!(
            "process {pid} exited with status {} without ending its SPMD part normally",
            libc::WEXITSTATUS(status)
        )
    }
}
