//! The dispatch: what a progress point does with the records that arrived
//! (header handler, landing, completion handler, target counter,
//! acknowledgements), and the acknowledgements it sends back.

use super::counters::bump;
use super::handlers::{CompletionFn, DoneParts, Kind, RawArrival};
use super::landing::{target_blocks, Sink, To};
use super::{
    lapi, pad8, Context, Dispatch, CHUNKED, HEADER_WORDS, KIND_ACK, KIND_AM, KIND_DATA, KIND_RMA,
    MAX_DATA, VEC_CONTIG, VEC_GENERIC, VEC_IO, VEC_STRIDED,
};
use crate::engine::{Interrupt, World};
use crate::error::{Error, ErrorKind};
use crate::process::guard;

#[cfg(doc)]
use super::EPOCH;

/// A message whose header handler ran and whose data is still arriving
/// (or has all arrived, and is being finished).
pub(super) struct Pending {
    seq: u64,
    total: usize,
    received: usize,
    sink: Sink,
    then: Option<CompletionFn>,
    tgt: u64,
}

impl Context {
    /// Handles everything that arrived: messages (header handler, landing,
    /// completion handler, target counter) and acknowledgements; then
    /// acknowledges what was handled. Errors found on the target are the
    /// run's.
    /// With `waiting_in_sync`, records of the next superstep are set aside
    /// (see [`EPOCH`]).
    pub(super) fn dispatch(
        &mut self,
        world: &World,
        waiting_in_sync: bool,
    ) -> Result<(), Dispatch> {
        self.flush(world).map_err(Dispatch::Interrupted)?;
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        if !waiting_in_sync {
            // What was set aside came before anything still in the inbox.
            std::mem::swap(&mut buf, &mut self.deferred);
        }
        let taken = world.am_take(self.pid, &mut buf);
        let defer = waiting_in_sync.then_some((self.epoch & 1) ^ 1);
        let result = taken
            .map_err(Dispatch::Interrupted)
            .and_then(|()| self.handle_all(world, &buf, defer));
        buf.clear();
        self.buf = buf;
        result?;
        // What no record took along (`post`) goes alone.
        for from in 0..self.nprocs {
            if let Some(seq) = self.to_ack[from].take() {
                let ack = self.ack(seq);
                self.post_slice(world, from, ack.bytes())
                    .map_err(Dispatch::Interrupted)?;
            }
        }
        Ok(())
    }

    /// Handles the records in `bytes`; those whose epoch bit is `defer`
    /// are set aside instead.
    fn handle_all(
        &mut self,
        world: &World,
        bytes: &[u8],
        defer: Option<u64>,
    ) -> Result<(), Dispatch> {
        let word = |at: usize| u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        let mut at = 0;
        while at < bytes.len() {
            let invalid = |detail: String, sender: usize| {
                Dispatch::Target(ErrorKind::InvalidRecord {
                    what: "active message",
                    sender,
                    detail,
                })
            };
            if bytes.len() - at < 16 {
                return Err(invalid("is cut short".into(), usize::MAX));
            }
            let w0 = word(at);
            let len = w0 as u32 as usize;
            let from = (word(at + 8) as u32) as usize;
            let seq = word(at + 8) >> 32;
            if len < 16 || len % 8 != 0 || len > bytes.len() - at || from >= self.nprocs {
                return Err(invalid(format!("has a bad length ({len}) or origin"), from));
            }
            let rec = &bytes[at..at + len];
            if defer == Some(w0 >> 48 & 1) {
                self.deferred.extend_from_slice(rec);
                at += len;
                continue;
            }
            match w0 >> 32 & 0xff {
                KIND_RMA => self.rma_in.extend_from_slice(rec),
                KIND_ACK => self.acknowledged(from, seq).map_err(|d| invalid(d, from))?,
                KIND_AM => {
                    if seq != (self.handled[from] + 1) & 0xffff_ffff || self.open[from].is_some() {
                        return Err(invalid(
                            format!(
                                "has sequence number {seq}, expected {} (or came before the \
                                 data of the previous one)",
                                self.handled[from] + 1
                            ),
                            from,
                        ));
                    }
                    let pending = self.begin(world, from, seq, rec)?;
                    self.handled[from] += 1;
                    match pending {
                        // A C message: handled whole.
                        None => self.to_ack[from] = Some(seq),
                        Some(p) if p.received == p.total => self.finish(world, from, p)?,
                        Some(p) => self.open[from] = Some(p),
                    }
                }
                KIND_DATA => {
                    let offset = if len >= 24 {
                        word(at + 16) as usize
                    } else {
                        usize::MAX
                    };
                    let Some(mut pending) = self.open[from].take() else {
                        return Err(invalid("is data of no message".into(), from));
                    };
                    let bytes = &rec[24.min(len)..];
                    let n = bytes.len().min(pending.total - pending.received);
                    if pending.seq != seq || offset != pending.received || n == 0 {
                        return Err(invalid(
                            format!(
                                "is data of message {seq} at byte {offset}, expected message {} \
                                 at byte {}",
                                pending.seq, pending.received
                            ),
                            from,
                        ));
                    }
                    self.landed |= matches!(pending.sink, Sink::Blocks { .. });
                    pending.sink.deliver(offset, &bytes[..n]);
                    pending.received += n;
                    if pending.received == pending.total {
                        self.finish(world, from, pending)?;
                    } else {
                        self.open[from] = Some(pending);
                    }
                }
                k => return Err(invalid(format!("has an unknown kind {k}"), from)),
            }
            at += len;
        }
        Ok(())
    }

    /// An acknowledgement from `from` of every message up to `seq` (its
    /// low 32 bits: sequence numbers travel modulo 2^32).
    fn acknowledged(&mut self, from: usize, seq: u64) -> Result<(), String> {
        let sent = self.sent[from];
        let behind = u64::from((sent as u32).wrapping_sub(seq as u32));
        if behind > self.in_flight[from].len() as u64 {
            return Err(format!(
                "acknowledges message {seq}, which is not one in flight (the last sent is {})",
                sent & 0xffff_ffff
            ));
        }
        let seq = sent - behind;
        while self.in_flight[from].front().is_some_and(|f| f.seq <= seq) {
            if let Some(f) = self.in_flight[from].pop_front() {
                if let Some(c) = f.cmpl {
                    c.bump();
                }
            }
        }
        Ok(())
    }

    /// The record of message `seq` from `from`: runs its header handler
    /// and resolves its landing; the data the record carries (all of it,
    /// unless `CHUNKED`) is delivered.
    fn begin(
        &mut self,
        world: &World,
        from: usize,
        seq: u64,
        rec: &[u8],
    ) -> Result<Option<Pending>, Dispatch> {
        let target_err = |reason: String| {
            Dispatch::Target(ErrorKind::AmTarget {
                origin: from,
                seq,
                reason,
            })
        };
        let word = |at: usize| -> Result<u64, Dispatch> {
            rec.get(at..at + 8)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
                .ok_or_else(|| target_err("the record is cut short".into()))
        };
        let w0 = word(0)?;
        let vec = w0 >> 40 & 0xff;
        let chunked = w0 & CHUNKED != 0;
        let (hindex, hhash) = {
            let w = word(16)?;
            (w as u32 as usize, (w >> 32) as u32)
        };
        let tgt = word(24)?;
        let (uhdr_len, num_vecs) = {
            let w = word(32)?;
            ((w as u32) as usize, (w >> 32) as usize)
        };
        let total = word(40)? as usize;
        let kind = match vec {
            VEC_CONTIG => Kind::Contiguous,
            VEC_IO => Kind::Io,
            VEC_STRIDED => Kind::Strided,
            VEC_GENERIC => Kind::Generic,
            v => return Err(target_err(format!("unknown vector kind {v}"))),
        };
        let lens_words = match kind {
            Kind::Io | Kind::Generic => num_vecs,
            _ => 1,
        };
        if 8 * (HEADER_WORDS + lens_words) > rec.len() || total > MAX_DATA {
            return Err(target_err("the record is cut short".into()));
        }
        // One block is a list on the stack: no allocation per message.
        let one = [total];
        let listed: Vec<usize>;
        let lens: &[usize] = match kind {
            Kind::Io | Kind::Generic => {
                listed = (0..num_vecs)
                    .map(|i| word(48 + 8 * i).map(|w| w as usize))
                    .collect::<Result<_, _>>()?;
                &listed
            }
            Kind::Strided => {
                let block = word(48)? as usize;
                if block.checked_mul(num_vecs) != Some(total) {
                    return Err(target_err(format!(
                        "has {num_vecs} strided blocks of {block} bytes for {total} bytes"
                    )));
                }
                listed = vec![block; num_vecs];
                &listed
            }
            Kind::Contiguous => &one,
        };
        let uhdr_at = 8 * (HEADER_WORDS + lens_words);
        let data_at = uhdr_at + pad8(uhdr_len);
        let carried = if chunked { 0 } else { total };
        if lens.iter().try_fold(0usize, |a, &l| a.checked_add(l)) != Some(total)
            || data_at
                .checked_add(carried)
                .is_none_or(|end| end > rec.len())
        {
            return Err(target_err("the record's lengths do not add up".into()));
        }
        let uhdr = &rec[uhdr_at..uhdr_at + uhdr_len];
        let flags = w0 >> 56;
        if flags & lapi::FLAG_C != 0 {
            if chunked {
                return Err(target_err(
                    "is a C message in pieces, which C sends never make".into(),
                ));
            }
            let m = lapi::Msg {
                from,
                seq,
                flags,
                handler: word(16)?,
                tgt,
                kind,
                lens,
                uhdr,
                data: &rec[data_at..data_at + total],
            };
            self.handle_c(world, m)?;
            return Ok(None);
        }
        let arrival = RawArrival {
            owner: self.owner,
            src: from,
            uhdr,
            lens,
            total,
            kind,
        };
        let Some((hash, header)) = self.handlers.get_mut(hindex) else {
            return Err(target_err(format!(
                "names handler {hindex}, which this process does not have"
            )));
        };
        if *hash != hhash {
            return Err(target_err(format!(
                "names handler {hindex} with another name than this process registered there \
                 (every process must add the same handlers in the same order)"
            )));
        }
        // User code: a panic fails the run (`process/guard.rs`); the
        // progress point resumes it once the context is back in its slot.
        let ((call, loc), (pid, superstep)) = (self.site, (self.pid, self.superstep));
        let name = &self.names[hindex];
        let resolved = guard::catch(
            Some(world),
            |m| {
                let message =
                    format!("the header handler \"{name}\" of a message from process {from}: {m}");
                Error::new(ErrorKind::Panicked { message }, call, pid, superstep, loc)
            },
            || header(&arrival),
        );
        let landing = match resolved {
            Ok(landing) => landing.map_err(target_err)?,
            Err(panic) => {
                self.panicked = Some(panic);
                return Err(Dispatch::Interrupted(Interrupt::Stopped));
            }
        };
        let sink = match landing.to {
            To::None if total != 0 => {
                return Err(target_err(format!(
                    "carries {total} bytes, and its header handler gave no landing for them"
                )))
            }
            To::None => Sink::None,
            To::Buffer(make) => Sink::Buffer(make(total)),
            To::Area {
                owner,
                base,
                bytes,
                size,
                target,
                _keep,
            } => {
                if owner != self.owner {
                    return Err(target_err(
                        "its header handler names an area of another process or run".into(),
                    ));
                }
                let blocks = target_blocks(&target, kind, lens, bytes, size).map_err(target_err)?;
                Sink::Blocks {
                    base,
                    blocks,
                    _keep,
                }
            }
        };
        let mut pending = Pending {
            seq,
            total,
            received: 0,
            sink,
            then: landing.then,
            tgt,
        };
        if !chunked {
            self.landed |= matches!(pending.sink, Sink::Blocks { .. });
            pending.sink.deliver(0, &rec[data_at..data_at + total]);
            pending.received = total;
        }
        Ok(Some(pending))
    }

    /// Message `pending` from `from` has all its data: runs its completion
    /// handler, moves its target counter, and marks it for acknowledgement.
    fn finish(&mut self, world: &World, from: usize, pending: Pending) -> Result<(), Dispatch> {
        let seq = pending.seq;
        if let Some(then) = pending.then {
            let kept = match pending.sink {
                Sink::Buffer(b) => Some(b),
                _ => None,
            };
            // The list of the last completion's sends, emptied: no
            // allocation per message.
            let mut sends = std::mem::take(&mut self.done_sends);
            let parts = DoneParts {
                src: from,
                data: kept,
                owner: self.owner,
                sends: &mut sends,
                ctx: self,
            };
            let ((call, loc), (pid, superstep)) = (self.site, (self.pid, self.superstep));
            let completed = guard::catch(
                Some(world),
                |m| {
                    let message =
                        format!("the completion handler of a message from process {from}: {m}");
                    Error::new(ErrorKind::Panicked { message }, call, pid, superstep, loc)
                },
                || then(parts),
            );
            match completed {
                Ok(Some(e)) => return Err(Dispatch::Target(e)),
                Ok(None) => {}
                Err(panic) => {
                    self.panicked = Some(panic);
                    return Err(Dispatch::Interrupted(Interrupt::Stopped));
                }
            }
            self.finish_counted(from, seq, pending.tgt)?;
            // Sent once the message is complete, so that the first record
            // to `from` can carry its acknowledgement (`post`).
            for out in sends.drain(..) {
                self.send(world, out).map_err(Dispatch::Interrupted)?;
            }
            self.done_sends = sends;
            return Ok(());
        }
        self.finish_counted(from, seq, pending.tgt)
    }

    /// Moves the target counter `tgt` of message `seq` from `from` and
    /// marks the message for acknowledgement.
    fn finish_counted(&mut self, from: usize, seq: u64, tgt: u64) -> Result<(), Dispatch> {
        let target_err = |reason: String| {
            Dispatch::Target(ErrorKind::AmTarget {
                origin: from,
                seq,
                reason,
            })
        };
        if tgt != 0 {
            let (index, generation) = (((tgt as u32).wrapping_sub(1)) as usize, (tgt >> 32) as u32);
            match self.counters.get(index) {
                Some((g, w)) if *g == generation => match w.upgrade() {
                    Some(c) => bump(&c),
                    None => {
                        return Err(target_err(format!(
                            "names counter {index} of this process, which was dropped"
                        )))
                    }
                },
                _ => {
                    return Err(target_err(format!(
                        "names counter {index} (generation {generation}), which is not a \
                         counter of this process"
                    )))
                }
            }
        }
        self.to_ack[from] = Some(seq);
        Ok(())
    }
}
