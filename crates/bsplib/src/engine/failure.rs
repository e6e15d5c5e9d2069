//! The run's failure: recording its first error (across address spaces
//! too), stopping every process, telling waiters a process ended, and
//! reporting the error once ([`Reported`]).

#[cfg(feature = "mpi")]
use super::mpi;
use super::{board, processes, Sync, World};
use crate::error::Error;

/// The state of the report of a run's error: nobody, someone printing,
/// printed. Whoever claims it prints; the others wait for the print to end
/// before they end the program, so the message is never cut short.
#[derive(Default)]
#[repr(C)]
pub(crate) struct Reported(std::sync::atomic::AtomicU32);

impl Reported {
    /// True for the first caller only.
    pub(crate) fn claim(&self) -> bool {
        use std::sync::atomic::Ordering;
        self.0
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// True once somebody claimed the report (it is printed, or being
    /// printed).
    #[cfg_attr(not(feature = "raw"), allow(dead_code))]
    pub(crate) fn is_claimed(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Acquire) != 0
    }

    /// The claimer finished printing.
    pub(crate) fn done(&self) {
        self.0.store(2, std::sync::atomic::Ordering::Release);
    }

    /// Waits (at most `limit`) until a claimed report is printed.
    pub(crate) fn wait(&self, limit: std::time::Duration) {
        use std::sync::atomic::Ordering;
        let start = std::time::Instant::now();
        while self.0.load(Ordering::Acquire) == 1 && start.elapsed() < limit {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
}

impl World {
    /// How the run's error is reported once ([`World::report`]): set by
    /// the front door that made the world.
    pub(crate) fn set_reporter(&self, report: fn(&World) -> bool) {
        let _ = self.reporter.set(report);
    }

    /// Writes the run's error once (true if this call wrote it), with the
    /// reporter the front door set, else as a plain `bsplib:` line.
    pub(crate) fn report(&self) -> bool {
        if let Some(report) = self.reporter.get() {
            return report(self);
        }
        match self.failure() {
            Some(err) if self.reported().claim() => {
                crate::error::eprint_line(&format!("bsplib: {err}\n"));
                self.reported().done();
                true
            }
            _ => false,
        }
    }

    /// Records `err` as the error of the run unless one is recorded already,
    /// and stops every process.
    pub(crate) fn fail(&self, err: Error) {
        #[cfg(feature = "mpi")]
        let deadline = matches!(err.kind(), crate::error::ErrorKind::Deadline { .. });
        self.record_failure(err);
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            if !m.values() || deadline {
                // This MPI job ends at `stop`: say why first.
                self.report();
            }
            if deadline {
                // A process that never arrives cannot take part in ending
                // the run (errors as values too): the job ends here
                // (`mpi/deadline.rs`).
                mpi::abort();
            }
        }
        self.stop();
    }

    /// [`fail`](Self::fail) from inside a dispatching barrier, whose
    /// reduction an `mpi` rank cannot leave: the other ranks are told at
    /// once (stop messages), so that a rank waiting for this one outside
    /// the barrier (a fence waiting for an acknowledgement) stops waiting,
    /// fails and ends, and its end reduction completes this barrier. The
    /// guard of user code fails the run this way wherever a callback
    /// panics (`process/guard.rs`).
    pub(crate) fn fail_in_barrier(&self, err: Error) {
        self.fail(err);
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            m.send_stops();
        }
    }

    /// [`fail`](Self::fail) for an error every process finds alike at the
    /// same time (calls that differ between processes): on `mpi`, where each
    /// would print it, only process 0 does, and the others leave it time.
    pub(crate) fn fail_collective(&self, err: Error, me: usize) {
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            if me != 0 && !m.values() {
                self.record_failure(err);
                std::thread::sleep(std::time::Duration::from_secs(5));
                mpi::abort();
            }
        }
        let _ = me;
        self.fail(err);
    }

    /// Records `err` as the error of the run unless one is recorded
    /// already, without stopping anyone yet (a front door that prints the
    /// error before stopping the others uses this, then [`stop`](Self::stop)).
    /// True if `err` is now the run's error.
    pub(crate) fn record_failure(&self, err: Error) -> bool {
        if let Sync::Processes(s) = &self.sync {
            let bytes = crate::codec::encode_error_within(&err, processes::FAILURE_BYTES);
            if !s.record_failure(&bytes) {
                return false;
            }
        }
        let mut first = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            *first = Some(err);
            true
        } else {
            false
        }
    }

    /// Stops every process: their waits and their next calls fail.
    pub(crate) fn stop(&self) {
        match &self.sync {
            Sync::Serial(s) => s.stop(),
            Sync::Threads(b) => b.stop(),
            Sync::Processes(s) => s.barrier().stop(),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) if m.values() => m.stop(),
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => mpi::abort(),
        }
    }

    /// Who reports the run's error to the user (C interface), among all
    /// processes.
    pub(crate) fn reported(&self) -> &Reported {
        self.board.reported()
    }

    /// Process `pid` returned from the SPMD function in `superstep`.
    pub(crate) fn ended(&self, pid: usize, superstep: u64) {
        self.set_state(pid, superstep, board::State::Ended);
        match &self.sync {
            Sync::Serial(_) => {}
            Sync::Threads(b) => b.ended(pid),
            Sync::Processes(s) => s.barrier().ended(pid),
            // Errors as values: the end is `finish_mpi`, after the SPMD
            // function of a Rust run.
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) if m.values() => {}
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.ended(pid),
        }
    }

    /// `mpi` with errors as values: the end of process `pid` (see
    /// `mpi::Mpi::finish`); after it every process of the run has ended.
    #[cfg(feature = "mpi")]
    pub(crate) fn finish_mpi(&self, pid: usize) {
        if let Sync::Mpi(m) = &self.sync {
            m.finish(pid, self.failure().is_some());
        }
    }

    /// True when each process records its own errors and the run's error
    /// is gathered at its end (`mpi`, errors as values), so a process
    /// cannot learn during a sync that another failed.
    pub(crate) fn failures_gathered(&self) -> bool {
        match &self.sync {
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => true,
            _ => false,
        }
    }

    /// [`is_stopped`](World::is_stopped) for a polling wait of the
    /// library's own (windows): on `mpi` it also takes a failed process's
    /// stop message, which nothing else reads while this process polls.
    pub(crate) fn poll_stopped(&self) -> bool {
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            // A polling wait answers who-waits-where queries too
            // (`mpi/deadline.rs`).
            m.serve_queries();
            return m.poll_stopped();
        }
        self.is_stopped()
    }

    /// True once the run was stopped.
    #[inline]
    pub(crate) fn is_stopped(&self) -> bool {
        match &self.sync {
            Sync::Serial(s) => s.is_stopped(),
            Sync::Threads(b) => b.is_stopped(),
            Sync::Processes(s) => s.barrier().is_stopped(),
            // Ending the job on error: a stopped MPI job has ended.
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.is_stopped(),
        }
    }

    /// The error of the run, if any (for a `processes` run, whichever
    /// process recorded it).
    pub(crate) fn failure(&self) -> Option<Error> {
        if let Sync::Processes(s) = &self.sync {
            return s.failure().map(|bytes| {
                crate::codec::decode_error(&bytes).unwrap_or_else(|| {
                    Error::new(
                        crate::error::ErrorKind::Startup {
                            detail: "an undecodable error was recorded".into(),
                        },
                        "bsp_sync",
                        0,
                        0,
                        None,
                    )
                })
            });
        }
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
