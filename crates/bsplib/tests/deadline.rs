//! Runs that would wait for ever end (issue 26): by the run's deadline,
//! naming the processes that never arrived and where each was last seen,
//! on every engine (`mpi` included: `engine/mpi/README.md`, "The
//! deadline"), and a counter wait that can never complete fails the run at
//! once, naming the wait.
//!
//! The deadline scenarios end the program with a non-zero status (on
//! `mpi` the job ends: a process that never arrives cannot take part in
//! returning the error), so each runs in a child process: this binary,
//! started again with `DEADLINE_CHILD` naming the scenario (under
//! `mpirun` for `mpi`: `BSPLIB_TEST_ENGINES=mpi`, which CI's mpi step
//! sets for this file; `BSPLIB_MPIRUN` and `BSPLIB_MPIRUN_FLAGS` as for
//! `bsprun`). The counter scenarios return their error as a value on
//! every engine and run in place (under `mpirun` too: CI's mpi step runs
//! this binary there as well).

mod common;

use std::cell::Cell;
use std::process::{Command, Output};
use std::rc::Rc;
use std::time::{Duration, Instant};

use bsplib::am::{CounterId, Counters, Handler, Handlers, Landing};
use bsplib::{Bsp, Engine, Error, ErrorKind, Runtime};
use common::{configurations, expect_error, mpi_mode};

/// The child's run: process 1 never reaches the sync of superstep 1 (or,
/// for `counters`, every process waits for a counter nobody moves), with
/// a deadline of one second.
fn child_scenario(bsp: &mut Bsp, what: &str) -> Result<(), Error> {
    bsp.sync()?;
    match what {
        "loop" if bsp.pid() == 1 => {
            // An endless loop that makes no library call.
            let spins = std::hint::black_box(Cell::new(0u64));
            loop {
                spins.set(spins.get().wrapping_add(1));
            }
        }
        "stop" if bsp.pid() == 1 => {
            // SAFETY: raise(3) stops this process (a signal to this very
            // thread, so before the call returns: `kill(getpid())` may be
            // taken by another thread, and this one run on a while); no
            // memory is involved.
            unsafe { libc::raise(libc::SIGSTOP) };
        }
        "counters" => {
            bsp.am().init(Handlers::new())?;
            let c = bsp.am().counter()?;
            bsp.am().wait_counter(&c, 1)?;
        }
        _ => {}
    }
    bsp.sync()
}

/// The child side: runs the scenario `DEADLINE_CHILD` names on the engine
/// `DEADLINE_ENGINE` names (under `mpirun`: `mpi`, as many processes as
/// ranks), and ends as a program returning its error would.
#[test]
fn child() {
    let Ok(what) = std::env::var("DEADLINE_CHILD") else {
        return;
    };
    let engine = match std::env::var("DEADLINE_ENGINE").as_deref() {
        Ok("processes") => Engine::Processes,
        Ok("mpi") => Engine::Mpi,
        _ => Engine::Threads,
    };
    let p = if engine == Engine::Mpi { usize::MAX } else { 2 };
    let runtime = Runtime::new(p)
        .engine(engine)
        .deadline(Some(Duration::from_secs(1)));
    // SAFETY: the other thread of this child is libtest's, which holds no
    // lock the SPMD function needs (its output is captured off).
    let runtime = unsafe { runtime.fork_with_threads() };
    let r = runtime.run(move |bsp| child_scenario(bsp, &what));
    if let Err(e) = r {
        eprintln!("bsplib: {e}");
        std::process::exit(1);
    }
}

/// The engines of the child runs: `threads` and `processes`, and `mpi`
/// when `BSPLIB_TEST_ENGINES` names it (it keeps only those it names).
fn engines() -> Vec<&'static str> {
    let only = std::env::var("BSPLIB_TEST_ENGINES").unwrap_or_default();
    let mut v = vec!["threads", "processes"];
    if !only.is_empty() {
        v.push("mpi");
        v.retain(|e| only.split(',').any(|o| o.trim() == *e));
    }
    v
}

/// Runs the child scenario `what` on `engine` with two processes: its
/// output, and how long it took.
fn run_child(engine: &str, what: &str) -> (Output, Duration) {
    let exe = std::env::current_exe().expect("the test binary");
    let mut cmd = if engine == "mpi" {
        let mpirun = std::env::var("BSPLIB_MPIRUN").unwrap_or_else(|_| "mpirun".into());
        let flags = std::env::var("BSPLIB_MPIRUN_FLAGS")
            .unwrap_or_else(|_| "--oversubscribe --bind-to none".into());
        let mut c = Command::new(mpirun);
        c.args(["-np", "2"]).args(flags.split_whitespace());
        for var in ["BSPLIB_ENGINE", "DEADLINE_CHILD", "DEADLINE_ENGINE"] {
            c.args(["-x", var]);
        }
        c.arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env("DEADLINE_CHILD", what)
        .env("DEADLINE_ENGINE", engine)
        .env("BSPLIB_ENGINE", engine)
        .env_remove("BSPLIB_DEADLINE")
        .stdin(std::process::Stdio::null());
    let start = Instant::now();
    let out = cmd.output().expect("the child runs");
    (out, start.elapsed())
}

/// Checks that a child run failed within `within`, with one `bsplib:`
/// line having every one of `all`.
fn ended_naming(engine: &str, what: &str, within: Duration, all: &[&str]) {
    let (out, took) = run_child(engine, what);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "{engine} {what}: the run must fail ({:?}):\n{stderr}",
        out.status
    );
    assert!(
        took < within,
        "{engine} {what}: took {took:?}, more than {within:?}:\n{stderr}"
    );
    let named = |l: &&str| l.starts_with("bsplib: ") && all.iter().all(|w| l.contains(w));
    assert!(
        stderr.lines().any(|l| named(&l)),
        "{engine} {what}: no line naming {all:?}:\n{stderr}"
    );
}

/// Not on `threads` from Rust: a thread cannot be ended, and the run
/// returns once every process did (the C interface ends the program at
/// the error: `bsplib-c`'s `err_deadline_loop.c` runs there too).
#[test]
fn a_process_in_an_endless_loop_is_named_once_the_deadline_passes() {
    if mpi_mode() || std::env::var_os("DEADLINE_CHILD").is_some() {
        return;
    }
    for engine in engines().into_iter().filter(|&e| e != "threads") {
        ended_naming(
            engine,
            "loop",
            Duration::from_secs(30),
            &[
                "bsp_sync (process 0, superstep 1, ",
                "deadline.rs:",
                "waited 1.000 s (the run's deadline): never arrived: process 1 (computing in superstep 1)",
            ],
        );
    }
}

/// A stopped process (`SIGSTOP`): on `threads` it would stop every
/// process (one OS process), so not there.
#[test]
fn a_stopped_process_is_named_once_the_deadline_passes() {
    if mpi_mode() || std::env::var_os("DEADLINE_CHILD").is_some() {
        return;
    }
    for engine in engines().into_iter().filter(|&e| e != "threads") {
        ended_naming(
            engine,
            "stop",
            Duration::from_secs(30),
            &[
                "bsp_sync (process 0, superstep 1, ",
                "never arrived: process 1 (computing in superstep 1)",
            ],
        );
    }
}

/// Every process waits for a counter nobody moves: none is in its sync,
/// so nothing is certain (one may still be about to send); the deadline
/// ends it, naming the counter wait.
#[test]
fn counter_waits_that_wait_for_each_other_end_by_the_deadline() {
    if mpi_mode() || std::env::var_os("DEADLINE_CHILD").is_some() {
        return;
    }
    for engine in engines() {
        ended_naming(
            engine,
            "counters",
            Duration::from_secs(30),
            &[
                "am_wait_counter (process ",
                "superstep 2, ",
                "deadline.rs:",
                "waited 1.000 s (the run's deadline): never arrived: ",
            ],
        );
    }
}

/// Whether the in-place scenarios have an engine here (none when
/// `BSPLIB_TEST_ENGINES=mpi` outside `mpirun`: the child runs' turn).
fn in_place() -> bool {
    mpi_mode() || !configurations().is_empty()
}

/// The error of a counter wait that can never complete, on process 0.
fn counter_never_moves(n: usize, e: &Error) {
    assert!(n >= 2);
    let ErrorKind::AmMismatch { detail } = e.kind() else {
        panic!("expected AmMismatch, got: {e}");
    };
    assert!(
        detail.contains("waits for a counter to reach 1 (it is 0) that can never move"),
        "{e}"
    );
    assert_eq!((e.call(), e.pid()), ("am_wait_counter", 0), "{e}");
    let loc = e.location().unwrap_or_else(|| panic!("no line: {e}"));
    assert!(loc.file().ends_with("deadline.rs"), "{e}");
}

/// Process 0 waits for a counter that nothing moves while every other
/// process waits in its sync: certain, found at once (no deadline).
#[test]
fn a_counter_wait_while_the_others_sync_fails_the_run() {
    if !in_place() {
        return;
    }
    expect_error(
        2,
        |bsp| {
            bsp.am().init(Handlers::new())?;
            if bsp.pid() == 0 {
                let c = bsp.am().counter()?;
                bsp.am().wait_counter(&c, 1)?;
            }
            bsp.sync()
        },
        counter_never_moves,
    );
}

/// The case `ACTIVE_MESSAGES.md` listed as known and not solved: process
/// 0 waits for a counter that the answer of process 1's completion handler
/// would move, while process 1 waits in its sync, where that answer is
/// held until the sync returns (which needs process 0).
#[test]
fn a_counter_only_a_held_answer_would_move_fails_the_run() {
    if !in_place() {
        return;
    }
    expect_error(
        2,
        |bsp| {
            let me = bsp.pid();
            let mut hs = Handlers::new();
            let answer: Rc<Cell<Option<Handler<u8, u8>>>> = Rc::new(Cell::new(None));
            let reply = answer.clone();
            let ask = hs.add::<CounterId, u8>("ask", move |a| {
                let id = a.header()[0];
                let answer = reply.get().expect("registered");
                Landing::none().then(move |d| {
                    d.send(d.src(), answer, &[], &[], Counters::none().tgt(id))
                        .expect("an answer can be sent");
                })
            });
            answer.set(Some(hs.add::<u8, u8>("answer", |_| Landing::none())));
            bsp.am().init(hs)?;
            if me == 0 {
                // Process 1 is in its sync by now (it goes straight there).
                std::thread::sleep(Duration::from_millis(300));
                let c = bsp.am().counter()?;
                bsp.am().send(1, ask, &[c.id()], &[], Counters::none())?;
                bsp.am().wait_counter(&c, 1)?;
            }
            bsp.sync()
        },
        counter_never_moves,
    );
}

/// A deadline that is not reached changes nothing, on every engine (on
/// `mpi` under `mpirun`): a process late by less than the deadline, and a
/// counter wait that a process computing meanwhile satisfies (the waiting
/// process asks the others where they are while it waits: the one that
/// computes does not answer, so nothing is concluded).
#[test]
fn a_deadline_that_is_not_reached_changes_nothing() {
    if !in_place() {
        return;
    }
    for (engine, p) in configurations() {
        let runtime = Runtime::new(p)
            .engine(engine)
            .return_everywhere(true)
            .deadline(Some(Duration::from_secs(20)));
        // SAFETY: as in `common::run_on`: the threads of the test harness
        // hold no lock a forked process takes.
        let runtime = unsafe { runtime.fork_with_threads() };
        let r = runtime.run(|bsp| {
            let (me, n) = (bsp.pid(), bsp.nprocs());
            for _ in 0..20 {
                bsp.sync()?;
            }
            if me == n - 1 {
                std::thread::sleep(Duration::from_millis(200));
            }
            bsp.sync()?;
            let mut hs = Handlers::new();
            let tick = hs.add::<CounterId, u8>("tick", |_| Landing::none());
            bsp.am().init(hs)?;
            let c = bsp.am().counter()?;
            let ids = bsplib::Area::<CounterId>::new(bsp, n);
            bsp.push_reg(&ids)?;
            bsp.sync()?;
            bsp.put(n - 1, &ids, me, &[c.id()])?;
            bsp.sync()?;
            if me == 0 && n > 1 {
                // Moved by the last process after it computed a while.
                bsp.am().wait_counter(&c, 1)?;
            } else if me == n - 1 {
                std::thread::sleep(Duration::from_millis(400));
            }
            if me == n - 1 && n > 1 {
                let id = ids.to_vec(bsp)[0];
                bsp.am()
                    .send(0, tick, &[id], &[], Counters::none().tgt(id))?;
            }
            bsp.sync()?;
            bsp.am().term()?;
            Ok(me)
        });
        let n = Runtime::new(p).engine(engine).nprocs();
        assert_eq!(
            r.ok(),
            Some((0..n).collect::<Vec<_>>()),
            "{} p={p}",
            engine.name()
        );
    }
}
