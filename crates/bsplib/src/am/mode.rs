//! The mode switch: [`Am::init`] and [`Am::term`], the collective syncs
//! that take every process into and out of active-message mode
//! (`Bsp::am_init_at` and `Bsp::am_term_at` for the other front doors:
//! the one-sided mode's, `bsp_rma_init`'s).

use super::{Am, Context, Handlers};
use crate::bsp::Bsp;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::Process;

impl Am<'_> {
    /// Enters active-message mode with `handlers`: collective, a sync.
    /// Every process calls it in the same superstep, with the same handler
    /// names in the same order (a message naming a handler the target
    /// registered under another name fails there).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`] if some processes call it and others
    /// sync; a second `init` without `term`; as for [`sync`](Bsp::sync).
    ///
    /// # BSP cost
    ///
    /// One sync.
    #[track_caller]
    pub fn init(&mut self, handlers: Handlers) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp.am_init_at(handlers, "am_init", loc)
    }

    /// Leaves active-message mode: collective, a sync, which first waits
    /// until every message this process sent has been handled.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`] if some processes call it and others
    /// sync, or it is called outside active-message mode; as for
    /// [`sync`](Bsp::sync).
    ///
    /// # BSP cost
    ///
    /// One sync.
    #[track_caller]
    pub fn term(&mut self) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp.am_term_at("am_term", loc)
    }
}

impl Bsp {
    /// [`Am::init`] as `call` at `loc`.
    pub(crate) fn am_init_at(
        &mut self,
        handlers: Handlers,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        const CALL: &str = "am_init";
        {
            let mut p = self.process();
            p.check_running(call, loc)?;
            if p.ext.am_mut().ctx.is_some() || p.ext.am_mut().switch.is_some() {
                return Err(p.fail(
                    ErrorKind::AmMismatch {
                        detail: "active-message mode entered again without leaving it (am().init / LAPI_Init \
                                 twice without am().term / LAPI_Term)".into(),
                    },
                    call,
                    loc,
                ));
            }
            let ctx = Context::new(&mut p, handlers);
            p.ext.am_mut().switch = Some(Some(Box::new(ctx)));
            p.rewatch::<super::AmState>();
            p.sync_name = (call != CALL).then_some(call);
        }
        let r = self.sync_at(loc);
        self.process().sync_name = None;
        r
    }

    /// [`Am::term`] as `call` at `loc`.
    pub(crate) fn am_term_at(
        &mut self,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        const CALL: &str = "am_term";
        {
            let mut p = self.process();
            p.check_running(call, loc)?;
            if p.ext.am_mut().ctx.is_none() || p.ext.am_mut().switch.is_some() {
                return Err(p.fail(
                    ErrorKind::AmMismatch {
                        detail: "am_term called outside active-message mode".into(),
                    },
                    call,
                    loc,
                ));
            }
            p.ext.am_mut().switch = Some(None);
            p.rewatch::<super::AmState>();
            p.sync_name = (call != CALL).then_some(call);
        }
        let r = self.sync_at(loc);
        self.process().sync_name = None;
        r
    }
}

pub(super) fn not_active(p: &Process, call: &'static str, loc: Option<SourceLocation>) -> Error {
    p.fail(
        ErrorKind::AmMismatch {
            detail: "not in active-message mode (bsp.am().init() or LAPI_Init first), or a \
                     counter of another process, run or active-message session"
                .into(),
        },
        call,
        loc,
    )
}
