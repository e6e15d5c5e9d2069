//! Large put payloads on `mpi`, by rendezvous (`README.md` beside this
//! file, "Large payloads"): a put of at least [`MIN_LARGE`](crate::engine::MIN_LARGE) bytes writes
//! only a *descriptor* `[slot | DESCRIPTOR][offset][len]` into its stream;
//! its payload is staged at the call and reaches the destination range
//! that the *receiver* resolved and checked in its own registration table.
//!
//! - **One node** (every rank of the run can map the others' memory:
//!   [`decide_local`], at the start): a `put` copies its source into this
//!   process's *staging segment* (`segment.rs`: a `memfd`, one per parity
//!   of the rendezvous syncs), and the receiver copies it from there,
//!   through its own read-only mapping of the segment, straight into the
//!   destination. Two copies at memory speed, no MPI transfer.
//! - **Otherwise**, and for every `hpput` (which keeps its source's
//!   address): the payload is sent point to point (`MPI_Isend` from the
//!   staging buffer or the hpput's source, `MPI_Irecv` into the
//!   destination).
//!
//! In the sync, with the flag `LARGE` set in barrier A's OR (someone
//! staged a payload): at the start of step 5 every process posts, per
//! payload in call order, a *header* (tag [`TAG`], [`HEAD`] words: by MPI,
//! or where in which segment) and, for a payload by MPI, its messages; it
//! then applies the puts addressed to it in the usual order (senders by
//! pid, each sender's records in call order), receiving for each
//! descriptor the sender's next header, then copying from the segment or
//! posting a receive (`MPI_Irecv`) into the destination. A put, or a
//! receive or copy, whose range overlaps a receive still in flight first
//! waits for the receives in flight: overlapping puts land in the order of
//! every engine. The sync waits for its receives, then its sends, before
//! it leaves step 5. A receiver copies from segment `r % 2` in rendezvous
//! sync `r`; its sender writes that segment again only for sync `r + 2`,
//! after barrier A of sync `r + 1`, which the receiver reaches only when
//! it has finished sync `r`.
//!
//! No wait blocks for good when the run fails: every process posts its
//! sends before it waits for anything, so a receive waits only for a send
//! already posted, and the waits poll for the stop message a failed
//! process sends every other (`STOP_TAG`). A process that fails or is
//! stopped during step 5 cancels its receives that have not matched a send
//! and waits for those that have (they complete: their sends are posted),
//! so nothing is written into its memory after the sync returns; it does
//! not wait for its own sends (their receiver may have failed and cancelled
//! its receive): they stay posted, their staged copies and headers are
//! kept until the run ends, and the process, poisoned, never stages again.

use std::sync::Mutex;

use mpi::ffi;
use mpi::raw::AsRaw;

use super::progress;
use super::segment::{Mapping, Segment};
use super::Mpi;
use crate::engine::RendezvousStopped as Stopped;

/// Message tag of rendezvous payloads.
const TAG: i32 = 98;

/// A payload longer than this goes as several messages of at most this
/// many bytes (an MPI count is an `int`); sender and receiver cut alike.
const CHUNK: usize = 1 << 30;

/// A staged payload is kept for reuse unless the buffer is more than twice
/// what the last [`WINDOW`] syncs with rendezvous staged (and more than
/// [`KEEP`] bytes): then it shrinks to that.
const WINDOW: u32 = 8;
const KEEP: usize = 1 << 20;

/// A superstep's first [`PLAIN_UPTO`] staged bytes are copied with
/// ordinary stores (they stay in this core's caches, where MPI's copy into
/// the receiver reads them: 1 MiB `put` + sync 93 us against 150 us with
/// streaming stores, `README.md`, "Measured"); the bytes beyond, with
/// streaming stores (a copy of 8 MiB or more leaves the caches anyway,
/// and streaming it is twice as fast: 16 MiB staged in 0.27-0.38 ms
/// against 0.35-0.74 ms).
const PLAIN_UPTO: usize = 4 << 20;

/// The words of the header that precedes every payload (tag [`TAG`]):
/// `[how, sender's OS pid, segment descriptor, segment generation,
/// offset]`, where `how` is [`BY_MPI`] (the payload follows as messages)
/// or [`IN_SEGMENT`] plus the parity of the staging segment that holds it.
const HEAD: usize = 5;
const BY_MPI: u64 = 0;
const IN_SEGMENT: u64 = 1;

/// Where a payload's bytes are.
#[derive(Clone, Copy)]
enum Source {
    /// At this offset of this superstep's staging segment (a `put`, with
    /// node-local staging).
    Segment(usize),
    /// At this offset of the staging buffer (a `put`).
    Staged(usize),
    /// At this address, the sender's own memory, kept unchanged by the
    /// caller of `hpput` until the end of the sync.
    Borrowed(usize),
}

#[derive(Clone, Copy)]
struct Payload {
    dest: usize,
    src: Source,
    len: usize,
}

/// This superstep's payloads, in call order.
#[derive(Default)]
struct Staging {
    buf: Vec<u8>,
    payloads: Vec<Payload>,
    /// Most bytes staged in a sync of the current window, and how many
    /// syncs of it have passed.
    high: usize,
    syncs: u32,
    /// Sends may still read `buf` (a sync failed after posting them): it
    /// is never written or freed again until the run ends.
    pinned: bool,
    /// Every rank of the run can map every other's staging segments
    /// (decided together at the start: [`decide_local`]).
    local: bool,
    /// The staging segments, by the parity of the rendezvous sync that
    /// sends them: a receiver copies from segment `r % 2` in rendezvous
    /// sync `r`, which ends before anyone passes barrier A of sync `r + 1`,
    /// and the sender writes it again only for sync `r + 2`.
    segs: [Option<Segment>; 2],
    /// Bytes of this superstep's payloads in `segs[rounds % 2]`.
    used: usize,
    /// Rendezvous syncs so far (every process posts its sends in each).
    rounds: u64,
    /// Segments made so far (their generations).
    gens: u64,
    /// The segments whose memory beyond this is released when next used:
    /// above [`KEEP`] and twice the most bytes staged in a sync of the
    /// last window of [`WINDOW`] syncs that staged in segments
    /// (`seg_high` for the window in progress).
    trim: [Option<usize>; 2],
    seg_high: usize,
    seg_syncs: u32,
    /// The headers of the sends in flight.
    heads: Vec<[u64; HEAD]>,
    /// This process's id (receivers open its segments under `/proc`).
    os_pid: u64,
}

/// An MPI request handle, used by the one thread of this rank (also kept
/// by the active-message path, `am.rs`).
#[repr(transparent)]
pub(super) struct Request(pub(super) ffi::MPI_Request);

// SAFETY: a request handle is an opaque value; MPI runs with
// `MPI_THREAD_SERIALIZED` and one thread at a time uses this rank's
// requests (see `Comm`).
unsafe impl Send for Request {}

/// Whether every request of `reqs` completed (`MPI_Testall`): `reqs` is
/// emptied then.
pub(super) fn test_all(reqs: &mut Vec<Request>) -> bool {
    if reqs.is_empty() {
        return true;
    }
    let mut done = 0;
    // SAFETY: `reqs` holds active (or null) requests of this rank,
    // `Request` is a transparent wrapper of a handle; completed ones are
    // set to `MPI_REQUEST_NULL`.
    unsafe {
        ffi::MPI_Testall(
            reqs.len() as i32,
            reqs.as_mut_ptr().cast(),
            &mut done,
            ffi::RSMPI_STATUSES_IGNORE,
        )
    };
    if done != 0 {
        reqs.clear();
    }
    done != 0
}

/// The requests of the sync in progress.
#[derive(Default)]
struct Active {
    sends: Vec<Request>,
    recvs: Vec<Request>,
    /// The destination ranges `[start, end)` of `recvs` in flight, and
    /// their hull.
    ranges: Vec<(usize, usize)>,
    lo: usize,
    hi: usize,
}

/// One rank's rendezvous state (locks only to satisfy `Sync`: one thread
/// per rank uses it).
#[derive(Default)]
pub(crate) struct Rendezvous {
    staging: Mutex<Staging>,
    active: Mutex<Active>,
    /// The other ranks' segments mapped here: by sender, by parity.
    maps: Mutex<Vec<[Option<Mapping>; 2]>>,
}

impl Rendezvous {
    /// The state of a rank of a run whose staging is node-local or not
    /// ([`decide_local`]).
    pub(super) fn new(local: bool) -> Self {
        let r = Rendezvous::default();
        {
            let mut s = lock(&r.staging);
            s.local = local;
            s.os_pid = u64::from(std::process::id());
        }
        r
    }
}

/// Whether large `put`s are staged in memory the receivers map (every
/// rank of the run on one node, each able to open its neighbour's staging
/// segment, and no rank setting `BSPLIB_MPI_SHARED_STAGING=0`), decided by
/// every rank of `comm` together (collective, at the start of a run).
pub(super) fn decide_local(comm: &mpi::topology::SimpleCommunicator, nprocs: usize) -> bool {
    use mpi::collective::SystemOperation;
    use mpi::traits::*;
    let mut node = std::mem::MaybeUninit::<ffi::MPI_Comm>::uninit();
    // SAFETY: MPI is initialised; the communicator and the null info are
    // valid; `node` is an out-parameter, freed below; every rank of
    // `comm` calls this.
    let one_node = unsafe {
        ffi::MPI_Comm_split_type(
            comm.as_raw(),
            ffi::RSMPI_COMM_TYPE_SHARED,
            0,
            ffi::RSMPI_INFO_NULL,
            node.as_mut_ptr(),
        ) == 0
            && {
                let mut node = node.assume_init();
                let mut size = 0;
                let sized = ffi::MPI_Comm_size(node, &mut size) == 0;
                ffi::MPI_Comm_free(&mut node);
                sized && size as usize == nprocs
            }
    };
    let wanted = std::env::var("BSPLIB_MPI_SHARED_STAGING").map_or(true, |v| v != "0");
    let probe = Segment::new(1, 0);
    let mine = match &probe {
        Some(seg) => [u64::from(std::process::id()), seg.fd() as u64],
        None => [0, u64::MAX],
    };
    let mut all = vec![0u64; 2 * nprocs];
    comm.all_gather_into(&mine[..], &mut all[..]);
    let right = (comm.rank() as usize + 1) % nprocs;
    let (os, fd) = (all[2 * right], all[2 * right + 1]);
    let ok = i32::from(one_node && wanted && fd != u64::MAX && super::segment::can_open(os, fd));
    let mut every = 0i32;
    comm.all_reduce_into(&ok, &mut every, SystemOperation::min());
    // Everyone has opened its neighbour's probe: it may go.
    drop(probe);
    every == 1
}

impl Mpi {
    /// Stages a payload of `len` bytes at `src` for `dest`: copied now
    /// (`copy`: a `put`), or read at the sync (an `hpput`). `Err(bytes)`
    /// if memory for the copy could not be had.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `len` bytes; without `copy`, readable
    /// and unchanged until the end of the next sync.
    pub(crate) unsafe fn stage(
        &self,
        dest: usize,
        src: *const u8,
        len: usize,
        copy: bool,
    ) -> Result<(), usize> {
        let _mpi = progress::hold();
        let mut s = lock(&self.rndv.staging);
        debug_assert!(!s.pinned, "staged after a failed sync");
        if copy && s.local {
            // SAFETY: forwarded from the caller.
            if let Some(at) = unsafe { stage_in_segment(&mut s, src, len) } {
                s.payloads.push(Payload {
                    dest,
                    src: Source::Segment(at),
                    len,
                });
                return Ok(());
            }
        }
        let src = if copy {
            let at = s.buf.len();
            s.buf.try_reserve(len).map_err(|_| len)?;
            // SAFETY: `try_reserve` made room for `len` more bytes, which
            // the copy initialises before `set_len` counts them; the caller
            // vouches for `src`, which cannot be inside `buf` (ours).
            unsafe {
                if at + len <= PLAIN_UPTO {
                    crate::mem::copy(src, s.buf.as_mut_ptr().add(at), len);
                } else {
                    crate::mem::copy_streaming(src, s.buf.as_mut_ptr().add(at), len);
                }
                s.buf.set_len(at + len);
            }
            Source::Staged(at)
        } else {
            Source::Borrowed(src as usize)
        };
        s.payloads.push(Payload { dest, src, len });
        Ok(())
    }

    /// Step 5 begins: posts a send of every payload staged, in call order.
    pub(crate) fn post_sends(&self) {
        let _mpi = progress::hold();
        let mut s = lock(&self.rndv.staging);
        let mut a = lock(&self.rndv.active);
        let parity = (s.rounds % 2) as usize;
        s.rounds += 1;
        let s = &mut *s;
        s.heads.clear();
        s.heads.reserve(s.payloads.len());
        for p in &s.payloads {
            s.heads.push(match (p.src, &s.segs[parity]) {
                (Source::Segment(at), Some(seg)) => [
                    IN_SEGMENT + parity as u64,
                    s.os_pid,
                    seg.fd() as u64,
                    seg.gen,
                    at as u64,
                ],
                _ => [BY_MPI; HEAD],
            });
        }
        for (p, head) in s.payloads.iter().zip(&s.heads) {
            let mut req = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
            // SAFETY: `head` is `HEAD` words of `heads`, which is neither
            // written nor freed until these sends complete (`settle`) or
            // ever (`pinned`); `comm` is this run's communicator.
            unsafe {
                ffi::MPI_Isend(
                    head.as_ptr().cast(),
                    (HEAD * 8) as i32,
                    ffi::RSMPI_UINT8_T,
                    p.dest as i32,
                    TAG,
                    self.comm.as_raw(),
                    req.as_mut_ptr(),
                );
                a.sends.push(Request(req.assume_init()));
            }
            let base = match p.src {
                Source::Segment(_) => continue,
                Source::Staged(at) => s.buf[at..at + p.len].as_ptr(),
                Source::Borrowed(addr) => std::ptr::with_exposed_provenance::<u8>(addr),
            };
            for (at, n) in chunks(p.len) {
                let mut req = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
                // SAFETY: `base + at` is readable for `n` bytes: a range of
                // `buf`, which is neither written nor freed until these
                // sends complete (`settle`) or ever (`pinned`, `abandon`),
                // or an hpput source its caller keeps until the end of the
                // sync; `comm` is this run's communicator; `req` is an
                // out-parameter.
                unsafe {
                    ffi::MPI_Isend(
                        base.add(at).cast(),
                        n as i32,
                        ffi::RSMPI_UINT8_T,
                        p.dest as i32,
                        TAG,
                        self.comm.as_raw(),
                        req.as_mut_ptr(),
                    );
                    a.sends.push(Request(req.assume_init()));
                }
            }
        }
    }

    /// A descriptor from `sender`: receives its payload into `dst`, which
    /// the caller resolved and checked in its own table (`len` bytes of
    /// memory this process registered, written by nobody else during the
    /// sync). Waits first for the receives in flight if `dst` overlaps
    /// them.
    pub(crate) fn receive(&self, sender: usize, dst: *mut u8, len: usize) -> Result<(), Stopped> {
        let _mpi = progress::hold();
        let head = self.header(sender)?;
        if head[0] != BY_MPI {
            let src = self.in_segment(sender, head, len);
            self.before_write(dst, len)?;
            // SAFETY: `src` is `len` bytes of the sender's segment mapped
            // here (checked against the mapping), which the sender does not
            // write during this sync; `dst` is ours (caller), and no
            // receive in flight overlaps it (`before_write`).
            unsafe { crate::mem::copy(src, dst, len) };
            return Ok(());
        }
        self.before_write(dst, len)?;
        let mut a = lock(&self.rndv.active);
        for (at, n) in chunks(len) {
            let mut req = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
            // SAFETY: `dst` is writable for `len` bytes until the end of
            // step 5 (caller), and the receive completes or is cancelled
            // before then (`settle`, `abandon`); `req` is an out-parameter.
            unsafe {
                ffi::MPI_Irecv(
                    dst.add(at).cast(),
                    n as i32,
                    ffi::RSMPI_UINT8_T,
                    sender as i32,
                    TAG,
                    self.comm.as_raw(),
                    req.as_mut_ptr(),
                );
                a.recvs.push(Request(req.assume_init()));
            }
        }
        let (start, end) = (dst as usize, dst as usize + len);
        if a.ranges.is_empty() {
            (a.lo, a.hi) = (start, end);
        } else {
            (a.lo, a.hi) = (a.lo.min(start), a.hi.max(end));
        }
        a.ranges.push((start, end));
        Ok(())
    }

    /// The header of `sender`'s next payload (polling for a stop message).
    fn header(&self, sender: usize) -> Result<[u64; HEAD], Stopped> {
        let mut head = [0u64; HEAD];
        let mut req = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: `head` is `HEAD` words, live until the receive completes
        // or is cancelled below; `req` is an out-parameter.
        let mut req = unsafe {
            ffi::MPI_Irecv(
                head.as_mut_ptr().cast(),
                (HEAD * 8) as i32,
                ffi::RSMPI_UINT8_T,
                sender as i32,
                TAG,
                self.comm.as_raw(),
                req.as_mut_ptr(),
            );
            req.assume_init()
        };
        loop {
            let mut done = 0;
            // SAFETY: an active receive of this rank.
            unsafe { ffi::MPI_Test(&mut req, &mut done, ffi::RSMPI_STATUS_IGNORE) };
            if done != 0 {
                return Ok(head);
            }
            if self.is_stopped() || self.take_stop() {
                self.stop();
                // SAFETY: an active receive into `head`: cancelled, or
                // completed, before `head` goes.
                unsafe {
                    ffi::MPI_Cancel(&mut req);
                    ffi::MPI_Wait(&mut req, ffi::RSMPI_STATUS_IGNORE);
                }
                return Err(Stopped);
            }
        }
    }

    /// Where the payload of `len` bytes that `head` names is, in `sender`'s
    /// segment, mapped here (on first use of that segment). A header that
    /// names no segment or a range outside it ends the job (only a
    /// corrupted rank sends one).
    fn in_segment(&self, sender: usize, head: [u64; HEAD], len: usize) -> *const u8 {
        let [how, os, fd, gen, at] = head;
        let parity = how.wrapping_sub(IN_SEGMENT);
        let mut maps = lock(&self.rndv.maps);
        if maps.len() < self.nprocs {
            maps.resize_with(self.nprocs, Default::default);
        }
        if parity > 1 || sender >= maps.len() {
            bad_header(sender, &format!("names staging {how}"));
        }
        let slot = &mut maps[sender][parity as usize];
        if slot.as_ref().is_none_or(|m| m.gen != gen) {
            *slot = None;
            match Mapping::open(os, fd, gen) {
                Ok(m) => *slot = Some(m),
                Err(e) => bad_header(
                    sender,
                    &format!("names a staging segment that cannot be mapped ({e})"),
                ),
            }
        }
        let m = slot.as_ref().expect("mapped above");
        match usize::try_from(at)
            .ok()
            .filter(|&at| at <= m.len && len <= m.len - at)
        {
            // SAFETY: `at + len` is within the mapping (checked).
            Some(at) => unsafe { m.base().add(at) },
            None => bad_header(
                sender,
                &format!(
                    "names bytes {at}.. (+{len}) of a staging segment of {}",
                    m.len
                ),
            ),
        }
    }

    /// The caller is about to write `len` bytes at `dst`: if a receive in
    /// flight overlaps them, waits for the receives in flight.
    pub(crate) fn before_write(&self, dst: *mut u8, len: usize) -> Result<(), Stopped> {
        let _mpi = progress::hold();
        let (start, end) = (dst as usize, dst as usize + len);
        let overlaps = {
            let a = lock(&self.rndv.active);
            !a.ranges.is_empty()
                && start < a.hi
                && a.lo < end
                && a.ranges.iter().any(|&(s, e)| start < e && s < end)
        };
        if overlaps {
            self.wait_recvs()?;
        }
        Ok(())
    }

    /// Waits for every receive posted (polling for a stop message).
    fn wait_recvs(&self) -> Result<(), Stopped> {
        let mut a = lock(&self.rndv.active);
        self.wait_all(&mut a.recvs)?;
        a.ranges.clear();
        Ok(())
    }

    /// Step 5 ends well: waits for our receives, then our sends; the
    /// staging buffer is emptied (and shrunk after a spike).
    pub(crate) fn settle(&self) -> Result<(), Stopped> {
        let _mpi = progress::hold();
        self.wait_recvs()?;
        {
            let mut a = lock(&self.rndv.active);
            self.wait_all(&mut a.sends)?;
        }
        let mut s = lock(&self.rndv.staging);
        let used = s.buf.len();
        s.buf.clear();
        s.payloads.clear();
        s.high = s.high.max(used);
        s.syncs += 1;
        if s.syncs >= WINDOW {
            let keep = s.high;
            if s.buf.capacity() > KEEP.max(2 * keep) {
                s.buf.shrink_to(keep);
            }
            (s.high, s.syncs) = (0, 0);
        }
        if s.used > 0 {
            s.seg_high = s.seg_high.max(s.used);
            s.seg_syncs += 1;
            s.used = 0;
            if s.seg_syncs >= WINDOW {
                let keep = KEEP.max(2 * s.seg_high);
                s.trim = [0, 1].map(|h| s.segs[h].as_ref().filter(|g| g.cap > keep).map(|_| keep));
                (s.seg_high, s.seg_syncs) = (0, 0);
            }
        }
        Ok(())
    }

    /// Step 5 ends with an error (this process's, or a stop): receives
    /// that have not matched a send are cancelled, the others completed,
    /// so nothing writes our memory after this; our sends are left posted
    /// (their receivers may be gone), with their staged copies.
    pub(crate) fn abandon(&self) {
        let _mpi = progress::hold();
        let mut a = lock(&self.rndv.active);
        for r in &mut a.recvs {
            // SAFETY: `r` is an active receive request of this rank.
            unsafe { ffi::MPI_Cancel(&mut r.0) };
        }
        // SAFETY: every request is active or cancelled (`Request` is a
        // transparent wrapper of a handle); a cancelled receive completes
        // at once, a matched one when its data has arrived (its send is
        // posted: `post_sends` comes first).
        unsafe {
            ffi::MPI_Waitall(
                a.recvs.len() as i32,
                a.recvs.as_mut_ptr().cast(),
                ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        a.recvs.clear();
        a.ranges.clear();
        for mut r in a.sends.drain(..) {
            // SAFETY: an active send request; freeing it lets it complete
            // (or not) on its own: its buffer stays alive (`pinned`, or
            // an hpput source), see the module docs.
            unsafe { ffi::MPI_Request_free(&mut r.0) };
        }
        lock(&self.rndv.staging).pinned = true;
    }

    /// Waits for `reqs` (emptied when they complete), polling for a stop
    /// message: `Err` leaves them all in `reqs`.
    fn wait_all(&self, reqs: &mut Vec<Request>) -> Result<(), Stopped> {
        let _mpi = progress::hold();
        if reqs.is_empty() {
            return Ok(());
        }
        loop {
            if test_all(reqs) {
                return Ok(());
            }
            if self.is_stopped() || self.take_stop() {
                self.stop();
                return Err(Stopped);
            }
        }
    }
}

/// Copies `len` bytes at `src` into this superstep's staging segment
/// (made, or replaced by a larger one, as needed): the payload's offset
/// there, or `None` if no segment could be had.
///
/// # Safety
///
/// `src` must be readable for `len` bytes.
unsafe fn stage_in_segment(s: &mut Staging, src: *const u8, len: usize) -> Option<usize> {
    let parity = (s.rounds % 2) as usize;
    let at = s.used;
    let need = at.checked_add(len)?;
    if at == 0 {
        if let (Some(keep), Some(seg)) = (s.trim[parity].take(), &s.segs[parity]) {
            // Last read in the rendezvous sync before last: its memory
            // beyond what this window needed may go.
            seg.release_from(keep.max(need));
        }
    }
    let fits = s.segs[parity].as_ref().is_some_and(|g| g.cap >= need);
    if !fits {
        // This parity's segment was last read in the rendezvous sync
        // before last, which every receiver has finished: it may go, once
        // its replacement exists (without one, this payload takes the
        // private buffer and the ones before stay where they are).
        // Growing by half again at least: a superstep that stages more
        // and more makes few segments.
        let grown = s.segs[parity].as_ref().map_or(0, |g| g.cap + g.cap / 2);
        let cap = need.max(grown.min(need.saturating_mul(2))).max(KEEP);
        let seg = Segment::new(cap, s.gens + 1)?;
        s.gens += 1;
        if let Some(old) = s.segs[parity].take() {
            // SAFETY: this superstep's first `at` bytes, within both.
            unsafe { crate::mem::copy(old.base(), seg.base(), at) };
        }
        s.segs[parity] = Some(seg);
    }
    let seg = s.segs[parity].as_ref()?;
    // SAFETY: `need <= cap`; the caller vouches for `src`, which is not
    // in the segment (ours, not the program's).
    unsafe {
        let dst = seg.base().add(at);
        if need <= PLAIN_UPTO {
            crate::mem::copy(src, dst, len);
        } else {
            crate::mem::copy_streaming(src, dst, len);
        }
    }
    s.used = need;
    Some(at)
}

/// A rendezvous header that cannot be right (only a corrupted rank sends
/// one): the job ends, saying so.
fn bad_header(sender: usize, what: &str) -> ! {
    crate::error::eprint_line(&format!(
        "bsplib: bsp_sync: process {sender}'s header of a large put {what}\n"
    ));
    super::abort()
}

/// The pieces `(offset, length)` of a payload of `len` bytes.
fn chunks(len: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..len.div_ceil(CHUNK)).map(move |i| (i * CHUNK, CHUNK.min(len - i * CHUNK)))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_payload() {
        assert_eq!(chunks(0).count(), 0);
        assert_eq!(chunks(5).collect::<Vec<_>>(), vec![(0, 5)]);
        let v: Vec<_> = chunks(2 * CHUNK + 3).collect();
        assert_eq!(v, vec![(0, CHUNK), (CHUNK, CHUNK), (2 * CHUNK, 3)]);
    }

    // The rendezvous tag is none of the engine's other tags.
    const _: () = assert!(TAG != super::super::STOP_TAG && TAG < super::super::BELL_TAG);
}
