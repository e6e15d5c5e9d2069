//! The active-message path on `mpi` (`../ACTIVE_MESSAGES.md`, section 6;
//! `README.md` beside this file, "Active messages"): every record is one
//! point-to-point message with tag [`TAG`], and barrier A may dispatch.
//!
//! - **Posting** copies the record into a buffer the library owns (taken
//!   from a small pool) and starts an `MPI_Isend` from it: it never waits
//!   for the receiver. The sends in flight are tested (`MPI_Testsome`) at
//!   every post, take and wait and while a dispatching barrier waits, and
//!   their buffers go back to the pool. While more than [`MAX_PENDING`]
//!   bytes are in flight a post refuses (`Ok(false)`: the caller keeps the
//!   record and posts it again later, in order), so a receiver that does
//!   not receive costs its senders a bounded amount of memory.
//! - **Receiving** is posted ahead: two `MPI_Irecv(ANY_SOURCE, TAG)`, each
//!   into a buffer of the largest record
//!   ([`AM_RING`](crate::engine::AM_RING) bytes, made at its first
//!   posting), tested with `MPI_Test` in posting order; one whose record
//!   was taken is posted again at the next poll, behind the other, not
//!   between a record's arrival and its handling (`Posted`). Testing a posted receive
//!   is one MPI call where `MPI_Iprobe`, then `MPI_Improbe` and
//!   `MPI_Mrecv`, were three, each searching MPI's queues (a ping-pong of
//!   that shape in C took 2.4x one with a posted receive). MPI's
//!   non-overtaking rule still keeps each sender's records in their
//!   posting order; the records are appended as they came: their reader
//!   checks them (as on `processes`, where any process can write an inbox).
//!   At the end the receive is cancelled (`am_drop`).
//! - **Waiting** polls (the posted receive; the sends in flight and the
//!   stop message at every 8th poll), spinning for the first `8 * SPINS`
//!   polls and yielding between later ones. The mark is the number of
//!   records taken so far: a record posted after the mark is either taken
//!   since (the count moved) or still waiting in MPI (the test sees it).
//! - **Reductions** (every barrier, the end reductions, the naming of an
//!   ended process) are an all-reduce of our own over point-to-point
//!   messages (recursive doubling, tag [`REDUCE_TAG`]), completed by a
//!   test loop, so that barrier A can dispatch while it waits. The one
//!   protocol serves the plain and the dispatching barrier alike, so a
//!   dispatching barrier on one rank always meets whatever reduction
//!   another rank makes there (a barrier, an end reduction): the matching
//!   problem of mixing `MPI_Allreduce` with `MPI_Iallreduce` does not
//!   arise, and the empty sync stays as fast as with `MPI_Allreduce`
//!   (`MPI_Iallreduce` was 2.5x slower; `README.md` has the figures).

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::*;

use super::posted::Posted;
use super::progress;
use super::rendezvous::Request;
use super::{Interrupt, Mpi, BELL_TAG, STOP_TAG, SYNCING};
use crate::engine::BELLS;

/// Message tag of active-message records: after the notification tags
/// (`BELL_TAG + ch`, `ch < BELLS`).
pub(super) const TAG: i32 = BELL_TAG + BELLS as i32;

/// Message tag of the reductions' words (`all_reduce`).
const REDUCE_TAG: i32 = TAG + 1;

const _: () = assert!(TAG == 105 && REDUCE_TAG == 106 && TAG != STOP_TAG);

/// Bytes of records in flight (sent, not yet received) above which a post
/// is refused until some complete.
const MAX_PENDING: usize = 64 << 20;

/// Recycled send buffers kept: at most this many bytes of them, and none
/// larger than [`POOL_LARGEST`].
const POOL_BYTES: usize = 4 << 20;
const POOL_LARGEST: usize = 256 << 10;

/// At most this many bytes are taken by one `am_take` (then the caller
/// comes back: its wait returns at once while records are waiting), so a
/// flood cannot keep a take going forever.
const TAKE_BUDGET: usize = 16 << 20;

/// Polls of a reduction before its waiter starts yielding the core.
const SPINS: u32 = 64;

/// The sends in flight and the buffer pool (a lock only to satisfy
/// `Sync`: one thread per rank uses it).
#[derive(Default)]
pub(super) struct Outgoing {
    /// Requests of the sends in flight, and their buffers (same order).
    reqs: Vec<Request>,
    bufs: Vec<Vec<u8>>,
    /// Bytes of `bufs`' records.
    pending: usize,
    pool: Vec<Vec<u8>>,
    /// Capacity of the buffers in `pool`.
    pooled: usize,
    /// Records taken so far (the marks).
    taken: u64,
    /// `MPI_Testsome`'s indices.
    done: Vec<i32>,
    /// The receive of records, posted ahead.
    posted: Posted,
}

/// The operands of the reduction in progress, in buffers that stay put
/// while MPI uses them: the four [`Words`], then (counted delivery:
/// `nbx.rs`) the number of streams sent to each process.
pub(super) struct Operands {
    mine: Vec<u64>,
    all: Vec<u64>,
    /// This rank's value so far.
    acc: Vec<u64>,
}

impl Operands {
    /// The operands of a run whose reductions carry `counts` counts.
    pub(super) fn new(counts: usize) -> Self {
        let n = WORDS + counts;
        Operands {
            mine: vec![0; n],
            all: vec![0; n],
            acc: vec![0; n],
        }
    }

    /// `acc` combined with what came (`all`): the four words by `op`,
    /// the counts summed.
    fn combine(&mut self, op: Op) {
        let (acc, all) = (&mut self.acc, &self.all);
        for (i, (a, &b)) in acc.iter_mut().zip(all.iter()).enumerate() {
            *a = match op {
                _ if i >= WORDS => a.wrapping_add(b),
                Op::Or => *a | b,
                Op::Min => (*a).min(b),
            };
        }
    }
}

/// The number of [`Words`].
pub(super) const WORDS: usize = 4;

/// The operands of the engine's reductions: the superstep's flags, who
/// arrives from where (`SYNCING`, `ENDED`, `FAILED`), and the check of the
/// collective the sync ends (a hash and its complement: `super::CHECK`).
pub(super) type Words = [u64; WORDS];

/// A reduction's result, and a panic of its `poll` (`all_reduce`).
pub(super) type Reduced = (Words, Option<Box<dyn Any + Send>>);

/// The state of a reduction's wait that its steps share (`exchange`).
struct Wait<'p> {
    poll: Option<&'p mut dyn FnMut() -> bool>,
    /// A panic of `poll` (it is not called again).
    panicked: Option<Box<dyn Any + Send>>,
    /// Whether the last poll left work waiting for room (it is then called
    /// at every turn, not only when a record is waiting).
    busy: bool,
    /// When the reduction began yielding (the deadline counts from then,
    /// across its steps).
    started: Option<std::time::Instant>,
    /// Whether the run's deadline applies.
    timed: bool,
}

impl<'p> Wait<'p> {
    fn new(poll: Option<&'p mut dyn FnMut() -> bool>, timed: bool) -> Self {
        Wait {
            poll,
            panicked: None,
            busy: false,
            started: None,
            timed,
        }
    }
}

/// A reduction's operation.
#[derive(Clone, Copy)]
pub(super) enum Op {
    Or,
    Min,
}

impl Mpi {
    /// The largest active-message record: as on the shared-memory engines.
    pub(crate) fn am_max_record(&self) -> usize {
        crate::engine::AM_RING
    }

    /// Posts the record made of `parts` to `to`: copied into a buffer of
    /// ours and sent by `MPI_Isend`, never waiting for the receiver.
    /// `Ok(false)` when too much is in flight already (module docs).
    pub(crate) fn am_post(
        &self,
        _me: usize,
        to: usize,
        parts: &[&[u8]],
    ) -> Result<bool, Interrupt> {
        let _mpi = progress::hold();
        if self.is_stopped() {
            return Err(Interrupt::Stopped);
        }
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let mut o = lock(&self.am);
        if o.pending > 0 && o.pending + len > MAX_PENDING {
            o.test();
            if o.pending > 0 && o.pending + len > MAX_PENDING {
                return Ok(false);
            }
        }
        let mut buf = match o.pool.pop() {
            Some(b) => {
                o.pooled -= b.capacity();
                b
            }
            None => Vec::new(),
        };
        buf.clear();
        for p in parts {
            buf.extend_from_slice(p);
        }
        self.isend(&mut o, buf, to, TAG);
        // The sends that completed, once this one is on its way (a small
        // one completes at once: its buffer goes back to the pool).
        o.test();
        Ok(true)
    }

    /// Sends `bytes` to `to` with `tag` without waiting for anything: the
    /// queries and answers of `deadline.rs`. A blocking send, even of a
    /// few bytes, can wait for ever for a rank that makes no progress (over
    /// TCP, one it has not connected to yet).
    pub(super) fn send_bytes(&self, to: usize, tag: i32, bytes: &[u8]) {
        let _mpi = progress::hold();
        let mut o = lock(&self.am);
        o.test();
        self.isend(&mut o, bytes.to_vec(), to, tag);
    }

    /// Starts an `MPI_Isend` of `buf` to `to` with `tag`, and keeps the
    /// buffer until it completes.
    fn isend(&self, o: &mut Outgoing, buf: Vec<u8>, to: usize, tag: i32) {
        let _mpi = progress::hold();
        let len = buf.len();
        let count = i32::try_from(len).expect("a record is at most am_max_record bytes");
        let mut req = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: `buf` holds `len` initialised bytes and is neither written
        // nor freed until the send completes (`Outgoing::test` takes it back
        // then; `Drop` leaks it if it never does); moving the `Vec` into
        // `bufs` does not move its heap memory; `comm` is this run's
        // communicator; `req` is an out-parameter.
        unsafe {
            ffi::MPI_Isend(
                buf.as_ptr().cast(),
                count,
                ffi::RSMPI_UINT8_T,
                to as i32,
                tag,
                self.comm.as_raw(),
                req.as_mut_ptr(),
            );
            o.reqs.push(Request(req.assume_init()));
        }
        o.bufs.push(buf);
        o.pending += len;
    }

    /// Appends the records that arrived (up to [`TAKE_BUDGET`] bytes of
    /// them, then at least one more call finds the rest), each whole.
    pub(crate) fn am_take(&self, _me: usize, out: &mut Vec<u8>) -> Result<(), Interrupt> {
        let _mpi = progress::hold();
        let mut o = lock(&self.am);
        let start = out.len();
        while out.len() - start < TAKE_BUDGET {
            let Some((slot, n)) = o.posted.next(&self.comm) else {
                break;
            };
            out.extend_from_slice(&o.posted.slots[slot].buf[..n]);
            o.taken += 1;
        }
        // The sends that completed, once what came is taken.
        o.test();
        Ok(())
    }

    /// The number of records taken so far.
    pub(crate) fn am_mark(&self) -> u64 {
        lock(&self.am).taken
    }

    /// Waits until a record has been taken since `mark` was read, or one
    /// is waiting to be, or the run stops.
    pub(crate) fn am_wait(&self, mark: u64) -> Result<(), Interrupt> {
        let _mpi = progress::hold();
        // Back every 50 ms, as on the other engines, so that the caller
        // looks at the status board and the deadline.
        let soft = std::time::Instant::now() + std::time::Duration::from_millis(50);
        let (mut turns, mut spins) = (0, 0u32);
        loop {
            // The sends in flight and the stop message at every 8th poll
            // only: two more MPI calls each, and neither is urgent.
            let full = spins % 8 == 0;
            {
                let mut o = lock(&self.am);
                if o.taken != mark {
                    return Ok(());
                }
                if full {
                    o.test();
                }
                if o.posted.arrived(&self.comm) {
                    return Ok(());
                }
            }
            if self.is_stopped() {
                return Err(Interrupt::Stopped);
            }
            if full && self.take_stop() {
                self.stop();
                return Err(Interrupt::Stopped);
            }
            // Spinning first, as the reductions do: a record that comes
            // within microseconds (an answer) is taken without a system
            // call (an AM round trip took 3.4 µs against 0.35 µs for an
            // MPI ping-pong with a yield at every poll).
            spins = spins.wrapping_add(1);
            if spins < SPINS * 8 {
                std::hint::spin_loop();
                continue;
            }
            if std::time::Instant::now() > soft {
                return Ok(());
            }
            // The caller keeps the deadline: this wait only answers.
            self.waited(&mut turns, &mut None, false)?;
            std::thread::yield_now();
        }
    }

    /// Barrier A dispatching: [`barrier`](Mpi::barrier) with `poll` called
    /// once at the start and then whenever a record is waiting.
    ///
    /// A panic in `poll` cannot leave the reduction (every rank must
    /// complete it): the rank tells every other that it fails (the stop
    /// message, which ends their waits for a record), completes the
    /// reduction without polling, and unwinds if the others will do
    /// nothing collective before they learn of it (the barrier failed, or
    /// ended an empty superstep): its end reduction then meets their next
    /// barrier. Otherwise they go on to deliver the superstep's streams,
    /// which this rank cannot join, and the job ends (`abort`).
    pub(crate) fn barrier_polling(
        &self,
        flags: u32,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<u32, Interrupt> {
        let _mpi = progress::hold();
        if self.is_stopped() {
            return Err(Interrupt::Stopped);
        }
        let [h, not_h] = self.take_check();
        let words = [u64::from(flags), SYNCING, h, not_h];
        let (all, panicked) = self.all_reduce(words, Op::Or, Some(poll), true)?;
        let result = self.after_barrier(all);
        if let Some(payload) = panicked {
            if matches!(result, Err(_) | Ok(0)) {
                resume_unwind(payload);
            }
            eprintln!(
                "bsplib: a handler panicked in the dispatching barrier of a superstep with data on the mpi engine: the job ends"
            );
            super::abort();
        }
        result
    }

    /// An all-reduce of four words with `op` over point-to-point messages
    /// (tag [`REDUCE_TAG`]; module docs), completed by polling; with
    /// `poll`, called once at the start and then whenever a record is
    /// waiting, its sends in flight tested meanwhile. A panic of `poll` is
    /// returned, after the reduction completed (see `barrier_polling`).
    ///
    /// Recursive doubling: with `pow` the largest power of two up to `p`,
    /// rank `pow + i` first hands its words to rank `i`; the first `pow`
    /// ranks exchange with rank `me ^ mask` for each bit `mask`, combining;
    /// rank `i` then hands the result back to rank `pow + i`. Each rank
    /// makes the same receives from a peer as that peer makes sends to it,
    /// reduction after reduction, so MPI's non-overtaking rule pairs them.
    ///
    /// With `timed`, a wait longer than the run's deadline returns
    /// [`Interrupt::Deadline`], leaving the reduction unfinished: the
    /// caller ends the job (`deadline.rs`).
    pub(super) fn all_reduce(
        &self,
        mine: Words,
        op: Op,
        poll: Option<&mut dyn FnMut() -> bool>,
        timed: bool,
    ) -> Result<Reduced, Interrupt> {
        let _mpi = progress::hold();
        let mut guard = lock(&self.operands);
        let r = &mut *guard;
        let mut w = Wait::new(poll, timed);
        if let Some(poll) = w.poll.as_mut() {
            w.panicked = self.call(&mut **poll, &mut w.busy);
        }
        let (me, p) = (self.comm.rank() as usize, self.nprocs);
        let pow = if p == 0 { 0 } else { 1 << p.ilog2() };
        r.acc[..WORDS].copy_from_slice(&mine);
        // The streams staged for this reduction go first (`nbx.rs`), their
        // counts per destination in the words after the four.
        let (matched, delivers) = self.post_streams(&mut r.acc[WORDS..]);
        if matched {
            // Non-blocking consensus: the reduction is entered only once
            // every stream was matched by its destination.
            self.wait_until(&mut || self.streams_sent(), &mut w)?;
        }
        let mut step = |r: &mut Operands, to: Option<usize>, from: Option<usize>| {
            r.mine.copy_from_slice(&r.acc);
            self.exchange(r, to, from, &mut w)
        };
        if me >= pow {
            step(r, Some(me - pow), None)?;
        } else if me + pow < p {
            step(r, None, Some(me + pow))?;
            r.combine(op);
        }
        if me < pow {
            let mut mask = 1;
            while mask < pow {
                step(r, Some(me ^ mask), Some(me ^ mask))?;
                r.combine(op);
                mask <<= 1;
            }
            if me + pow < p {
                step(r, Some(me + pow), None)?;
            }
        } else {
            step(r, None, Some(me - pow))?;
            r.acc.copy_from_slice(&r.all);
        }
        if let Some(&count) = r.acc.get(WORDS + me) {
            if delivers.is_some() || count > 0 {
                self.expect_streams(delivers, count as usize)?;
            }
        }
        let mut all = [0; WORDS];
        all.copy_from_slice(&r.acc[..WORDS]);
        Ok((all, w.panicked))
    }

    /// One step of [`all_reduce`](Self::all_reduce): sends `r.mine` to
    /// `to` and receives `r.all` from `from` (either may be absent), and
    /// waits for both, polling as `all_reduce` says.
    fn exchange(
        &self,
        r: &mut Operands,
        to: Option<usize>,
        from: Option<usize>,
        w: &mut Wait<'_>,
    ) -> Result<(), Interrupt> {
        let _mpi = progress::hold();
        // SAFETY: reads an MPI constant.
        let null = unsafe { ffi::RSMPI_REQUEST_NULL };
        let mut reqs = [Request(null), Request(null)];
        if let Some(from) = from {
            // SAFETY: `all` is a buffer that is never resized and is not
            // touched (the caller holds its lock) until the request
            // completes below:
            // this function returns only then (a panic of `poll` is
            // caught); `comm` is this run's communicator; the request is an
            // out-parameter.
            unsafe {
                ffi::MPI_Irecv(
                    r.all.as_mut_ptr().cast(),
                    r.all.len() as i32,
                    ffi::RSMPI_UINT64_T,
                    from as i32,
                    REDUCE_TAG,
                    self.comm.as_raw(),
                    &mut reqs[0].0,
                )
            };
        }
        if let Some(to) = to {
            // SAFETY: as for the receive, with `mine`, only read.
            unsafe {
                ffi::MPI_Isend(
                    r.mine.as_ptr().cast(),
                    r.mine.len() as i32,
                    ffi::RSMPI_UINT64_T,
                    to as i32,
                    REDUCE_TAG,
                    self.comm.as_raw(),
                    &mut reqs[1].0,
                )
            };
        }
        let mut both = || {
            let mut done = 0;
            // SAFETY: `reqs` holds this step's requests, active or null;
            // completed ones are set to `MPI_REQUEST_NULL`.
            unsafe {
                ffi::MPI_Testall(
                    2,
                    reqs.as_mut_ptr().cast(),
                    &mut done,
                    ffi::RSMPI_STATUSES_IGNORE,
                )
            };
            done != 0
        };
        self.wait_until(&mut both, w)
    }

    /// Waits until `done`, with no poll, under the run's deadline
    /// (`nbx.rs`: the streams of a delivery).
    pub(super) fn wait_streams(&self, done: &mut dyn FnMut() -> bool) -> Result<(), Interrupt> {
        self.wait_until(done, &mut Wait::new(None, true))
    }

    /// Waits until `done`, polling as [`all_reduce`](Self::all_reduce)
    /// says; with non-blocking consensus also taking the streams that come
    /// meanwhile (`nbx.rs`: every wait of a reduction must, or a sender
    /// would wait forever for its stream to be matched).
    fn wait_until(
        &self,
        done: &mut dyn FnMut() -> bool,
        w: &mut Wait<'_>,
    ) -> Result<(), Interrupt> {
        let Wait {
            poll,
            panicked,
            busy,
            started,
            timed,
        } = w;
        let timed = *timed;
        let (mut spins, mut turns, mut polls) = (0u32, 0u32, 0u32);
        loop {
            if done() {
                return Ok(());
            }
            // Non-blocking consensus (`nbx.rs`): every 4th poll while it
            // spins, every poll once it yields.
            polls = polls.wrapping_add(1);
            if self.nbx && (spins >= SPINS || polls % 4 == 0) {
                self.drain_streams(0..super::CHANNELS);
            }
            if let (Some(poll), None) = (poll.as_mut(), &*panicked) {
                let waiting = {
                    let mut o = lock(&self.am);
                    o.test();
                    o.posted.arrived(&self.comm)
                };
                if *busy || waiting {
                    *panicked = self.call(&mut **poll, busy);
                    // A rank kept busy dispatching still has a deadline.
                    self.waited(&mut turns, started, timed)?;
                    continue;
                }
            }
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                // Yielding: the queries of `deadline.rs`, and the deadline.
                self.waited(&mut turns, started, timed)?;
                std::thread::yield_now();
            }
        }
    }

    /// Runs `poll`; if it panics, stops this rank and tells every other
    /// (their waits for a record end), and returns the panic.
    fn call(&self, poll: &mut dyn FnMut() -> bool, busy: &mut bool) -> Option<Box<dyn Any + Send>> {
        *busy = false;
        let payload = match catch_unwind(AssertUnwindSafe(poll)) {
            Ok(b) => {
                *busy = b;
                return None;
            }
            Err(payload) => payload,
        };
        self.stop();
        self.send_stops();
        Some(payload)
    }

    /// The sends still in flight when the run ends: their buffers must
    /// outlive them, so those that have not completed are released to MPI
    /// and their buffers leaked (their receivers may never receive them).
    pub(super) fn am_drop(&mut self) {
        let _mpi = progress::hold();
        let o = self.am.get_mut().unwrap_or_else(|p| p.into_inner());
        if !mpi::environment::is_finalized() {
            o.test();
            for r in &mut o.reqs {
                // SAFETY: an active send request of this rank; freeing it
                // lets it complete on its own, from a buffer leaked below.
                unsafe { ffi::MPI_Request_free(&mut r.0) };
            }
        }
        o.reqs.clear();
        for buf in o.bufs.drain(..) {
            std::mem::forget(buf);
        }
        o.posted.cancel();
    }
}

impl Outgoing {
    /// Takes back the buffers of the sends that completed.
    fn test(&mut self) {
        let _mpi = progress::hold();
        let o = self;
        if o.reqs.is_empty() {
            return;
        }
        let n = o.reqs.len();
        o.done.resize(n, 0);
        let mut count = 0;
        // SAFETY: `reqs` holds active send requests of this rank
        // (`Request` is a transparent wrapper of a handle), `done` has room
        // for an index per request; completed ones are set to
        // `MPI_REQUEST_NULL` and removed below.
        unsafe {
            ffi::MPI_Testsome(
                n as i32,
                o.reqs.as_mut_ptr().cast(),
                &mut count,
                o.done.as_mut_ptr(),
                ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        // `MPI_UNDEFINED` (negative) only when no request is active.
        let count = usize::try_from(count).unwrap_or(0).min(n);
        if count == 0 {
            return;
        }
        let Outgoing {
            reqs,
            bufs,
            pending,
            pool,
            pooled,
            done,
            ..
        } = o;
        let done = &mut done[..count];
        // Highest first: `swap_remove` then moves only requests still in
        // flight.
        done.sort_unstable_by(|a, b| b.cmp(a));
        for &i in done.iter() {
            let i = i as usize;
            reqs.swap_remove(i);
            let buf = bufs.swap_remove(i);
            *pending -= buf.len();
            if buf.capacity() <= POOL_LARGEST && *pooled + buf.capacity() <= POOL_BYTES {
                *pooled += buf.capacity();
                pool.push(buf);
            }
        }
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
