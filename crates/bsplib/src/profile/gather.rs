//! Where the files go at the end of a run (`PROFILE.md`, "Memory and
//! output").
//!
//! On `threads` and `processes` (one host, one file system) each process
//! writes its own file as it ends (`Recorder`'s `Drop`). On `mpi` the
//! ranks may run on hosts that share no directory, so each process leaves
//! its formatted file in the run's [`Handoff`] instead, and the front door
//! calls [`gather`] once every process has ended: the files travel to
//! process 0 (`World::gather_at_root`), which writes them all into its
//! directory. Where process 0 cannot be reached (a C run whose process
//! ended while another still waited in a sync: that run fails), each
//! process writes its own where it runs, as before.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::Setup;
use crate::engine::World;

/// `mpi`: the file of this rank's process, formatted at its end, until the
/// front door gathers it (one process per rank: one file).
#[derive(Default)]
pub(crate) struct Handoff {
    file: Mutex<Option<Left>>,
}

/// A process's formatted file, and where it would be written.
struct Left {
    pid: usize,
    dir: PathBuf,
    bytes: Vec<u8>,
}

impl std::fmt::Debug for Handoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Handoff")
    }
}

impl Handoff {
    /// Process `pid`'s file, formatted (`Recorder`'s `Drop` on `mpi`).
    pub(super) fn leave(&self, pid: usize, dir: &Path, bytes: Vec<u8>) {
        let left = Left {
            pid,
            dir: dir.to_path_buf(),
            bytes,
        };
        *self.file.lock().unwrap_or_else(|p| p.into_inner()) = Some(left);
    }

    fn take(&self) -> Option<Left> {
        self.file.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl Drop for Handoff {
    /// A file nobody gathered (the run ended without reaching [`gather`]):
    /// written where this process runs rather than lost.
    fn drop(&mut self) {
        if let Some(left) = self.take() {
            write_own(&left);
        }
    }
}

/// The end of a profiled run, after every process of it ended (`mpi`:
/// `Runtime::run_mpi` after `finish_mpi`, C's `Launch::end_at` after
/// `ended`); collective on `mpi` (every process calls it), nothing on the
/// other engines (their processes wrote their files as they ended).
// Called only on `mpi` (the other engines share one file system).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn gather(world: &World) {
    let Some(setup) = world.ext::<Setup>() else {
        return;
    };
    let Some(handoff) = setup.handoff.as_deref() else {
        return;
    };
    let mine = handoff.take();
    let bytes = mine.as_ref().map_or(&[][..], |left| &left.bytes[..]);
    let mut each = |pid: usize, bytes: &[u8]| {
        // A process that left nothing (its recorder never ended) has no file.
        if bytes.is_empty() {
            return;
        }
        if let Err(e) = write_file(&setup.dir, pid, |file| file.write_all(bytes)) {
            report(0, &e);
        }
    };
    if !world.gather_at_root(bytes, &mut each) {
        if let Some(left) = mine {
            write_own(&left);
        }
    }
}

/// Writes a process's own file where it runs (process 0 unreachable).
fn write_own(left: &Left) {
    if let Err(e) = write_file(&left.dir, left.pid, |file| file.write_all(&left.bytes)) {
        report(left.pid, &e);
    }
}

/// `bsplib: process <pid>: <e>` on standard error, in one write: the
/// run's outcome stands (its results are made).
pub(super) fn report(pid: usize, e: &str) {
    let line = format!("bsplib: process {pid}: {e}\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

/// Writes `dir/profile.<pid>.json` with `fill`, through a temporary file
/// renamed into place, the file of an earlier run removed first; `Err`
/// names the file and the reason.
pub(super) fn write_file(
    dir: &Path,
    pid: usize,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<PathBuf, String> {
    let path = dir.join(format!("profile.{pid}.json"));
    let tmp = dir.join(format!(".profile.{pid}.json.{}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut file| fill(&mut file));
    // A file of an earlier run is removed before the rename: renaming over
    // it makes ext4 (`auto_da_alloc`) start writing the new file out in
    // the rename, about 2.5 ms for LU's 870 kB here.
    written
        .and_then(|()| match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        })
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write the profile {}: {e}", path.display())
        })?;
    Ok(path)
}
