//! The pointer API of the epochs (the C interface's `bsp_rma.h`):
//! one-sided mode, post/start/complete/wait and locks on raw addresses.

use crate::bsp::Bsp;
use crate::epoch::LockKind;
use crate::error::{Error, ErrorKind, SourceLocation};

impl crate::raw::Raw<'_> {
    /// Stops the run with `kind` as `call`'s error at this layer's
    /// location, and returns the error (for front doors whose own argument
    /// checks fail, such as the C interface's group arrays).
    #[track_caller]
    pub fn fail(&self, kind: ErrorKind, call: &'static str) -> Error {
        let loc = self.location();
        self.bsp().process().fail(kind, call, loc)
    }

    /// `bsp_rma_init`: [`Rma::init`](crate::rma::Rma::init) as a C call.
    ///
    /// # Errors
    ///
    /// As for [`Rma::init`](crate::rma::Rma::init).
    pub fn rma_init(bsp: &mut Bsp, loc: Option<SourceLocation>) -> Result<(), Error> {
        bsp.am_init_at(crate::am::Handlers::new(), "bsp_rma_init", loc)?;
        bsp.rma_board("bsp_rma_init", loc)
    }

    /// `bsp_rma_term`: [`Rma::term`](crate::rma::Rma::term) as a C call.
    ///
    /// # Errors
    ///
    /// As for [`Rma::term`](crate::rma::Rma::term).
    pub fn rma_term(bsp: &mut Bsp, loc: Option<SourceLocation>) -> Result<(), Error> {
        bsp.am_term_at("bsp_rma_term", loc)
    }

    /// `bsp_win_post`: exposes the area registered at `area` to `origins`
    /// (an exposure epoch; see [`Rma::epoch`](crate::rma::Rma::epoch)). Takes the handle itself:
    /// it serves what arrives, writing registered memory.
    ///
    /// # Errors
    ///
    /// As for [`Rma::epoch`](crate::rma::Rma::epoch); [`ErrorKind::EpochOpen`] if the area is
    /// posted already.
    pub fn win_post(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        area: *const std::ffi::c_void,
        origins: &[i64],
    ) -> Result<(), Error> {
        bsp.process()
            .rma_post(area.addr(), origins, "bsp_win_post", loc)
    }

    /// `bsp_win_start`: opens an access epoch of the area at `area` to
    /// `targets` once each has posted.
    ///
    /// # Errors
    ///
    /// As for [`Rma::epoch`](crate::rma::Rma::epoch); [`ErrorKind::EpochOpen`] if one is open on
    /// the area already.
    pub fn win_start(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        area: *const std::ffi::c_void,
        targets: &[i64],
    ) -> Result<(), Error> {
        bsp.process()
            .rma_start(area.addr(), targets, "bsp_win_start", loc)
    }

    /// `bsp_win_complete`: see [`Epoch::complete`](crate::Epoch::complete).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] without a start; as for
    /// [`Epoch::complete`](crate::Epoch::complete).
    pub fn win_complete(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        area: *const std::ffi::c_void,
    ) -> Result<(), Error> {
        bsp.process()
            .rma_complete(area.addr(), "bsp_win_complete", loc)
    }

    /// `bsp_win_wait` (`block`) and `bsp_win_test`: see
    /// [`Epoch::wait`](crate::Epoch::wait) and
    /// [`Epoch::test`](crate::Epoch::test).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] without a post; as for
    /// [`Epoch::wait`](crate::Epoch::wait).
    pub fn win_wait(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        area: *const std::ffi::c_void,
        block: bool,
    ) -> Result<bool, Error> {
        let call = if block {
            "bsp_win_wait"
        } else {
            "bsp_win_test"
        };
        bsp.process().rma_wait(area.addr(), block, call, loc)
    }

    /// `bsp_lock`: see [`Rma::lock`](crate::rma::Rma::lock).
    ///
    /// # Errors
    ///
    /// As for [`Rma::lock`](crate::rma::Rma::lock); [`ErrorKind::EpochOpen`] if this process
    /// holds that lock already.
    pub fn lock(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        pid: i64,
        area: *const std::ffi::c_void,
        kind: LockKind,
    ) -> Result<(), Error> {
        bsp.process()
            .rma_lock(pid, area.addr(), kind, "bsp_lock", loc)
    }

    /// `bsp_unlock`: see [`Lock::unlock`](crate::Lock::unlock).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] without the lock; as for
    /// [`Lock::unlock`](crate::Lock::unlock).
    pub fn unlock(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        pid: i64,
        area: *const std::ffi::c_void,
    ) -> Result<(), Error> {
        bsp.process()
            .rma_unlock(pid, area.addr(), "bsp_unlock", loc)
    }
}

impl crate::raw::Raw<'_> {
    /// `bsp_sync_hint(flags)` at this layer's location: see
    /// [`Bsp::sync_with`]; `flags` are [`Hints::bits`](crate::Hints::bits). Takes the handle
    /// itself, since a sync needs it exclusively.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::sync_with`]; and [`ErrorKind::HintViolated`] (hint
    /// `flags`) for a bit that names no hint.
    pub fn sync_hint(bsp: &mut Bsp, flags: i64, loc: Option<SourceLocation>) -> Result<(), Error> {
        let mut p = bsp.process();
        p.sync_hint_bits(flags, loc)?;
        crate::process::note_superstep(p.superstep);
        Ok(())
    }
}
