//! The live progress view (issue 15): `bsprun --progress`,
//! `BSPLIB_PROGRESS`, [`Runtime::progress`](crate::Runtime::progress).
//!
//! A monitor thread in process 0's OS process reads the status board
//! (`engine/board.rs`: every process's superstep and whether it computes
//! or waits in its sync) four times a second and draws one line on
//! standard error, in place (a carriage return, then the line, then "erase
//! to the end of the line"):
//!
//! ```text
//! bsplib: superstep 1234 | 410 supersteps/s | slowest: process 3 (computing)
//! ```
//!
//! The superstep count is the least superstep any running process is in
//! (the supersteps everyone finished); the slowest process is one of
//! those, computing while others wait for it if there is one. The rate is
//! over the last two seconds. At the end of the run the line is erased.
//! On `mpi` the board of a rank knows only that rank: rank 0 shows its own
//! superstep and rate, and no slowest process (finding it would cost
//! messages on every sync).
//!
//! Nothing is drawn during the first half second (short runs stay quiet),
//! nor when standard error is not a terminal, unless
//! `BSPLIB_PROGRESS=force`. Off, it costs nothing: no thread, no branch in
//! the sync.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::board::State;
use crate::engine::World;

/// How often the monitor looks at the board, and draws.
const TICK: Duration = Duration::from_millis(50);
const DRAW: Duration = Duration::from_millis(250);
/// Nothing is drawn before this.
const QUIET: Duration = Duration::from_millis(500);
/// The window of the rate.
const WINDOW: Duration = Duration::from_secs(2);

/// What `BSPLIB_PROGRESS` asks for: `None` (unset, empty or `0`: off),
/// `Some(false)` (on when standard error is a terminal), `Some(true)`
/// (`force`: on whatever standard error is).
pub(crate) fn from_env() -> Option<bool> {
    let v = std::env::var("BSPLIB_PROGRESS").ok()?;
    match v.trim() {
        "" | "0" => None,
        "force" | "always" => Some(true),
        _ => Some(false),
    }
}

/// Whether the run's progress view draws (on, and standard error a
/// terminal or forced): then an error line starts by erasing it.
pub(crate) fn draws(world: &World) -> bool {
    // SAFETY: `isatty` has no preconditions.
    world
        .progress()
        .is_some_and(|force| force || unsafe { libc::isatty(terminal()) } == 1)
}

/// Where the view draws: standard error as the run found it (on
/// `processes`, process 0's own is relayed during the run, by whole lines,
/// which would hold the view's lines: they end with a carriage return).
fn terminal() -> std::os::fd::RawFd {
    crate::engine::start::processes::original_stderr()
}

/// The running monitor of this OS process, if any.
struct Monitor {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<()>,
}

static MONITOR: Mutex<Option<Monitor>> = Mutex::new(None);

/// Process 0 of a run with the progress view: starts the monitor (after
/// the fork on `processes`: the thread lives in process 0's OS process).
pub(crate) fn start(world: &Arc<World>) {
    if !draws(world) {
        return;
    }
    finish();
    // A copy of the terminal's descriptor of its own: the relay's copy of
    // standard error is closed at the end of the run, perhaps before the
    // thread is joined.
    // SAFETY: duplicates a descriptor of this process.
    let copy = unsafe { libc::fcntl(terminal(), libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return;
    }
    // SAFETY: the copy was just made, and is owned here only.
    let err = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(copy) };
    let stop = Arc::new(AtomicBool::new(false));
    let (world, flag) = (Arc::clone(world), Arc::clone(&stop));
    let spawned = std::thread::Builder::new()
        .name("bsp-progress".into())
        .spawn(move || watch(&world, &flag, err));
    if let Ok(handle) = spawned {
        *MONITOR.lock().unwrap_or_else(|p| p.into_inner()) = Some(Monitor { stop, handle });
        register_exit_hook();
    }
}

/// Stops the monitor of this OS process, if one runs, and erases its line
/// (at the end of a run; for C, also at the program's exit).
pub(crate) fn finish() {
    let monitor = MONITOR.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(m) = monitor {
        m.stop.store(true, Ordering::Relaxed);
        let _ = m.handle.join();
    }
}

/// C programs end with `exit`: the line is erased there too.
fn register_exit_hook() {
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    extern "C" fn at_exit() {
        finish();
    }
    if !REGISTERED.swap(true, Ordering::Relaxed) {
        // SAFETY: registers a function without arguments that only joins
        // the monitor thread.
        unsafe { libc::atexit(at_exit) };
    }
}

/// The monitor thread.
fn watch(world: &World, stop: &AtomicBool, mut err: std::fs::File) {
    let begun = Instant::now();
    let mut last_draw: Option<Instant> = None;
    let mut history: VecDeque<(Instant, u64)> = VecDeque::new();
    // On `mpi` only this rank's entry is known.
    let seen = if world.rendezvous().is_some() {
        1
    } else {
        world.nprocs()
    };
    while !stop.load(Ordering::Relaxed) && !world.is_stopped() {
        std::thread::sleep(TICK);
        let now = Instant::now();
        let Some(status) = Status::read(world, seen) else {
            break; // every process ended
        };
        history.push_back((now, status.superstep));
        while history
            .front()
            .is_some_and(|&(t, _)| now.duration_since(t) > WINDOW)
        {
            history.pop_front();
        }
        if now.duration_since(begun) < QUIET || last_draw.is_some_and(|t| now - t < DRAW) {
            continue;
        }
        let rate = match history.front() {
            Some(&(t, s)) if now > t => {
                (status.superstep - s.min(status.superstep)) as f64
                    / now.duration_since(t).as_secs_f64()
            }
            _ => 0.0,
        };
        let line = status.line(rate, seen > 1);
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
        last_draw = Some(now);
    }
    if last_draw.is_some() {
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}

/// What the board says.
struct Status {
    superstep: u64,
    slowest: usize,
    computing: bool,
}

impl Status {
    /// The least superstep of the processes still running, and one of the
    /// processes there (computing if one is); `None` if none runs.
    fn read(world: &World, seen: usize) -> Option<Status> {
        let board = world.board();
        let mut best: Option<Status> = None;
        let mut any = false;
        for pid in 0..seen {
            let (superstep, state) = board.get(pid);
            if state == State::Ended {
                continue;
            }
            any = true;
            let computing = state == State::Computing;
            let better = best.as_ref().is_none_or(|b| {
                superstep < b.superstep || (superstep == b.superstep && computing && !b.computing)
            });
            if better {
                best = Some(Status {
                    superstep,
                    slowest: pid,
                    computing,
                });
            }
        }
        if any {
            best
        } else {
            None
        }
    }

    /// The line drawn: `bsplib: superstep S | R supersteps/s | slowest:
    /// process P (computing)`.
    fn line(&self, rate: f64, slowest: bool) -> String {
        let rate = if rate >= 100.0 {
            format!("{rate:.0}")
        } else {
            format!("{rate:.1}")
        };
        let mut line = format!("bsplib: superstep {} | {rate} supersteps/s", self.superstep);
        if slowest {
            let doing = if self.computing {
                "computing"
            } else {
                "in bsp_sync"
            };
            line.push_str(&format!(" | slowest: process {} ({doing})", self.slowest));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::Status;

    #[test]
    fn the_line_names_the_superstep_the_rate_and_the_slowest_process() {
        let s = Status {
            superstep: 12,
            slowest: 3,
            computing: true,
        };
        assert_eq!(
            s.line(410.4, true),
            "bsplib: superstep 12 | 410 supersteps/s | slowest: process 3 (computing)"
        );
        assert_eq!(
            s.line(2.25, false),
            "bsplib: superstep 12 | 2.2 supersteps/s"
        );
    }
}
