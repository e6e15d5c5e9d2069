//! The superstep profiler (issue 15; design in `PROFILE.md` beside this
//! file).
//!
//! Turned on for a run by [`Runtime::profile`](crate::Runtime::profile),
//! the environment variable `BSPLIB_PROFILE=DIR` ([`Runtime::from_env`],
//! and so C's `bsp_begin`) or `bsprun --profile DIR`. Each process then
//! records, for every superstep, when it computed and when it synchronised,
//! what it sent and received (the h-relation), and the source location of
//! the sync that ended the superstep; at its end it writes
//! `DIR/profile.<pid>.json`, a Chrome / Perfetto trace-event file with the
//! raw rows beside the events (key `bsplib`); on `mpi` the files travel to
//! process 0, which writes them all (`gather.rs`). `bspprof DIR` merges
//! the files into one trace and an HTML report.
//!
//! Off, a run pays one predictable branch per sync (`Process::sync`) and
//! nothing per put: the counts are taken at the sync, from the mailbox
//! and the delivered streams, never at the calls.

mod counts;
mod gather;
mod json;
mod recorder;
mod sync;

#[cfg_attr(not(feature = "mpi"), allow(unused_imports))]
pub(crate) use gather::gather;
pub(crate) use sync::install;

use std::path::{Path, PathBuf};

/// The version of the file format (key `bsplib.format`).
pub(crate) const FORMAT: u32 = 1;

/// The columns of a row of `bsplib.supersteps`, in order (documented in
/// `PROFILE.md`).
pub(crate) const COLUMNS: [&str; 26] = [
    "superstep",
    "compute_start_ns",
    "sync_start_ns",
    "sync_end_ns",
    "bytes_out",
    "bytes_in",
    "records_out",
    "records_in",
    "puts_out",
    "puts_in",
    "hpputs_out",
    "hpputs_in",
    "gets_out",
    "get_bytes_in",
    "gets_served",
    "messages_out",
    "messages_in",
    "collective_out",
    "collective_in",
    "am_out",
    "am_in",
    "other_out",
    "other_in",
    "failed",
    "at",
    "ended_by",
];

/// A run's profiling set-up, shared by its processes (`World`).
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    dir: PathBuf,
    engine: &'static str,
    /// `mpi`: where each process leaves its file for the gathering at the
    /// end of the run (`gather.rs`); `None` on the engines whose processes
    /// write their own.
    handoff: Option<std::sync::Arc<gather::Handoff>>,
    /// The machine's 1-minute load average when the run started (before
    /// its processes), and its cores: `bspprof` warns when other programs
    /// were using the cores the run needed (issue 27).
    load: Option<(f64, usize)>,
}

impl Setup {
    /// Makes `dir` (and its parents) and checks that files can be written
    /// in it; `Err` names what failed.
    pub(crate) fn try_dir(dir: &Path) -> Result<(), String> {
        let what = |e: std::io::Error, doing: &str| {
            format!(
                "the profile directory {} (BSPLIB_PROFILE, Runtime::profile or bsprun --profile) {doing}: {e}",
                dir.display()
            )
        };
        std::fs::create_dir_all(dir).map_err(|e| what(e, "cannot be created"))?;
        let probe = dir.join(format!(".bsplib-probe.{}", std::process::id()));
        std::fs::write(&probe, b"").map_err(|e| what(e, "cannot be written"))?;
        let _ = std::fs::remove_file(&probe);
        Ok(())
    }

    /// The set-up of a run profiled into `dir`. On `mpi` the directory
    /// was tried by process 0 before the start ([`try_dir`](Self::try_dir),
    /// in its run-wide settings): the other ranks may have no such
    /// directory, and need none. Elsewhere it is made and tried here.
    pub(crate) fn prepare(dir: &Path, engine: &'static str) -> Result<Setup, String> {
        if engine != "mpi" {
            Self::try_dir(dir)?;
        }
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        // The ranks of an `mpi` run may share no file system: their files
        // travel to process 0 (`gather.rs`, `PROFILE.md`).
        let handoff = (engine == "mpi").then(Default::default);
        Ok(Setup {
            dir,
            engine,
            handoff,
            // The cores as `available_processes` counts them.
            load: crate::engine::load_average().map(|l| (l, crate::engine::cores())),
        })
    }
}
