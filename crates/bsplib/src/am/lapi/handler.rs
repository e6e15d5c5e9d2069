//! The C handler a thread is running (its frame, found by the library
//! calls made from it), and the calls a completion handler may make:
//! `LAPI_Amsend[v]`, `LAPI_Setcntr`, `LAPI_Addr_get`.

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::sync::atomic::Ordering;

use super::origin::build_c;
use super::{counter, CSend, Code};
use crate::am::{Context, Outgoing};

/// Which C handler this thread is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// A header handler: no library call is allowed.
    Header,
    /// A completion handler: only the non-blocking calls are allowed
    /// (`LAPI_Amsend[v]`, `LAPI_Setcntr`, `LAPI_Getcntr` (reading),
    /// `LAPI_Qenv`, `LAPI_Addr_get`, `LAPI_Msg_string`).
    Completion,
}

/// The C handler this thread is running, and where.
#[derive(Clone, Copy, Debug)]
pub struct InHandler {
    /// Header or completion handler.
    pub phase: Phase,
    /// The process running it.
    pub pid: usize,
    /// The number of processes.
    pub nprocs: usize,
    /// Its superstep.
    pub superstep: u64,
}

pub(super) struct Frame {
    pub(super) info: InHandler,
    pub(super) ctx: *const Context,
    pub(super) sends: RefCell<Vec<Outgoing>>,
}

thread_local! {
    static FRAME: Cell<*const Frame> = const { Cell::new(std::ptr::null()) };
}

/// Restores the previous frame however the handler call ends.
pub(super) struct Enter(*const Frame);

impl Enter {
    pub(super) fn new(f: &Frame) -> Enter {
        Enter(FRAME.with(|c| c.replace(f)))
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        FRAME.with(|c| c.set(self.0));
    }
}

/// The C handler this thread is running, if any: library calls made from
/// it cannot reach the process (the dispatching call holds it).
pub fn in_handler() -> Option<InHandler> {
    let f = FRAME.with(Cell::get);
    // SAFETY: a non-null frame is the one `handle_c` keeps alive on its
    // stack while the handler runs on this thread.
    (!f.is_null()).then(|| unsafe { &*f }.info)
}

/// Runs `f` with the completion handler's frame; `None` outside one.
fn in_completion<T>(f: impl FnOnce(&Frame) -> T) -> Option<T> {
    let p = FRAME.with(Cell::get);
    if p.is_null() {
        return None;
    }
    // SAFETY: as in `in_handler`.
    let frame = unsafe { &*p };
    (frame.info.phase == Phase::Completion).then(|| f(frame))
}

/// `LAPI_Amsend[v]` from a completion handler: the message leaves when
/// the handler returns (or, during a sync, when that sync returns).
/// `None` outside a completion handler.
///
/// # Safety
///
/// As for [`Raw::lapi_send`](crate::raw::Raw::lapi_send).
pub unsafe fn handler_send(send: &CSend) -> Option<Result<(), Code>> {
    in_completion(|f| {
        // SAFETY: the frame's context is alive and not mutably used while
        // the handler runs (see `handle_c`).
        let ctx = unsafe { &*f.ctx };
        // SAFETY: the pointers are the caller's contract.
        match unsafe { build_c(ctx, send) } {
            Ok(out) => {
                f.sends.borrow_mut().push(out);
                Ok(())
            }
            Err(code) => Err(code),
        }
    })
}

/// `LAPI_Setcntr` from a completion handler; `false` outside one.
///
/// # Safety
///
/// As for [`Raw::lapi_setcntr`](crate::raw::Raw::lapi_setcntr).
pub unsafe fn handler_setcntr(cntr: *mut c_int, val: c_int) -> bool {
    in_completion(|f| {
        // SAFETY: as in `handler_send`.
        let ctx = unsafe { &*f.ctx };
        if let Some(c) = &ctx.c {
            c.borrow_mut().add_counter(cntr.expose_provenance());
        }
        // SAFETY: the caller's contract.
        unsafe { counter(cntr) }.store(val, Ordering::Release);
    })
    .is_some()
}

/// `LAPI_Addr_get` from a completion handler; `None` outside one.
pub fn handler_addr_get(index: usize) -> Option<Result<usize, Code>> {
    in_completion(|f| {
        // SAFETY: as in `handler_send`.
        let ctx = unsafe { &*f.ctx };
        ctx.c
            .as_ref()
            .map_or(Err(Code::HndlInvalid), |c| c.borrow().addr_get(index))
    })
}
