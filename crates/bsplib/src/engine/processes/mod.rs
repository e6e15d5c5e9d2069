//! The `processes` engine: every BSP process is a forked OS process with its
//! own address space; they communicate through shared memory mapped before
//! the fork.
//!
//! The protocol (the exchange of streams, the barrier, failure handling) is
//! described in `README.md` beside this file. In short:
//!
//! - **Control block** (one small shared mapping): the same barrier as the
//!   `threads` engine, sleeping on a futex instead of a condition variable;
//!   the run's first error, encoded; a done flag per process.
//! - **Streams** (one large shared mapping, reserved but not committed:
//!   pages exist only once written): per process, four channels of
//!   `capacity` bytes: the outgoing streams of even and odd supersteps, the
//!   replies to get requests, and the process's result. A channel starts
//!   with a directory of `(offset, length)` per destination.
//! - **Index** (one dense shared mapping, [`Index`]): who wrote a stream of
//!   its own for whom on channels `q = 0, 1`, and each process's *common
//!   stream* (its collective calls, written once for every destination it
//!   sends no data to): a receiver reads the channels of the senders the
//!   index lists only, so a run touches the pages of its traffic, not p^2.
//! - **Fork**: process 0 is the caller; it forks the others, which die with
//!   it (`PR_SET_PDEATHSIG`), and a monitor thread of process 0 reaps them:
//!   a process that dies without ending normally stops the run with
//!   [`ErrorKind::Died`].
//! - **Threads at the fork**: a lock another thread holds at the fork stays
//!   held in the forked processes. Rust runs count the threads first
//!   ([`threads`]) and refuse a fork of a multi-threaded program unless the
//!   caller vouched for its threads; C's `bsp_begin` forks regardless.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::barrier::{Barrier, Check, Wake};
use super::World;
use crate::error::{Error, ErrorKind};
use crate::mem::{self, Records};
use crate::stream::StreamWriter;

/// Channel holding an ended process's encoded result (after the channels
/// of `stream.rs`).
const RESULT: usize = 3;
const CHANNELS: usize = 4;

/// Bytes of each process's active-message region: the ring's header, its
/// data, rounded to pages.
const AM_REGION: usize = super::AM_RING + 4096;

/// Bytes of a process's *common stream* cell (per channel `q`): the stream
/// of a superstep with registration or tag-size calls that every
/// destination it sends no data to receives alike (header and collective
/// calls), written once instead of once per destination.
const CELL: usize = 1024;

/// Bytes reserved for the encoded first error of a run.
pub(crate) const FAILURE_BYTES: usize = 1 << 16;

/// Address space reserved for the streams of one run, over all processes
/// and channels; each channel gets an equal share, at most [`MAX_CAPACITY`].
const ADDRESS_BUDGET: usize = 16 << 40;
const MAX_CAPACITY: usize = 64 << 30;
const MIN_CAPACITY: usize = 16 << 20;

/// `BSPLIB_PROCESSES_CAPACITY`: bytes per channel (suffixes `K`, `M`, `G`),
/// for tools that scan every mapped byte (valgrind's leak check) or limits
/// on address space.
fn capacity_override() -> Option<usize> {
    parse_size(&std::env::var("BSPLIB_PROCESSES_CAPACITY").ok()?)
}

/// A byte count with an optional suffix `K`, `M` or `G` (the sizes of
/// `BSPLIB_PROCESSES_CAPACITY` and `BSPLIB_WINDOW_MEMORY`).
pub(crate) fn parse_size(v: &str) -> Option<usize> {
    let v = v.trim();
    let (digits, unit) = match v.char_indices().last()? {
        (i, 'K' | 'k') => (&v[..i], 1 << 10),
        (i, 'M' | 'm') => (&v[..i], 1 << 20),
        (i, 'G' | 'g') => (&v[..i], 1 << 30),
        _ => (v, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(unit)
}

/// Sleeping on a futex in shared memory: waiters read `seq` before their
/// check and sleep only while it is unchanged; `notify` bumps it before
/// waking, so a notification after a check is never lost.
pub(crate) struct Futex {
    seq: AtomicU32,
}

impl Wake for Futex {
    /// None: with more processes than cores, the one we wait for most
    /// likely waits for our core, and each spin (`pause`) costs ~100
    /// cycles: at p = 32 on 2 cores, spinning 64 times took half of the
    /// CPU time of an empty sync (40 us a sync; 17 us without).
    const OVERSUBSCRIBED_SPINS: u32 = 0;

    fn park(&self, mut check: impl FnMut() -> Check, until: Option<std::time::Instant>) {
        loop {
            let seq = self.seq.load(Ordering::Acquire);
            match check() {
                Check::Done => return,
                Check::Retry => continue,
                Check::Sleep => {
                    // A bounded sleep: the wake-up is not lost (see above),
                    // the timeout only bounds the damage of a bug, or stops
                    // at the run's deadline.
                    let left = until.map_or(Duration::from_secs(1), |t| {
                        t.saturating_duration_since(std::time::Instant::now())
                            .min(Duration::from_secs(1))
                    });
                    futex_wait(&self.seq, seq, left);
                }
            }
        }
    }

    fn notify(&self) {
        self.seq.fetch_add(1, Ordering::Release);
        futex_wake(&self.seq);
    }
}

/// Sleeps on `word` while it holds `seen`, at most `limit` (a futex keyed
/// by address: it works across the processes of a run on a shared
/// mapping, and between threads). Spurious returns are the caller's to
/// check.
pub(crate) fn futex_wait(word: &AtomicU32, seen: u32, limit: Duration) {
    let timeout = libc::timespec {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_nsec: limit.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT reads the aligned, live 32-bit `word`; the other
    // arguments are plain values and a pointer to a live timespec.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            seen,
            &timeout as *const libc::timespec,
        );
    }
}

/// Wakes every sleeper of [`futex_wait`] on `word`.
pub(crate) fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address of the live, aligned word
    // as a key.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX) };
}

/// The control block, at the start of the control mapping; the done flags
/// and result lengths (one per process) follow it.
#[repr(C)]
struct Control {
    barrier: Barrier<Futex>,
    /// 0: no failure; 1: being written; 2: `failure[..failure_len]` ready.
    failure_state: AtomicU32,
    failure_len: AtomicU64,
    /// Written by the one process that claimed `failure_state`: other
    /// processes write these bytes, so they live in an `UnsafeCell`.
    failure: std::cell::UnsafeCell<[u8; FAILURE_BYTES]>,
}

/// Per process: the process ended normally; its result has this length
/// plus one (0: no result). (Where each process is, for the error if it
/// dies, is on the run's status board.)
#[repr(C, align(128))]
struct Slot {
    done: AtomicBool,
    result_len: AtomicU64,
    /// Point-to-point notifications to this process, per channel (see
    /// `Barrier::ring`).
    bells: [super::barrier::Bell; super::BELLS],
}

/// A shared anonymous mapping, unmapped on drop.
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    fn new(len: usize, noreserve: bool) -> Result<Self, String> {
        Self::with(len, noreserve, true)
    }

    /// An anonymous mapping of `len` bytes, shared (inherited by forked
    /// processes) or private, optionally reserving no memory.
    pub(crate) fn with(len: usize, noreserve: bool, shared: bool) -> Result<Self, String> {
        let flags = if shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        } | libc::MAP_ANONYMOUS
            | if noreserve { libc::MAP_NORESERVE } else { 0 };
        // SAFETY: a fresh anonymous mapping: no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "mmap of {len} bytes: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Mapping {
            ptr: NonNull::new(p.cast()).ok_or("mmap returned null")?,
            len,
        })
    }
}

impl Mapping {
    /// The first byte.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

// SAFETY: plain memory; who touches which bytes when is its users'
// protocol.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping was created by `new` and nothing borrowed from
        // it outlives the `Shared` that owns it.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// The shared memory of one run, as seen by one process (each process has
/// the same mappings at the same addresses, inherited through `fork`).
pub(crate) struct Shared {
    control: Mapping,
    streams: Mapping,
    /// The *index* of channels `q = 0, 1` (see [`Index`]): who wrote a
    /// stream of its own for whom, and the common streams. A receiver
    /// reads its row and the cells, dense, instead of a directory entry in
    /// every sender's channel (a page fault, and page tables, per sender in
    /// every process: most of the cost of a run at p = 1024).
    index: Index,
    /// What this process knows of its own publishing (each process has its
    /// own copy).
    own: Mutex<Own>,
    capacity: usize,
    nprocs: usize,
    /// Each process's active-message inbox (`../am_ring.rs`), mapped before
    /// the fork without reserving memory: pages are touched only where
    /// messages are written.
    am: Mapping,
    /// The memory of the run's windows (`../window/mod.rs`), mapped before the
    /// fork without reserving memory; an error (kept for the first window
    /// to report) if it could not be mapped.
    windows: Result<super::window::Arena, String>,
    /// Process 0 only: the forked processes and the thread reaping them.
    children: Mutex<Children>,
    /// Process 0 only: exit once the run is stopped (see `Launch::fork`).
    exit_on_stop: AtomicBool,
}

#[derive(Default)]
struct Children {
    pids: Vec<libc::pid_t>,
    monitor: Option<JoinHandle<()>>,
}

// SAFETY: everything shared between threads of one OS process (process 0's
// monitor thread and the process itself) is atomics in the control block,
// or behind the `children` mutex; the streams follow the protocol of the
// README (written only by their owner, read only between barriers).
unsafe impl Sync for Shared {}
// SAFETY: as above; the raw pointers are to mappings owned by this value.
unsafe impl Send for Shared {}

impl Shared {
    /// Maps the memory of a run of `nprocs` processes.
    pub(crate) fn new(nprocs: usize) -> Result<Self, String> {
        let control_len = std::mem::size_of::<Control>() + nprocs * std::mem::size_of::<Slot>();
        let control = Mapping::new(control_len, false)?;
        // SAFETY: the mapping is fresh, large enough, page-aligned, and
        // zeroed (all-zero is a valid `Slot`); the barrier is written in
        // place before anyone reads it.
        unsafe {
            let c = control.ptr.as_ptr().cast::<Control>();
            std::ptr::addr_of_mut!((*c).barrier).write(Barrier::with_wake(
                nprocs,
                Futex {
                    seq: AtomicU32::new(0),
                },
            ));
        }
        let mut capacity = capacity_override()
            .unwrap_or_else(|| (ADDRESS_BUDGET / (nprocs * CHANNELS)).min(MAX_CAPACITY))
            .max(MIN_CAPACITY)
            & !4095;
        let index = Index::new(nprocs)?;
        let streams = loop {
            match Mapping::new(capacity * nprocs * CHANNELS, true) {
                Ok(m) => break m,
                Err(e) if capacity / 2 < MIN_CAPACITY => return Err(e),
                Err(_) => capacity /= 2,
            }
        };
        let am = Mapping::new(nprocs * AM_REGION, true)?;
        Ok(Shared {
            control,
            streams,
            index,
            am,
            own: Mutex::default(),
            capacity,
            nprocs,
            windows: super::window::Arena::new(nprocs, true),
            children: Mutex::default(),
            exit_on_stop: AtomicBool::new(false),
        })
    }

    /// The memory of the run's windows.
    pub(crate) fn windows(&self) -> Result<&super::window::Arena, String> {
        self.windows.as_ref().map_err(Clone::clone)
    }

    fn control(&self) -> &Control {
        // SAFETY: initialised in `new`; only atomics and bytes guarded by
        // `failure_state` are accessed through it.
        unsafe { &*self.control.ptr.as_ptr().cast::<Control>() }
    }

    fn slot(&self, pid: usize) -> &Slot {
        assert!(pid < self.nprocs);
        // SAFETY: the slots follow the control block inside the mapping
        // (see `new`); zero is a valid `Slot`.
        unsafe {
            &*self
                .control
                .ptr
                .as_ptr()
                .add(std::mem::size_of::<Control>())
                .cast::<Slot>()
                .add(pid)
        }
    }

    /// Process `pid`'s active-message inbox.
    pub(crate) fn am_ring(&self, pid: usize) -> super::am_ring::Ring {
        assert!(pid < self.nprocs);
        // SAFETY: region `pid` of the inbox mapping: page-aligned, zeroed
        // when mapped, shared by every process of the run at this address
        // for as long as `self` lives, and used only through `Ring` views.
        unsafe { super::am_ring::Ring::at(self.am.ptr.as_ptr().add(pid * AM_REGION), AM_REGION) }
    }

    /// Process `pid`'s notification counter of channel `ch`.
    pub(crate) fn bell(&self, pid: usize, ch: usize) -> &super::barrier::Bell {
        &self.slot(pid).bells[ch]
    }

    pub(crate) fn barrier(&self) -> &Barrier<Futex> {
        &self.control().barrier
    }

    /// Bytes per channel and process.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// The start of channel `ch` of process `pid`.
    pub(crate) fn channel(&self, pid: usize, ch: usize) -> *mut u8 {
        assert!(pid < self.nprocs && ch < CHANNELS);
        // SAFETY: in bounds of the streams mapping.
        unsafe {
            self.streams
                .ptr
                .as_ptr()
                .add((pid * CHANNELS + ch) * self.capacity)
        }
    }

    /// A writer of the streams of process `me` on channel `ch`.
    ///
    /// # Safety
    ///
    /// Only `me` writes its channels, and only while no other process reads
    /// that channel (the README's protocol).
    pub(crate) unsafe fn writer(&self, me: usize, ch: usize) -> StreamWriter<'_> {
        // SAFETY: the channel is `capacity` bytes of the streams mapping,
        // page-aligned; exclusivity is the caller's contract.
        unsafe { StreamWriter::fixed(self.channel(me, ch), self.capacity, self.nprocs) }
    }

    /// The stream process `src` wrote on channel `ch` for process `dst`;
    /// `None` if its directory entry is not an aligned range inside the
    /// channel (the directory is another process's writing: not trusted).
    ///
    /// # Safety
    ///
    /// `src` finished writing the channel before a barrier this process
    /// passed, and will not write it again while the view is used.
    pub(crate) unsafe fn stream(&self, src: usize, ch: usize, dst: usize) -> Option<Records<'_>> {
        if ch < 2 && !self.index.mark(ch, dst, src) {
            // SAFETY: forwarded (the cell is written with channel `ch`).
            return unsafe { self.index.common(src, ch) };
        }
        let base = self.channel(src, ch);
        let dir = base.cast::<u64>();
        // SAFETY: the directory of `nprocs` (offset, length) pairs starts
        // the channel and was written by `src` (caller's contract).
        let (off, len) = unsafe {
            (
                dir.add(2 * dst).read() as usize,
                dir.add(2 * dst + 1).read() as usize,
            )
        };
        let inside = off.checked_add(len).is_some_and(|end| end <= self.capacity);
        if !inside || off % 8 != 0 {
            return None;
        }
        // SAFETY: inside the channel and 8-aligned (both checked), unchanged
        // while used (caller's contract).
        Some(unsafe { Records::new(base.add(off), len) })
    }

    /// Process `me` writes to `dst` for the first time in the superstep of
    /// parity `q` (`World::note_sender`): its publish of channel `q` looks
    /// at these destinations only.
    pub(crate) fn note_dest(&self, q: usize, dst: usize) {
        let mut own = self.own.lock().unwrap_or_else(|p| p.into_inner());
        own.pending[q].push(dst as u32);
    }

    /// Process `me` publishes channel `q` (see [`Publish`]).
    ///
    /// # Safety
    ///
    /// As for [`writer`](Self::writer): only `me`, while nobody reads
    /// channel `q`.
    pub(crate) unsafe fn publish(&self, me: usize, q: usize) -> Publish<'_> {
        let mut own = self.own.lock().unwrap_or_else(|p| p.into_inner());
        if own.marked[q].len() != self.nprocs {
            own.marked[q] = vec![0; self.nprocs];
        }
        own.round = own.round.wrapping_add(1).max(1);
        Publish {
            shared: self,
            me,
            q,
            own,
        }
    }

    /// The processes that wrote a stream of their own for `me` on channel
    /// `q`, in pid order. Only after barrier A of the sync that reads
    /// channel `q`, and within it.
    pub(crate) fn senders(&self, me: usize, q: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.nprocs).filter(move |&src| self.index.mark(q, me, src))
    }

    /// Records `bytes` (an encoded error) as the run's failure unless one
    /// is recorded; true if this call recorded it.
    pub(crate) fn record_failure(&self, bytes: &[u8]) -> bool {
        let c = self.control();
        if c.failure_state
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return false;
        }
        let n = bytes.len().min(FAILURE_BYTES);
        // SAFETY: state 1 gives this process exclusive access to `failure`
        // until it publishes state 2; readers wait for state 2. The write
        // goes through the `UnsafeCell`'s pointer, not a shared reference.
        unsafe { mem::copy(bytes.as_ptr(), c.failure.get().cast::<u8>(), n) };
        c.failure_len.store(n as u64, Ordering::Relaxed);
        c.failure_state.store(2, Ordering::Release);
        true
    }

    /// The encoded failure of the run, if one was recorded.
    pub(crate) fn failure(&self) -> Option<Vec<u8>> {
        let c = self.control();
        loop {
            match c.failure_state.load(Ordering::Acquire) {
                0 => return None,
                2 => break,
                _ => std::thread::yield_now(),
            }
        }
        let n = (c.failure_len.load(Ordering::Relaxed) as usize).min(FAILURE_BYTES);
        // SAFETY: state 2 (acquired above) means the bytes were written and
        // are never written again in this run.
        Some(unsafe { std::slice::from_raw_parts(c.failure.get().cast::<u8>(), n) }.to_vec())
    }

    /// Whether process 0 exits once the run is stopped.
    pub(crate) fn exit_on_stop(&self, yes: bool) {
        self.exit_on_stop.store(yes, Ordering::Relaxed);
    }

    /// Process `pid` ended normally, leaving `result` (if any).
    pub(crate) fn set_done(&self, pid: usize, result: Option<&[u8]>) -> Result<(), Error> {
        let slot = self.slot(pid);
        if let Some(bytes) = result {
            if bytes.len() > self.capacity {
                return Err(Error::new(
                    ErrorKind::Capacity {
                        needed: bytes.len(),
                        capacity: self.capacity,
                    },
                    "the SPMD function",
                    pid,
                    0,
                    None,
                ));
            }
            // SAFETY: the result channel of `pid` is written only by `pid`,
            // once, and read by process 0 after `pid` exited.
            unsafe { mem::copy(bytes.as_ptr(), self.channel(pid, RESULT), bytes.len()) };
            slot.result_len
                .store(bytes.len() as u64 + 1, Ordering::Relaxed);
        }
        slot.done.store(true, Ordering::Release);
        Ok(())
    }

    /// The result process `pid` left, once it exited.
    pub(crate) fn result(&self, pid: usize) -> Option<&[u8]> {
        let slot = self.slot(pid);
        if !slot.done.load(Ordering::Acquire) {
            return None;
        }
        let n = slot.result_len.load(Ordering::Relaxed).checked_sub(1)? as usize;
        // SAFETY: written by `pid` before its done flag (acquired above);
        // `n <= capacity` was checked by `set_done`.
        Some(unsafe { std::slice::from_raw_parts(self.channel(pid, RESULT), n) })
    }
}

/// The index of channels `q = 0, 1`, in one shared mapping (reserved, not
/// committed: pages exist where written), three dense arrays:
///
/// - `lens[q][src]` (`u32`): 0, or 1 + the length of `src`'s common stream;
/// - `marks[q][dst][src]` (`u8`, rows by receiver): 1 when `src` wrote a
///   stream of its own for `dst` in its channel `q`;
/// - `cells[q][src]` ([`CELL`] bytes): `src`'s common stream.
///
/// Written by each process for itself (its length and cell, its column of
/// marks) before barrier A, read by the others after it.
struct Index {
    map: Mapping,
    nprocs: usize,
    marks_at: usize,
    cells_at: usize,
}

impl Index {
    fn new(nprocs: usize) -> Result<Self, String> {
        let marks_at = (2 * nprocs * 4).next_multiple_of(CELL);
        let cells_at = marks_at + (2 * nprocs * nprocs).next_multiple_of(CELL);
        Ok(Index {
            map: Mapping::new(cells_at + 2 * nprocs * CELL, true)?,
            nprocs,
            marks_at,
            cells_at,
        })
    }

    fn len_cell(&self, q: usize, src: usize) -> &AtomicU32 {
        assert!(q < 2 && src < self.nprocs);
        // SAFETY: in bounds of the mapping (the first `8 p` bytes), 4-aligned,
        // zeroed at creation; only accessed atomically.
        unsafe {
            &*self
                .map
                .ptr
                .as_ptr()
                .cast::<AtomicU32>()
                .add(q * self.nprocs + src)
        }
    }

    fn mark_cell(&self, q: usize, dst: usize, src: usize) -> &AtomicU8 {
        assert!(q < 2 && dst < self.nprocs && src < self.nprocs);
        // SAFETY: in bounds of the mapping (`2 p^2` bytes from `marks_at`),
        // zeroed at creation; only accessed atomically.
        unsafe {
            &*self
                .map
                .ptr
                .as_ptr()
                .add(self.marks_at + (q * self.nprocs + dst) * self.nprocs + src)
                .cast::<AtomicU8>()
        }
    }

    /// Whether `src` wrote a stream of its own for `dst` on channel `q`.
    fn mark(&self, q: usize, dst: usize, src: usize) -> bool {
        self.mark_cell(q, dst, src).load(Ordering::Relaxed) != 0
    }

    /// The start of the common-stream cell of process `src`, channel `q`.
    fn cell(&self, q: usize, src: usize) -> *mut u8 {
        assert!(q < 2 && src < self.nprocs);
        // SAFETY: in bounds of the mapping (`2 p CELL` bytes from
        // `cells_at`, which is `CELL`-aligned).
        unsafe {
            self.map
                .ptr
                .as_ptr()
                .add(self.cells_at + (q * self.nprocs + src) * CELL)
        }
    }

    /// The common stream `src` published on channel `q` (empty if none);
    /// `None` if its length does not fit its cell (another process's
    /// writing: not trusted).
    ///
    /// # Safety
    ///
    /// As for [`Shared::stream`].
    unsafe fn common(&self, src: usize, q: usize) -> Option<Records<'_>> {
        match self.len_cell(q, src).load(Ordering::Relaxed) as usize {
            0 => Some(Records::empty()),
            n if n - 1 <= CELL => {
                // SAFETY: inside the cell, which is 8-aligned; written by
                // `src` before a barrier we passed and unchanged while the
                // view is used (caller's contract).
                Some(unsafe { Records::new(self.cell(q, src), n - 1) })
            }
            _ => None,
        }
    }
}

/// A process's own bookkeeping of its publishing.
#[derive(Default)]
struct Own {
    /// Per parity: the destinations written in the current superstep of
    /// that parity, in the order of their first write.
    pending: [Vec<u32>; 2],
    /// Per channel `q`: its column of the index as last written (the round
    /// of the publish that last marked each destination; 0: unmarked) ...
    marked: [Vec<u32>; 2],
    /// ... and the destinations marked.
    listed: [Vec<u32>; 2],
    /// Publishes so far (from 1).
    round: u32,
}

/// One process's publish of channel `q` (from [`Shared::publish`]): its
/// common stream, and its column of the index, which is written only where
/// it changed: [`own`](Self::own) marks the destinations given a stream of
/// their own this time; the others marked last time are unmarked when the
/// publish ends (on drop).
pub(crate) struct Publish<'a> {
    shared: &'a Shared,
    me: usize,
    q: usize,
    own: std::sync::MutexGuard<'a, Own>,
}

impl Publish<'_> {
    /// Stores `common` as the stream every destination not given a stream
    /// of its own receives (`None`: an empty one). False if it does not fit
    /// its cell: every destination then needs a stream of its own.
    pub(crate) fn set_common(&mut self, common: Option<&[u8]>) -> bool {
        let index = &self.shared.index;
        let len = index.len_cell(self.q, self.me);
        match common {
            Some(bytes) if bytes.len() <= CELL => {
                // SAFETY: the cell is `CELL` bytes of the index mapping,
                // written only by `me`, and read by nobody now (contract of
                // `Shared::publish`); `bytes` is a live slice elsewhere.
                unsafe { mem::copy(bytes.as_ptr(), index.cell(self.q, self.me), bytes.len()) };
                len.store(bytes.len() as u32 + 1, Ordering::Relaxed);
                true
            }
            _ => {
                if len.load(Ordering::Relaxed) != 0 {
                    len.store(0, Ordering::Relaxed);
                }
                common.is_none()
            }
        }
    }

    /// The destinations written in this superstep (taken: hand them back
    /// with [`recycle`](Self::recycle) to keep the allocation).
    pub(crate) fn take_pending(&mut self) -> Vec<u32> {
        let q = self.q;
        std::mem::take(&mut self.own.pending[q])
    }

    /// Hands back (emptied) what [`take_pending`](Self::take_pending) gave.
    pub(crate) fn recycle(&mut self, mut pending: Vec<u32>) {
        pending.clear();
        let q = self.q;
        self.own.pending[q] = pending;
    }

    /// `dst` is given a stream of its own in this publish; false if it
    /// already was.
    pub(crate) fn own(&mut self, dst: usize) -> bool {
        let (q, round) = (self.q, self.own.round);
        let own = &mut *self.own;
        match own.marked[q][dst] {
            r if r == round => return false,
            0 => {
                self.shared
                    .index
                    .mark_cell(q, dst, self.me)
                    .store(1, Ordering::Relaxed);
                own.listed[q].push(dst as u32);
            }
            _ => {}
        }
        own.marked[q][dst] = round;
        true
    }
}

impl Drop for Publish<'_> {
    /// Unmarks the destinations marked last time and not this time.
    fn drop(&mut self) {
        let (q, round) = (self.q, self.own.round);
        let own = &mut *self.own;
        let (marked, listed) = (&mut own.marked[q], &mut own.listed[q]);
        listed.retain(|&dst| {
            let dst = dst as usize;
            if marked[dst] == round {
                return true;
            }
            marked[dst] = 0;
            self.shared
                .index
                .mark_cell(q, dst, self.me)
                .store(0, Ordering::Relaxed);
            false
        });
        own.pending[q].clear();
    }
}

/// Set while this library forks the processes of a run: any other fork is
/// the program's own.
static OWN_FORK: AtomicBool = AtomicBool::new(false);
/// This OS process was forked by the program itself from a BSP process (a
/// helper, `popen`, ...): it is not a BSP process and must not touch the run.
static FOREIGN: AtomicBool = AtomicBool::new(false);

extern "C" fn after_fork_in_child() {
    if !OWN_FORK.load(Ordering::Relaxed) {
        FOREIGN.store(true, Ordering::Relaxed);
    }
}

/// Starts telling this library's forks from the program's own (see
/// [`is_foreign`]); idempotent.
pub(crate) fn watch_forks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a child handler that only stores to an atomic
        // (async-signal-safe, as a handler run inside `fork` must be).
        unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
    });
}

/// True in a process the program forked itself from a BSP process, once
/// [`watch_forks`] was called.
pub(crate) fn is_foreign() -> bool {
    FOREIGN.load(Ordering::Relaxed)
}

/// How long a count of more than one thread is read again before it is
/// believed (see [`threads`]).
const SETTLE: Duration = Duration::from_millis(100);

/// The threads of this OS process, the caller's included, as the kernel
/// counts them (`/proc/self/stat`, field 20); `None` when that cannot be
/// read (no `/proc`): the caller then does not know.
///
/// A thread that was just joined can still be counted for a moment: the
/// kernel wakes its joiner when it lets go of the thread's stack, a few
/// steps before it takes the thread off the count. A program that joins
/// the threads of a `threads` run, or the monitor of an earlier
/// `processes` run, and forks at once must not be refused for them, so a
/// count above one is read again, for up to [`SETTLE`], before it is
/// believed.
pub(crate) fn threads() -> Option<usize> {
    let start = std::time::Instant::now();
    let mut nap = Duration::from_micros(50);
    loop {
        let n = read_threads()?;
        if n <= 1 || start.elapsed() >= SETTLE {
            return Some(n);
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(5));
    }
}

/// One reading of `num_threads` in `/proc/self/stat`.
fn read_threads() -> Option<usize> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The second field, the command name in parentheses, may itself hold
    // spaces and parentheses: count fields from the last `)`, which is
    // followed by field 3 (the state); field 20 is 17 fields further.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_ascii_whitespace().nth(17)?.parse().ok()
}

/// Forks processes `1..nprocs` of `world`; returns this process's pid (0 in
/// the caller). Process 0 then runs a thread that reaps the others and
/// stops the run if one dies without ending normally.
pub(crate) fn fork(world: &Arc<World>, shared: &Shared) -> Result<usize, Error> {
    // Buffered output would be written twice, by parent and child: flush
    // Rust's and C's.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // SAFETY: flushing every C stdio stream has no preconditions.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    // Settle the lazily set statics the children read: one that another
    // thread of this program is setting at the fork would stay "being set"
    // forever in the children, whose first reader would then wait for ever
    // (a test harness running runs in parallel hung so, one run in
    // hundreds, in `cma::available`). Settling them here waits for such a
    // thread first.
    let _ = super::cma::available();
    let _ = crate::engine::cores();
    let parent = std::process::id() as libc::pid_t;
    let mut children = shared.children.lock().unwrap_or_else(|p| p.into_inner());
    OWN_FORK.store(true, Ordering::Relaxed);
    let _own = OwnFork;
    for pid in 1..shared.nprocs {
        // SAFETY: `fork` has no memory-safety preconditions; in the child
        // only this thread exists, and it goes on to run BSP code that
        // allocates (glibc's malloc is fork-safe) and exits with `_exit`.
        match unsafe { libc::fork() } {
            0 => {
                // SAFETY: prctl with PR_SET_PDEATHSIG only sets a signal.
                unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
                // SAFETY: getppid has no preconditions.
                if unsafe { libc::getppid() } != parent {
                    // The parent died before the death signal was armed.
                    // SAFETY: ends this process at once.
                    unsafe { libc::_exit(1) };
                }
                children.pids.clear();
                return Ok(pid);
            }
            -1 => {
                let err = Error::new(
                    ErrorKind::Startup {
                        detail: format!(
                            "fork of process {pid}: {}",
                            std::io::Error::last_os_error()
                        ),
                    },
                    "bsp_begin",
                    0,
                    0,
                    None,
                );
                world.fail(err.clone());
                kill_all(&children.pids);
                return Err(err);
            }
            child => children.pids.push(child),
        }
    }
    let pids = children.pids.clone();
    let watched = Arc::clone(world);
    children.monitor = Some(
        std::thread::Builder::new()
            .name("bsp-monitor".into())
            .spawn(move || monitor(&watched, pids))
            .map_err(|e| {
                Error::new(
                    ErrorKind::Startup {
                        detail: format!("monitor thread: {e}"),
                    },
                    "bsp_begin",
                    0,
                    0,
                    None,
                )
            })?,
    );
    Ok(0)
}

/// Clears [`OWN_FORK`] when `fork` returns, whichever way.
struct OwnFork;

impl Drop for OwnFork {
    fn drop(&mut self) {
        OWN_FORK.store(false, Ordering::Relaxed);
    }
}

/// Process 0: waits until every forked process exited (killing them if the
/// run failed and they linger), then returns.
pub(crate) fn join(shared: &Shared) {
    let monitor = shared
        .children
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .monitor
        .take();
    if let Some(m) = monitor {
        let _ = m.join();
    }
}

fn kill_all(pids: &[libc::pid_t]) {
    for &p in pids {
        // SAFETY: sending a signal to our own child has no memory effects.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
}

/// How long processes may take to exit by themselves once the run failed,
/// before they are killed. A process that waits in the library leaves at
/// once; one that computes leaves at its next call. 200 ms was too short
/// on a loaded two-core machine: a process not scheduled in that time was
/// killed before it could return its `Stopped` (a test of CI saw one of
/// four processes vanish so, once).
const GRACE: Duration = Duration::from_secs(1);

/// Reaps the forked processes `pids` (process `i + 1` is `pids[i]`).
fn monitor(world: &World, pids: Vec<libc::pid_t>) {
    let shared = world.shared().expect("monitor of a processes run");
    let mut alive: Vec<(usize, libc::pid_t)> =
        pids.iter().enumerate().map(|(i, &p)| (i + 1, p)).collect();
    let mut nap = Duration::from_micros(100);
    let mut stopped_at = None;
    let mut rounds = 0u32;
    while !alive.is_empty() {
        rounds = rounds.wrapping_add(1);
        // One `waitpid` per process is p system calls a round (p = 1024:
        // 2% of a core): only when a child is waiting to be reaped (and,
        // for safety, every 64th round).
        if rounds % 64 == 0 || child_exited() {
            reap(world, shared, &mut alive);
        }
        if world.is_stopped() {
            let since = *stopped_at.get_or_insert_with(std::time::Instant::now);
            if since.elapsed() > GRACE {
                // Not while a process prints the run's error.
                world.reported().wait(Duration::from_secs(1));
                kill_all(&alive.iter().map(|&(_, p)| p).collect::<Vec<_>>());
            }
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(5));
    }
    if world.is_stopped() && shared.exit_on_stop.load(Ordering::Relaxed) {
        world.report();
        // SAFETY: flushing C stdio has no preconditions; `_exit` ends the
        // process (every other process of the run has exited).
        unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::_exit(1);
        }
    }
}

/// True if a child of this OS process has ended and waits to be reaped
/// (any child: the program's own too), or if that cannot be told; reaps
/// nothing.
fn child_exited() -> bool {
    // SAFETY: an all-zero `siginfo_t` is a valid value, which `waitid`
    // overwrites (or leaves zero when no child has ended: WNOHANG); with
    // WNOWAIT the child stays waitable.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        r != 0 || info.si_signo != 0
    }
}

/// Reaps the processes of `alive` that ended; one that did not end
/// normally stops the run with [`ErrorKind::Died`].
fn reap(world: &World, shared: &Shared, alive: &mut Vec<(usize, libc::pid_t)>) {
    alive.retain(|&(pid, os_pid)| {
        let mut status = 0;
        // SAFETY: waits for our own child without blocking; `status`
        // is a live int.
        let r = unsafe { libc::waitpid(os_pid, &mut status, libc::WNOHANG) };
        if r == 0 {
            return true;
        }
        if r == os_pid && !(shared.slot(pid).done.load(Ordering::Acquire) && exited_ok(status)) {
            world.fail(Error::new(
                ErrorKind::Died {
                    detail: death(pid, status),
                },
                "the SPMD function",
                pid,
                world.board().get(pid).0,
                None,
            ));
        }
        false
    });
}

/// Gives a forked process `/dev/null` as standard input: input belongs to
/// process 0.
pub(crate) fn detach_stdin() {
    // SAFETY: opening a file and duplicating a descriptor onto 0 only
    // changes this process's descriptor table.
    unsafe {
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if fd >= 0 {
            libc::dup2(fd, 0);
            libc::close(fd);
        }
    }
}

fn exited_ok(status: libc::c_int) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

/// What became of process `pid`, from its wait status.
fn death(pid: usize, status: libc::c_int) -> String {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        // SAFETY: strsignal returns a pointer to a static or thread-local
        // string, valid until the next call on this thread.
        let name = unsafe {
            let s = libc::strsignal(sig);
            if s.is_null() {
                String::from("unknown signal")
            } else {
                std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
            }
        };
        format!("process {pid} was killed by signal {sig} ({name})")
    } else {
        format!(
            "process {pid} exited with status {} without ending its SPMD part normally",
            libc::WEXITSTATUS(status)
        )
    }
}
