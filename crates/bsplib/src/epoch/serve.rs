//! The target's side: the records it serves at its progress points
//! (puts and lock-epoch accumulates written, gets and unlocks answered,
//! exposure-epoch accumulates kept for `wait`), and the checking mode's
//! overlap check of an exposure epoch's writes.

use super::record::{
    invalid, record, ACC, BATCH, COMPLETE, GET, PUT, REPLY, UNDER_LOCK, UNLOCK, UNLOCKED, WACC,
    WDONE, WNOTE,
};
use super::{Epochs, Write};
use crate::am::{Context, Dispatch};
use crate::engine::World;
use crate::error::ErrorKind;
use crate::registration::Registry;
use crate::rma::{ElemType, Op};
use crate::superstep::own_range;

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
pub(super) fn note_wrote(ep: &mut Epochs, slot: u64) {
    if ep.track && !ep.wrote.contains(&slot) {
        ep.wrote.push(slot);
    }
}

/// Checking mode: notes bytes written into `slot` in its exposure epoch.
pub(super) fn note_write(ep: &mut Epochs, slot: u64, w: Write) {
    if let Some(e) = ep.exposures.iter_mut().find(|e| e.slot == slot) {
        if let Some(writes) = e.writes.as_mut() {
            writes.push(w);
        }
    }
}

/// Checking mode, at `wait`: the first conflict among an exposure epoch's
/// writes: a put and an accumulate of one byte (whatever the origins), or
/// puts of one byte from two origins (whose order is undefined).
pub(super) fn conflict(owner: usize, slot: u64, mut writes: Vec<Write>) -> Option<ErrorKind> {
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
pub(super) fn check_acc(from: usize, d: u64, n: usize) -> Result<(ElemType, Op), Dispatch> {
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
pub(super) fn apply_acc(
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
