//! Starting and ending the SPMD part: `bsp_init`, `bsp_begin`, `bsp_end`,
//! and `bsp_nprocs` before `bsp_begin`.
//!
//! - The engine is `BSPLIB_ENGINE` (`processes`, the default, or
//!   `threads`, `serial`, `mpi`); the processes available are
//!   `BSPLIB_NPROCS` (set by `bsprun -np P`), else the machine's hardware
//!   threads (`serial`: 1; `mpi`: the job's ranks). Under an MPI launcher
//!   that started several ranks, an engine other than `mpi` is refused at
//!   `bsp_begin` (the library's start checks).
//! - `bsp_begin(maxprocs)` on the first caller (process 0) starts
//!   `min(maxprocs, available)` processes. On `processes` it forks: every
//!   process returns from `bsp_begin` into the same code, with its own copy
//!   of the program's memory. On `threads` it spawns threads that run
//!   `spmd()` (`bsp_init` mode) or `main()` again (plain SPMD mode, where
//!   `bsp_begin` is the first statement of `main`); their own `bsp_begin`
//!   attaches them to their pids.
//! - `bsp_end` on process 0 waits for every other process to end, then
//!   returns (the sequential code after it runs once); on the others it
//!   ends the thread or OS process.

use std::cell::Cell;
use std::ffi::{c_char, c_int};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use bsplib::launch::Launch;
use bsplib::{Engine, Error, ErrorKind};

use crate::{attach, attached_place, detach, fail, guard, location, terminate};

/// How errors name the calls of one front door: the identity for C,
/// `fortran::fortran_name` for Fortran (`bsp_begin` is `bspbegin`).
pub(crate) type Names = fn(&'static str) -> &'static str;

/// C's names: the core's own.
pub(crate) fn c_names(call: &'static str) -> &'static str {
    call
}

/// `err` named by `names`.
pub(crate) fn renamed(err: Error, names: Names) -> Error {
    let call = names(err.call());
    if call == err.call() {
        return err;
    }
    Error::new(
        err.kind().clone(),
        call,
        err.pid(),
        err.superstep(),
        err.location(),
    )
}

/// The names of the front door that started the run (its `bsp_begin` or
/// `bsp_init`), for errors no call names (a process returning without
/// `bsp_end`).
static RUN_NAMES: OnceLock<Names> = OnceLock::new();

/// The names of the run's front door (C's before the run).
fn run_names() -> Names {
    RUN_NAMES.get().copied().unwrap_or(c_names)
}

/// The SPMD function given to `bsp_init`.
type Spmd = extern "C" fn();

/// The program's one run (BSPlib allows one `bsp_begin`/`bsp_end` pair).
static LAUNCH: OnceLock<Arc<Launch>> = OnceLock::new();
/// `bsp_init`'s function.
static SPMD: OnceLock<Spmd> = OnceLock::new();
/// The threads of a `threads` run, joined by process 0's `bsp_end`.
static THREADS: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

thread_local! {
    /// The pid a thread spawned by `bsp_begin` attaches to at its own
    /// `bsp_begin`.
    static PENDING: Cell<Option<usize>> = const { Cell::new(None) };
}

extern "C" {
    /// `shim.c`: runs `spmd()`, or `main()` if null, on this thread;
    /// returns 1 if it left through `bsp_end`.
    fn bsplib_c_run_process(spmd: Option<Spmd>) -> c_int;
    /// `shim.c`: names this thread's process and superstep for a crash
    /// message (threads engine).
    pub(crate) fn bsplib_c_note(pid: c_int, superstep: std::ffi::c_long);
    /// `shim.c`: prints that message on SIGSEGV, SIGBUS, SIGFPE, SIGILL,
    /// SIGABRT before the default action, if it claims the run's report
    /// word (`Launch::report_word`).
    fn bsplib_c_catch_crashes(report: *const std::sync::atomic::AtomicU32);
    /// `shim.c`, mpi engine: on SIGTERM (mpirun ending the job after a
    /// rank died), print where process `pid` is, from its status word.
    fn bsplib_c_watch_term(pid: c_int, word: *const std::sync::atomic::AtomicU64);
}

/// Keeps the crash message of the threads engine current.
pub(crate) fn note(pid: usize, superstep: u64) {
    // SAFETY: stores two numbers in this thread's C thread-locals.
    unsafe { bsplib_c_note(pid as c_int, superstep as std::ffi::c_long) };
}

/// The run, once started.
pub(crate) fn launch() -> Option<Arc<Launch>> {
    LAUNCH.get().cloned()
}

/// The processes available: on `mpi` the ranks of the job, else
/// `BSPLIB_NPROCS`, else the hardware threads (on `serial`, 1: the
/// engine runs one process, and a `BSPLIB_NPROCS` of more makes
/// `bsp_begin(bsp_nprocs())` fail saying so).
fn available() -> Result<usize, String> {
    if engine() == Ok(Engine::Mpi) && Engine::Mpi.is_available() {
        return Ok(bsplib::Runtime::new(usize::MAX)
            .engine(Engine::Mpi)
            .nprocs());
    }
    match std::env::var("BSPLIB_NPROCS") {
        Err(_) if engine() == Ok(Engine::Serial) => Ok(1),
        Err(_) => Ok(bsplib::available_processes()),
        Ok(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("BSPLIB_NPROCS={v} is not a number of processes (1 or more)")),
    }
}

/// The engine `BSPLIB_ENGINE` names; `processes` by default: a C program's
/// global variables are then private to each process, as BSPlib's model
/// has them.
fn engine() -> Result<Engine, String> {
    match std::env::var("BSPLIB_ENGINE") {
        Err(_) => Ok(Engine::Processes),
        Ok(name) if name.is_empty() => Ok(Engine::Processes),
        Ok(name) => Engine::from_name(name.trim()).ok_or_else(|| {
            format!("BSPLIB_ENGINE={name} is not an engine (processes, threads, mpi, serial)")
        }),
    }
}

/// The BSP process this OS process runs (0 on `threads`), and whether it
/// ended (`bsp_end`).
static OS_PROCESS_PID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static OS_PROCESS_ENDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The pid of the BSP process this OS process runs (0 on `threads`).
pub(crate) fn os_process_pid() -> usize {
    OS_PROCESS_PID.load(std::sync::atomic::Ordering::Relaxed)
}

/// True once this OS process's BSP process called `bsp_end` (`processes`,
/// `mpi`; on `threads`, once process 0 did).
pub(crate) fn this_process_ended() -> bool {
    OS_PROCESS_ENDED.load(std::sync::atomic::Ordering::Relaxed)
}

/// `void bsp_init(void (*spmd)(void), int argc, char **argv)`: names the
/// SPMD function, which the other processes of a `threads` run start in.
#[no_mangle]
pub extern "C" fn bsp_init(spmd: Option<extern "C" fn()>, argc: c_int, argv: *mut *mut c_char) {
    bsplib_init_at(spmd, argc, argv, std::ptr::null(), 0)
}

/// `bsp_init` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_init_at(
    spmd: Option<extern "C" fn()>,
    argc: c_int,
    argv: *mut *mut c_char,
    file: *const c_char,
    line: c_int,
) {
    // `shim.c` keeps the arguments `main` was called with.
    let _ = (argc, argv);
    init(spmd, c_names, location(file, line))
}

/// `bsp_init` of the front door whose names are `names`.
pub(crate) fn init(spmd: Option<Spmd>, names: Names, loc: Option<bsplib::SourceLocation>) {
    if LAUNCH.get().is_some() || SPMD.get().is_some() {
        let what = if LAUNCH.get().is_some() {
            "bsp_init after bsp_begin: bsp_init names the SPMD function before the run starts"
        } else {
            "bsp_init called twice: a program has one SPMD function"
        };
        let (pid, superstep) = attached_place().unwrap_or((os_process_pid(), 0));
        fail(Error::new(
            ErrorKind::Startup {
                detail: what.into(),
            },
            names("bsp_init"),
            pid,
            superstep,
            loc,
        ));
    }
    let _ = RUN_NAMES.set(names);
    if let Some(f) = spmd {
        let _ = SPMD.set(f);
        if engine() == Ok(Engine::Mpi) {
            mpi_init_mode(f, names);
        }
    }
}

/// Rank 0 of an `mpi` run in `bsp_init` mode has not called `bsp_begin`.
static BEGIN_PENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" {
    /// glibc: like `atexit`, with the exit status.
    fn on_exit(f: extern "C" fn(c_int, *mut std::ffi::c_void), arg: *mut std::ffi::c_void)
        -> c_int;
}

/// `on_exit` of rank 0 in `bsp_init` mode: exiting before `bsp_begin`
/// (say, after refusing its input) ends the job with the same status
/// instead of leaving the other ranks waiting. A child the program forked
/// from rank 0 (a helper that calls `exit`) ends alone.
extern "C" fn exit_before_begin(status: c_int, _: *mut std::ffi::c_void) {
    if BEGIN_PENDING.load(std::sync::atomic::Ordering::Relaxed)
        && !bsplib::launch::in_foreign_process()
    {
        // SAFETY: the program is exiting (this is an exit handler) before
        // its run began: the library has no thread of its own, and a
        // BSPlib program makes no MPI calls of its own to race with.
        unsafe { bsplib::launch::mpi_abort(status) };
    }
}

/// `bsp_init` on `mpi`, where every rank runs `main`: ranks other than 0
/// go straight to the SPMD function, and end in its `bsp_end`.
fn mpi_init_mode(spmd: Spmd, names: Names) {
    // SAFETY: `bsp_init`, before the run: the library has no thread of
    // its own, and a BSPlib program makes no MPI calls of its own.
    let rank = guard(names("bsp_init"), || unsafe { bsplib::launch::mpi_rank() });
    match rank {
        Ok(0) => {
            // The other ranks now wait in `bsp_begin` for this one: if the
            // program exits before calling it, the job must end too.
            BEGIN_PENDING.store(true, std::sync::atomic::Ordering::Relaxed);
            // SAFETY: registers a handler with no captured state (glibc's
            // `on_exit` passes the exit status).
            unsafe { on_exit(exit_before_begin, std::ptr::null_mut()) };
        }
        Ok(rank) => {
            spmd();
            // Still attached: the process never called bsp_end.
            let (pid, superstep) = attached_place().unwrap_or((rank, 0));
            fail(Error::new(
                ErrorKind::Died {
                    detail: format!(
                        "process {pid} returned from the SPMD function without calling {}",
                        names("bsp_end")
                    ),
                },
                names("bsp_end"),
                pid,
                superstep,
                None,
            ))
        }
        Err(e) => fail(renamed(e, names)),
    }
}

/// `int bsp_nprocs(void)`: the processes of the run, or before `bsp_begin`
/// the processes available.
#[no_mangle]
pub extern "C" fn bsp_nprocs() -> c_int {
    bsplib_nprocs_at(std::ptr::null(), 0)
}

/// `bsp_nprocs` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_nprocs_at(file: *const c_char, line: c_int) -> c_int {
    nprocs(c_names, location(file, line))
}

/// `bsp_nprocs` of the front door whose names are `names`.
pub(crate) fn nprocs(names: Names, loc: Option<bsplib::SourceLocation>) -> c_int {
    guard(names("bsp_nprocs"), || {
        let n = match attached_place().and(launch()) {
            Some(l) => l.nprocs(),
            None => available().unwrap_or_else(|detail| {
                fail(Error::new(
                    ErrorKind::Startup { detail },
                    names("bsp_nprocs"),
                    0,
                    0,
                    loc,
                ))
            }),
        };
        c_int::try_from(n).unwrap_or(c_int::MAX)
    })
}

/// `void bsp_begin(int maxprocs)`.
#[no_mangle]
pub extern "C" fn bsp_begin(maxprocs: c_int) {
    bsplib_begin_at(maxprocs, std::ptr::null(), 0)
}

/// `bsp_begin` with the caller's location.
#[no_mangle]
pub extern "C" fn bsplib_begin_at(maxprocs: c_int, file: *const c_char, line: c_int) {
    begin(maxprocs, c_names, location(file, line))
}

/// `bsp_begin` of the front door whose names are `names`.
pub(crate) fn begin(maxprocs: c_int, names: Names, loc: Option<bsplib::SourceLocation>) {
    let call = names("bsp_begin");
    let started = guard(call, || {
        if let Some(pid) = PENDING.with(Cell::take) {
            let launch = launch().expect("a spawned process has a run");
            note(pid, 0);
            // SAFETY: `spawn` gave `pid` to this thread alone (one thread
            // per pid), which runs it until its `bsp_end` and runs no
            // other process; `PENDING` is taken, so it attaches once.
            attach(unsafe { launch.attach(pid) }?);
            return Ok(());
        }
        let startup = |detail: String| Error::new(ErrorKind::Startup { detail }, call, 0, 0, loc);
        // Rank 0 of an mpi run in bsp_init mode is here: exiting is no
        // longer leaving the others waiting for it.
        BEGIN_PENDING.store(false, std::sync::atomic::Ordering::Relaxed);
        let engine = engine().map_err(startup)?;
        if let Some(launch) = LAUNCH.get() {
            if attached_place().is_some() || this_process_ended() {
                return Err(Error::new(ErrorKind::Nested, call, 0, 0, loc));
            }
            // A thread the program made calls bsp_begin during the run.
            let pid = os_process_pid();
            return Err(Error::new(
                ErrorKind::NotABspProcess {
                    what: "a thread the program created",
                },
                call,
                pid,
                launch.superstep_of(pid),
                loc,
            ));
        }
        let mut p = usize::try_from(maxprocs)
            .unwrap_or(0)
            .min(available().map_err(startup)?);
        // SAFETY: `bsp_begin`, before the run: the library has no thread of
        // its own, and a BSPlib program makes no MPI calls of its own.
        if engine == Engine::Mpi && unsafe { bsplib::launch::mpi_rank() }? != 0 {
            // Only process 0's request counts; the run takes it from there.
            p = usize::MAX;
        }
        // SAFETY: C's `bsp_begin` on the program's first caller, which
        // becomes process 0 on this thread (a second run, or a run from
        // another thread, was refused above). This function and `bsp_end`
        // keep the protocol of `bsplib::launch`: `fork` once before any
        // attach, one attach per process on the thread that runs it, `end`
        // in its `bsp_end`, then `leave` or `join`, and `fail` records the
        // error before it stops the run.
        let launch = unsafe { Launch::new(engine, p, loc) }?;
        let _ = RUN_NAMES.set(names);
        let _ = LAUNCH.set(Arc::clone(&launch));
        // SAFETY: registers a handler with no captured state (glibc's
        // `on_exit` passes the exit status).
        unsafe { on_exit(exit_without_end, std::ptr::null_mut()) };
        // SAFETY: installs signal handlers (shim.c) that print through the
        // run's shared report word, which lives as long as the run.
        unsafe { bsplib_c_catch_crashes(launch.report_word()) };
        let pid = match engine {
            // SAFETY: once, from process 0's thread, before any attach. It
            // forks whatever the program's threads: BSPlib defines
            // `bsp_begin` as the start of the processes, and a C program
            // with threads that hold locks at `bsp_begin` is warned in the
            // engine's README. Each OS process attaches the pid returned
            // (below) and ends in `bsp_end` (`end`, then `leave` or
            // `join`); C programs end with status 1 on the run's error
            // (`exit_on_stop`).
            Engine::Processes | Engine::Mpi => unsafe { launch.fork(true) }?,
            _ => {
                spawn(&launch).map_err(startup)?;
                0
            }
        };
        OS_PROCESS_PID.store(pid, std::sync::atomic::Ordering::Relaxed);
        if engine == Engine::Mpi {
            // SAFETY: installs a signal handler (shim.c) reading this
            // process's status word, which lives as long as the run.
            unsafe { bsplib_c_watch_term(pid as c_int, launch.status_word(pid)) };
        }
        note(pid, 0);
        // SAFETY: `pid` is this OS process's (what `fork` returned; 0 on
        // `threads` and `serial`), run by this thread until its `bsp_end`;
        // the thread runs no other process (a second `bsp_begin` was
        // refused above).
        attach(unsafe { launch.attach(pid) }?);
        Ok(())
    });
    if let Err(e) = started {
        fail(renamed(e, names))
    }
}

/// Spawns processes `1..p` of a `threads` run.
fn spawn(launch: &Arc<Launch>) -> Result<(), String> {
    let spmd = SPMD.get().copied();
    let stack = stack_size();
    let mut threads = THREADS.lock().unwrap_or_else(|p| p.into_inner());
    for pid in 1..launch.nprocs() {
        let handle = std::thread::Builder::new()
            .name(format!("bsp-{pid}"))
            .stack_size(stack)
            .spawn(move || {
                PENDING.with(|p| p.set(Some(pid)));
                // SAFETY: runs the program's own code on this thread, as
                // BSPlib's SPMD model requires; `shim.c` returns here.
                let ended = unsafe { bsplib_c_run_process(spmd) };
                if ended == 0 {
                    let what = if spmd.is_some() {
                        "the SPMD function"
                    } else {
                        "main"
                    };
                    let end = run_names()("bsp_end");
                    let superstep = crate::startup::launch().map_or(0, |l| l.superstep_of(pid));
                    fail(Error::new(
                        ErrorKind::Died {
                            detail: format!(
                                "process {pid} returned from {what} without calling {end}"
                            ),
                        },
                        end,
                        pid,
                        superstep,
                        None,
                    ));
                }
            })
            .map_err(|e| format!("spawning process {pid}: {e}"))?;
        threads.push(handle);
    }
    Ok(())
}

/// The stack of a process thread: the main thread's (`ulimit -s`), at
/// least 8 MiB: C programs put arrays on the stack.
fn stack_size() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the live struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut lim) } == 0;
    let cur = if ok && lim.rlim_cur != libc::RLIM_INFINITY {
        usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX)
    } else {
        0
    };
    cur.max(8 << 20)
}

/// The Rust half of `bsp_end` (`shim.c`): returns 1 if the calling thread
/// must leave its SPMD code.
#[no_mangle]
pub extern "C" fn bsplib_end_process(file: *const c_char, line: c_int) -> c_int {
    end_process(c_names, location(file, line))
}

/// `bsp_end` of the front door whose names are `names`: 1 if the calling
/// thread must leave its SPMD code.
pub(crate) fn end_process(names: Names, loc: Option<bsplib::SourceLocation>) -> c_int {
    let call = names("bsp_end");
    let ended = guard(call, || {
        let Some(attached) = detach() else {
            return Err(crate::outside(call, loc));
        };
        let launch = launch().expect("an attached process has a run");
        let mut attached = attached;
        attached.bsp().set_call_names(Some(names));
        let pid = attached.bsp().pid();
        // SAFETY: `attached` came from this thread's slot, where its
        // `bsp_begin` put the handle it attached on `launch`, the program's
        // one run.
        unsafe { launch.end_at(attached, call, loc) }?;
        crate::mark_ended();
        // A crash from here on is not in a BSP process's code.
        note(usize::MAX, 0);
        if pid == 0 || launch.engine() != Engine::Threads {
            OS_PROCESS_ENDED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if pid != 0 {
            return Ok(match launch.engine() {
                // SAFETY: a process other than 0 of a `processes` or `mpi`
                // run, ended above: this OS process is a forked process or
                // a rank, whose exit handlers belong to process 0, and its
                // one thread that calls MPI is this one.
                Engine::Processes | Engine::Mpi => unsafe { launch.leave() },
                _ => 1,
            });
        }
        let threads = std::mem::take(&mut *THREADS.lock().unwrap_or_else(|p| p.into_inner()));
        for t in threads {
            let _ = t.join();
        }
        // SAFETY: process 0 ended above: nobody waits for it.
        unsafe { launch.join() };
        if launch.failure().is_some() {
            launch.report();
            terminate(1);
        }
        Ok(0)
    });
    ended.unwrap_or_else(|e| fail(renamed(e, names)))
}

/// Process 0 of a failed `processes` run: lets the other processes end by
/// themselves (they see the run stopped at their next call, flush their
/// output and exit), killing those still there after a grace period. The
/// other engines end with this OS process.
pub(crate) fn end_others(launch: &Launch) {
    if os_process_pid() == 0 {
        // SAFETY: `fail` stopped the run before calling this: the others
        // wake from their syncs and exit (or are killed after the grace
        // period).
        unsafe { launch.join() };
    }
}

/// `on_exit`: a process that exits while attached never called `bsp_end`
/// (`exit()` in mid-run, `main` returning, a `bsp_init` SPMD function
/// returning on a forked process). A process the program forked itself is
/// none of the run's business.
extern "C" fn exit_without_end(status: c_int, _: *mut std::ffi::c_void) {
    if bsplib::launch::in_foreign_process() {
        return;
    }
    if let Some((pid, superstep)) = attached_place() {
        fail(Error::new(
            ErrorKind::Died {
                detail: format!(
                    "process {pid} exited (status {status}) without calling {}",
                    run_names()("bsp_end")
                ),
            },
            "exit",
            pid,
            superstep,
            None,
        ));
    }
}
