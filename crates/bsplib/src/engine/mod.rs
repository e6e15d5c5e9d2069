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

pub(crate) mod am_ring;
pub(crate) mod barrier;
pub(crate) mod board;
pub(crate) mod cma;
mod kind;
#[cfg(feature = "mpi")]
pub(crate) mod mpi;
pub(crate) mod processes;
pub(crate) mod serial;
pub(crate) mod threads;
pub(crate) mod window;

pub use kind::Engine;

/// Slots of [`World::ext`]: one per type of set-up kept for a run.
const EXT_SLOTS: usize = 4;

/// The machine's hardware threads, asked once (the standard library
/// reads the cgroup files at every call: tens of microseconds).
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use crossbeam_utils::CachePadded;

use crate::error::Error;
use crate::mailbox::Mailbox;
use crate::mem::Records;
use crate::stream::{StreamWriter, REPLIES};

/// The bit of a put record's slot word that makes the record a rendezvous
/// *descriptor* `[slot | DESCRIPTOR][offset][len]`, whose payload comes
/// point to point (`mpi/rendezvous.rs`). No registration slot has it: an
/// engine without rendezvous refuses a descriptor as naming a slot the
/// owner does not have.
pub(crate) const DESCRIPTOR: u64 = 1 << 63;

/// Put payloads of at least this many bytes go by rendezvous where the
/// engine has one ([`World::rendezvous`]).
pub(crate) const MIN_LARGE: usize = 32 << 10;

/// True when MPI's own collectives can carry `total` bytes (their counts
/// are `int`s).
pub(crate) fn coll_fits(total: usize) -> bool {
    i32::try_from(total).is_ok()
}

/// The engine that moves large put payloads by rendezvous.
#[cfg(feature = "mpi")]
pub(crate) type Rendezvous = mpi::Mpi;
/// The engine that moves large put payloads by rendezvous: none without
/// the `mpi` feature.
#[cfg(not(feature = "mpi"))]
pub(crate) enum Rendezvous {}

/// A wait of the rendezvous ended because the run failed elsewhere.
pub(crate) struct RendezvousStopped;

#[cfg(not(feature = "mpi"))]
#[allow(clippy::missing_safety_doc, clippy::unused_self)]
impl Rendezvous {
    pub(crate) unsafe fn stage(
        &self,
        _: usize,
        _: *const u8,
        _: usize,
        _: bool,
    ) -> Result<(), usize> {
        match *self {}
    }
    pub(crate) fn post_sends(&self) {
        match *self {}
    }
    pub(crate) fn receive(&self, _: usize, _: *mut u8, _: usize) -> Result<(), RendezvousStopped> {
        match *self {}
    }
    pub(crate) fn before_write(&self, _: *mut u8, _: usize) -> Result<(), RendezvousStopped> {
        match *self {}
    }
    pub(crate) fn settle(&self) -> Result<(), RendezvousStopped> {
        match *self {}
    }
    pub(crate) fn abandon(&self) {
        match *self {}
    }
    pub(crate) fn coll_bcast(&self, _: usize, _: &mut [u8]) {
        match *self {}
    }
    pub(crate) fn coll_gather(&self, _: Option<usize>, _: &[u8], _: &mut [u8]) {
        match *self {}
    }
    pub(crate) fn set_check(&self, _: u64) {
        match *self {}
    }
    pub(crate) fn check_failed(&self) -> bool {
        match *self {}
    }
    pub(crate) fn coll_scatter_blocks(
        &self,
        _: &[u8],
        _: &dyn Fn(usize) -> usize,
        _: &mut [u8],
        _: usize,
    ) {
        match *self {}
    }
    pub(crate) fn coll_gather_blocks(
        &self,
        _: Option<usize>,
        _: &[u8],
        _: &dyn Fn(usize) -> usize,
        _: &mut [u8],
    ) {
        match *self {}
    }
}

/// The state of the report of a run's error: nobody, someone printing,
/// printed. Whoever claims it prints; the others wait for the print to end
/// before they end the program, so the message is never cut short.
#[derive(Default)]
#[repr(C)]
pub(crate) struct Reported(std::sync::atomic::AtomicU32);

impl Reported {
    /// True for the first caller only.
    pub(crate) fn claim(&self) -> bool {
        use std::sync::atomic::Ordering;
        self.0
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// True once somebody claimed the report (it is printed, or being
    /// printed).
    pub(crate) fn is_claimed(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Acquire) != 0
    }

    /// The claimer finished printing.
    pub(crate) fn done(&self) {
        self.0.store(2, std::sync::atomic::Ordering::Release);
    }

    /// Waits (at most `limit`) until a claimed report is printed.
    pub(crate) fn wait(&self, limit: std::time::Duration) {
        use std::sync::atomic::Ordering;
        let start = std::time::Instant::now();
        while self.0.load(Ordering::Acquire) == 1 && start.elapsed() < limit {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
}

/// Bytes of bookkeeping a run keeps per pair of processes before any
/// traffic: each process's two mailbox halves hold a 4-byte index per
/// destination (the lists themselves are made on first use), and its get
/// replies a directory entry per requester.
const BYTES_PER_PAIR: usize = 2 * 4 + 16;

/// Refuses a run whose per-pair bookkeeping alone would exceed half of the
/// machine's memory: a clear error at the start instead of the
/// out-of-memory killer later.
fn check_memory(nprocs: usize) -> Result<(), String> {
    let need = nprocs
        .checked_mul(nprocs)
        .and_then(|n| n.checked_mul(BYTES_PER_PAIR));
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let have = usize::try_from(pages)
        .ok()
        .zip(usize::try_from(page).ok())
        .map_or(usize::MAX, |(n, size)| n.saturating_mul(size));
    match need {
        Some(need) if need <= have / 2 => Ok(()),
        _ => Err(out_of_memory(nprocs)),
    }
}

/// The error of a run too large for this machine's memory.
fn out_of_memory(nprocs: usize) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    let need = (nprocs as f64) * (nprocs as f64) * BYTES_PER_PAIR as f64;
    // SAFETY: sysconf has no preconditions.
    let have = unsafe {
        libc::sysconf(libc::_SC_PHYS_PAGES) as f64 * libc::sysconf(libc::_SC_PAGESIZE) as f64
    };
    format!(
        "{nprocs} processes need about {:.1} GiB of message bookkeeping ({BYTES_PER_PAIR} bytes per pair of processes), more than half of this machine's {:.1} GiB: use fewer processes",
        need / GIB,
        have / GIB
    )
}

/// From this many processes on, engines sharing memory keep senders lists
/// ([`World::note_sender`]) so that a receiver reads only the mailboxes
/// that wrote to it. Below, reading every mailbox's index is cheaper than
/// the two cache-line transfers of noting a sender (measured at p = 2: a
/// superstep of one put went from 0.95 to 1.2 us with the lists; at
/// p = 1024, from 17.8 ms to 1.5 ms).
const SPARSE_FROM: usize = 64;

/// Who wrote to one process in the superstep of each parity: a count and
/// the pids, appended by the writers (each at most once per superstep).
pub(crate) struct Senders {
    count: [AtomicU32; 2],
    pids: [Box<[AtomicU32]>; 2],
}

impl Senders {
    fn new(nprocs: usize) -> Self {
        let list = || (0..nprocs).map(|_| AtomicU32::new(0)).collect();
        Senders {
            count: [AtomicU32::new(0), AtomicU32::new(0)],
            pids: [list(), list()],
        }
    }
}

/// Channels of point-to-point notifications (`World::notify`): each
/// process counts the notifications it received on each. The last one is
/// the active-message path's ([`AM_BELL`]); the others are for the
/// extension layers (and the test hooks).
pub(crate) const BELLS: usize = 5;

/// The notification channel of the active-message path on the
/// shared-memory engines: rung after every record posted to a process
/// (`World::am_post`).
pub(crate) const AM_BELL: usize = 4;

/// Bytes of data of each process's active-message inbox on the
/// shared-memory engines (`am_ring.rs`): the largest record.
pub(crate) const AM_RING: usize = 1 << 20;

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
    /// run's deadline; `mpi` has none).
    pub(crate) fn set_deadline(&self, limit: Option<std::time::Duration>) {
        match &self.sync {
            Sync::Serial(s) => s.one().set_deadline(limit),
            Sync::Threads(b) => b.set_deadline(limit),
            Sync::Processes(s) => s.barrier().set_deadline(limit),
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => {}
        }
    }

    /// Keeps `value`, the run's one value of its type (a set-up of a
    /// layer above: the profiler's, the checking mode's), for every
    /// process; a second value of a type is ignored.
    pub(crate) fn set_ext<T: std::any::Any + Send + std::marker::Sync>(&self, value: T) {
        let _ = self.ext_or_init(|| value);
    }

    /// The run's value of type `T`, if one was set.
    #[inline]
    pub(crate) fn ext<T: std::any::Any + Send + std::marker::Sync>(&self) -> Option<&T> {
        self.ext
            .iter()
            .map_while(|s| s.get())
            .find_map(|b| b.downcast_ref::<T>())
    }

    /// The run's value of type `T`, made by `init` on first use (once, for
    /// every process: concurrent first uses wait for one `init`).
    pub(crate) fn ext_or_init<T: std::any::Any + Send + std::marker::Sync>(
        &self,
        init: impl FnOnce() -> T,
    ) -> &T {
        if let Some(v) = self.ext::<T>() {
            return v;
        }
        let _one = self.ext_init.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = self.ext::<T>() {
            return v;
        }
        let slot = self
            .ext
            .iter()
            .find(|s| s.get().is_none())
            .expect("more extension set-ups than World::ext has slots");
        let _ = slot.set(Box::new(init()));
        self.ext::<T>().expect("just set")
    }

    /// How the run's error is reported once ([`World::report`]): set by
    /// the front door that made the world.
    pub(crate) fn set_reporter(&self, report: fn(&World) -> bool) {
        let _ = self.reporter.set(report);
    }

    /// Writes the run's error once (true if this call wrote it), with the
    /// reporter the front door set, else as a plain `bsplib:` line.
    pub(crate) fn report(&self) -> bool {
        if let Some(report) = self.reporter.get() {
            return report(self);
        }
        match self.failure() {
            Some(err) if self.reported().claim() => {
                eprintln!("bsplib: {err}");
                self.reported().done();
                true
            }
            _ => false,
        }
    }

    /// Turns the progress view on for this run (`force`: even when
    /// standard error is not a terminal).
    pub(crate) fn set_progress(&self, force: bool) {
        let _ = self.progress.set(force);
    }

    /// `Some(force)` if the run shows its progress.
    pub(crate) fn progress(&self) -> Option<bool> {
        self.progress.get().copied()
    }

    /// The run's deadline, if any.
    pub(crate) fn deadline(&self) -> Option<std::time::Duration> {
        match &self.sync {
            Sync::Serial(s) => s.one().deadline(),
            Sync::Threads(b) => b.deadline(),
            Sync::Processes(s) => s.barrier().deadline(),
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => None,
        }
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

    /// A writer of process `me`'s streams on channel `ch` (`stream.rs`):
    /// any channel on exchange engines, `REPLIES` on every engine.
    ///
    /// # Safety
    ///
    /// Only `me` writes its channels, and only while no other process
    /// reads that channel (the protocol of `superstep.rs`).
    pub(crate) unsafe fn writer(&self, me: usize, ch: usize) -> StreamWriter<'_> {
        match &self.sync {
            // SAFETY: forwarded.
            Sync::Processes(s) => unsafe { s.writer(me, ch) },
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.writer(ch),
            Sync::Serial(_) | Sync::Threads(_) => {
                assert_eq!(ch, REPLIES, "shared memory reads streams in place");
                // SAFETY: the caller is `me`, writing while nobody reads.
                let replies = unsafe { self.mailbox(me).replies_owner() };
                StreamWriter::buffer(replies, self.nprocs())
            }
        }
    }

    /// Makes the streams every process wrote on channel `ch` readable by
    /// their destinations. Channel `q` follows barrier A, whose flags said
    /// there is something to read (nothing to do but on `mpi`); the
    /// replies channel stands for barrier B.
    pub(crate) fn deliver(&self, episode: &mut u64, ch: usize) -> Result<(), Interrupt> {
        match &self.sync {
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => {
                m.deliver(ch);
                Ok(())
            }
            _ if ch == REPLIES => self.barrier(episode, 0).map(drop),
            _ => Ok(()),
        }
    }

    /// The stream `src` wrote on channel `ch` for `dst`: any channel on
    /// exchange engines, `REPLIES` on every engine. `None` if the sender's
    /// directory does not give a range of its channel (a corrupted
    /// channel: refused by the receiver).
    ///
    /// # Safety
    ///
    /// Only after `deliver` of that channel, and until `src` writes the
    /// channel again (the protocol of `superstep.rs`).
    pub(crate) unsafe fn stream(&self, src: usize, ch: usize, dst: usize) -> Option<Records<'_>> {
        match &self.sync {
            // SAFETY: forwarded.
            Sync::Processes(s) => unsafe { s.stream(src, ch, dst) },
            // SAFETY: forwarded; an MPI rank receives only its own streams.
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => unsafe { m.stream(src, ch) },
            Sync::Serial(_) | Sync::Threads(_) => {
                assert_eq!(ch, REPLIES, "shared memory reads streams in place");
                // SAFETY: delivered (barrier B passed), not rewritten yet.
                unsafe { self.mailbox(src).replies() }.stream(dst)
            }
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

    /// `processes` with cross-memory attach: whether process memory can
    /// be read across address spaces (`cma.rs`).
    #[inline]
    pub(crate) fn cross_memory(&self) -> bool {
        matches!(self.sync, Sync::Processes(_)) && cma::available()
    }

    /// `processes`: channel `ch` of process `pid` as raw shared memory,
    /// its start (page-aligned) and its length; `None` on other engines.
    /// Large put payloads are written into the top of the sender's
    /// channel at the call (`Process::push_put`).
    #[inline]
    pub(crate) fn channel_region(&self, pid: usize, ch: usize) -> Option<(*mut u8, usize)> {
        match &self.sync {
            Sync::Processes(s) => Some((s.channel(pid, ch), s.capacity())),
            _ => None,
        }
    }

    /// Exchange engines: the most one process can send in one superstep on
    /// one channel.
    pub(crate) fn capacity(&self) -> usize {
        match &self.sync {
            Sync::Processes(s) => s.capacity(),
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => mpi::CAPACITY,
            _ => usize::MAX,
        }
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

    /// Shared memory, p >= `SPARSE_FROM`: process `from` writes to `to` for
    /// the first time in the superstep of parity `parity` (one atomic add
    /// on `to`'s line). `processes`: `from` lists `to` in its own memory,
    /// for its publish (`exchange.rs`). Otherwise nothing: every stream is
    /// read.
    #[inline]
    pub(crate) fn note_sender(&self, to: usize, parity: usize, from: usize) {
        if let Some(s) = self.senders.get(to) {
            let at = s.count[parity].fetch_add(1, Ordering::Relaxed) as usize;
            // At most one note per sender and superstep: `at < p`.
            if let Some(slot) = s.pids[parity].get(at) {
                slot.store(from as u32, Ordering::Relaxed);
            }
        } else if let Sync::Processes(s) = &self.sync {
            // The sender's own list of destinations, for its publish.
            s.note_dest(parity, to);
        }
    }

    /// True when the run keeps senders lists (shared memory, p >=
    /// `SPARSE_FROM`; `processes`: the index of its channels): a receiver
    /// reads only the mailboxes or channels listed.
    #[inline]
    pub(crate) fn tracks_senders(&self) -> bool {
        !self.senders.is_empty() || matches!(self.sync, Sync::Processes(_))
    }

    /// Shared memory: the processes that wrote to `me` in the superstep of
    /// parity `parity`, in no set order. Only between barrier A of the sync
    /// ending that superstep and [`reset_senders`](Self::reset_senders)
    /// (the barrier orders the writers' notes before the reads).
    ///
    /// `processes`: the senders the index of channel `parity` lists (see
    /// `processes::Shared::senders`), in pid order.
    pub(crate) fn senders(&self, me: usize, parity: usize) -> impl Iterator<Item = usize> + '_ {
        let (listed, indexed) = match &self.sync {
            Sync::Processes(s) => (None, Some(s.senders(me, parity))),
            _ => {
                let s = &self.senders[me];
                let n = s.count[parity].load(Ordering::Relaxed) as usize;
                (Some(&s.pids[parity][..n.min(s.pids[parity].len())]), None)
            }
        };
        let listed = listed
            .into_iter()
            .flatten()
            .map(|p| p.load(Ordering::Relaxed) as usize);
        listed.chain(indexed.into_iter().flatten())
    }

    /// Shared memory: `me` has read its senders of parity `parity`. Within
    /// its sync: nobody notes a sender of that parity again before the
    /// next barrier A (they are in the superstep of the other parity).
    pub(crate) fn reset_senders(&self, me: usize, parity: usize) {
        if let Some(s) = self.senders.get(me) {
            s.count[parity].store(0, Ordering::Relaxed);
        }
    }

    /// Point-to-point notification: tells process `to` on channel `ch`
    /// (`< BELLS`) that everything this process did before is done, and
    /// wakes it if it waits. Cheap: one atomic add on shared memory (a
    /// wake-up only for a sleeping waiter), one small message on `mpi`.
    /// (For the one-sided synchronisation of the extension layers:
    /// post/start/complete/wait, locks, counters.)
    pub(crate) fn notify(&self, to: usize, ch: usize) {
        match &self.sync {
            Sync::Serial(s) => s.one().ring(&self.bells[to][ch]),
            Sync::Threads(b) => b.ring(&self.bells[to][ch]),
            Sync::Processes(s) => s.barrier().ring(s.bell(to, ch)),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.notify(to, ch),
        }
    }

    /// Waits until process `me` has received `target` notifications in
    /// all on channel `ch` (counted from the start of the run), with
    /// acquire ordering: what the notifiers did before notifying is
    /// visible after. Interrupted when the run is stopped, and by its
    /// deadline; otherwise a notification that never comes waits forever.
    pub(crate) fn wait_notified(&self, me: usize, ch: usize, target: u64) -> Result<(), Interrupt> {
        match &self.sync {
            Sync::Serial(s) => s.one().await_bell(&self.bells[me][ch], target),
            Sync::Threads(b) => b.await_bell(&self.bells[me][ch], target),
            Sync::Processes(s) => s.barrier().await_bell(s.bell(me, ch), target),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.wait_notified(ch, target),
        }
    }

    // ----- the active-message path (ACTIVE_MESSAGES.md, section 6) -----

    /// Process `pid`'s inbox on the shared-memory engines.
    fn am_ring(&self, pid: usize) -> Option<AmRing<'_>> {
        match &self.sync {
            Sync::Processes(s) => Some(AmRing::Shared(s.am_ring(pid))),
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => None,
            _ => Some(AmRing::Local(
                self.am[pid]
                    .get_or_init(|| am_ring::OwnedRing::new(AM_RING))
                    .ring(),
            )),
        }
    }

    /// The largest active-message record this engine carries.
    pub(crate) fn am_max_record(&self) -> usize {
        match &self.sync {
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.am_max_record(),
            _ => AM_RING,
        }
    }

    /// Posts the record made of `parts` (whole 8-byte words, at most
    /// [`am_max_record`](Self::am_max_record) bytes) to process `to`, and
    /// rings its [`AM_BELL`]. Never waits for the receiver: `Ok(false)`
    /// (nothing posted) when its inbox has no room now; the caller keeps
    /// the record and posts it again later, in order.
    pub(crate) fn am_post(&self, me: usize, to: usize, parts: &[&[u8]]) -> Result<bool, Interrupt> {
        let _ = me;
        match self.am_ring(to) {
            Some(ring) => {
                let stopped = || self.is_stopped();
                if !ring
                    .get()
                    .push(parts, &stopped)
                    .map_err(|_| Interrupt::Stopped)?
                {
                    return Ok(false);
                }
                self.notify(to, AM_BELL);
                Ok(true)
            }
            #[cfg(feature = "mpi")]
            None => match &self.sync {
                Sync::Mpi(m) => m.am_post(me, to, parts),
                _ => unreachable!("only mpi has no ring"),
            },
            #[cfg(not(feature = "mpi"))]
            None => unreachable!("only mpi has no ring"),
        }
    }

    /// Appends every record that arrived for process `me` to `out`, whole
    /// and in the order each sender posted them.
    pub(crate) fn am_take(&self, me: usize, out: &mut Vec<u8>) -> Result<(), Interrupt> {
        match self.am_ring(me) {
            Some(ring) => {
                let stopped = || self.is_stopped();
                ring.get()
                    .take(out, &stopped)
                    .map_err(|_| Interrupt::Stopped)
            }
            #[cfg(feature = "mpi")]
            None => match &self.sync {
                Sync::Mpi(m) => m.am_take(me, out),
                _ => unreachable!("only mpi has no ring"),
            },
            #[cfg(not(feature = "mpi"))]
            None => unreachable!("only mpi has no ring"),
        }
    }

    /// A mark of what arrived for `me` so far: read it before an
    /// [`am_take`](Self::am_take), then [`am_wait`](Self::am_wait) for
    /// more with it, and nothing posted in between is missed.
    pub(crate) fn am_mark(&self, me: usize) -> u64 {
        match &self.sync {
            Sync::Processes(s) => s.bell(me, AM_BELL).load(Ordering::Acquire) >> 1,
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.am_mark(),
            _ => self.bells[me][AM_BELL].load(Ordering::Acquire) >> 1,
        }
    }

    /// Waits until something may have arrived for `me` since `mark` was
    /// read (or the run stops, or its deadline passes).
    /// Returns after at most about 50 ms even when nothing came, so that
    /// its caller can look at whether the processes it waits for ended.
    pub(crate) fn am_wait(&self, me: usize, mark: u64) -> Result<(), Interrupt> {
        let soft = Some(std::time::Instant::now() + std::time::Duration::from_millis(50));
        match &self.sync {
            Sync::Serial(s) => s
                .one()
                .await_bell_until(&self.bells[me][AM_BELL], mark + 1, soft),
            Sync::Threads(b) => b.await_bell_until(&self.bells[me][AM_BELL], mark + 1, soft),
            Sync::Processes(s) => s
                .barrier()
                .await_bell_until(s.bell(me, AM_BELL), mark + 1, soft),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.am_wait(mark),
        }
    }

    /// [`barrier`](Self::barrier) that runs `poll` whenever an active
    /// message may have arrived for `me` while it waits, and at every turn
    /// while `poll` returns true (records of ours wait for room in an
    /// inbox): the dispatching barrier A of active-message mode.
    pub(crate) fn barrier_polling(
        &self,
        episode: &mut u64,
        flags: u32,
        me: usize,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<u32, Interrupt> {
        match &self.sync {
            Sync::Serial(s) => {
                // One process: everything it sent itself was handled by
                // its fence; what a poll leaves pending is its own.
                while poll() {}
                s.barrier(flags)
            }
            Sync::Threads(b) => b.wait_polling(episode, flags, &self.bells[me][AM_BELL], poll),
            Sync::Processes(s) => {
                s.barrier()
                    .wait_polling(episode, flags, s.bell(me, AM_BELL), poll)
            }
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => {
                *episode += 1;
                m.barrier_polling(flags, poll)
            }
        }
    }

    /// Records `err` as the error of the run unless one is recorded already,
    /// and stops every process.
    pub(crate) fn fail(&self, err: Error) {
        self.record_failure(err);
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            if !m.values() {
                // This MPI job ends at `stop`: say why first.
                self.report();
            }
        }
        self.stop();
    }

    /// [`fail`](Self::fail) from inside a dispatching barrier, whose
    /// reduction an `mpi` rank cannot leave: the other ranks are told at
    /// once (stop messages), so that a rank waiting for this one outside
    /// the barrier (a fence waiting for an acknowledgement) stops waiting,
    /// fails and ends, and its end reduction completes this barrier.
    pub(crate) fn fail_in_barrier(&self, err: Error) {
        self.fail(err);
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            m.send_stops();
        }
    }

    /// [`fail`](Self::fail) for an error every process finds alike at the
    /// same time (calls that differ between processes): on `mpi`, where each
    /// would print it, only process 0 does, and the others leave it time.
    pub(crate) fn fail_collective(&self, err: Error, me: usize) {
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            if me != 0 && !m.values() {
                self.record_failure(err);
                std::thread::sleep(std::time::Duration::from_secs(5));
                mpi::abort();
            }
        }
        let _ = me;
        self.fail(err);
    }

    /// Records `err` as the error of the run unless one is recorded
    /// already, without stopping anyone yet (a front door that prints the
    /// error before stopping the others uses this, then [`stop`](Self::stop)).
    /// True if `err` is now the run's error.
    pub(crate) fn record_failure(&self, err: Error) -> bool {
        if let Sync::Processes(s) = &self.sync {
            let bytes = crate::codec::encode_error_within(&err, processes::FAILURE_BYTES);
            if !s.record_failure(&bytes) {
                return false;
            }
        }
        let mut first = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            *first = Some(err);
            true
        } else {
            false
        }
    }

    /// Stops every process: their waits and their next calls fail.
    pub(crate) fn stop(&self) {
        match &self.sync {
            Sync::Serial(s) => s.stop(),
            Sync::Threads(b) => b.stop(),
            Sync::Processes(s) => s.barrier().stop(),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) if m.values() => m.stop(),
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => mpi::abort(),
        }
    }

    /// Who reports the run's error to the user (C interface), among all
    /// processes.
    pub(crate) fn reported(&self) -> &Reported {
        self.board.reported()
    }

    /// Process `pid` returned from the SPMD function in `superstep`.
    pub(crate) fn ended(&self, pid: usize, superstep: u64) {
        self.set_state(pid, superstep, board::State::Ended);
        match &self.sync {
            Sync::Serial(_) => {}
            Sync::Threads(b) => b.ended(pid),
            Sync::Processes(s) => s.barrier().ended(pid),
            // Errors as values: the end is `finish_mpi`, after the SPMD
            // function of a Rust run.
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) if m.values() => {}
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.ended(pid),
        }
    }

    /// `mpi` with errors as values: the end of process `pid` (see
    /// `mpi::Mpi::finish`); after it every process of the run has ended.
    #[cfg(feature = "mpi")]
    pub(crate) fn finish_mpi(&self, pid: usize) {
        if let Sync::Mpi(m) = &self.sync {
            m.finish(pid, self.failure().is_some());
        }
    }

    /// True when each process records its own errors and the run's error
    /// is gathered at its end (`mpi`, errors as values), so a process
    /// cannot learn during a sync that another failed.
    pub(crate) fn failures_gathered(&self) -> bool {
        match &self.sync {
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => true,
            _ => false,
        }
    }

    /// [`is_stopped`](World::is_stopped) for a polling wait of the
    /// library's own (windows): on `mpi` it also takes a failed process's
    /// stop message, which nothing else reads while this process polls.
    pub(crate) fn poll_stopped(&self) -> bool {
        #[cfg(feature = "mpi")]
        if let Sync::Mpi(m) = &self.sync {
            return m.poll_stopped();
        }
        self.is_stopped()
    }

    /// True once the run was stopped.
    #[inline]
    pub(crate) fn is_stopped(&self) -> bool {
        match &self.sync {
            Sync::Serial(s) => s.is_stopped(),
            Sync::Threads(b) => b.is_stopped(),
            Sync::Processes(s) => s.barrier().is_stopped(),
            // Ending the job on error: a stopped MPI job has ended.
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.is_stopped(),
        }
    }

    /// The error of the run, if any (for a `processes` run, whichever
    /// process recorded it).
    pub(crate) fn failure(&self) -> Option<Error> {
        if let Sync::Processes(s) = &self.sync {
            return s.failure().map(|bytes| {
                crate::codec::decode_error(&bytes).unwrap_or_else(|| {
                    Error::new(
                        crate::error::ErrorKind::Startup {
                            detail: "an undecodable error was recorded".into(),
                        },
                        "bsp_sync",
                        0,
                        0,
                        None,
                    )
                })
            });
        }
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// An active-message inbox on a shared-memory engine.
enum AmRing<'a> {
    Local(&'a am_ring::Ring),
    Shared(am_ring::Ring),
}

impl AmRing<'_> {
    fn get(&self) -> &am_ring::Ring {
        match self {
            AmRing::Local(r) => r,
            AmRing::Shared(r) => r,
        }
    }
}
