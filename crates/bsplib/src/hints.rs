//! Fence hints (MPI's `MPI_Win_fence` assertions) as options of a sync:
//! [`Bsp::sync_with`], C's `bsp_sync_hint` (`ONE_SIDED.md`, section 5).
//!
//! A hint is a promise about the superstep a sync ends or the one it
//! starts. The library keeps every promise's consequences safe whether or
//! not it is true: no hint turns off a check the owner makes of a record,
//! and no hint makes a sync skip a step the barrier's flags do not already
//! prove empty (a superstep in which nobody transferred or registered
//! anything already ends at barrier A, hint or not). So a false hint gives
//! undefined results in the terms of the interface, and never anything
//! unsafe; in fact today the results are those of a plain sync.
//!
//! What is checked, and when:
//!
//! - `NO_SUCCEED`: always, at the call: a transfer call (put, hpput, get,
//!   hpget, their strided and vector forms, `put_owned`, send,
//!   accumulate) in the superstep after a sync that promised none is
//!   [`ErrorKind::HintViolated`], naming the call. One predicted branch
//!   per transfer call.
//! - `NO_PRECEDE`: in the checking mode, at the sync: the superstep it
//!   ends had a transfer call of this process (its first is named).
//! - `NO_PUT`: in the checking mode, after the sync, from the checking
//!   mode's side records (`check.rs`): a put, hpput, strided put,
//!   `put_owned` or accumulate of any process (this one too) wrote into
//!   this process's memory in the superstep the sync ends (the first
//!   origin is named).
//! - `NO_STORE`: nothing to check or skip (no MPI window to sync).
//!
//! Registration and tag-size calls are not transfers: they may be made
//! in a superstep a `NO_PRECEDE` or `NO_SUCCEED` hint covers. A collective
//! is a sync of its own, not a transfer call, and neither are active
//! messages (`am.rs`, LAPI), which have fences of their own.

use std::fmt;
use std::ops::{BitOr, BitOrAssign};

use crate::bsp::Bsp;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::extension::{Extension, NEXT_SUPERSTEP, TRANSFER};
use crate::process::{Loc, Process};

/// The name errors give to a hinted sync's own findings.
const CALL: &str = "bsp_sync_hint";

/// Fence hints, MPI's `MPI_Win_fence` assertions, as options of
/// [`Bsp::sync_with`] (C: `bsp_sync_hint(BSP_MODE_NOPRECEDE | ...)`).
/// Combine them with `|`.
///
/// Every hint is a promise the program makes; the library checks the
/// promise where that is cheap (`NO_SUCCEED`, always) or in the checking
/// mode ([`Runtime::check`](crate::Runtime::check), `BSPLIB_CHECK=1`:
/// every hint), where a false one is [`ErrorKind::HintViolated`]. Outside
/// the checking mode a false `NO_PRECEDE` or `NO_PUT` gives undefined
/// results, never anything unsafe: the owner of memory still checks every
/// record that names it.
///
/// A *transfer* is a put, hpput, get, hpget (and their strided, vector
/// and owned forms), a send, or an accumulate. Registrations and tag-size
/// changes are not transfers.
///
/// # Examples
///
/// ```
/// use bsplib::{Area, Hints};
///
/// let got = bsplib::run(2, |bsp| {
///     let x = Area::<u64>::new(bsp, 1);
///     bsp.push_reg(&x)?;
///     // Superstep 0 registered (not a transfer) and put nothing.
///     bsp.sync_with(Hints::NO_PRECEDE | Hints::NO_PUT)?;
///     let to = (bsp.pid() + 1) % bsp.nprocs();
///     bsp.put(to, &x, 0, &[bsp.pid() as u64 + 10])?;
///     bsp.sync()?;
///     let v = x.as_slice(bsp)[0];
///     Ok(v)
/// })?;
/// assert_eq!(got, vec![11, 10]);
/// # Ok::<(), bsplib::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Hints(u32);

impl Hints {
    /// No hint: a plain sync.
    pub const NONE: Hints = Hints(0);
    /// `MPI_MODE_NOPRECEDE`: this process issued no transfer in the
    /// superstep this sync ends.
    pub const NO_PRECEDE: Hints = Hints(1);
    /// `MPI_MODE_NOSUCCEED`: this process will issue no transfer in the
    /// superstep this sync starts (a transfer call there is an error at
    /// the call, always).
    pub const NO_SUCCEED: Hints = Hints(2);
    /// `MPI_MODE_NOSTORE`: local code did not write this process's
    /// registered areas since the last sync. Nothing for the library to
    /// skip (no engine keeps a copy of an area to synchronise); checked in
    /// the checking mode, which compares each area's bytes with the last
    /// sync's (areas the library itself wrote since, by one-sided records,
    /// active messages or a collective, are not compared).
    pub const NO_STORE: Hints = Hints(4);
    /// `MPI_MODE_NOPUT`: no process (this one included) puts or
    /// accumulates into this process's memory in the superstep this sync
    /// ends.
    pub const NO_PUT: Hints = Hints(8);
    /// Every hint.
    const ALL: u32 = 15;

    /// The bits (the C constants `BSP_MODE_NOPRECEDE` = 1,
    /// `BSP_MODE_NOSUCCEED` = 2, `BSP_MODE_NOSTORE` = 4,
    /// `BSP_MODE_NOPUT` = 8).
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// The hints of `bits`, or `None` if a bit names no hint.
    pub const fn from_bits(bits: u32) -> Option<Hints> {
        if bits & !Self::ALL == 0 {
            Some(Hints(bits))
        } else {
            None
        }
    }

    /// Whether every hint of `other` is in `self`.
    pub const fn contains(self, other: Hints) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether there is no hint.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl BitOr for Hints {
    type Output = Hints;
    fn bitor(self, rhs: Hints) -> Hints {
        Hints(self.0 | rhs.0)
    }
}

impl BitOrAssign for Hints {
    fn bitor_assign(&mut self, rhs: Hints) {
        self.0 |= rhs.0;
    }
}

impl fmt::Debug for Hints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("NONE");
        }
        let names = [
            (Hints::NO_PRECEDE, "NO_PRECEDE"),
            (Hints::NO_SUCCEED, "NO_SUCCEED"),
            (Hints::NO_STORE, "NO_STORE"),
            (Hints::NO_PUT, "NO_PUT"),
        ];
        let mut first = true;
        for (h, name) in names {
            if self.contains(h) {
                if !first {
                    f.write_str(" | ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// One process's hint state: an extension slot of the process
/// (`extension.rs`), installed at the start in the checking mode and by
/// the first `NO_SUCCEED` sync otherwise.
pub(crate) struct HintState {
    /// Transfer calls go through the [`TRANSFER`] hook: the checking
    /// mode, or this superstep follows a `NO_SUCCEED` sync.
    watch: bool,
    /// The run checks (`check.rs`).
    check: bool,
    /// `Some(location of the sync)` when the sync that started this
    /// superstep promised `NO_SUCCEED`.
    no_succeed: Option<Loc>,
    /// Checking mode: this superstep's first transfer call and its place.
    first: Option<(&'static str, Loc)>,
}

impl HintState {
    pub(crate) fn new(check: bool) -> Self {
        HintState {
            watch: check,
            check,
            no_succeed: None,
            first: None,
        }
    }
}

/// Installs the hint state of a process of a checking run (which notes
/// every superstep's first transfer for `NO_PRECEDE`); other runs get
/// one at their first `NO_SUCCEED` sync.
pub(crate) fn install(p: &mut Process) {
    if p.world.ext::<crate::check::Setup>().is_some() {
        p.install(HintState::new(true));
    }
}

impl crate::process::extension::Slotted for HintState {
    const KEY: usize = 4;
}

impl Extension for HintState {
    fn wants(&self) -> u32 {
        if self.watch {
            TRANSFER | NEXT_SUPERSTEP
        } else {
            0
        }
    }

    /// A transfer call: false after a `NO_SUCCEED` sync; in the checking
    /// mode, noted if it is the superstep's first.
    fn transfer(&mut self, p: &mut Process, call: &'static str, loc: Loc) -> Result<(), Error> {
        if let Some(at) = self.no_succeed {
            let detail = format!(
                "is false: the sync at {} that ended superstep {} promised that this process \
                 would issue no transfer in superstep {}, and this {} is one",
                place(at),
                p.superstep.saturating_sub(1),
                p.superstep,
                p.call_name(call)
            );
            return Err(p.fail(
                ErrorKind::HintViolated {
                    hint: "NO_SUCCEED",
                    detail,
                },
                call,
                loc,
            ));
        }
        if self.first.is_none() {
            self.first = Some((call, loc));
        }
        Ok(())
    }

    /// A superstep starts (every sync that succeeds, hinted or not).
    fn next_superstep(&mut self, _p: &mut Process) {
        self.no_succeed = None;
        self.first = None;
        self.watch = self.check;
    }
}

/// `file:line`, or a phrase for an unknown location.
fn place(loc: Loc) -> String {
    loc.map_or_else(
        || "an unknown location".into(),
        |l| format!("{}:{}", l.file(), l.line()),
    )
}

impl Process {
    /// A sync with `hints` (see [`Hints`]).
    pub(crate) fn sync_hinted(&mut self, hints: Hints, loc: Loc) -> Result<(), Error> {
        let (check, first) = self
            .ext::<HintState>()
            .map_or((false, None), |h| (h.check, h.first));
        if check && hints.contains(Hints::NO_STORE) {
            if let Some(detail) = self.check_no_store() {
                return self.false_before_sync("NO_STORE", detail, loc);
            }
        }
        if check && hints.contains(Hints::NO_PRECEDE) {
            if let Some((call, at)) = first {
                let detail = format!(
                    "is false: this process made a {} at {} in the superstep this sync ends",
                    self.call_name(call),
                    place(at)
                );
                return self.false_before_sync("NO_PRECEDE", detail, loc);
            }
        }
        self.sync(loc)?;
        if check && hints.contains(Hints::NO_PUT) {
            if let Some((origin, what)) = self.check_first_put_to_me() {
                let detail = format!(
                    "is false: process {origin}'s {what} wrote into this process's memory in \
                     the superstep this sync ended"
                );
                let ended = self.superstep.saturating_sub(1);
                return Err(self.check_failed_as(
                    ErrorKind::HintViolated {
                        hint: "NO_PUT",
                        detail,
                    },
                    CALL,
                    ended,
                    loc,
                ));
            }
        }
        if hints.contains(Hints::NO_SUCCEED) {
            self.with_ext(
                || HintState::new(false),
                |h, _| {
                    h.no_succeed = Some(loc);
                    h.watch = true;
                },
            );
        }
        Ok(())
    }

    /// A hint found false before the hinted sync's barrier: the run fails
    /// naming `hint`, and this process enters no superstep exchange.
    fn false_before_sync(
        &mut self,
        hint: &'static str,
        detail: String,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(CALL, loc)?;
        let err = self.fail(ErrorKind::HintViolated { hint, detail }, CALL, loc);
        self.poisoned = true;
        self.inbox.clear();
        Err(err)
    }

    /// `bsp_sync_hint(flags)` from C: unknown bits stop the run.
    #[cfg_attr(not(feature = "raw"), allow(dead_code))]
    pub(crate) fn sync_hint_bits(&mut self, flags: i64, loc: Loc) -> Result<(), Error> {
        let hints = u32::try_from(flags).ok().and_then(Hints::from_bits);
        let Some(hints) = hints else {
            self.check_running(CALL, loc)?;
            let unknown = if flags < 0 {
                format!("{flags}")
            } else {
                format!("{:#x}", flags & !i64::from(Hints::ALL))
            };
            let detail = format!(
                "{flags:#x} has bits that name no hint ({unknown}); the hints are \
                 BSP_MODE_NOPRECEDE (1), BSP_MODE_NOSUCCEED (2), BSP_MODE_NOSTORE (4) and \
                 BSP_MODE_NOPUT (8)"
            );
            return Err(self.fail(
                ErrorKind::HintViolated {
                    hint: "flags",
                    detail,
                },
                CALL,
                loc,
            ));
        };
        self.sync_hinted(hints, loc)
    }
}

impl Bsp {
    /// `bsp_sync_hint`: [`sync`](Bsp::sync) with fence hints, MPI's
    /// `MPI_Win_fence` assertions ([`Hints`]): promises about the
    /// superstep this sync ends (`NO_PRECEDE`, `NO_STORE`, `NO_PUT`) and the
    /// one it starts (`NO_SUCCEED`). `sync_with(Hints::NONE)` is `sync()`.
    ///
    /// The library checks a `NO_SUCCEED` promise at every transfer call of
    /// the next superstep, and every promise in the checking mode
    /// ([`Runtime::check`](crate::Runtime::check), `BSPLIB_CHECK=1`). A
    /// false `NO_PRECEDE` or `NO_PUT` outside the checking mode gives
    /// undefined results (never unsafe ones: the owner still checks every
    /// record that names its memory). Today a hint makes the sync skip no
    /// step the barrier's flags do not already prove empty, so the results
    /// are those of a plain sync.
    ///
    /// Hinted syncs are plain syncs for the checking mode's check-syncs:
    /// every process must end a superstep at the same line, hinted or not.
    ///
    /// # Errors
    ///
    /// Those of [`sync`](Bsp::sync); and [`ErrorKind::HintViolated`]
    /// (call `bsp_sync_hint`, this process, the superstep the sync ends
    /// and its line) in the checking mode when `NO_PRECEDE` is false
    /// (naming this process's first transfer of the superstep, found
    /// before the sync) or `NO_PUT` is false (naming the first origin
    /// whose put or accumulate wrote into this process's memory, found
    /// after the sync). A transfer call in the superstep after a
    /// `NO_SUCCEED` sync fails with [`ErrorKind::HintViolated`] naming
    /// that call, always.
    ///
    /// # BSP cost
    ///
    /// That of [`sync`](Bsp::sync): one superstep, `l` plus `g` times its
    /// h-relation. The checking mode's checks cost what its other checks
    /// of the sync do (the side records of the puts, `CHECKING.md`).
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{Area, ErrorKind, Hints, Runtime};
    ///
    /// // True hints: the results of plain syncs.
    /// let got = bsplib::run(2, |bsp| {
    ///     let x = Area::<u32>::new(bsp, 1);
    ///     bsp.push_reg(&x)?;
    ///     bsp.sync_with(Hints::NO_PRECEDE)?;
    ///     bsp.put(1 - bsp.pid(), &x, 0, &[7 + bsp.pid() as u32])?;
    ///     bsp.sync_with(Hints::NO_SUCCEED)?;
    ///     let v = x.as_slice(bsp)[0];
    ///     bsp.sync_with(Hints::NO_PRECEDE | Hints::NO_PUT)?;
    ///     Ok(v)
    /// })?;
    /// assert_eq!(got, vec![8, 7]);
    ///
    /// // A transfer after NO_SUCCEED is an error at the call.
    /// let err = Runtime::new(1)
    ///     .run(|bsp| {
    ///         let x = Area::<u32>::new(bsp, 1);
    ///         bsp.push_reg(&x)?;
    ///         bsp.sync_with(Hints::NO_SUCCEED)?;
    ///         bsp.put(0, &x, 0, &[1])?;
    ///         bsp.sync()
    ///     })
    ///     .unwrap_err();
    /// assert!(matches!(err.kind(), ErrorKind::HintViolated { hint: "NO_SUCCEED", .. }));
    /// assert_eq!(err.call(), "bsp_put");
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn sync_with(&mut self, hints: Hints) -> Result<(), Error> {
        self.sync_with_at(hints, Some(SourceLocation::caller()))
    }

    /// [`sync_with`](Bsp::sync_with), reporting `loc` as the caller's
    /// location.
    pub(crate) fn sync_with_at(
        &mut self,
        hints: Hints,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let mut p = self.process();
        p.sync_hinted(hints, loc)?;
        crate::process::note_superstep(p.superstep);
        Ok(())
    }
}
