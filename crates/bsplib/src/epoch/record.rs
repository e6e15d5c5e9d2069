//! The epochs' records on the active-message path: their kind and codes,
//! their format, and the batches an origin gathers per target and sends
//! (`ONE_SIDED.md`, section 8).

use crate::am::Dispatch;
use crate::error::{Error, ErrorKind};
use crate::process::{Loc, Process};
use crate::rma::ElemType;

/// The record kind of the epochs on the active-message path (the kinds of
/// `am.rs` are 1 to 3; this one it carries for us).
use crate::am::KIND_RMA;

// What a record asks, in the high half of its second word. (Posts and
// locks are no records: they are the control line's counters and lock
// word, `window/control.rs`.)
/// Origin to target: the access epoch `[slot]` is complete.
pub(super) const COMPLETE: u64 = 2;
/// Origin to target: `[slot]`, the lock epoch ends: answer once every
/// transfer before this is done.
pub(super) const UNLOCK: u64 = 5;
/// Target to origin: `[slot]`, every transfer of the lock epoch done (the
/// origin then releases the lock word).
pub(super) const UNLOCKED: u64 = 6;
/// `[slot][offset][len][line][payload]`.
pub(super) const PUT: u64 = 7;
/// `[slot][offset][len][type | op << 8 | line << 32][payload]`.
pub(super) const ACC: u64 = 8;
/// `[slot][offset][len][id]`: read and reply.
pub(super) const GET: u64 = 9;
/// In the slot word of a put, accumulate or get: the transfer belongs to
/// a lock epoch (else to an access epoch, which the target checks against
/// its exposure).
pub(super) const UNDER_LOCK: u64 = 1 << 63;
/// Target to origin: `[id][len][payload]`.
pub(super) const REPLY: u64 = 10;
/// Origin to target: `[window][offset][len][type | op << 8 | line << 32]
/// [payload]`, an accumulate of a window's access epoch (bytes at
/// `offset` of the target's memory of window `window`, by the window's
/// identity, the same on every process), kept and combined at the
/// target's `wait` in pid order, as an area's.
pub(super) const WACC: u64 = 12;
/// Origin to target: `[window]`, this origin completed its access epoch
/// of the window (after its accumulates), in one-sided mode.
pub(super) const WDONE: u64 = 13;
/// Origin to target, checking mode: `[window][offset][len][line]`, a put
/// of a window's access epoch (done already, straight into memory), for
/// the target's overlap check at `wait`.
pub(super) const WNOTE: u64 = 14;
/// Records gathered for one target: the payload is whole records, served
/// in order (an origin sends an epoch's records together: one inbox
/// append and one wake-up, not one per record).
pub(super) const BATCH: u64 = 11;

/// An origin sends what it gathered for a target once this much is there,
/// without waiting for the epoch call that would send it.
pub(super) const BATCH_BYTES: usize = 256 << 10;

/// Transfers travel in pieces of at most this many bytes (each a record
/// that an inbox holds many of).
pub(super) const CHUNK: usize = 64 << 10;

pub(super) fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// A record: `[len | KIND_RMA << 32 | parity << 48][me | what << 32]`,
/// then `words`, then `payload` padded to 8.
pub(super) fn record(
    me: usize,
    superstep: u64,
    what: u64,
    words: &[u64],
    payload: &[u8],
) -> Vec<u8> {
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

pub(super) fn invalid(sender: usize, detail: String) -> Dispatch {
    Dispatch::Target(ErrorKind::InvalidRecord {
        what: "one-sided epoch",
        sender,
        detail,
    })
}

impl Process {
    /// Gathers a record for `to`; sent by [`rma_flush`](Self::rma_flush)
    /// (every epoch call flushes before it waits or returns), or now if
    /// much is gathered.
    pub(super) fn rma_send(
        &mut self,
        to: usize,
        what: u64,
        words: &[u64],
        payload: &[u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let ep = self.ext.epochs_mut();
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
        if self.ext.epochs_mut().dirty.is_empty() {
            return Ok(());
        }
        let Some(mut ctx) = self.ext.am_mut().ctx.take() else {
            return self.rma_mode(call, loc);
        };
        let mut sent = Ok(());
        let ep = self.ext.epochs_mut();
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
        self.ext.am_mut().ctx = Some(ctx);
        sent.map_err(|why| self.interrupted(why, call, loc))
    }

    /// Sends the accumulate `data` (whole elements of `ty`, operator and
    /// type `desc`) for byte `off` of `pid`'s memory named by `first` (a
    /// slot word or a window), as records `what` of whole elements in
    /// pieces of at most [`CHUNK`] bytes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send_acc(
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
}
