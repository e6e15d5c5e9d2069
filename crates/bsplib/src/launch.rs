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
        let n = Runtime::new(nprocs).engine(engine).check_start(loc)?;
        let world = match engine {
            Engine::Serial => World::serial(),
            Engine::Threads => World::threads(n),
            Engine::Processes => World::processes(n).map_err(|detail| {
                Error::new(ErrorKind::Startup { detail }, "bsp_begin", 0, 0, loc)
            })?,
        };
        Ok(Arc::new(Launch {
            world: Arc::new(world),
            start: Instant::now(),
            engine,
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
    /// calling OS process (0 in the caller). A forked process's standard
    /// input is `/dev/null`: input is process 0's. With `exit_on_stop`,
    /// once the run is stopped by an error, process 0 reports it and exits
    /// with status 1 even while its own code computes (the C interface's
    /// behaviour). Other engines: 0.
    ///
    /// # Errors
    ///
    /// A failed `fork`.
    pub fn fork(&self, exit_on_stop: bool) -> Result<usize, Error> {
        let Some(shared) = self.world.shared() else {
            return Ok(0);
        };
        shared.exit_on_stop(exit_on_stop);
        let pid = processes::fork(&self.world, shared)?;
        if pid != 0 {
            processes::detach_stdin();
        }
        Ok(pid)
    }

    /// Attaches process `pid` to the calling thread.
    pub fn attach(&self, pid: usize) -> Attached {
        Attached {
            _in_run: InRun::enter(pid, &self.world),
            bsp: Bsp::new(Process::new(pid, Arc::clone(&self.world), self.start)),
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
        drop(attached);
        self.world.ended(pid);
        match self.world.shared() {
            Some(shared) => shared.set_done(pid, None),
            None => Ok(()),
        }
    }

    /// Process 0 of a `processes` run: kills the other processes (the run
    /// failed). Elsewhere nothing.
    pub fn kill_children(&self) {
        if let Some(shared) = self.world.shared() {
            processes::kill_children(shared);
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

/// See [`Launch::report`]. A process that does not print waits (up to a
/// second) for the one printing, so that ending the program does not cut
/// the message short.
pub(crate) fn report(world: &World) -> bool {
    use std::io::Write;
    let state = world.reported();
    match world.failure() {
        Some(err) if state.claim() => {
            // One write: a line is not interleaved with, or cut by, others.
            let line = format!("bsplib: {err}\n");
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
            state.done();
            true
        }
        _ => {
            state.wait(std::time::Duration::from_secs(1));
            false
        }
    }
}
