//! The scenario harness: every scenario is written once, as a function of a
//! [`Bsp`] handle, and run on every engine for every process count.
//!
//! A scenario returns `Result<T, bsplib::Error>`; assertions inside it use
//! [`check!`], which reports the process and superstep that failed.
#![allow(dead_code)]

use std::sync::mpsc;
use std::time::Duration;

use bsplib::{Bsp, Engine, Error, Portable, Runtime};

/// Process counts every scenario runs with on the `threads` engine.
pub const PROCS: [usize; 5] = [1, 2, 3, 4, 7];

/// Process counts every scenario runs with on the `processes` engine
/// (forking is dearer than spawning a thread).
pub const PROCESS_PROCS: [usize; 4] = [1, 2, 3, 4];

/// How long a run may take before the harness calls it a hang.
pub const HANG: Duration = Duration::from_secs(60);

/// Under `mpirun` with `BSPLIB_ENGINE=mpi` (CI's MPI step runs the test
/// binaries of the scenarios that end without error so, one test at a
/// time), every scenario runs on the `mpi` engine only, on every rank.
pub fn mpi_mode() -> bool {
    std::env::var("BSPLIB_ENGINE").as_deref() == Ok("mpi")
}

/// Every (engine, requested p) pair a scenario runs on.
pub fn configurations() -> Vec<(Engine, usize)> {
    if mpi_mode() {
        // As many processes as the job has ranks.
        return vec![(Engine::Mpi, usize::MAX)];
    }
    let mut v = vec![(Engine::Serial, 1)];
    v.extend(PROCS.iter().map(|&p| (Engine::Threads, p)));
    // Miri cannot fork.
    if !cfg!(miri) {
        v.extend(PROCESS_PROCS.iter().map(|&p| (Engine::Processes, p)));
    }
    // `BSPLIB_TEST_ENGINES=threads,serial` (comma-separated) keeps only
    // those engines (CI's valgrind step checks forked processes apart).
    if let Ok(only) = std::env::var("BSPLIB_TEST_ENGINES") {
        let only: Vec<&str> = only.split(',').map(str::trim).collect();
        v.retain(|(engine, _)| only.contains(&engine.name()));
    }
    v
}

/// Runs `spmd` on `engine` with `p` processes, failing the test (instead of
/// hanging it) if the run does not finish within [`HANG`].
pub fn run_on<R, F>(engine: Engine, p: usize, spmd: F) -> Result<Vec<R>, Error>
where
    F: Fn(&mut Bsp) -> Result<R, Error> + Sync + Send + 'static,
    R: Portable + Send + 'static,
{
    run_checking(engine, p, checking_from_env(), spmd)
}

/// Whether `BSPLIB_CHECK` asks for the checking mode (the scenarios then
/// run with it: a correct program must pass silently).
pub fn checking_from_env() -> bool {
    std::env::var_os("BSPLIB_CHECK").is_some_and(|v| !v.is_empty() && v != "0")
}

/// [`run_on`] with the checking mode on or off (`Runtime::check`).
pub fn run_checking<R, F>(engine: Engine, p: usize, check: bool, spmd: F) -> Result<Vec<R>, Error>
where
    F: Fn(&mut Bsp) -> Result<R, Error> + Sync + Send + 'static,
    R: Portable + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = Runtime::new(p)
            .engine(engine)
            .return_everywhere(true)
            .check(check);
        // SAFETY: a test binary has other threads at every fork: libtest's
        // main thread, the threads of tests running beside this one, and
        // this test's thread, which waits on the channel below. None of them
        // takes a lock a scenario needs (scenarios take none); libtest's
        // output and a panic printed by another test hold Rust's stdout and
        // panic locks for moments, which a forked process would then wait on
        // forever at its end or at its own panic. That hazard is accepted
        // here: it is rare (CI sets no RUST_BACKTRACE, which would make a
        // panic hold its lock for milliseconds: see `.ci/run`), and the
        // timeout below turns it into a failed test, not a hung one.
        let runtime = unsafe { runtime.fork_with_threads() };
        let _ = tx.send(runtime.run(spmd));
    });
    match rx.recv_timeout(HANG) {
        Ok(r) => r,
        Err(_) => panic!(
            "run on {} with p={p} did not finish within {:?}: a hang",
            engine.name(),
            HANG
        ),
    }
}

/// Runs `spmd` on every configuration; it must succeed; `verify` checks the
/// per-process results (in pid order) of each configuration.
pub fn for_each_engine<R, F, V>(spmd: F, verify: V)
where
    F: Fn(&mut Bsp) -> Result<R, Error> + Sync + Send + Clone + 'static,
    R: Portable + Send + 'static + std::fmt::Debug,
    V: Fn(usize, &[R]),
{
    for (engine, p) in configurations() {
        let got = run_on(engine, p, spmd.clone())
            .unwrap_or_else(|e| panic!("run on {} with p={p} failed: {e}", engine.name()));
        let n = Runtime::new(p).engine(engine).nprocs();
        assert_eq!(
            got.len(),
            n,
            "{} p={p}: one result per process",
            engine.name()
        );
        verify(n, &got);
    }
}

/// Like [`for_each_engine`] with no per-process result to check (the
/// scenario asserts with [`check!`] inside).
pub fn scenario<F>(spmd: F)
where
    F: Fn(&mut Bsp) -> Result<(), Error> + Sync + Send + Clone + 'static,
{
    for_each_engine(spmd, |_, _| {});
}

/// The configurations `(engine, requested p, processes given)` that give
/// at least `min_p` processes; there must be one.
pub fn configurations_with(min_p: usize) -> Vec<(Engine, usize, usize)> {
    let v: Vec<_> = configurations()
        .into_iter()
        .map(|(engine, p)| (engine, p, Runtime::new(p).engine(engine).nprocs()))
        .filter(|&(_, _, n)| n >= min_p)
        .collect();
    assert!(!v.is_empty(), "no configuration has p >= {min_p}");
    v
}

/// Runs `spmd` (see [`run_on`]) expecting the run to fail with an original
/// error (not the `Stopped` of a process stopped by another), and returns it.
pub fn run_expecting_error<R, F>(engine: Engine, p: usize, spmd: F) -> Error
where
    F: Fn(&mut Bsp) -> Result<R, Error> + Sync + Send + 'static,
    R: Portable + Send + 'static,
{
    match run_on(engine, p, spmd) {
        Ok(_) => panic!(
            "run on {} with p={p} succeeded; an error was expected",
            engine.name()
        ),
        Err(e) => {
            assert!(
                !e.is_stopped(),
                "{} p={p}: the run's error must be the original one, got: {e}",
                engine.name()
            );
            e
        }
    }
}

/// Runs `spmd` on every configuration whose process count is at least
/// `min_p`, expecting the run to fail; `verify` checks the error.
pub fn expect_error<F, V>(min_p: usize, spmd: F, verify: V)
where
    F: Fn(&mut Bsp) -> Result<(), Error> + Sync + Send + Clone + 'static,
    V: Fn(usize, &Error),
{
    // Under mpirun the run has as many processes as the job has ranks:
    // a scenario needing more has nothing to run there.
    if mpi_mode() && Runtime::new(usize::MAX).engine(Engine::Mpi).nprocs() < min_p {
        return;
    }
    for (engine, p, n) in configurations_with(min_p) {
        verify(n, &run_expecting_error(engine, p, spmd.clone()));
    }
}

/// Asserts inside a scenario, naming the process and superstep on failure.
#[macro_export]
macro_rules! check {
    ($bsp:expr, $cond:expr) => {
        $crate::check!($bsp, $cond, "{}", stringify!($cond))
    };
    ($bsp:expr, $cond:expr, $($fmt:tt)+) => {
        let ok: bool = $cond;
        if !ok {
            panic!(
                "process {} of {}, superstep {}: check failed: {}",
                $bsp.pid(),
                $bsp.nprocs(),
                $bsp.superstep(),
                format!($($fmt)+)
            );
        }
    };
}

/// Asserts equality inside a scenario, naming the process and superstep.
#[macro_export]
macro_rules! check_eq {
    ($bsp:expr, $left:expr, $right:expr) => {{
        let (l, r) = (&$left, &$right);
        $crate::check!(
            $bsp,
            l == r,
            "{} == {}: left {:?}, right {:?}",
            stringify!($left),
            stringify!($right),
            l,
            r
        );
    }};
}

/// The process to the right on the ring.
pub fn right(bsp: &Bsp) -> usize {
    (bsp.pid() + 1) % bsp.nprocs()
}

/// The process to the left on the ring.
pub fn left(bsp: &Bsp) -> usize {
    (bsp.pid() + bsp.nprocs() - 1) % bsp.nprocs()
}

/// `(pid, left, right)` as `u64` values, for building test data.
pub fn ids(bsp: &Bsp) -> (u64, u64, u64) {
    (bsp.pid() as u64, left(bsp) as u64, right(bsp) as u64)
}

/// A deterministic pseudo-random sequence (an LCG), the same on every
/// process for the same seed.
pub fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        x >> 33
    }
}
