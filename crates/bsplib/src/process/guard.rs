//! The one guard of user code (`engine/README.md`, "User code: one
//! guard"): every callback the library calls (an active message's
//! handlers, a reduction's or a scan's closure, a result's `Portable`
//! impl) runs under [`catch`], so that a panic in it fails the run on
//! every process instead of leaving the others waiting.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use super::{Loc, Process};
use crate::engine::World;
use crate::error::{Error, ErrorKind};

/// A panic of user code, caught: the run's error it became, and the
/// payload, to resume once the library's state is consistent.
pub(crate) struct Panic {
    /// Boxed: a `Result<T, Panic>` stays small on the path without panic.
    error: Box<Error>,
    payload: Box<dyn Any + Send>,
}

impl Panic {
    /// The run's error the panic became.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn error(&self) -> &Error {
        &self.error
    }

    /// Resumes the unwind (the panic hook already printed its message,
    /// where the panic happened).
    pub(crate) fn resume(self) -> ! {
        resume_unwind(self.payload)
    }
}

/// The message of a panic's payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".to_string())
}

/// Runs user code `f`. On a panic: the error `error(message)` builds
/// (`ErrorKind::Panicked`, naming the call, process, superstep and line)
/// fails the run on `world`, if given (the first error recorded, every
/// process stopped, and on `mpi` told at once), and the panic is
/// returned, to resume ([`Panic::resume`]) once the caller has put its
/// state back. Without a world (after the run) the caller does what the
/// error needs.
pub(crate) fn catch<T>(
    world: Option<&World>,
    error: impl FnOnce(String) -> Error,
    f: impl FnOnce() -> T,
) -> Result<T, Panic> {
    // Unwind safety: on a panic the run fails and every process stops;
    // what `f` left half-written is never read by the library again but
    // to report that error.
    let payload = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(t) => return Ok(t),
        Err(payload) => payload,
    };
    let error = error(panic_message(&*payload));
    // (`Bsp::abort` unwinds too, but no callback can reach a `Bsp`: a
    // handler or a closure runs while the handle is borrowed, or after it.)
    if let Some(world) = world {
        world.fail_in_barrier(error.clone());
    }
    Err(Panic {
        error: Box::new(error),
        payload,
    })
}

/// The error of a panic of user code run by process `pid` in `superstep`
/// for `call` at `loc` (the call names the callback), with the panic's
/// message.
pub(crate) fn panicked(
    call: &'static str,
    pid: usize,
    superstep: u64,
    loc: Loc,
) -> impl FnOnce(String) -> Error {
    move |message| Error::new(ErrorKind::Panicked { message }, call, pid, superstep, loc)
}

impl Process {
    /// Runs user code `f` for `call` at `loc` ([`catch`]); on a panic the
    /// run fails (so every later call of this process fails at once, and
    /// the others leave their waits) and the unwind resumes. For callbacks
    /// run between the steps of a call, outside any wait of the others (a
    /// reduction's closure).
    pub(crate) fn call_user<T>(&self, call: &'static str, loc: Loc, f: impl FnOnce() -> T) -> T {
        let name = self.call_name(call);
        catch(
            Some(&self.world),
            panicked(name, self.pid, self.superstep, loc),
            f,
        )
        .unwrap_or_else(|panic| panic.resume())
    }

    /// A process whose sync failed, or whose user code panicked in one:
    /// its later calls fail at once (`check_running`), its message queue
    /// is emptied, and the `put_owned` data of its superstep is leaked
    /// (another process may still be copying from it).
    pub(crate) fn poison(&mut self) {
        self.poisoned = true;
        self.inbox.clear();
        for data in self.owned.drain(..) {
            std::mem::forget(data);
        }
    }

    /// After a sync that failed: resumes the panic of user code caught
    /// while it waited (a handler dispatched in barrier A), if one was.
    #[cold]
    pub(crate) fn resume_caught(&mut self) {
        if let Some(panic) = self.caught.take() {
            panic.resume();
        }
    }
}
