//! What a process holds of the one-sided layer: locks of window memory
//! and of registered areas, views of its own window memory, open exposure
//! and access epochs of either. A registered area's entries carry
//! [`area_key`]`(slot)` where a window's carry its identity.
//!
//! Soundness by state, not by a guard's borrow (`ONE_SIDED.md`, section
//! 10): every lock, view and epoch is counted here when it opens and
//! uncounted when it closes, whether a guard or the C interface opened
//! it. A guard that is forgotten (`mem::forget`) stays counted, so the
//! calls that would race with it or wait for it for ever refuse, naming
//! the call and line that opened it: a view while the memory is exposed
//! or locked, a second lock, a new epoch, a sync, a collective, the end
//! of the process.

use crate::error::SourceLocation;

type Loc = Option<SourceLocation>;

/// The bit that marks a registered area's key among window identities.
const AREA: u64 = 1 << 63;

/// The key of registration slot `slot`'s area in [`Held`] entries.
pub(crate) fn area_key(slot: u64) -> u64 {
    AREA | slot
}

/// What memory `win` names, for an error message.
fn memory(win: u64) -> String {
    if win & AREA != 0 {
        format!("area of registration slot {}", win & !AREA)
    } else {
        "window memory".into()
    }
}

/// A refusal: what is held, by whom, and why the call may not be made (the
/// detail of the caller's `ErrorKind::EpochOpen`, which the process turns
/// into its error: `Process::held_refuses`).
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) String);

/// One thing held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    /// A lock of `pid`'s memory of window `win`.
    Lock {
        win: u64,
        pid: usize,
        exclusive: bool,
    },
    /// Views of this process's own memory of window `win` (`count` of
    /// them, sharing one lock of it): `local` (shared) or `local_mut`.
    View {
        win: u64,
        exclusive: bool,
        count: usize,
    },
    /// An exposure epoch of window `win` to `origins` (posted, not waited
    /// for).
    Exposure { win: u64, origins: Vec<usize> },
    /// An access epoch of window `win` to `targets` (started, not
    /// completed).
    Access { win: u64, targets: Vec<usize> },
}

impl Held {
    /// The window it belongs to.
    fn win(&self) -> u64 {
        match *self {
            Held::Lock { win, .. }
            | Held::View { win, .. }
            | Held::Exposure { win, .. }
            | Held::Access { win, .. } => win,
        }
    }

    /// What it is, for an error message.
    fn describe(&self) -> String {
        match self {
            Held::Lock {
                win,
                pid,
                exclusive: x,
            } => format!(
                "{} lock of process {pid}'s {}",
                if *x { "an exclusive" } else { "a shared" },
                memory(*win)
            ),
            Held::View {
                exclusive, count, ..
            } => {
                if *exclusive {
                    "a read-write view of this process's window memory".into()
                } else {
                    format!("{count} read view(s) of this process's window memory")
                }
            }
            Held::Exposure { win, origins } if win & AREA != 0 => format!(
                "an exposure epoch of registration slot {} to processes {origins:?}",
                win & !AREA
            ),
            Held::Access { win, targets } if win & AREA != 0 => format!(
                "an access epoch of registration slot {} to processes {targets:?}",
                win & !AREA
            ),
            Held::Exposure { origins, .. } => {
                format!("an exposure epoch of a window to processes {origins:?}")
            }
            Held::Access { targets, .. } => {
                format!("an access epoch of a window to processes {targets:?}")
            }
        }
    }
}

/// An entry: what is held, and the call that opened it.
#[derive(Debug)]
struct Entry {
    held: Held,
    call: &'static str,
    loc: Loc,
}

/// Everything a process holds, in opening order.
#[derive(Debug, Default)]
pub(crate) struct Holds {
    list: Vec<Entry>,
    /// The next window's identity (`Holds::new_window`).
    windows: u64,
}

impl Holds {
    /// A fresh identity for a window of this process.
    pub(crate) fn new_window(&mut self) -> u64 {
        self.windows += 1;
        self.windows
    }

    /// Counts `held`, opened by `call` at `loc`.
    pub(crate) fn open(&mut self, held: Held, call: &'static str, loc: Loc) {
        self.list.push(Entry { held, call, loc });
    }

    /// Uncounts the entry equal to `held` (the latest such).
    pub(crate) fn close(&mut self, held: &Held) {
        if self.list.last().is_some_and(|e| &e.held == held) {
            self.list.pop();
        } else if let Some(i) = self.list.iter().rposition(|e| &e.held == held) {
            self.list.remove(i);
        }
    }

    /// The group of `win`'s open exposure epoch (its origins), if any.
    pub(crate) fn exposure(&self, win: u64) -> Option<&[usize]> {
        self.list.iter().find_map(|e| match &e.held {
            Held::Exposure { win: w, origins } if *w == win => Some(&origins[..]),
            _ => None,
        })
    }

    /// The group of `win`'s open access epoch (its targets), if any.
    pub(crate) fn access(&self, win: u64) -> Option<&[usize]> {
        self.list.iter().find_map(|e| match &e.held {
            Held::Access { win: w, targets } if *w == win => Some(&targets[..]),
            _ => None,
        })
    }

    /// Uncounts `win`'s open epoch of one kind (`exposure`, else access)
    /// and gives its group.
    pub(crate) fn close_epoch(&mut self, win: u64, exposure: bool) -> Option<Vec<usize>> {
        let i = self.list.iter().rposition(|e| match e.held {
            Held::Exposure { win: w, .. } => exposure && w == win,
            Held::Access { win: w, .. } => !exposure && w == win,
            _ => false,
        })?;
        match self.list.remove(i).held {
            Held::Exposure { origins: g, .. } | Held::Access { targets: g, .. } => Some(g),
            _ => None,
        }
    }

    /// The views of `win` held: (exclusive, count), if any.
    pub(crate) fn views(&self, win: u64) -> Option<(bool, usize)> {
        self.list.iter().find_map(|e| match e.held {
            Held::View {
                win: w,
                exclusive,
                count,
            } if w == win => Some((exclusive, count)),
            _ => None,
        })
    }

    /// Sets the count of `win`'s shared views to `count` (0: none),
    /// opened by `call` at `loc` when they are new.
    pub(crate) fn set_shared_views(
        &mut self,
        win: u64,
        count: usize,
        call: &'static str,
        loc: Loc,
    ) {
        let at = self.list.iter().position(
            |e| matches!(e.held, Held::View { win: w, exclusive: false, .. } if w == win),
        );
        match (at, count) {
            (Some(i), 0) => {
                self.list.remove(i);
            }
            (Some(i), n) => {
                if let Held::View { count, .. } = &mut self.list[i].held {
                    *count = n;
                }
            }
            (None, 0) => {}
            (None, n) => self.open(
                Held::View {
                    win,
                    exclusive: false,
                    count: n,
                },
                call,
                loc,
            ),
        }
    }

    /// The first entry that `refuses` (given what is held and whether it
    /// belongs to the same window), as a refusal: `why` says what the
    /// call would do wrong.
    fn refuse(
        &self,
        win: Option<u64>,
        refuses: impl Fn(&Held, bool) -> bool,
        why: impl FnOnce() -> String,
    ) -> Result<(), Refused> {
        let Some(e) = self
            .list
            .iter()
            .find(|e| refuses(&e.held, Some(e.held.win()) == win))
        else {
            return Ok(());
        };
        let why = why();
        Err(Refused(format!(
            "{} is held, opened by {}{}{}; {why}",
            e.held.describe(),
            e.call,
            e.loc.map_or(String::new(), |l| format!(" at {l}")),
            if e.call.starts_with("bsp_") {
                ""
            } else {
                " (a guard forgotten, not dropped, stays open)"
            },
        )))
    }

    /// A sync, a collective, a window's release or the end of the process
    /// with something held: an error (other processes could wait for it
    /// for ever).
    pub(crate) fn check_none(&self) -> Result<(), Refused> {
        self.refuse(
            None,
            |_, _| true,
            || {
                "close it (drop the guard, unlock, complete, wait) before this call: other \
                 processes may wait for it"
                    .into()
            },
        )
    }

    /// A lock of `pid`'s memory of `win` (this process is `me`): refused
    /// while another lock or a view is held (a process waits for one lock
    /// at a time and holds nothing another could wait for while it
    /// waits), while an access epoch of `win` includes `pid` (MPI: access
    /// epochs of one window to one process are disjoint), or while this
    /// process's own memory of `win` is exposed and `pid` is `me`.
    pub(crate) fn check_lock(&self, me: usize, win: u64, pid: usize) -> Result<(), Refused> {
        self.refuse(
            Some(win),
            |h, same| match h {
                Held::Lock { .. } | Held::View { .. } => true,
                Held::Access { targets, .. } => same && targets.contains(&pid),
                Held::Exposure { .. } => same && pid == me,
            },
            || {
                format!(
                    "a lock of process {pid}'s memory now could wait for ever or race with it \
                     (one lock at a time, none while a view is held, none to a process inside an \
                     access epoch to it)"
                )
            },
        )
    }

    /// A view of this process's own memory of `win` (`exclusive`: to
    /// write): refused while that memory is exposed, while this process's
    /// access epoch of `win` targets itself, while this process holds a
    /// lock of its own memory of `win` that conflicts, and, for a
    /// read-write view, while any view of it is held (and a read view
    /// while a read-write one is).
    pub(crate) fn check_view(&self, me: usize, win: u64, exclusive: bool) -> Result<(), Refused> {
        self.refuse(
            Some(win),
            |h, same| {
                same && match h {
                    Held::Exposure { .. } => true,
                    Held::Access { targets, .. } => targets.contains(&me),
                    Held::Lock {
                        pid, exclusive: x, ..
                    } => *pid == me && (exclusive || *x),
                    Held::View { exclusive: x, .. } => exclusive || *x,
                }
            },
            || "a view now would race with it or wait for it for ever".into(),
        )
    }

    /// A call that waits for other processes (a start, a blocking wait,
    /// an area's lock, unlock or complete): refused while a lock (other
    /// than `own`, the lock the call itself ends) or a view is held, which
    /// another process could be waiting for while this one waits.
    pub(crate) fn check_wait(&self, own: Option<&Held>) -> Result<(), Refused> {
        self.refuse(
            None,
            |h, _| match h {
                Held::Lock { .. } => own != Some(h),
                Held::View { .. } => true,
                Held::Exposure { .. } | Held::Access { .. } => false,
            },
            || {
                "this call waits for other processes, which may wait for what is held: \
                 release it first (a process holds nothing another could wait for while it \
                 waits)"
                    .into()
            },
        )
    }

    /// A new epoch of `win` (exposing, with `origins`, and accessing
    /// `targets`): refused while a lock or a view is held (the epoch may
    /// wait), and while an epoch of `win` of the same kind is open.
    pub(crate) fn check_epoch(&self, win: u64, expose: bool, access: bool) -> Result<(), Refused> {
        self.refuse(
            Some(win),
            |h, same| match h {
                Held::Lock { .. } | Held::View { .. } => true,
                Held::Exposure { .. } => same && expose,
                Held::Access { .. } => same && access,
            },
            || {
                "an epoch call now could wait for ever, or open a second epoch of one kind on \
                 one window"
                    .into()
            },
        )
    }
}
