//! Error paths between processes and of whole runs: collective calls that
//! differ between processes, processes that panic, end, abort or return an
//! error while others go on, and runs that cannot start. Each must name the
//! call, the process and the superstep (the README, Errors), stop
//! every process, and never hang. Single-call errors: `errors.rs`.
//!
//! Errors found at a sync are attributed to the process that differs from
//! process 0 and carry the line of its offending call; the scenarios note
//! that line (`noted!`) to check it.

mod common;
#[macro_use]
mod errors_support;

use std::time::{Duration, Instant};

use bsplib::{Area, Engine, Error, ErrorKind, Runtime};
use common::*;
use errors_support::*;

// ----- registration calls that differ -------------------------------------------

#[test]
fn push_count_differs_between_processes() {
    expect_failure(
        2,
        |bsp, log| {
            let x = Area::<u32>::new(bsp, LEN);
            let y = Area::<u32>::new(bsp, LEN);
            bsp.push_reg(&x)?;
            if is_last(bsp) {
                noted!(log, bsp, bsp.push_reg(&y))?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            let detail = mismatch_detail(err);
            let want = format!("process {} made 2 bsp_push_reg/bsp_pop_reg calls", n - 1);
            assert!(
                detail.contains(&want) && detail.contains("process 0 made 1"),
                "{detail}"
            );
            // The process that differs, at its extra call.
            let loc = assert_located(err, "bsp_push_reg", n - 1, 0);
            assert_eq!(loc.line(), the_line(seen));
            assert_all_failed(n, seen);
        },
    );
}

#[test]
fn pop_missing_on_one_process() {
    expect_failure(
        2,
        |bsp, log| {
            let x = Area::<u32>::new(bsp, LEN);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == 0 {
                noted!(log, bsp, bsp.pop_reg(&x))?;
            } else if !is_last(bsp) {
                bsp.pop_reg(&x)?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            let detail = mismatch_detail(err);
            let want = format!("process {} made 0 bsp_push_reg/bsp_pop_reg calls", n - 1);
            assert!(detail.contains(&want), "{detail}");
            // The process that differs; the call it did not make is
            // process 0's pop.
            let loc = assert_located(err, "bsp_pop_reg", n - 1, 1);
            assert_eq!(loc.line(), the_line(seen));
            assert_all_failed(n, seen);
        },
    );
}

#[test]
fn push_on_one_process_pop_on_another() {
    expect_failure(
        2,
        |bsp, log| {
            let x = Area::<u32>::new(bsp, LEN);
            let y = Area::<u32>::new(bsp, LEN);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if is_last(bsp) {
                noted!(log, bsp, bsp.pop_reg(&x))?;
            } else {
                bsp.push_reg(&y)?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            let detail = mismatch_detail(err);
            let want = format!(
                "bsp_pop_reg on process {} but bsp_push_reg on process 0",
                n - 1
            );
            assert!(detail.contains(&want), "{detail}");
            let loc = assert_located(err, "bsp_pop_reg", n - 1, 1);
            assert_eq!(loc.line(), the_line(seen));
            assert_all_failed(n, seen);
        },
    );
}

#[test]
fn pop_names_different_slots() {
    // The paper (bsp_pop_reg): "if process p0 registers x twice, and process
    // p1 registers x followed by y, then a runtime error will be raised if
    // both processes attempt to de-register x."
    expect_failure(
        2,
        |bsp, log| {
            let x = Area::<u32>::new(bsp, LEN);
            let y = Area::<u32>::new(bsp, LEN);
            bsp.push_reg(&x)?;
            bsp.push_reg(if bsp.pid() == 1 { &y } else { &x })?;
            bsp.sync()?;
            if bsp.pid() == 1 {
                noted!(log, bsp, bsp.pop_reg(&x))?;
            } else {
                bsp.pop_reg(&x)?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            let detail = mismatch_detail(err);
            assert!(
                detail.contains("different registration slot on process 1"),
                "{detail}"
            );
            let loc = assert_located(err, "bsp_pop_reg", 1, 1);
            assert_eq!(loc.line(), the_line(seen));
            assert_all_failed(n, seen);
        },
    );
}

#[test]
fn pop_of_never_registered_area() {
    expect_failure(
        1,
        |bsp, log| {
            let x = Area::<u32>::new(bsp, LEN);
            let y = Area::<u32>::new(bsp, LEN);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if is_last(bsp) {
                note(log, bsp, Seen::Addr(addr(bsp, &y)));
                noted!(log, bsp, bsp.pop_reg(&y))?;
            } else {
                bsp.pop_reg(&x)?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            let kind = ErrorKind::NotRegistered {
                addr: the_addr(seen),
            };
            assert_error(err, kind, "bsp_pop_reg", n - 1, 1);
            assert_eq!(err.location().unwrap().line(), the_line(seen));
            assert_all_failed(n, seen);
        },
    );
}

// ----- tag sizes that differ ----------------------------------------------------

#[test]
fn tagsize_differs_between_processes() {
    expect_failure(
        2,
        |bsp, log| {
            bsp.sync()?;
            if is_last(bsp) {
                noted!(log, bsp, bsp.set_tagsize(8))?;
            } else {
                bsp.set_tagsize(4)?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            assert!(matches!(err.kind(), ErrorKind::TagSizeMismatch { .. }));
            let detail = mismatch_detail(err);
            assert!(
                detail.contains("last with 8") && detail.contains("last with 4"),
                "{detail}"
            );
            let loc = assert_located(err, "bsp_set_tagsize", n - 1, 1);
            assert_eq!(loc.line(), the_line(seen));
            assert_all_failed(n, seen);
        },
    );
}

#[test]
fn tagsize_set_on_some_processes_only() {
    expect_failure(
        2,
        |bsp, log| {
            if is_last(bsp) {
                noted!(log, bsp, bsp.set_tagsize(4))?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            assert!(matches!(err.kind(), ErrorKind::TagSizeMismatch { .. }));
            let detail = mismatch_detail(err);
            let want = format!("process {} called it 1 time", n - 1);
            assert!(detail.contains(&want), "{detail}");
            let loc = assert_located(err, "bsp_set_tagsize", n - 1, 0);
            assert_eq!(loc.line(), the_line(seen));
            assert_all_failed(n, seen);
        },
    );
}

// ----- processes that panic, end, abort or return an error ----------------------

#[test]
fn panicking_process_stops_the_run() {
    expect_failure(
        1,
        |bsp, _| {
            bsp.sync()?;
            if is_last(bsp) {
                panic!("deliberate panic number {}", 42);
            }
            bsp.sync()
        },
        |n, err, seen| {
            let message = "deliberate panic number 42".to_string();
            assert_eq!(err.kind(), &ErrorKind::Panicked { message });
            // A panic is not a BSPlib call: there is no call site to name.
            assert_names(err, "the SPMD function", n - 1, 1);
            assert_others_stopped(n, &[n - 1], seen);
        },
    );
}

#[test]
fn process_ending_while_others_wait_in_sync() {
    expect_failure(
        2,
        |bsp, _| {
            bsp.sync()?;
            if is_last(bsp) {
                return Ok(()); // bsp_end while the others go on.
            }
            bsp.sync()
        },
        |n, err, seen| {
            // Reported by one of the processes left waiting, at its sync.
            let kind = ErrorKind::ProcessEnded { ended: n - 1 };
            assert!(err.pid() < n - 1, "{err}");
            assert_error(err, kind, "bsp_sync", err.pid(), 1);
            assert!(err
                .to_string()
                .contains(&format!("process {} returned", n - 1)));
            assert_eq!(returned(seen, n - 1), Some(&Ok(())));
            for pid in 0..n - 1 {
                assert!(returned(seen, pid).unwrap().is_err(), "process {pid}");
            }
        },
    );
}

#[test]
fn abort_while_others_wait_in_sync() {
    expect_failure(
        1,
        |bsp, _| {
            bsp.sync()?;
            if is_last(bsp) {
                std::thread::sleep(Duration::from_millis(20));
                bsp.abort(format_args!("giving up after {} tries", 3));
            }
            bsp.sync()
        },
        |n, err, seen| {
            let message = "giving up after 3 tries".to_string();
            assert_error(err, ErrorKind::Aborted { message }, "bsp_abort", n - 1, 1);
            assert_others_stopped(n, &[n - 1], seen);
            // The aborting process unwinds: it returns nothing.
            assert!(returned(seen, n - 1).is_none());
        },
    );
}

/// A message too long for the `processes` engine's record of the run's
/// error is cut, and the error is still the abort, with its process.
#[test]
fn abort_with_a_huge_message_is_still_the_abort() {
    expect_error(
        1,
        |bsp| {
            if is_last(bsp) {
                bsp.abort("x".repeat(100_000));
            }
            bsp.sync()
        },
        |n, err| {
            assert_located(err, "bsp_abort", n - 1, 0);
            match err.kind() {
                ErrorKind::Aborted { message } => {
                    assert!(
                        message.starts_with("xxxx") && message.len() > 60_000,
                        "{}",
                        message.len()
                    )
                }
                k => panic!("not an abort: {k:?}"),
            }
        },
    );
}

#[test]
fn abort_while_others_compute_needs_no_barrier() {
    // The others never sync: they compute, making calls, until one reports
    // the stop. An abort that waited for a barrier would never end the run.
    expect_failure(
        2,
        |bsp, _| {
            if is_last(bsp) {
                bsp.abort("stop at once");
            }
            let deadline = Instant::now() + HANG / 2;
            loop {
                let r = bsp.send(bsp.pid(), &[], &[]);
                if r.is_err() || Instant::now() > deadline {
                    break r;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        },
        |n, err, seen| {
            let message = "stop at once".to_string();
            assert_error(err, ErrorKind::Aborted { message }, "bsp_abort", n - 1, 0);
            assert_others_stopped(n, &[n - 1], seen);
            for pid in 0..n - 1 {
                let e = returned(seen, pid).unwrap().as_ref().unwrap_err();
                assert_located(e, "bsp_send", pid, 0);
            }
        },
    );
}

#[test]
fn process_returning_err_stops_the_run() {
    // An error of the user's own (here: one kept from an earlier run),
    // propagated with `?` out of the SPMD function of one process.
    let earlier = Runtime::new(1)
        .engine(Engine::Serial)
        .run(|bsp| bsp.send(3, &[], &[]))
        .unwrap_err();
    let expected = earlier.clone();
    fn load_config(earlier: &Error) -> Result<u32, Error> {
        Err(earlier.clone())
    }
    expect_failure(
        1,
        move |bsp, _| {
            bsp.sync()?;
            if is_last(bsp) {
                let _config = load_config(&earlier)?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            assert_eq!(err, &expected, "the run's error is the one returned");
            assert_others_stopped(n, &[n - 1], seen);
        },
    );
}

#[test]
fn sync_whose_barrier_completed_is_not_stopped() {
    // A process that fails right after a sync must not make that sync fail
    // on a slower process: the barrier completed (the failing process left
    // it), so every process is in superstep 1 and gets `Stopped` from its
    // next sync there. The window is small; repeat until it would show.
    for round in 0..500 {
        for p in [2, 3, 7] {
            let log = Log::default();
            let l = log.clone();
            let r = run_on(Engine::Threads, p, move |bsp| {
                let first = bsp.sync();
                note(&l, bsp, Seen::Call(first.clone()));
                first?;
                if is_last(bsp) {
                    bsp.send(bsp.nprocs(), &[], &[])?;
                }
                bsp.sync()
            });
            let err = r.unwrap_err();
            assert_eq!((err.pid(), err.superstep()), (p - 1, 1), "{err}");
            for (pid, s) in log.entries() {
                let Seen::Call(r) = s else { continue };
                assert!(
                    r.is_ok(),
                    "round {round}, p={p}: process {pid}'s first sync: {r:?}"
                );
            }
        }
    }
}

// ----- runs that cannot start ---------------------------------------------------

/// Runs `f` on another thread, failing instead of hanging.
fn within_hang_limit<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()));
    rx.recv_timeout(HANG).expect("the run must not hang")
}

#[test]
fn run_with_no_processes() {
    for engine in Engine::ALL {
        let r = within_hang_limit(move || Runtime::new(0).engine(engine).run(|bsp| Ok(bsp.pid())));
        let err = r.unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::NoProcesses, "{}", engine.name());
        assert_names(&err, "bsp_begin", 0, 0);
    }
    let err = within_hang_limit(|| bsplib::run(0, |_| Ok(()))).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::NoProcesses);
    assert_names(&err, "bsp_begin", 0, 0);
}

#[test]
fn run_with_no_processes_names_its_caller() {
    // Errors of calls made from Rust carry the caller's line (error.rs), and
    // `run` is such a call.
    let err = within_hang_limit(|| bsplib::run(0, |_| Ok(()))).unwrap_err();
    assert_error(&err, ErrorKind::NoProcesses, "bsp_begin", 0, 0);
}

#[test]
fn nested_run_is_refused() {
    for inner in Engine::ALL {
        expect_failure(
            1,
            move |bsp, log| {
                bsp.sync()?;
                if is_last(bsp) {
                    let r = Runtime::new(2).engine(inner).run(|b| Ok(b.pid()));
                    note(
                        log,
                        bsp,
                        Seen::Call(r.as_ref().map(drop).map_err(Error::clone)),
                    );
                    r?;
                }
                bsp.sync()
            },
            |n, err, seen| {
                assert_eq!(err.kind(), &ErrorKind::Nested);
                assert_eq!(err.call(), "bsp_begin");
                assert!(err.to_string().contains("bsp_begin"), "{err}");
                assert!(matches!(calls(seen, n - 1)[..], [Err(_)]), "{seen:?}");
                assert_others_stopped(n, &[n - 1], seen);
            },
        );
    }
}

#[test]
fn nested_run_names_the_outer_process_and_superstep() {
    // The project rule: the message names the process and the superstep of
    // the misuse (here the last process, in superstep 1) and, from Rust, the
    // line of the call.
    expect_failure(
        1,
        |bsp, _| {
            bsp.sync()?;
            if is_last(bsp) {
                bsplib::run(2, |b| Ok(b.pid()))?;
            }
            bsp.sync()
        },
        |n, err, _| assert_error(err, ErrorKind::Nested, "bsp_begin", n - 1, 1),
    );
}

#[test]
fn ignored_nested_run_still_stops_the_run() {
    // Like any other ignored error (errors.rs, ignored_error_still_stops_the_run).
    expect_failure(
        1,
        |bsp, _| {
            if is_last(bsp) {
                let _ = bsplib::run(2, |b| Ok(b.pid()));
            }
            bsp.sync()
        },
        |n, err, seen| {
            assert_eq!(err.kind(), &ErrorKind::Nested);
            assert_others_stopped(n, &[n - 1], seen);
        },
    );
}

/// A process whose sync failed (here on a tag-size mismatch it detected
/// after the first barrier, while slower processes may still read its
/// mailbox and registered memory) and that ignores the error cannot write
/// its mailbox again: `set_tagsize` (and every other queuing call) reports
/// the stop, and its message queue is empty.
#[test]
fn calls_after_an_ignored_failed_sync_are_refused() {
    expect_failure(
        2,
        |bsp, log| {
            let a = Area::<u64>::new(bsp, 4);
            bsp.push_reg(&a)?;
            bsp.sync()?;
            bsp.send(0, &[], b"m")?;
            if is_last(bsp) {
                bsp.set_tagsize(4)?;
            }
            bsp.set_tagsize(4)?;
            bsp.get(0, &a, 0, a.range(..4))?;
            let failed = bsp.sync();
            note(log, bsp, Seen::Call(failed.clone()));
            // Ignore the failure and carry on as if nothing happened.
            note(log, bsp, Seen::Call(bsp.set_tagsize(4).map(|_| ())));
            note(log, bsp, Seen::Call(bsp.put(0, &a, 0, &[1])));
            note(log, bsp, Seen::Call(bsp.push_reg(&a)));
            note(log, bsp, Seen::Call(bsp.send(0, &[], b"x")));
            check!(bsp, bsp.hpmove().is_none());
            check_eq!(bsp, bsp.qsize(), (0, 0));
            Ok(())
        },
        |n, err, seen| {
            assert!(
                matches!(err.kind(), ErrorKind::TagSizeMismatch { .. }),
                "{err}"
            );
            assert_eq!(err.pid(), n - 1);
            for pid in 0..n {
                let results = calls(seen, pid);
                assert_eq!(results.len(), 5, "process {pid}: {results:?}");
                assert!(results[0].is_err(), "process {pid}: the sync must fail");
                for r in &results[1..] {
                    let e = r
                        .as_ref()
                        .expect_err("a call after a failed sync must fail");
                    assert!(e.is_stopped(), "process {pid}: {e}");
                }
            }
        },
    );
}

/// `Bsp::abort`'s message may be formatted with the handle itself.
#[test]
fn abort_message_may_use_the_handle() {
    struct Whoami<'a>(&'a bsplib::Bsp);
    impl std::fmt::Display for Whoami<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(
                f,
                "process {} of {} gives up",
                self.0.pid(),
                self.0.nprocs()
            )
        }
    }
    for (engine, p) in configurations() {
        let err = run_on(engine, p, |bsp| -> Result<(), Error> {
            if is_last(bsp) {
                bsp.abort(Whoami(bsp));
            }
            bsp.sync()
        })
        .expect_err("abort stops the run");
        let n = Runtime::new(p).engine(engine).nprocs();
        let want = format!("process {} of {n} gives up", n - 1);
        assert_eq!(
            err.kind(),
            &ErrorKind::Aborted { message: want },
            "{} p={p}",
            engine.name()
        );
    }
}
