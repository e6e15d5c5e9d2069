//! Run-wide settings: what every process of a run must agree on (the
//! checking mode, the profile directory, the deadline, the live view, the
//! window memory). On `mpi` they are process 0's: encoded here, carried
//! by the engine's start-up exchange, applied on every rank
//! (`engine/mpi/README.md`, "Start").

use std::path::PathBuf;
use std::time::Duration;

use super::Runtime;
use crate::codec::Portable;

/// The settings as they travel: check, profile directory (its bytes),
/// deadline (nanoseconds), live view, window memory per process, and why
/// the sender could not make or write the profile directory, if it could
/// not.
type Wire = (
    bool,
    Option<Vec<u8>>,
    Option<u64>,
    Option<bool>,
    Option<u64>,
    Option<String>,
);

impl Runtime {
    /// The run-wide settings, for the start-up exchange: made by process
    /// 0 only, and sent to every rank (`engine/mpi`'s `join`).
    ///
    /// The profile directory is made and tried here: on `mpi` only process
    /// 0 writes in it (the profiles are gathered there, `PROFILE.md`), and
    /// its outcome reaches every rank with the settings (a rank whose host
    /// cannot make the directory is no reason to fail; process 0 failing
    /// alone, with the others running on, was a job that never ended).
    /// Other ranks neither make nor try it.
    pub(crate) fn settings_bytes(&self) -> Vec<u8> {
        use std::os::unix::ffi::OsStrExt;
        let profile_failed = self
            .profile
            .as_deref()
            .and_then(|dir| crate::profile::Setup::try_dir(dir).err());
        let wire: Wire = (
            self.check,
            self.profile
                .as_ref()
                .map(|d| d.as_os_str().as_bytes().to_vec()),
            self.deadline
                .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
            self.progress,
            crate::engine::window::memory_from_env().map(|b| b as u64),
            profile_failed,
        );
        let mut out = Vec::new();
        wire.encode(&mut out);
        out
    }

    /// This runtime with the run-wide settings `bytes` (process 0's) in
    /// place of its own; the window memory is set for the engine. Bytes
    /// that do not decode (a rank of another build) leave it as it is.
    pub(crate) fn agreed(&self, bytes: &[u8]) -> Runtime {
        use std::os::unix::ffi::OsStringExt;
        let mut input = bytes;
        let Some((check, profile, deadline, progress, memory, profile_failed)) =
            Wire::decode(&mut input)
        else {
            return self.clone();
        };
        crate::engine::window::agree_memory(memory.map(|b| b as usize));
        let mut runtime = self.clone();
        runtime.check = check;
        runtime.profile = profile.map(|d| PathBuf::from(std::ffi::OsString::from_vec(d)));
        runtime.deadline = deadline.map(Duration::from_nanos);
        runtime.progress = progress;
        runtime.profile_failed = profile_failed;
        runtime
    }
}
