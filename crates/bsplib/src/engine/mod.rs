//! The transport contract: what the one superstep protocol
//! (`superstep.rs`) needs from an engine. `README.md` beside this file
//! states it in full; in short:
//!
//! - [`World::barrier`]: every process arrives with a word of flags and leaves
//!   with the OR of all of them (so "did anyone communicate or register?"
//!   travels with the arrival and an empty superstep costs one barrier); it
//!   returns an [`Interrupt`] instead when the run was stopped (the
//!   `STOPPED` bit of the barrier word), a process ended while others wait,
//!   or the deadline passed.
//! - Streams: [`World::writer`], [`World::deliver`], [`World::stream`] on
//!   channels `q` (exchange engines, [`World::distributed`]: `processes`,
//!   `mpi`) and `REPLIES` (every engine). Engines sharing one address space
//!   (`serial`, `threads`) let the protocol read each sender's mailbox
//!   ([`World::mailbox`]) in place instead of channel `q`.
//! - [`World::notify`] / [`World::wait_notified`]: point-to-point
//!   notifications, for the one-sided synchronisation layers.
//! - [`World::fail`] / [`World::ended`]: stop every process, record the
//!   error of the run (the first one wins, across address spaces too), and
//!   wake anyone waiting.
//!
//! Semantics and argument checks live in the core (`process`, `drma`,
//! `bsmp`, `superstep`); an engine only synchronises and moves bytes.
//! Dispatch is a closed enum, not a trait object: the barrier is on the hot
//! path of every sync.
//!
//! This file holds [`World`], its constructors and its barrier; the rest of
//! its methods are in files named after their part of the contract:
//! `streams.rs`, `notify.rs`, `am_path.rs`, `senders.rs`, `failure.rs`
//! (the run's error, stop and report), `ext.rs` (the upper layers'
//! set-ups), `rendezvous.rs` and `bookkeeping.rs`.

pub(crate) mod am_ring;
pub(crate) mod area_memory;
pub(crate) mod barrier;
pub(crate) mod board;
pub(crate) mod cma;
mod kind;
#[cfg(feature = "mpi")]
mod mpi;
mod processes;
mod serial;
pub(crate) mod start;
mod threads;
pub(crate) mod window;

mod am_path;
mod bookkeeping;
mod ext;
mod failure;
mod notify;
mod rendezvous;
mod senders;
mod streams;

pub use kind::Engine;

pub(crate) use am_path::{AM_BELL, AM_RING};
use bookkeeping::{check_memory, out_of_memory};
use ext::EXT_SLOTS;
pub(crate) use failure::Reported;
pub(crate) use notify::BELLS;
pub(crate) use rendezvous::{Rendezvous, RendezvousStopped, DESCRIPTOR, MIN_LARGE};
use senders::{Senders, SPARSE_FROM};

use std::sync::Mutex;

use crossbeam_utils::CachePadded;

use crate::error::Error;
use crate::mailbox::Mailbox;

/// The machine's hardware threads, asked once (the standard library
/// reads the cgroup files at every call: tens of microseconds).
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// This host's name (`gethostname`); `"unknown"` if it cannot be read.
/// The one reading of it: the probe keys its stored machines by it and
/// every profile names its process's host with it.
pub(crate) fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at
    // most that many bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match rc {
        0 if end > 0 => String::from_utf8_lossy(&buf[..end]).into_owned(),
        _ => "unknown".into(),
    }
}

/// The 1-minute load average: `BSPLIB_LOADAVG` if set (for tests: a
/// number, or anything else for "unknown"), else the first field of
/// `/proc/loadavg`; `None` if unknown. The one reading of it: profiles
/// record it, and the tools warn by it (`probe::load_average`).
pub(crate) fn load_average() -> Option<f64> {
    let text = match std::env::var("BSPLIB_LOADAVG") {
        Ok(v) => v,
        Err(_) => std::fs::read_to_string("/proc/loadavg").ok()?,
    };
    text.split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|l: &f64| l.is_finite() && *l >= 0.0)
}

/// True when MPI's own collectives can carry `total` bytes (their counts
/// are `int`s).
pub(crate) fn coll_fits(total: usize) -> bool {
    i32::try_from(total).is_ok()
}

/// Why a barrier did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interrupt {
    /// The run was stopped (an error, a panic or `bsp_abort` somewhere).
    Stopped,
    /// Process `0` returned from the SPMD function and will never arrive.
    Ended(usize),
    /// The run's deadline passed while this process waited.
    Deadline,
}

/// The synchronisation half of an engine.
// One per run, inside an `Arc`: the size difference costs nothing, and
// boxing would add an indirection to every barrier.
#[allow(clippy::large_enum_variant)]
enum Sync {
    Serial(serial::Sync),
    Threads(threads::Barrier),
    Processes(processes::Shared),
    #[cfg(feature = "mpi")]
    Mpi(mpi::Mpi),
}

/// The id of the next run in this program (see [`World::id`]).
static NEXT_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The state one run shares between its processes.
pub(crate) struct World {
    /// This run's id, unique in the program (the forked processes of a
    /// `processes` run inherit it, and share it).
    id: u64,
    mailboxes: Box<[CachePadded<Mailbox>]>,
    /// `serial`, `threads`: each process's notification counters (the
    /// `processes` engine keeps them in shared memory, `mpi` counts
    /// messages).
    bells: Box<[CachePadded<[barrier::Bell; BELLS]>]>,
    /// `serial`, `threads`: per process, who wrote to it in the superstep
    /// of each parity ([`World::note_sender`]).
    senders: Box<[CachePadded<Senders>]>,
    /// `serial`, `threads`: each process's active-message inbox, made on
    /// first use (by its owner or its first sender).
    am: Box<[std::sync::OnceLock<am_ring::OwnedRing>]>,
    failure: Mutex<Option<Error>>,
    /// Where every process is, and whether the run's error was reported.
    board: board::Board,
    sync: Sync,
    /// The set-ups of the layers above the transport, one of each type
    /// (the profiler's, the checking mode's, the machine parameters that
    /// every process of a run must share): kept for the run, and across
    /// the fork, without the transport knowing them ([`World::ext`]).
    ext: [std::sync::OnceLock<Box<dyn std::any::Any + Send + std::marker::Sync>>; EXT_SLOTS],
    /// Serialises [`World::ext_or_init`]'s first set of a type.
    ext_init: Mutex<()>,
    /// How the run's error is written once (the front door's, set by
    /// whoever made the world; a plain line without one).
    reporter: std::sync::OnceLock<fn(&World) -> bool>,
    /// The progress view (`progress.rs`): `Some(force)` when on.
    progress: std::sync::OnceLock<bool>,
    /// `serial`, `threads`: the memory of the run's windows, made on the
    /// first window (`window/mod.rs`).
    windows: std::sync::OnceLock<Result<window::Arena, String>>,
}

impl World {
    /// A world for the `serial` engine (one process).
    pub(crate) fn serial() -> Result<Self, String> {
        Self::with(1, Sync::Serial(serial::Sync::new()))
    }

    /// A world for the `threads` engine with `nprocs` processes.
    pub(crate) fn threads(nprocs: usize) -> Result<Self, String> {
        Self::with(nprocs, Sync::Threads(threads::Barrier::new(nprocs)))
    }

    /// A world for the `processes` engine with `nprocs` processes (before
    /// the fork: see `processes::fork`).
    pub(crate) fn processes(nprocs: usize) -> Result<Self, String> {
        check_memory(nprocs)?;
        // (The machine parameters are read before the fork by the front
        // door, `Runtime::world`: every process then has the same.)
        Self::with(nprocs, Sync::Processes(processes::Shared::new(nprocs)?))
    }

    /// A world for one rank of an `mpi` run of `nprocs` processes.
    #[cfg(feature = "mpi")]
    pub(crate) fn mpi(nprocs: usize, engine: mpi::Mpi) -> Result<Self, String> {
        Self::with(nprocs, Sync::Mpi(engine))
    }

    /// Stops a process that waits in a barrier longer than `limit` (the
    /// run's deadline).
    pub(crate) fn set_deadline(&self, limit: Option<std::time::Duration>) {
        match &self.sync {
            Sync::Serial(s) => s.one().set_deadline(limit),
            Sync::Threads(b) => b.set_deadline(limit),
            Sync::Processes(s) => s.barrier().set_deadline(limit),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.set_deadline(limit),
        }
    }

    /// The run's deadline, if any.
    pub(crate) fn deadline(&self) -> Option<std::time::Duration> {
        match &self.sync {
            Sync::Serial(s) => s.one().deadline(),
            Sync::Threads(b) => b.deadline(),
            Sync::Processes(s) => s.barrier().deadline(),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.deadline(),
        }
    }

    /// The processes other than `me` (which waits, in a sync or
    /// elsewhere) that have not arrived at the sync ending `superstep`,
    /// with where each was last seen: the deadline's message. From the
    /// status board; on `mpi`, whose ranks share none, from the answers of
    /// the others' waits (and then returned only by the rank that reports:
    /// `mpi/deadline.rs`).
    pub(crate) fn laggards(&self, me: usize, superstep: u64) -> String {
        let here = (superstep, board::State::Syncing);
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            let answers = m.deadline_round();
            return board::laggards_of(self.nprocs(), superstep, |q| match answers.get(q) {
                _ if q == me => here,
                Some(Some(word)) => board::decode(*word),
                // No answer: not in a wait of the library (computing, or
                // stopped) since the last barrier, which it passed.
                _ => (superstep, board::State::Computing),
            });
        }
        board::laggards_of(self.nprocs(), superstep, |q| match q == me {
            true => here,
            false => self.board.get(q),
        })
    }

    /// Process `pid` waits in barrier A of `superstep` past its fence
    /// (`Some`: active-message mode; nothing of its is in flight, and its
    /// handlers' sends are held until the sync returns), or no longer.
    pub(crate) fn set_fenced(&self, pid: usize, superstep: Option<u64>) {
        self.board.set_fenced(pid, superstep);
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            m.note_fenced(superstep);
        }
    }

    /// Whether every process other than `me` has ended or waits in barrier
    /// A of `superstep` past its fence: then nothing can reach `me` in this
    /// superstep any more. `None`: not known yet (on `mpi` the others are
    /// asked, and a later call has the answer).
    pub(crate) fn others_fenced(&self, me: usize, superstep: u64) -> Option<bool> {
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            return m.others_fenced(superstep);
        }
        let b = &self.board;
        Some((0..self.nprocs()).all(|q| {
            q == me || b.get(q).1 == board::State::Ended || b.fenced(q) == Some(superstep)
        }))
    }

    /// Where every process is.
    #[inline]
    pub(crate) fn board(&self) -> &board::Board {
        &self.board
    }

    /// The engine running this world (`probe.rs`: the machine parameters
    /// are kept per engine).
    pub(crate) fn engine(&self) -> Engine {
        match self.sync {
            Sync::Serial(_) => Engine::Serial,
            Sync::Threads(_) => Engine::Threads,
            Sync::Processes(_) => Engine::Processes,
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => Engine::Mpi,
        }
    }

    /// The shared memory of a `processes` run.
    #[inline]
    pub(crate) fn shared(&self) -> Option<&processes::Shared> {
        match &self.sync {
            Sync::Processes(s) => Some(s),
            _ => None,
        }
    }

    /// Process `pid` is in `superstep`, in `state`: its entry of the
    /// status board, published on `mpi` too once the run has a window
    /// (whose waits read the others': [`peer_state`](World::peer_state)).
    pub(crate) fn set_state(&self, pid: usize, superstep: u64, state: board::State) {
        self.board.set(pid, superstep, state);
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            m.note_state(superstep << 2 | state as u64);
            m.publish_state((superstep << 2 | state as u64) as u32);
        }
    }

    /// Process `q`'s superstep (modulo 2^30) and state, where this process
    /// can see them: always on shared memory; on `mpi` once the run has a
    /// window (else `None`).
    pub(crate) fn peer_state(&self, q: usize) -> Option<(u64, board::State)> {
        match &self.sync {
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.peer_state(q).map(|w| board::decode(u64::from(w))),
            _ => {
                let (step, state) = self.board.get(q);
                Some((step & ((1 << 30) - 1), state))
            }
        }
    }

    /// True when processes do not share an address space: the streams of
    /// a superstep are written into channel `q` and delivered
    /// (`exchange.rs`), instead of read in place in the senders' mailboxes.
    #[inline]
    pub(crate) fn distributed(&self) -> bool {
        match self.sync {
            Sync::Processes(_) => true,
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => true,
            _ => false,
        }
    }

    /// The rendezvous of large put payloads, on an engine that has one
    /// (`mpi`, `mpi/rendezvous.rs`): puts of at least [`MIN_LARGE`] bytes
    /// send a descriptor in their stream and their payload point to point,
    /// into the range the receiver resolved.
    #[inline]
    pub(crate) fn rendezvous(&self) -> Option<&Rendezvous> {
        match &self.sync {
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => Some(m),
            _ => None,
        }
    }

    /// `processes`, where the kernel lets processes read each other's
    /// memory (`cma.rs`): the OS process id of process `pid`, whose memory
    /// an hpput's receiver or a get's requester reads directly. `None`
    /// elsewhere.
    #[inline]
    pub(crate) fn os_pid(&self, pid: usize) -> Option<libc::pid_t> {
        self.cross_memory().then(|| self.board().os_pid(pid))
    }

    /// `processes`: the memory of the run's large areas, which every
    /// process reads directly (`area_memory.rs`). `None` elsewhere.
    #[inline]
    pub(crate) fn area_memory(&self) -> Option<&area_memory::AreaMemory> {
        match &self.sync {
            Sync::Processes(s) => s.areas(),
            _ => None,
        }
    }

    /// Whether the `len` bytes at `addr` of process `pid` can be read by
    /// the others during a sync (an hpput's source, a get's source): in
    /// area memory, or by cross-memory attach from `attach_from` bytes
    /// where that copy is the faster one (`cma::chosen`).
    /// Only on `processes`: elsewhere memory is either shared by all or
    /// by none.
    #[inline]
    pub(crate) fn readable_elsewhere(
        &self,
        pid: usize,
        addr: usize,
        len: usize,
        attach_from: usize,
    ) -> bool {
        (len >= area_memory::MIN_AREA
            && self
                .area_memory()
                .is_some_and(|m| m.contains(pid, addr, len)))
            || (len >= attach_from && self.cross_memory() && cma::chosen(len))
    }

    /// Copies the `len` bytes at address `from` of process `pid` (another
    /// process of a `processes` run) into `dst`: from area memory with one
    /// `memcpy`, else by cross-memory attach; an error if neither reaches
    /// them.
    ///
    /// # Safety
    ///
    /// `dst` must be writable for `len` bytes and not accessed by anyone
    /// else during the call; bytes in area memory must not be written by
    /// their owner during the call (the sync's protocol: an hpput's
    /// sender promised it, a get's owner writes its registered memory only
    /// after barrier B).
    pub(crate) unsafe fn read_elsewhere(
        &self,
        pid: usize,
        from: usize,
        dst: *mut u8,
        len: usize,
    ) -> Result<(), String> {
        let areas = self.area_memory();
        if areas.is_some_and(|m| m.contains(pid, from, len)) {
            // SAFETY: `len` bytes inside the area mapping, which lives as
            // long as `self`, at the same address in every process; not
            // written now (above); `dst` as the caller promised. They may
            // overlap (an hpput of a process to itself whose source and
            // destination share bytes, against hpput's rules): `mem::copy`
            // is a `memmove`, in cache-sized pieces.
            unsafe { crate::mem::copy(std::ptr::with_exposed_provenance(from), dst, len) };
            return Ok(());
        }
        if areas.is_some_and(|m| m.overlaps(from, len)) {
            // Mapped in the sender too (every process maps every region),
            // so the kernel would read it: a record names its sender's
            // region of area memory or none.
            return Err(
                "they lie in another process's area memory: this engine cannot read them \
                        for its sender"
                    .into(),
            );
        }
        match self.os_pid(pid) {
            // SAFETY: `dst` as the caller promised; the kernel checks the
            // other side.
            Some(os) => unsafe { cma::read(os, from, dst, len) }.map_err(|e| e.to_string()),
            None => Err("this engine cannot read them".into()),
        }
    }

    /// `processes` with cross-memory attach: whether process memory can
    /// be read across address spaces (`cma.rs`).
    #[inline]
    pub(crate) fn cross_memory(&self) -> bool {
        matches!(self.sync, Sync::Processes(_)) && cma::available()
    }

    fn with(nprocs: usize, sync: Sync) -> Result<Self, String> {
        check_memory(nprocs)?;
        let board = board::Board::new(nprocs)?;
        let mut mailboxes = Vec::new();
        mailboxes
            .try_reserve_exact(nprocs)
            .map_err(|_| out_of_memory(nprocs))?;
        mailboxes.extend((0..nprocs).map(|_| CachePadded::new(Mailbox::new(nprocs))));
        let shared_memory = matches!(sync, Sync::Serial(_) | Sync::Threads(_));
        let bells = (0..if shared_memory { nprocs } else { 0 })
            .map(|_| CachePadded::new(Default::default()))
            .collect();
        let am = (0..if shared_memory { nprocs } else { 0 })
            .map(|_| std::sync::OnceLock::new())
            .collect();
        let sparse = shared_memory && nprocs >= SPARSE_FROM;
        let senders = (0..if sparse { nprocs } else { 0 })
            .map(|_| CachePadded::new(Senders::new(nprocs)))
            .collect();
        Ok(World {
            id: NEXT_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            mailboxes: mailboxes.into_boxed_slice(),
            bells,
            senders,
            am,
            failure: Mutex::new(None),
            ext: Default::default(),
            ext_init: Mutex::new(()),
            reporter: std::sync::OnceLock::new(),
            progress: std::sync::OnceLock::new(),
            windows: std::sync::OnceLock::new(),
            board,
            sync,
        })
    }

    /// The memory of the run's windows, on the engines whose processes
    /// share memory (`window/mod.rs`); `mpi` allocates its windows itself.
    pub(crate) fn window_arena(&self) -> Result<&window::Arena, String> {
        match &self.sync {
            Sync::Processes(s) => s.windows(),
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => Err("mpi has no window arena".into()),
            Sync::Serial(_) | Sync::Threads(_) => self
                .windows
                .get_or_init(|| window::Arena::new(self.nprocs(), false))
                .as_ref()
                .map_err(Clone::clone),
        }
    }

    /// The run's id: distinct for every run this program starts (from 1),
    /// so that an [`Area`](crate::Area) can tell the run it was made in.
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Number of processes.
    #[inline]
    pub(crate) fn nprocs(&self) -> usize {
        self.mailboxes.len()
    }

    /// The published state of process `pid`.
    #[inline]
    pub(crate) fn mailbox(&self, pid: usize) -> &Mailbox {
        &self.mailboxes[pid]
    }

    /// Waits until every process has arrived; returns the OR of the flags
    /// they arrived with. `episode` counts the barriers the calling process
    /// passed (the engine may use it; it is incremented on success).
    #[inline]
    pub(crate) fn barrier(&self, episode: &mut u64, flags: u32) -> Result<u32, Interrupt> {
        match &self.sync {
            Sync::Serial(s) => s.barrier(flags),
            Sync::Threads(b) => b.wait(episode, flags),
            Sync::Processes(s) => s.barrier().wait(episode, flags),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => {
                *episode += 1;
                m.barrier(flags)
            }
        }
    }
}
