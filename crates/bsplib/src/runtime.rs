//! Starting a run: the Rust counterpart of `bsp_begin` / `bsp_end`.

use crate::error::SourceLocation;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bsp::{AbortUnwind, Bsp};
use crate::codec::Portable;
use crate::engine::{processes, World};
use crate::error::{Error, ErrorKind};
use crate::process::Process;

pub use crate::engine::Engine;

/// `bsp_nprocs()` before `bsp_begin`: the number of processes that can run
/// at once on this machine (its hardware threads). More can be requested;
/// they then share the cores.
pub fn available_processes() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Configures and starts a run. [`run`] is the short form with the default
/// engine.
///
/// # Examples
///
/// ```
/// use bsplib::{Engine, Runtime};
/// let pids = Runtime::new(4).engine(Engine::Serial).run(|bsp| Ok(bsp.pid()))?;
/// assert_eq!(pids, vec![0]); // the serial engine gives one process
/// # Ok::<(), bsplib::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Runtime {
    nprocs: usize,
    engine: Engine,
    /// [`Runtime::from_env`]: a `BSPLIB_ENGINE` or `BSPLIB_DEADLINE` that
    /// makes no sense; the run fails saying so.
    bad_env: Option<String>,
    return_everywhere: bool,
    deadline: Option<Duration>,
    /// [`Runtime::fork_with_threads`]: the caller vouches for the other
    /// threads at the fork.
    fork_with_threads: bool,
    /// [`Runtime::profile`]: where each process writes its profile.
    profile: Option<std::path::PathBuf>,
    /// [`Runtime::check`]: the checking mode.
    check: bool,
    /// [`Runtime::progress`]: `Some(force)` when on.
    progress: Option<bool>,
}

impl Runtime {
    /// A run of `nprocs` processes (`bsp_begin(maxprocs)`) on the default
    /// engine, `threads`, whatever the environment says: the same call
    /// gives the same run everywhere. [`Runtime::from_env`] lets the
    /// environment choose.
    pub fn new(nprocs: usize) -> Self {
        Runtime {
            nprocs,
            engine: Engine::default(),
            bad_env: None,
            return_everywhere: false,
            deadline: None,
            fork_with_threads: false,
            profile: None,
            check: false,
            progress: None,
        }
    }

    /// A run of `nprocs` processes configured by the environment: the
    /// engine `BSPLIB_ENGINE` names ([`Engine::from_env`]; `threads` when it
    /// is not set) and the deadline in `BSPLIB_DEADLINE` (seconds; see
    /// [`deadline`](Runtime::deadline)). This is how one binary runs on
    /// threads by default and on MPI under `mpirun -x BSPLIB_ENGINE=mpi`
    /// (or `bsprun --engine mpi`): use [`run_portable`](Runtime::run_portable),
    /// which works on every engine.
    ///
    /// # Examples
    ///
    /// ```
    /// // BSPLIB_ENGINE=processes cargo run ... runs this on processes.
    /// let pids = bsplib::Runtime::from_env(2).run_portable(|bsp| Ok(bsp.pid() as u32))?;
    /// assert_eq!(pids, vec![0, 1]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// None here; a value that names no engine, or no number of seconds,
    /// makes the run fail at its start ([`ErrorKind::Startup`]), saying so.
    pub fn from_env(nprocs: usize) -> Self {
        let mut runtime = Runtime::new(nprocs);
        match Engine::from_env() {
            None => {}
            Some(Ok(engine)) => runtime.engine = engine,
            Some(Err(name)) => {
                runtime.bad_env = Some(format!(
                    "BSPLIB_ENGINE={name} names no engine (serial, threads, processes, mpi)"
                ))
            }
        }
        match deadline_from_env() {
            None => {}
            Some(Ok(d)) => runtime.deadline = Some(d),
            Some(Err(bad)) => {
                runtime.bad_env.get_or_insert(bad);
            }
        }
        runtime.profile = std::env::var_os("BSPLIB_PROFILE")
            .filter(|d| !d.is_empty())
            .map(Into::into);
        runtime.check = crate::check::from_env();
        runtime.progress = crate::progress::from_env();
        runtime
    }

    /// Profiles the run (`None`, the default: no profile): each process
    /// records, per superstep, its time computing and in the sync, what it
    /// sent and received (the h-relation) and the source line of the sync
    /// that ended it, and writes them at its end to `dir/profile.<pid>.json`,
    /// a Chrome / Perfetto trace-event file (`bspprof dir` turns the
    /// directory into one trace and an HTML report). The environment
    /// variable `BSPLIB_PROFILE=dir` sets it for [`Runtime::from_env`]
    /// (`bsprun --profile dir`). The format and what is counted:
    /// `PROFILE.md` in the crate's source.
    ///
    /// # BSP cost
    ///
    /// Off, a sync pays one predicted branch for it, and a put nothing.
    /// On, a sync reads the clock twice and walks the headers of the
    /// records it sends and receives (no payload is read): about 0.1-0.2 µs
    /// a superstep on this project's VM (`examples/profile_overhead.rs`);
    /// each process writes its file after its SPMD function returns.
    ///
    /// # Errors
    ///
    /// None here; a directory that cannot be made or written in makes the
    /// run fail at its start ([`ErrorKind::Startup`], naming it). A
    /// profile that cannot be written at the end is reported on standard
    /// error, and the run's outcome stands.
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("bsplib-doc-profile-{}", std::process::id()));
    /// bsplib::Runtime::new(2).profile(Some(dir.clone())).run(|bsp| bsp.sync())?;
    /// let text = std::fs::read_to_string(dir.join("profile.1.json")).unwrap();
    /// assert!(text.starts_with("{\"traceEvents\":["));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    pub fn profile(mut self, dir: Option<std::path::PathBuf>) -> Self {
        self.profile = dir;
        self
    }

    /// Checks the program as it runs (`false`, the default: no checks):
    /// every process's `sync` ending a superstep must be at the same source
    /// line (the Oxford check-syncs, [`ErrorKind::SyncMismatch`]); puts from
    /// different processes must not write overlapping bytes of one area in
    /// one superstep ([`ErrorKind::OverlappingPuts`]); an hpput's source and
    /// an hpget's destination must not change between the call and the
    /// sync ([`ErrorKind::HpRegionChanged`]). A finding stops the run like
    /// any error. The environment variable `BSPLIB_CHECK=1` sets it for
    /// [`Runtime::from_env`] (`bsprun --check`). Off, it costs one branch
    /// per sync (shared with the profiler) and one per put; the design and
    /// what cannot be detected: `crates/bsplib/src/CHECKING.md`.
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{ErrorKind, Runtime};
    /// let err = Runtime::new(2)
    ///     .check(true)
    ///     .run(|bsp| {
    ///         if bsp.pid() == 0 {
    ///             bsp.sync()
    ///         } else {
    ///             bsp.sync() // another line: check-syncs stops the run
    ///         }
    ///     })
    ///     .unwrap_err();
    /// assert!(matches!(err.kind(), ErrorKind::SyncMismatch { .. }), "{err}");
    /// ```
    ///
    /// # Errors
    ///
    /// None here; the run returns the findings as errors.
    pub fn check(mut self, on: bool) -> Self {
        self.check = on;
        self
    }

    /// Shows the run's progress on standard error when it is a terminal
    /// (`false`, the default: nothing): the superstep count, the rate in
    /// supersteps per second and the slowest process (the one the others
    /// wait for), redrawn in place four times a second from the first half
    /// second on, and erased when the run ends. `BSPLIB_PROGRESS=1` sets
    /// it for [`Runtime::from_env`] (`bsprun --progress`);
    /// `BSPLIB_PROGRESS=force` draws even when standard error is not a
    /// terminal. A thread of process 0 reads the status board: the
    /// processes themselves do nothing more. On `mpi`, rank 0 shows its own
    /// superstep and rate only.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::Runtime::new(2).progress(true).run(|bsp| bsp.sync())?;
    /// assert_eq!(r.len(), 2);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// None: a view that cannot be drawn is not drawn.
    pub fn progress(mut self, on: bool) -> Self {
        self.progress = on.then_some(false);
        self
    }

    /// Gives up a sync that waits longer than `limit` for the other
    /// processes: the run stops with [`ErrorKind::Deadline`], naming the
    /// processes that never arrived and the superstep each was last seen
    /// in (a process stuck in a loop, stopped by `SIGSTOP`, or waiting for
    /// something that never comes). `None` (the default) waits forever.
    /// The environment variable `BSPLIB_DEADLINE` (seconds) sets it for
    /// [`Runtime::from_env`] (`bsprun --deadline`). Not on `mpi`, whose
    /// barrier is MPI's.
    ///
    /// On `threads`, a Rust run returns once every process has returned
    /// (a thread cannot be killed): the deadline then names the culprit
    /// at once in the processes that waited, but a process that never
    /// makes another BSPlib call keeps the run from returning. C programs
    /// end at once on every engine.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let err = bsplib::Runtime::new(2)
    ///     .deadline(Some(Duration::from_millis(100)))
    ///     .run(|bsp| {
    ///         if bsp.pid() == 1 {
    ///             std::thread::sleep(Duration::from_millis(500)); // a slow process
    ///         }
    ///         bsp.sync()
    ///     })
    ///     .unwrap_err();
    /// assert!(matches!(err.kind(), bsplib::ErrorKind::Deadline { .. }));
    /// assert!(err.to_string().contains("process 1 (computing in superstep 0)"));
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    pub fn deadline(mut self, limit: Option<Duration>) -> Self {
        self.deadline = limit;
        self
    }

    /// Chooses the engine (overriding `BSPLIB_ENGINE` for
    /// [`Runtime::from_env`]).
    pub fn engine(mut self, engine: Engine) -> Self {
        self.engine = engine;
        if self
            .bad_env
            .as_deref()
            .is_some_and(|b| b.starts_with("BSPLIB_ENGINE"))
        {
            self.bad_env = None;
        }
        self
    }

    /// On `mpi`, where every process runs the whole program, whether the
    /// processes other than 0 return from the run too (with everyone's
    /// results). By default they end there, as `bsp_end` ends them in C:
    /// the code after the run runs once, on process 0. Other engines
    /// always return on the caller only.
    pub fn return_everywhere(mut self, yes: bool) -> Self {
        self.return_everywhere = yes;
        self
    }

    /// Lets a `processes` run fork although the program has other threads
    /// (by default it is refused with [`ErrorKind::ThreadsAtFork`]). Other
    /// engines do not fork, and ignore it.
    ///
    /// `fork` copies the calling thread only, and every lock as it is at
    /// that moment: a lock another thread holds stays held in the forked
    /// processes, where the thread that would release it does not exist,
    /// and a forked process that takes it waits forever. glibc resets the
    /// locks of `malloc` and of C's stdio at the fork; nothing resets a
    /// Rust [`Mutex`](std::sync::Mutex), the lock of
    /// [`stdout`](std::io::stdout) (`println!`; the library itself flushes
    /// standard output when a forked process ends), the lock of the
    /// environment (`std::env::var`), the locks of Rust's panic handling
    /// (a panic's message and backtrace), or any lock of another library.
    ///
    /// # Safety
    ///
    /// At the moment of the fork (the start of
    /// [`run_portable`](Runtime::run_portable)), no other thread of the
    /// program may hold a lock, or be inside an operation, that the SPMD
    /// function or the library will need in the forked processes: a
    /// process that needed it would wait forever, and the run would never
    /// return. (The caller promises more than memory safety strictly
    /// needs: a run that never returns, from safe code, is what the
    /// refusal keeps out, and this is the caller's word that it cannot
    /// happen here.)
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::time::Duration;
    /// use bsplib::{Engine, ErrorKind, Runtime};
    ///
    /// static DONE: AtomicBool = AtomicBool::new(false);
    /// // A thread that only sleeps and reads an atomic: it holds no lock.
    /// let napper = std::thread::spawn(|| {
    ///     while !DONE.load(Ordering::Acquire) {
    ///         std::thread::sleep(Duration::from_millis(1));
    ///     }
    /// });
    /// let runtime = Runtime::new(2).engine(Engine::Processes);
    /// let refused = runtime.run_portable(|bsp| Ok(bsp.pid() as u32)).unwrap_err();
    /// assert!(matches!(refused.kind(), ErrorKind::ThreadsAtFork { threads: 2 }));
    /// // SAFETY: the only other thread sleeps and reads an atomic: it holds
    /// // no lock the forked process could need.
    /// let vouched = unsafe { runtime.fork_with_threads() };
    /// let pids = vouched.run_portable(|bsp| Ok(bsp.pid() as u32))?;
    /// assert_eq!(pids, vec![0, 1]);
    /// DONE.store(true, Ordering::Release);
    /// napper.join().unwrap();
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    pub unsafe fn fork_with_threads(mut self) -> Self {
        self.fork_with_threads = true;
        self
    }

    /// The engine of the run.
    pub fn engine_used(&self) -> Engine {
        self.engine
    }

    /// The number of processes the run will have (the engine may give fewer
    /// than requested, as `bsp_begin` allows; on `mpi`, at most the ranks
    /// of the job).
    pub fn nprocs(&self) -> usize {
        match self.engine {
            Engine::Serial => self.nprocs.min(1),
            Engine::Threads | Engine::Processes => self.nprocs,
            #[cfg(feature = "mpi")]
            Engine::Mpi => crate::engine::mpi::world_size().map_or(0, |n| self.nprocs.min(n)),
            #[cfg(not(feature = "mpi"))]
            Engine::Mpi => self.nprocs,
        }
    }

    /// Runs `spmd` on every process and returns each process's result, in
    /// pid order, or the error that stopped the run.
    ///
    /// Returning from `spmd` is `bsp_end`. A run stops with an error when
    /// any process: makes a call BSPlib calls an error, returns `Err`,
    /// panics, calls [`Bsp::abort`], or returns while another waits for it
    /// in [`Bsp::sync`]. The first such error is the run's; the others
    /// processes see [`ErrorKind::Stopped`] at their next sync.
    ///
    /// The results of processes in other address spaces cannot be returned
    /// as they are: on the `processes` engine, use
    /// [`run_portable`](Runtime::run_portable).
    ///
    /// # Errors
    ///
    /// The error that stopped the run; [`ErrorKind::NoProcesses`] for
    /// `nprocs == 0`; [`ErrorKind::Nested`] inside another run (which it
    /// also stops, naming the calling process and its superstep);
    /// [`ErrorKind::Startup`] on the `processes` engine.
    #[track_caller]
    pub fn run<R, F>(&self, spmd: F) -> Result<Vec<R>, Error>
    where
        F: Fn(&mut Bsp) -> Result<R, Error> + Sync,
        R: Send,
    {
        let loc = Some(SourceLocation::caller());
        let n = self.check_start(loc)?;
        watch_exits();
        let world = Arc::new(match self.engine {
            Engine::Serial => self.world(World::serial(), loc)?,
            Engine::Threads => self.world(World::threads(n), loc)?,
            Engine::Processes | Engine::Mpi => {
                return Err(Error::new(
                    ErrorKind::Startup {
                        detail: format!(
                            "the {} engine returns results from other address spaces: use Runtime::run_portable",
                            self.engine.name()
                        ),
                    },
                    "bsp_begin",
                    0,
                    0,
                    loc,
                ))
            }
        });
        let start = Instant::now();
        let results: Vec<Option<R>> = if n == 1 {
            vec![process_main(0, &world, start, &spmd)]
        } else {
            std::thread::scope(|scope| {
                let mut handles = Vec::with_capacity(n - 1);
                for pid in 1..n {
                    let world = &world;
                    let spmd = &spmd;
                    let spawned = std::thread::Builder::new()
                        .name(format!("bsp-{pid}"))
                        .spawn_scoped(scope, move || process_main(pid, world, start, spmd));
                    match spawned {
                        Ok(h) => handles.push(h),
                        Err(e) => {
                            world.fail(Error::new(
                                ErrorKind::Startup {
                                    detail: format!("spawning process {pid}: {e}"),
                                },
                                "bsp_begin",
                                pid,
                                0,
                                None,
                            ));
                            break;
                        }
                    }
                }
                let first = process_main(0, &world, start, &spmd);
                let mut all = vec![first];
                all.extend(handles.into_iter().map(|h| h.join().unwrap_or(None)));
                all
            })
        };
        crate::progress::finish();
        match world.failure() {
            Some(err) => Err(err),
            None => Ok(results
                .into_iter()
                .map(|r| r.expect("a process without result recorded a failure"))
                .collect()),
        }
    }
}

impl Runtime {
    /// The checks every start makes; returns the number of processes.
    pub(crate) fn check_start(&self, loc: Option<SourceLocation>) -> Result<usize, Error> {
        if let Some(err) = nested_error(loc) {
            return Err(err);
        }
        let startup = |detail: String| Error::startup(detail, loc);
        if let Some(bad) = &self.bad_env {
            return Err(startup(bad.clone()));
        }
        let n = self.nprocs();
        if n == 0 {
            return Err(Error::new(ErrorKind::NoProcesses, "bsp_begin", 0, 0, loc));
        }
        if !self.engine.is_available() {
            return Err(startup(
                "this build has no mpi engine: build with the cargo feature mpi".into(),
            ));
        }
        Ok(n)
    }

    /// A new world, configured (the deadline), or the error of its start.
    pub(crate) fn world(
        &self,
        made: Result<World, String>,
        loc: Option<SourceLocation>,
    ) -> Result<World, Error> {
        let world = made.map_err(|detail| Error::startup(detail, loc))?;
        world.set_deadline(self.deadline);
        if let Some(dir) = &self.profile {
            let setup = crate::profile::Setup::prepare(dir, self.engine.name())
                .map_err(|detail| Error::startup(detail, loc))?;
            world.set_ext(setup);
        }
        if self.check {
            let shared = world.rendezvous().is_none();
            let setup = crate::check::Setup::new(world.nprocs(), shared)
                .map_err(|detail| Error::startup(detail, loc))?;
            world.set_ext(setup);
        }
        if let Some(force) = self.progress {
            world.set_progress(force);
        }
        // The run's error, once, as the front doors write it.
        world.set_reporter(crate::launch::report);
        if world.engine() == Engine::Processes {
            // Read before the fork: every process then has the same.
            crate::probe::machine_of(&world);
        }
        Ok(world)
    }

    /// [`run`](Runtime::run) on any engine, the `processes` engine
    /// included: every process's result is encoded where it was computed
    /// and decoded here ([`Portable`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{Engine, Runtime};
    /// let pids = Runtime::new(3)
    ///     .engine(Engine::Processes)
    ///     .run_portable(|bsp| Ok(bsp.pid() as u32))?;
    /// assert_eq!(pids, vec![0, 1, 2]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`run`](Runtime::run), and on the `processes` engine:
    /// [`ErrorKind::Died`] when a process dies (a signal, or `exit`);
    /// [`ErrorKind::ThreadsAtFork`] (call `bsp_begin`, process 0, superstep
    /// 0) when the run has more than one process and the program has other
    /// threads at the fork, unless the caller vouched for them with
    /// [`fork_with_threads`](Runtime::fork_with_threads). The threads are
    /// counted by the kernel's account (`/proc/self/stat`); where that
    /// cannot be read the count is unknown and the run is not refused.
    #[track_caller]
    pub fn run_portable<R, F>(&self, spmd: F) -> Result<Vec<R>, Error>
    where
        F: Fn(&mut Bsp) -> Result<R, Error> + Sync,
        R: Portable + Send,
    {
        match self.engine {
            Engine::Processes => {}
            #[cfg(feature = "mpi")]
            Engine::Mpi => return self.run_mpi(spmd),
            _ => return self.run(spmd),
        }
        let loc = Some(SourceLocation::caller());
        let n = self.check_start(loc)?;
        watch_exits();
        let world = Arc::new(self.world(World::processes(n), loc)?);
        let shared = world.shared().expect("a processes world");
        if n > 1 && !self.fork_with_threads {
            // A lock another thread holds now would stay held forever in
            // the forked processes (see `fork_with_threads`): counted just
            // before the fork, to judge the threads as they are then.
            if let Some(threads) = processes::threads().filter(|&t| t > 1) {
                return Err(Error::new(
                    ErrorKind::ThreadsAtFork { threads },
                    "bsp_begin",
                    0,
                    0,
                    loc,
                ));
            }
        }
        let start = Instant::now();
        let pid = processes::fork(&world, shared)?;
        if pid != 0 {
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let result = process_main(pid, &world, start, &spmd).map(|r| {
                    let mut bytes = Vec::new();
                    r.encode(&mut bytes);
                    bytes
                });
                if let Err(e) = shared.set_done(pid, result.as_deref()) {
                    world.fail(e);
                }
            }));
            let _ = std::io::Write::flush(&mut std::io::stdout());
            // SAFETY: ends this forked process without running the
            // caller's destructors or exit handlers, which belong to
            // process 0.
            unsafe { libc::_exit(i32::from(outcome.is_err())) };
        }
        let first = process_main(0, &world, start, &spmd);
        processes::join(shared);
        crate::progress::finish();
        if let Some(err) = world.failure() {
            return Err(err);
        }
        let mut results = Vec::with_capacity(n);
        results.push(first.expect("a process without result recorded a failure"));
        for pid in 1..n {
            let r = shared
                .result(pid)
                .and_then(|mut bytes| R::decode(&mut bytes))
                .ok_or_else(|| no_result(pid))?;
            results.push(r);
        }
        Ok(results)
    }
}

#[cfg(feature = "mpi")]
impl Runtime {
    /// [`run_portable`](Runtime::run_portable) on `mpi`: this rank runs its
    /// process (if the run has one for it); the results are gathered on
    /// every rank.
    #[track_caller]
    fn run_mpi<R, F>(&self, spmd: F) -> Result<Vec<R>, Error>
    where
        F: Fn(&mut Bsp) -> Result<R, Error> + Sync,
        R: Portable + Send,
    {
        use crate::engine::mpi;
        let loc = Some(SourceLocation::caller());
        self.check_start(loc)?;
        let (n, member) = mpi::join(self.nprocs, true).map_err(|d| Error::startup(d, loc))?;
        if n == 0 {
            return Err(Error::new(ErrorKind::NoProcesses, "bsp_begin", 0, 0, loc));
        }
        // What this rank contributes to the gather: `[0]` and its result,
        // or `[1]` and the error its process recorded (errors are values
        // on this engine: a failed process ends, and the others leave
        // their syncs with an error, see `mpi::Mpi::finish`).
        let mut mine = Vec::new();
        if let Some((pid, engine)) = member {
            let world = Arc::new(self.world(World::mpi(n, engine), loc)?);
            let result = process_main(pid, &world, Instant::now(), &spmd);
            world.finish_mpi(pid);
            crate::progress::finish();
            match (result, world.failure()) {
                (Some(r), None) => {
                    mine.push(0);
                    r.encode(&mut mine);
                }
                (_, failure) => {
                    mine.push(1);
                    mine.extend(crate::codec::encode_error(
                        &failure.unwrap_or_else(|| no_result(pid)),
                    ));
                }
            }
        }
        let all = mpi::all_gather_bytes(&mine);
        let outcome = gathered(&all[..n]);
        if !self.return_everywhere && mpi::world_rank().unwrap_or(0) != 0 {
            mpi::finalize_and_exit();
        }
        outcome
    }
}

/// The outcome of an `mpi` run from what its processes contributed (see
/// `run_mpi`): the results in pid order, or the run's error, the same on
/// every rank. Of the errors the processes recorded, the original one of
/// least pid (a process stopped by another's error records only the
/// secondary `Stopped`).
#[cfg(feature = "mpi")]
fn gathered<R: Portable>(all: &[Vec<u8>]) -> Result<Vec<R>, Error> {
    let errors: Vec<Error> = all
        .iter()
        .enumerate()
        .filter(|(_, b)| b.first() != Some(&0))
        .map(|(pid, b)| {
            b.get(1..)
                .and_then(crate::codec::decode_error)
                .unwrap_or_else(|| no_result(pid))
        })
        .collect();
    if let Some(e) = errors.iter().find(|e| !e.is_stopped()).or(errors.first()) {
        return Err(e.clone());
    }
    all.iter()
        .enumerate()
        .map(|(pid, b)| R::decode(&mut &b[1..]).ok_or_else(|| no_result(pid)))
        .collect()
}

/// `BSPLIB_DEADLINE` (seconds, fractions allowed), if set: the deadline,
/// or the error naming the bad value.
fn deadline_from_env() -> Option<Result<Duration, String>> {
    let v = std::env::var("BSPLIB_DEADLINE").ok()?;
    Some(
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .ok_or_else(|| {
                format!("BSPLIB_DEADLINE={v} is not a number of seconds greater than 0")
            }),
    )
}

/// The error of a run whose process `pid` (in another address space)
/// left no result that decodes.
fn no_result(pid: usize) -> Error {
    Error::new(
        ErrorKind::Died {
            detail: format!("process {pid} left no readable result"),
        },
        "bsp_end",
        pid,
        0,
        None,
    )
}

/// Runs `spmd` on `nprocs` processes of the default engine (`threads`);
/// see [`Runtime::run`].
///
/// # Errors
///
/// The error that stopped the run (see [`Runtime::run`]).
///
/// # Examples
///
/// ```
/// let hello = bsplib::run(4, |bsp| Ok(format!("{} of {}", bsp.pid(), bsp.nprocs())))?;
/// assert_eq!(hello[3], "3 of 4");
/// # Ok::<(), bsplib::Error>(())
/// ```
#[track_caller]
pub fn run<R, F>(nprocs: usize, spmd: F) -> Result<Vec<R>, Error>
where
    F: Fn(&mut Bsp) -> Result<R, Error> + Sync,
    R: Send,
{
    Runtime::new(nprocs).run(spmd)
}

/// The BSP process the current thread runs, if any.
struct Current {
    pid: usize,
    world: Arc<World>,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// The error of a run started inside a BSP process: BSPlib has one
/// `bsp_begin`/`bsp_end` pair per program. It also stops the outer run.
fn nested_error(loc: Option<SourceLocation>) -> Option<Error> {
    CURRENT.with(|c| {
        let c = c.borrow();
        let outer = c.as_ref()?;
        let err = Error::new(
            ErrorKind::Nested,
            "bsp_begin",
            outer.pid,
            crate::process::noted_superstep(),
            loc,
        );
        outer.world.fail(err.clone());
        Some(err)
    })
}

/// Marks the current thread as running a BSP process.
pub(crate) struct InRun;

impl InRun {
    pub(crate) fn enter(pid: usize, world: &Arc<World>) -> Self {
        CURRENT.with(|c| {
            *c.borrow_mut() = Some(Current {
                pid,
                world: Arc::clone(world),
            })
        });
        EXIT_NOTE.with(|n| n.set((pid, Arc::as_ptr(world))));
        crate::process::note_superstep(0);
        InRun
    }
}

thread_local! {
    /// The process this thread runs and its world, for [`exit_during_run`]:
    /// plain values, so that this thread-local has no destructor and can
    /// still be read while the program exits (`exit` destroys thread-locals
    /// with destructors before it calls `on_exit` handlers).
    static EXIT_NOTE: Cell<(usize, *const World)> = const { Cell::new((0, std::ptr::null())) };
}

extern "C" {
    /// glibc: like `atexit`, with the exit status.
    fn on_exit(
        f: extern "C" fn(std::ffi::c_int, *mut std::ffi::c_void),
        arg: *mut std::ffi::c_void,
    ) -> std::ffi::c_int;
}

/// Names a process that ends the program (`std::process::exit`, or C's
/// `exit`) in the middle of a Rust run: the run's error cannot be returned
/// any more, so it is printed. Registered once, at the first run.
fn watch_exits() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        processes::watch_forks();
        // SAFETY: registers a handler with no captured state.
        unsafe { on_exit(exit_during_run, std::ptr::null_mut()) };
    });
}

extern "C" fn exit_during_run(status: std::ffi::c_int, _: *mut std::ffi::c_void) {
    if processes::is_foreign() {
        return; // a process the program forked itself
    }
    let Ok((pid, world)) = EXIT_NOTE.try_with(Cell::get) else {
        return;
    };
    if world.is_null() {
        return;
    }
    // SAFETY: a non-null note is the world of the run this thread is in:
    // the thread that started the run holds it alive inside `run`, and
    // `exit` unwinds nothing.
    let world = unsafe { &*world };
    if pid != 0 && world.shared().is_some() {
        return; // process 0's monitor names a forked process that exits
    }
    let superstep = world.board().get(pid).0;
    let err = Error::new(
        ErrorKind::Died {
            detail: format!(
                "process {pid} ended the program (exit status {status}) in the middle of the run"
            ),
        },
        "exit",
        pid,
        superstep,
        None,
    );
    world.record_failure(err);
    crate::launch::report(world);
}

impl Drop for InRun {
    fn drop(&mut self) {
        let _ = EXIT_NOTE.try_with(|n| n.set((0, std::ptr::null())));
        // At the exit of a thread (or of the program, for its main thread)
        // this thread-local may be gone already: then there is nothing to
        // clear.
        let _ = CURRENT.try_with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                *c = None;
            }
        });
    }
}

/// Process `pid`'s state, with the slots of the extensions its run uses
/// installed (`extension.rs`): every front door starts a process here.
pub(crate) fn new_process(pid: usize, world: Arc<World>, start: Instant) -> Process {
    let mut p = Process::new(pid, world, start);
    crate::hints::install(&mut p);
    p
}

/// One process from start to end: runs `spmd` and turns its outcome into a
/// result or the run's failure.
fn process_main<R, F>(pid: usize, world: &Arc<World>, start: Instant, spmd: &F) -> Option<R>
where
    F: Fn(&mut Bsp) -> Result<R, Error>,
{
    let _in_run = InRun::enter(pid, world);
    let mut bsp = Bsp::new(new_process(pid, Arc::clone(world), start));
    let outcome = catch_unwind(AssertUnwindSafe(|| spmd(&mut bsp)));
    // A process that ends with a lock, a view or an epoch open (a guard
    // forgotten) would leave the others waiting for it for ever.
    let outcome = outcome.map(|r| {
        r.and_then(|r| {
            let p = bsp.process();
            p.check_no_epoch("the end of the SPMD function", None)
                .map(|()| r)
        })
    });
    match outcome {
        Ok(Ok(r)) => {
            world.ended(pid, bsp.superstep_now());
            Some(r)
        }
        Ok(Err(e)) => {
            world.fail(e);
            None
        }
        Err(payload) => {
            if !payload.is::<AbortUnwind>() {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic with a non-string payload".to_string());
                world.fail(Error::new(
                    ErrorKind::Panicked { message },
                    "the SPMD function",
                    pid,
                    bsp.superstep_now(),
                    None,
                ));
            }
            None
        }
    }
}
