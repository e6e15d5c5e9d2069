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
//! - **Output** (`relay/`): every process's standard output and error are
//!   pipes read by one relay process, which writes whole lines only
//!   (labelled `[pid] ` with `BSPLIB_LABEL`), so that processes printing
//!   at once do not cut each other's lines.
//! - **Threads at the fork**: a lock another thread holds at the fork stays
//!   held in the forked processes. Rust runs count the threads first
//!   ([`threads`]) and refuse a fork of a multi-threaded program unless the
//!   caller vouched for its threads; C's `bsp_begin` forks regardless.

mod fork;
mod futex;
mod index;
mod mapping;
mod monitor;
mod relay;

#[cfg(feature = "raw")]
pub(crate) use fork::detach_stdin;
pub(crate) use fork::{fork, is_foreign, threads, watch_forks};
pub(crate) use futex::{futex_wait, futex_wake, Futex};
use index::{Index, Own};
pub(crate) use mapping::Mapping;
pub(crate) use monitor::join;
pub(crate) use relay::original_stderr;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;

use super::barrier::Barrier;
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
/// `BSPLIB_PROCESSES_CAPACITY`, `BSPLIB_WINDOW_MEMORY` and
/// `BSPLIB_AREA_MEMORY`).
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
    /// The memory of the run's large `Area`s (`../area_memory.rs`), mapped
    /// before the fork without reserving memory; `None` if turned off or
    /// refused.
    areas: Option<super::area_memory::AreaMemory>,
    /// Process 0 only: the forked processes and the thread reaping them.
    children: Mutex<Children>,
    /// Process 0 only: exit once the run is stopped (see `Launch::fork`).
    exit_on_stop: AtomicBool,
}

#[derive(Default)]
struct Children {
    pids: Vec<libc::pid_t>,
    monitor: Option<JoinHandle<()>>,
    /// The run's output relay (`relay/`), ended once the others exited.
    relay: Option<relay::Relay>,
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
            areas: super::area_memory::AreaMemory::new(nprocs),
            children: Mutex::default(),
            exit_on_stop: AtomicBool::new(false),
        })
    }

    /// The memory of the run's windows.
    pub(crate) fn windows(&self) -> Result<&super::window::Arena, String> {
        self.windows.as_ref().map_err(Clone::clone)
    }

    /// The memory of the run's large areas, if there is any.
    pub(crate) fn areas(&self) -> Option<&super::area_memory::AreaMemory> {
        self.areas.as_ref()
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
    #[cfg_attr(not(feature = "raw"), allow(dead_code))]
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
