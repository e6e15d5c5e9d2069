//! The profiler's h-relation: the counts of one superstep of one process,
//! and the walkers that count the records of the streams it sent and
//! received.

use crate::engine::DESCRIPTOR;
use crate::mailbox::HpPut;
use crate::mem::EXTENDED;
use crate::mem::{pad8, put_len, small_put_fields, Payload, Records, SMALL, VECTOR};
use crate::process::inbox::COLL_RECORD;

/// What one process sent and received in one superstep (see `PROFILE.md`,
/// "The h-relation").
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) bytes_out: u64,
    pub(crate) bytes_in: u64,
    pub(crate) records_out: u64,
    pub(crate) records_in: u64,
    pub(crate) puts_out: u64,
    pub(crate) puts_in: u64,
    pub(crate) hpputs_out: u64,
    pub(crate) hpputs_in: u64,
    pub(crate) gets_out: u64,
    pub(crate) get_bytes_in: u64,
    pub(crate) gets_served: u64,
    pub(crate) messages_out: u64,
    pub(crate) messages_in: u64,
    pub(crate) collective_out: u64,
    pub(crate) collective_in: u64,
    pub(crate) am_out: u64,
    pub(crate) am_in: u64,
    /// The generic slot, for record kinds still to come (accumulates):
    /// records this walker does not know are counted here.
    pub(crate) other_out: u64,
    pub(crate) other_in: u64,
}

impl Counts {
    /// The counts as `(column, value)` pairs, in the order of [`COLUMNS`]
    /// (from `bytes_out` to `other_in`): the sync slice's `args` and the
    /// row array both write them from here.
    pub(crate) fn pairs(&self) -> [(&'static str, u64); 19] {
        [
            ("bytes_out", self.bytes_out),
            ("bytes_in", self.bytes_in),
            ("records_out", self.records_out),
            ("records_in", self.records_in),
            ("puts_out", self.puts_out),
            ("puts_in", self.puts_in),
            ("hpputs_out", self.hpputs_out),
            ("hpputs_in", self.hpputs_in),
            ("gets_out", self.gets_out),
            ("get_bytes_in", self.get_bytes_in),
            ("gets_served", self.gets_served),
            ("messages_out", self.messages_out),
            ("messages_in", self.messages_in),
            ("collective_out", self.collective_out),
            ("collective_in", self.collective_in),
            ("am_out", self.am_out),
            ("am_in", self.am_in),
            ("other_out", self.other_out),
            ("other_in", self.other_in),
        ]
    }
}

/// Counts the put records of one stream: `(puts, hpputs, payload bytes,
/// unknown records)`. The layout is `superstep::apply_puts`'s; a record
/// this walker does not recognise stops the walk and counts one unknown.
pub(crate) fn count_puts(puts: Records<'_>) -> (u64, u64, u64, u64) {
    let (mut n, mut hp, mut bytes) = (0, 0, 0);
    let mut at = 0;
    while at < puts.len() {
        if let Some(first) = puts.try_word(at).filter(|&w| w as u64 & SMALL != 0) {
            n += 1;
            bytes += small_put_fields(first as u64).2 as u64;
            at += 16;
            continue;
        }
        let (Some(slot), Some(word)) = (puts.try_word(at), puts.try_word(at + 16)) else {
            return (n, hp, bytes, 1);
        };
        let slot = slot as u64;
        if slot & EXTENDED != 0 {
            // Not a put (its header is a word longer): counted as unknown
            // until accumulates have their own columns (PROFILE.md).
            return (n, hp, bytes, 1);
        }
        if slot & VECTOR != 0 {
            n += 1;
            bytes += word as u64;
            at += 40 + pad8(word);
        } else if slot & DESCRIPTOR != 0 {
            n += 1;
            bytes += word as u64;
            at += 24;
        } else {
            let (len, pad, payload) = put_len(word);
            bytes += len as u64;
            match payload {
                Payload::Remote => {
                    hp += 1;
                    at += 32;
                }
                Payload::Bulk => {
                    n += 1;
                    at += 32;
                }
                Payload::Inline => {
                    n += 1;
                    at += pad8(24 + pad + len);
                }
            }
        }
    }
    (n, hp, bytes, 0)
}

/// Counts get requests: `(requests, bytes asked for)`.
pub(crate) fn count_gets(gets: Records<'_>) -> (u64, u64) {
    let (mut n, mut bytes) = (0, 0);
    let mut at = 0;
    while at < gets.len() {
        let (Some(slot), Some(len)) = (gets.try_word(at), gets.try_word(at + 16)) else {
            break;
        };
        n += 1;
        bytes += len as u64;
        at += if slot as u64 & VECTOR != 0 { 40 } else { 24 };
    }
    (n, bytes)
}

/// Counts message records: `(messages, collective records, bytes of tags
/// and payloads)`.
pub(crate) fn count_sends(sends: Records<'_>) -> (u64, u64, u64) {
    let (mut n, mut coll, mut bytes) = (0, 0, 0);
    let mut at = 0;
    while at < sends.len() {
        let (Some(tag), Some(len)) = (sends.try_word(at), sends.try_word(at + 8)) else {
            break;
        };
        if tag == COLL_RECORD {
            coll += 1;
            bytes += len as u64;
            at += 16 + pad8(len);
        } else {
            n += 1;
            bytes += (tag + len) as u64;
            at += 16 + pad8(tag) + pad8(len);
        }
    }
    (n, coll, bytes)
}

/// Adds one stream's records to `c`, as sent (`out`) or received.
pub(super) fn add_stream(
    c: &mut Counts,
    out: bool,
    puts: Records<'_>,
    hpputs: &[HpPut],
    sends: Records<'_>,
    gets: Option<Records<'_>>,
) {
    let (n, hp, pbytes, unknown) = count_puts(puts);
    let hpbytes: u64 = hpputs.iter().map(|h| h.len as u64).sum();
    let hp = hp + hpputs.len() as u64;
    let (msgs, coll, sbytes) = count_sends(sends);
    let (served, _) = gets.map_or((0, 0), count_gets);
    let bytes = pbytes + hpbytes + sbytes;
    // Served get requests are counted apart (`gets_served`), not as
    // records in: where the requester reads the owner's memory itself
    // (shared memory, destinations outside its registered memory) no
    // request travels, and the counts would differ between engines.
    let records = n + hp + msgs + coll + unknown;
    if out {
        c.puts_out += n;
        c.hpputs_out += hp;
        c.messages_out += msgs;
        c.collective_out += coll;
        c.other_out += unknown;
        c.bytes_out += bytes;
        c.records_out += records;
    } else {
        c.puts_in += n;
        c.hpputs_in += hp;
        c.messages_in += msgs;
        c.collective_in += coll;
        c.other_in += unknown;
        c.gets_served += served;
        c.bytes_in += bytes;
        c.records_in += records;
    }
}
