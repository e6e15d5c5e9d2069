//! The owner's side of step 5: every record another process sent is
//! resolved in this process's own slot table and checked against the
//! registered extent before a byte is written (`own_range`): put records
//! (`apply_puts`), get requests (`serve_gets`), strided records.

use crate::engine::{Rendezvous, World, DESCRIPTOR};
use crate::error::ErrorKind;
use crate::mem::{
    self, pad8, Payload, Records, Shape, EXTENDED, EXTENDED_HEADER, PUT_BULK, SMALL, VECTOR,
};
use crate::registration::Registry;
/// The error of a stream that changed during the sync.
pub(super) fn changed(sender: usize) -> ErrorKind {
    ErrorKind::InvalidRecord {
        what: "stream",
        sender,
        detail: "no longer fits its channel (its sender wrote it during the sync)".into(),
    }
}

/// Why an owner did not serve a stream.
pub(crate) enum Refused {
    /// A record names memory we do not have.
    Record(ErrorKind),
    /// The reply channel is full (`Err(bytes needed)` of a stream writer).
    Full(usize),
}

/// Resolves a record's `(slot, offset, len)` in the owner's own table:
/// the address of the first byte, or the error that refuses the record.
/// This is the check that makes a record from another process harmless:
/// only memory this process registered, within its extent, is ever named.
#[inline]
pub(crate) fn own_range(
    reg: &Registry,
    what: &'static str,
    sender: usize,
    slot: u64,
    offset: usize,
    len: usize,
) -> Result<*mut u8, ErrorKind> {
    let invalid = |detail: String| ErrorKind::InvalidRecord {
        what,
        sender,
        detail,
    };
    let Some(entry) = reg.own(slot) else {
        return Err(invalid(format!(
            "names registration slot {slot}, which this process does not have"
        )));
    };
    if entry.addr == 0 {
        return Err(invalid(format!(
            "names registration slot {slot}, in which this process registered NULL"
        )));
    }
    match offset.checked_add(len) {
        Some(end) if end <= entry.size => {
            Ok(std::ptr::with_exposed_provenance_mut::<u8>(entry.addr).wrapping_add(offset))
        }
        _ => Err(invalid(format!(
            "names bytes {offset}..{} of registration slot {slot}, whose area on this process has {} bytes",
            offset.saturating_add(len),
            entry.size
        ))),
    }
}

/// Writes the put records `[slot][offset][len | pad << 56][pad][payload,
/// padded to 8]` (`mem::push_put`), or `[SMALL | len | slot | offset]
/// [payload]` for a word or less (`mem::SMALL`), that
/// `sender` addressed to us, each resolved and checked in our own table;
/// accumulate records (`rma.rs`) are noted in `accumulates`, to be
/// combined after every sender's puts.
/// Records before a refused one are written. Payloads may be elsewhere
/// ([`Elsewhere`]): in the sender's channel, in its memory, or (with a
/// rendezvous: `mpi`, someone sent large payloads) on their way: a
/// descriptor `[slot | DESCRIPTOR][offset][len]` receives its payload
/// into the range resolved and checked here, and a write overlapping a
/// receive in flight waits for it first (`ErrorKind::Stopped` if the run
/// failed elsewhere meanwhile).
pub(crate) fn apply_puts(
    reg: &Registry,
    sender: usize,
    puts: Records<'_>,
    elsewhere: Elsewhere<'_>,
    extended: &mut Vec<(usize, usize)>,
) -> Result<(), ErrorKind> {
    let Elsewhere {
        bulk,
        remote,
        rendezvous,
    } = elsewhere;
    let stopped = |_| ErrorKind::Stopped;
    let mut at = 0;
    while at < puts.len() {
        if at % 64 == 0 {
            // The records were written by another core: ask for them
            // ahead (this VM's hardware prefetch does not).
            puts.prefetch(at + mem::PREFETCH_AHEAD);
        }
        let first = puts.try_word(at).ok_or_else(|| cut_short("put", sender))? as u64;
        if first & SMALL != 0 {
            // A word or less: `[SMALL | len | slot | offset][payload]`.
            let (slot, offset, len) = mem::small_put_fields(first);
            let src = puts
                .try_ptr(at + 8, 8)
                .ok_or_else(|| cut_short("put", sender))?;
            // `own_range`, inline when the slot is the last one resolved
            // (`offset < 2^40`, `len <= 8`: no overflow).
            let dst = match reg.own_hit(slot) {
                Some(e) if e.addr != 0 && offset + len <= e.size => {
                    std::ptr::with_exposed_provenance_mut::<u8>(e.addr).wrapping_add(offset)
                }
                _ => own_range(reg, "put", sender, slot, offset, len)?,
            };
            if let Some(r) = rendezvous {
                r.before_write(dst, len).map_err(stopped)?;
            }
            // SAFETY: `dst` is `len` bytes of memory we registered
            // (resolved and checked in our own table, as `own_range`
            // does), alive until this sync settles registrations, and
            // written by nobody else now; `src` is in the view, which is
            // not registered memory.
            unsafe { mem::copy_small(src, dst, len) };
            at += 16;
            continue;
        }
        let (slot, offset, word) = range_at(puts, at).ok_or_else(|| cut_short("put", sender))?;
        if slot & EXTENDED != 0 {
            // An extension's, after every put (step 5b): noted here.
            at += note_extended(puts, at, sender, extended)?;
            continue;
        }
        if slot & VECTOR != 0 {
            // A strided put: `[..][block][stride]`, then the payload packed.
            let (dst, to) = strided_range(reg, "put", sender, puts, at, slot, offset, word, true)?;
            let src = puts
                .try_ptr(at + 40, word)
                .ok_or_else(|| cut_short("put", sender))?;
            if let Some(r) = rendezvous {
                // `strided_range` checked the span (and `to.count >= 1`:
                // the block divides a non-empty length, or the span is 0).
                r.before_write(dst, to.span().unwrap_or(0))
                    .map_err(stopped)?;
            }
            // SAFETY: the blocks of `to` from `dst` are memory we
            // registered (resolved and checked in our own table), alive
            // until this sync settles registrations, and written by nobody
            // else now; `src` is `word` bytes in the view.
            unsafe { mem::copy_shaped(src, Shape::contiguous(word), dst, to) };
            at += 40 + pad8(word);
            continue;
        }
        if let Some(r) = rendezvous.filter(|_| slot & DESCRIPTOR != 0) {
            let dst = own_range(reg, "put", sender, slot & !DESCRIPTOR, offset, word)?;
            r.receive(sender, dst, word).map_err(stopped)?;
            at += 24;
            continue;
        }
        let (len, pad, payload) = mem::put_len(word);
        if payload == Payload::Remote {
            // An hpput on `processes`: the source is in the sender's memory.
            let from = puts
                .try_word(at + 24)
                .ok_or_else(|| cut_short("put", sender))?;
            let dst = own_range(reg, "put", sender, slot, offset, len)?;
            let refused = |why: String| ErrorKind::InvalidRecord {
                what: "put",
                sender,
                detail: format!("names {len} bytes at address {from:#x} of its memory: {why}"),
            };
            let world = remote.ok_or_else(|| refused("this engine cannot read them".into()))?;
            // SAFETY: `dst` is `len` bytes of memory we registered
            // (resolved and checked in our own table), alive until this
            // sync settles registrations, and written by nobody else now;
            // the source is in the sender's area memory (which it does not
            // write until barrier C: it promised), or the kernel checks it.
            unsafe { world.read_elsewhere(sender, from, dst, len) }.map_err(refused)?;
            at += 32;
            continue;
        }
        if payload == Payload::Bulk {
            // The payload is in the sender's channel (`Process::push_bulk`).
            let from = puts
                .try_word(at + 24)
                .ok_or_else(|| cut_short("put", sender))?;
            let src = bulk.and_then(|b| b.try_ptr(from, len)).ok_or_else(|| {
                ErrorKind::InvalidRecord {
                    what: "put",
                    sender,
                    detail: format!(
                        "names {len} bytes at offset {from} of its channel, which are not in it"
                    ),
                }
            })?;
            let dst = own_range(reg, "put", sender, slot, offset, len)?;
            // SAFETY: `dst` is `len` bytes of memory we registered
            // (resolved and checked in our own table), alive until this
            // sync settles registrations, and written by nobody else now;
            // `src` is inside the sender's channel (checked), which it
            // does not write until a later superstep.
            unsafe { mem::copy(src, dst, len) };
            at += 32;
            continue;
        }
        let Some(src) = puts.try_ptr(at + 24 + pad, len) else {
            return Err(cut_short("put", sender));
        };
        let dst = own_range(reg, "put", sender, slot, offset, len)?;
        if let Some(r) = rendezvous {
            r.before_write(dst, len).map_err(stopped)?;
        }
        // SAFETY: `dst` is `len` bytes of memory we registered (resolved
        // and checked in our own table above), alive until this sync
        // settles registrations, and written by nobody else now; `src` is
        // in the view.
        unsafe { mem::copy(src, dst, len) };
        at += pad8(24 + pad + len);
    }
    Ok(())
}

/// Step 5 met an [`EXTENDED`] record at byte `at` of `sender`'s put
/// section: notes it for step 5b and returns its bytes (header and padded
/// payload, or header and channel offset); `Err` if it does not fit the
/// section.
fn note_extended(
    puts: Records<'_>,
    at: usize,
    sender: usize,
    extended: &mut Vec<(usize, usize)>,
) -> Result<usize, ErrorKind> {
    let cut = || ErrorKind::InvalidRecord {
        what: crate::mem::EXTENDED_WHAT,
        sender,
        detail: "is cut short (its length runs past the end of the stream)".into(),
    };
    let len = puts.try_word(at + 16).ok_or_else(cut)?;
    let bytes = if len & PUT_BULK != 0 {
        EXTENDED_HEADER + 8
    } else {
        len.checked_add(EXTENDED_HEADER + 7)
            .map(|b| b & !7)
            .ok_or_else(cut)?
    };
    puts.try_ptr(at, bytes).ok_or_else(cut)?;
    extended.push((sender, at));
    Ok(bytes)
}

/// Where the payloads of a sender's put records may be besides the
/// records themselves.
#[derive(Clone, Copy)]
pub(crate) struct Elsewhere<'a> {
    /// `processes`: the sender's channel (`PUT_BULK` records).
    pub(crate) bulk: Option<Records<'a>>,
    /// `processes`: the world, which reads the sender's memory named by
    /// `PUT_REMOTE` records (in area memory, or by cross-memory attach).
    pub(crate) remote: Option<&'a World>,
    /// `mpi` when someone sent large payloads: the rendezvous
    /// (descriptors).
    pub(crate) rendezvous: Option<&'a Rendezvous>,
}

/// The `[slot][offset][len]` that starts the record at byte `at` (a put's
/// header, a get request), or `None` if the stream ends first.
#[inline]
fn range_at(records: Records<'_>, at: usize) -> Option<(u64, usize, usize)> {
    let slot = records.try_word(at)? as u64;
    Some((slot, records.try_word(at + 8)?, records.try_word(at + 16)?))
}

/// The error of a record that does not fit in its stream.
fn cut_short(what: &'static str, sender: usize) -> ErrorKind {
    ErrorKind::InvalidRecord {
        what,
        sender,
        detail: "is cut short (its length runs past the end of the stream)".into(),
    }
}

/// Serves the get requests `[slot][offset][len]` of `requester`, each
/// resolved and checked in our own table: `emit(source, len)` for each, in
/// request order.
pub(crate) fn serve_gets(
    reg: &Registry,
    requester: usize,
    reqs: Records<'_>,
    mut emit: impl FnMut(*const u8, Shape) -> Result<(), usize>,
) -> Result<(), Refused> {
    let mut at = 0;
    while at < reqs.len() {
        let (slot, offset, len) =
            range_at(reqs, at).ok_or_else(|| Refused::Record(cut_short("get", requester)))?;
        if slot & VECTOR != 0 {
            let (src, shape) =
                strided_range(reg, "get", requester, reqs, at, slot, offset, len, false)
                    .map_err(Refused::Record)?;
            emit(src, shape).map_err(Refused::Full)?;
            at += 40;
            continue;
        }
        let src = own_range(reg, "get", requester, slot, offset, len).map_err(Refused::Record)?;
        emit(src, Shape::contiguous(len)).map_err(Refused::Full)?;
        at += 24;
    }
    Ok(())
}

/// Resolves the strided record `[slot | VECTOR][offset][len][block]
/// [stride]` at byte `at` in the owner's own table: the address of the
/// first block and the shape, or the error that refuses the record. The
/// blocks must divide `len`, and be disjoint when they are written
/// (`disjoint`: a put's destination); the span of all blocks must lie in
/// the area.
#[allow(clippy::too_many_arguments)]
fn strided_range(
    reg: &Registry,
    what: &'static str,
    sender: usize,
    records: Records<'_>,
    at: usize,
    slot: u64,
    offset: usize,
    len: usize,
    disjoint: bool,
) -> Result<(*mut u8, Shape), ErrorKind> {
    let (Some(block), Some(stride)) = (records.try_word(at + 24), records.try_word(at + 32)) else {
        return Err(cut_short(what, sender));
    };
    let invalid = |detail: String| ErrorKind::InvalidRecord {
        what,
        sender,
        detail,
    };
    if block == 0 || len % block != 0 {
        return Err(invalid(format!(
            "has {len} bytes in blocks of {block}, which do not divide them"
        )));
    }
    let shape = Shape {
        block,
        stride,
        count: len / block,
    };
    if disjoint && !shape.disjoint() {
        return Err(invalid(format!(
            "writes blocks of {block} bytes at a stride of {stride}, which overlap"
        )));
    }
    let span = shape.span().ok_or_else(|| {
        invalid(format!(
            "spans {} blocks of {block} bytes at a stride of {stride}, which overflows",
            shape.count
        ))
    })?;
    let first = own_range(reg, what, sender, slot & !VECTOR, offset, span)?;
    Ok((first, shape))
}
