//! One process from start to end: its state with the extensions' slots
//! installed, the SPMD function, and what the thread knows of the run it
//! is in (nested runs, `exit` in the middle of a run).

use crate::error::SourceLocation;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use crate::bsp::{AbortUnwind, Bsp};
use crate::engine::start::processes;
use crate::engine::World;
use crate::error::{Error, ErrorKind};
use crate::process::Process;

/// The BSP process the current thread runs, if any.
pub(super) struct Current {
    pid: usize,
    world: Arc<World>,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// The pid of the BSP process the current thread runs, if any (for the
/// raw layer's `Launch::settle`); readable while the program exits too
/// (from `EXIT_NOTE`, which has no destructor).
#[cfg_attr(not(feature = "raw"), allow(dead_code))]
pub(crate) fn current_pid() -> Option<usize> {
    let (pid, world) = EXIT_NOTE.try_with(Cell::get).ok()?;
    (!world.is_null()).then_some(pid)
}

/// The error of a run started inside a BSP process: BSPlib has one
/// `bsp_begin`/`bsp_end` pair per program. It also stops the outer run.
pub(super) fn nested_error(loc: Option<SourceLocation>) -> Option<Error> {
    CURRENT.with(|c| {
        let c = c.borrow();
        let outer = c.as_ref()?;
        let err = Error::new(
            ErrorKind::Nested,
            "bsp_begin",
            outer.pid,
            crate::process::noted_superstep(),
            loc,
        );
        outer.world.fail(err.clone());
        Some(err)
    })
}

/// Marks the current thread as running a BSP process.
pub(crate) struct InRun;

impl InRun {
    pub(crate) fn enter(pid: usize, world: &Arc<World>) -> Self {
        CURRENT.with(|c| {
            *c.borrow_mut() = Some(Current {
                pid,
                world: Arc::clone(world),
            })
        });
        EXIT_NOTE.with(|n| n.set((pid, Arc::as_ptr(world))));
        crate::process::note_superstep(0);
        InRun
    }
}

thread_local! {
    /// The process this thread runs and its world, for [`exit_during_run`]:
    /// plain values, so that this thread-local has no destructor and can
    /// still be read while the program exits (`exit` destroys thread-locals
    /// with destructors before it calls `on_exit` handlers).
    static EXIT_NOTE: Cell<(usize, *const World)> = const { Cell::new((0, std::ptr::null())) };
}

extern "C" {
    /// glibc: like `atexit`, with the exit status.
    fn on_exit(
        f: extern "C" fn(std::ffi::c_int, *mut std::ffi::c_void),
        arg: *mut std::ffi::c_void,
    ) -> std::ffi::c_int;
}

/// Names a process that ends the program (`std::process::exit`, or C's
/// `exit`) in the middle of a Rust run: the run's error cannot be returned
/// any more, so it is printed. Registered once, at the first run.
pub(super) fn watch_exits() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        processes::watch_forks();
        // SAFETY: registers a handler with no captured state.
        unsafe { on_exit(exit_during_run, std::ptr::null_mut()) };
    });
}

extern "C" fn exit_during_run(status: std::ffi::c_int, _: *mut std::ffi::c_void) {
    if processes::is_foreign() {
        return; // a process the program forked itself
    }
    let Ok((pid, world)) = EXIT_NOTE.try_with(Cell::get) else {
        return;
    };
    if world.is_null() {
        return;
    }
    // SAFETY: a non-null note is the world of the run this thread is in:
    // the thread that started the run holds it alive inside `run`, and
    // `exit` unwinds nothing.
    let world = unsafe { &*world };
    if pid != 0 && world.shared().is_some() {
        return; // process 0's monitor names a forked process that exits
    }
    let superstep = world.board().get(pid).0;
    let err = Error::new(
        ErrorKind::Died {
            detail: format!(
                "process {pid} ended the program (exit status {status}) in the middle of the run"
            ),
        },
        "exit",
        pid,
        superstep,
        None,
    );
    world.record_failure(err);
    crate::runtime::report(world);
}

impl Drop for InRun {
    fn drop(&mut self) {
        let _ = EXIT_NOTE.try_with(|n| n.set((0, std::ptr::null())));
        // At the exit of a thread (or of the program, for its main thread)
        // this thread-local may be gone already: then there is nothing to
        // clear.
        let _ = CURRENT.try_with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                *c = None;
            }
        });
    }
}

/// Process `pid`'s state, with the slots of the extensions its run uses
/// installed (`extension.rs`): every front door starts a process here.
pub(crate) fn new_process(pid: usize, world: Arc<World>, start: Instant) -> Process {
    if pid == 0 && world.progress().is_some() {
        crate::progress::start(&world);
    }
    let mut p = Process::new(pid, world, start);
    // The order is that of the lookups' scans (the active messages' and
    // the epochs' state are read most) and of the AROUND_SYNC hooks (the
    // checking mode's before the profiler's).
    crate::am::install(&mut p);
    crate::epoch::install(&mut p);
    crate::rma::install(&mut p);
    crate::collectives::install(&mut p);
    crate::hints::install(&mut p);
    crate::check::install(&mut p);
    crate::profile::install(&mut p);
    p
}

/// One process from start to end: runs `spmd` and turns its outcome into a
/// result or the run's failure.
pub(super) fn process_main<R, F>(
    pid: usize,
    world: &Arc<World>,
    start: Instant,
    spmd: &F,
) -> Option<R>
where
    F: Fn(&mut Bsp) -> Result<R, Error>,
{
    let _in_run = InRun::enter(pid, world);
    let mut bsp = Bsp::new(new_process(pid, Arc::clone(world), start));
    let outcome = catch_unwind(AssertUnwindSafe(|| spmd(&mut bsp)));
    // A process that ends with a lock, a view or an epoch open (a guard
    // forgotten) would leave the others waiting for it for ever.
    let outcome = outcome.map(|r| {
        r.and_then(|r| {
            let p = bsp.process();
            p.check_no_epoch("the end of the SPMD function", None)
                .map(|()| r)
        })
    });
    match outcome {
        Ok(Ok(r)) => {
            world.ended(pid, bsp.superstep_now());
            Some(r)
        }
        Ok(Err(e)) => {
            world.fail(e);
            None
        }
        Err(payload) => {
            if !payload.is::<AbortUnwind>() {
                let message = crate::process::guard::panic_message(&*payload);
                world.fail(Error::new(
                    ErrorKind::Panicked { message },
                    "the SPMD function",
                    pid,
                    bsp.superstep_now(),
                    None,
                ));
            }
            None
        }
    }
}
