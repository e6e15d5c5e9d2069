//! Starting the processes of a run: the checks, the world of the engine
//! chosen, the results gathered (`processes`: decoded from the forked
//! processes; `mpi`: gathered from the ranks).

use crate::error::SourceLocation;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bsp::Bsp;
use crate::codec::Portable;
use crate::engine::start::processes;
use crate::engine::World;
use crate::error::{Error, ErrorKind};
use crate::process::guard;

use super::process::nested_error;
use super::*;

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
        if let Some(refusal) = self.launcher_refusal().or_else(|| self.serial_refusal()) {
            return Err(startup(refusal));
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

    /// Under an MPI launcher that started this program as one rank of
    /// several, a run on another engine than `mpi` would be a run of its
    /// own in every rank, each unaware of the others: refused, saying how
    /// to choose `mpi`. A job of one rank runs any engine.
    ///
    /// There is no way around it: nothing in this project runs another
    /// engine in the ranks of a job (the test binaries under `.ci/mpi` run
    /// `mpi` only, `bspprobe` and `bsprun` start `mpi` under `mpirun`). A
    /// program that would (MPI of its own between the ranks, a `threads`
    /// run inside each) needs a setting of `Runtime` added here.
    fn launcher_refusal(&self) -> Option<String> {
        if self.engine == Engine::Mpi {
            return None;
        }
        let (var, ranks) = launcher_job()?;
        let mut detail = format!(
            "{var}={ranks}: an MPI launcher started this program as one of {ranks} processes, \
             but the run would use the {} engine, a separate run in each",
            self.engine.name()
        );
        if std::env::var("BSPLIB_ENGINE").is_ok_and(|e| e.trim() == "mpi") {
            detail.push_str(
                ": BSPLIB_ENGINE=mpi is set, but this program chooses its engine itself \
                 (bsplib::run, Runtime::new and Runtime::engine do not read the variable): \
                 start the run with Runtime::from_env, or choose Engine::Mpi",
            );
        } else {
            detail.push_str(": pass -x BSPLIB_ENGINE=mpi to mpirun (or run bsprun --engine mpi)");
        }
        if !Engine::Mpi.is_available() {
            detail.push_str(
                "; this library was built without the mpi engine: build it with the cargo feature mpi",
            );
        }
        Some(detail)
    }

    /// The `serial` engine runs one process: a request of more is refused
    /// rather than quietly run as one, unless it asks for every process
    /// there is (`usize::MAX`, which gives one). C's `bsp_begin` asks for
    /// at most what `bsp_nprocs()` says is available: 1 on `serial`,
    /// unless `BSPLIB_NPROCS` asks for more.
    fn serial_refusal(&self) -> Option<String> {
        (self.engine == Engine::Serial && self.nprocs > 1 && self.nprocs != usize::MAX).then(|| {
            format!(
                "the serial engine runs one process; {} were asked for: use threads",
                self.nprocs
            )
        })
    }

    /// A new world, configured (the deadline), or the error of its start.
    pub(crate) fn world(
        &self,
        made: Result<World, String>,
        loc: Option<SourceLocation>,
    ) -> Result<World, Error> {
        let world = made.map_err(|detail| Error::startup(detail, loc))?;
        world.set_deadline(self.deadline);
        if let Some(detail) = &self.profile_failed {
            // `mpi`: process 0's directory, every rank the same error.
            return Err(Error::startup(detail.clone(), loc));
        }
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
        world.set_reporter(crate::runtime::report);
        if world.engine() == Engine::Processes {
            // Read before the fork: every process then has the same.
            crate::machine::machine_of(&world);
        }
        Ok(world)
    }

    /// [`run`](Runtime::run) on `processes`: every process's result is
    /// encoded where it was computed and decoded here ([`Portable`]).
    pub(super) fn run_forked<R, F>(
        &self,
        spmd: F,
        loc: Option<SourceLocation>,
    ) -> Result<Vec<R>, Error>
    where
        F: Fn(&mut Bsp) -> Result<R, Error> + Sync,
        R: Portable + Send,
    {
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
                    // A panic fails the run and ends this process (below).
                    encoded(&r, pid, &world).unwrap_or_else(|panic| panic.resume())
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
            // `decode` is user code: its panic goes on (every process has
            // ended; nothing to stop).
            let decode = guard::panicked("Portable::decode", pid, 0, loc);
            let r = guard::catch(None, decode, || {
                shared
                    .result(pid)
                    .and_then(|mut bytes| R::decode(&mut bytes))
            })
            .unwrap_or_else(|panic| panic.resume())
            .ok_or_else(|| no_result(pid))?;
            results.push(r);
        }
        Ok(results)
    }
}

#[cfg(feature = "mpi")]
impl Runtime {
    /// [`run`](Runtime::run) on `mpi`: this rank runs its process (if the
    /// run has one for it); the results are gathered on every rank.
    pub(super) fn run_mpi<R, F>(
        &self,
        spmd: F,
        loc: Option<SourceLocation>,
    ) -> Result<Vec<R>, Error>
    where
        F: Fn(&mut Bsp) -> Result<R, Error> + Sync,
        R: Portable + Send,
    {
        use crate::engine::start::mpi;
        self.check_start(loc)?;
        let (n, member, settings) = mpi::join(self.nprocs, true, &|| self.settings_bytes())
            .map_err(|d| Error::startup(d, loc))?;
        // Process 0's run-wide settings, whatever this host's environment.
        let agreed = self.agreed(&settings);
        if n == 0 {
            return Err(Error::new(ErrorKind::NoProcesses, "bsp_begin", 0, 0, loc));
        }
        // What this rank contributes to the gather: `[0]` and its result,
        // or `[1]` and the error its process recorded (errors are values
        // on this engine: a failed process ends, and the others leave
        // their syncs with an error, see `mpi::Mpi::finish`).
        let mut mine = Vec::new();
        let mut panicked = None;
        if let Some((pid, engine)) = member {
            let world = Arc::new(agreed.world(World::mpi(n, engine), loc)?);
            let result = process_main(pid, &world, Instant::now(), &spmd);
            world.finish_mpi(pid);
            // Every process has ended: the profiles travel to process 0,
            // which writes them before anyone returns (`profile/gather.rs`).
            crate::profile::gather(&world);
            crate::progress::finish();
            match (result, world.failure()) {
                (Some(r), None) => match encoded(&r, pid, &world) {
                    Ok(bytes) => {
                        mine.push(0);
                        mine.extend(bytes);
                    }
                    Err(panic) => {
                        // Still part of the gathering, with the error.
                        mine.push(1);
                        mine.extend(crate::codec::encode_error(panic.error()));
                        panicked = Some(panic);
                    }
                },
                (_, failure) => {
                    mine.push(1);
                    mine.extend(crate::codec::encode_error(
                        &failure.unwrap_or_else(|| no_result(pid)),
                    ));
                }
            }
        }
        let all = mpi::all_gather_bytes(&mine);
        // `decode` is user code too: its panic goes on after the ranks
        // that end here have ended (`process/guard.rs`).
        let outcome = guard::catch(None, guard::panicked("Portable::decode", 0, 0, loc), || {
            gathered(&all[..n])
        });
        if !self.return_everywhere && mpi::world_rank().unwrap_or(0) != 0 {
            mpi::finalize_and_exit();
        }
        if let Some(panic) = panicked {
            panic.resume();
        }
        outcome.unwrap_or_else(|panic| panic.resume())
    }
}

/// Process `pid`'s result `r`, encoded where a process has its own address
/// space (`processes`, `mpi`): `Portable::encode` is user code, run under
/// the guard (`process/guard.rs`); its panic is the run's error, returned
/// to resume once the caller has done its part of the run's end.
pub(super) fn encoded<R: Portable>(
    r: &R,
    pid: usize,
    world: &World,
) -> Result<Vec<u8>, guard::Panic> {
    let superstep = world.board().get(pid).0;
    // On `mpi` every process has ended and takes part in the gathering
    // next, with its error: nobody is left to stop.
    let fail = (!world.failures_gathered()).then_some(world);
    let encode = guard::panicked("Portable::encode", pid, superstep, None);
    guard::catch(fail, encode, || {
        let mut bytes = Vec::new();
        r.encode(&mut bytes);
        bytes
    })
}

/// The outcome of an `mpi` run from what its processes contributed (see
/// `run_mpi`): the results in pid order, or the run's error, the same on
/// every rank. Of the errors the processes recorded, the original one of
/// least pid (a process stopped by another's error records only the
/// secondary `Stopped`).
#[cfg(feature = "mpi")]
pub(super) fn gathered<R: Portable>(all: &[Vec<u8>]) -> Result<Vec<R>, Error> {
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

/// The MPI job this OS process is one rank of, if its launcher says the
/// job has more than one: the variable that says so and the job's size.
/// Open MPI's `mpirun` sets `OMPI_COMM_WORLD_SIZE`; MPICH's and Intel
/// MPI's launchers (Hydra), and Slurm's `srun` with PMI, set `PMI_SIZE`.
fn launcher_job() -> Option<(&'static str, usize)> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .into_iter()
        .find_map(|var| {
            let ranks = std::env::var(var).ok()?.trim().parse::<usize>().ok()?;
            (ranks > 1).then_some((var, ranks))
        })
}

/// `BSPLIB_DEADLINE` (seconds, fractions allowed), if set: the deadline,
/// or the error naming the bad value.
pub(super) fn deadline_from_env() -> Option<Result<Duration, String>> {
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
pub(super) fn no_result(pid: usize) -> Error {
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
