//! Starting a run: the Rust counterpart of `bsp_begin` / `bsp_end`.

use std::cell::{Cell, RefCell};
use crate::error::SourceLocation;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use crate::bsp::{AbortUnwind, Bsp};
use crate::engine::World;
use crate::error::{Error, ErrorKind};
use crate::process::Process;

/// Which engine runs the processes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Engine {
    /// One process on the calling thread (any request gives `p = 1`): the
    /// reference engine.
    Serial,
    /// Every process is a thread of this OS process; process 0 runs on the
    /// calling thread. The default.
    #[default]
    Threads,
}

impl Engine {
    /// Every engine, for tests that run a scenario on each.
    pub const ALL: [Engine; 2] = [Engine::Serial, Engine::Threads];

    /// The engine's name as used on command lines and in `BSPLIB_ENGINE`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Serial => "serial",
            Engine::Threads => "threads",
        }
    }

    /// The engine named `name` (`serial`, `threads`).
    pub fn from_name(name: &str) -> Option<Self> {
        Engine::ALL.into_iter().find(|e| e.name() == name)
    }
}

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
#[derive(Clone, Copy, Debug)]
pub struct Runtime {
    nprocs: usize,
    engine: Engine,
}

impl Runtime {
    /// A run of `nprocs` processes (`bsp_begin(maxprocs)`) on the default
    /// engine.
    pub fn new(nprocs: usize) -> Self {
        Runtime {
            nprocs,
            engine: Engine::default(),
        }
    }

    /// Chooses the engine.
    pub fn engine(mut self, engine: Engine) -> Self {
        self.engine = engine;
        self
    }

    /// The number of processes the run will have (the engine may give fewer
    /// than requested, as `bsp_begin` allows).
    pub fn nprocs(&self) -> usize {
        match self.engine {
            Engine::Serial => self.nprocs.min(1),
            Engine::Threads => self.nprocs,
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
    /// # Errors
    ///
    /// The error that stopped the run; [`ErrorKind::NoProcesses`] for
    /// `nprocs == 0`; [`ErrorKind::Nested`] inside another run (which it
    /// also stops, naming the calling process and its superstep).
    #[track_caller]
    pub fn run<R, F>(&self, spmd: F) -> Result<Vec<R>, Error>
    where
        F: Fn(&mut Bsp) -> Result<R, Error> + Sync,
        R: Send,
    {
        let loc = Some(SourceLocation::caller());
        if let Some(err) = nested_error(loc) {
            return Err(err);
        }
        let n = self.nprocs();
        if n == 0 {
            return Err(Error::new(ErrorKind::NoProcesses, "bsp_begin", 0, 0, loc));
        }
        let world = Arc::new(match self.engine {
            Engine::Serial => World::serial(),
            Engine::Threads => World::threads(n),
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
        match world.failure() {
            Some(err) => Err(err),
            None => Ok(results
                .into_iter()
                .map(|r| r.expect("a process without result recorded a failure"))
                .collect()),
        }
    }
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
    /// The superstep of the current thread's process, kept by `Bsp::sync`
    /// for errors raised outside a `Bsp` method (a nested run).
    static SUPERSTEP: Cell<u64> = const { Cell::new(0) };
}

/// Records that the current thread's process entered superstep `s`.
#[inline]
pub(crate) fn note_superstep(s: u64) {
    SUPERSTEP.with(|c| c.set(s));
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
            SUPERSTEP.with(Cell::get),
            loc,
        );
        outer.world.fail(err.clone());
        Some(err)
    })
}

/// Marks the current thread as running a BSP process.
struct InRun;

impl InRun {
    fn enter(pid: usize, world: &Arc<World>) -> Self {
        CURRENT.with(|c| {
            *c.borrow_mut() = Some(Current {
                pid,
                world: Arc::clone(world),
            })
        });
        note_superstep(0);
        InRun
    }
}

impl Drop for InRun {
    fn drop(&mut self) {
        CURRENT.with(|c| *c.borrow_mut() = None);
    }
}

/// One process from start to end: runs `spmd` and turns its outcome into a
/// result or the run's failure.
fn process_main<R, F>(pid: usize, world: &Arc<World>, start: Instant, spmd: &F) -> Option<R>
where
    F: Fn(&mut Bsp) -> Result<R, Error>,
{
    let _in_run = InRun::enter(pid, world);
    let mut bsp = Bsp::new(Process::new(pid, Arc::clone(world), start));
    let outcome = catch_unwind(AssertUnwindSafe(|| spmd(&mut bsp)));
    match outcome {
        Ok(Ok(r)) => {
            world.ended(pid);
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
