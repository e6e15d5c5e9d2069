//! User code the library calls runs under one guard (issue 26,
//! `engine/README.md`, "User code: one guard"): a reduction's or scan's
//! closure, an active message's header or completion handler, a result's
//! `Portable::encode` that panics on one process fails the run with
//! `ErrorKind::Panicked` naming that process and the call, on every engine
//! (under `mpirun` too: CI's mpi step runs this file), and the run ends:
//! nobody is left waiting. A program that catches the panic around a sync
//! finds the run stopped: its next sync returns an error.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;

use bsplib::am::{Counters, Handlers, Landing};
use bsplib::{Area, Bsp, Engine, Error, ErrorKind, Portable, Runtime};
use common::{configurations, expect_error, mpi_mode, HANG};

/// One test at a time: a panic printed by one test's run while another
/// forks would leave the forked process waiting for the panic's output
/// lock at its own panic (the hazard `common::run_checking` describes;
/// every test here panics).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Checks a run's error: a panic of process `n - 1` in `call`, whose
/// message has `says`, at a line of this file where `located`.
fn panicked(
    call: &'static str,
    says: &'static str,
    located: bool,
) -> impl Fn(usize, &Error) + Clone {
    move |n, e| {
        let ErrorKind::Panicked { message } = e.kind() else {
            panic!("expected a panic, got: {e}");
        };
        assert!(message.contains(says), "{e}");
        assert_eq!((e.pid(), e.call()), (n - 1, call), "{e}");
        if located {
            let loc = e.location().unwrap_or_else(|| panic!("no line: {e}"));
            assert!(loc.file().ends_with("callback_panics.rs"), "{e}");
        }
    }
}

/// The last process's closure panics; the others' results would be sums.
fn boom_on_last(bsp: &Bsp, says: &'static str) -> impl Fn(&u64, &u64) -> u64 {
    let last = bsp.pid() == bsp.nprocs() - 1;
    move |a, b| {
        if last {
            panic!("{says}");
        }
        a + b
    }
}

/// With one process a reduction or scan combines nothing: its closure is
/// never called. Every scenario below needs two.
#[test]
fn a_panicking_all_reduce_with_closure_fails_the_run() {
    let _one = one_at_a_time();
    // Small data (one superstep; on mpi `MPI_Allgather`, then the fold),
    // and large (two phases; on mpi the fold between `MPI_Alltoallv` and
    // `MPI_Allgatherv`, where the others used to wait for ever).
    for len in [4, 16 << 10] {
        expect_error(
            2,
            move |bsp| {
                let mut x = vec![bsp.pid() as u64; len];
                let f = boom_on_last(bsp, "all_reduce_with boom");
                bsp.collectives().all_reduce_with(&mut x, f)?;
                bsp.sync()?;
                Ok(())
            },
            panicked("all_reduce_with", "all_reduce_with boom", true),
        );
    }
}

#[test]
fn a_panicking_reduce_with_closure_fails_the_run() {
    let _one = one_at_a_time();
    expect_error(
        2,
        |bsp| {
            let root = bsp.nprocs() - 1;
            let f = boom_on_last(bsp, "reduce_with boom");
            bsp.collectives().reduce_with(root, &[1u64, 2], f)?;
            bsp.sync()?;
            Ok(())
        },
        panicked("reduce_with", "reduce_with boom", true),
    );
}

#[test]
fn a_panicking_scan_with_closure_fails_the_run() {
    let _one = one_at_a_time();
    expect_error(
        2,
        |bsp| {
            let mut x = [bsp.pid() as u64, 1];
            let f = boom_on_last(bsp, "scan_with boom");
            bsp.collectives().scan_with(&mut x, f)?;
            bsp.sync()?;
            Ok(())
        },
        panicked("scan_with", "scan_with boom", true),
    );
    // An exclusive scan combines from process 2 on.
    expect_error(
        3,
        |bsp| {
            let f = boom_on_last(bsp, "exscan_with boom");
            bsp.collectives().exscan_with(&[1u64], f)?;
            bsp.sync()?;
            Ok(())
        },
        panicked("exscan_with", "exscan_with boom", true),
    );
}

/// A sync the program wraps in `catch_unwind`: the panic of a handler on
/// the last process reaches it there; its next sync fails (the run is
/// stopped), as does the others' sync, now or next.
fn sync_catching(bsp: &mut Bsp, says: &str) -> Result<(), Error> {
    let last = bsp.nprocs() - 1;
    match catch_unwind(AssertUnwindSafe(|| bsp.sync())) {
        Err(payload) => {
            let text = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            assert_eq!(bsp.pid(), last, "only the last process panics");
            assert!(text.contains(says), "the user's panic goes on: {text}");
            // The run is stopped: an error, never a hang.
            let again = bsp.sync();
            assert!(again.is_err(), "a sync after the caught panic must fail");
            again
        }
        Ok(r) => {
            r?;
            let again = bsp.sync();
            assert!(
                again.is_err(),
                "the run has failed: the next sync must fail"
            );
            again
        }
    }
}

#[test]
fn a_panicking_header_handler_fails_the_run_and_the_next_sync() {
    let _one = one_at_a_time();
    expect_error(
        1,
        |bsp| {
            let (me, last) = (bsp.pid(), bsp.nprocs() - 1);
            let mut hs = Handlers::new();
            let h = hs.add::<u32, u8>("boom", move |_| {
                if me == last {
                    panic!("header handler boom");
                }
                Landing::none()
            });
            bsp.am().init(hs)?;
            // The last process sends itself one too: its own sync's fence
            // handles it (a panic before barrier A); the others' may come
            // while it waits in barrier A.
            bsp.am()
                .send(last, h, &[me as u32], &[], Counters::none())?;
            sync_catching(bsp, "header handler boom")
        },
        |n, e| {
            panicked("bsp_sync", "header handler \"boom\"", true)(n, e);
            assert!(e.to_string().contains("header handler boom"), "{e}");
        },
    );
}

#[test]
fn a_panicking_completion_handler_fails_the_run_and_the_next_sync() {
    let _one = one_at_a_time();
    expect_error(
        1,
        |bsp| {
            let (me, n) = (bsp.pid(), bsp.nprocs());
            let last = n - 1;
            let x = Area::<u64>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            let mut hs = Handlers::new();
            let h = hs.add::<u32, u8>("tick", move |_| {
                Landing::none().then(move |_| {
                    if me == last {
                        panic!("completion handler boom");
                    }
                })
            });
            bsp.am().init(hs)?;
            // A put too: on mpi the superstep then delivers streams after
            // barrier A, which the panicking process must join.
            bsp.put((me + 1) % n, &x, 0, &[me as u64])?;
            if me != last || n == 1 {
                if me != last {
                    // Most likely handled while the last process waits in
                    // barrier A of its sync.
                    std::thread::sleep(std::time::Duration::from_millis(30));
                }
                bsp.am()
                    .send(last, h, &[me as u32], &[], Counters::none())?;
            }
            sync_catching(bsp, "completion handler boom")
        },
        panicked("bsp_sync", "completion handler of a message", true),
    );
}

/// A result whose `encode` panics (the last process's).
#[derive(Debug)]
struct Fragile(u64);

impl Portable for Fragile {
    fn encode(&self, out: &mut Vec<u8>) {
        if self.0 == u64::MAX {
            panic!("encode boom");
        }
        self.0.encode(out);
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        u64::decode(input).map(Fragile)
    }
}

/// Runs `spmd` on `engine`: the run's outcome, or the panic that left
/// `run` (its message), within [`HANG`].
fn run_catching<R, F>(engine: Engine, p: usize, spmd: F) -> Result<Result<Vec<R>, Error>, String>
where
    F: Fn(&mut Bsp) -> Result<R, Error> + Sync + Send + 'static,
    R: Portable + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = Runtime::new(p).engine(engine).return_everywhere(true);
        // SAFETY: as in `common::run_checking` (the test binary's other
        // threads take no lock the run needs).
        let runtime = unsafe { runtime.fork_with_threads() };
        let r = catch_unwind(AssertUnwindSafe(|| runtime.run(spmd)));
        let _ = tx.send(r.map_err(|payload| {
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        }));
    });
    rx.recv_timeout(HANG)
        .unwrap_or_else(|_| panic!("run on {} with p={p} did not end: a hang", engine.name()))
}

/// Results are encoded where a process has its own address space
/// (`processes`, and `mpi`, where every rank encodes its own); on
/// `serial` and `threads` they move unencoded, and nothing panics.
#[test]
fn a_panicking_encode_fails_the_run() {
    let _one = one_at_a_time();
    for (engine, p) in configurations() {
        if !matches!(engine, Engine::Processes | Engine::Mpi) {
            continue;
        }
        let n = Runtime::new(p).engine(engine).nprocs();
        if n < 2 {
            continue; // process 0's result is never encoded on `processes`
        }
        let got = run_catching(engine, p, |bsp| {
            bsp.sync()?;
            let last = bsp.pid() == bsp.nprocs() - 1;
            Ok(Fragile(if last { u64::MAX } else { 7 }))
        });
        match got {
            Ok(Ok(_)) => panic!("{} p={p}: the run succeeded", engine.name()),
            Ok(Err(e)) => {
                panicked("Portable::encode", "encode boom", false)(n, &e);
                assert_eq!(e.superstep(), 1, "{e}");
            }
            // On mpi the last rank's own panic goes on after the results
            // were gathered.
            Err(text) => {
                assert!(mpi_mode(), "only the panicking rank panics: {text}");
                assert!(text.contains("encode boom"), "{text}");
            }
        }
    }
}

/// Each panic is printed once, by the panic hook where it happened: the
/// guard resumes it without printing, and the run's error is a value.
/// (A child test process runs the header-handler scenario and the large
/// all-reduce on `threads` and `processes` with its output uncaptured.)
#[test]
fn a_panic_is_printed_once() {
    let _one = one_at_a_time();
    if mpi_mode() {
        return;
    }
    if std::env::var_os("CALLBACK_PANICS_CHILD").is_some() {
        return;
    }
    for test in [
        "a_panicking_header_handler_fails_the_run_and_the_next_sync",
        "a_panicking_all_reduce_with_closure_fails_the_run",
    ] {
        let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env("CALLBACK_PANICS_CHILD", "1")
            .env_remove("RUST_BACKTRACE")
            .env("BSPLIB_TEST_ENGINES", "threads,processes")
            .output()
            .expect("the child test runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{test} failed:\n{stderr}");
        // One panic per run with at least two processes (the header
        // handler's: every run, p = 1 included).
        let runs = match test {
            t if t.contains("header") => 9,
            _ => 2 * 7,
        };
        let printed = stderr.matches("panicked at").count();
        assert_eq!(printed, runs, "{test}:\n{stderr}");
        for line in stderr.lines().filter(|l| l.contains("boom")) {
            assert!(
                line == "header handler boom" || line == "all_reduce_with boom",
                "a garbled line: {line:?}\n{stderr}"
            );
        }
    }
}
