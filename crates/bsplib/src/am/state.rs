//! Active-message mode as an extension of the process (`extension.rs`):
//! its state in a slot ([`AmState`]), and its part in every sync through
//! the core's [`BARRIER`] hook point ([`SyncSteps`]): the fence before
//! barrier A, the mode bits in it, the barrier that dispatches while it
//! waits, the switch after it, and the sends completion handlers held.

use super::Context;
use crate::error::{Error, ErrorKind};
use crate::mailbox::{AM_OFF, AM_ON};
use crate::process::extension::{Extension, Slots, SyncSteps, BARRIER};
use crate::process::{Loc, Process};

/// One process's active-message state.
#[derive(Default)]
pub(crate) struct AmState {
    /// The context, in active-message mode (out of the slot while a
    /// dispatch runs).
    pub(crate) ctx: Option<Box<Context>>,
    /// The change the next sync makes (`Some(Some(_))`: enter,
    /// `Some(None)`: leave).
    pub(crate) switch: Option<Option<Box<Context>>>,
    /// In active-message mode (kept apart from `ctx`, which a dispatch
    /// takes out for a while).
    active: bool,
    /// `am_init` calls so far (each session's counters are its own).
    pub(crate) sessions: u32,
    /// The totals `(sent, handled)` of the session the last sync that
    /// switched modes closed (`None`: it opened one), for the profiler.
    pub(crate) closed: Option<(u64, u64)>,
    /// The server of the records of kind [`KIND_RMA`](super::KIND_RMA)
    /// (the one-sided epochs', which install it), run at every dispatch.
    pub(crate) serve: Option<Serve>,
}

/// A server of the [`KIND_RMA`](super::KIND_RMA) records a dispatch took
/// from the inbox (`Context::rma_in`): it reaches its own state through
/// the process's slots.
pub(crate) type Serve = fn(
    &mut Context,
    &mut Slots,
    &crate::registration::Registry,
    &crate::engine::World,
) -> Result<(), super::Dispatch>;

/// Installs the active-message state in a new process, and its part in
/// the sync.
pub(crate) fn install(p: &mut Process) {
    p.install(AmState::default());
    p.set_sync_steps(&STEPS);
}

static STEPS: SyncSteps = SyncSteps {
    flags: AM_ON | AM_OFF,
    before_barrier,
    barrier: Process::am_barrier,
    after_barrier,
    end: Process::am_release_held,
};

impl crate::process::extension::Slotted for AmState {
    const KEY: usize = 0;
}

impl Extension for AmState {
    /// The sync's [`BARRIER`] steps in active-message mode or when a
    /// sync switches into or out of it.
    fn wants(&self) -> u32 {
        if self.active || self.switch.is_some() {
            BARRIER
        } else {
            0
        }
    }
}

impl AmState {
    /// Whether the process is in active-message mode after the coming
    /// sync (the switch it makes, else the mode it is in).
    fn in_mode_after(&self) -> bool {
        match &self.switch {
            Some(next) => next.is_some(),
            None => self.ctx.is_some(),
        }
    }
}

impl Slots {
    /// The process's active-message state (installed in every process).
    #[inline(always)]
    pub(crate) fn am(&self) -> &AmState {
        self.get()
            .expect("active-message state installed at the start")
    }

    /// The process's active-message state, to change: a change of `switch`
    /// is followed by `Process::rewatch`.
    #[inline(always)]
    pub(crate) fn am_mut(&mut self) -> &mut AmState {
        self.get_mut()
            .expect("active-message state installed at the start")
    }
}

/// Before barrier A: every message this process sent is handled first,
/// then the mode bits: a process in active-message mode before or after
/// this sync says which it will be in.
fn before_barrier(p: &mut Process, call: &'static str, loc: Loc) -> Result<u32, Error> {
    if p.ext.am().ctx.is_some() {
        p.am_fence(call, loc)?;
    }
    let am = p.ext.am();
    let after = am.in_mode_after();
    Ok(match (am.ctx.is_some() || after, after) {
        (false, _) => 0,
        (true, true) => AM_ON,
        (true, false) => AM_OFF,
    })
}

/// After barrier A (also in a process not in the mode, when another's
/// bit is in `all`): any process that sees the other bit than its own
/// fails the run (some switched, others did not); then the switch.
fn after_barrier(p: &mut Process, all: u32, call: &'static str, loc: Loc) -> Result<(), Error> {
    let am = p.ext.am_mut();
    let after = am.in_mode_after();
    if (all & AM_ON != 0 && !after) || (all & AM_OFF != 0 && after) {
        am.switch = None;
        p.rewatch::<AmState>();
        return Err(p.fail(
            ErrorKind::AmMismatch {
                detail: "some processes entered or left active-message mode (am().init, \
                         am().term, rma().init, rma().term or their C calls) and others made \
                         a plain sync"
                    .into(),
            },
            call,
            loc,
        ));
    }
    if let Some(next) = am.switch.take() {
        // The totals of the session this sync may close (the
        // profiler's, after the sync).
        am.closed = am.ctx.as_ref().map(|c| c.message_totals());
        let held = am.ctx.as_ref().is_some_and(|c| c.holds_sends());
        am.active = next.is_some();
        am.ctx = next;
        p.rewatch::<AmState>();
        if held {
            return Err(p.fail(
                ErrorKind::AmMismatch {
                    detail: "a completion handler sent an active message during am_term".into(),
                },
                call,
                loc,
            ));
        }
    }
    Ok(())
}
