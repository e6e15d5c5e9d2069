//! The delivery of a superstep's streams with no exchange of every
//! pair's lengths (`README.md` beside this file, "The sync"). Before, a
//! delivery was an `MPI_Alltoall` of the lengths then an `MPI_Alltoallv`:
//! two collectives over every pair of processes at every sync with data,
//! however few talked. Now only non-empty streams are messages (tag
//! [`STREAM_TAG`]` + ch`), started by the reduction that follows the
//! channel's writing (barrier A for channel `q`; for the replies, a
//! reduction that stands for barrier B: [`deliver`](Mpi::deliver)), and
//! the receiver learns how many to wait for in one of two ways, the same
//! on every rank of a run (decided at its start, `Mpi::new`):
//!
//! - **Counted** (runs of at most [`COUNTED_MAX`] processes): the
//!   reduction's operands carry, after its four words, the number of
//!   streams sent to each process (summed): each rank learns how many
//!   streams it receives with the barrier itself. The sends are plain
//!   `MPI_Isend`s started before the reduction, so the streams travel
//!   while it runs; [`deliver`](Mpi::deliver) then waits until that many
//!   came and this rank's own sends completed (so that no transfer waits
//!   for its sender's next MPI call).
//! - **Non-blocking consensus** (NBX: Hoefler, Siebert and Lumsdaine,
//!   "Scalable communication protocols for dynamic sparse data exchange",
//!   PPoPP 2010; larger runs, where `p` counts per reduction step would
//!   cost more than they save, or `BSPLIB_MPI_NBX=1` on rank 0): the sends
//!   are synchronous (`MPI_Issend`), and the reduction is entered only
//!   once all of them were *matched* by their destinations. Every wait of
//!   a reduction takes the streams that came meanwhile
//!   ([`drain_streams`](Mpi::drain_streams)). A reduction completes on a
//!   rank only after every rank entered it, each after its sends were
//!   matched; a send to this rank was matched by this rank's probe, which
//!   received it at once: when barrier A completes every stream of the
//!   superstep is in its destination's buffer, and nothing was counted.
//!
//! Also:
//!
//! - **Which delivery a message belongs to**: the channel's tag says; a
//!   message of channel `ch` that comes after `ch`'s last delivery was
//!   finalised begins its next one (the buffer is emptied first). The
//!   sender of that next delivery passed a barrier this rank entered only
//!   after it stopped reading the last one (`exchange.rs`: stream `q` is
//!   rewritten two syncs later; replies at the next sync with gets).
//! - **Ended processes** take part in reductions until none syncs
//!   (`Mpi::finish`, `Mpi::ended`); their waits take streams too (NBX),
//!   so a send to a process that ended completes, and its sender learns
//!   of the end from the reduction. A sync that fails after barrier A
//!   may leave counted sends in flight: their buffers are never reused
//!   (the process makes no further sync) and are leaked at the end
//!   ([`nbx_drop`](Mpi::nbx_drop)).

use std::sync::atomic::Ordering;

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::*;

use super::am::lock;
use super::rendezvous::{test_all, Request};
use super::{progress, Interrupt, Mpi, CHANNELS};

/// Message tag of the streams of channel `ch`: `STREAM_TAG + ch` (after
/// the deadline's queries and answers, 107 and 108).
pub(super) const STREAM_TAG: i32 = 109;

const _: () = assert!(STREAM_TAG + CHANNELS as i32 <= 112);

/// [`Mpi::staged_ch`]: nothing staged; the bit of a channel with streams
/// to send.
pub(super) const NONE: usize = usize::MAX;
const SEND: usize = 1 << 8;

/// Runs of at most this many processes count their streams in the
/// reductions (module docs): `8 * (4 + p)` bytes per message of a
/// reduction step instead of 32.
pub(super) const COUNTED_MAX: usize = 64;

/// The streams of one channel to send with the next reduction, and the
/// sends in flight.
#[derive(Default)]
pub(super) struct Staged {
    /// The channel whose sends are in flight, and their requests.
    posted: Option<usize>,
    reqs: Vec<Request>,
}

/// What one rank received on one channel.
#[derive(Default)]
pub(super) struct Inbox {
    /// The streams, one after another (`used` words of it hold this
    /// delivery's; its length only grows, so that a delivery writes no
    /// zeros first).
    data: Vec<u64>,
    used: usize,
    /// Streams received in this delivery.
    got: usize,
    /// Per source: where its stream starts and its length, in words.
    pub(super) at: Vec<usize>,
    pub(super) len: Vec<usize>,
    /// The last delivery was finalised and nothing of the next has come.
    fresh: bool,
}

impl Inbox {
    /// The receive buffer of a run of `nprocs` processes.
    pub(super) fn new(nprocs: usize) -> Self {
        Inbox {
            data: Vec::new(),
            used: 0,
            got: 0,
            at: vec![0; nprocs],
            len: vec![0; nprocs],
            fresh: true,
        }
    }

    /// The words of this delivery.
    pub(super) fn data(&self) -> &[u64] {
        &self.data[..self.used]
    }

    /// Starts the next delivery if the last was finalised.
    fn begin(&mut self) {
        if self.fresh {
            self.used = 0;
            self.got = 0;
            self.at.fill(0);
            self.len.fill(0);
            self.fresh = false;
        }
    }
}

/// Whether a run of `nprocs` processes delivers by non-blocking consensus
/// (module docs); `forced`: rank 0 asked for it (`BSPLIB_MPI_NBX=1`).
pub(super) fn uses_nbx(nprocs: usize, forced: bool) -> bool {
    forced || nprocs > COUNTED_MAX
}

impl Mpi {
    /// The next reduction (barrier A) delivers channel `ch`, and `send`:
    /// this process wrote streams on it (step 1 of the sync), whose
    /// non-empty ones go out with the reduction. Every process of the
    /// sync stages the channel, so that the reduction's count of the
    /// streams it receives is kept for [`deliver`](Self::deliver).
    pub(crate) fn stage_streams(&self, ch: usize, send: bool) {
        self.staged_ch
            .store(ch | if send { SEND } else { 0 }, Ordering::Relaxed);
    }

    /// Starts the sends of the staged channel's non-empty streams, and
    /// writes their counts per destination into `counts` (counted runs:
    /// `p` words; else none). Whether sends were started that must be
    /// matched before the reduction (non-blocking consensus), and the
    /// channel the reduction delivers, if any (its count then goes to
    /// [`expect_streams`](Self::expect_streams)).
    pub(super) fn post_streams(&self, counts: &mut [u64]) -> (bool, Option<usize>) {
        let _mpi = progress::hold();
        counts.fill(0);
        // (A reduction with nothing staged takes no lock.)
        let staged_ch = self.staged_ch.swap(NONE, Ordering::Relaxed);
        if staged_ch == NONE {
            return (false, None);
        }
        let ch = staged_ch & !SEND;
        if staged_ch & SEND == 0 {
            return (false, Some(ch));
        }
        let mut staged = lock(&self.staged);
        self.complete_sends(&mut staged);
        let out = lock(&self.out[ch]);
        let reqs = &mut staged.reqs;
        for (dest, &(at, len)) in out.dir.iter().enumerate() {
            if len == 0 {
                continue;
            }
            if let Some(c) = counts.get_mut(dest) {
                *c += 1;
            }
            // At most `CAPACITY` bytes: the writer checks.
            let words = (len / 8) as i32;
            // SAFETY: reads an MPI constant.
            let mut req = Request(unsafe { ffi::RSMPI_REQUEST_NULL });
            let send = if self.nbx {
                ffi::MPI_Issend
            } else {
                ffi::MPI_Isend
            };
            // SAFETY: the stream is `len` bytes of `out.data` at `at`
            // (8-aligned words), a buffer not written again before this
            // send completed (`writer` makes sure); `comm` is this run's
            // communicator; `req` is an out-parameter.
            unsafe {
                send(
                    out.data.as_ptr().add(at / 8).cast(),
                    words,
                    ffi::RSMPI_UINT64_T,
                    dest as i32,
                    STREAM_TAG + ch as i32,
                    self.comm.as_raw(),
                    &mut req.0,
                )
            };
            reqs.push(req);
        }
        staged.posted = Some(ch);
        (self.nbx && !staged.reqs.is_empty(), Some(ch))
    }

    /// Sends of an earlier delivery still in flight (a sync that failed
    /// after barrier A): their buffer is left to them, leaked.
    fn complete_sends(&self, staged: &mut Staged) {
        if let Some(ch) = staged.posted.take() {
            if !staged.reqs.is_empty() && !self.streams_sent_locked(staged) {
                let mut out = lock(&self.out[ch]);
                std::mem::forget(std::mem::take(&mut out.data));
                staged.reqs.clear();
            }
        }
    }

    /// Channel `ch`'s buffer is about to be written again (`writer`): if
    /// sends from it are still in flight (a sync failed after barrier A),
    /// they keep the old buffer, leaked, and the writer gets a new one
    /// (`Mpi::writer`).
    pub(super) fn before_rewrite(&self, ch: usize) {
        let mut staged = lock(&self.staged);
        if staged.posted == Some(ch) {
            self.complete_sends(&mut staged);
        }
    }

    /// Whether every stream sent by [`post_streams`](Self::post_streams)
    /// completed (non-blocking consensus: was matched).
    pub(super) fn streams_sent(&self) -> bool {
        self.streams_sent_locked(&mut lock(&self.staged))
    }

    fn streams_sent_locked(&self, staged: &mut Staged) -> bool {
        let _mpi = progress::hold();
        test_all(&mut staged.reqs)
    }

    /// A counted reduction announced `count` streams for this rank: of
    /// channel `ch`, which the reduction delivers, or, if it delivers none
    /// here (this process ended, or failed, while others sync), of any:
    /// those are received now and dropped, so that no sender waits for
    /// them.
    pub(super) fn expect_streams(&self, ch: Option<usize>, count: usize) -> Result<(), Interrupt> {
        if let Some(ch) = ch {
            // (Atomics, not the lock: every sync's barrier comes here.)
            if count != 0 || self.expect[ch].load(Ordering::Relaxed) != 0 {
                self.expect[ch].store(count, Ordering::Relaxed);
            }
            return Ok(());
        }
        let mut left = count;
        self.wait_streams(&mut || {
            left = left.saturating_sub(self.drain_streams(0..CHANNELS));
            left == 0
        })
    }

    /// Receives every stream message waiting on the channels `chs`: how
    /// many.
    pub(super) fn drain_streams(&self, chs: std::ops::Range<usize>) -> usize {
        let _mpi = progress::hold();
        let mut taken = 0;
        for ch in chs {
            let tag = STREAM_TAG + ch as i32;
            while let Some((msg, status)) = self
                .comm
                .any_process()
                .immediate_matched_probe_with_tag(tag)
            {
                let src = status.source_rank() as usize;
                let words = usize::try_from(status.count(u64::equivalent_datatype())).unwrap_or(0);
                let mut inbox = lock(&self.inbox[ch]);
                let inbox = &mut *inbox;
                inbox.begin();
                let start = inbox.used;
                let end = start + words;
                if inbox.data.len() < end {
                    inbox.data.resize(end, 0);
                }
                msg.matched_receive_into(&mut inbox.data[start..end]);
                if src < inbox.at.len() {
                    inbox.at[src] = start;
                    inbox.len[src] = words;
                }
                inbox.used = end;
                inbox.got += 1;
                taken += 1;
            }
        }
        taken
    }

    /// Delivers channel `ch`: the streams of channel `q` were sent with
    /// barrier A; the replies are sent now, with a reduction that stands
    /// for barrier B. Returns once every stream for this rank is here and
    /// this rank's sends completed; what came is what
    /// [`stream`](Self::stream) reads until the next delivery begins.
    pub(crate) fn deliver(&self, ch: usize) -> Result<(), Interrupt> {
        if ch == crate::stream::REPLIES {
            self.stage_streams(ch, true);
            self.all_reduce([0; 4], super::am::Op::Or, None, true)?;
        }
        let expect = self.expect[ch].swap(0, Ordering::Relaxed);
        // Counted, only this channel's streams are waited for; by
        // consensus, every wait of a reduction took every channel's.
        let chs = if self.nbx { 0..CHANNELS } else { ch..ch + 1 };
        let mut done = || {
            self.drain_streams(chs.clone());
            lock(&self.inbox[ch]).got >= expect && self.streams_sent()
        };
        self.wait_streams(&mut done)?;
        let mut inbox = lock(&self.inbox[ch]);
        // Nothing came: every stream is empty.
        inbox.begin();
        inbox.fresh = true;
        Ok(())
    }

    /// The end of the run with sends in flight (a sync failed after barrier
    /// A): their buffers must outlive them, so they are leaked.
    pub(super) fn nbx_drop(&mut self) {
        let staged = self.staged.get_mut().unwrap_or_else(|p| p.into_inner());
        if let (Some(ch), false) = (staged.posted, staged.reqs.is_empty()) {
            let out = self.out[ch].get_mut().unwrap_or_else(|p| p.into_inner());
            std::mem::forget(std::mem::take(&mut out.data));
        }
    }
}
