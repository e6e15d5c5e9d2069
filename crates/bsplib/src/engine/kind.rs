//! Which engine runs a run's processes: the transport's own name for
//! itself (re-exported at the crate root as `bsplib::Engine`).

/// Which engine runs the processes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Engine {
    /// One process on the calling thread: the reference engine.
    ///
    /// # Errors
    ///
    /// A run of more than one process is refused at its start
    /// ([`ErrorKind::Startup`](crate::ErrorKind::Startup): "the serial
    /// engine runs one process; 4 were asked for: use threads") rather
    /// than run as one. A request for every process there is
    /// (`usize::MAX`; in C, `bsp_begin(bsp_nprocs())`, where `bsp_nprocs()`
    /// is 1 on `serial` unless `BSPLIB_NPROCS` says otherwise) gives one.
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{Engine, Runtime};
    /// let serial = |p| Runtime::new(p).engine(Engine::Serial).run(|bsp| Ok(bsp.nprocs()));
    /// assert_eq!(serial(1)?, vec![1]);
    /// assert_eq!(serial(usize::MAX)?, vec![1]);
    /// assert!(serial(4).is_err());
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    Serial,
    /// Every process is a thread of this OS process; process 0 runs on the
    /// calling thread. The default.
    #[default]
    Threads,
    /// Every process is a forked OS process with its own address space,
    /// communicating through shared memory; process 0 runs in the calling
    /// process. Results come back from [`Runtime::run`](crate::Runtime::run)
    /// encoded ([`Portable`](trait@crate::Portable)).
    ///
    /// # Errors
    ///
    /// A run of more than one process forks, and forking a program that has
    /// other threads can leave a lock held forever in the forked processes:
    /// such a run is refused with [`ErrorKind::ThreadsAtFork`](crate::ErrorKind::ThreadsAtFork) unless the
    /// caller vouches for the threads ([`Runtime::fork_with_threads`](crate::Runtime::fork_with_threads)).
    /// The library's own threads do not count: those of a `threads` run
    /// and the monitor of a `processes` run are joined before the run
    /// returns.
    ///
    /// # Examples
    ///
    /// Runs one after the other, from a program with no other thread:
    ///
    /// ```
    /// use bsplib::{Engine, Runtime};
    /// for engine in [Engine::Threads, Engine::Processes].repeat(3) {
    ///     let pids = Runtime::new(2).engine(engine).run(|bsp| Ok(bsp.pid() as u32))?;
    ///     assert_eq!(pids, vec![0, 1]);
    /// }
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    Processes,
    /// Every process is an MPI rank (Open MPI; cargo feature `mpi`): the
    /// program is started on every rank by `mpirun`, and each rank runs
    /// one process. Results come back from [`Runtime::run`](crate::Runtime::run)
    /// encoded ([`Portable`](trait@crate::Portable)), gathered on every rank.
    Mpi,
}

impl Engine {
    /// Every engine, for tests that run a scenario on each.
    pub const ALL: [Engine; 4] = [
        Engine::Serial,
        Engine::Threads,
        Engine::Processes,
        Engine::Mpi,
    ];

    /// The engine's name as used on command lines and in `BSPLIB_ENGINE`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Serial => "serial",
            Engine::Threads => "threads",
            Engine::Processes => "processes",
            Engine::Mpi => "mpi",
        }
    }

    /// The engine named `name` (`serial`, `threads`, `processes`, `mpi`).
    pub fn from_name(name: &str) -> Option<Self> {
        Engine::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The engine named by the environment variable `BSPLIB_ENGINE`, if it
    /// is set (`Err` with the value if it names no engine). This is how the
    /// same binary runs on threads by default and on MPI under
    /// `mpirun -x BSPLIB_ENGINE=mpi` (or `bsprun --engine mpi`).
    pub fn from_env() -> Option<Result<Self, String>> {
        let name = std::env::var("BSPLIB_ENGINE").ok()?;
        Some(Engine::from_name(name.trim()).ok_or(name))
    }

    /// Whether this build has the engine (`mpi` needs the cargo feature).
    pub fn is_available(self) -> bool {
        self != Engine::Mpi || cfg!(feature = "mpi")
    }
}
