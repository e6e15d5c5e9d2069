//! The raw layer: BSPlib's pointer API over the same core, for the C
//! interface and for Rust callers that manage registered memory themselves.
//!
//! Arguments are the C ones widened to `i64`, so that the core's checks
//! (negative sizes, pid range) are the same for every front door.

mod bsmp;
mod drma;
mod forge;
mod lapi;
mod one_sided;
mod transport;

pub use crate::am::lapi::{
    handler_addr_get as lapi_handler_addr_get, handler_send as lapi_handler_send,
    handler_setcntr as lapi_handler_setcntr, in_handler as lapi_in_handler, CData as LapiData,
    CSend as LapiSend, CVector as LapiVector, Code as LapiCode, InHandler as LapiInHandler,
    Phase as LapiPhase, HANDLE as LAPI_HANDLE, MAX_INDEX as LAPI_MAX_INDEX,
    MAX_MSG_SZ as LAPI_MAX_MSG_SZ, MAX_UHDR_SZ as LAPI_MAX_UHDR_SZ,
};

use crate::error::{Error, SourceLocation};
use crate::Bsp;

/// BSPlib's pointer API; see [`Bsp::raw`].
///
/// Every method is the C function of the same name, with the same
/// semantics; errors are returned (and stop the run) rather than aborting.
/// `bsp_sync` is [`Bsp::sync`] itself: it needs `&mut Bsp`, which is what
/// keeps the safe API sound.
///
/// # Examples
///
/// ```
/// let r = bsplib::run(2, |bsp| {
///     let mut x: i32 = bsp.pid() as i32;
///     let px = &mut x as *mut i32 as *mut std::ffi::c_void;
///     // SAFETY: `x` outlives its registration (popped before return) and
///     // is not touched by Rust code while the syncs write it.
///     unsafe {
///         bsp.raw().push_reg(px, 4)?;
///         bsp.sync()?;
///         let other = 1 - bsp.pid() as i64;
///         bsp.raw().put(other, px, px, 0, 4)?;
///         bsp.sync()?;
///         bsp.raw().pop_reg(px)?;
///         bsp.sync()?;
///     }
///     Ok(x)
/// })?;
/// assert_eq!(r, vec![1, 0]);
/// # Ok::<(), bsplib::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Raw<'a> {
    bsp: &'a Bsp,
    /// The location to report, when the caller knows it better than
    /// `#[track_caller]` does (the C interface passes `__FILE__`/`__LINE__`).
    at: Option<Option<SourceLocation>>,
}

type Res<T = ()> = Result<T, Error>;

impl<'a> Raw<'a> {
    pub(crate) fn new(bsp: &'a Bsp) -> Self {
        Raw { bsp, at: None }
    }

    /// The same layer, reporting `loc` as the location of the calls made
    /// through it instead of the Rust caller's (front doors in other
    /// languages pass their caller's location; `None` for unknown).
    pub fn at(self, loc: Option<SourceLocation>) -> Self {
        Raw {
            at: Some(loc),
            ..self
        }
    }

    /// The handle (the other layers of the crate).
    pub(crate) fn bsp(&self) -> &'a Bsp {
        self.bsp
    }

    /// The location to report for the current call (the other layers of
    /// the crate).
    #[track_caller]
    pub(crate) fn location(&self) -> Option<SourceLocation> {
        self.loc()
    }

    /// The location to report for the current call.
    #[track_caller]
    #[inline]
    fn loc(&self) -> Option<SourceLocation> {
        match self.at {
            Some(loc) => loc,
            None => Some(SourceLocation::caller()),
        }
    }

    /// `bsp_sync` at this layer's location: see [`Bsp::sync`]. Takes the
    /// handle itself, since a sync needs it exclusively.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::sync`].
    #[track_caller]
    pub fn sync(bsp: &mut Bsp, loc: Option<SourceLocation>) -> Res {
        bsp.sync_at(loc)
    }

    /// `bsp_abort` for front doors that stop the program themselves: records
    /// the abort with `message` as the run's error (stopping every other
    /// process) and returns it, where [`Bsp::abort`] unwinds.
    #[track_caller]
    pub fn abort(&self, message: String) -> Error {
        let loc = self.loc();
        self.bsp.process().abort(message, loc)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "raw")))]
impl Bsp {
    /// The raw layer: BSPlib's pointer API, for the C interface and for
    /// callers that manage memory themselves.
    pub fn raw(&self) -> crate::raw::Raw<'_> {
        crate::raw::Raw::new(self)
    }
}
