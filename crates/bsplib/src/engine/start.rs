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
    #[cfg(feature = "raw")]
    pub(crate) use crate::engine::mpi::is_foreign;
    pub(crate) use crate::engine::mpi::{
        all_gather_bytes, finalize_and_exit, join, world_rank, world_size,
    };
}

impl super::World {
    /// The end of a run (after every process ended: `Runtime::run_mpi`
    /// after `finish_mpi`, `Launch::end_at` after `ended`): on `mpi`, when
    /// every process ended together, process 0 gets every process's
    /// `mine` through `each(pid, bytes)`, in pid order, and the others
    /// send theirs (collective: every process of the run calls it); true
    /// then. False at once where nothing travels: on an engine whose
    /// processes share one host (no gathering there), or on an `mpi` run
    /// that did not end with every process together (one still waits in
    /// a sync: process 0 cannot be reached by a collective call).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn gather_at_root(&self, mine: &[u8], each: &mut dyn FnMut(usize, &[u8])) -> bool {
        match &self.sync {
            #[cfg(feature = "mpi")]
            super::Sync::Mpi(m) if m.ended_together() => {
                m.gather_at_root(mine, each);
                true
            }
            _ => {
                let _ = (mine, each);
                false
            }
        }
    }
}
