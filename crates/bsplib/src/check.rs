//! Checking mode (issue 15): `bsprun --check`, `BSPLIB_CHECK=1`,
//! [`Runtime::check`](crate::Runtime::check). The design is in
//! `CHECKING.md` beside this file.
//!
//! Three checks, all off by default:
//!
//! - **check-syncs**: every process's plain sync ending a superstep is at
//!   the same `file:line` ([`ErrorKind::SyncMismatch`]);
//! - **overlapping puts**: puts (and hpputs) from different processes that
//!   write overlapping bytes of one area in one superstep
//!   ([`ErrorKind::OverlappingPuts`]);
//! - **hp regions changed**: an hpput's source or an hpget's destination
//!   changed by this process between the call and its sync
//!   ([`ErrorKind::HpRegionChanged`]).
//!
//! Off, the cost is the one branch of `Process::sync` (shared with the
//! profiler) and one predicted branch per put, hpput and hpget call.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, ErrorKind};
use crate::mem::Shape;
use crate::process::extension::{Extension, AROUND_SYNC, NOTES};
use crate::process::{Loc, Process};

/// Whether `BSPLIB_CHECK` turns the checking mode on (set, not empty,
/// not `0`).
pub(crate) fn from_env() -> bool {
    std::env::var_os("BSPLIB_CHECK").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The first word of a checking side record (a collective record,
/// `bsmp::COLL_RECORD`): the puts a sender addressed to the receiver this
/// superstep, with their lines. Distinct from the collectives' markers.
const PUTS: u64 = 0x4348_4b50_5554_5331; // "CHKPUTS1"

/// In a side record's slot word: the note is an accumulate's (combined in
/// a defined order, so not compared for overlaps; fence hints' `NO_PUT`
/// check reads it, `hints.rs`).
pub(crate) const ACCUMULATE_NOTE: u64 = 1 << 63;

/// Words per process and parity in the table of sync locations.
const SLOT_WORDS: usize = 32;
/// Header words of a slot: kind, hash, line, file length.
const SLOT_HEAD: usize = 4;
/// Bytes of a file name kept in a slot.
const SLOT_FILE: usize = (SLOT_WORDS - SLOT_HEAD) * 8;

/// Kinds of a sync, in the table.
const UNCHECKED: u64 = 0;
const CHECKED: u64 = 1;

/// At most this many byte ranges are compared per process and superstep
/// (strided puts expand into their blocks); beyond, the overlap check of
/// that superstep is skipped (`CHECKING.md`).
const MAX_RANGES: usize = 1 << 20;

/// The checking mode's set-up for one run, in its `World`: on engines
/// where the processes share memory (`serial`, `threads`, `processes`), a
/// shared table where each process writes the location of the sync that
/// ends its superstep (two slots per process, by the superstep's parity).
/// On `mpi` the location travels in barrier A's collective check instead.
pub(crate) struct Setup {
    table: Option<Table>,
}

impl Setup {
    /// The set-up of a run of `nprocs` processes; `shared`: the engine's
    /// processes see one shared mapping made now (before any fork).
    pub(crate) fn new(nprocs: usize, shared: bool) -> Result<Self, String> {
        Ok(Setup {
            table: if shared {
                Some(Table::new(nprocs)?)
            } else {
                None
            },
        })
    }
}

/// `nprocs * 2` slots of [`SLOT_WORDS`] atomic words, in a shared anonymous
/// mapping (inherited by forked processes).
struct Table {
    ptr: std::ptr::NonNull<AtomicU64>,
    words: usize,
}

// SAFETY: the mapping is only accessed through atomics.
unsafe impl Send for Table {}
// SAFETY: as above.
unsafe impl Sync for Table {}

impl Table {
    fn new(nprocs: usize) -> Result<Self, String> {
        let words = nprocs * 2 * SLOT_WORDS;
        let len = words * 8;
        // SAFETY: a fresh mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "mmap of the checking mode's table ({len} bytes): {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Table {
            ptr: std::ptr::NonNull::new(p.cast()).ok_or("mmap returned null")?,
            words,
        })
    }

    fn slot(&self, pid: usize, parity: usize) -> &[AtomicU64] {
        let at = (pid * 2 + parity) * SLOT_WORDS;
        assert!(at + SLOT_WORDS <= self.words);
        // SAFETY: in bounds (checked), aligned, zero-initialised atomics
        // that live as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(at), SLOT_WORDS) }
    }

    fn write(&self, pid: usize, parity: usize, place: Option<&Place>) {
        let s = self.slot(pid, parity);
        let Some(place) = place else {
            s[0].store(UNCHECKED, Ordering::Relaxed);
            return;
        };
        s[0].store(CHECKED, Ordering::Relaxed);
        s[1].store(place.hash, Ordering::Relaxed);
        s[2].store(u64::from(place.line), Ordering::Relaxed);
        let file = &place.file.as_bytes()[..place.file.len().min(SLOT_FILE)];
        s[3].store(file.len() as u64, Ordering::Relaxed);
        for (i, chunk) in file.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            s[SLOT_HEAD + i].store(u64::from_ne_bytes(w), Ordering::Relaxed);
        }
    }

    /// `Some((hash, "file:line"))` for a checked sync.
    fn read(&self, pid: usize, parity: usize) -> Option<(u64, String)> {
        let s = self.slot(pid, parity);
        if s[0].load(Ordering::Relaxed) != CHECKED {
            return None;
        }
        let hash = s[1].load(Ordering::Relaxed);
        let line = s[2].load(Ordering::Relaxed);
        let len = (s[3].load(Ordering::Relaxed) as usize).min(SLOT_FILE);
        let mut bytes = Vec::with_capacity(len + 8);
        for w in &s[SLOT_HEAD..SLOT_HEAD + len.div_ceil(8)] {
            bytes.extend_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
        }
        bytes.truncate(len);
        Some((hash, at_text(&String::from_utf8_lossy(&bytes), line)))
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        // SAFETY: the mapping made by `new`; nothing borrowed outlives it.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.words * 8) };
    }
}

/// `file:line`, or a phrase for an unknown location.
fn at_text(file: &str, line: u64) -> String {
    if file.is_empty() {
        "an unknown location".into()
    } else {
        format!("{file}:{line}")
    }
}

/// `file:line`, or a phrase for an unknown location.
fn place_text(loc: Loc) -> String {
    loc.map_or_else(
        || "an unknown location".into(),
        |l| at_text(l.file(), u64::from(l.line())),
    )
}

/// A sync's location as the check compares it: file and line (not the
/// column: Rust gives one, C does not).
struct Place {
    hash: u64,
    file: &'static str,
    line: u32,
}

impl Place {
    fn of(loc: Loc) -> Place {
        let (file, line) = loc.map_or(("", 0), |l| (l.file(), l.line()));
        Place {
            hash: hash_place(file, line),
            file,
            line,
        }
    }
}

/// FNV-1a of the file name and the line; never 0 (0 means "not checked").
fn hash_place(file: &str, line: u32) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &b in file.as_bytes().iter().chain(&line.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h | 1
}

/// Hash of `len` bytes from `p` (the hp regions' check).
///
/// # Safety
///
/// `p` must be readable for `len` bytes.
unsafe fn hash_bytes(p: *const u8, len: usize) -> u64 {
    // SAFETY: the caller's contract.
    let bytes = unsafe { std::slice::from_raw_parts(p, len) };
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_ne_bytes(w.try_into().unwrap_or_default());
        h = (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A put noted at its call: where it writes on `dest`, and where it came
/// from.
struct PutNote {
    dest: usize,
    slot: u64,
    offset: usize,
    shape: Shape,
    call: &'static str,
    loc: Loc,
}

/// An hpput source or hpget destination, hashed at the call.
struct HpNote {
    call: &'static str,
    ptr: *const u8,
    len: usize,
    hash: u64,
    loc: Loc,
}

/// One process's checking state.
#[derive(Default)]
pub(crate) struct Checker {
    puts: Vec<PutNote>,
    hp: Vec<HpNote>,
    /// `mpi`: the location hash of the sync in progress (0: not a checked
    /// sync), which barrier A's collective check carries.
    pub(crate) sync_hash: u64,
    /// The next sync is the library's own (a collective's inner sync).
    pub(crate) internal: bool,
    /// This process's live areas as the last sync left them: `(seq,
    /// address, size, hash)`, for the `NO_STORE` hint
    /// ([`Process::check_no_store`]).
    stored: Vec<(u64, usize, usize, u64)>,
    /// The library wrote areas of this process after the last sync
    /// (a collective's result): the `NO_STORE` check has nothing to
    /// compare with.
    pub(crate) unknown: bool,
}

/// Installs the checking mode's state in a new process of a checking run.
pub(crate) fn install(p: &mut Process) {
    if p.world.ext::<Setup>().is_some() {
        p.install(Checker::default());
    }
}

/// The checking mode is an extension of the process (`extension.rs`): it
/// takes part around every sync and notes every put and hp region.
impl crate::process::extension::Slotted for Checker {
    const KEY: usize = 5;
}

impl Extension for Checker {
    fn wants(&self) -> u32 {
        AROUND_SYNC | NOTES
    }

    /// Before the sync: the hp regions, this sync's location, the side
    /// records of our puts.
    fn before_sync(&mut self, p: &mut Process, loc: Loc) -> Result<(), Error> {
        let result = p.check_before(self, loc);
        self.puts.clear();
        self.hp.clear();
        if result.is_err() {
            p.poisoned = true;
            p.inbox.clear();
        }
        result
    }

    /// After a sync that succeeded: the findings of the sync.
    fn after_sync(&mut self, p: &mut Process, loc: Loc, ok: bool) -> Result<(), Error> {
        if ok {
            p.check_after_sync(self, loc)
        } else {
            Ok(())
        }
    }

    /// Notes a put (or hpput) to `dest` of `shape` bytes at `offset` of
    /// registration slot `slot`.
    fn note_put(
        &mut self,
        dest: usize,
        slot: u64,
        offset: usize,
        shape: Shape,
        call: &'static str,
        loc: Loc,
    ) {
        self.puts.push(PutNote {
            dest,
            slot,
            offset,
            shape,
            call,
            loc,
        });
    }

    /// Hashes an hpput's source or an hpget's destination (`len` bytes
    /// from `ptr`) at the call; the sync hashes it again.
    unsafe fn note_hp(&mut self, call: &'static str, ptr: *const u8, len: usize, loc: Loc) {
        // SAFETY: the caller's contract.
        let hash = unsafe { hash_bytes(ptr, len) };
        self.hp.push(HpNote {
            call,
            ptr,
            len,
            hash,
            loc,
        });
    }
}

impl Process {
    /// Whether this process runs in the checking mode (false inside the
    /// checking mode's own hooks, which need not ask).
    #[inline]
    pub(crate) fn checking(&self) -> bool {
        self.watch & NOTES != 0 && self.ext::<Checker>().is_some()
    }

    /// `mpi`: the location hash of the sync in progress for barrier A's
    /// check (0 when the run does not check, or the sync is not checked).
    #[inline]
    pub(crate) fn check_sync_hash(&self) -> u64 {
        self.ext::<Checker>().map_or(0, |c| c.sync_hash)
    }

    /// Checking mode: the next sync is the library's own (a collective's
    /// inner sync), whose location is not compared.
    pub(crate) fn check_internal_sync(&mut self) {
        self.if_ext(|c: &mut Checker, _| c.internal = true);
    }

    fn check_before(&mut self, c: &mut Checker, loc: Loc) -> Result<(), Error> {
        if self.poisoned || self.world.is_stopped() {
            // The sync fails saying so.
            return Ok(());
        }
        for h in &c.hp {
            // SAFETY: `bsp_hpput` / `bsp_hpget`'s contract keeps the region
            // readable until the end of this sync.
            if unsafe { hash_bytes(h.ptr, h.len) } != h.hash {
                let what = if h.call == "bsp_hpget" {
                    "destination"
                } else {
                    "source"
                };
                return Err(self.fail(
                    ErrorKind::HpRegionChanged {
                        call: self.call_name(h.call),
                        what,
                        len: h.len,
                        places: Box::new([place_text(h.loc), place_text(loc)]),
                    },
                    h.call,
                    h.loc,
                ));
            }
        }
        // This sync's location: only a program's own plain syncs are
        // compared (collectives are checked by their own descriptors;
        // `am_init`, `am_term`, LAPI calls and a collective's inner syncs
        // are the library's).
        let checked = self.sync_desc.is_none()
            && self.ext.am_mut().switch.is_none()
            && self.sync_name.is_none()
            && !std::mem::take(&mut c.internal);
        let place = checked.then(|| Place::of(loc));
        c.sync_hash = place.as_ref().map_or(0, |p| p.hash);
        if let Some(table) = self.world.ext::<Setup>().and_then(|s| s.table.as_ref()) {
            table.write(self.pid, (self.superstep & 1) as usize, place.as_ref());
        }
        // The side records: to each destination, the puts we addressed to
        // it, with their lines.
        if c.puts.is_empty() {
            return Ok(());
        }
        c.puts.sort_by_key(|n| n.dest);
        let mut body: Vec<u8> = Vec::new();
        let mut i = 0;
        while i < c.puts.len() {
            let dest = c.puts[i].dest;
            body.clear();
            while i < c.puts.len() && c.puts[i].dest == dest {
                let n = &c.puts[i];
                let (file, line) = n.loc.map_or(("", 0), |l| (l.file(), l.line()));
                let call = n.call.as_bytes();
                for w in [
                    n.slot,
                    n.offset as u64,
                    n.shape.block as u64,
                    n.shape.stride as u64,
                    n.shape.count as u64,
                    u64::from(line),
                    file.len() as u64,
                    call.len() as u64,
                ] {
                    body.extend_from_slice(&w.to_ne_bytes());
                }
                body.extend_from_slice(file.as_bytes());
                body.extend_from_slice(call);
                i += 1;
            }
            self.coll_send(dest, PUTS, &body, "bsp_sync", loc)?;
        }
        Ok(())
    }

    /// After a sync that succeeded: the locations of every process's
    /// sync (shared memory), and the puts addressed to us.
    fn check_after_sync(&mut self, c: &mut Checker, loc: Loc) -> Result<(), Error> {
        let ended = self.superstep.saturating_sub(1);
        if let Some(table) = self.world.ext::<Setup>().and_then(|s| s.table.as_ref()) {
            let parity = (ended & 1) as usize;
            let mut first: Option<(usize, u64)> = None;
            for q in 0..self.nprocs {
                let Some((hash, _)) = table.read(q, parity) else {
                    continue;
                };
                match first {
                    None => first = Some((q, hash)),
                    Some((a, h)) if h != hash => {
                        let at = |pid| table.read(pid, parity).map(|(_, at)| at);
                        let kind = ErrorKind::SyncMismatch {
                            syncs: Box::new([
                                (a, at(a).unwrap_or_default()),
                                (q, at(q).unwrap_or_default()),
                            ]),
                        };
                        return Err(self.check_failed(kind, ended, loc));
                    }
                    Some(_) => {}
                }
            }
        }
        if let Some(kind) = self.overlapping_puts() {
            return Err(self.check_failed(kind, ended, loc));
        }
        self.check_snapshot(c);
        Ok(())
    }

    /// Hashes this process's live areas as the sync that just ended left
    /// them (every write of the library into them for that superstep is
    /// done), for a later `NO_STORE` hint.
    fn check_snapshot(&mut self, c: &mut Checker) {
        c.stored.clear();
        c.unknown = false;
        for (seq, addr, size) in self.reg.mine() {
            // SAFETY: a live registration of this process: `size` bytes at
            // `addr` that the program keeps readable while registered (the
            // contract of `bsp_push_reg`; a Rust `Area` held by the
            // registration's keepalive); read inside a library call.
            let hash = unsafe { hash_bytes(std::ptr::with_exposed_provenance(addr), size) };
            c.stored.push((seq, addr, size, hash));
        }
        self.ext.epochs_mut().wrote.clear();
        self.ext.epochs_mut().replied = false;
        self.ext.epochs_mut().track = true;
        if let Some(ctx) = self.ext.am_mut().ctx.as_mut() {
            ctx.landed = false;
        }
    }

    /// Checking mode: the library writes this process's memory after a
    /// sync (a collective's result): the next `NO_STORE` hint has nothing
    /// to compare with.
    #[inline]
    pub(crate) fn check_library_wrote(&mut self) {
        if self.watch & NOTES != 0 {
            self.if_ext(|c: &mut Checker, _| c.unknown = true);
        }
    }

    /// The `NO_STORE` hint (checking mode, before the hinted sync): the
    /// first of this process's areas whose bytes changed since the last
    /// sync although no record, message or collective of the library
    /// wrote it (those areas are not compared: the check cannot tell
    /// their writes from local stores), described.
    pub(crate) fn check_no_store(&self) -> Option<String> {
        let c = self.ext::<Checker>()?;
        if c.unknown
            || self.ext.epochs().replied
            || self.ext.am().ctx.as_ref().is_some_and(|ctx| ctx.landed)
        {
            return None;
        }
        // The bytes records wrote: every area that overlaps them is left
        // alone (one array may be registered twice, or inside another).
        let written: Vec<(usize, usize)> = c
            .stored
            .iter()
            .filter(|s| self.ext.epochs().wrote.contains(&s.0))
            .map(|s| (s.1, s.1 + s.2))
            .collect();
        for &(seq, addr, size, hash) in &c.stored {
            if written.iter().any(|&(a, b)| addr < b && a < addr + size)
                || self
                    .reg
                    .mine()
                    .all(|(s, a, n)| (s, a, n) != (seq, addr, size))
            {
                continue;
            }
            // SAFETY: still registered (checked just above), as in
            // `check_snapshot`.
            if unsafe { hash_bytes(std::ptr::with_exposed_provenance(addr), size) } != hash {
                return Some(format!(
                    "is false: local code wrote this process's registered area of registration \
                     slot {seq} ({size} bytes) after the last sync"
                ));
            }
        }
        None
    }

    /// Fails the run with a finding of the sync that ended superstep
    /// `ended`.
    #[cold]
    fn check_failed(&mut self, kind: ErrorKind, ended: u64, loc: Loc) -> Error {
        self.check_failed_as(kind, "bsp_sync", ended, loc)
    }

    /// [`check_failed`](Self::check_failed) naming the sync `call`.
    #[cold]
    pub(crate) fn check_failed_as(
        &mut self,
        kind: ErrorKind,
        call: &'static str,
        ended: u64,
        loc: Loc,
    ) -> Error {
        let err = Error::new(kind, self.call_name(call), self.pid, ended, loc);
        self.world.fail(err.clone());
        self.poisoned = true;
        self.inbox.clear();
        err
    }

    /// The first put or accumulate into our memory that the side records
    /// received in the last sync describe: its origin and `"bsp_put at
    /// file:line"` (senders in pid order, each in call order).
    pub(crate) fn check_first_put_to_me(&self) -> Option<(usize, String)> {
        let mut first: Option<(usize, String)> = None;
        for &(src, m) in &self.inbox.coll {
            if first.as_ref().is_some_and(|f| f.0 <= src) {
                continue;
            }
            // SAFETY: collective records stay readable until the next
            // sync's barrier A (`Inbox::collect`).
            let bytes = unsafe { std::slice::from_raw_parts(m.payload, m.len) };
            if bytes.get(..8) != Some(&PUTS.to_ne_bytes()[..]) {
                continue;
            }
            let word = |at: usize| {
                bytes
                    .get(at..at + 8)
                    .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
            };
            let (Some(line), Some(flen), Some(clen)) = (word(48), word(56), word(64)) else {
                continue;
            };
            let text = 72usize;
            let file = bytes.get(text..text.saturating_add(flen as usize));
            let call = bytes.get(
                text.saturating_add(flen as usize)
                    ..text
                        .saturating_add(flen as usize)
                        .saturating_add(clen as usize),
            );
            let file = file.and_then(|f| std::str::from_utf8(f).ok()).unwrap_or("");
            let call = call
                .and_then(|c| std::str::from_utf8(c).ok())
                .unwrap_or("bsp_put");
            first = Some((src, format!("{call} at {}", at_text(file, line))));
        }
        first
    }

    /// The first overlap between the puts of two different senders that
    /// the side records received in the last sync describe.
    fn overlapping_puts(&self) -> Option<ErrorKind> {
        struct Range {
            slot: u64,
            start: usize,
            end: usize,
            sender: usize,
            note: usize,
        }
        let mut ranges: Vec<Range> = Vec::new();
        let mut notes: Vec<(usize, u64, &str, &str)> = Vec::new(); // sender, line, file, call
        let mut senders = 0usize;
        let mut last_sender = usize::MAX;
        for &(src, m) in &self.inbox.coll {
            // SAFETY: collective records stay readable until the next
            // sync's barrier A (`Inbox::collect`).
            let bytes = unsafe { std::slice::from_raw_parts(m.payload, m.len) };
            if bytes.get(..8) != Some(&PUTS.to_ne_bytes()[..]) {
                continue;
            }
            if src != last_sender {
                senders += 1;
                last_sender = src;
            }
            let mut at = 8;
            let word = |at: usize| {
                bytes
                    .get(at..at + 8)
                    .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
            };
            while at < bytes.len() {
                let w: Option<Vec<u64>> = (0..8).map(|i| word(at + 8 * i)).collect();
                let Some(w) = w else { break };
                let (flen, clen) = (w[6] as usize, w[7] as usize);
                let text = at + 64;
                let Some(file) = bytes.get(text..text + flen) else {
                    break;
                };
                let Some(call) = bytes.get(text + flen..text + flen + clen) else {
                    break;
                };
                let file = std::str::from_utf8(file).unwrap_or("");
                let call = std::str::from_utf8(call).unwrap_or("bsp_put");
                if w[0] & ACCUMULATE_NOTE != 0 {
                    // Accumulates combine in a defined order.
                    at = text + flen + clen;
                    continue;
                }
                let note = notes.len();
                notes.push((src, w[5], file, call));
                let (offset, block, stride, count) =
                    (w[1] as usize, w[2] as usize, w[3] as usize, w[4] as usize);
                for k in 0..count {
                    if ranges.len() >= MAX_RANGES {
                        return None;
                    }
                    let start = offset.saturating_add(k.saturating_mul(stride));
                    ranges.push(Range {
                        slot: w[0],
                        start,
                        end: start.saturating_add(block),
                        sender: src,
                        note,
                    });
                }
                at = text + flen + clen;
            }
        }
        if senders < 2 {
            return None;
        }
        ranges.retain(|r| r.end > r.start);
        ranges.sort_by_key(|r| (r.slot, r.start, r.sender));
        // Sweep, per slot: the range reaching furthest (`best`), and the
        // one reaching furthest among the other senders' (`other`). A range
        // overlaps an earlier one of another sender exactly when it starts
        // before the end of the furthest-reaching of those.
        let mut best: Option<usize> = None;
        let mut other: Option<usize> = None;
        for (i, r) in ranges.iter().enumerate() {
            if best.is_some_and(|b| ranges[b].slot != r.slot) {
                (best, other) = (None, None);
            }
            let Some(b) = best else {
                best = Some(i);
                continue;
            };
            let rival = if ranges[b].sender != r.sender {
                Some(b)
            } else {
                other
            };
            if let Some(o) = rival.filter(|&o| r.start < ranges[o].end) {
                let p = &ranges[o];
                let (x, y) = (&notes[p.note], &notes[r.note]);
                return Some(ErrorKind::OverlappingPuts {
                    owner: self.pid,
                    slot: r.slot,
                    bytes: r.start..r.end.min(p.end),
                    puts: Box::new([
                        (x.0, format!("{} at {}", x.3, at_text(x.2, x.1))),
                        (y.0, format!("{} at {}", y.3, at_text(y.2, y.1))),
                    ]),
                });
            }
            if r.end > ranges[b].end {
                if ranges[b].sender != r.sender {
                    other = Some(b);
                }
                best = Some(i);
            } else if ranges[b].sender != r.sender && other.is_none_or(|o| r.end > ranges[o].end) {
                other = Some(i);
            }
        }
        None
    }
}
