//! One-sided synchronisation after MPI-2: post/start/complete/wait on
//! subsets of processes, and passive-target locks (`ONE_SIDED.md`,
//! sections 1.2 and 1.3; the protocol is in section 8).
//!
//! A registered area plays the role of an MPI window. The epochs travel on
//! the active-message path (`engine/README.md`): records of kind
//! `KIND_RMA` (5), taken from the inbox with the active messages' own and
//! served here, on the target's own thread, at its progress points (the
//! `&mut Bsp` calls: the epoch calls themselves, a sync's barrier, the
//! active-message waits). So one-sided mode is active-message mode
//! ([`Bsp::rma_init`]), and no view of an [`Area`] can be alive while a
//! record writes it.
//!
//! # Examples
//!
//! A ring: each process exposes its area to its left neighbour and puts
//! into its right neighbour's, and only neighbours synchronise.
//!
//! ```
//! let r = bsplib::run(3, |bsp| {
//!     let (me, p) = (bsp.pid(), bsp.nprocs());
//!     let (left, right) = ((me + p - 1) % p, (me + 1) % p);
//!     let x = bsplib::Area::<u64>::new(bsp, 1);
//!     bsp.push_reg(&x)?;
//!     bsp.rma_init()?; // a sync: the registration takes effect too
//!     let mut e = bsp.epoch(&x, &[left], &[right])?;
//!     e.put(right, 0, &[me as u64 * 10])?;
//!     e.wait()?; // my access epoch completed, my exposure epoch done
//!     let got = x.as_slice(bsp)[0];
//!     bsp.rma_term()?;
//!     Ok(got)
//! })?;
//! assert_eq!(r, vec![20, 0, 10]);
//! # Ok::<(), bsplib::Error>(())
//! ```

use std::collections::HashMap;

use bytemuck::Pod;

use crate::am::{Context, Dispatch};
use crate::area::Area;
use crate::bsp::{pid_arg, Bsp};
use crate::engine::board::State;
use crate::engine::World;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::holds::{area_key, Held as Counted};
use crate::process::{Keepalive, Loc, Process};
use crate::registration::Registry;
use crate::rma::{ElemType, Element, Op};
use crate::superstep::own_range;
use crate::window::Window;

/// The record kind of the epochs on the active-message path (the kinds of
/// `am.rs` are 1 to 3).
pub(crate) const KIND_RMA: u64 = 5;

// What a record asks, in the high half of its second word. (Posts and
// locks are no records: they are the control line's counters and lock
// word, `window/control.rs`.)
/// Origin to target: the access epoch `[slot]` is complete.
const COMPLETE: u64 = 2;
/// Origin to target: `[slot]`, the lock epoch ends: answer once every
/// transfer before this is done.
const UNLOCK: u64 = 5;
/// Target to origin: `[slot]`, every transfer of the lock epoch done (the
/// origin then releases the lock word).
const UNLOCKED: u64 = 6;
/// `[slot][offset][len][line][payload]`.
const PUT: u64 = 7;
/// `[slot][offset][len][type | op << 8 | line << 32][payload]`.
const ACC: u64 = 8;
/// `[slot][offset][len][id]`: read and reply.
const GET: u64 = 9;
/// In the slot word of a put, accumulate or get: the transfer belongs to
/// a lock epoch (else to an access epoch, which the target checks against
/// its exposure).
const UNDER_LOCK: u64 = 1 << 63;
/// Target to origin: `[id][len][payload]`.
const REPLY: u64 = 10;
/// Origin to target: `[window][offset][len][type | op << 8 | line << 32]
/// [payload]`, an accumulate of a window's access epoch (bytes at
/// `offset` of the target's memory of window `window`, by the window's
/// identity, the same on every process), kept and combined at the
/// target's `wait` in pid order, as an area's.
const WACC: u64 = 12;
/// Origin to target: `[window]`, this origin completed its access epoch
/// of the window (after its accumulates), in one-sided mode.
const WDONE: u64 = 13;
/// Origin to target, checking mode: `[window][offset][len][line]`, a put
/// of a window's access epoch (done already, straight into memory), for
/// the target's overlap check at `wait`.
const WNOTE: u64 = 14;
/// Records gathered for one target: the payload is whole records, served
/// in order (an origin sends an epoch's records together: one inbox
/// append and one wake-up, not one per record).
const BATCH: u64 = 11;

/// An origin sends what it gathered for a target once this much is there,
/// without waiting for the epoch call that would send it.
const BATCH_BYTES: usize = 256 << 10;

/// Transfers travel in pieces of at most this many bytes (each a record
/// that an inbox holds many of).
const CHUNK: usize = 64 << 10;

/// A lock's kind ([`Bsp::lock`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    /// One holder at a time (MPI's `MPI_LOCK_EXCLUSIVE`).
    Exclusive,
    /// Any number of holders together, while no exclusive holder
    /// (`MPI_LOCK_SHARED`).
    Shared,
}

/// An access epoch this process opened (`start`).
struct Access {
    slot: u64,
    targets: Vec<usize>,
    loc: Loc,
    /// The operator and type of the accumulates to each target so far.
    accs: Vec<(usize, u16, Loc)>,
}

/// A lock this process holds.
struct Held {
    pid: usize,
    slot: u64,
    exclusive: bool,
    unlocking: bool,
    loc: Loc,
    acc: Option<(u16, Loc)>,
}

/// Checking mode: bytes written in an exposure epoch, `(offset, len,
/// origin, accumulate, line)`.
type Write = (usize, usize, usize, bool, u32);

/// An exposure epoch this process opened (`post`).
struct Exposure {
    slot: u64,
    origins: Vec<usize>,
    done: Vec<bool>,
    /// Accumulate records of the epoch: `(origin, record)`, combined at
    /// `wait`, origins in pid order, each origin's in issue order.
    accs: Vec<(usize, Vec<u8>)>,
    /// The first accumulate's `(origin, desc, line)`.
    first: Option<(usize, u16, u32)>,
    loc: Loc,
    /// Checking mode: the bytes each origin wrote, `(offset, len, origin,
    /// accumulate, line)`, checked for conflicts at `wait`.
    writes: Option<Vec<Write>>,
}

/// What arrived for a window's exposure epoch: the accumulates (origin,
/// record), the first one's `(origin, desc, line)`, and the origins whose
/// completion record came.
#[derive(Default)]
struct WinArrivals {
    accs: Vec<(usize, Vec<u8>)>,
    first: Option<(usize, u16, u32)>,
    done: Vec<usize>,
    /// Checking mode: the epoch's puts, `(offset, len, origin, false,
    /// line)`.
    puts: Vec<Write>,
}

/// A get of an epoch, waiting for its reply.
struct PendingGet {
    dst: usize,
    len: usize,
    pid: usize,
    slot: u64,
    _keep: Option<Keepalive>,
}

/// The one-sided state of a process: its open epochs, its gets in
/// flight, and the control lines of the areas it used.
#[derive(Default)]
pub(crate) struct Epochs {
    access: Vec<Access>,
    locks: Vec<Held>,
    exposures: Vec<Exposure>,
    gets: HashMap<u64, PendingGet>,
    next_id: u64,
    /// The control lines this process used, by line: their lock words and
    /// post counters (and this process's tallies of its starts).
    lines: HashMap<u64, Window<u8>>,
    /// Records gathered per target, each buffer starting with room for
    /// the batch's 16-byte header; sent by `Process::rma_flush`.
    outbox: Vec<Vec<u8>>,
    /// The targets whose outbox holds records, in first-use order.
    dirty: Vec<usize>,
    /// What arrived for this process's window exposure epochs in
    /// one-sided mode, by window identity.
    wins: HashMap<u64, WinArrivals>,
    /// Checking mode: the slots of this process that records wrote since
    /// the last sync (the `NO_STORE` check cannot tell their bytes from
    /// local stores), and whether a get's reply wrote this process's
    /// memory (anywhere); kept only once `track` is set (the checking
    /// mode's first snapshot).
    pub(crate) wrote: Vec<u64>,
    pub(crate) replied: bool,
    pub(crate) track: bool,
}

impl Epochs {
    /// Whether transfers may belong to an epoch (the put and get paths ask
    /// this first: one branch when no epoch is open).
    #[inline]
    pub(crate) fn routing(&self) -> bool {
        !self.access.is_empty() || !self.locks.is_empty()
    }
}

fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// A record: `[len | KIND_RMA << 32 | parity << 48][me | what << 32]`,
/// then `words`, then `payload` padded to 8.
fn record(me: usize, superstep: u64, what: u64, words: &[u64], payload: &[u8]) -> Vec<u8> {
    let len = 16 + words.len() * 8 + pad8(payload.len());
    let mut r = Vec::with_capacity(len);
    r.extend_from_slice(&(len as u64 | KIND_RMA << 32 | (superstep & 1) << 48).to_ne_bytes());
    r.extend_from_slice(&(me as u64 | what << 32).to_ne_bytes());
    for w in words {
        r.extend_from_slice(&w.to_ne_bytes());
    }
    r.extend_from_slice(payload);
    r.resize(len, 0);
    r
}

fn invalid(sender: usize, detail: String) -> Dispatch {
    Dispatch::Target(ErrorKind::InvalidRecord {
        what: "one-sided epoch",
        sender,
        detail,
    })
}

/// Serves the epoch records the last dispatch took from the inbox (a
/// progress point of this process): writes puts and lock-epoch
/// accumulates, answers gets and unlocks, keeps exposure-epoch
/// accumulates (of areas and windows) for `wait`, and notes completions
/// and replies for this process's own epochs. Every range is resolved
/// and checked in this process's own table. (Locks and posts are no
/// records: the control lines' words, `window/control.rs`.)
pub(crate) fn serve(
    ctx: &mut Context,
    ep: &mut Epochs,
    reg: &Registry,
    world: &World,
) -> Result<(), Dispatch> {
    if ctx.rma_in.is_empty() {
        return Ok(());
    }
    let buf = std::mem::take(&mut ctx.rma_in);
    let r = serve_all(ctx, ep, reg, world, &buf);
    if ctx.rma_in.is_empty() {
        let mut buf = buf;
        buf.clear();
        ctx.rma_in = buf;
    }
    r
}

fn serve_all(
    ctx: &mut Context,
    ep: &mut Epochs,
    reg: &Registry,
    world: &World,
    bytes: &[u8],
) -> Result<(), Dispatch> {
    let me = ctx.me();
    let word = |at: usize| u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
    let mut at = 0;
    while at + 16 <= bytes.len() {
        let len = word(at) as u32 as usize;
        let from = word(at + 8) as u32 as usize;
        let what = word(at + 8) >> 32;
        let rec = &bytes[at..at + len.min(bytes.len() - at)];
        at += len.max(8);
        let w = |i: usize| {
            rec.get(16 + 8 * i..24 + 8 * i)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
        };
        let short = || invalid(from, "is cut short".into());
        if what == BATCH {
            serve_all(ctx, ep, reg, world, &rec[16..])?;
            continue;
        }
        let word0 = w(0).ok_or_else(short)?;
        let (slot, locked) = (word0 & !UNDER_LOCK, word0 & UNDER_LOCK != 0);
        let reply = |ctx: &mut Context, to: usize, what: u64, words: &[u64], payload: &[u8]| {
            let r = record(me, ctx.epoch, what, words, payload);
            ctx.post(world, to, r).map_err(Dispatch::Interrupted)
        };
        match what {
            COMPLETE => {
                let e = ep.exposures.iter_mut().find(|e| e.slot == slot);
                let i = e
                    .as_ref()
                    .and_then(|e| e.origins.iter().position(|&q| q == from));
                match (e, i) {
                    (Some(e), Some(i)) if !e.done[i] => e.done[i] = true,
                    _ => {
                        return Err(invalid(
                            from,
                            format!(
                                "completes an access epoch of registration slot {slot} that no \
                                 exposure epoch of this process admits"
                            ),
                        ))
                    }
                }
            }
            // Records come in order from each origin: every transfer of
            // its lock epoch is done here.
            UNLOCK => reply(ctx, from, UNLOCKED, &[slot], &[])?,
            UNLOCKED => {
                let h = ep
                    .locks
                    .iter_mut()
                    .find(|h| h.pid == from && h.slot == slot && h.unlocking);
                match h {
                    Some(h) => h.unlocking = false,
                    None => return Err(invalid(from, "answers no unlock".into())),
                }
            }
            PUT | ACC | GET => {
                let exposed = !locked
                    && ep.exposures.iter().any(|e| {
                        e.slot == slot
                            && e.origins
                                .iter()
                                .zip(&e.done)
                                .any(|(&q, &done)| q == from && !done)
                    });
                if !locked && !exposed {
                    return Err(invalid(
                        from,
                        format!(
                            "accesses registration slot {slot} outside any epoch this process \
                             granted it"
                        ),
                    ));
                }
                let offset = w(1).ok_or_else(short)? as usize;
                let n = w(2).ok_or_else(short)? as usize;
                match what {
                    PUT => {
                        let line = w(3).ok_or_else(short)? as u32;
                        let src = rec.get(48..).and_then(|r| r.get(..n)).ok_or_else(short)?;
                        if !locked {
                            note_write(ep, slot, (offset, n, from, false, line));
                        }
                        let dst = own_range(reg, "put", from, slot, offset, n)
                            .map_err(Dispatch::Target)?;
                        note_wrote(ep, slot);
                        // SAFETY: `dst` is `n` bytes this process registered,
                        // checked against its own table; this process is in
                        // a progress point (a `&mut Bsp` call), so no view
                        // of the area is alive, and nobody else writes it.
                        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, n) };
                    }
                    ACC => {
                        let d = w(3).ok_or_else(short)?;
                        rec.get(48..).and_then(|r| r.get(..n)).ok_or_else(short)?;
                        let (ty, op) = check_acc(from, d, n)?;
                        if locked {
                            note_wrote(ep, slot);
                            apply_acc(reg, from, slot, offset, n, ty, op, &rec[48..48 + n])?;
                        } else if let Some(e) = ep.exposures.iter_mut().find(|e| e.slot == slot) {
                            let desc = d as u16;
                            match e.first {
                                None => e.first = Some((from, desc, (d >> 32) as u32)),
                                Some((q, first, line)) if first != desc => {
                                    return Err(Dispatch::Target(ErrorKind::AccumulateMismatch {
                                        detail: format!(
                                            "process {from} (line {}) accumulates with {} into \
                                             registration slot {slot} of this process, into \
                                             which process {q} (line {line}) accumulates with \
                                             {} in the same exposure epoch",
                                            d >> 32,
                                            crate::rma::describe(desc),
                                            crate::rma::describe(first),
                                        ),
                                    }))
                                }
                                Some(_) => {}
                            }
                            e.accs.push((from, rec.to_vec()));
                            let line = (d >> 32) as u32;
                            note_write(ep, slot, (offset, n, from, true, line));
                        }
                    }
                    _ => {
                        let id = w(3).ok_or_else(short)?;
                        let src = own_range(reg, "get", from, slot, offset, n)
                            .map_err(Dispatch::Target)?;
                        // SAFETY: `n` bytes this process registered, checked
                        // against its own table, not written meanwhile.
                        let data = unsafe { std::slice::from_raw_parts(src.cast_const(), n) };
                        reply(ctx, from, REPLY, &[slot, id, n as u64], data)?;
                    }
                }
            }
            WACC => {
                let n = w(2).ok_or_else(short)? as usize;
                let d = w(3).ok_or_else(short)?;
                rec.get(48..).and_then(|r| r.get(..n)).ok_or_else(short)?;
                check_acc(from, d, n)?;
                let a = ep.wins.entry(slot).or_default();
                let (desc, line) = (d as u16, (d >> 32) as u32);
                match a.first {
                    None => a.first = Some((from, desc, line)),
                    Some((q, first, at)) if first != desc => {
                        return Err(Dispatch::Target(ErrorKind::AccumulateMismatch {
                            detail: format!(
                                "process {from} (line {line}) accumulates with {} into this \
                                 process's memory of a window, into which process {q} (line \
                                 {at}) accumulates with {} in the same exposure epoch",
                                crate::rma::describe(desc),
                                crate::rma::describe(first),
                            ),
                        }))
                    }
                    Some(_) => {}
                }
                a.accs.push((from, rec.to_vec()));
            }
            WDONE => ep.wins.entry(slot).or_default().done.push(from),
            WNOTE => {
                let (off, n) = (w(1).ok_or_else(short)?, w(2).ok_or_else(short)?);
                let line = w(3).ok_or_else(short)? as u32;
                let a = ep.wins.entry(slot).or_default();
                a.puts.push((off as usize, n as usize, from, false, line));
            }
            REPLY => {
                let id = w(1).ok_or_else(short)?;
                let n = w(2).ok_or_else(short)? as usize;
                let data = rec.get(40..).and_then(|r| r.get(..n)).ok_or_else(short)?;
                match ep.gets.remove(&id) {
                    Some(g) if g.len == n && g.pid == from => {
                        ep.replied = true;
                        // SAFETY: the destination of a get of ours, `n`
                        // bytes the caller of the get vouched for (or a
                        // Rust area kept alive by `_keep`), written only
                        // here, in a progress point.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                data.as_ptr(),
                                std::ptr::with_exposed_provenance_mut::<u8>(g.dst),
                                n,
                            )
                        };
                    }
                    _ => return Err(invalid(from, format!("replies to no get ({id})"))),
                }
            }
            k => return Err(invalid(from, format!("asks an unknown thing ({k})"))),
        }
    }
    Ok(())
}

/// Notes that records wrote into `slot` (once: at most one entry per
/// slot until the checking mode's next snapshot clears them).
fn note_wrote(ep: &mut Epochs, slot: u64) {
    if ep.track && !ep.wrote.contains(&slot) {
        ep.wrote.push(slot);
    }
}

/// Checking mode: notes bytes written into `slot` in its exposure epoch.
fn note_write(ep: &mut Epochs, slot: u64, w: Write) {
    if let Some(e) = ep.exposures.iter_mut().find(|e| e.slot == slot) {
        if let Some(writes) = e.writes.as_mut() {
            writes.push(w);
        }
    }
}

/// Checking mode, at `wait`: the first conflict among an exposure epoch's
/// writes: a put and an accumulate of one byte (whatever the origins), or
/// puts of one byte from two origins (whose order is undefined).
fn conflict(owner: usize, slot: u64, mut writes: Vec<Write>) -> Option<ErrorKind> {
    writes.sort_unstable_by_key(|w| w.0);
    let mut active: Vec<Write> = Vec::new();
    for w in writes.into_iter().filter(|w| w.1 > 0) {
        active.retain(|a| a.0 + a.1 > w.0);
        let clash = active.iter().find(|a| a.3 != w.3 || (!a.3 && a.2 != w.2));
        if let Some(a) = clash {
            let name = |x: &Write| {
                let call = match (x.3, slot == u64::MAX) {
                    (true, false) => "bsp_accumulate",
                    (false, false) => "bsp_put",
                    (true, true) => "window accumulate",
                    (false, true) => "window put",
                };
                (x.2, format!("{call} (line {}) in an epoch", x.4))
            };
            return Some(ErrorKind::OverlappingPuts {
                owner,
                slot,
                bytes: w.0..(a.0 + a.1).min(w.0 + w.1),
                puts: Box::new([name(a), name(&w)]),
            });
        }
        active.push(w);
    }
    None
}

/// An accumulate record's type and operator, checked.
fn check_acc(from: usize, d: u64, n: usize) -> Result<(ElemType, Op), Dispatch> {
    let ty = ElemType::from_id((d & 0xff) as i64);
    let op = Op::from_id((d >> 8 & 0xff) as i64);
    match (ty, op) {
        (Some(ty), Some(op)) if op.is_defined_on(ty) && n % ty.size() == 0 => Ok((ty, op)),
        _ => Err(invalid(
            from,
            format!(
                "names element type and operator {:#x}, which are not a valid pair",
                d & 0xffff
            ),
        )),
    }
}

/// Combines `n` bytes of `src` into this process's slot.
#[allow(clippy::too_many_arguments)]
fn apply_acc(
    reg: &Registry,
    from: usize,
    slot: u64,
    offset: usize,
    n: usize,
    ty: ElemType,
    op: Op,
    src: &[u8],
) -> Result<(), Dispatch> {
    let dst = own_range(reg, "accumulate", from, slot, offset, n).map_err(Dispatch::Target)?;
    // SAFETY: `dst` is `n` bytes this process registered, checked against
    // its own table, in a progress point (no view alive); `src` is a
    // record of the library's, not overlapping it.
    unsafe { crate::rma::combine(ty, op, dst, src.as_ptr(), n / ty.size()) };
    Ok(())
}

/// One accumulate of a window's exposure epoch, to combine at `wait`.
pub(crate) struct WinAcc {
    pub(crate) off: usize,
    pub(crate) data: Vec<u8>,
    pub(crate) ty: ElemType,
    pub(crate) op: Op,
}

/// What a wait loop waits for from the processes it watches (for the
/// errors when they can never answer).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Awaited {
    Post,
    Complete,
    Answer,
    /// A lock word (held by any process; the owner watched).
    Lock,
}

impl Process {
    fn rma_mode(&self, call: &'static str, loc: Loc) -> Result<(), Error> {
        if self.am.is_some() {
            return Ok(());
        }
        Err(self.fail(
            ErrorKind::NoEpoch {
                detail: "not in one-sided mode (rma_init / bsp_rma_init first, or am_init / \
                         LAPI_Init)"
                    .into(),
            },
            call,
            loc,
        ))
    }

    fn rma_slot(&self, addr: usize, call: &'static str, loc: Loc) -> Result<u64, Error> {
        match self.reg.lookup(addr) {
            Some(s) => Ok(s.seq()),
            None => Err(self.fail(ErrorKind::NotRegistered { addr }, call, loc)),
        }
    }

    fn rma_group(&self, pids: &[i64], call: &'static str, loc: Loc) -> Result<Vec<usize>, Error> {
        let mut out = Vec::with_capacity(pids.len());
        for &q in pids {
            out.push(self.check_pid(q, call, loc)?);
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Gathers a record for `to`; sent by [`rma_flush`](Self::rma_flush)
    /// (every epoch call flushes before it waits or returns), or now if
    /// much is gathered.
    fn rma_send(
        &mut self,
        to: usize,
        what: u64,
        words: &[u64],
        payload: &[u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let ep = &mut self.epochs;
        if ep.outbox.len() < self.nprocs {
            ep.outbox.resize_with(self.nprocs, Vec::new);
        }
        let out = &mut ep.outbox[to];
        if out.is_empty() {
            out.resize(16, 0);
            ep.dirty.push(to);
        }
        let len = 16 + words.len() * 8 + pad8(payload.len());
        out.extend_from_slice(&(len as u64 | KIND_RMA << 32).to_ne_bytes());
        out.extend_from_slice(&(self.pid as u64 | what << 32).to_ne_bytes());
        for w in words {
            out.extend_from_slice(&w.to_ne_bytes());
        }
        out.extend_from_slice(payload);
        out.resize(out.len() + pad8(payload.len()) - payload.len(), 0);
        if out.len() >= BATCH_BYTES {
            return self.rma_flush(call, loc);
        }
        Ok(())
    }

    /// Sends the records gathered for each target as one batch.
    pub(crate) fn rma_flush(&mut self, call: &'static str, loc: Loc) -> Result<(), Error> {
        if self.epochs.dirty.is_empty() {
            return Ok(());
        }
        let Some(mut ctx) = self.am.take() else {
            return self.rma_mode(call, loc);
        };
        let mut sent = Ok(());
        let ep = &mut self.epochs;
        for &to in &ep.dirty {
            let batch = &mut ep.outbox[to];
            let len = batch.len() as u64;
            let head = len | KIND_RMA << 32 | (ctx.epoch & 1) << 48;
            batch[..8].copy_from_slice(&head.to_ne_bytes());
            batch[8..16].copy_from_slice(&(self.pid as u64 | BATCH << 32).to_ne_bytes());
            if sent.is_ok() {
                sent = ctx.post_slice(&self.world, to, batch);
            }
            batch.clear();
        }
        ep.dirty.clear();
        self.am = Some(ctx);
        sent.map_err(|why| self.interrupted(why, call, loc))
    }

    /// Handles what arrives until `done`, watching `watch` for processes
    /// that can never answer (on shared memory, where the status board
    /// shows every process).
    fn rma_progress(
        &mut self,
        watch: impl Fn(&Epochs) -> Vec<usize>,
        awaited: Awaited,
        call: &'static str,
        loc: Loc,
        mut done: impl FnMut(&Epochs) -> Result<bool, String>,
    ) -> Result<(), Error> {
        let transport = |p: &Process, detail| p.fail(ErrorKind::Transport { detail }, call, loc);
        self.rma_flush(call, loc)?;
        if done(&self.epochs).map_err(|d| transport(self, d))? {
            return Ok(());
        }
        let mut started = None;
        let mut suspect: Option<(usize, std::time::Instant)> = None;
        let mut watched: Option<Vec<usize>> = None;
        loop {
            let mark = self.world.am_mark(self.pid);
            self.am_dispatch(call, loc)?;
            if done(&self.epochs).map_err(|d| transport(self, d))? {
                return Ok(());
            }
            // The status board: shared memory, or on `mpi` the board of
            // one-sided mode (`rma_board`); none under LAPI's `am_init`
            // on `mpi` (then the run's deadline ends the wait).
            if self.world.peer_state(self.pid).is_some() {
                let mut now_suspect = None;
                let watch = watched.get_or_insert_with(|| watch(&self.epochs));
                for &q in watch.iter().filter(|&&q| q != self.pid) {
                    let Some((step, state)) = self.world.peer_state(q) else {
                        break;
                    };
                    if state == State::Ended {
                        return Err(self.unmatched(q, awaited, "ended", call, loc));
                    }
                    if matches!(awaited, Awaited::Post | Awaited::Complete)
                        && state == State::Syncing
                        && step == self.superstep & ((1 << 30) - 1)
                    {
                        now_suspect = Some(q);
                    }
                }
                // A process seen in its sync may have posted just before:
                // the record is surely here after one more dispatch and a
                // grace period (the board is written without ordering).
                suspect = match (now_suspect, suspect) {
                    (Some(q), Some((s, t0))) if q == s => {
                        if t0.elapsed() > std::time::Duration::from_millis(100) {
                            return Err(self.unmatched(q, awaited, "entered its sync", call, loc));
                        }
                        Some((s, t0))
                    }
                    (Some(q), _) => Some((q, std::time::Instant::now())),
                    (None, _) => None,
                };
            }
            // A lock word's release rings no bell; a post rings the
            // origin's bell on shared memory, not on `mpi`.
            let sleep = match awaited {
                Awaited::Lock => false,
                Awaited::Post => self.world.rendezvous().is_none(),
                Awaited::Complete | Awaited::Answer => true,
            };
            self.am_pause_or_yield(mark, &mut started, sleep, call, loc)?;
        }
    }

    fn unmatched(
        &self,
        q: usize,
        awaited: Awaited,
        did: &str,
        call: &'static str,
        loc: Loc,
    ) -> Error {
        let what = match awaited {
            Awaited::Post => {
                "posting an exposure epoch to this process (a start to a process that never posts)"
            }
            Awaited::Complete => {
                "completing the access epoch this process's exposure epoch admits it to"
            }
            Awaited::Answer => "answering this process's unlock or get",
            Awaited::Lock => "taking part in the lock epoch this process waits to open on it",
        };
        self.fail(
            ErrorKind::EpochUnmatched {
                detail: format!("process {q} {did} without {what}"),
            },
            call,
            loc,
        )
    }

    /// A sync (or a collective) must find no epoch open.
    pub(crate) fn check_no_epoch(&self, call: &'static str, loc: Loc) -> Result<(), Error> {
        self.held_refuses(self.holds.check_none(), call, loc)
    }

    /// An accumulate of a window's access epoch (window `win`, `data`
    /// whole elements of `ty` for byte `off` of `pid`'s memory, checked by
    /// the caller): records to `pid`, which combines them at its `wait`
    /// in pid order. Needs one-sided mode (the records' path).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn win_accumulate(
        &mut self,
        win: u64,
        pid: usize,
        off: usize,
        data: &[u8],
        ty: ElemType,
        op: Op,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if self.am.is_none() {
            let detail = "an accumulate in a window's epoch needs one-sided mode (rma_init / \
                          bsp_rma_init): its contributions travel as records, which the \
                          target combines at its wait in pid order (or use a lock)"
                .into();
            return Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc));
        }
        if !op.is_defined_on(ty) {
            return Err(self.fail(
                ErrorKind::AccumulateOperator {
                    op: op.name(),
                    ty: ty.name(),
                },
                call,
                loc,
            ));
        }
        let desc = ty as u16 | (op as u16) << 8;
        self.send_acc(pid, WACC, win, off, data, ty, desc, call, loc)
    }

    /// Sends the accumulate `data` (whole elements of `ty`, operator and
    /// type `desc`) for byte `off` of `pid`'s memory named by `first` (a
    /// slot word or a window), as records `what` of whole elements in
    /// pieces of at most [`CHUNK`] bytes.
    #[allow(clippy::too_many_arguments)]
    fn send_acc(
        &mut self,
        pid: usize,
        what: u64,
        first: u64,
        off: usize,
        data: &[u8],
        ty: ElemType,
        desc: u16,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let line = loc.map_or(0, |l| u64::from(l.line()));
        let piece = (CHUNK / ty.size()).max(1) * ty.size();
        for (k, part) in data.chunks(piece).enumerate() {
            let words = [
                first,
                (off + k * piece) as u64,
                part.len() as u64,
                u64::from(desc) | line << 32,
            ];
            self.rma_send(pid, what, &words, part, call, loc)?;
        }
        Ok(())
    }

    /// Checking mode, in one-sided mode: tells `pid` of a put of window
    /// `win`'s access epoch (`n` bytes at byte `off`), for its overlap
    /// check at `wait`.
    pub(crate) fn win_note_put(
        &mut self,
        win: u64,
        pid: usize,
        off: usize,
        n: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if self.check.is_none() || self.am.is_none() {
            return Ok(());
        }
        let line = loc.map_or(0, |l| u64::from(l.line()));
        let words = [win, off as u64, n as u64, line];
        self.rma_send(pid, WNOTE, &words, &[], call, loc)
    }

    /// In one-sided mode, tells each of `targets` that this process's
    /// access epoch of window `win` is complete (after its accumulates),
    /// before the window's own count.
    pub(crate) fn win_done(
        &mut self,
        win: u64,
        targets: &[usize],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if self.am.is_none() {
            return Ok(());
        }
        for &t in targets {
            self.rma_send(t, WDONE, &[win], &[], call, loc)?;
        }
        self.rma_flush(call, loc)
    }

    /// In one-sided mode, whether every one of `origins` told this
    /// process that its access epoch of window `win` is complete; waits
    /// for it if `block` (each origin sent it before counting its
    /// completion, which the caller saw: it is on its way). True outside
    /// one-sided mode.
    pub(crate) fn win_arrived(
        &mut self,
        win: u64,
        origins: &[usize],
        block: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<bool, Error> {
        if self.am.is_none() {
            return Ok(true);
        }
        let all = |ep: &Epochs| {
            ep.wins
                .get(&win)
                .is_some_and(|a| origins.iter().all(|o| a.done.contains(o)))
        };
        self.rma_flush(call, loc)?;
        let mut started = None;
        loop {
            let mark = self.world.am_mark(self.pid);
            self.am_dispatch(call, loc)?;
            if all(&self.epochs) {
                return Ok(true);
            }
            if !block {
                return Ok(false);
            }
            self.am_pause_or_yield(mark, &mut started, true, call, loc)?;
        }
    }

    /// The accumulates of window `win`'s exposure epoch, origins in pid
    /// order and each origin's in issue order, as `(origin, offset, data,
    /// type, operator)`; forgets what arrived for the epoch.
    /// In checking mode, a put and an accumulate of one byte, or puts of
    /// one byte from two origins, are `OverlappingPuts` (as in an area's
    /// exposure epoch).
    pub(crate) fn win_take(&mut self, win: u64) -> Result<Vec<WinAcc>, Dispatch> {
        let Some(mut a) = self.epochs.wins.remove(&win) else {
            return Ok(Vec::new());
        };
        a.accs.sort_by_key(|(from, _)| *from);
        if self.check.is_some() {
            let mut writes = std::mem::take(&mut a.puts);
            for (from, rec) in &a.accs {
                let w = |i: usize| {
                    u64::from_ne_bytes(rec[16 + 8 * i..24 + 8 * i].try_into().unwrap_or_default())
                };
                writes.push((
                    w(1) as usize,
                    w(2) as usize,
                    *from,
                    true,
                    (w(3) >> 32) as u32,
                ));
            }
            if let Some(kind) = conflict(self.pid, u64::MAX, writes) {
                return Err(Dispatch::Target(kind));
            }
        }
        let mut out = Vec::with_capacity(a.accs.len());
        for (from, rec) in a.accs {
            let w = |i: usize| {
                u64::from_ne_bytes(rec[16 + 8 * i..24 + 8 * i].try_into().unwrap_or_default())
            };
            let (off, n, d) = (w(1) as usize, w(2) as usize, w(3));
            let (ty, op) = check_acc(from, d, n)?;
            out.push(WinAcc {
                off,
                data: rec[48..48 + n].to_vec(),
                ty,
                op,
            });
        }
        Ok(out)
    }

    /// `bsp_win_post`: exposes the area registered at `addr` to `origins`.
    pub(crate) fn rma_post(
        &mut self,
        addr: usize,
        origins: &[i64],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        let origins = self.rma_group(origins, call, loc)?;
        if let Some(e) = self.epochs.exposures.iter().find(|e| e.slot == slot) {
            let detail = format!(
                "a second post of registration slot {slot}, whose exposure epoch posted{} is \
                 not waited for",
                e.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        if let Some(h) = self
            .epochs
            .locks
            .iter()
            .find(|h| h.slot == slot && h.pid == self.pid)
        {
            let detail = format!(
                "a post of registration slot {slot}, whose lock this process took{} is held \
                 (MPI: an area locked and exposed at once is erroneous; unlock it first)",
                h.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        let line = self.rma_line(slot, call, loc)?;
        self.epochs.exposures.push(Exposure {
            slot,
            done: vec![false; origins.len()],
            origins: origins.clone(),
            accs: Vec::new(),
            first: None,
            loc,
            writes: self.check.is_some().then(Vec::new),
        });
        let counted = Counted::Exposure {
            win: area_key(slot),
            origins: origins.clone(),
        };
        self.holds.open(counted, call, loc);
        // Exposed before any origin can know it (it starts on the count).
        let shared = self.world.rendezvous().is_none();
        for q in origins {
            let posted = self.epochs.lines[&line].post_to(q);
            posted.map_err(|detail| self.fail(ErrorKind::Transport { detail }, call, loc))?;
            if shared && q != self.pid {
                // Wakes its start if it sleeps waiting for records.
                self.world.notify(q, crate::engine::AM_BELL);
            }
        }
        self.rma_flush(call, loc)
    }

    /// The control line of `slot` (its lock word and post counters:
    /// `window/control.rs`), made on its first use here.
    fn rma_line(&mut self, slot: u64, call: &'static str, loc: Loc) -> Result<u64, Error> {
        let Some(line) = self.reg.line(slot) else {
            let detail = format!("registration slot {slot} is not live");
            return Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc));
        };
        if !self.epochs.lines.contains_key(&line) {
            let w = Window::control_line(self, line).map_err(|kind| self.fail(kind, call, loc))?;
            self.epochs.lines.insert(line, w);
        }
        Ok(line)
    }

    /// `bsp_win_start`: opens an access epoch of the area at `addr` to
    /// `targets`, once each has posted.
    pub(crate) fn rma_start(
        &mut self,
        addr: usize,
        targets: &[i64],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        let targets = self.rma_group(targets, call, loc)?;
        if let Some(a) = self.epochs.access.iter().find(|a| a.slot == slot) {
            let detail = format!(
                "a second start on registration slot {slot}, whose access epoch started{} is \
                 not complete",
                a.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        if let Some(h) = self
            .epochs
            .locks
            .iter()
            .find(|h| h.slot == slot && targets.contains(&h.pid))
        {
            let detail = format!(
                "a start on registration slot {slot} to process {}, whose lock of it taken{} is \
                 held (unlock it first: access epochs to one process are disjoint)",
                h.pid,
                h.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        self.held_refuses(self.holds.check_wait(None), call, loc)?;
        let line = self.rma_line(slot, call, loc)?;
        let posted = |ep: &Epochs| -> Result<bool, String> {
            let w = &ep.lines[&line];
            for &t in &targets {
                if !w.posted(t)? {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        self.rma_progress(|_| targets.clone(), Awaited::Post, call, loc, posted)?;
        for &t in &targets {
            self.epochs.lines[&line].start_on(t);
        }
        let counted = Counted::Access {
            win: area_key(slot),
            targets: targets.clone(),
        };
        self.holds.open(counted, call, loc);
        self.epochs.access.push(Access {
            slot,
            targets,
            loc,
            accs: Vec::new(),
        });
        Ok(())
    }

    /// `bsp_win_complete`: ends the access epoch of the area at `addr`:
    /// its gets have delivered, and each target learns it is complete.
    pub(crate) fn rma_complete(
        &mut self,
        addr: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        let Some(i) = self.epochs.access.iter().position(|a| a.slot == slot) else {
            let detail = format!("complete of registration slot {slot} without a start");
            return Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc));
        };
        self.held_refuses(self.holds.check_wait(None), call, loc)?;
        let access = self.epochs.access.swap_remove(i);
        self.holds.close_epoch(area_key(slot), false);
        let targets = &access.targets;
        let delivered = |ep: &Epochs| {
            Ok(!ep
                .gets
                .values()
                .any(|g| g.slot == slot && targets.contains(&g.pid)))
        };
        self.rma_progress(|_| targets.clone(), Awaited::Answer, call, loc, delivered)?;
        for &t in &access.targets {
            self.rma_send(t, COMPLETE, &[slot], &[], call, loc)?;
        }
        self.rma_flush(call, loc)
    }

    /// `bsp_win_wait` (`block`) and `bsp_win_test`: whether the exposure
    /// epoch of the area at `addr` is over (every origin completed); when
    /// it is, its accumulates are combined (origins in pid order, each
    /// origin's in issue order) and the epoch is closed.
    pub(crate) fn rma_wait(
        &mut self,
        addr: usize,
        block: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<bool, Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        if !self.epochs.exposures.iter().any(|e| e.slot == slot) {
            let detail = format!("wait or test of registration slot {slot} without a post");
            return Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc));
        }
        let origins = |ep: &Epochs| {
            ep.exposures
                .iter()
                .find(|e| e.slot == slot)
                .map_or(Vec::new(), |e| e.origins.clone())
        };
        let over = |ep: &Epochs| {
            ep.exposures
                .iter()
                .find(|e| e.slot == slot)
                .is_some_and(|e| e.done.iter().all(|&d| d))
        };
        if block {
            self.held_refuses(self.holds.check_wait(None), call, loc)?;
            self.rma_progress(origins, Awaited::Complete, call, loc, |ep| Ok(over(ep)))?;
        } else {
            self.rma_flush(call, loc)?;
            self.am_dispatch(call, loc)?;
            if !over(&self.epochs) {
                return Ok(false);
            }
        }
        let i = self.epochs.exposures.iter().position(|e| e.slot == slot);
        let mut e = self.epochs.exposures.swap_remove(i.unwrap_or_default());
        self.holds.close_epoch(area_key(slot), true);
        if let Some(writes) = e.writes.take() {
            if let Some(kind) = conflict(self.pid, slot, writes) {
                return Err(self.fail(kind, call, loc));
            }
        }
        e.accs.sort_by_key(|(from, _)| *from);
        if !e.accs.is_empty() {
            note_wrote(&mut self.epochs, slot);
        }
        for (from, rec) in &e.accs {
            let w = |i: usize| {
                u64::from_ne_bytes(rec[16 + 8 * i..24 + 8 * i].try_into().unwrap_or_default())
            };
            let (offset, n, d) = (w(1) as usize, w(2) as usize, w(3));
            let applied = check_acc(*from, d, n).and_then(|(ty, op)| {
                apply_acc(&self.reg, *from, slot, offset, n, ty, op, &rec[48..48 + n])
            });
            if let Err(d) = applied {
                return Err(match d {
                    Dispatch::Target(kind) => self.fail(kind, call, loc),
                    Dispatch::Interrupted(why) => self.interrupted(why, call, loc),
                });
            }
        }
        Ok(true)
    }

    /// `bsp_lock`: takes the lock word of the area at `addr` on `pid`
    /// (its control line), serving what arrives while it waits; the
    /// target applies the epoch's transfers as they arrive.
    pub(crate) fn rma_lock(
        &mut self,
        pid: i64,
        addr: usize,
        kind: LockKind,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let pid = self.check_pid(pid, call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        if let Some(h) = self
            .epochs
            .locks
            .iter()
            .find(|h| h.pid == pid && h.slot == slot)
        {
            let detail = format!(
                "a second lock of registration slot {slot} on process {pid}, locked{} and not \
                 unlocked",
                h.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        // MPI: distinct access epochs of one window to one process are
        // disjoint (a lock inside a started epoch to the same target is
        // erroneous).
        if let Some(a) = self
            .epochs
            .access
            .iter()
            .find(|a| a.slot == slot && a.targets.contains(&pid))
        {
            let detail = format!(
                "a lock of registration slot {slot} on process {pid} inside the access epoch \
                 to it started{} (complete it first: access epochs to one process are disjoint)",
                a.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        // The lock word of the area's control line, taken as a window's
        // (the owner takes no part); records the owner applies carry the
        // epoch's transfers. Served meanwhile: the holder may wait for
        // this process's answer.
        // One lock at a time, none with a view held (for windows and
        // areas together): nothing another process waits for is held
        // while this one waits.
        let free = self.holds.check_lock(self.pid, area_key(slot), pid);
        self.held_refuses(free, call, loc)?;
        let line = self.rma_line(slot, call, loc)?;
        let exclusive = kind == LockKind::Exclusive;
        let taken = |ep: &Epochs| ep.lines[&line].try_take(pid, exclusive);
        self.rma_progress(|_| vec![pid], Awaited::Lock, call, loc, taken)?;
        let counted = Counted::Lock {
            win: area_key(slot),
            pid,
            exclusive,
        };
        self.holds.open(counted, call, loc);
        self.epochs.locks.push(Held {
            pid,
            slot,
            exclusive,
            unlocking: false,
            loc,
            acc: None,
        });
        Ok(())
    }

    /// `bsp_unlock`: releases the lock of the area at `addr` on `pid`
    /// once every transfer of the epoch is done at the target.
    pub(crate) fn rma_unlock(
        &mut self,
        pid: i64,
        addr: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let pid = self.check_pid(pid, call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        let Some(h) = self
            .epochs
            .locks
            .iter_mut()
            .find(|h| h.pid == pid && h.slot == slot && !h.unlocking)
        else {
            let detail =
                format!("unlock of registration slot {slot} on process {pid} without a lock");
            return Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc));
        };
        let counted = Counted::Lock {
            win: area_key(slot),
            pid,
            exclusive: h.exclusive,
        };
        let free = self.holds.check_wait(Some(&counted));
        self.held_refuses(free, call, loc)?;
        if let Some(h) = self
            .epochs
            .locks
            .iter_mut()
            .find(|h| h.pid == pid && h.slot == slot && !h.unlocking)
        {
            h.unlocking = true;
        }
        self.rma_send(pid, UNLOCK, &[slot], &[], call, loc)?;
        let done = |ep: &Epochs| {
            Ok(ep
                .locks
                .iter()
                .any(|h| h.pid == pid && h.slot == slot && !h.unlocking))
        };
        self.rma_progress(|_| vec![pid], Awaited::Answer, call, loc, done)?;
        // Every transfer of the epoch is done at `pid`: the next holder
        // sees them.
        let i = self
            .epochs
            .locks
            .iter()
            .position(|h| h.pid == pid && h.slot == slot);
        let h = self.epochs.locks.swap_remove(i.unwrap_or_default());
        self.holds.close(&counted);
        let line = self.rma_line(slot, call, loc)?;
        let released = self.epochs.lines[&line].give_back(pid, h.exclusive);
        released.map_err(|detail| self.fail(ErrorKind::Transport { detail }, call, loc))
    }

    /// Whether a transfer to `pid`'s `slot` belongs to an open epoch of
    /// this process (a lock of it, or an access epoch of the slot naming
    /// `pid`); an access epoch of the slot not naming `pid` is an error.
    pub(crate) fn epoch_route(
        &self,
        pid: usize,
        slot: u64,
        call: &'static str,
        loc: Loc,
    ) -> Result<bool, Error> {
        if self
            .epochs
            .locks
            .iter()
            .any(|h| h.pid == pid && h.slot == slot)
        {
            return Ok(true);
        }
        match self.epochs.access.iter().find(|a| a.slot == slot) {
            None => Ok(false),
            Some(a) if a.targets.contains(&pid) => Ok(true),
            Some(a) => {
                let detail = format!(
                    "a transfer to process {pid} in the access epoch of registration slot {slot} \
                     started{} to processes {:?}",
                    a.loc.map_or(String::new(), |l| format!(" at {l}")),
                    a.targets
                );
                Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc))
            }
        }
    }

    /// [`UNDER_LOCK`] if a transfer to `pid`'s `slot` belongs to a lock
    /// epoch of this process, else 0 (an access epoch).
    fn under_lock(&self, pid: usize, slot: u64) -> u64 {
        let locked = self
            .epochs
            .locks
            .iter()
            .any(|h| h.pid == pid && h.slot == slot);
        if locked {
            UNDER_LOCK
        } else {
            0
        }
    }

    /// A put of an epoch: sent now, in pieces.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn epoch_put(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        src: *const u8,
        nbytes: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        let data = unsafe { std::slice::from_raw_parts(src, nbytes) };
        let tagged = slot | self.under_lock(pid, slot);
        for (k, piece) in data.chunks(CHUNK).enumerate() {
            let at = (offset + k * CHUNK) as u64;
            let line = loc.map_or(0, |l| u64::from(l.line()));
            let words = [tagged, at, piece.len() as u64, line];
            self.rma_send(pid, PUT, &words, piece, call, loc)?;
        }
        Ok(())
    }

    /// A get of an epoch: requested now, delivered by `complete` or
    /// `unlock`.
    ///
    /// # Safety
    ///
    /// `dst` must be writable for `nbytes` bytes until the epoch closes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn epoch_get(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        dst: *mut u8,
        nbytes: usize,
        keep: Option<Keepalive>,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let flag = self.under_lock(pid, slot);
        let mut done = 0;
        while done < nbytes {
            let n = CHUNK.min(nbytes - done);
            let id = self.epochs.next_id;
            self.epochs.next_id += 1;
            self.epochs.gets.insert(
                id,
                PendingGet {
                    dst: dst.wrapping_add(done).expose_provenance(),
                    len: n,
                    pid,
                    slot,
                    _keep: keep.clone(),
                },
            );
            let words = [slot | flag, (offset + done) as u64, n as u64, id];
            self.rma_send(pid, GET, &words, &[], call, loc)?;
            done += n;
        }
        Ok(())
    }

    /// An accumulate of an epoch: one operator and type per target area
    /// and epoch (checked here for this origin, by the target across
    /// origins of an exposure epoch).
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn epoch_accumulate(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        src: *const u8,
        nbytes: usize,
        ty: ElemType,
        op: Op,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let desc = ty as u16 | (op as u16) << 8;
        let first = if let Some(h) = self
            .epochs
            .locks
            .iter_mut()
            .find(|h| h.pid == pid && h.slot == slot)
        {
            *h.acc.get_or_insert((desc, loc))
        } else if let Some(a) = self.epochs.access.iter_mut().find(|a| a.slot == slot) {
            match a.accs.iter().find(|(q, _, _)| *q == pid) {
                Some(&(_, d, l)) => (d, l),
                None => {
                    a.accs.push((pid, desc, loc));
                    (desc, loc)
                }
            }
        } else {
            (desc, loc)
        };
        if first.0 != desc {
            let detail = format!(
                "this call accumulates with {} into registration slot {slot} of process {pid}, \
                 into which this process accumulated with {} earlier in this epoch{}",
                crate::rma::describe(desc),
                crate::rma::describe(first.0),
                first.1.map_or(String::new(), |l| format!(" (at {l})")),
            );
            return Err(self.fail(ErrorKind::AccumulateMismatch { detail }, call, loc));
        }
        // SAFETY: the caller's contract.
        let data = unsafe { std::slice::from_raw_parts(src, nbytes) };
        let tagged = slot | self.under_lock(pid, slot);
        self.send_acc(pid, ACC, tagged, offset, data, ty, desc, call, loc)
    }
}

// ----- the Rust API ----------------------------------------------------------------

/// An open post/start/complete/wait round on one area ([`Bsp::epoch`]):
/// an exposure epoch to some origins and an access epoch to some targets.
/// Its transfers are methods, so none can be issued once it is closed;
/// it holds the handle, so no sync can happen while it is open. Dropping it
/// closes it ([`wait`](Epoch::wait)); an error then stops the run and is
/// reported by the next call.
pub struct Epoch<'a, T: Pod> {
    bsp: &'a mut Bsp,
    area: &'a Area<T>,
    /// Whether the access epoch is still open.
    access: bool,
    /// Whether the exposure epoch is still open.
    exposure: bool,
}

/// A lock of one area on one process ([`Bsp::lock`]), released by
/// [`unlock`](Lock::unlock) or when dropped.
pub struct Lock<'a, T: Pod> {
    bsp: &'a mut Bsp,
    area: &'a Area<T>,
    pid: usize,
    held: bool,
}

/// `f` of the pids as the pointer API's `i64`s (on the stack for small
/// groups).
fn with_pids<R>(pids: &[usize], f: impl FnOnce(&[i64]) -> R) -> R {
    let mut small = [0i64; 16];
    if pids.len() <= small.len() {
        for (s, &q) in small.iter_mut().zip(pids) {
            *s = pid_arg(q);
        }
        return f(&small[..pids.len()]);
    }
    let v: Vec<i64> = pids.iter().map(|&q| pid_arg(q)).collect();
    f(&v)
}

fn typed<T>(offset: usize, len: usize) -> Option<(i64, i64)> {
    let size = std::mem::size_of::<T>();
    let o = i64::try_from(offset.checked_mul(size)?).ok()?;
    let n = i64::try_from(len.checked_mul(size)?).ok()?;
    Some((o, n))
}

fn overflow(p: &Process, call: &'static str, loc: Loc) -> Error {
    p.fail(ErrorKind::Overflow { what: "offset" }, call, loc)
}

/// A get of a guard into `dst` (kept alive until the reply lands): the
/// core routes it into the open epoch.
#[allow(clippy::too_many_arguments)]
fn get_in<T: Pod>(
    bsp: &Bsp,
    pid: usize,
    area: &Area<T>,
    offset: usize,
    dst: &Area<T>,
    dst_offset: usize,
    len: usize,
    loc: Loc,
) -> Result<(), Error> {
    // SAFETY: `get_into` checks `dst` and keeps its storage alive until
    // the reply lands, in a progress point (a `&mut Bsp` call), when no
    // view of it is alive.
    unsafe { bsp.get_into(pid, area, offset, dst, dst_offset, len, false, loc) }
}

impl Bsp {
    /// Enters one-sided mode: collective, a sync. Post/start/complete/wait
    /// ([`epoch`](Bsp::epoch)) and locks ([`lock`](Bsp::lock)) need it. It
    /// is active-message mode with no handlers ([`am_init`](Bsp::am_init)
    /// enables the epochs too): the epochs travel on that path, and every
    /// sync serves what arrives while it waits.
    ///
    /// # Errors
    ///
    /// As for [`am_init`](Bsp::am_init).
    ///
    /// # BSP cost
    ///
    /// One sync.
    #[track_caller]
    pub fn rma_init(&mut self) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.am_init_at(crate::am::Handlers::new(), "am_init", loc)?;
        self.rma_board("am_init", loc)
    }

    /// On `mpi`, the run's status board (collective: every process enters
    /// one-sided mode in the same sync), so that an epoch's waits find a
    /// process that syncs or ends without posting or completing, as the
    /// shared board shows it on the other engines.
    pub(crate) fn rma_board(&mut self, call: &'static str, loc: Loc) -> Result<(), Error> {
        let _ = (call, loc);
        #[cfg(feature = "mpi")]
        let world = self.process().world.clone();
        #[cfg(feature = "mpi")]
        if let Some(mpi) = world.rendezvous() {
            let now = (self.superstep_now() << 2) as u32;
            let nprocs = self.nprocs();
            let made = mpi
                .ensure_board(now)
                .and_then(|()| mpi.ensure_control(nprocs, crate::window::header(nprocs)));
            return made.map_err(|detail| {
                self.process()
                    .fail(ErrorKind::Transport { detail }, call, loc)
            });
        }
        Ok(())
    }

    /// Leaves one-sided mode: collective, a sync (see
    /// [`am_term`](Bsp::am_term)).
    ///
    /// # Errors
    ///
    /// As for [`am_term`](Bsp::am_term); [`ErrorKind::EpochOpen`] if an
    /// epoch is open.
    ///
    /// # BSP cost
    ///
    /// One sync.
    #[track_caller]
    pub fn rma_term(&mut self) -> Result<(), Error> {
        self.am_term()
    }

    /// Opens a post/start/complete/wait round on `area`: exposes this
    /// process's `area` to `origins` (MPI's `MPI_Win_post`), then, once
    /// every process of `targets` has posted to this one, opens an access
    /// epoch to them (`MPI_Win_start`). Either group may be empty. Only
    /// the members of the groups synchronise: no barrier of all.
    ///
    /// Transfers of the access epoch ([`Epoch::put`], [`Epoch::get`],
    /// [`Epoch::accumulate`]) are complete at each target when its
    /// [`wait`](Epoch::wait) returns; puts land as they arrive, and
    /// accumulates are combined at `wait`, origins in pid order and each
    /// origin's in issue order, so floating-point results are the same on
    /// every engine and run.
    ///
    /// # Examples
    ///
    /// See [the module](crate::epoch).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] outside one-sided mode
    /// ([`rma_init`](Bsp::rma_init)); [`ErrorKind::NotRegistered`],
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::EpochUnmatched`] if a
    /// target enters its sync or ends without posting to this process.
    ///
    /// # BSP cost
    ///
    /// A partial superstep: `w + h·g + c·(k + m)` for `k` origins and `m`
    /// targets, `c` a message's latency, instead of `l(p)`; no superstep
    /// is counted.
    #[track_caller]
    pub fn epoch<'a, T: Pod>(
        &'a mut self,
        area: &'a Area<T>,
        origins: &[usize],
        targets: &[usize],
    ) -> Result<Epoch<'a, T>, Error> {
        let loc = Some(SourceLocation::caller());
        {
            let mut p = self.process();
            self.own(&p, area, "bsp_win_post", loc)?;
            with_pids(origins, |g| p.rma_post(area.addr(), g, "bsp_win_post", loc))?;
            with_pids(targets, |g| {
                p.rma_start(area.addr(), g, "bsp_win_start", loc)
            })?;
        }
        Ok(Epoch {
            bsp: self,
            area,
            access: true,
            exposure: true,
        })
    }

    /// Locks `area` on process `pid` (MPI's `MPI_Win_lock`), exclusively
    /// or shared with other shared holders: takes the lock word of the
    /// area's control line (the same word and code as a
    /// [`Window`](crate::Window)'s lock), with no call of `pid`, waiting
    /// (and serving what arrives for this process) while another process
    /// holds it. The epoch's transfers travel as records that `pid`
    /// applies at its next progress point (any `&mut Bsp` call: a sync's
    /// barrier, an epoch call, [`probe`](Bsp::probe)), as MPI
    /// implementations without a progress thread do;
    /// [`unlock`](Lock::unlock) returns once `pid` applied them all. A
    /// process holds one lock at a time (of an area or a window).
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::LockKind;
    /// let r = bsplib::run(3, |bsp| {
    ///     let x = bsplib::Area::<u64>::new(bsp, 1);
    ///     bsp.push_reg(&x)?;
    ///     bsp.rma_init()?;
    ///     // Every process adds its pid + 1 into process 0's counter.
    ///     let mut l = bsp.lock(0, &x, LockKind::Exclusive)?;
    ///     let v = l.read(0, 1)?[0];
    ///     l.put(0, &[v + l.bsp().pid() as u64 + 1])?;
    ///     l.unlock()?;
    ///     bsp.sync()?;
    ///     let total = x.as_slice(bsp)[0];
    ///     bsp.rma_term()?;
    ///     Ok(total)
    /// })?;
    /// assert_eq!(r[0], 6);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] outside one-sided mode;
    /// [`ErrorKind::NotRegistered`], [`ErrorKind::PidOutOfRange`];
    /// [`ErrorKind::EpochUnmatched`] if `pid` ended;
    /// [`ErrorKind::EpochOpen`] while this process holds another lock or
    /// a window view (of a forgotten guard, or from C);
    /// [`ErrorKind::OutOfMemory`] when the slot has no control line (more
    /// live registrations than lines: `window/control.rs`).
    ///
    /// # BSP cost
    ///
    /// With [`unlock`](Lock::unlock): one atomic on the lock word, one
    /// round trip to `pid` (`2c`) and the bytes, plus the wait for earlier
    /// holders.
    #[track_caller]
    pub fn lock<'a, T: Pod>(
        &'a mut self,
        pid: usize,
        area: &'a Area<T>,
        kind: LockKind,
    ) -> Result<Lock<'a, T>, Error> {
        let loc = Some(SourceLocation::caller());
        {
            let mut p = self.process();
            self.own(&p, area, "bsp_lock", loc)?;
            p.rma_lock(pid_arg(pid), area.addr(), kind, "bsp_lock", loc)?;
        }
        Ok(Lock {
            bsp: self,
            area,
            pid,
            held: true,
        })
    }
}

impl<'a, T: Pod> Epoch<'a, T> {
    /// The handle, for views of local areas between transfers.
    pub fn bsp(&self) -> &Bsp {
        self.bsp
    }

    /// Puts `src` into the area on `pid` (a target of the round) from
    /// element `offset`; `src` is copied now.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] if `pid` is not a target or the access epoch
    /// is complete; the checks of [`Bsp::put`].
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes towards the h-relation of the round.
    #[track_caller]
    pub fn put(&self, pid: usize, offset: usize, src: &[T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.open(loc)?;
        self.bsp.put_at(pid, src, self.area, offset, loc)
    }

    /// Gets `len` elements from element `offset` of the area on `pid` into
    /// `dst` from `dst_offset`; they land by [`complete`](Epoch::complete).
    /// They read the target's area as it is when the target serves them
    /// (the target must not change it during its exposure epoch).
    ///
    /// # Errors
    ///
    /// As for [`put`](Epoch::put) and [`Bsp::get`].
    ///
    /// # BSP cost
    ///
    /// `len` elements towards the h-relation of the round.
    #[track_caller]
    pub fn get(
        &self,
        pid: usize,
        offset: usize,
        dst: &Area<T>,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.open(loc)?;
        get_in(self.bsp, pid, self.area, offset, dst, dst_offset, len, loc)
    }

    /// Accumulates `src` into the area on `pid` with `op` (see
    /// [`Bsp::accumulate`]), combined at the target's `wait` in the
    /// deterministic order.
    ///
    /// # Errors
    ///
    /// As for [`put`](Epoch::put) and [`Bsp::accumulate`]; one operator
    /// and type per target in an epoch ([`ErrorKind::AccumulateMismatch`]).
    ///
    /// # BSP cost
    ///
    /// As for [`put`](Epoch::put), plus the combine at the target.
    #[track_caller]
    pub fn accumulate(&self, pid: usize, offset: usize, src: &[T], op: Op) -> Result<(), Error>
    where
        T: Element,
    {
        let loc = Some(SourceLocation::caller());
        self.open(loc)?;
        self.bsp.accumulate_at(pid, src, self.area, offset, op, loc)
    }

    fn open(&self, loc: Loc) -> Result<(), Error> {
        if self.access {
            return Ok(());
        }
        let p = self.bsp.process();
        Err(p.fail(
            ErrorKind::NoEpoch {
                detail: "a transfer after complete".into(),
            },
            "bsp_put",
            loc,
        ))
    }

    /// Ends the access epoch (MPI's `MPI_Win_complete`): its gets have
    /// landed, and each target learns that this origin is done.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EpochUnmatched`] if a target ended; the run stopped.
    ///
    /// # BSP cost
    ///
    /// One message to each target; waits for the gets' replies.
    #[track_caller]
    pub fn complete(&mut self) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        if !self.access {
            return Ok(());
        }
        self.access = false;
        self.bsp
            .process()
            .rma_complete(self.area.addr(), "bsp_win_complete", loc)
    }

    /// Whether every origin has completed, without waiting (MPI's
    /// `MPI_Win_test`); when true, the round is over as after
    /// [`wait`](Epoch::wait), and the guard can only be dropped. Completes
    /// this process's access epoch first.
    ///
    /// # Errors
    ///
    /// As for [`wait`](Epoch::wait).
    #[track_caller]
    pub fn test(&mut self) -> Result<bool, Error> {
        let loc = Some(SourceLocation::caller());
        self.complete()?;
        if !self.exposure {
            return Ok(true);
        }
        let over = self
            .bsp
            .process()
            .rma_wait(self.area.addr(), false, "bsp_win_test", loc)?;
        self.exposure = !over;
        Ok(over)
    }

    /// Completes the access epoch if still open, then waits until every
    /// origin has completed (MPI's `MPI_Win_wait`): their puts are in this
    /// process's area and their accumulates combined.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EpochUnmatched`] if an origin enters its sync or ends
    /// without completing; [`ErrorKind::AccumulateMismatch`] if origins
    /// accumulated into the area with different operators or types; the
    /// run stopped.
    ///
    /// # BSP cost
    ///
    /// Waits for one message from each origin.
    #[track_caller]
    pub fn wait(mut self) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.close(loc)
    }

    fn close(&mut self, loc: Loc) -> Result<(), Error> {
        self.complete()?;
        if !self.exposure {
            return Ok(());
        }
        self.exposure = false;
        self.bsp
            .process()
            .rma_wait(self.area.addr(), true, "bsp_win_wait", loc)
            .map(|_| ())
    }
}

impl<T: Pod> Drop for Epoch<'_, T> {
    fn drop(&mut self) {
        if self.access || self.exposure {
            // An error stops the run; the next call reports it.
            let _ = self.close(None);
        }
    }
}

impl<'a, T: Pod> Lock<'a, T> {
    /// The handle, for views of local areas between transfers.
    pub fn bsp(&self) -> &Bsp {
        self.bsp
    }

    /// Puts `src` into the locked area from element `offset` (copied now,
    /// in place at the target by [`unlock`](Lock::unlock)).
    ///
    /// # Errors
    ///
    /// The checks of [`Bsp::put`].
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes to the target.
    #[track_caller]
    pub fn put(&self, offset: usize, src: &[T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp.put_at(self.pid, src, self.area, offset, loc)
    }

    /// Gets `len` elements from element `offset` of the locked area into
    /// `dst` from `dst_offset`, landing by [`unlock`](Lock::unlock).
    ///
    /// # Errors
    ///
    /// The checks of [`Bsp::get`].
    ///
    /// # BSP cost
    ///
    /// `len` elements from the target.
    #[track_caller]
    pub fn get(
        &self,
        offset: usize,
        dst: &Area<T>,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        get_in(
            self.bsp, self.pid, self.area, offset, dst, dst_offset, len, loc,
        )
    }

    /// Reads `len` elements from element `offset` of the locked area now
    /// (a get and a wait for its reply).
    ///
    /// # Errors
    ///
    /// The checks of [`Bsp::get`]; [`ErrorKind::EpochUnmatched`] if the
    /// target ended.
    ///
    /// # BSP cost
    ///
    /// A round trip to the target and `len` elements.
    #[track_caller]
    pub fn read(&mut self, offset: usize, len: usize) -> Result<Vec<T>, Error> {
        let loc = Some(SourceLocation::caller());
        const CALL: &str = "bsp_get";
        let mut out = vec![T::zeroed(); len];
        let mut p = self.bsp.process();
        let Some((o, n)) = typed::<T>(offset, len) else {
            return Err(overflow(&p, CALL, loc));
        };
        let slot = p.resolve(
            self.pid,
            self.area.addr(),
            o as usize,
            n as usize,
            CALL,
            loc,
        )?;
        // SAFETY: `out` is `n` writable bytes, alive until the reply lands
        // (we wait for it below, before returning it).
        unsafe {
            p.epoch_get(
                self.pid,
                slot,
                o as usize,
                out.as_mut_ptr().cast(),
                n as usize,
                None,
                CALL,
                loc,
            )?;
        }
        let pid = self.pid;
        p.rma_progress(
            |_| vec![pid],
            Awaited::Answer,
            CALL,
            loc,
            |ep| Ok(!ep.gets.values().any(|g| g.pid == pid && g.slot == slot)),
        )?;
        Ok(out)
    }

    /// Combines `src` into the locked area with `op` (see
    /// [`Bsp::accumulate`]): under an exclusive lock in issue order;
    /// element-wise atomic under shared locks, in the order the target
    /// serves the holders.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::accumulate`]; one operator and type per lock epoch.
    ///
    /// # BSP cost
    ///
    /// As for [`put`](Lock::put), plus the combine at the target.
    #[track_caller]
    pub fn accumulate(&self, offset: usize, src: &[T], op: Op) -> Result<(), Error>
    where
        T: Element,
    {
        let loc = Some(SourceLocation::caller());
        self.bsp
            .accumulate_at(self.pid, src, self.area, offset, op, loc)
    }

    /// Releases the lock (MPI's `MPI_Win_unlock`) once every transfer of
    /// the epoch is done at the target and its gets have landed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EpochUnmatched`] if the target ended; the run stopped.
    ///
    /// # BSP cost
    ///
    /// A round trip to the target.
    #[track_caller]
    pub fn unlock(mut self) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.release(loc)
    }

    fn release(&mut self, loc: Loc) -> Result<(), Error> {
        if !self.held {
            return Ok(());
        }
        self.held = false;
        self.bsp
            .process()
            .rma_unlock(pid_arg(self.pid), self.area.addr(), "bsp_unlock", loc)
    }
}

impl<T: Pod> Drop for Lock<'_, T> {
    fn drop(&mut self) {
        // An error stops the run; the next call reports it.
        let _ = self.release(None);
    }
}

// ----- the pointer API (the C interface's `bsp_rma.h`) ----------------------------

impl crate::raw::Raw<'_> {
    /// Stops the run with `kind` as `call`'s error at this layer's
    /// location, and returns the error (for front doors whose own argument
    /// checks fail, such as the C interface's group arrays).
    #[track_caller]
    pub fn fail(&self, kind: ErrorKind, call: &'static str) -> Error {
        let loc = self.location();
        self.bsp().process().fail(kind, call, loc)
    }

    /// `bsp_rma_init`: [`Bsp::rma_init`] as a C call.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::rma_init`].
    pub fn rma_init(bsp: &mut Bsp, loc: Option<SourceLocation>) -> Result<(), Error> {
        bsp.am_init_at(crate::am::Handlers::new(), "bsp_rma_init", loc)?;
        bsp.rma_board("bsp_rma_init", loc)
    }

    /// `bsp_rma_term`: [`Bsp::rma_term`] as a C call.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::rma_term`].
    pub fn rma_term(bsp: &mut Bsp, loc: Option<SourceLocation>) -> Result<(), Error> {
        bsp.am_term_at("bsp_rma_term", loc)
    }

    /// `bsp_win_post`: exposes the area registered at `area` to `origins`
    /// (an exposure epoch; see [`Bsp::epoch`]). Takes the handle itself:
    /// it serves what arrives, writing registered memory.
    ///
    /// # Errors
    ///
    /// As for [`Bsp::epoch`]; [`ErrorKind::EpochOpen`] if the area is
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
    /// As for [`Bsp::epoch`]; [`ErrorKind::EpochOpen`] if one is open on
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

    /// `bsp_win_complete`: see [`Epoch::complete`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] without a start; as for [`Epoch::complete`].
    pub fn win_complete(
        bsp: &mut Bsp,
        loc: Option<SourceLocation>,
        area: *const std::ffi::c_void,
    ) -> Result<(), Error> {
        bsp.process()
            .rma_complete(area.addr(), "bsp_win_complete", loc)
    }

    /// `bsp_win_wait` (`block`) and `bsp_win_test`: see [`Epoch::wait`]
    /// and [`Epoch::test`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] without a post; as for [`Epoch::wait`].
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

    /// `bsp_lock`: see [`Bsp::lock`].
    ///
    /// # Errors
    ///
    /// As for [`Bsp::lock`]; [`ErrorKind::EpochOpen`] if this process
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

    /// `bsp_unlock`: see [`Lock::unlock`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] without the lock; as for [`Lock::unlock`].
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
