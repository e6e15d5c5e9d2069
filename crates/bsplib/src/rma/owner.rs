//! The owner's side of the superstep's accumulate: the records noted in
//! the sync's walk of the put sections, and step 5b, which combines them
//! after the puts, senders in pid order, each sender's in issue order.

use crate::error::ErrorKind;
use crate::mem::PUT_BULK;
use crate::registration::Registry;
use crate::superstep::own_range;

use super::kernels::combine;
use super::{at_line, describe, undesc, RmaState, SeenSlot, ACCUMULATE, HEADER};

/// The error of an accumulate record the owner refuses.
fn invalid(sender: usize, detail: String) -> ErrorKind {
    ErrorKind::InvalidRecord {
        what: "accumulate",
        sender,
        detail,
    }
}

fn cut_short(sender: usize) -> ErrorKind {
    invalid(
        sender,
        "is cut short (its length runs past the end of the stream)".into(),
    )
}

impl RmaState {
    /// Step 5b of the sync, after every put of it was written: combines
    /// the accumulate records step 5 noted (`records`: `(sender, byte
    /// offset in its put section)`), in the order they were noted:
    /// senders in increasing pid order (the order step 5 walks them in on
    /// every engine), each sender's in issue order. `section(sender)` is
    /// the put section `sender` sent us, and on `processes` its channel
    /// (where large payloads are). Each record is resolved and checked in
    /// our own table.
    pub(crate) fn apply<'a>(
        &mut self,
        reg: &Registry,
        records: &[(usize, usize)],
        section: &mut dyn FnMut(usize) -> Option<Section<'a>>,
    ) -> Result<(), ErrorKind> {
        self.seen.clear();
        let mut view: Option<(usize, Section<'a>)> = None;
        let mut result = Ok(());
        for &(sender, at) in records {
            let puts = match view {
                Some((s, v)) if s == sender => v,
                _ => match section(sender) {
                    Some(v) => {
                        view = Some((sender, v));
                        v
                    }
                    None => {
                        result = Err(cut_short(sender));
                        break;
                    }
                },
            };
            result = apply_record(reg, &mut self.seen, sender, puts, at);
            if result.is_err() {
                break;
            }
        }
        result
    }
}

use crate::process::extension::Section;

/// Combines the accumulate record at byte `at` of `sender`'s put section
/// (noted, so its header is in the view) into our memory.
fn apply_record(
    reg: &Registry,
    seen: &mut Vec<SeenSlot>,
    sender: usize,
    (puts, bulk): Section<'_>,
    at: usize,
) -> Result<(), ErrorKind> {
    let (Some(slot), Some(offset), Some(len), Some(word)) = (
        puts.try_word(at),
        puts.try_word(at + 8),
        puts.try_word(at + 16),
        puts.try_word(at + 24),
    ) else {
        return Err(cut_short(sender));
    };
    let (len, bulk_len) = (len & !PUT_BULK, len & PUT_BULK != 0);
    let d = word as u16;
    let line = (word >> 32) as u32;
    let valid = undesc(d).filter(|(ty, op)| op.is_defined_on(*ty) && (word >> 16) & 0xffff == 0);
    let Some((ty, op)) = valid else {
        return Err(invalid(
            sender,
            format!(
                "names element type and operator {:#x}, which are not a valid pair",
                word & 0xffff_ffff
            ),
        ));
    };
    if len % ty.size() != 0 {
        return Err(invalid(
            sender,
            format!(
                "has {len} bytes, not a whole number of {} elements",
                ty.name()
            ),
        ));
    }
    let slot = slot as u64 & !ACCUMULATE;
    match seen.iter().find(|s| s.slot == slot) {
        None => seen.push(SeenSlot {
            slot,
            desc: d,
            origin: sender,
            line,
        }),
        Some(first) if first.desc != d => {
            return Err(ErrorKind::AccumulateMismatch {
                detail: format!(
                    "process {sender}{} accumulates with {} into registration slot {slot} of this \
                     process, into which process {}{} accumulates with {} in the same superstep",
                    at_line(line),
                    describe(d),
                    first.origin,
                    at_line(first.line),
                    describe(first.desc),
                ),
            })
        }
        Some(_) => {}
    }
    let dst = own_range(reg, "accumulate", sender, slot, offset, len)?;
    let src = if bulk_len {
        // The payload is in the sender's channel (`Process::stage_bulk`).
        let from = puts
            .try_word(at + HEADER)
            .ok_or_else(|| cut_short(sender))?;
        bulk.and_then(|b| b.try_ptr(from, len)).ok_or_else(|| {
            invalid(
                sender,
                format!("names {len} bytes at offset {from} of its channel, which are not in it"),
            )
        })?
    } else {
        puts.try_ptr(at + HEADER, len)
            .ok_or_else(|| cut_short(sender))?
    };
    // SAFETY: `dst` is `len` bytes of memory we registered (resolved and
    // checked in our own table), alive until this sync settles
    // registrations, and written by nobody else now; `src` is `len` bytes
    // of the view, which does not overlap our registered memory (a
    // mailbox or channel of the library's).
    unsafe { combine(ty, op, dst, src, len / ty.size()) };
    Ok(())
}
