//! Reliability of the Rust front door on every engine: a deadline that
//! names the process that never arrived, null pointers and impossible
//! allocations through the raw layer, and runs too large for the machine:
//! each a clean error naming the call, the process and the superstep,
//! never a crash, an abort or a hang.

mod common;

use std::ffi::c_void;
use std::time::{Duration, Instant};

use bsplib::{Engine, Error, ErrorKind, Runtime};
use common::{configurations_with, expect_error, mpi_mode};

/// Runs `spmd` with a deadline of `limit` on `engine` with `p` processes.
fn run_with_deadline(
    engine: Engine,
    p: usize,
    limit: Duration,
    spmd: impl Fn(&mut bsplib::Bsp) -> Result<(), Error> + Sync + Send + 'static,
) -> Result<Vec<()>, Error> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = Runtime::new(p).engine(engine).deadline(Some(limit));
        // SAFETY: as in `common::run_on`: the other threads of the test
        // binary take no lock the SPMD function needs; libtest's output and
        // other tests' panics hold Rust's stdout and panic locks for
        // moments, a hazard accepted in tests, where the timeout below turns
        // it into a failure instead of a hang.
        let runtime = unsafe { runtime.fork_with_threads() };
        let _ = tx.send(runtime.run(spmd));
    });
    rx.recv_timeout(common::HANG)
        .unwrap_or_else(|_| panic!("run on {} with p={p} hung", engine.name()))
}

#[test]
fn a_process_that_never_arrives_is_named_once_the_deadline_passes() {
    if mpi_mode() {
        return; // on mpi a deadline ends the job: tests/deadline.rs
    }
    for (engine, p, n) in configurations_with(2) {
        let start = Instant::now();
        let err = run_with_deadline(engine, p, Duration::from_millis(300), |bsp| {
            bsp.sync()?;
            if bsp.pid() == 1 {
                // Late: the others give up after 300 ms.
                std::thread::sleep(Duration::from_millis(1500));
            }
            bsp.sync()
        })
        .expect_err("the deadline must stop the run");
        let took = start.elapsed();
        match err.kind() {
            ErrorKind::Deadline { limit_ms, laggards } => {
                assert_eq!(*limit_ms, 300);
                // Process 1 for sure; on a slow machine (valgrind) another
                // may not have reached the sync yet either.
                assert!(
                    laggards.starts_with("never arrived: ")
                        && laggards.contains("process 1 (computing in superstep 1)"),
                    "{} p={p}: {laggards}",
                    engine.name()
                );
            }
            k => panic!(
                "{} p={p}: expected a deadline error, got {k:?}",
                engine.name()
            ),
        }
        assert_eq!((err.call(), err.superstep()), ("bsp_sync", 1));
        assert_ne!(err.pid(), 1, "a waiting process reports it");
        assert!(err.pid() < n);
        // Process 1 sleeps 1.5 s; a Rust run on threads returns once it
        // woke (a thread cannot be killed).
        assert!(
            took < Duration::from_secs(8),
            "{} p={p}: the run took {took:?}",
            engine.name()
        );
    }
}

#[test]
fn a_deadline_that_is_not_reached_changes_nothing() {
    if mpi_mode() {
        return; // tests/deadline.rs has it on mpi
    }
    for (engine, p, _) in configurations_with(1) {
        let r = run_with_deadline(engine, p, Duration::from_secs(30), |bsp| {
            for _ in 0..50 {
                bsp.sync()?;
            }
            Ok(())
        });
        assert!(r.is_ok(), "{} p={p}: {r:?}", engine.name());
    }
}

#[test]
fn null_pointers_through_the_raw_layer_are_errors_naming_the_call() {
    let cases: [(&str, &str); 5] = [
        ("bsp_put", "src"),
        ("bsp_hpput", "src"),
        ("bsp_get", "dst"),
        ("bsp_send", "tag"),
        ("bsp_get_tag", "tag"),
    ];
    for (call, what) in cases {
        expect_error(
            1,
            move |bsp| {
                let mut x = 0u32;
                let px = std::ptr::from_mut(&mut x).cast::<c_void>();
                // SAFETY: `x` outlives its registration, popped never: the
                // run ends with the error below, in the superstep after
                // the push; no Rust code touches `x` meanwhile.
                unsafe {
                    bsp.raw().push_reg(px, 4)?;
                    bsp.raw().set_tagsize(4)?;
                    bsp.sync()?;
                    let null = std::ptr::null_mut::<c_void>();
                    match call {
                        "bsp_put" => bsp.raw().put(0, null, px, 0, 4),
                        "bsp_hpput" => bsp.raw().hpput(0, null, px, 0, 4),
                        "bsp_get" => bsp.raw().get(0, px, 0, null, 4),
                        "bsp_send" => bsp.raw().send(0, null, px, 4),
                        _ => {
                            bsp.raw().send(0, px, px, 4)?;
                            bsp.sync()?;
                            bsp.raw().get_tag(null).map(drop)
                        }
                    }
                }
            },
            move |n, err| {
                assert_eq!(err.kind(), &ErrorKind::NullPointer { what }, "{err}");
                assert_eq!(err.call(), call);
                assert!(err.pid() < n, "every process makes the call");
                let superstep = if call == "bsp_get_tag" { 2 } else { 1 };
                assert_eq!(err.superstep(), superstep);
            },
        );
    }
}

#[test]
fn a_send_too_large_to_allocate_is_an_error_not_an_abort() {
    expect_error(
        1,
        |bsp| {
            let payload = [0u8; 8];
            // SAFETY: the call fails before reading the payload: no memory
            // can hold 2^50 bytes (the pointer is valid for 8).
            unsafe {
                bsp.raw()
                    .send(0, std::ptr::null(), payload.as_ptr().cast(), 1 << 50)
            }
        },
        |n, err| {
            assert!(
                matches!(err.kind(), ErrorKind::OutOfMemory { bytes } if *bytes >= 1 << 50),
                "{err}"
            );
            assert_eq!((err.call(), err.superstep()), ("bsp_send", 0));
            assert!(err.pid() < n, "every process makes the call");
        },
    );
}

#[test]
fn a_run_too_large_for_the_machine_is_refused_at_once() {
    if mpi_mode() {
        return;
    }
    for engine in [Engine::Threads, Engine::Processes] {
        let start = Instant::now();
        let err = Runtime::new(1 << 20)
            .engine(engine)
            .run(|_| Ok(()))
            .expect_err("a million processes cannot be bookkept here");
        assert!(
            matches!(err.kind(), ErrorKind::Startup { detail } if detail.contains("use fewer processes")),
            "{}: {err}",
            engine.name()
        );
        assert_eq!(err.call(), "bsp_begin");
        assert!(start.elapsed() < Duration::from_secs(2));
    }
}

/// Tests that set environment variables take turns.
static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_bad_deadline_in_the_environment_is_an_error() {
    let _env = ENV.lock().unwrap_or_else(|p| p.into_inner());
    // The variable is read when the runtime is built: set and unset around
    // one construction.
    std::env::set_var("BSPLIB_DEADLINE", "soon");
    let runtime = Runtime::from_env(2);
    let plain = Runtime::new(2);
    std::env::remove_var("BSPLIB_DEADLINE");
    // `Runtime::new` ignores the environment.
    assert!(plain.run(|_| Ok(())).is_ok());
    let err = runtime.run(|_| Ok(())).expect_err("a bad deadline");
    assert!(
        err.to_string()
            .contains("BSPLIB_DEADLINE=soon is not a number of seconds"),
        "{err}"
    );
}

#[test]
fn run_and_runtime_new_ignore_the_environment() {
    let _env = ENV.lock().unwrap_or_else(|p| p.into_inner());
    std::env::set_var("BSPLIB_ENGINE", "no-such-engine");
    let plain = bsplib::run(2, |bsp| Ok(bsp.pid()));
    let configured = Runtime::from_env(2).run(|bsp| Ok(bsp.pid()));
    std::env::remove_var("BSPLIB_ENGINE");
    assert_eq!(plain.expect("run uses threads"), vec![0, 1]);
    let err = configured.expect_err("from_env reads the bad engine");
    assert!(
        err.to_string()
            .contains("BSPLIB_ENGINE=no-such-engine names no engine"),
        "{err}"
    );
}
