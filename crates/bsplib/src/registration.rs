//! Registration slots (`bsp_push_reg` / `bsp_pop_reg`).
//!
//! The paper's model: a sequence of slots, each holding one `(address,
//! extent)` pair per process. `bsp_push_reg` adds a slot at the front at the
//! next sync; a put or get names a *local* address, which is resolved through
//! the most recent slot holding that address in the caller's column, and the
//! slot gives the remote address and extent. `bsp_pop_reg` removes the most
//! recent slot holding the address, at the next sync; any live slot may be
//! popped (it is not a stack), but every process must name the same slot.
//!
//! Every process keeps a full replica of the table. The calls of a superstep
//! are published to all processes at the sync, and every process applies the
//! same calls in the same order, so the replicas stay identical and every
//! process detects a mismatch alike.
//!
//! A pop names its slot through the popper's own column, which only the
//! popper can search fast (by address, [`Registry::claim`]); so the popper
//! resolves its pop at the call, as the sync will apply it (after the
//! calls before it in the superstep), and the call carries that *claim*:
//! the sync checks that every process claims the same slot and that the
//! slot holds each claimant's address. Popping in any order costs the
//! same. (The table decides where a sender's transfers go, never where a
//! receiver writes: every record is checked again by its owner.)

use crate::error::SourceLocation;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ptr::NonNull;

use crate::error::ErrorKind;

/// One process's part of a slot. `addr == 0` is a `NULL` registration.
/// Addresses are kept as integers (they are compared, published to other
/// processes and offset); the front doors expose the provenance of every
/// registered pointer, and the sync turns addresses back into pointers with
/// `with_exposed_provenance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) addr: usize,
    pub(crate) size: usize,
}

/// A registration slot: one entry per process.
pub(crate) struct Slot {
    /// Position in push order; slots are identified by it on every process.
    seq: u64,
    entries: Box<[Entry]>,
}

impl Slot {
    /// The slot's number: its position in push order, the same on every
    /// process (every replica applies the same calls in the same order).
    /// Records name a slot by it, never by an address.
    #[inline]
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// The entry of process `pid`.
    #[inline]
    pub(crate) fn entry(&self, pid: usize) -> Entry {
        self.entries[pid]
    }
}

/// The entries of the slot [`Registry::lookup`] found last: a pointer
/// into that slot's `Box<[Entry]>`, which the registry owns and which
/// stays where it is while the slot lives (the cache holding it is reset
/// whenever the table changes).
#[derive(Clone, Copy)]
struct Entries(NonNull<Entry>);

// SAFETY: the pointer is into memory owned by the same `Registry` (a
// slot's boxed entries); it moves to another thread only with its owner.
unsafe impl Send for Entries {}

/// A registration call made in the current superstep, published at the sync.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RegOp {
    pub(crate) kind: RegOpKind,
    pub(crate) location: Option<SourceLocation>,
}

/// Which call, with its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegOpKind {
    Push {
        addr: usize,
        size: usize,
    },
    /// `claim`: the slot the popper's own column names for `addr` (see the
    /// module docs); `None` when it names none, or for `NULL`.
    Pop {
        addr: usize,
        claim: Option<u64>,
    },
}

/// The registration calls of the current superstep, as far as resolving a
/// pop at its call needs them.
#[derive(Default)]
pub(crate) struct Pending {
    /// Pushes so far: their slots will be `next_seq + 0, 1, ...`.
    pushes: u64,
    /// Our non-NULL addresses pushed so far → their future slots.
    pushed: HashMap<usize, Vec<u64>>,
    /// Slots claimed by pops so far.
    popped: HashSet<u64>,
}

impl Pending {
    /// Forgets the calls (the sync applied them).
    pub(crate) fn clear(&mut self) {
        if self.pushes != 0 || !self.popped.is_empty() {
            *self = Pending::default();
        }
    }
}

/// A registration error found at the sync: the error, and the process and
/// call it is attributed to.
pub(crate) struct RegError {
    pub(crate) kind: ErrorKind,
    pub(crate) pid: usize,
    pub(crate) call: &'static str,
    pub(crate) location: Option<SourceLocation>,
}

/// What applying a superstep's registration calls changed on this process.
#[derive(Default)]
pub(crate) struct Applied {
    /// The slots created, in call order.
    pub(crate) pushed: Vec<u64>,
    /// The slots removed.
    pub(crate) popped: Vec<u64>,
}

/// The replicated slot table of one process.
pub(crate) struct Registry {
    me: usize,
    nprocs: usize,
    /// Live slots by `seq` (push order).
    slots: BTreeMap<u64, Slot>,
    /// This process's non-NULL addresses → the slots holding them, oldest first.
    mine: HashMap<usize, Vec<u64>>,
    next_seq: u64,
    /// The last successful lookup: `(address, seq, the slot's entries)`.
    /// Programs put into the same area many times in a row; this skips the
    /// hash and the search of `slots`. Reset whenever the table changes.
    last: Cell<Option<(usize, u64, Entries)>>,
    /// The slots popped by the sync in progress: records of the superstep
    /// that popped them may still name them (a pop takes effect at the
    /// end of the sync), until [`forget_retired`](Self::forget_retired).
    retired: BTreeMap<u64, Slot>,
    /// The last slot resolved by [`own`](Self::own): `(seq, our entry)`.
    /// Streams name the same slot many times in a row.
    last_own: Cell<Option<(u64, Entry)>>,
    /// Our non-NULL areas, live or popped by the sync in progress, by
    /// `(address, seq)`: their sizes ([`covers`](Self::covers)).
    areas: BTreeMap<(usize, u64), usize>,
    /// The largest size ever in `areas`: no area starting before
    /// `addr - widest` reaches `addr`.
    widest: usize,
    /// Each live slot's control line (its lock word and post counters in
    /// one-sided use, `epoch.rs`): the lowest line free when it was
    /// pushed. Every process applies the same pushes and pops in the same
    /// order, so a slot has the same line everywhere, with no exchange.
    lines: HashMap<u64, u64>,
    /// Lines given back by pops, below `next_line`.
    free_lines: std::collections::BTreeSet<u64>,
    next_line: u64,
}

impl Registry {
    pub(crate) fn new(me: usize, nprocs: usize) -> Self {
        Registry {
            me,
            nprocs,
            slots: BTreeMap::new(),
            mine: HashMap::new(),
            next_seq: 0,
            last: Cell::new(None),
            retired: BTreeMap::new(),
            last_own: Cell::new(None),
            areas: BTreeMap::new(),
            widest: 0,
            lines: HashMap::new(),
            free_lines: std::collections::BTreeSet::new(),
            next_line: 0,
        }
    }

    /// This process's live non-empty areas: `(seq, address, size)`.
    pub(crate) fn mine(&self) -> impl Iterator<Item = (u64, usize, usize)> + '_ {
        self.slots.values().filter_map(|s| {
            let e = &s.entries[self.me];
            (e.addr != 0 && e.size > 0).then_some((s.seq, e.addr, e.size))
        })
    }

    /// Slot `seq`'s control line, if the slot is live: the same on every
    /// process ([`lines`](Registry::lines)).
    pub(crate) fn line(&self, seq: u64) -> Option<u64> {
        self.lines.get(&seq).copied()
    }

    /// Whether any byte of `addr..addr + len` lies in one of our
    /// registered areas (live, or popped by the sync in progress): memory
    /// another process may read with a get in this superstep.
    pub(crate) fn covers(&self, addr: usize, len: usize) -> bool {
        let end = addr.saturating_add(len);
        for (&(start, _), &size) in self.areas.range(..(end, 0)).rev() {
            if start.saturating_add(size) > addr && size > 0 {
                return true;
            }
            if start.saturating_add(self.widest) <= addr {
                break;
            }
        }
        false
    }

    /// This process's own entry in slot `seq`, live or popped by the sync
    /// in progress: how the owner of the memory resolves a record, whoever
    /// sent it. `None` if no such slot exists here.
    #[inline]
    pub(crate) fn own(&self, seq: u64) -> Option<Entry> {
        if let Some((s, e)) = self.last_own.get() {
            if s == seq {
                return Some(e);
            }
        }
        let slot = self.slot(seq).or_else(|| self.retired.get(&seq))?;
        let e = slot.entries[self.me];
        self.last_own.set(Some((seq, e)));
        Some(e)
    }

    /// [`own`](Self::own) when `seq` is the slot it resolved last (a
    /// stream of puts into one area), else `None`: without a call.
    #[inline(always)]
    pub(crate) fn own_hit(&self, seq: u64) -> Option<Entry> {
        self.last_own
            .get()
            .filter(|&(s, _)| s == seq)
            .map(|(_, e)| e)
    }

    /// The sync in progress has applied every record: slots it popped can
    /// no longer be named.
    pub(crate) fn forget_retired(&mut self) {
        if !self.retired.is_empty() {
            for (&seq, slot) in &self.retired {
                self.areas.remove(&(slot.entries[self.me].addr, seq));
            }
            self.retired.clear();
            self.last_own.set(None);
        }
    }

    /// The most recent live slot in which this process registered `addr`.
    #[inline]
    pub(crate) fn lookup(&self, addr: usize) -> Option<&Slot> {
        if let Some((a, seq, _)) = self.last.get() {
            if a == addr {
                return self.slots.get(&seq);
            }
        }
        let seq = *self.mine.get(&addr)?.last()?;
        let slot = self.slots.get(&seq)?;
        let entries = Entries(NonNull::from(&*slot.entries).cast());
        self.last.set(Some((addr, seq, entries)));
        Some(slot)
    }

    /// [`lookup`](Self::lookup)'s slot number and entry of process `pid`
    /// (`< nprocs`), straight from the cache when `addr` was the last
    /// address looked up (a put's common case).
    #[inline(always)]
    pub(crate) fn lookup_entry(&self, addr: usize, pid: usize) -> Option<(u64, Entry)> {
        assert!(pid < self.nprocs, "pid {pid} out of range");
        if let Some((a, seq, entries)) = self.last.get() {
            if a == addr {
                // SAFETY: `entries` points to the `nprocs` entries of live
                // slot `seq` (the cache is reset whenever a slot is
                // removed), and `pid < nprocs`.
                return Some((seq, unsafe { *entries.0.as_ptr().add(pid) }));
            }
        }
        let slot = self.lookup(addr)?;
        Some((slot.seq(), slot.entry(pid)))
    }

    /// The slot a pop of our `addr` will remove when the sync applies it
    /// after the calls of this superstep so far (`pending`), which it then
    /// records: the most recent slot holding `addr` in our column, pushed
    /// before this superstep or in it, not popped yet. `None` for `NULL`
    /// (resolved at the sync from the others' claims) or for an address we
    /// did not register (an error at the sync).
    pub(crate) fn claim(&self, addr: usize, pending: &mut Pending) -> Option<u64> {
        if addr == 0 {
            return None;
        }
        let fresh = pending.pushed.get(&addr).into_iter().flatten().rev();
        let old = self.mine.get(&addr).into_iter().flatten().rev();
        let seq = fresh
            .chain(old)
            .copied()
            .find(|s| !pending.popped.contains(s))?;
        pending.popped.insert(seq);
        Some(seq)
    }

    /// Notes a push of the current superstep (for later [`claim`](Self::claim)s).
    pub(crate) fn note_push(&self, addr: usize, pending: &mut Pending) {
        let seq = self.next_seq + pending.pushes;
        pending.pushes += 1;
        if addr != 0 {
            pending.pushed.entry(addr).or_default().push(seq);
        }
    }

    /// Number of live slots.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Applies the registration calls of one superstep, `ops[pid]` being the
    /// calls of process `pid` in call order. All processes call this with the
    /// same `ops` and reach the same result.
    pub(crate) fn apply(&mut self, ops: &[&[RegOp]]) -> Result<Applied, RegError> {
        debug_assert_eq!(ops.len(), self.nprocs);
        let n = ops[0].len();
        if let Some((pid, o)) = ops.iter().enumerate().find(|(_, o)| o.len() != n) {
            let (call, location) = match o.get(n).or(ops[0].get(o.len())) {
                Some(op) => (op.kind.call(), op.location),
                None => ("bsp_sync", None),
            };
            return Err(RegError {
                kind: ErrorKind::RegistrationMismatch {
                    detail: format!(
                        "process {pid} made {} bsp_push_reg/bsp_pop_reg calls in this superstep, process 0 made {n}",
                        o.len()
                    ),
                },
                pid,
                call,
                location,
            });
        }
        self.last.set(None);
        self.last_own.set(None);
        let mut applied = Applied::default();
        for j in 0..n {
            match ops[0][j].kind {
                RegOpKind::Push { .. } => {
                    let mut entries = Vec::with_capacity(self.nprocs);
                    for (pid, o) in ops.iter().enumerate() {
                        match o[j].kind {
                            RegOpKind::Push { addr, size } => entries.push(Entry { addr, size }),
                            RegOpKind::Pop { .. } => return Err(kind_mismatch(j, pid, &o[j])),
                        }
                    }
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    let line = self.free_lines.pop_first().unwrap_or_else(|| {
                        self.next_line += 1;
                        self.next_line - 1
                    });
                    self.lines.insert(seq, line);
                    let my_addr = entries[self.me].addr;
                    if my_addr != 0 {
                        self.mine.entry(my_addr).or_default().push(seq);
                        let size = entries[self.me].size;
                        self.areas.insert((my_addr, seq), size);
                        self.widest = self.widest.max(size);
                    }
                    self.slots.insert(
                        seq,
                        Slot {
                            seq,
                            entries: entries.into_boxed_slice(),
                        },
                    );
                    applied.pushed.push(seq);
                }
                RegOpKind::Pop { .. } => {
                    let seq = self.resolve_pop(j, ops)?;
                    self.remove(seq);
                    applied.popped.push(seq);
                }
            }
        }
        Ok(applied)
    }

    /// The slot that pop call `j` of the superstep removes. The processes
    /// that pop a real address claim it (each through its own column: the
    /// most recent slot holding that address, see [`claim`](Self::claim))
    /// and must agree, and the slot must hold each one's address; a process
    /// that pops `NULL` takes part in whichever slot that is, provided it
    /// registered `NULL` there. If every process pops `NULL`, the slot is
    /// the most recent one that is `NULL` everywhere.
    fn resolve_pop(&self, j: usize, ops: &[&[RegOp]]) -> Result<u64, RegError> {
        let pop = |pid: usize| match ops[pid][j].kind {
            RegOpKind::Pop { addr, claim } => Ok((addr, claim)),
            RegOpKind::Push { .. } => Err(kind_mismatch(j, pid, &ops[pid][j])),
        };
        let error = |pid: usize, kind| RegError {
            kind,
            pid,
            call: "bsp_pop_reg",
            location: ops[pid][j].location,
        };
        let differs = |pid: usize, first: usize| {
            error(
                pid,
                ErrorKind::RegistrationMismatch {
                    detail: format!(
                        "bsp_pop_reg call {} of this superstep names a different registration slot on process {pid} than on process {first}",
                        j + 1
                    ),
                },
            )
        };
        let mut target: Option<(u64, usize)> = None;
        for pid in 0..self.nprocs {
            let (addr, claim) = pop(pid)?;
            if addr == 0 {
                continue;
            }
            let Some(seq) = claim else {
                return Err(error(pid, ErrorKind::NotRegistered { addr }));
            };
            match target {
                None => target = Some((seq, pid)),
                Some((t, _)) if t == seq => {}
                Some((_, first)) => return Err(differs(pid, first)),
            }
            // A claim names a slot holding the claimant's address.
            if self.slot(seq).is_none_or(|s| s.entries[pid].addr != addr) {
                return Err(error(pid, ErrorKind::NotRegistered { addr }));
            }
        }
        let Some((seq, first)) = target else {
            // Every process pops NULL.
            return self
                .slots
                .values()
                .rev()
                .find(|s| s.entries.iter().all(|e| e.addr == 0))
                .map(|s| s.seq)
                .ok_or_else(|| error(0, ErrorKind::NotRegistered { addr: 0 }));
        };
        let slot = self.slot(seq).expect("a claimed slot is live (checked)");
        for pid in 0..self.nprocs {
            if pop(pid)?.0 == 0 && slot.entries[pid].addr != 0 {
                return Err(error(
                    pid,
                    ErrorKind::RegistrationMismatch {
                        detail: format!(
                            "process {pid} pops NULL in bsp_pop_reg call {} of this superstep, but registered an area in the slot process {first} pops",
                            j + 1
                        ),
                    },
                ));
            }
        }
        Ok(seq)
    }

    fn slot(&self, seq: u64) -> Option<&Slot> {
        self.slots.get(&seq)
    }

    fn remove(&mut self, seq: u64) {
        let slot = self.slots.remove(&seq).expect("a resolved slot is live");
        if let Some(line) = self.lines.remove(&seq) {
            self.free_lines.insert(line);
        }
        let my_addr = slot.entries[self.me].addr;
        if my_addr != 0 {
            if let Some(v) = self.mine.get_mut(&my_addr) {
                if let Some(i) = v.iter().rposition(|&s| s == seq) {
                    v.remove(i);
                }
                if v.is_empty() {
                    self.mine.remove(&my_addr);
                }
            }
        }
        self.retired.insert(seq, slot);
    }
}

impl RegOpKind {
    fn call(&self) -> &'static str {
        match self {
            RegOpKind::Push { .. } => "bsp_push_reg",
            RegOpKind::Pop { .. } => "bsp_pop_reg",
        }
    }
}

fn kind_mismatch(j: usize, pid: usize, op: &RegOp) -> RegError {
    let (other, this) = match op.kind {
        RegOpKind::Push { .. } => ("bsp_pop_reg", "bsp_push_reg"),
        RegOpKind::Pop { .. } => ("bsp_push_reg", "bsp_pop_reg"),
    };
    RegError {
        kind: ErrorKind::RegistrationMismatch {
            detail: format!(
                "registration call {} of this superstep is {this} on process {pid} but {other} on process 0",
                j + 1
            ),
        },
        pid,
        call: this,
        location: op.location,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(addr: usize, size: usize) -> RegOp {
        RegOp {
            kind: RegOpKind::Push { addr, size },
            location: None,
        }
    }
    fn pop(addr: usize, claim: Option<u64>) -> RegOp {
        RegOp {
            kind: RegOpKind::Pop { addr, claim },
            location: None,
        }
    }

    #[test]
    fn newer_slot_shadows_and_older_can_be_popped_out_of_order() {
        let mut r = Registry::new(0, 2);
        r.apply(&[&[push(100, 8)], &[push(200, 8)]]).ok().unwrap();
        r.apply(&[&[push(100, 4)], &[push(300, 4)]]).ok().unwrap();
        assert_eq!(r.lookup(100).unwrap().entry(1).addr, 300);
        // Process 1 pops its older area 200 (slot 0); process 0 names 100,
        // whose most recent slot is the newer one (slot 1): an error.
        let mut pending = Pending::default();
        assert_eq!(r.claim(100, &mut pending), Some(1));
        let e = r
            .apply(&[&[pop(100, Some(1))], &[pop(200, Some(0))]])
            .err()
            .unwrap();
        assert!(matches!(e.kind, ErrorKind::RegistrationMismatch { .. }));
        // Both name the older slot: it goes, the newer one stays.
        let mut r = Registry::new(0, 2);
        r.apply(&[&[push(100, 8), push(150, 4)], &[push(200, 8), push(300, 4)]])
            .ok()
            .unwrap();
        let mut pending = Pending::default();
        assert_eq!(r.claim(100, &mut pending), Some(0));
        r.apply(&[&[pop(100, Some(0))], &[pop(200, Some(0))]])
            .ok()
            .unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r.lookup(150).unwrap().entry(1).addr, 300);
    }

    #[test]
    fn claims_follow_the_calls_of_the_superstep() {
        let mut r = Registry::new(0, 1);
        r.apply(&[&[push(100, 8), push(100, 4)]]).ok().unwrap();
        let mut pending = Pending::default();
        // Two pops of the same address: the newer slot, then the older.
        assert_eq!(r.claim(100, &mut pending), Some(1));
        assert_eq!(r.claim(100, &mut pending), Some(0));
        assert_eq!(r.claim(100, &mut pending), None);
        // A push in the superstep, then its pop: the new slot (seq 2).
        let mut pending = Pending::default();
        r.note_push(100, &mut pending);
        assert_eq!(r.claim(100, &mut pending), Some(2));
        assert_eq!(r.claim(100, &mut pending), Some(1));
    }

    #[test]
    fn pop_removes_most_recent_and_uncovers_older() {
        let mut r = Registry::new(0, 2);
        r.apply(&[&[push(100, 8), push(100, 4)], &[push(200, 8), push(300, 4)]])
            .ok()
            .unwrap();
        r.apply(&[&[pop(100, Some(1))], &[pop(300, Some(1))]])
            .ok()
            .unwrap();
        assert_eq!(
            r.lookup(100).unwrap().entry(1),
            Entry { addr: 200, size: 8 }
        );
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn a_claim_of_a_slot_without_the_address_is_refused() {
        let mut r = Registry::new(0, 2);
        r.apply(&[&[push(100, 8), push(150, 8)], &[push(200, 8), push(300, 8)]])
            .ok()
            .unwrap();
        // Process 1 claims slot 1 for address 200, which is in slot 0.
        let e = r
            .apply(&[&[pop(150, Some(1))], &[pop(200, Some(1))]])
            .err()
            .unwrap();
        assert_eq!(e.pid, 1);
        assert!(matches!(e.kind, ErrorKind::NotRegistered { addr: 200 }));
    }

    #[test]
    fn null_pops_follow_the_slot_the_others_name() {
        // Process 0 registers two areas, process 1 NULL in both slots; the
        // older slot is popped first, then the newer.
        let mut r = Registry::new(1, 2);
        r.apply(&[&[push(100, 8), push(200, 8)], &[push(0, 0), push(0, 0)]])
            .ok()
            .unwrap();
        r.apply(&[&[pop(100, Some(0))], &[pop(0, None)]])
            .ok()
            .unwrap();
        assert_eq!(r.len(), 1);
        // Popping NULL where an area was registered is a mismatch.
        let mut r = Registry::new(0, 2);
        r.apply(&[&[push(100, 8)], &[push(300, 8)]]).ok().unwrap();
        let e = r
            .apply(&[&[pop(100, Some(0))], &[pop(0, None)]])
            .err()
            .unwrap();
        assert_eq!(e.pid, 1);
        assert!(matches!(e.kind, ErrorKind::RegistrationMismatch { .. }));
    }

    #[test]
    fn null_registrations_are_not_looked_up_but_can_be_popped() {
        let mut r = Registry::new(0, 2);
        r.apply(&[&[push(0, 0)], &[push(200, 8)]]).ok().unwrap();
        assert!(r.lookup(0).is_none());
        r.apply(&[&[pop(0, None)], &[pop(200, Some(0))]])
            .ok()
            .unwrap();
        assert_eq!(r.len(), 0);
    }
}
