//! The raw layer's LAPI (`lapi.h`): active messages from C, entering and
//! leaving the mode, handler addresses, counters, fences and sends.

use std::ffi::c_int;
use std::sync::atomic::Ordering;

use super::{LapiCode, LapiSend, Raw, Res};
use crate::am::lapi;
use crate::error::{Error, SourceLocation};
use crate::Bsp;

impl Raw<'_> {
    // ----- LAPI (`lapi.h`): active messages from C --------------------------------

    /// `LAPI_Init`: enters active-message mode with the C side (handler
    /// table, counter registry): collective, a sync named `LAPI_Init` in
    /// errors.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`](crate::ErrorKind::AmMismatch) if this
    /// process is in active-message mode already, or some processes call it
    /// while others make another sync; as for [`Bsp::sync`].
    pub fn lapi_init(bsp: &mut Bsp, loc: Option<SourceLocation>) -> Res {
        const CALL: &str = "LAPI_Init";
        {
            let mut p = bsp.process();
            p.check_running(CALL, loc)?;
            if p.ext.am_mut().ctx.is_some() || p.ext.am_mut().switch.is_some() {
                return Err(p.fail(
                    crate::ErrorKind::AmMismatch {
                        detail: "LAPI_Init called again without LAPI_Term".into(),
                    },
                    CALL,
                    loc,
                ));
            }
            let ctx = crate::am::Context::new_c(&mut p);
            p.ext.am_mut().switch = Some(Some(Box::new(ctx)));
            p.rewatch::<crate::am::AmState>();
        }
        Self::lapi_sync(bsp, loc, CALL)
    }

    /// `LAPI_Term`: leaves active-message mode once every message this
    /// process sent has been handled: collective, a sync.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`](crate::ErrorKind::AmMismatch) outside C
    /// LAPI mode, or if some processes call it while others make another
    /// sync; as for [`Bsp::sync`].
    pub fn lapi_term(bsp: &mut Bsp, loc: Option<SourceLocation>) -> Res {
        const CALL: &str = "LAPI_Term";
        {
            let mut p = bsp.process();
            p.check_running(CALL, loc)?;
            if !p.lapi_active() || p.ext.am_mut().switch.is_some() {
                return Err(p.fail(
                    crate::ErrorKind::AmMismatch {
                        detail: "LAPI_Term called outside LAPI mode".into(),
                    },
                    CALL,
                    loc,
                ));
            }
            p.ext.am_mut().switch = Some(None);
            p.rewatch::<crate::am::AmState>();
        }
        Self::lapi_sync(bsp, loc, CALL)
    }

    /// A sync whose errors name `call` (`LAPI_Gfence` is `bsp_sync`).
    ///
    /// # Errors
    ///
    /// As for [`Bsp::sync`].
    pub fn lapi_sync(bsp: &mut Bsp, loc: Option<SourceLocation>, call: &'static str) -> Res {
        bsp.process().sync_name = Some(call);
        let r = bsp.sync_at(loc);
        bsp.process().sync_name = None;
        r
    }

    /// Whether the calling process is in C LAPI mode (between `LAPI_Init`
    /// and `LAPI_Term`): otherwise its handle is not valid.
    pub fn lapi_active(&self) -> bool {
        self.bsp.process().lapi_active()
    }

    /// `LAPI_Addr_set`: makes `addr` this process's header handler number
    /// `index` (`1..LAPI_MAX_INDEX`), and a handler address that messages
    /// may name.
    ///
    /// # Safety
    ///
    /// Until `LAPI_Term`, `addr` (if not 0) must be a function that every
    /// message naming it (by index or address) may call: as a
    /// `hdr_hndlr_t` for `LAPI_Amsend`, a `vhdr_hndlr_t` for
    /// `LAPI_Amsendv`, following `lapi.h`'s contract for handlers (the
    /// buffers and vectors it returns are written).
    ///
    /// # Errors
    ///
    /// [`LapiCode::AddrIndex`] for an index out of range,
    /// [`LapiCode::HndlInvalid`] outside LAPI mode.
    pub unsafe fn lapi_addr_set(&self, addr: usize, index: usize) -> Result<(), LapiCode> {
        let p = self.bsp.process();
        let c = p
            .ext
            .am()
            .ctx
            .as_ref()
            .and_then(|c| c.c_side())
            .ok_or(LapiCode::HndlInvalid)?;
        let r = c.borrow_mut().addr_set(addr, index);
        r
    }

    /// `LAPI_Addr_get`: handler number `index` (0 if none was set).
    ///
    /// # Errors
    ///
    /// As for [`lapi_addr_set`](Raw::lapi_addr_set).
    pub fn lapi_addr_get(&self, index: usize) -> Result<usize, LapiCode> {
        let p = self.bsp.process();
        let c = p
            .ext
            .am()
            .ctx
            .as_ref()
            .and_then(|c| c.c_side())
            .ok_or(LapiCode::HndlInvalid)?;
        let r = c.borrow().addr_get(index);
        r
    }

    /// `LAPI_Address_init`: publishes `addr` as a handler address of this
    /// process and returns every process's (collective, a sync named
    /// `LAPI_Address_init`).
    ///
    /// # Safety
    ///
    /// As for [`lapi_addr_set`](Raw::lapi_addr_set), for `addr`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`](crate::ErrorKind::AmMismatch) outside LAPI
    /// mode, or if some processes call it while others make another sync;
    /// as for [`Bsp::sync`].
    pub unsafe fn lapi_address_init(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        addr: usize,
    ) -> Res<Vec<usize>> {
        const CALL: &str = "LAPI_Address_init";
        {
            let mut p = bsp.process();
            p.check_running(CALL, loc)?;
            let p = &mut *p;
            let Some(mut ctx) = p.ext.am_mut().ctx.take() else {
                return Err(not_lapi(p, CALL, loc));
            };
            let r = ctx.address_init(&p.world, addr);
            let c = ctx.c_side().is_some();
            p.ext.am_mut().ctx = Some(ctx);
            if !c {
                return Err(not_lapi(p, CALL, loc));
            }
            r.map_err(|why| p.interrupted(why, CALL, loc))?;
        }
        Self::lapi_sync(bsp, loc, CALL)?;
        let p = bsp.process();
        let got = p
            .ext
            .am()
            .ctx
            .as_ref()
            .and_then(|c| c.c_side())
            .map(|c| c.borrow_mut().take_addrs())
            .unwrap_or_default();
        match got.iter().position(Option::is_none) {
            None if got.len() == p.nprocs => Ok(got.into_iter().flatten().collect()),
            q => Err(p.fail(
                crate::ErrorKind::AmMismatch {
                    detail: format!(
                        "process {} made another sync than LAPI_Address_init (it is collective)",
                        q.unwrap_or(0)
                    ),
                },
                CALL,
                loc,
            )),
        }
    }

    /// `LAPI_Setcntr`: stores `val` in the counter at `cntr` and makes it
    /// a counter of this process, that messages may name as their target
    /// counter.
    ///
    /// # Safety
    ///
    /// `cntr` must be a live, aligned `int` (the first field of a
    /// `lapi_cntr_t`) that stays allocated until `LAPI_Term`, and is
    /// accessed meanwhile only through these calls (the library adds to it
    /// atomically in this process's progress calls).
    ///
    /// # Errors
    ///
    /// [`LapiCode::HndlInvalid`] outside LAPI mode.
    pub unsafe fn lapi_setcntr(&self, cntr: *mut c_int, val: c_int) -> Result<(), LapiCode> {
        let p = self.bsp.process();
        let c = p
            .ext
            .am()
            .ctx
            .as_ref()
            .and_then(|c| c.c_side())
            .ok_or(LapiCode::HndlInvalid)?;
        c.borrow_mut().add_counter(cntr.expose_provenance());
        // SAFETY: the caller's contract.
        unsafe { lapi::counter(cntr) }.store(val, Ordering::Release);
        Ok(())
    }

    /// `LAPI_Getcntr`: handles what arrived (a progress point named `call`
    /// in errors), then reads the counter at `cntr`.
    ///
    /// # Safety
    ///
    /// `cntr` must be a live, aligned `int` accessed only through these
    /// calls while they run.
    ///
    /// # Errors
    ///
    /// Errors found handling messages (they stop the run).
    pub unsafe fn lapi_getcntr(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        call: &'static str,
        cntr: *mut c_int,
    ) -> Res<c_int> {
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        p.am_dispatch(call, loc)?;
        // SAFETY: the caller's contract.
        Ok(unsafe { lapi::counter(cntr) }.load(Ordering::Acquire))
    }

    /// `LAPI_Waitcntr`: handles what arrives until the counter at `cntr`
    /// reaches `val`, then subtracts `val` and returns the value left.
    ///
    /// # Safety
    ///
    /// As for [`lapi_getcntr`](Raw::lapi_getcntr).
    ///
    /// # Errors
    ///
    /// Errors found handling messages; the run stopped, or its deadline
    /// passed, while waiting.
    pub unsafe fn lapi_waitcntr(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        call: &'static str,
        cntr: *mut c_int,
        val: c_int,
    ) -> Res<c_int> {
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        // SAFETY: the caller's contract.
        let c = unsafe { lapi::counter(cntr) };
        let (mut started, mut watch) = (None, None);
        loop {
            let mark = p.world.am_mark(p.pid);
            p.am_dispatch(call, loc)?;
            let v = c.load(Ordering::Acquire);
            if v >= val {
                return Ok(c.fetch_sub(val, Ordering::AcqRel) - val);
            }
            let short = (i64::from(v), i64::from(val));
            p.am_pause_counter(mark, &mut started, &mut watch, short, call, loc)?;
        }
    }

    /// `LAPI_Probe`: handles what arrived, without waiting.
    ///
    /// # Errors
    ///
    /// Errors found handling messages.
    pub fn lapi_probe(bsp: &mut Bsp, loc: Option<SourceLocation>, call: &'static str) -> Res {
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        p.am_dispatch(call, loc)
    }

    /// `LAPI_Fence`: handles what arrives until every message this process
    /// sent has been handled by its target.
    ///
    /// # Errors
    ///
    /// As for [`lapi_waitcntr`](Raw::lapi_waitcntr).
    pub fn lapi_fence(bsp: &mut Bsp, loc: Option<SourceLocation>, call: &'static str) -> Res {
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        p.am_fence(call, loc)
    }

    /// `LAPI_Amsend` and `LAPI_Amsendv`: checks the arguments in the
    /// design's order and sends; the data and user header are copied now
    /// (so the origin counter moves before this returns). A refused call
    /// returns its code (`Ok(Err(code))`): nothing is sent or counted.
    ///
    /// # Safety
    ///
    /// Non-null pointers of `send` must be valid: the user header for
    /// `uhdr_len` bytes, the data (every block of the vector, whose `info`
    /// and `len` arrays hold `num_vecs` entries, `info` 3 for STRIDED)
    /// readable during the call; `org_cntr` as for
    /// [`lapi_setcntr`](Raw::lapi_setcntr) during the call, and
    /// `cmpl_cntr` until the target has handled the message (the next
    /// `LAPI_Fence`, `LAPI_Waitcntr` on it, or sync).
    ///
    /// # Errors
    ///
    /// The run stopped.
    pub unsafe fn lapi_send(
        &self,
        call: &'static str,
        send: &LapiSend,
    ) -> Res<Result<(), LapiCode>> {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running(call, loc)?;
        let p = &mut *p;
        let Some(mut ctx) = p.ext.am_mut().ctx.take() else {
            return Ok(Err(LapiCode::HndlInvalid));
        };
        // SAFETY: the caller's contract.
        let r = match unsafe { ctx.build_lapi(send) } {
            Ok(out) => ctx
                .send(&p.world, out)
                .map(Ok)
                .map_err(|why| p.interrupted(why, call, loc)),
            Err(code) => Ok(Err(code)),
        };
        p.ext.am_mut().ctx = Some(ctx);
        r
    }
}

/// The error of a LAPI call outside LAPI mode that cannot return a code.
fn not_lapi(p: &crate::process::Process, call: &'static str, loc: Option<SourceLocation>) -> Error {
    p.fail(
        crate::ErrorKind::AmMismatch {
            detail: "not in LAPI mode (LAPI_Init first)".into(),
        },
        call,
        loc,
    )
}
