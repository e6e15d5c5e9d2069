//! Counters: the [`Counters`] of a send, the [`Counter`]s of a process
//! and the [`CounterId`]s others name them by, the completion counter of a
//! message in flight, and [`Am::counter`].

use std::cell::Cell;
use std::rc::{Rc, Weak};

use super::{lapi, mode::not_active, Am, Context};
use crate::error::{Error, SourceLocation};

#[cfg(doc)]
use crate::error::ErrorKind;

/// The counters of a send: `tgt` on the target (an id it gave us), `org`
/// and `cmpl` on this process.
#[derive(Clone, Copy, Default)]
pub struct Counters<'a> {
    pub(super) tgt: Option<CounterId>,
    pub(super) org: Option<&'a Counter>,
    pub(super) cmpl: Option<&'a Counter>,
}

impl<'a> Counters<'a> {
    /// No counter.
    pub fn none() -> Counters<'a> {
        Counters::default()
    }

    /// The target's counter `id`, which moves once the data has landed and
    /// the completion handler has run.
    pub fn tgt(mut self, id: CounterId) -> Self {
        self.tgt = Some(id);
        self
    }

    /// This process's counter that moves once the data was copied out of
    /// the source (before [`Am::send`] returns: the data is copied at
    /// once).
    pub fn org(mut self, c: &'a Counter) -> Self {
        self.org = Some(c);
        self
    }

    /// This process's counter that moves once the target has handled the
    /// message (its completion handler ran).
    pub fn cmpl(mut self, c: &'a Counter) -> Self {
        self.cmpl = Some(c);
        self
    }
}

// ----- counters ----------------------------------------------------------------------

/// A counter of this process ([`Am::counter`]): it moves when the
/// messages it was given to complete. Local: neither `Send` nor `Sync`.
/// Dropping it makes its id stale: a message naming it fails on arrival.
pub struct Counter {
    pub(super) cell: Rc<CounterCell>,
    id: CounterId,
    owner: (u64, usize),
    /// The `am_init` session of the process it belongs to (its ids are
    /// meaningless in another).
    session: u32,
}

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counter")
            .field("value", &self.cell.value.get())
            .field("id", &self.id)
            .finish()
    }
}

#[derive(Default)]
pub(crate) struct CounterCell {
    value: Cell<u64>,
}

/// How other processes name a [`Counter`] of this one (in
/// [`Counters::tgt`]): plain data, to be sent by a put, a message or an
/// active message.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CounterId {
    pub(super) index: u32,
    pub(super) generation: u32,
}

// SAFETY: `repr(C)` with two `u32`s: no padding, every bit pattern valid
// (a stale or forged id is refused by the target's table).
unsafe impl bytemuck::Zeroable for CounterId {}
// SAFETY: as above; `Copy` and `'static`.
unsafe impl bytemuck::Pod for CounterId {}

impl Counter {
    /// The value now (moved by messages handled so far: the counter does
    /// not dispatch; [`Am::wait_counter`] and [`Am::poll`] do).
    pub fn get(&self) -> u64 {
        self.cell.value.get()
    }

    /// Sets the value.
    pub fn set(&self, v: u64) {
        self.cell.value.set(v);
    }

    /// The id other processes name it by.
    pub fn id(&self) -> CounterId {
        self.id
    }
}

pub(super) fn bump(c: &CounterCell) {
    c.value.set(c.value.get() + 1);
}

/// The completion counter of a message in flight: a Rust [`Counter`]'s
/// cell, or a C `lapi_cntr_t` (its address, which the unsafe send vouched
/// for until the message is acknowledged).
pub(crate) enum Cmpl {
    Rust(Weak<CounterCell>),
    C(usize),
}

impl Cmpl {
    pub(super) fn bump(self) {
        match self {
            Cmpl::Rust(w) => {
                if let Some(c) = w.upgrade() {
                    bump(&c);
                }
            }
            // SAFETY: `lapi::send`'s contract: the counter stays valid
            // until the message is acknowledged, which is now.
            Cmpl::C(addr) => unsafe { lapi::bump_c(addr) },
        }
    }
}

impl Context {
    /// A new counter.
    fn counter(&mut self) -> Counter {
        let cell = Rc::new(CounterCell::default());
        let weak = Rc::downgrade(&cell);
        let index = match self
            .counters
            .iter()
            .position(|(_, w)| w.strong_count() == 0)
        {
            Some(i) => {
                let g = self.counters[i].0.wrapping_add(1);
                self.counters[i] = (g, weak);
                i
            }
            None => {
                // Generations start at the session's base: an id of an
                // earlier session names no counter of this one.
                self.counters.push((self.session << 20, weak));
                self.counters.len() - 1
            }
        };
        Counter {
            cell,
            id: CounterId {
                index: index as u32,
                generation: self.counters[index].0,
            },
            owner: self.owner,
            session: self.session,
        }
    }

    /// Whether `c` is a counter of this process and session.
    pub(super) fn mine(&self, c: &Counter) -> bool {
        c.owner == self.owner && c.session == self.session
    }
}

impl Am<'_> {
    /// A new counter of this process, at 0, valid until
    /// [`term`](Am::term).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmMismatch`] outside active-message mode.
    #[track_caller]
    pub fn counter(&self) -> Result<Counter, Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.bsp.process();
        match p.ext.am_mut().ctx.as_mut() {
            Some(ctx) => Ok(ctx.counter()),
            None => Err(not_active(&p, "am_counter", loc)),
        }
    }
}
