//! How the layers above the core take part in a process: *slots* and
//! *hook points* (ARCHITECTURE.md, "Layers").
//!
//! An extension (fence hints, the checking mode, the profiler, ...) keeps
//! its per-process state in a slot of the [`Process`]: a value of its own
//! type, which the core stores as a `dyn` [`Extension`] without naming
//! it. The core calls an extension at named hook points, the bits of
//! [`Extension::wants`], and only while some extension wants the point:
//! off, a hook point costs the core one test of a bit of
//! `Process::watch`, the union of what the slots want.
//!
//! An extension reaches its state with [`Process::ext`] (read) and
//! [`Process::with_ext`] (write): the slot is taken out of the process
//! for the call, so the extension's code holds its state and the core's
//! `&mut Process` at once, and the process's `watch` is brought up to
//! date when it is put back. A closure given to `with_ext` must not
//! sync: the slot is out while it runs, and the sync's hook points
//! would miss it (debug builds assert this).
//!
//! Hooks come in two forms. Most are methods of [`Extension`], called on
//! the state taken out of its slot (hints, accumulate, checking mode,
//! profiler, collectives). The two whose extensions are written as
//! methods of the process, reaching several slots at once (the epochs'
//! [`ROUTE`], the active messages' [`BARRIER`]), are tables of functions
//! ([`Routes`], [`SyncSteps`]) the extension sets at install: they run
//! with every slot in place, and reach their state through
//! [`Slots::get_mut`]. A slot's type is kept beside it, so a lookup is a
//! short scan of `TypeId`s (a handful of slots), no virtual call.

use std::any::{Any, TypeId};

use crate::error::{Error, ErrorKind};
use crate::mem::Records;
use crate::process::{Loc, Process};

/// Hook point: every transfer call (put, get, send, their hp, strided and
/// accumulate forms), after its `check_running`, before any other check.
pub(crate) const TRANSFER: u32 = 1 << 0;
/// Hook point: a superstep starts (each sync that succeeds, at its end).
pub(crate) const NEXT_SUPERSTEP: u32 = 1 << 1;
/// Hook point: step 5b of a sync, after every put was written: the
/// [`EXTENDED`](crate::mem::EXTENDED) records other processes sent this
/// one, in the order step 5 met them (senders in pid order, each
/// sender's in issue order). One extension takes them (today the
/// accumulate's); a process where none does refuses them.
pub(crate) const RECORDS: u32 = 1 << 2;
/// Hook points: around a sync (`bsp_sync`, a collective's, an active
/// messages' fence): [`Extension::before_sync`] in installation order,
/// then the sync, then [`Extension::after_sync`] in reverse order (the
/// profiler and the checking mode).
pub(crate) const AROUND_SYNC: u32 = 1 << 3;
/// Hook point: the checking mode's notes of where each put writes and of
/// what each hp region holds, at the call ([`Extension::note_put`],
/// [`Extension::note_hp`]).
pub(crate) const NOTES: u32 = 1 << 4;

/// Hook point: the agreement of a sync's descriptor (`Process::sync_desc`,
/// a collective's call): [`Extension::desc_hash`] for `mpi`'s barrier A,
/// [`Extension::desc_mismatch`] when that barrier found processes that
/// disagree, [`Extension::desc_check`] after the sync's steps elsewhere.
/// The core calls it only on `mpi` or when a process's sync carried a
/// descriptor (the `COLL` flag): a plain sync on shared memory pays
/// nothing. One extension takes it (the collectives').
pub(crate) const DESC: u32 = 1 << 5;

/// Hook point: a put or get may belong to an open one-sided epoch, which
/// carries it instead of the superstep ([`Routes`]).
pub(crate) const ROUTE: u32 = 1 << 6;

/// The [`ROUTE`] hook, functions of the one extension that routes
/// transfers (the one-sided epochs'). They reach that extension's state
/// through the process's slots, so nothing is taken out while they run.
pub(crate) struct Routes {
    /// Whether a transfer to `pid`'s registration slot `slot` belongs to
    /// an epoch (an error: to a process outside the epoch's group).
    pub(crate) route: fn(&Process, usize, u64, &'static str, Loc) -> Result<bool, Error>,
    /// Carries a routed put: `(pid, slot, offset, src, nbytes, call,
    /// loc)`; the caller vouches for `nbytes` bytes at `src`.
    pub(crate) put: RoutedPut,
    /// Carries a routed get: `(pid, slot, offset, dst, nbytes, keep,
    /// call, loc)`; the caller keeps `dst` writable until the epoch
    /// delivers it.
    pub(crate) get: RoutedGet,
}

/// See [`Routes::put`].
pub(crate) type RoutedPut = unsafe fn(
    &mut Process,
    usize,
    u64,
    usize,
    *const u8,
    usize,
    &'static str,
    Loc,
) -> Result<(), Error>;

/// See [`Routes::get`].
pub(crate) type RoutedGet = unsafe fn(
    &mut Process,
    usize,
    u64,
    usize,
    *mut u8,
    usize,
    Option<crate::process::Keepalive>,
    &'static str,
    Loc,
) -> Result<(), Error>;

/// Hook point: barrier A of a sync, for an extension with a progress
/// engine of its own ([`SyncSteps`]: active messages).
pub(crate) const BARRIER: u32 = 1 << 7;

/// The [`BARRIER`] hook: functions of the one extension that takes part
/// in barrier A (active messages), set at install; they reach its state
/// through the process's slots.
pub(crate) struct SyncSteps {
    /// Barrier flags this extension owns: when another process sets one,
    /// `after_barrier` runs here too, even if this process does not take
    /// part (it may have to refuse the sync).
    pub(crate) flags: u32,
    /// Before barrier A (and before an exchange engine publishes the
    /// superstep's streams): the flags to add to this process's.
    pub(crate) before_barrier: fn(&mut Process, &'static str, Loc) -> Result<u32, Error>,
    /// Barrier A itself, with this process's flags: the OR of every
    /// process's.
    pub(crate) barrier: fn(&mut Process, u32, &'static str, Loc) -> Result<u32, Error>,
    /// After barrier A, with the OR of the flags.
    pub(crate) after_barrier: fn(&mut Process, u32, &'static str, Loc) -> Result<(), Error>,
    /// After the sync's last step.
    pub(crate) end: fn(&mut Process, &'static str, Loc) -> Result<(), Error>,
}

/// What step 5b reads of one sender: its put section, and on `processes`
/// its channel of the superstep (where large payloads are).
pub(crate) type Section<'a> = (Records<'a>, Option<Records<'a>>);

/// An extension's per-process state, as the core sees it. Each hook has a
/// default that does nothing; an extension overrides those it asks for
/// in [`wants`](Extension::wants).
pub(crate) trait Extension: Any {
    /// The hook points this extension needs now (bits of this module).
    /// Read when the slot is installed and each time it is put back.
    fn wants(&self) -> u32;

    /// [`TRANSFER`]: a transfer call `call` is made at `loc`; an error
    /// refuses it (the call fails with it).
    fn transfer(&mut self, _p: &mut Process, _call: &'static str, _loc: Loc) -> Result<(), Error> {
        Ok(())
    }

    /// [`NEXT_SUPERSTEP`]: the process entered a new superstep.
    fn next_superstep(&mut self, _p: &mut Process) {}

    /// [`AROUND_SYNC`]: before the sync's first step; an error fails the
    /// sync (no step runs, and no `after_sync` hook).
    fn before_sync(&mut self, _p: &mut Process, _loc: Loc) -> Result<(), Error> {
        Ok(())
    }

    /// [`AROUND_SYNC`]: after the sync (`ok`: it succeeded); an error
    /// fails it.
    fn after_sync(&mut self, _p: &mut Process, _loc: Loc, _ok: bool) -> Result<(), Error> {
        Ok(())
    }

    /// [`NOTES`]: a put (or hpput, strided put, accumulate) to `dest` of
    /// `shape` bytes at `offset` of registration slot `slot` (with flag
    /// bits the noting extension defines).
    #[allow(clippy::too_many_arguments)]
    fn note_put(
        &mut self,
        _dest: usize,
        _slot: u64,
        _offset: usize,
        _shape: crate::mem::Shape,
        _call: &'static str,
        _loc: Loc,
    ) {
    }

    /// [`NOTES`]: an hpput's source or an hpget's destination, `len`
    /// bytes from `ptr`, at the call.
    ///
    /// # Safety
    ///
    /// `ptr` must be readable for `len` bytes now and until the sync (the
    /// contract of `bsp_hpput` and `bsp_hpget`).
    unsafe fn note_hp(&mut self, _call: &'static str, _ptr: *const u8, _len: usize, _loc: Loc) {}

    /// [`DESC`]: the value `mpi`'s barrier A compares across processes
    /// (the descriptor of this sync, or of a plain one).
    fn desc_hash(&self, _p: &Process) -> u64 {
        0
    }

    /// [`DESC`]: the error of a barrier A that found processes whose
    /// descriptors differ (every process learns it in the same barrier).
    fn desc_mismatch(&mut self, p: &mut Process, loc: Loc) -> Error {
        p.fail(
            ErrorKind::CollectiveMismatch {
                detail: "processes ended the superstep with different calls".into(),
            },
            "bsp_sync",
            loc,
        )
    }

    /// [`DESC`]: after the sync's steps, the check of its descriptor
    /// against the other processes'.
    fn desc_check(&mut self, _p: &mut Process, _loc: Loc) -> Result<(), Error> {
        Ok(())
    }

    /// [`RECORDS`]: applies `records`, each `(sender, byte offset in its
    /// put section)`; `section(sender)` views what `sender` sent. An
    /// error refuses a record (the sync fails with it).
    fn records<'a>(
        &mut self,
        _p: &mut Process,
        _records: &[(usize, usize)],
        _section: &mut dyn FnMut(usize) -> Option<Section<'a>>,
    ) -> Result<(), ErrorKind> {
        Ok(())
    }
}

/// The [`DESC`] defaults, for a process where no extension takes it.
struct DefaultDesc;

impl Extension for DefaultDesc {
    fn wants(&self) -> u32 {
        0
    }
}

/// The number of slot keys ([`Slotted::KEY`] is below it).
pub(crate) const KEYS: usize = 16;

/// An extension's state type with its slot key: a number below [`KEYS`]
/// the extension picks, unique among the extensions (installing two types
/// with one key panics, at the start of every process: the tests would
/// see it), so that a lookup is an index, not a search.
pub(crate) trait Slotted: Extension + Sized {
    /// This type's key.
    const KEY: usize;
}

/// No slot for a key (in [`Slots::index`]).
const NONE: u8 = u8::MAX;

/// One slot: the state (out while a hook or `with_ext` runs) and what it
/// wanted when last put back.
struct Slot {
    /// The type of `state` (kept, so a lookup compares no more than it).
    type_id: TypeId,
    state: Option<Box<dyn Extension>>,
    wants: u32,
}

/// The slots of one process, in the order they were installed (hooks run
/// in that order).
pub(crate) struct Slots {
    slots: Vec<Slot>,
    /// By key, the position of its slot in `slots` ([`NONE`]: none).
    index: [u8; KEYS],
    /// The [`ROUTE`] hook, when an extension routes transfers.
    routes: Option<&'static Routes>,
    /// The [`BARRIER`] hook, when an extension takes part in barrier A.
    steps: Option<&'static SyncSteps>,
}

impl Default for Slots {
    fn default() -> Self {
        Slots {
            slots: Vec::new(),
            index: [NONE; KEYS],
            routes: None,
            steps: None,
        }
    }
}

impl Slots {
    /// The position in `slots` of `T`'s slot: the one its key names, if
    /// that slot holds a `T` (two types with one key are refused at
    /// install; this check keeps a lookup of a type never installed, whose
    /// key another type took, from finding that other type's slot).
    #[inline(always)]
    fn position<T: Slotted>(&self) -> Option<usize> {
        const { assert!(T::KEY < KEYS) };
        let i = self.index[T::KEY];
        (i != NONE && self.slots[usize::from(i)].type_id == TypeId::of::<T>())
            .then_some(usize::from(i))
    }

    /// Puts `state` in the slot of its type (replacing an earlier one);
    /// panics if another type has its key.
    fn insert<T: Slotted>(&mut self, state: T) {
        let wants = state.wants();
        let state: Box<dyn Extension> = Box::new(state);
        let taken = self.index[T::KEY];
        assert!(
            taken == NONE || self.slots[usize::from(taken)].type_id == TypeId::of::<T>(),
            "two extensions with the slot key {}",
            T::KEY
        );
        match self.position::<T>() {
            Some(i) => {
                self.slots[i] = Slot {
                    type_id: TypeId::of::<T>(),
                    state: Some(state),
                    wants,
                }
            }
            None => {
                self.index[T::KEY] = u8::try_from(self.slots.len()).expect("few slots");
                self.slots.push(Slot {
                    type_id: TypeId::of::<T>(),
                    state: Some(state),
                    wants,
                })
            }
        }
    }

    /// The union of what the slots want.
    fn watch(&self) -> u32 {
        self.slots.iter().fold(0, |w, s| w | s.wants)
    }

    /// The state of type `T`, if installed (and not out for a hook). A
    /// method of the slots, not of the process: it borrows this field
    /// only, so an extension's code may hold it while it reads the
    /// core's other fields.
    #[inline(always)]
    pub(crate) fn get<T: Slotted>(&self) -> Option<&T> {
        let state = self.slots[self.position::<T>()?].state.as_deref()?;
        // SAFETY: `position` found a slot whose `type_id` is `T`'s, and
        // a slot's `type_id` is that of the value its state boxes (set
        // together by `insert`, the only writer of both; the hooks put
        // back the state they took): the data pointer of the `dyn` is a
        // `T`.
        Some(unsafe { &*std::ptr::from_ref(state).cast::<T>() })
    }

    /// [`get`](Slots::get), mutably: for changes that leave what the
    /// extension [`wants`](Extension::wants) as it was (those go through
    /// [`Process::with_ext`], or are followed by [`Process::rewatch`]).
    #[inline(always)]
    pub(crate) fn get_mut<T: Slotted>(&mut self) -> Option<&mut T> {
        let i = self.position::<T>()?;
        let state = self.slots[i].state.as_deref_mut()?;
        // SAFETY: as for `get`.
        Some(unsafe { &mut *std::ptr::from_mut(state).cast::<T>() })
    }
}

impl Process {
    /// Installs `state` as the slot of its type (replacing an earlier one).
    pub(crate) fn install<T: Slotted>(&mut self, state: T) {
        self.ext.insert(state);
        self.watch = self.ext.watch();
    }

    /// The index of the slot holding a `T`.
    fn slot_of<T: Slotted>(&self) -> Option<usize> {
        self.ext.position::<T>()
    }

    /// The extension state of type `T`, if installed.
    #[inline]
    pub(crate) fn ext<T: Slotted>(&self) -> Option<&T> {
        self.ext.get::<T>()
    }

    /// Brings `watch` up to date after the extension of type `T` changed
    /// what it wants through [`Slots::get_mut`].
    #[inline]
    pub(crate) fn rewatch<T: Slotted>(&mut self) {
        if let Some(s) = self.ext.position::<T>().map(|i| &mut self.ext.slots[i]) {
            if let Some(state) = s.state.as_deref() {
                // SAFETY: `position` found a slot whose `type_id` is
                // `T`'s (see `Slots::get`); the call is then a static one.
                let state = unsafe { &*std::ptr::from_ref(state).cast::<T>() };
                s.wants = state.wants();
            }
        }
        self.watch = self.ext.watch();
    }

    /// Runs `f` with the extension state of type `T` (installed first with
    /// `init` if there is none) and this process; `watch` follows what
    /// the state wants afterwards.
    pub(crate) fn with_ext<T: Slotted, R>(
        &mut self,
        init: impl FnOnce() -> T,
        f: impl FnOnce(&mut T, &mut Process) -> R,
    ) -> R {
        let i = match self.slot_of::<T>() {
            Some(i) => i,
            None => {
                self.install(init());
                self.ext.slots.len() - 1
            }
        };
        let result = self
            .call_slot(i, |state, p| {
                // SAFETY: slot `i` was found by `position` (or just
                // installed) for `T`: its `type_id` is `T`'s (see
                // `Slots::get`), so the data pointer of the `dyn` is a `T`.
                let typed = unsafe { &mut *std::ptr::from_mut(state).cast::<T>() };
                f(typed, p)
            })
            .expect("extension slot in use");
        self.watch = self.ext.watch();
        result
    }

    /// [`with_ext`](Process::with_ext) if a `T` is installed, else `None`.
    pub(crate) fn if_ext<T: Slotted, R>(
        &mut self,
        f: impl FnOnce(&mut T, &mut Process) -> R,
    ) -> Option<R> {
        self.slot_of::<T>()?;
        Some(self.with_ext(|| unreachable!("installed"), f))
    }

    /// Runs `hook` on slot `i`'s state, taken out of the process for the
    /// call (so the hook holds its state and the process at once), and
    /// puts it back with what it wants now; `None` if the slot is out
    /// already (a hook point reached from inside a hook: a bug, which
    /// debug builds assert; the hooks that must not be skipped panic).
    fn call_slot<R>(
        &mut self,
        i: usize,
        hook: impl FnOnce(&mut dyn Extension, &mut Process) -> R,
    ) -> Option<R> {
        let Some(mut state) = self.ext.slots[i].state.take() else {
            debug_assert!(
                false,
                "a hook point reached while its extension's slot is out"
            );
            return None;
        };
        let result = hook(&mut *state, self);
        self.ext.slots[i].wants = state.wants();
        self.ext.slots[i].state = Some(state);
        Some(result)
    }

    /// Runs hook `point` of every slot that wants it, in installation
    /// order, stopping at the first error.
    #[cold]
    #[inline(never)]
    fn run_hooks(
        &mut self,
        point: u32,
        mut hook: impl FnMut(&mut dyn Extension, &mut Process) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut result = Ok(());
        for i in 0..self.ext.slots.len() {
            if self.ext.slots[i].wants & point == 0 {
                continue;
            }
            result = self.call_slot(i, &mut hook).unwrap_or(Ok(()));
            if result.is_err() {
                break;
            }
        }
        self.watch = self.ext.watch();
        result
    }

    /// `bsp_sync` with the [`AROUND_SYNC`] hooks (the one branch of
    /// `Process::sync` when an extension asks for them): `before_sync` in
    /// installation order, the sync, `after_sync` in reverse order, every
    /// one of them even after an error (the first error is the result).
    #[cold]
    #[inline(never)]
    pub(crate) fn sync_hooked(&mut self, loc: Loc) -> Result<(), Error> {
        self.run_hooks(AROUND_SYNC, |e, p| e.before_sync(p, loc))?;
        let result = self.sync_unprofiled(loc);
        let ok = result.is_ok();
        let mut after = Ok(());
        for i in (0..self.ext.slots.len()).rev() {
            if self.ext.slots[i].wants & AROUND_SYNC == 0 {
                continue;
            }
            let r = self.call_slot(i, |e, p| e.after_sync(p, loc, ok));
            if after.is_ok() {
                after = r.unwrap_or(Ok(()));
            }
        }
        self.watch = self.ext.watch();
        result.and(after)
    }

    /// Hook point [`NOTES`]: a put's note (see [`Extension::note_put`]).
    #[cold]
    pub(crate) fn hook_note_put(
        &mut self,
        dest: usize,
        slot: u64,
        offset: usize,
        shape: crate::mem::Shape,
        call: &'static str,
        loc: Loc,
    ) {
        for s in &mut self.ext.slots {
            if let (true, Some(state)) = (s.wants & NOTES != 0, s.state.as_mut()) {
                state.note_put(dest, slot, offset, shape, call, loc);
            }
        }
    }

    /// Hook point [`NOTES`]: an hp region's note (see
    /// [`Extension::note_hp`]).
    ///
    /// # Safety
    ///
    /// As for [`Extension::note_hp`].
    #[cold]
    pub(crate) unsafe fn hook_note_hp(
        &mut self,
        call: &'static str,
        ptr: *const u8,
        len: usize,
        loc: Loc,
    ) {
        for s in &mut self.ext.slots {
            if let (true, Some(state)) = (s.wants & NOTES != 0, s.state.as_mut()) {
                // SAFETY: our caller's contract.
                unsafe { state.note_hp(call, ptr, len, loc) };
            }
        }
    }

    /// Hook point [`TRANSFER`]: called by every transfer call after
    /// `check_running`; one predicted branch unless an extension watches.
    #[inline]
    pub(crate) fn note_transfer(&mut self, call: &'static str, loc: Loc) -> Result<(), Error> {
        if self.watch & TRANSFER != 0 {
            return self.run_hooks(TRANSFER, |e, p| e.transfer(p, call, loc));
        }
        Ok(())
    }

    /// Hook point [`RECORDS`]: the extended records noted in step 5 go to
    /// the first extension that takes them; `Err(kind)` refuses them.
    pub(crate) fn hook_records<'a>(
        &mut self,
        records: &[(usize, usize)],
        section: &mut dyn FnMut(usize) -> Option<Section<'a>>,
    ) -> Result<(), ErrorKind> {
        let taker = (self.watch & RECORDS != 0)
            .then(|| self.ext.slots.iter().position(|s| s.wants & RECORDS != 0))
            .flatten();
        let Some(i) = taker else {
            let (sender, _) = records[0];
            return Err(ErrorKind::InvalidRecord {
                what: crate::mem::EXTENDED_WHAT,
                sender,
                detail: "is of a kind this process does not take".into(),
            });
        };
        self.call_slot(i, |e, p| e.records(p, records, section))
            .expect("extension slot in use")
    }

    /// The slot that takes hook point `point` (the first that wants it).
    fn taker(&self, point: u32) -> Option<usize> {
        self.ext.slots.iter().position(|s| s.wants & point != 0)
    }

    /// Hook point [`DESC`]: `mpi`'s barrier A value.
    pub(crate) fn hook_desc_hash(&self) -> u64 {
        self.taker(DESC)
            .and_then(|i| self.ext.slots[i].state.as_ref())
            .map_or(0, |e| e.desc_hash(self))
    }

    /// Hook point [`DESC`]: barrier A found processes that disagree.
    #[cold]
    pub(crate) fn hook_desc_mismatch(&mut self, loc: Loc) -> Error {
        let Some(i) = self.taker(DESC) else {
            return DefaultDesc.desc_mismatch(self, loc);
        };
        self.call_slot(i, |e, p| e.desc_mismatch(p, loc))
            .expect("extension slot in use")
    }

    /// Hook point [`DESC`]: after the sync's steps; nothing to do unless
    /// this sync or another process's carried a descriptor.
    #[inline]
    pub(crate) fn hook_desc_check(&mut self, loc: Loc) -> Result<(), Error> {
        if self.sync_desc.is_none() && self.last_flags & crate::mailbox::COLL == 0 {
            return Ok(());
        }
        let Some(i) = self.taker(DESC) else {
            self.sync_desc = None;
            return Ok(());
        };
        self.call_slot(i, |e, p| e.desc_check(p, loc))
            .expect("extension slot in use")
    }

    /// Sets the [`ROUTE`] hook (one extension routes transfers).
    pub(crate) fn set_routes(&mut self, routes: &'static Routes) {
        self.ext.routes = Some(routes);
    }

    /// Hook point [`ROUTE`]: whether a transfer to `pid`'s `slot` goes
    /// through an epoch. Callers test `watch & ROUTE` first (one branch
    /// while no epoch is open).
    pub(crate) fn hook_route(
        &self,
        pid: usize,
        slot: u64,
        call: &'static str,
        loc: Loc,
    ) -> Result<Option<&'static Routes>, Error> {
        match self.ext.routes {
            Some(r) if (r.route)(self, pid, slot, call, loc)? => Ok(Some(r)),
            _ => Ok(None),
        }
    }

    /// Sets the [`BARRIER`] hook (one extension takes part in barrier A).
    pub(crate) fn set_sync_steps(&mut self, steps: &'static SyncSteps) {
        self.ext.steps = Some(steps);
    }

    /// The [`BARRIER`] hook while it is wanted (one bit test otherwise).
    #[inline]
    pub(crate) fn sync_steps_wanted(&self) -> Option<&'static SyncSteps> {
        if self.watch & BARRIER != 0 {
            self.ext.steps
        } else {
            None
        }
    }

    /// The [`BARRIER`] hook's `after_barrier`, if this process takes part
    /// or another process set one of the flags it owns.
    #[inline]
    pub(crate) fn sync_steps_after(&self, all: u32) -> Option<&'static SyncSteps> {
        let steps = self.ext.steps?;
        (self.watch & BARRIER != 0 || all & steps.flags != 0).then_some(steps)
    }

    /// Hook point [`NEXT_SUPERSTEP`].
    #[inline]
    pub(crate) fn hook_next_superstep(&mut self) {
        if self.watch & NEXT_SUPERSTEP != 0 {
            let _ = self.run_hooks(NEXT_SUPERSTEP, |e, p| {
                e.next_superstep(p);
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct A(u32);
    struct B;

    impl Extension for A {
        fn wants(&self) -> u32 {
            self.0
        }
    }
    impl Slotted for A {
        const KEY: usize = 9;
    }
    impl Extension for B {
        fn wants(&self) -> u32 {
            0
        }
    }
    impl Slotted for B {
        const KEY: usize = 9;
    }

    #[test]
    fn a_lookup_finds_its_own_type_only() {
        let mut slots = Slots::default();
        assert!(slots.get::<A>().is_none());
        slots.insert(A(TRANSFER));
        assert_eq!(slots.get::<A>().map(|a| a.0), Some(TRANSFER));
        assert_eq!(slots.watch(), TRANSFER);
        // B has A's key but was never installed: not found, never A's
        // slot read as a B.
        assert!(slots.get::<B>().is_none());
        assert!(slots.get_mut::<B>().is_none());
        slots.insert(A(NOTES));
        assert_eq!(slots.get::<A>().map(|a| a.0), Some(NOTES));
        assert_eq!(slots.slots.len(), 1);
    }

    #[test]
    #[should_panic(expected = "two extensions with the slot key 9")]
    fn two_types_with_one_key_are_refused() {
        let mut slots = Slots::default();
        slots.insert(A(0));
        slots.insert(B);
    }
}
