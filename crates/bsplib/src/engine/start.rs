//! The transport's side of starting and ending a run, as the front doors
//! (`runtime/`, `launch.rs`) see it: the one part of the contract that
//! names an engine, since starting one is what differs most between them
//! (threads are spawned by the front door; `processes` forks here; `mpi`
//! joins a job its launcher started). Everything else goes through
//! [`World`](super::World) and the capabilities of `engine/mod.rs`.

/// The `processes` engine: forking the run's processes, waiting for
/// them, and telling a program's own forks from BSP processes.
pub(crate) mod processes {
    #[cfg(feature = "raw")]
    pub(crate) use crate::engine::processes::detach_stdin;
    pub(crate) use crate::engine::processes::{
        fork, is_foreign, join, original_stderr, threads, watch_forks,
    };
}

/// The `mpi` engine: joining the job `mpirun` started, the ranks, and
/// ending the job.
#[cfg(feature = "mpi")]
pub(crate) mod mpi {
    #[cfg(feature = "raw")]
    pub(crate) use crate::engine::mpi::abort_with;
    pub(crate) use crate::engine::mpi::{
        all_gather_bytes, finalize_and_exit, join, world_rank, world_size,
    };
}
