//! The sync protocol on engines whose processes do not share an address
//! space (`processes`, `mpi`): data moves as one total
//! exchange of per-destination streams per superstep, and gets are served
//! by the owners of their sources.
//!
//! With `q` the parity of the superstep that ends, each process:
//!
//! 1. Writes one stream per destination (itself included) into its channel
//!    `q`: a header `[flags][collective bytes][get requests][put bytes]
//!    [send bytes]`, then those sections. Collective bytes (registration and
//!    tag-size calls) are the same in every stream; get requests, puts and
//!    sends are the records of the shared-memory engines' mailboxes (a
//!    slot, an offset and a length, never an address). An hpput is sent as
//!    a put (BSPlib allows it to take effect at the sync).
//! 2. **Barrier A** with its flags; everyone leaves with their OR.
//! 3. If anyone made collective calls: decodes every process's calls from
//!    the stream addressed to it and applies them, exactly as the
//!    shared-memory path does (same checks, same errors).
//! 4. If anyone issued a get: serves the requests addressed to it, each
//!    resolved and checked in its own table, reading its own memory (no
//!    one has written anything yet: values are those of the end of the
//!    superstep), into reply streams in channel `REPLIES`; **barrier B**;
//!    copies the replies to its gets' destinations.
//! 5. Writes the puts addressed to it, each resolved and checked in its
//!    own table (after the gets: a put and a get to the same address leave
//!    the put's data), and indexes its messages in place, in the senders'
//!    streams.
//! 6. Settles tag sizes and registrations as the shared-memory path.
//!
//! Stream `q` of superstep `t` is rewritten at the sync of superstep `t+2`,
//! after barrier A of sync `t+1`: every reader has finished with its
//! messages by then. Replies are rewritten one sync later, after barrier A.

use std::sync::Arc;

use crate::codec::{read_location, write_location, Reader, Writer};
use crate::error::{Error, ErrorKind};
use crate::mailbox::{TagCalls, DATA, GET, REG};
use crate::mem::{pad8, Records};
use crate::process::{Loc, Process};
use crate::registration::{RegOp, RegOpKind};
use crate::stream::{StreamWriter, REPLIES};
use crate::superstep::{apply_puts, serve_gets, Refused};

const CALL: &str = "bsp_sync";

/// Words in a stream header.
const HEADER: usize = 5;

/// The sections of one received stream.
#[derive(Clone, Copy)]
pub(crate) struct Sections {
    collective: Records,
    gets: Records,
    puts: Records,
    sends: Records,
}

/// Splits a stream into its sections (an empty stream has empty ones).
fn sections(s: Records) -> Sections {
    if s.len() == 0 {
        let empty = s.sub(0, 0);
        return Sections {
            collective: empty,
            gets: empty,
            puts: empty,
            sends: empty,
        };
    }
    let coll = s.word(8);
    let gets = s.word(16);
    let puts = s.word(24);
    let sends = s.word(32);
    let mut at = 8 * HEADER;
    let mut take = |len: usize, padded: usize| {
        let r = s.sub(at, len);
        at += padded;
        r
    };
    Sections {
        collective: take(coll, pad8(coll)),
        gets: take(gets, gets),
        puts: take(puts, puts),
        sends: take(sends, sends),
    }
}

impl Process {
    /// `bsp_sync` by exchange (module docs).
    pub(crate) fn sync_exchange(&mut self, loc: Loc) -> Result<(), Error> {
        let world = Arc::clone(&self.world);
        let q = self.parity;

        // Step 1. A channel whose streams are all empty stays so: an empty
        // superstep writes nothing shared.
        if self.flags != 0 || !self.quiet[q] {
            // SAFETY: only this process writes its channel `q`, and nobody
            // reads it now (module docs).
            let mut w = unsafe { world.writer(self.pid, q) };
            self.compose(&mut w)
                .map_err(|needed| self.capacity_error(needed, loc))?;
            self.quiet[q] = self.flags == 0;
        }
        if self.dirty[q] {
            // Our outgoing half is staging only: it can be reused at once.
            // SAFETY: we own the mailbox, and in an exchange engine nobody
            // else reads it.
            unsafe { world.mailbox(self.pid).owner(q) }.clear();
            self.dirty[q] = false;
        }

        // Step 2.
        let all = world
            .barrier(&mut self.episode, self.flags)
            .map_err(|why| self.interrupted(why, CALL, loc))?;
        if all & (REG | GET | DATA) == 0 {
            self.inbox.clear();
            self.finish_collectives(None);
            self.next_superstep();
            return Ok(());
        }
        world
            .deliver(&mut self.episode, q)
            .map_err(|why| self.interrupted(why, CALL, loc))?;
        let me = self.pid;
        // Reused across syncs: steady-state supersteps allocate nothing.
        let mut streams = std::mem::take(&mut self.streams);
        streams.clear();
        // SAFETY: every process wrote its channel `q` before barrier A and
        // rewrites it only two syncs from now (module docs).
        streams.extend((0..self.nprocs).map(|src| sections(unsafe { world.stream(src, q, me) })));
        let result = self.exchange_steps(&streams, all, loc);
        self.streams = streams;
        result
    }

    /// Steps 3 to 6 of a sync by exchange, on the received `streams`.
    fn exchange_steps(&mut self, streams: &[Sections], all: u32, loc: Loc) -> Result<(), Error> {
        let world = Arc::clone(&self.world);

        // Step 3.
        let applied = if all & REG != 0 {
            let mut tags = Vec::with_capacity(self.nprocs);
            let mut ops = Vec::with_capacity(self.nprocs);
            for s in streams {
                let (t, o) = decode_collective(s.collective.bytes()).ok_or_else(|| {
                    self.fail(
                        ErrorKind::Startup {
                            detail: "a malformed stream".into(),
                        },
                        CALL,
                        loc,
                    )
                })?;
                tags.push(t);
                ops.push(o);
            }
            let ops: Vec<&[RegOp]> = ops.iter().map(Vec::as_slice).collect();
            Some(self.check_collectives(&tags, &ops, loc)?)
        } else {
            None
        };

        // Step 4.
        if all & GET != 0 {
            // SAFETY: only we write our reply channel; its readers of the
            // previous sync finished before barrier A.
            let mut w = unsafe { world.writer(self.pid, REPLIES) };
            // A refused request fails the run here, but the delivery still
            // takes place (empty streams from there on): on `mpi` the
            // others are in it, and leave it to find their replies short.
            let mut refusal = None;
            for (requester, s) in streams.iter().enumerate() {
                w.begin(requester);
                if refusal.is_none() {
                    let served = serve_gets(&self.reg, requester, s.gets, |src, len| {
                        // SAFETY: `serve_gets` resolved `src` in our own
                        // table: `len` bytes of memory we registered, alive
                        // until this sync settles registrations, and nobody
                        // writes it before barrier B.
                        unsafe { w.bytes(src, len) }
                    });
                    refusal = served.err().map(|refused| match refused {
                        Refused::Record(kind) => self.fail(kind, CALL, loc),
                        Refused::Full(needed) => self.capacity_error(needed, loc),
                    });
                }
                w.end();
            }
            drop(w);
            let delivered = world.deliver(&mut self.episode, REPLIES);
            if let Some(err) = refusal {
                return Err(err);
            }
            delivered.map_err(|why| self.interrupted(why, CALL, loc))?;
            let me = self.pid;
            // SAFETY: the owners wrote their replies before barrier B and
            // rewrite them only after barrier A of the next sync.
            self.write_replies(|owner| unsafe { world.stream(owner, REPLIES, me) })
                .map_err(|()| self.stopped(CALL, loc))?;
        }
        self.gets.clear();
        self.get_keep.clear();

        // Step 5.
        self.inbox.clear();
        for (sender, s) in streams.iter().enumerate() {
            apply_puts(&self.reg, sender, s.puts).map_err(|kind| self.fail(kind, CALL, loc))?;
            // SAFETY: the stream stays unchanged until barrier A of the
            // next sync, when the inbox is cleared (module docs).
            unsafe { self.inbox.collect(s.sends) };
        }

        // Step 6.
        self.finish_collectives(applied);
        self.next_superstep();
        Ok(())
    }

    fn capacity_error(&self, needed: usize, loc: Loc) -> Error {
        self.fail(
            ErrorKind::Capacity {
                needed,
                capacity: self.world.capacity(),
            },
            CALL,
            loc,
        )
    }

    /// Step 1: one stream per destination. `Err(bytes needed)` if the
    /// channel is too small.
    fn compose(&self, w: &mut StreamWriter<'_>) -> Result<(), usize> {
        let out = self.out_ref();
        let collective = if self.flags & REG != 0 {
            encode_collective(&out.tag, &out.reg_ops)
        } else {
            Vec::new()
        };
        for dest in 0..self.nprocs {
            w.begin(dest);
            let (gets, puts, sends) = (&out.gets[dest], &out.puts[dest], &out.sends[dest]);
            if self.flags != 0 {
                for word in [
                    self.flags as usize,
                    collective.len(),
                    gets.len(),
                    puts.len(),
                    sends.len(),
                ] {
                    w.word(word)?;
                }
                // SAFETY: each source is a live buffer of that many bytes.
                unsafe {
                    w.bytes(collective.as_ptr(), collective.len())?;
                    w.bytes(gets.as_ptr(), gets.len())?;
                    w.bytes(puts.as_ptr(), puts.len())?;
                    w.bytes(sends.as_ptr(), sends.len())?;
                }
            }
            w.end();
        }
        Ok(())
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
            RegOpKind::Pop { addr } => {
                w.u64(1);
                w.u64(addr as u64);
                w.u64(0);
            }
        }
        write_location(&mut w, op.location);
    }
    w.0
}

fn decode_collective(bytes: &[u8]) -> Option<(TagCalls, Vec<RegOp>)> {
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
        let (kind, addr, size) = (r.u64()?, r.usize()?, r.usize()?);
        let kind = match kind {
            0 => RegOpKind::Push { addr, size },
            1 => RegOpKind::Pop { addr },
            _ => return None,
        };
        ops.push(RegOp {
            kind,
            location: read_location(&mut r)?,
        });
    }
    Some((tag, ops))
}
