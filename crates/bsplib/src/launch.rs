//! Starting processes for front doors that bracket SPMD code themselves, as
//! C's `bsp_begin` ... `bsp_end` do (the `bsplib-c` crate). Rust programs
//! use [`Runtime`](crate::Runtime) instead.
//!
//! A [`Launch`] is one run. On the `threads` engine the front door spawns
//! the threads and [`attach`](Launch::attach)es each to its process; on the
//! `processes` engine [`fork`](Launch::fork) creates the processes. Errors
//! are values here too; [`Launch::report`] prints the run's error once, in
//! the form the C interface uses.
//!
//! # Safety
//!
//! Hidden as it is, this module is public API, and it hands out what
//! [`Runtime`] keeps to itself: the fork, the handles, the end of a
//! process and of the run. Misused, they give a process two owners (two
//! writers of its channels: a data race), fork a program whose other
//! threads hold locks (a process that waits forever), or end and stop
//! processes under the feet of the others (a run that never returns, or a
//! program ended in the middle of its work). So every call that starts,
//! forks, attaches, ends or stops a run is an `unsafe fn` whose `# Safety`
//! section states the protocol its caller, the C front door (`bsplib-c`),
//! keeps:
//!
//! 1. [`Launch::new`] once per program, from the thread that runs
//!    process 0.
//! 2. `processes` and `mpi`: [`Launch::fork`] once, from that thread,
//!    before any process is attached; each OS process then runs the pid it
//!    returned. `threads`: one thread of the front door's per process
//!    `1..p`.
//! 3. [`Launch::attach`] once per process, on the one thread that runs it
//!    for the whole run, and that runs no other process.
//! 4. [`Launch::end`] with that handle when the process ends; then
//!    [`Launch::leave`] on a forked process or rank, [`Launch::join`] on
//!    process 0.
//! 5. On an error, [`Launch::record_failure`], then [`Launch::stop`], on
//!    the way to ending the program.
//!
//! Queries that cannot break the run (the engine, the process count, the
//! run's error, the status board, whether this is a process the program
//! forked itself) stay safe; each says why.
//!
//! # Examples
//!
//! The protocol for a `threads` run of one process:
//!
//! ```
//! use bsplib::launch::Launch;
//! use bsplib::Engine;
//! // SAFETY: this thread runs the run's one process, attached once below,
//! // and ends it with `end`; nothing forks.
//! let launch = unsafe { Launch::new(Engine::Threads, 1, None) }?;
//! // SAFETY: process 0, on this thread only, attached once.
//! let mut me = unsafe { launch.attach(0) }?;
//! assert_eq!(me.bsp().pid(), 0);
//! me.bsp().sync()?;
//! // SAFETY: the handle of this launch, ended once.
//! unsafe { launch.end(me) }?;
//! // SAFETY: process 0 ended: no process waits for it.
//! unsafe { launch.join() };
//! # Ok::<(), bsplib::Error>(())
//! ```
//!
//! Safe code cannot start a run here, nor make a handle:
//!
//! ```compile_fail,E0133
//! use bsplib::launch::Launch;
//! let launch = Launch::new(bsplib::Engine::Threads, 1, None).unwrap();
//! ```
//!
//! ```compile_fail,E0133
//! use bsplib::launch::Launch;
//! // SAFETY: as in the example above.
//! let launch = unsafe { Launch::new(bsplib::Engine::Threads, 1, None) }.unwrap();
//! let handle = launch.attach(0);
//! ```
//!
//! ```compile_fail,E0133
//! use bsplib::launch::Launch;
//! // SAFETY: as in the example above.
//! let launch = unsafe { Launch::new(bsplib::Engine::Processes, 2, None) }.unwrap();
//! let pid = launch.fork(false);
//! ```

use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::Arc;
use std::time::Instant;

use crate::bsp::Bsp;
use crate::engine::start::processes;
use crate::engine::World;
use crate::error::{Error, ErrorKind, SourceLocation};
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
    /// Processes of this OS process inside [`end_at`](Launch::end_at)
    /// now (writing their profiles): [`settle`](Launch::settle) waits for
    /// them.
    ending: std::sync::atomic::AtomicUsize,
    /// Per pid: the process is ending the program after the run's error
    /// ([`settle`](Launch::settle)): nobody waits for it.
    leaving: Box<[std::sync::atomic::AtomicBool]>,
}

/// A process of a [`Launch`], attached to the current thread.
pub struct Attached {
    bsp: Bsp,
    _in_run: InRun,
}

impl Attached {
    /// The process's handle.
    ///
    /// Safe: an `Attached` exists only through [`Launch::attach`], whose
    /// caller vouched that it is the one handle of its process; it is
    /// neither `Send` nor `Sync`, and this lends its handle out for as long
    /// as it is borrowed, on its thread.
    pub fn bsp(&mut self) -> &mut Bsp {
        &mut self.bsp
    }
}

impl Launch {
    /// A run of `nprocs` processes on `engine` (not yet started: spawn or
    /// fork the processes, then attach them). On `mpi`, a rank the run has
    /// no process for ends inside this call (MPI finalised, exit status 0).
    ///
    /// # Safety
    ///
    /// The caller is a front door that brackets SPMD code itself, called
    /// from the thread that will run process 0, and it keeps the protocol
    /// of this module (its `# Safety`) for the returned run: every other
    /// call on it relies on that. On `mpi`, no other thread of the program
    /// may be inside an MPI call (MPI is initialised with
    /// `MPI_THREAD_SERIALIZED`).
    ///
    /// # Errors
    ///
    /// As [`Runtime::run`] at its start: no processes, a nested run, an
    /// engine that cannot start.
    ///
    /// # Examples
    ///
    /// See the module's.
    pub unsafe fn new(
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
                let (n, member, settings) =
                    crate::engine::start::mpi::join(n, false, &|| runtime.settings_bytes())
                        .map_err(|d| Error::startup(d, loc))?;
                match member {
                    Some((pid, engine)) => {
                        rank_pid = Some(pid);
                        // Process 0's run-wide settings, whatever this
                        // host's environment.
                        runtime
                            .agreed(&settings)
                            .world(World::mpi(n, engine), loc)?
                    }
                    // A rank the run has no process for ends here.
                    None => crate::engine::start::mpi::finalize_and_exit(),
                }
            }
            #[cfg(not(feature = "mpi"))]
            Engine::Mpi => unreachable!("check_start refuses an unavailable engine"),
        };
        let flags = || {
            (0..world.nprocs())
                .map(|_| std::sync::atomic::AtomicBool::new(false))
                .collect()
        };
        let (attached, leaving) = (flags(), flags());
        Ok(Arc::new(Launch {
            world: Arc::new(world),
            start: Instant::now(),
            engine,
            rank_pid,
            attached,
            ending: std::sync::atomic::AtomicUsize::new(0),
            leaving,
        }))
    }

    /// The engine. A query: safe.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// The number of processes. A query: safe.
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
    /// It forks whatever the threads of the program: unlike
    /// [`Runtime::run`], which refuses a fork of a program with
    /// other threads ([`ErrorKind::ThreadsAtFork`]), this is C's
    /// `bsp_begin`, which BSPlib defines as the start of the processes.
    ///
    /// # Safety
    ///
    /// - Called once per run, from the thread that runs process 0, before
    ///   any process is attached.
    /// - At the fork, no other thread of the program holds a lock, or is
    ///   inside an operation, that the forked processes will need: a lock
    ///   held then stays held forever in them (see
    ///   [`Runtime::fork_with_threads`]). The C front door accepts this
    ///   for C programs and documents it (the `processes` engine's README).
    /// - The OS process that gets pid `p != 0` runs process `p` only:
    ///   it attaches `p` on this thread, and ends with [`end`](Self::end)
    ///   and [`leave`](Self::leave), never going back into what belongs to
    ///   process 0.
    /// - With `exit_on_stop`, process 0 may be ended (`_exit(1)`, from the
    ///   monitor thread, without destructors) at any moment once the run is
    ///   stopped: the caller is ready for that (C programs are).
    ///
    /// # Errors
    ///
    /// A failed `fork`.
    pub unsafe fn fork(&self, exit_on_stop: bool) -> Result<usize, Error> {
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
    /// (other engines: `None`). A query: safe.
    pub fn rank_pid(&self) -> Option<usize> {
        self.rank_pid
    }

    /// Ends the calling OS process after its BSP process ended (`bsp_end` on
    /// a process other than 0 of `processes` or `mpi`), flushing output.
    ///
    /// # Safety
    ///
    /// Called only in an OS process that runs a process other than 0 of a
    /// `processes` or `mpi` run, after [`end`](Self::end): it ends the OS
    /// process at once (`_exit(0)`), skipping destructors and exit
    /// handlers, which belong to process 0; in process 0 it would end the
    /// program with status 0 whatever the run's outcome, the others
    /// orphaned. On `mpi` it finalises MPI: no other thread may be inside
    /// an MPI call.
    pub unsafe fn leave(&self) -> ! {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        #[cfg(feature = "mpi")]
        if self.engine == Engine::Mpi {
            crate::engine::start::mpi::finalize_and_exit();
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
    /// # Safety
    ///
    /// `pid` is the process the calling thread runs for the whole run: on
    /// `processes` and `mpi` the pid [`fork`](Self::fork) returned to this
    /// OS process; on `threads`, a pid no other thread attaches. A second
    /// handle in this address space is refused (see Errors), but not one in
    /// another: process 0 attaching pid 1 of a `processes` run would write
    /// pid 1's channels in shared memory while the forked process 1 does (a
    /// data race). The calling thread runs no other BSP process, of this run
    /// or another, until the handle is ended with [`end`](Self::end) on
    /// this launch.
    ///
    /// # Errors
    ///
    /// A pid out of range, or one attached already in this address space
    /// (a second handle for one process would let two owners write its
    /// outgoing state): [`ErrorKind::Startup`].
    pub unsafe fn attach(&self, pid: usize) -> Result<Attached, Error> {
        let taken = self
            .attached
            .get(pid)
            .map(|flag| flag.swap(true, std::sync::atomic::Ordering::AcqRel));
        match taken {
            Some(false) => Ok(Attached {
                _in_run: InRun::enter(pid, &self.world),
                bsp: Bsp::new(crate::runtime::new_process(
                    pid,
                    Arc::clone(&self.world),
                    self.start,
                )),
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
    /// # Safety
    ///
    /// `attached` was made by [`attach`](Self::attach) on this launch (not
    /// on another run's: its pid would be marked ended here while this
    /// run's process of that pid goes on, and process 0 would read a done
    /// flag and a result it never left), on the calling thread.
    ///
    /// # Errors
    ///
    /// A result that does not fit the engine (never for `None`).
    pub unsafe fn end(&self, attached: Attached) -> Result<(), Error> {
        // SAFETY: the caller's promises, forwarded.
        unsafe { self.end_at(attached, "bsp_end", None) }
    }

    /// [`end`](Self::end) as the call `call` made at `loc`; a process that
    /// ends with a window lock, view or epoch open fails instead (the
    /// others could wait for it for ever).
    ///
    /// # Safety
    ///
    /// As for [`end`](Self::end).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EpochOpen`](crate::ErrorKind::EpochOpen); as for
    /// [`end`](Self::end).
    pub unsafe fn end_at(
        &self,
        attached: Attached,
        call: &'static str,
        loc: Option<crate::SourceLocation>,
    ) -> Result<(), Error> {
        attached.bsp.process().check_no_epoch(call, loc)?;
        let pid = attached.bsp.pid();
        let superstep = attached.bsp.superstep();
        // Counted while its profile is written (the drop): a process that
        // ends the program after the run's error waits for it (`settle`).
        self.ending
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        drop(attached);
        self.world.ended(pid, superstep);
        self.ending
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        // `mpi`: the profiles travel to process 0 if every process ended
        // with this one (`profile/gather.rs`); elsewhere nothing to do.
        crate::profile::gather(&self.world);
        match self.world.shared() {
            Some(shared) => shared.set_done(pid, None),
            None => Ok(()),
        }
    }

    /// Before a front door ends the program after the run's error (the
    /// run is stopped): waits, for at most `limit`, while another process
    /// of this OS process is inside [`end_at`](Self::end_at) (writing its
    /// profile) or, in a profiled `threads` run, still running: computing
    /// or in a sync, it may be on its way to `bsp_end` (one whose sync is
    /// stopped ends the program too, and is not waited for from then on).
    /// So a process that ends as the run fails keeps its profile: on
    /// `threads` the processes share the OS process the error ends
    /// (`PROFILE.md`, "Memory and output"). A process that computes on
    /// past `limit` does not delay the end further, and leaves no profile.
    ///
    /// Safe: it only waits.
    pub fn settle(&self, limit: std::time::Duration) {
        use crate::engine::board::State;
        use std::sync::atomic::Ordering::SeqCst;
        let me = crate::runtime::current_pid();
        if let Some(flag) = me.and_then(|me| self.leaving.get(me)) {
            flag.store(true, SeqCst);
        }
        let profiled =
            self.engine == Engine::Threads && self.world.ext::<crate::profile::Setup>().is_some();
        // Computing, or in a sync: stopped there (it then ends the
        // program too, `leaving`), or leaving one that completed.
        let running = |q: usize| {
            Some(q) != me
                && !self.leaving[q].load(SeqCst)
                && matches!(
                    self.world.board().get(q).1,
                    State::Computing | State::Syncing
                )
        };
        let until = Instant::now() + limit;
        while (self.ending.load(SeqCst) > 0 || profiled && (0..self.leaving.len()).any(running))
            && Instant::now() < until
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Process 0 of a `processes` run: waits until the others exited.
    ///
    /// # Safety
    ///
    /// Called by process 0 after it ended ([`end`](Self::end)) or once the
    /// run is stopped ([`stop`](Self::stop)): the others wait for process
    /// 0 in their syncs, so called earlier it waits forever (a run that
    /// never returns, which the safe API rules out).
    pub unsafe fn join(&self) {
        if let Some(shared) = self.world.shared() {
            processes::join(shared);
        }
        // The progress view's line goes now (else at the program's exit).
        crate::progress::finish();
    }

    /// Records `err` as the run's error unless one is recorded; true if it
    /// now is. Does not stop anyone: see [`stop`](Self::stop).
    ///
    /// Safe: the first error wins, under the run's own claim protocol, and
    /// nothing changes course until [`stop`](Self::stop).
    pub fn record_failure(&self, err: Error) -> bool {
        self.world.record_failure(err)
    }

    /// Stops every process.
    ///
    /// # Safety
    ///
    /// Called on the way to ending the program after the run's error, once
    /// it is recorded ([`record_failure`](Self::record_failure)): processes
    /// stopped without one have no error to report. On `processes` forked
    /// with `exit_on_stop`, process 0 is then ended (`_exit(1)`) from its
    /// monitor thread, whatever it is doing; on `mpi` the whole job is
    /// aborted (`MPI_Abort`), which no other thread may race with an MPI
    /// call of its own.
    pub unsafe fn stop(&self) {
        self.world.stop()
    }

    /// The run's error, if any. A query: safe.
    pub fn failure(&self) -> Option<Error> {
        self.world.failure()
    }

    /// Prints the run's error to standard error as `bsplib: <error>`, once
    /// per run whichever process calls it; true if this call printed.
    ///
    /// Safe: it writes one line to standard error (and waits up to a second
    /// for the process printing it); the run goes on.
    pub fn report(&self) -> bool {
        crate::runtime::report(&self.world)
    }
}

impl Launch {
    /// The run's report state (0: nobody reported the error, 1: somebody
    /// is printing it, 2: printed), shared by every process of the run, for
    /// a crash handler that prints its own line: it claims the report by a
    /// compare-exchange from 0 to 1, and stores 2 once printed.
    ///
    /// Safe: using the pointer is the caller's `unsafe`; it is valid for
    /// as long as the run (this `Launch`) lives.
    pub fn report_word(&self) -> *const std::sync::atomic::AtomicU32 {
        std::ptr::from_ref(self.world.reported()).cast()
    }

    /// Process `pid`'s word on the run's status board (`superstep << 2 |
    /// state`, state 0 computing, 1 waiting in `bsp_sync`, 2 ended), for a
    /// signal handler in C that says where the process is.
    ///
    /// Safe: as for [`report_word`](Self::report_word).
    pub fn status_word(&self, pid: usize) -> *const std::sync::atomic::AtomicU64 {
        self.world.board().word(pid)
    }

    /// The superstep process `pid` was last seen in, from the run's status
    /// board. A query: safe.
    pub fn superstep_of(&self, pid: usize) -> u64 {
        self.world.board().get(pid).0
    }
}

/// True in a process that the program forked itself from a BSP process
/// (after the start of a run by [`Launch::new`]; on `mpi`, from a rank,
/// once MPI is set up, before `bsp_begin` too): it is not a BSP process,
/// and must neither make BSPlib calls nor report anything about the run.
/// A query: safe.
pub fn in_foreign_process() -> bool {
    #[cfg(feature = "mpi")]
    if crate::engine::start::mpi::is_foreign() {
        return true;
    }
    processes::is_foreign()
}

/// What the status board in the memory file `fd` says (`bsprun` passes
/// `BSPLIB_STATUS_FD` to the program, and reads it when the program was
/// interrupted or killed): whether the run's error was reported, and for
/// each process its superstep and where it was (`process 2: computing in
/// superstep 3`). `None` if no run used that file.
///
/// Safe: the file is borrowed (the caller's `BorrowedFd` says it is open
/// and stays so for the call), only read through a read-only
/// mapping of the size `fstat` gives, and believed only if it starts with
/// the board's magic word; a run's state is not touched.
pub fn describe_status(fd: BorrowedFd<'_>) -> Option<(bool, Vec<(u64, String)>)> {
    crate::engine::board::describe_fd(fd.as_raw_fd())
}

/// `mpi`: this process's rank in the job (initialising MPI if needed).
///
/// # Safety
///
/// MPI is initialised with `MPI_THREAD_SERIALIZED`: no other thread of the
/// program may be inside an MPI call meanwhile (the C front door calls it
/// in `bsp_init` and `bsp_begin`, before its run starts: on `mpi` the
/// library has no thread of its own then). Without the `mpi` feature it
/// touches nothing.
///
/// # Errors
///
/// MPI could not be initialised, or this build has no `mpi` engine.
pub unsafe fn mpi_rank() -> Result<usize, Error> {
    let startup =
        |detail: String| Error::new(ErrorKind::Startup { detail }, "bsp_init", 0, 0, None);
    #[cfg(feature = "mpi")]
    return crate::engine::start::mpi::world_rank().map_err(startup);
    #[cfg(not(feature = "mpi"))]
    Err(startup(
        "this build has no mpi engine: build with the cargo feature mpi".into(),
    ))
}

/// `mpi`: ends every rank of the job with `status` (a program that exits on
/// process 0 before its run began, while the other ranks wait for it).
///
/// # Safety
///
/// It ends the job (`MPI_Abort`; without the `mpi` feature, this process
/// with `exit`): called only where the program ends anyway (the C front
/// door's exit handler), and, as for [`mpi_rank`], with no other thread
/// inside an MPI call.
pub unsafe fn mpi_abort(status: i32) -> ! {
    #[cfg(feature = "mpi")]
    crate::engine::start::mpi::abort_with(status);
    #[cfg(not(feature = "mpi"))]
    std::process::exit(status)
}
