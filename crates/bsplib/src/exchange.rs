//! The exchange transport of the sync protocol (`superstep.rs`), for
//! engines whose processes do not share an address space (`processes`,
//! `mpi`): each process writes one stream per destination (itself
//! included) into its channel `q` (the superstep's parity) before barrier
//! A, and the engine delivers them; get replies are a second exchange on
//! channel `REPLIES`, which stands for barrier B.
//!
//! A stream is a header `[flags][collective bytes][get request bytes][put
//! bytes][send bytes]`, then those sections. Streams and sections start
//! at multiples of 64 bytes ([`SECTION_ALIGN`]) of the channel, which is
//! page-aligned where it is shared memory: a large put payload then sits
//! at the same offset within a cache line as it did in the mailbox, and
//! as its source (`mem::AlignedBuf::push_put`), so every copy of it is
//! mutually aligned. Collective
//! bytes (registration and tag-size calls, encoded here) are the same in
//! every stream; get requests, puts and messages are the records of the
//! mailbox (`mailbox.rs`), copied as they are: a slot, an offset and a
//! length, never an address, resolved by the receiver. An hpput is sent
//! as a put (BSPlib allows it to take effect at the sync). A superstep in
//! which this process sends nothing writes empty streams, once: a channel
//! whose streams are all empty stays so. A destination sent no data gets
//! an empty stream unless the superstep has collective calls (on `mpi`,
//! no message at all). On `processes` the streams are sparse (`compose`):
//! only destinations sent data get a stream of their own, and the
//! collective calls go once into a common stream.
//!
//! Stream `q` of superstep `t` is rewritten at the sync of superstep `t+2`,
//! after barrier A of sync `t+1`: every reader has finished with its
//! messages by then. Replies are rewritten one sync later, after barrier A.

use crate::codec::{read_location, write_location, Reader, Writer};
use crate::error::Error;
use crate::mailbox::{TagCalls, REG};
use crate::mem::Records;
use crate::process::{Loc, Process};
use crate::registration::{RegOp, RegOpKind};
use crate::stream::StreamWriter;

/// Words in a stream header.
const HEADER: usize = 5;

/// Where streams and their sections start: multiples of this many bytes.
const SECTION_ALIGN: usize = 64;

/// `n` rounded up to a multiple of [`SECTION_ALIGN`]; `None` on overflow.
#[inline]
fn section_end(n: usize) -> Option<usize> {
    Some(n.checked_add(SECTION_ALIGN - 1)? & !(SECTION_ALIGN - 1))
}

/// The sections of one received stream.
#[derive(Clone, Copy)]
pub(crate) struct Sections<'a> {
    pub(crate) collective: Records<'a>,
    pub(crate) gets: Records<'a>,
    pub(crate) puts: Records<'a>,
    pub(crate) sends: Records<'a>,
}

impl<'a> Sections<'a> {
    /// Splits a stream into its sections (an empty stream has empty
    /// ones); `None` if its header does not fit it.
    pub(crate) fn of(s: Records<'a>) -> Option<Sections<'a>> {
        if s.len() == 0 {
            let empty = s.sub(0, 0);
            return Some(Sections {
                collective: empty,
                gets: empty,
                puts: empty,
                sends: empty,
            });
        }
        let coll = s.try_word(8)?;
        let gets = s.try_word(16)?;
        let puts = s.try_word(24)?;
        let sends = s.try_word(32)?;
        let mut at = section_end(8 * HEADER)?;
        let mut take = |len: usize| {
            if len == 0 {
                // An empty section needs no room (a stream may end before
                // the alignment of its empty trailing sections).
                return Some(s.sub(0, 0));
            }
            s.try_ptr(at, len)?;
            let r = s.sub(at, len);
            at = section_end(at + len)?;
            Some(r)
        };
        Some(Sections {
            collective: take(coll)?,
            gets: take(gets)?,
            puts: take(puts)?,
            sends: take(sends)?,
        })
    }
}

impl Process {
    /// Step 1 of the sync: writes this superstep's streams into channel
    /// `q`. (The mailbox half they were staged in is kept until the sync
    /// has applied our own registration calls from it: `recycle_staging`.)
    pub(crate) fn publish(&mut self, q: usize, loc: Loc) -> Result<(), Error> {
        if self.flags != 0 || !self.quiet[q] {
            let world = std::sync::Arc::clone(&self.world);
            // SAFETY: only this process writes its channel `q`, and nobody
            // reads it now (module docs).
            let mut w = unsafe { world.writer(self.pid, q) };
            // The top of the channel holds this superstep's bulk payloads.
            w.limit(world.capacity() - self.bulk[q]);
            if let Err(needed) = self.compose(&mut w, q) {
                drop(w);
                return Err(self.fail(
                    crate::error::ErrorKind::Capacity {
                        needed,
                        capacity: world.capacity(),
                    },
                    "bsp_sync",
                    loc,
                ));
            }
            self.quiet[q] = self.flags == 0;
        }
        Ok(())
    }

    /// Step 1: one stream per destination. `Err(bytes needed)` if the
    /// channel is too small.
    ///
    /// On `processes` the streams are *sparse*: a destination this process
    /// sends no data to gets no stream of its own but the common stream
    /// (the header and the collective calls of a superstep with
    /// registration or tag-size calls, written once into the engine's
    /// cell, or nothing), and the engine's index says which destinations
    /// have a stream of their own, so that a receiver reads only the
    /// channels of the processes that sent it data. Only the destinations
    /// written in this superstep are looked at (`World::note_sender`).
    fn compose(&self, w: &mut StreamWriter<'_>, q: usize) -> Result<(), usize> {
        let out = self.out_ref();
        let collective = if self.flags & REG != 0 {
            encode_collective(&out.tag, &out.reg_ops)
        } else {
            Vec::new()
        };
        let stream = |dest: usize, w: &mut StreamWriter<'_>| -> Result<(), usize> {
            let (gets, puts, sends) = match out.for_dest(dest) {
                Some(to) => (to.gets.bytes(), to.puts.bytes(), to.sends.bytes()),
                None => (&[][..], &[][..], &[][..]),
            };
            w.align(SECTION_ALIGN)?;
            w.begin(dest);
            // A destination sent nothing gets an empty stream, unless the
            // superstep has collective calls, which every stream carries
            // (on `mpi` an empty stream is no message: `engine/mpi/nbx.rs`).
            let empty = gets.is_empty() && puts.is_empty() && sends.is_empty();
            if self.flags != 0 && !(empty && collective.is_empty()) {
                for word in [
                    self.flags as usize,
                    collective.len(),
                    gets.len(),
                    puts.len(),
                    sends.len(),
                ] {
                    w.word(word)?;
                }
                for section in [&collective[..], gets, puts, sends] {
                    w.align(SECTION_ALIGN)?;
                    // SAFETY: each section is a live buffer of that many
                    // bytes, not inside the channel.
                    unsafe { w.bytes(section.as_ptr(), section.len())? };
                }
            }
            w.end();
            Ok(())
        };
        let Some(shared) = self.world.shared() else {
            for dest in 0..self.nprocs {
                stream(dest, w)?;
            }
            return Ok(());
        };
        // SAFETY: we are `self.pid`, publishing channel `q`, which nobody
        // reads now (module docs).
        let mut publish = unsafe { shared.publish(self.pid, q) };
        // A stream of the header and the collective section alone, laid
        // out as `Sections::of` reads it (the section at `SECTION_ALIGN`).
        let common = (self.flags & REG != 0).then(|| {
            let start = SECTION_ALIGN.max(8 * HEADER);
            let mut bytes =
                Vec::with_capacity(start + collective.len().next_multiple_of(SECTION_ALIGN));
            for word in [self.flags as usize, collective.len(), 0, 0, 0] {
                bytes.extend_from_slice(&(word as u64).to_ne_bytes());
            }
            bytes.resize(start, 0);
            bytes.extend_from_slice(&collective);
            bytes.resize(start + collective.len().next_multiple_of(SECTION_ALIGN), 0);
            bytes
        });
        let pending = publish.take_pending();
        let result = if self.flags == 0 {
            Ok(())
        } else if !publish.set_common(common.as_deref()) {
            // Calls too long for the cell: in every destination's stream.
            (0..self.nprocs).try_for_each(|dest| {
                publish.own(dest);
                stream(dest, w)
            })
        } else {
            pending.iter().try_for_each(|&dest| {
                let dest = dest as usize;
                let data = out.for_dest(dest).is_some_and(|to| {
                    !(to.gets.bytes().is_empty()
                        && to.puts.bytes().is_empty()
                        && to.sends.bytes().is_empty())
                });
                // (A destination listed twice is written once.)
                if data && publish.own(dest) {
                    stream(dest, w)?;
                }
                Ok(())
            })
        };
        if self.flags == 0 {
            publish.set_common(None);
        }
        publish.recycle(pending);
        result
    }
}

fn encode_collective(tag: &TagCalls, ops: &[RegOp]) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(tag.calls.into());
    w.u64(tag.last as u64);
    write_location(&mut w, tag.location);
    w.u64(ops.len() as u64);
    for op in ops {
        match op.kind {
            RegOpKind::Push { addr, size } => {
                w.u64(0);
                w.u64(addr as u64);
                w.u64(size as u64);
            }
            RegOpKind::Pop { addr, claim } => {
                w.u64(1);
                w.u64(addr as u64);
                w.u64(claim.unwrap_or(u64::MAX));
            }
        }
        write_location(&mut w, op.location);
    }
    w.0
}

pub(crate) fn decode_collective(bytes: &[u8]) -> Option<(TagCalls, Vec<RegOp>)> {
    if bytes.is_empty() {
        return Some((TagCalls::default(), Vec::new()));
    }
    let mut r = Reader(bytes);
    let tag = TagCalls {
        calls: u32::try_from(r.u64()?).ok()?,
        last: r.usize()?,
        location: read_location(&mut r)?,
    };
    let n = r.usize()?;
    let mut ops = Vec::with_capacity(n.min(bytes.len()));
    for _ in 0..n {
        let (kind, addr, word) = (r.u64()?, r.usize()?, r.u64()?);
        let kind = match kind {
            0 => RegOpKind::Push {
                addr,
                size: usize::try_from(word).ok()?,
            },
            1 => RegOpKind::Pop {
                addr,
                claim: (word != u64::MAX).then_some(word),
            },
            _ => return None,
        };
        ops.push(RegOp {
            kind,
            location: read_location(&mut r)?,
        });
    }
    Some((tag, ops))
}
