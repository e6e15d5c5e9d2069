//! Starting processes for front doors that bracket SPMD code themselves, as
//! C's `bsp_begin` ... `bsp_end` do (the `bsplib-c` crate). Rust programs
//! use [`Runtime`](crate::Runtime) instead.
//!
//! A [`Launch`] is one run. On the `threads` engine the front door spawns
//! the threads and [`attach`](Launch::attach)es each to its process; on the
//! `processes` engine [`fork`](Launch::fork) creates the processes. Errors
//! are values here too; [`Launch::report`] prints the run's error once, in
//! the form the C interface uses.

use std::sync::Arc;
use std::time::Instant;

use crate::bsp::Bsp;
use crate::engine::{processes, World};
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::Process;
use crate::runtime::{InRun, Runtime};
use crate::Engine;

/// One run started by a front door.
pub struct Launch {
    world: Arc<World>,
    start: Instant,
    engine: Engine,
    /// `mpi`: this rank's pid, if the run has a process for it.
    rank_pid: Option<usize>,
    /// Per pid: a handle was made ([`Launch::attach`]); never cleared.
    attached: Box<[std::sync::atomic::AtomicBool]>,
}

/// A process of a [`Launch`], attached to the current thread.
pub struct Attached {
    bsp: Bsp,
    _in_run: InRun,
}

impl Attached {
    /// The process's handle.
    pub fn bsp(&mut self) -> &mut Bsp {
        &mut self.bsp
    }
}

impl Launch {
    /// A run of `nprocs` processes on `engine` (not yet started: spawn or
    /// fork the processes, then attach them).
    ///
    /// # Errors
    ///
    /// As [`Runtime::run`] at its start: no processes, a nested run, an
    /// engine that cannot start.
    pub fn new(
        engine: Engine,
        nprocs: usize,
        loc: Option<SourceLocation>,
    ) -> Result<Arc<Self>, Error> {
        processes::watch_forks();
        // The engine is the front door's choice; the deadline the
        // environment's (`bsprun --deadline`).
        let runtime = Runtime::from_env(nprocs).engine(engine);
        let n = runtime.check_start(loc)?;
        #[cfg_attr(not(feature = "mpi"), allow(unused_mut))]
        let mut rank_pid = None;
        let world = match engine {
            Engine::Serial => runtime.world(World::serial(), loc)?,
            Engine::Threads => runtime.world(World::threads(n), loc)?,
            Engine::Processes => runtime.world(World::processes(n), loc)?,
            #[cfg(feature = "mpi")]
            Engine::Mpi => {
                let (n, member) =
                    crate::engine::mpi::join(n, false).map_err(|d| Error::startup(d, loc))?;
                match member {
                    Some((pid, engine)) => {
                        rank_pid = Some(pid);
                        runtime.world(World::mpi(n, engine), loc)?
                    }
                    // A rank the run has no process for ends here.
                    None => crate::engine::mpi::finalize_and_exit(),
                }
            }
            #[cfg(not(feature = "mpi"))]
            Engine::Mpi => unreachable!("check_start refuses an unavailable engine"),
        };
        let attached = (0..world.nprocs())
            .map(|_| std::sync::atomic::AtomicBool::new(false))
            .collect();
        Ok(Arc::new(Launch {
            world: Arc::new(world),
            start: Instant::now(),
            engine,
            rank_pid,
            attached,
        }))
    }

    /// The engine.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// The number of processes.
    pub fn nprocs(&self) -> usize {
        self.world.nprocs()
    }

    /// `processes` engine: forks processes `1..p` and returns the pid of the
    /// calling OS process (0 in the caller). `mpi`: this rank's pid. A forked process's standard
    /// input is `/dev/null`: input is process 0's. With `exit_on_stop`,
    /// once the run is stopped by an error, process 0 reports it and exits
    /// with status 1 even while its own code computes (the C interface's
    /// behaviour). `threads`, `serial`: 0.
    ///
    /// # Errors
    ///
    /// A failed `fork`.
    pub fn fork(&self, exit_on_stop: bool) -> Result<usize, Error> {
        let Some(shared) = self.world.shared() else {
            return Ok(self.rank_pid.unwrap_or(0));
        };
        shared.exit_on_stop(exit_on_stop);
        let pid = processes::fork(&self.world, shared)?;
        if pid != 0 {
            processes::detach_stdin();
        }
        Ok(pid)
    }

    /// `mpi`: every rank runs the program, and this one is process `pid`
    /// (other engines: `None`).
    pub fn rank_pid(&self) -> Option<usize> {
        self.rank_pid
    }

    /// Ends the calling OS process after its BSP process ended (`bsp_end` on
    /// a process other than 0 of `processes` or `mpi`), flushing output.
    pub fn leave(&self) -> ! {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        #[cfg(feature = "mpi")]
        if self.engine == Engine::Mpi {
            crate::engine::mpi::finalize_and_exit();
        }
        // SAFETY: flushing C stdio has no preconditions; `_exit` ends this
        // process without running handlers that belong to process 0.
        unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::_exit(0)
        }
    }

    /// Attaches process `pid` to the calling thread: its one handle for the
    /// whole run.
    ///
    /// # Errors
    ///
    /// A pid out of range, or one attached already in this address space
    /// (a second handle for one process would let two owners write its
    /// outgoing state): [`ErrorKind::Startup`].
    pub fn attach(&self, pid: usize) -> Result<Attached, Error> {
        let taken = self
            .attached
            .get(pid)
            .map(|flag| flag.swap(true, std::sync::atomic::Ordering::AcqRel));
        match taken {
            Some(false) => Ok(Attached {
                _in_run: InRun::enter(pid, &self.world),
                bsp: Bsp::new(Process::new(pid, Arc::clone(&self.world), self.start)),
            }),
            Some(true) => Err(Error::startup(
                format!("process {pid} has a handle already: a process is attached once per run"),
                None,
            )),
            None => Err(Error::startup(
                format!(
                    "process {pid} does not exist (the run has {} processes)",
                    self.world.nprocs()
                ),
                None,
            )),
        }
    }

    /// The process ended its SPMD code (`bsp_end`): others waiting for it
    /// in a sync will fail.
    ///
    /// # Errors
    ///
    /// A result that does not fit the engine (never for `None`).
    pub fn end(&self, attached: Attached) -> Result<(), Error> {
        let pid = attached.bsp.pid();
        let superstep = attached.bsp.superstep();
        drop(attached);
        self.world.ended(pid, superstep);
        match self.world.shared() {
            Some(shared) => shared.set_done(pid, None),
            None => Ok(()),
        }
    }

    /// Process 0 of a `processes` run: waits until the others exited.
    pub fn join(&self) {
        if let Some(shared) = self.world.shared() {
            processes::join(shared);
        }
    }

    /// Records `err` as the run's error unless one is recorded; true if it
    /// now is. Does not stop anyone: see [`stop`](Self::stop).
    pub fn record_failure(&self, err: Error) -> bool {
        self.world.record_failure(err)
    }

    /// Stops every process.
    pub fn stop(&self) {
        self.world.stop()
    }

    /// The run's error, if any.
    pub fn failure(&self) -> Option<Error> {
        self.world.failure()
    }

    /// Prints the run's error to standard error as `bsplib: <error>`, once
    /// per run whichever process calls it; true if this call printed.
    pub fn report(&self) -> bool {
        report(&self.world)
    }
}

impl Launch {
    /// The run's report state (0: nobody reported the error, 1: somebody
    /// is printing it, 2: printed), shared by every process of the run, for
    /// a crash handler that prints its own line: it claims the report by a
    /// compare-exchange from 0 to 1, and stores 2 once printed.
    pub fn report_word(&self) -> *const std::sync::atomic::AtomicU32 {
        std::ptr::from_ref(self.world.reported()).cast()
    }

    /// Process `pid`'s word on the run's status board (`superstep << 2 |
    /// state`, state 0 computing, 1 waiting in `bsp_sync`, 2 ended), for a
    /// signal handler in C that says where the process is.
    pub fn status_word(&self, pid: usize) -> *const std::sync::atomic::AtomicU64 {
        self.world.board().word(pid)
    }

    /// The superstep process `pid` was last seen in, from the run's status
    /// board.
    pub fn superstep_of(&self, pid: usize) -> u64 {
        self.world.board().get(pid).0
    }
}

/// True in a process that the program forked itself from a BSP process
/// (after the start of a run by [`Launch::new`]): it is not a BSP process,
/// and must neither make BSPlib calls nor report anything about the run.
pub fn in_foreign_process() -> bool {
    processes::is_foreign()
}

/// What the status board in the memory file `fd` says (`bsprun` passes
/// `BSPLIB_STATUS_FD` to the program, and reads it when the program was
/// interrupted or killed): whether the run's error was reported, and for
/// each process its superstep and where it was (`process 2: computing in
/// superstep 3`). `None` if no run used that file.
pub fn describe_status(fd: i32) -> Option<(bool, Vec<(u64, String)>)> {
    crate::engine::board::describe_fd(fd)
}

/// See [`Launch::report`]. A process that does not print waits (up to a
/// second) for the one printing, so that ending the program does not cut
/// the message short.
pub(crate) fn report(world: &World) -> bool {
    let state = world.reported();
    match world.failure() {
        Some(err) if state.claim() => {
            // One write, straight to the descriptor: a line is not
            // interleaved with, or cut by, others, and no lock of the
            // standard library is needed (this runs at exit too).
            let line = format!("bsplib: {err}\n");
            write_stderr(line.as_bytes());
            state.done();
            true
        }
        _ => {
            state.wait(std::time::Duration::from_secs(1));
            false
        }
    }
}

/// Writes `bytes` to file descriptor 2, retrying short writes.
fn write_stderr(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writes from a live buffer to a descriptor.
        let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// `mpi`: this process's rank in the job (initialising MPI if needed).
///
/// # Errors
///
/// MPI could not be initialised, or this build has no `mpi` engine.
pub fn mpi_rank() -> Result<usize, Error> {
    let startup =
        |detail: String| Error::new(ErrorKind::Startup { detail }, "bsp_init", 0, 0, None);
    #[cfg(feature = "mpi")]
    return crate::engine::mpi::world_rank().map_err(startup);
    #[cfg(not(feature = "mpi"))]
    Err(startup(
        "this build has no mpi engine: build with the cargo feature mpi".into(),
    ))
}

/// `mpi`: ends every rank of the job with `status` (a program that exits on
/// process 0 before its run began, while the other ranks wait for it).
pub fn mpi_abort(status: i32) -> ! {
    #[cfg(feature = "mpi")]
    crate::engine::mpi::abort_with(status);
    #[cfg(not(feature = "mpi"))]
    std::process::exit(status)
}
