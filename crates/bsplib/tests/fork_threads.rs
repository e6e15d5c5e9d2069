//! Forking a program that has other threads: a `processes` run started
//! while another thread holds a lock would leave that lock held forever in
//! the forked processes, and a process that took it would never return. The
//! run is refused with `ErrorKind::ThreadsAtFork` (promptly: a regression
//! is a failed test here, not a hung one), the engines that do not fork
//! still run, and `Runtime::fork_with_threads` is the caller's explicit,
//! `unsafe` word that its threads hold nothing the run needs.

mod common;

use std::sync::mpsc;
use std::sync::{Mutex, TryLockError};
use std::thread;
use std::time::{Duration, Instant};

use bsplib::{Engine, Error, ErrorKind, Runtime};

/// How long a run may take before the test calls it a hang.
const HANG: Duration = Duration::from_secs(30);

/// The lock a thread holds while runs start; each test has its own, as
/// tests run side by side.
static HELD: Mutex<()> = Mutex::new(());
static FREE: Mutex<()> = Mutex::new(());

/// Runs `f` on a thread of its own and returns its result, failing the test
/// if it takes longer than [`HANG`].
fn within_hang_limit<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(HANG)
        .unwrap_or_else(|_| panic!("{what} did not return within {HANG:?}: a hang"))
}

/// A thread that holds `lock` until the returned sender is used (or
/// dropped); returns once the lock is held.
fn hold(lock: &'static Mutex<()>) -> (mpsc::Sender<()>, thread::JoinHandle<()>) {
    let (locked_tx, locked_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder = thread::spawn(move || {
        let _guard = lock.lock().unwrap();
        locked_tx.send(()).unwrap();
        // Until told, or until the test ends: the lock stays held.
        let _ = release_rx.recv();
    });
    locked_rx.recv().expect("the holder took the lock");
    (release_tx, holder)
}

/// True while another thread holds `lock`.
fn held_elsewhere(lock: &Mutex<()>) -> bool {
    matches!(lock.try_lock(), Err(TryLockError::WouldBlock))
}

#[test]
fn a_processes_run_while_another_thread_holds_a_lock_is_refused_promptly() {
    let (release, holder) = hold(&HELD);
    let start = Instant::now();
    // The SPMD function takes the lock: in a forked process it would wait
    // forever for a thread that does not exist there.
    let r = within_hang_limit("the processes run", || {
        Runtime::new(2).engine(Engine::Processes).run(|bsp| {
            let _g = HELD.lock();
            Ok(bsp.pid() as u32)
        })
    });
    let took = start.elapsed();
    let err: Error = r.expect_err("a fork with another thread holding a lock is refused");
    // This test's thread, the holder, the run's thread and libtest's main
    // thread at least.
    let threads = match err.kind() {
        ErrorKind::ThreadsAtFork { threads } => *threads,
        k => panic!("expected ThreadsAtFork, got {k:?}: {err}"),
    };
    assert!(threads >= 3, "{err}");
    assert_eq!(
        (err.call(), err.pid(), err.superstep()),
        ("bsp_begin", 0, 0)
    );
    let loc = err.location().expect("the caller's location");
    assert!(loc.file().ends_with("fork_threads.rs"), "{loc}");
    let text = err.to_string();
    assert!(
        text.contains(&format!("this program has {threads} threads"))
            && text.contains("use the threads engine")
            && text.contains("Runtime::fork_with_threads"),
        "{text}"
    );
    assert!(took < Duration::from_secs(5), "refused after {took:?}");
    assert!(held_elsewhere(&HELD), "the lock is still held");

    // The engines that do not fork run, the lock still held (their SPMD
    // function sees it held by the other thread, and does not wait for it).
    let threads_run = within_hang_limit("the threads run", || {
        Runtime::new(2)
            .engine(Engine::Threads)
            .run(|bsp| Ok((bsp.pid() as u32, held_elsewhere(&HELD))))
    });
    assert_eq!(threads_run.expect("threads"), vec![(0, true), (1, true)]);
    let serial_run = within_hang_limit("the serial run", || {
        Runtime::new(1)
            .engine(Engine::Serial)
            .run(|bsp| Ok((bsp.pid() as u32, held_elsewhere(&HELD))))
    });
    assert_eq!(serial_run.expect("serial"), vec![(0, true)]);

    // Released, the threads engine takes the lock in every process.
    release.send(()).unwrap();
    holder.join().unwrap();
    let taken = within_hang_limit("the threads run taking the lock", || {
        Runtime::new(2).engine(Engine::Threads).run(|bsp| {
            let _g = HELD.lock().unwrap();
            Ok(bsp.pid() as u32)
        })
    });
    assert_eq!(taken.expect("threads, lock free"), vec![0, 1]);
}

#[test]
fn one_process_forks_nothing_and_is_not_refused() {
    let r = within_hang_limit("a processes run of one", || {
        Runtime::new(1)
            .engine(Engine::Processes)
            .run(|bsp| Ok(bsp.pid() as u32))
    });
    assert_eq!(r.expect("p = 1 does not fork"), vec![0]);
}

#[test]
fn a_caller_that_vouches_for_its_threads_forks() {
    // This one forks: not where the engines tested leave `processes` out
    // (`BSPLIB_TEST_ENGINES`: CI's memcheck pass with the leak check, which
    // would call the memory a forked process inherits lost).
    if !common::configurations()
        .iter()
        .any(|&(engine, _)| engine == Engine::Processes)
    {
        return;
    }
    let r = within_hang_limit("the vouched processes run", || {
        let runtime = Runtime::new(3).engine(Engine::Processes);
        // SAFETY: no thread holds `FREE` (no test takes it outside a run),
        // and the SPMD function takes no other lock; libtest's own threads
        // hold the stdout lock for moments, which a forked process takes
        // when it ends: a hazard accepted in tests, where the hang limit
        // turns it into a failure.
        let runtime = unsafe { runtime.fork_with_threads() };
        runtime.run(|bsp| {
            // Free at the fork: every forked process can take it.
            let _g = FREE.lock().unwrap();
            Ok((bsp.pid() as u32, bsp.nprocs() as u32))
        })
    });
    assert_eq!(
        r.expect("vouched for: the run forks"),
        vec![(0, 3), (1, 3), (2, 3)]
    );
}
