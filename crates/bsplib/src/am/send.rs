//! Sending: the [`Source`] of a message's data, the record a send builds
//! (its arguments checked with LAPI's codes, large data cut into `DATA`
//! records), its posting behind the backlogs, and [`Am::send`].

use std::collections::VecDeque;
use std::ops::Range;
use std::rc::Rc;

use bytemuck::Pod;

use super::counters::bump;
use super::handlers::Named;
use super::mode::not_active;
use super::{
    pad8, Am, Cmpl, Context, Counters, Handler, CHUNKED, EAGER, EPOCH, HEADER_WORDS, KIND_ACK,
    KIND_AM, KIND_DATA, MAX_DATA, MAX_UHDR, VEC_CONTIG, VEC_GENERIC, VEC_IO, VEC_STRIDED,
};
use crate::bsp::pid_arg;
use crate::engine::{Interrupt, World};
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::strided::Strided;

// ----- what the origin sends -----------------------------------------------------

/// A message's data on the origin, copied at the send (so the origin
/// counter moves before [`Am::send`] returns).
///
/// A slice, an array or a `Vec` of `T`s is a contiguous source
/// ([`From`]): `send` takes `&data` for [`Contiguous`](Source::Contiguous)
/// and `&[]` for no data.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a, T> {
    /// One block.
    Contiguous(&'a [T]),
    /// Element ranges of a slice, each a block (`LAPI_GEN_IOVECTOR`).
    Io(&'a [T], &'a [Range<usize>]),
    /// A strided selection of a slice (`LAPI_GEN_STRIDED_XFER`).
    Strided(&'a [T], Strided),
    /// Element ranges of a slice, the bytes flowing in order into the
    /// target's blocks (`LAPI_GEN_GENERIC`).
    Generic(&'a [T], &'a [Range<usize>]),
}

impl<'a, T> From<&'a [T]> for Source<'a, T> {
    fn from(s: &'a [T]) -> Self {
        Source::Contiguous(s)
    }
}

impl<'a, T, const N: usize> From<&'a [T; N]> for Source<'a, T> {
    fn from(s: &'a [T; N]) -> Self {
        Source::Contiguous(s)
    }
}

impl<'a, T> From<&'a Vec<T>> for Source<'a, T> {
    fn from(s: &'a Vec<T>) -> Self {
        Source::Contiguous(s)
    }
}

// ----- the context ---------------------------------------------------------------

/// A record ready to go to `to`.
pub(crate) struct Outgoing {
    pub(super) to: usize,
    pub(super) record: Vec<u8>,
    /// The `DATA` records of a large message, in order.
    pub(crate) chunks: Vec<Vec<u8>>,
    pub(super) cmpl: Option<Cmpl>,
}

/// A message sent and not yet acknowledged.
pub(super) struct InFlight {
    pub(super) seq: u64,
    pub(super) cmpl: Option<Cmpl>,
}

impl Context {
    /// Builds the record of a send, checking its arguments: what the
    /// origin can get wrong, with LAPI's codes.
    pub(super) fn build<T: Pod>(
        &self,
        pid: usize,
        handler: Named,
        uhdr: &[u8],
        src: &Source<'_, T>,
        counters: &Counters<'_>,
    ) -> Result<Outgoing, ErrorKind> {
        let arg = |code: &'static str, detail: String| ErrorKind::AmArgument { code, detail };
        if pid >= self.nprocs {
            return Err(arg(
                "LAPI_ERR_TGT",
                format!("target {pid} is not a process (there are {})", self.nprocs),
            ));
        }
        match self.handlers.get(handler.index as usize) {
            Some((hash, _)) if *hash == handler.hash => {}
            _ => {
                return Err(arg(
                    "LAPI_ERR_HDR_HNDLR_NULL",
                    format!("handler {} is not one of this run's", handler.index),
                ))
            }
        }
        if [counters.org, counters.cmpl]
            .into_iter()
            .flatten()
            .any(|c| !self.mine(c))
        {
            return Err(arg(
                "LAPI_ERR_CNTR_NULL",
                "an origin or completion counter of another process, run or am_init session".into(),
            ));
        }
        if uhdr.len() > MAX_UHDR {
            return Err(arg(
                "LAPI_ERR_UHDR_LEN",
                format!(
                    "the user header has {} bytes, more than {MAX_UHDR}",
                    uhdr.len()
                ),
            ));
        }
        let size = std::mem::size_of::<T>();
        let bytes_of = |r: &Range<usize>, len: usize, what: &'static str| {
            if r.start > r.end || r.end > len {
                Err(arg(
                    "LAPI_ERR_ORG_VEC_ADDR",
                    format!("{what} range {r:?} is not inside the source's {len} elements"),
                ))
            } else {
                Ok((r.start * size, (r.end - r.start) * size))
            }
        };
        // The blocks of the source as byte ranges `(offset, len)`, checked,
        // before anything is copied; then the vector kind and the lengths.
        let elems: &[T] = match *src {
            Source::Contiguous(s)
            | Source::Io(s, _)
            | Source::Generic(s, _)
            | Source::Strided(s, _) => s,
        };
        let (b, n_elems): (&[u8], usize) = (bytemuck::cast_slice(elems), elems.len());
        // A contiguous source is one block, with no list to allocate.
        let whole = [(0, b.len())];
        let listed: Vec<(usize, usize)>;
        let (vec, blocks): (u64, &[(usize, usize)]) = match *src {
            Source::Contiguous(_) => (VEC_CONTIG, &whole),
            Source::Io(_, ranges) | Source::Generic(_, ranges) => {
                listed = ranges
                    .iter()
                    .map(|r| bytes_of(r, n_elems, "an io-vector"))
                    .collect::<Result<Vec<_>, _>>()?;
                let vec = if matches!(src, Source::Io(..)) {
                    VEC_IO
                } else {
                    VEC_GENERIC
                };
                (vec, &listed)
            }
            Source::Strided(_, st) => {
                if st.count > 1 && st.stride < st.block {
                    return Err(arg(
                        "LAPI_ERR_ORG_STRIDE",
                        format!(
                            "the stride {} is less than the block {}",
                            st.stride, st.block
                        ),
                    ));
                }
                listed = st
                    .indices_blocks()
                    .ok_or_else(|| {
                        arg(
                            "LAPI_ERR_ORG_EXTENT",
                            "the strided selection overflows the address space".into(),
                        )
                    })?
                    .map(|r| bytes_of(&r, n_elems, "a strided block"))
                    .collect::<Result<Vec<_>, _>>()?;
                (VEC_STRIDED, &listed)
            }
        };
        let total = blocks
            .iter()
            .try_fold(0usize, |a, &(_, n)| a.checked_add(n))
            .filter(|&t| t <= MAX_DATA)
            .ok_or_else(|| {
                arg(
                    "LAPI_ERR_DATA_LEN",
                    format!("the message has more than {MAX_DATA} bytes of data"),
                )
            })?;
        let lens_words = if vec == VEC_STRIDED || vec == VEC_CONTIG {
            1
        } else {
            blocks.len()
        };
        let head = 8 * (HEADER_WORDS + lens_words) + pad8(uhdr.len());
        // Larger messages send their data in pieces after the record.
        let eager = EAGER.min(self.largest);
        let chunked = head + pad8(total) > eager;
        let len = if chunked { head } else { head + pad8(total) };
        if len > self.largest {
            return Err(arg(
                "LAPI_ERR_DATA_LEN",
                format!(
                    "the message's header and block lengths need {len} bytes; this engine \
                     carries records of at most {}",
                    self.largest
                ),
            ));
        }
        let tgt = counters.tgt.map_or(0, |c| {
            // `index + 1` (0 is "no counter") in 32 bits: an id whose
            // index is `u32::MAX` (forged through `Pod`) becomes an index
            // the target does not have.
            u64::from(c.index.wrapping_add(1).max(1)) | (u64::from(c.generation) << 32)
        });
        // The buffer of the last record posted, if it came back.
        let mut r = self.spare.take();
        r.clear();
        r.reserve(len);
        let mut word = |w: u64| r.extend_from_slice(&w.to_ne_bytes());
        word(len as u64 | KIND_AM << 32 | vec << 40 | if chunked { CHUNKED } else { 0 });
        word(self.pid as u64); // the sequence number is set when it is sent
        word(u64::from(handler.index) | u64::from(handler.hash) << 32);
        word(tgt);
        word(uhdr.len() as u64 | (blocks.len() as u64) << 32);
        word(total as u64);
        if lens_words == blocks.len() && vec != VEC_CONTIG {
            for &(_, n) in blocks {
                word(n as u64);
            }
        } else {
            word(blocks.first().map_or(0, |&(_, n)| n) as u64);
        }
        r.extend_from_slice(uhdr);
        r.resize(r.len() + pad8(uhdr.len()) - uhdr.len(), 0);
        let mut chunks = Vec::new();
        if chunked {
            // The data in fill order, then cut into `DATA` records.
            let mut data = Vec::with_capacity(total);
            for &(at, n) in blocks {
                data.extend_from_slice(&b[at..at + n]);
            }
            let piece = eager - 24;
            for (i, part) in data.chunks(piece).enumerate() {
                let n = 24 + pad8(part.len());
                let mut c = Vec::with_capacity(n);
                c.extend_from_slice(&(n as u64 | KIND_DATA << 32).to_ne_bytes());
                c.extend_from_slice(&(self.pid as u64).to_ne_bytes());
                c.extend_from_slice(&((i * piece) as u64).to_ne_bytes());
                c.extend_from_slice(part);
                c.resize(n, 0);
                chunks.push(c);
            }
        } else {
            for &(at, n) in blocks {
                r.extend_from_slice(&b[at..at + n]);
            }
        }
        r.resize(len, 0);
        if let Some(c) = counters.org {
            bump(&c.cell);
        }
        Ok(Outgoing {
            to: pid,
            record: r,
            chunks,
            cmpl: counters.cmpl.map(|c| Cmpl::Rust(Rc::downgrade(&c.cell))),
        })
    }

    /// Sends a built record now (or holds it while in a barrier), in order
    /// behind any backlog for its destination.
    pub(crate) fn send(&mut self, world: &World, out: Outgoing) -> Result<(), Interrupt> {
        if self.in_barrier {
            self.held.push(out);
            return Ok(());
        }
        let to = out.to;
        self.sent[to] += 1;
        let seq = self.sent[to];
        let word1 = (self.pid as u64 | seq << 32).to_ne_bytes();
        let epoch = (self.epoch & 1) << 48;
        let stamp = |r: &mut Vec<u8>| {
            let w0 = u64::from_ne_bytes(r[..8].try_into().unwrap_or_default());
            r[..8].copy_from_slice(&((w0 & !EPOCH) | epoch).to_ne_bytes());
            r[8..16].copy_from_slice(&word1);
        };
        let mut record = out.record;
        stamp(&mut record);
        self.in_flight[to].push_back(InFlight {
            seq,
            cmpl: out.cmpl,
        });
        self.post(world, to, record)?;
        for mut chunk in out.chunks {
            stamp(&mut chunk);
            self.post(world, to, chunk)?;
        }
        Ok(())
    }

    /// Posts a record to `to` behind its backlog. An acknowledgement owed
    /// to `to` rides in the same message, ahead of the record (one
    /// message where there were two: an answer sent by a completion
    /// handler carries the acknowledgement of its question).
    pub(crate) fn post(
        &mut self,
        world: &World,
        to: usize,
        record: Vec<u8>,
    ) -> Result<(), Interrupt> {
        let ack = self.ride(world, to, record.len());
        if self.backlog[to].is_empty() && world.am_post(self.pid, to, &[ack.bytes(), &record])? {
            // Copied out: the buffer serves the next record.
            if record.capacity() <= EAGER {
                *self.spare.get_mut() = record;
            }
            return Ok(());
        }
        ack.keep(&mut self.backlog[to]);
        self.backlog[to].push_back(record);
        Ok(())
    }

    /// [`post`](Self::post) of a record the caller keeps (copied only if
    /// it must wait for room).
    pub(crate) fn post_slice(
        &mut self,
        world: &World,
        to: usize,
        record: &[u8],
    ) -> Result<(), Interrupt> {
        let ack = self.ride(world, to, record.len());
        if self.backlog[to].is_empty() && world.am_post(self.pid, to, &[ack.bytes(), record])? {
            return Ok(());
        }
        ack.keep(&mut self.backlog[to]);
        self.backlog[to].push_back(record.to_vec());
        Ok(())
    }

    /// The acknowledgement owed to `to`, taken to ride ahead of a record
    /// of `len` bytes (none owed, or no room for both in one record of
    /// this engine: empty).
    fn ride(&mut self, world: &World, to: usize, len: usize) -> Ack {
        if len + Ack::LEN > world.am_max_record() {
            return Ack::none();
        }
        match self.to_ack[to].take() {
            Some(seq) => self.ack(seq),
            None => Ack::none(),
        }
    }

    /// The acknowledgement of every message up to `seq` from the process
    /// it goes to.
    pub(super) fn ack(&self, seq: u64) -> Ack {
        let epoch = (self.epoch & 1) << 48;
        let mut bytes = [0; Ack::LEN];
        bytes[..8].copy_from_slice(&(Ack::LEN as u64 | KIND_ACK << 32 | epoch).to_ne_bytes());
        bytes[8..].copy_from_slice(&(self.pid as u64 | seq << 32).to_ne_bytes());
        Ack {
            bytes,
            len: Ack::LEN,
        }
    }

    /// Posts what the backlogs hold, as far as the inboxes take it.
    pub(super) fn flush(&mut self, world: &World) -> Result<(), Interrupt> {
        for to in 0..self.nprocs {
            while let Some(r) = self.backlog[to].front() {
                if !world.am_post(self.pid, to, &[r])? {
                    break;
                }
                self.backlog[to].pop_front();
            }
        }
        Ok(())
    }
}

impl Am<'_> {
    /// Sends an active message to process `pid` (itself included): the
    /// header `header` and the data `data`, both copied now (so the `org`
    /// counter moves before this returns). The target's header handler
    /// `handler` runs at its next progress point. The data is a
    /// [`Source`] of `D`s, or converts to one: `&data` for a slice, an
    /// array or a `Vec`, `&[]` for none.
    ///
    /// ```
    /// use bsplib::am::{Counters, Handlers, Landing, Target};
    /// use bsplib::Area;
    /// bsplib::run(1, |bsp| {
    ///     let area = Area::<u64>::new(bsp, 8);
    ///     let to = area.am_ref();
    ///     let mut hs = Handlers::new();
    ///     // A header of one `u32` (where the data goes), data of `u64`s.
    ///     let put = hs.add::<u32, u64>("put", move |a| {
    ///         Landing::into(&to, Target::At(a.header()[0] as usize))
    ///     });
    ///     let nothing = hs.add::<u8, u8>("nothing", |_| Landing::none());
    ///     bsp.am().init(hs)?;
    ///     bsp.am().send(0, put, &[2], &[7u64, 8], Counters::none())?;
    ///     let v: Vec<u64> = vec![1, 3];
    ///     bsp.am().send(0, put, &[6], &v, Counters::none())?;
    ///     bsp.am().send(0, nothing, &[1], &[], Counters::none())?; // no data
    ///     bsp.sync()?;
    ///     assert_eq!(area.as_slice(bsp), [0, 0, 7, 8, 0, 0, 1, 3]);
    ///     bsp.am().term()
    /// })?;
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AmArgument`] with LAPI's code: `LAPI_ERR_TGT` (a pid
    /// out of range), `LAPI_ERR_HDR_HNDLR_NULL` (a handler not of this
    /// run), `LAPI_ERR_UHDR_LEN` (a header over [`MAX_UHDR`] bytes),
    /// `LAPI_ERR_ORG_STRIDE` (a stride below the block),
    /// `LAPI_ERR_ORG_VEC_ADDR` (a range outside the source),
    /// `LAPI_ERR_DATA_LEN` (more data than the engine carries in one
    /// message); [`ErrorKind::AmMismatch`] outside active-message mode.
    /// Errors found on the target (a landing that does not fit, an unknown
    /// counter) stop the run there. Any error stops the run.
    ///
    /// # BSP cost
    ///
    /// The header's and the data's bytes towards this process's outgoing
    /// and `pid`'s incoming h-relation of this superstep.
    #[track_caller]
    pub fn send<'d, H: Pod, D: Pod>(
        &self,
        pid: usize,
        handler: Handler<H, D>,
        header: &[H],
        data: impl Into<Source<'d, D>>,
        counters: Counters<'_>,
    ) -> Result<(), Error> {
        const CALL: &str = "am_send";
        let loc = Some(SourceLocation::caller());
        let mut p = self.bsp.process();
        p.check_running(CALL, loc)?;
        let Some(mut ctx) = p.ext.am_mut().ctx.take() else {
            return Err(not_active(&p, CALL, loc));
        };
        let pid = usize::try_from(pid_arg(pid)).unwrap_or(usize::MAX);
        let src = data.into();
        let built = ctx.build(
            pid,
            handler.named,
            bytemuck::cast_slice(header),
            &src,
            &counters,
        );
        let r = match built {
            Ok(out) => ctx
                .send(&p.world, out)
                .map_err(|why| p.interrupted(why, CALL, loc)),
            Err(kind) => Err(p.fail(kind, CALL, loc)),
        };
        p.ext.am_mut().ctx = Some(ctx);
        r
    }
}

/// An acknowledgement record (`KIND_ACK`, 16 bytes), or none.
pub(super) struct Ack {
    bytes: [u8; Ack::LEN],
    len: usize,
}

impl Ack {
    const LEN: usize = 16;

    fn none() -> Self {
        Ack {
            bytes: [0; Ack::LEN],
            len: 0,
        }
    }

    /// The record's bytes (empty for none).
    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Queued in `backlog` as a record of its own, if any.
    fn keep(&self, backlog: &mut VecDeque<Vec<u8>>) {
        if self.len > 0 {
            backlog.push_back(self.bytes().to_vec());
        }
    }
}
