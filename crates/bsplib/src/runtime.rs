//! Starting a run: the Rust counterpart of `bsp_begin` / `bsp_end`.

use crate::error::SourceLocation;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bsp::Bsp;
use crate::codec::Portable;
use crate::engine::World;
use crate::error::{Error, ErrorKind};

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
/// let pids = Runtime::new(1).engine(Engine::Serial).run(|bsp| Ok(bsp.pid()))?;
/// assert_eq!(pids, vec![0]); // the serial engine runs one process
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
    /// `mpi`: process 0 could not make or write its profile directory
    /// (its start-up settings say so): every rank's start fails with it.
    profile_failed: Option<String>,
}

impl Runtime {
    /// A run of `nprocs` processes (`bsp_begin(maxprocs)`) on the default
    /// engine, `threads`, whatever the environment says: the same call
    /// gives the same run everywhere. [`Runtime::from_env`] lets the
    /// environment choose. `usize::MAX` asks for every process there is
    /// ([`nprocs`](Runtime::nprocs)).
    ///
    /// # Errors
    ///
    /// None here; the run fails at its start ([`ErrorKind::Startup`]),
    /// rather than run otherwise than asked:
    ///
    /// - when an MPI launcher started this program as one rank of several
    ///   (`OMPI_COMM_WORLD_SIZE` or `PMI_SIZE` greater than 1) and the
    ///   engine is not `mpi`: every rank would run a whole run of its own.
    ///   The error names the engine and says how to choose `mpi`: `mpirun
    ///   -x BSPLIB_ENGINE=mpi` with [`Runtime::from_env`], or
    ///   [`Engine::Mpi`] (a build without the cargo feature `mpi` is told
    ///   so). A job of one rank runs any engine;
    /// - on [`Engine::Serial`] with `nprocs` > 1 (see there).
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{Engine, ErrorKind, Runtime};
    /// let err = Runtime::new(4).engine(Engine::Serial).run(|bsp| Ok(bsp.pid())).unwrap_err();
    /// assert!(matches!(err.kind(), ErrorKind::Startup { .. }));
    /// assert!(err.to_string().contains("the serial engine runs one process; 4 were asked for"));
    /// ```
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
            profile_failed: None,
        }
    }

    /// A run of `nprocs` processes configured by the environment: the
    /// engine `BSPLIB_ENGINE` names ([`Engine::from_env`]; `threads` when it
    /// is not set) and the deadline in `BSPLIB_DEADLINE` (seconds; see
    /// [`deadline`](Runtime::deadline)). This is how one binary runs on
    /// threads by default and on MPI under `mpirun -x BSPLIB_ENGINE=mpi`
    /// (or `bsprun --engine mpi`): [`run`](Runtime::run) works on every
    /// engine.
    ///
    /// # Examples
    ///
    /// ```
    /// // BSPLIB_ENGINE=processes cargo run ... runs this on processes.
    /// let pids = bsplib::Runtime::from_env(2).run(|bsp| Ok(bsp.pid() as u32))?;
    /// assert_eq!(pids, vec![0, 1]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// None here; a value that names no engine, or no number of seconds,
    /// makes the run fail at its start ([`ErrorKind::Startup`]), saying so;
    /// and so do the refusals of [`Runtime::new`]: under an MPI launcher
    /// that started several ranks, an engine other than `mpi` (pass
    /// `-x BSPLIB_ENGINE=mpi` to `mpirun`), and `serial` with
    /// `nprocs` > 1.
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
    /// directory into one trace and an HTML report). On `mpi` the files
    /// travel to process 0, which writes them all into its `dir`: a
    /// directory local to each host holds the whole profile on process
    /// 0's. The environment
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
    /// each process writes its file after its SPMD function returns (on
    /// `mpi`, process 0 writes every file after the run's end).
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
    /// [`Runtime::from_env`] (`bsprun --deadline`). The other waits of the
    /// library (a counter, a fence, an epoch, a window's lock) have the
    /// same deadline.
    ///
    /// On `mpi` the deadline ends the job (`MPI_Abort`, status 1) once the
    /// waiting process of least pid has printed the error: a process that
    /// never arrives cannot take part in returning it as a value.
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
    /// [`run`](Runtime::run)), no other thread of the
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
    /// let refused = runtime.run(|bsp| Ok(bsp.pid() as u32)).unwrap_err();
    /// assert!(matches!(refused.kind(), ErrorKind::ThreadsAtFork { threads: 2 }));
    /// // SAFETY: the only other thread sleeps and reads an atomic: it holds
    /// // no lock the forked process could need.
    /// let vouched = unsafe { runtime.fork_with_threads() };
    /// let pids = vouched.run(|bsp| Ok(bsp.pid() as u32))?;
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
    /// of the job; on `serial`, 1, the run refusing a request of more).
    /// `usize::MAX` asks for every process there is: the job's ranks on
    /// `mpi`, [`available_processes`] on `threads` and `processes`, 1 on
    /// `serial`.
    pub fn nprocs(&self) -> usize {
        match self.engine {
            Engine::Serial => self.nprocs.min(1),
            // "As many as there are": the hardware threads.
            Engine::Threads | Engine::Processes if self.nprocs == usize::MAX => {
                available_processes()
            }
            Engine::Threads | Engine::Processes => self.nprocs,
            #[cfg(feature = "mpi")]
            Engine::Mpi => {
                crate::engine::start::mpi::world_size().map_or(0, |n| self.nprocs.min(n))
            }
            #[cfg(not(feature = "mpi"))]
            Engine::Mpi => self.nprocs,
        }
    }

    /// Runs `spmd` on every process and returns each process's result, in
    /// pid order, or the error that stopped the run: on every engine.
    ///
    /// Returning from `spmd` is `bsp_end`. A run stops with an error when
    /// any process: makes a call BSPlib calls an error, returns `Err`,
    /// panics, calls [`Bsp::abort`], or returns while another waits for it
    /// in [`Bsp::sync`]. The first such error is the run's; the other
    /// processes see [`ErrorKind::Stopped`] at their next sync.
    ///
    /// The results are [`Portable`]: on `processes` and `mpi`, where a
    /// process has its own address space, each is encoded where it was
    /// computed and decoded here; on `serial` and `threads` they move as
    /// they are, never encoded. `#[derive(Portable)]` makes a struct or an
    /// enum of such values one.
    ///
    /// On `mpi`, every rank runs the whole program: by default the code
    /// after `run` runs on process 0 only (the other ranks end in `run`, as
    /// `bsp_end` ends them in C), unless
    /// [`return_everywhere(true)`](Runtime::return_everywhere); on the other
    /// engines one caller continues.
    ///
    /// # Examples
    ///
    /// A derived struct returned from forked processes:
    ///
    /// ```
    /// use bsplib::{Engine, Portable, Runtime};
    ///
    /// #[derive(Portable, Debug, PartialEq)]
    /// struct Report {
    ///     pid: usize,
    ///     name: String,
    ///     squares: Vec<u64>,
    /// }
    ///
    /// let reports = Runtime::new(3).engine(Engine::Processes).run(|bsp| {
    ///     let pid = bsp.pid();
    ///     bsp.sync()?;
    ///     Ok(Report {
    ///         pid,
    ///         name: format!("process {pid}"),
    ///         squares: (0..pid as u64).map(|i| i * i).collect(),
    ///     })
    /// })?;
    /// assert_eq!(reports[2], Report { pid: 2, name: "process 2".into(), squares: vec![0, 1] });
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The error that stopped the run; [`ErrorKind::NoProcesses`] for
    /// `nprocs == 0`; [`ErrorKind::Nested`] inside another run (which it
    /// also stops, naming the calling process and its superstep);
    /// [`ErrorKind::Startup`] when the engine cannot start (the `mpi`
    /// engine in a build without it, a bad `BSPLIB_ENGINE` or
    /// `BSPLIB_DEADLINE` for [`Runtime::from_env`], the `serial` engine
    /// asked for more than one process, or an engine other than `mpi` in
    /// a program an MPI launcher started as one rank of several). On
    /// `processes`:
    /// [`ErrorKind::Died`] when a process dies (a signal, or `exit`), or
    /// leaves a result that does not decode; [`ErrorKind::ThreadsAtFork`]
    /// (call `bsp_begin`, process 0, superstep 0) when the run has more
    /// than one process and the program has other threads at the fork,
    /// unless the caller vouched for them with
    /// [`fork_with_threads`](Runtime::fork_with_threads). The threads are
    /// counted by the kernel's account (`/proc/self/stat`); where that
    /// cannot be read the count is unknown and the run is not refused.
    ///
    /// # Panics
    ///
    /// If a result's [`Portable::decode`] panics (the panic goes on, after
    /// every process ended). A panic of `spmd` is the run's error
    /// ([`ErrorKind::Panicked`]), as is a panic of [`Portable::encode`]
    /// where a process encodes its result (`processes`, `mpi`): the run
    /// fails, naming `Portable::encode` and the process, and on `mpi`
    /// the panic goes on in that rank after the results were gathered.
    #[track_caller]
    pub fn run<R, F>(&self, spmd: F) -> Result<Vec<R>, Error>
    where
        F: Fn(&mut Bsp) -> Result<R, Error> + Sync,
        R: Portable + Send,
    {
        let loc = Some(SourceLocation::caller());
        match self.engine {
            Engine::Processes => self.run_forked(spmd, loc),
            #[cfg(feature = "mpi")]
            Engine::Mpi => self.run_mpi(spmd, loc),
            _ => self.run_in_caller(spmd, loc),
        }
    }

    /// [`run`](Runtime::run) on the engines whose processes share the
    /// caller's address space (`serial`, `threads`): the results move,
    /// unencoded. (The `mpi` engine of a build without it comes here too,
    /// for the start's error.)
    fn run_in_caller<R, F>(&self, spmd: F, loc: Option<SourceLocation>) -> Result<Vec<R>, Error>
    where
        F: Fn(&mut Bsp) -> Result<R, Error> + Sync,
        R: Send,
    {
        let n = self.check_start(loc)?;
        watch_exits();
        let world = Arc::new(match self.engine {
            Engine::Serial => self.world(World::serial(), loc)?,
            Engine::Threads => self.world(World::threads(n), loc)?,
            Engine::Processes | Engine::Mpi => {
                unreachable!("run starts the {} engine elsewhere", self.engine.name())
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

/// Runs `spmd` on `nprocs` processes of the default engine (`threads`,
/// whatever the environment says); see [`Runtime::run`], and
/// [`Runtime::from_env`] to let `BSPLIB_ENGINE` choose. The results are
/// [`Portable`] (`#[derive(Portable)]` for your own types), so that the
/// same function runs on every engine; on `threads` they move, unencoded.
///
/// # Errors
///
/// The error that stopped the run (see [`Runtime::run`]). Under an MPI
/// launcher that started this program as one rank of several
/// (`OMPI_COMM_WORLD_SIZE` or `PMI_SIZE` greater than 1),
/// [`ErrorKind::Startup`] at once: each rank would run a `threads` run of
/// its own (see [`Runtime::new`]; on MPI, use [`Runtime::from_env`] and
/// `mpirun -x BSPLIB_ENGINE=mpi`).
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
    R: Portable + Send,
{
    Runtime::new(nprocs).run(spmd)
}

mod process;
mod report;
#[cfg(feature = "mpi")]
mod settings;
mod start;

#[cfg(feature = "raw")]
pub(crate) use process::{current_pid, new_process, InRun};
use process::{process_main, watch_exits};
pub(crate) use report::report;
use start::deadline_from_env;
