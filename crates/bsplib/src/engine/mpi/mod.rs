//! The `mpi` engine (cargo feature `mpi`): every BSP process is an MPI
//! rank, through Open MPI and rsmpi. The protocol is in `README.md` beside
//! this file; in short:
//!
//! - **Barrier** with flags: one all-reduce (bitwise or) of two words: the
//!   superstep's flags, and whether the caller syncs or has ended (a
//!   process that ends does the same reduction, so a process waiting in a
//!   sync for one that ended learns it instead of waiting forever). The
//!   all-reduce is the engine's own, over point-to-point messages (`am.rs`),
//!   so that the barrier can also *dispatch* active messages while it
//!   waits (`barrier_polling`).
//! - **Active messages** (`am.rs`): one message per record (tag 105), sent
//!   by `MPI_Isend` from library buffers, taken by `MPI_Improbe`/`MPI_Mrecv`.
//! - **Exchange**: the streams of `exchange.rs`, written into a growable
//!   buffer per channel, travel with barrier A (`nbx.rs`): one message per
//!   non-empty stream, started as its reduction begins, which carries the
//!   number of streams each process receives (runs of up to 64 processes;
//!   larger runs deliver by non-blocking consensus), into a receive buffer
//!   per channel kept until that channel is delivered again (two syncs
//!   later, as for `processes`). Gets: the owners' replies are a second
//!   such exchange, with a reduction of their own for barrier B.
//! - **Deadline** (`deadline.rs`): a wait that yields past the run's
//!   deadline gives up; the ranks ask each other where they wait (none
//!   shares a status board), the least waiting one names who never
//!   arrived, and the job ends.
//! - **Errors**, in one of two modes chosen by the front door:
//!   - *as values* (the Rust front door, `Runtime`): the process that finds
//!     an error records it, stops making collective calls (its later calls
//!     fail at once) and ends; its end reduction carries `FAILED`, so every
//!     process waiting in a sync leaves it with an error, and the processes
//!     that end take part in reductions until none is syncing ([`Mpi::finish`]).
//!     The results gathered at the end carry each process's recorded error:
//!     every rank returns the same `Err` (the original error of least pid),
//!     as on the other engines;
//!   - *ending the job* (the C front door, whose errors end the program
//!     anyway): the process that finds one prints it and calls `MPI_Abort`,
//!     which ends every rank; except where other ranks may be finalising
//!     MPI (a call after `bsp_end`, a sync that found ended processes),
//!     where `MPI_Abort` can hang `mpirun`: the rank finalises and exits
//!     with status 1 instead ([`abort_with`]).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use mpi::datatype::PartitionMut;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;

use super::Interrupt;
use crate::mem::Records;

mod am;
pub(crate) mod coll;
mod deadline;
mod gather;
mod nbx;
pub(crate) mod node;
mod posted;
mod progress;
mod rendezvous;
mod segment;
pub(crate) mod win;
use crate::stream::{Outbox, StreamWriter};

/// The second word of a barrier's reduction: who arrived from where.
const SYNCING: u64 = 1;
const ENDED: u64 = 2;
/// With `ENDED`: the process ended with an error (errors as values).
const FAILED: u64 = 4;

/// Message tags of point-to-point notifications: channel `ch` is
/// `BELL_TAG + ch`; a failed process tells every other with `STOP_TAG`.
const BELL_TAG: i32 = 100;
const STOP_TAG: i32 = 99;

/// Channels: the outgoing streams of even and odd supersteps, the replies.
const CHANNELS: usize = 3;

/// `MPI_Alltoallv` counts and displacements are `int`s of 8-byte words.
pub(crate) const CAPACITY: usize = (Count::MAX as usize) * 8;

/// MPI is initialised once per program and finalised when it exits.
static INIT: OnceLock<Result<(), String>> = OnceLock::new();

/// The OS process id of the process that set up MPI here (`init`): a child
/// the program forks from a rank (a helper that calls `exit`) inherits the
/// library's exit handler and its state, but is no rank, and must not
/// finalise MPI (it would wait for the whole job) or end the job.
static RANK_OS_PID: AtomicU32 = AtomicU32::new(0);

/// True in a process the program forked from a rank (after MPI was set
/// up): no MPI call of the library may run there.
pub(crate) fn is_foreign() -> bool {
    let rank = RANK_OS_PID.load(Ordering::Relaxed);
    rank != 0 && rank != std::process::id()
}

fn init() -> Result<(), String> {
    INIT.get_or_init(|| {
        RANK_OS_PID.store(std::process::id(), Ordering::Relaxed);
        if mpi::environment::is_initialized() {
            // The program initialised MPI itself, and finalises it.
            return Ok(());
        }
        match mpi::initialize_with_threading(mpi::Threading::Serialized) {
            Some((universe, _)) => {
                // Finalised at exit instead of when a value is dropped: runs
                // may start and end several times in one program.
                std::mem::forget(universe);
                progress::ours();
                // SAFETY: registers a handler that takes no state.
                unsafe { libc::atexit(finalize_at_exit) };
                Ok(())
            }
            None => Err("MPI could not be initialised".into()),
        }
    })
    .clone()
}

extern "C" fn finalize_at_exit() {
    // A child the program forked exits without touching MPI: the rank it
    // was forked from finalises (`MPI_Finalize` here waited for the job).
    if !is_foreign() && !mpi::environment::is_finalized() {
        progress::shut();
        // SAFETY: MPI is initialised (by `init`) and not yet finalised; no
        // MPI call follows at exit.
        unsafe { mpi::ffi::MPI_Finalize() };
    }
}

/// The number of ranks of the job (`mpirun -np`).
pub(crate) fn world_size() -> Result<usize, String> {
    let _mpi = progress::hold();
    init()?;
    Ok(SimpleCommunicator::world().size() as usize)
}

/// This process's rank in the job.
pub(crate) fn world_rank() -> Result<usize, String> {
    let _mpi = progress::hold();
    init()?;
    Ok(SimpleCommunicator::world().rank() as usize)
}

/// Ends every rank of the job, now, with status 1.
pub(crate) fn abort() -> ! {
    abort_with(1)
}

/// Set when other ranks of the run may be finalising MPI, so that
/// `MPI_Abort` must not be used: this rank's BSP process ended (`bsp_end`,
/// the end of a Rust run; the others end too), or this rank's sync found
/// processes that ended (every process of the run has then ended, or waits
/// in that sync and fails). Cleared when the rank joins a run.
static NO_ABORT: AtomicBool = AtomicBool::new(false);

/// Ends every rank of the job, now, with `status`.
///
/// `MPI_Abort` while other ranks finalise MPI (or after they did) leaves
/// Open MPI 4.1's `mpirun` hanging, deaf to `SIGTERM`, or crashing in its
/// own teardown. When others may be finalising ([`NO_ABORT`]: a BSPlib call
/// after `bsp_end`, a sync that found ended processes), this rank
/// finalises MPI instead and exits with `status`: every other rank of the
/// run is ending too, and the job ends with that status.
pub(crate) fn abort_with(status: i32) -> ! {
    // Whatever the printing process wrote must reach the terminal first.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // SAFETY: flushing C stdio has no preconditions.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    if is_foreign() {
        // A child the program forked is no rank: it ends alone.
        // SAFETY: ends this process; output was flushed.
        unsafe { libc::_exit(status) }
    }
    progress::shut();
    if NO_ABORT.load(Ordering::SeqCst) || mpi::environment::is_finalized() {
        exit_finalized(status)
    }
    SimpleCommunicator::world().abort(status)
}

/// Flushes output, finalises MPI (unless it is already) and ends this
/// process with `status`, running no exit handlers.
fn exit_finalized(status: i32) -> ! {
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // SAFETY: flushing C stdio has no preconditions.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    finalize_at_exit();
    // SAFETY: ends the process; output was flushed, and MPI is finalised.
    unsafe { libc::_exit(status) }
}

/// Finalises MPI and ends this process with status 0 (a rank other than 0
/// at the end of its BSP process, as `bsp_end` ends it).
pub(crate) fn finalize_and_exit() -> ! {
    exit_finalized(0)
}

/// Collective over the whole job: every rank's `mine`, in rank order.
pub(crate) fn all_gather_bytes(mine: &[u8]) -> Vec<Vec<u8>> {
    let _mpi = progress::hold();
    let world = SimpleCommunicator::world();
    let n = world.size() as usize;
    let mut lens = vec![0u64; n];
    world.all_gather_into(&(mine.len() as u64), &mut lens[..]);
    let counts: Vec<Count> = lens.iter().map(|&l| l as Count).collect();
    let displs: Vec<Count> = counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect();
    let total = lens.iter().sum::<u64>() as usize;
    let mut all = vec![0u8; total];
    // Nothing to move (every rank knows): empty buffers share one dangling
    // address, which MPI would take for an aliased send and receive buffer.
    if total > 0 {
        let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
        world.all_gather_varcount_into(mine, &mut part);
    }
    displs
        .iter()
        .zip(&lens)
        .map(|(&d, &l)| all[d as usize..d as usize + l as usize].to_vec())
        .collect()
}

/// Joins a run of `requested` processes (process 0's request counts): the
/// number of processes, and for a rank that takes part its pid and engine.
/// `values`: errors are returned as values (the Rust front door) rather
/// than ending the job (module docs).
///
/// `settings` makes the front door's run-wide settings, opaque here: only
/// rank 0 (process 0) calls it, its bytes travel with its request and
/// every rank gets them back (the last element of the result), so the run
/// agrees on them whatever each host's environment says (`README.md`,
/// "Start").
#[allow(clippy::type_complexity)]
pub(crate) fn join(
    requested: usize,
    values: bool,
    settings: &dyn Fn() -> Vec<u8>,
) -> Result<(usize, Option<(usize, Mpi)>, Vec<u8>), String> {
    let _mpi = progress::hold();
    init()?;
    NO_ABORT.store(false, Ordering::SeqCst);
    let world = SimpleCommunicator::world();
    let root = world.process_at_rank(0);
    let settings = if world.rank() == 0 {
        settings()
    } else {
        Vec::new()
    };
    // Rank 0's choice of delivery (`nbx.rs`) holds for the run.
    let forced_nbx = std::env::var_os("BSPLIB_MPI_NBX").is_some_and(|v| v == "1");
    let mut head = [
        requested as u64,
        settings.len() as u64,
        u64::from(forced_nbx),
    ];
    root.broadcast_into(&mut head[..]);
    let [req, len, forced_nbx] = head;
    let mut agreed = if world.rank() == 0 {
        settings
    } else {
        vec![0u8; len as usize]
    };
    if len > 0 {
        root.broadcast_into(&mut agreed[..]);
    }
    let n = (req as usize).min(world.size() as usize);
    let rank = world.rank() as usize;
    let color = if rank < n {
        Color::with_value(0)
    } else {
        Color::undefined()
    };
    let comm = world.split_by_color(color);
    Ok((
        n,
        comm.map(|comm| (rank, Mpi::new(comm, n, values, forced_nbx != 0))),
        agreed,
    ))
}

/// A communicator that may cross threads: MPI runs with
/// `MPI_THREAD_SERIALIZED`, and a rank's communicator is used by the one
/// thread running its BSP process at a time (the `World` that holds it is
/// shared only to satisfy the engine-independent types).
struct Comm(SimpleCommunicator);

// SAFETY: see above: calls on it are serialised, which is all MPI requires
// at the level it was initialised with.
unsafe impl Send for Comm {}
// SAFETY: as above.
unsafe impl Sync for Comm {}

impl std::ops::Deref for Comm {
    type Target = SimpleCommunicator;
    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

/// One rank's side of a run.
pub(crate) struct Mpi {
    comm: Comm,
    nprocs: usize,
    // Locks only to satisfy `Sync`: one thread per rank uses them.
    out: [Mutex<Outbox>; CHANNELS],
    inbox: [Mutex<nbx::Inbox>; CHANNELS],
    /// The streams to send with the next reduction (`nbx.rs`).
    staged: Mutex<nbx::Staged>,
    /// The channel the next reduction delivers, and whether this process
    /// sends on it (`nbx::NONE`: none; read by every reduction).
    staged_ch: AtomicUsize,
    /// Per channel: the streams the last counted reduction announced
    /// (`nbx.rs`).
    expect: [AtomicUsize; CHANNELS],
    /// Errors are values (module docs).
    values: bool,
    /// Errors as values: this process failed, or learnt that the run did.
    stopped: AtomicBool,
    /// Notifications received so far, per channel.
    bells: Mutex<[u64; super::BELLS]>,
    /// Large put payloads (`rendezvous.rs`).
    rndv: rendezvous::Rendezvous,
    /// Active-message records in flight (`am.rs`).
    am: Mutex<am::Outgoing>,
    /// The operands of the reduction in progress (`am.rs`).
    operands: Mutex<am::Operands>,
    /// Streams are delivered by non-blocking consensus, not counted in the
    /// reductions (`nbx.rs`).
    nbx: bool,
    /// The check of the next barrier and the verdict of the last
    /// ([`Mpi::set_check`]).
    check: std::sync::atomic::AtomicU64,
    check_set: AtomicBool,
    check_failed: AtomicBool,
    /// The status board of windows' waits, made by the run's first window
    /// (`win.rs`).
    board: OnceLock<win::BoardWin>,
    /// The control lines of registered areas in one-sided use, made with
    /// the board by `rma_init` / `am_init` (`win.rs`).
    control: OnceLock<win::ControlWin>,
    /// Whether windows live in node shared memory (`win.rs`), decided by
    /// the run's first window or `rma_init`.
    node: OnceLock<bool>,
    /// Every process of the run ended in one reduction (`gather.rs`).
    ended_together: AtomicBool,
    /// The run's deadline, and the queries of who waits where
    /// (`deadline.rs`).
    dl: deadline::Deadline,
}

impl Drop for Mpi {
    fn drop(&mut self) {
        let _mpi = progress::hold();
        self.am_drop();
        self.nbx_drop();
    }
}

impl Mpi {
    fn new(comm: SimpleCommunicator, nprocs: usize, values: bool, forced_nbx: bool) -> Self {
        let local = rendezvous::decide_local(&comm, nprocs);
        let nbx = nbx::uses_nbx(nprocs, forced_nbx);
        Mpi {
            comm: Comm(comm),
            nprocs,
            out: Default::default(),
            inbox: std::array::from_fn(|_| Mutex::new(nbx::Inbox::new(nprocs))),
            staged: Mutex::default(),
            staged_ch: AtomicUsize::new(nbx::NONE),
            expect: Default::default(),
            values,
            stopped: AtomicBool::new(false),
            bells: Mutex::default(),
            rndv: rendezvous::Rendezvous::new(local),
            am: Mutex::default(),
            operands: Mutex::new(am::Operands::new(if nbx { 0 } else { nprocs })),
            nbx,
            check: std::sync::atomic::AtomicU64::new(0),
            check_set: AtomicBool::new(false),
            check_failed: AtomicBool::new(false),
            board: OnceLock::new(),
            control: OnceLock::new(),
            node: OnceLock::new(),
            ended_together: AtomicBool::new(false),
            dl: deadline::Deadline::default(),
        }
    }

    /// A notification to `to` on channel `ch`: a one-byte message (sent
    /// eagerly by every MPI for its size, so the send does not wait for
    /// the receive).
    pub(crate) fn notify(&self, to: usize, ch: usize) {
        let _mpi = progress::hold();
        self.comm
            .process_at_rank(to as i32)
            .send_with_tag(&1u8, BELL_TAG + ch as i32);
    }

    /// Receives notifications on channel `ch` until `target` in all came.
    /// Polls, so that a `STOP_TAG` message from a failed process (errors
    /// as values) interrupts the wait; a program whose errors end the job
    /// never needs that.
    pub(crate) fn wait_notified(&self, ch: usize, target: u64) -> Result<(), Interrupt> {
        let _mpi = progress::hold();
        let mut counts = self.bells.lock().unwrap_or_else(|p| p.into_inner());
        let tag = BELL_TAG + ch as i32;
        let (mut turns, mut started) = (0, None);
        loop {
            if counts[ch] >= target {
                return Ok(());
            }
            if self.is_stopped() {
                return Err(Interrupt::Stopped);
            }
            if let Some(status) = self.comm.any_process().immediate_probe_with_tag(tag) {
                let from = self.comm.process_at_rank(status.source_rank());
                let _: (u8, _) = from.receive_with_tag(tag);
                counts[ch] += 1;
                continue;
            }
            if self.take_stop() {
                self.stop();
                return Err(Interrupt::Stopped);
            }
            self.waited(&mut turns, &mut started, true)?;
            std::thread::yield_now();
        }
    }

    /// Receives a stop message (errors as values: a failed process sends
    /// one to every other) if one has come: true then.
    fn take_stop(&self) -> bool {
        let _mpi = progress::hold();
        match self.comm.any_process().immediate_probe_with_tag(STOP_TAG) {
            Some(status) => {
                let from = self.comm.process_at_rank(status.source_rank());
                let _: (u8, _) = from.receive_with_tag(STOP_TAG);
                true
            }
            None => false,
        }
    }

    /// True when errors are returned as values rather than ending the job.
    pub(crate) fn values(&self) -> bool {
        self.values
    }

    /// Errors as values: this process stops making collective calls.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// Errors as values: true once this process failed or learnt that the
    /// run failed.
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Errors as values: the end of this process (`failed`: with an
    /// error). Takes part in the reductions of the processes still in a
    /// sync (they leave it with an error) until every process has ended;
    /// then the run's results, or its error, can be gathered.
    pub(crate) fn finish(&self, pid: usize, failed: bool) {
        let _mpi = progress::hold();
        if failed {
            // Anyone waiting for a notification from us would wait forever.
            self.send_stops();
        }
        let word = ENDED | if failed { FAILED } else { 0 };
        loop {
            let all = self.reduce_or([0, word, 0, 0]);
            if all[1] & SYNCING == 0 {
                self.ended_together.store(true, Ordering::SeqCst);
                return;
            }
            // The waiting processes learn who ended (see `barrier`).
            self.min_ended(pid as u64, u64::MAX);
        }
    }

    /// Tells every other rank of the run that this one fails (the stop
    /// message: their point-to-point waits end).
    pub(crate) fn send_stops(&self) {
        let _mpi = progress::hold();
        let me = self.comm.rank();
        for to in (0..self.nprocs as i32).filter(|&to| to != me) {
            self.comm.process_at_rank(to).send_with_tag(&1u8, STOP_TAG);
        }
    }

    /// The barrier: see the module docs.
    pub(crate) fn barrier(&self, flags: u32) -> Result<u32, Interrupt> {
        let _mpi = progress::hold();
        let [h, not_h] = self.take_check();
        let words = [u64::from(flags), SYNCING, h, not_h];
        // Only a barrier's reduction has a deadline: the end reductions
        // wait for processes that wait in a sync, which have theirs.
        let (all, _) = self.all_reduce(words, am::Op::Or, None, true)?;
        self.after_barrier(all)
    }

    /// What a barrier whose reduction gave `all` returns (taking part in
    /// the naming of an ended process if one ended).
    fn after_barrier(&self, all: am::Words) -> Result<u32, Interrupt> {
        let _mpi = progress::hold();
        self.check_failed
            .store(all[2] & all[3] != 0, Ordering::Relaxed);
        if all[1] & ENDED != 0 && self.values {
            let me = self.comm.rank() as u64;
            let [ended, _] = self.min_ended(u64::MAX, me);
            self.stop();
            // A process that failed has the run's error; one that ended
            // without error while we sync is ours to report.
            return Err(if all[1] & FAILED != 0 {
                Interrupt::Stopped
            } else {
                Interrupt::Ended(ended as usize)
            });
        }
        if all[1] & ENDED != 0 {
            // The ended processes finalise MPI: no `MPI_Abort` from here.
            NO_ABORT.store(true, Ordering::SeqCst);
            let me = self.comm.rank() as u64;
            let [ended, reporter] = self.min_ended(u64::MAX, me);
            if reporter != me {
                // The waiting process of least pid reports this error:
                // one message. This one ends silently with the same status.
                exit_finalized(1);
            }
            return Err(Interrupt::Ended(ended as usize));
        }
        Ok(all[0] as u32)
    }

    /// Process `pid` ended: the reduction that matches the others' barrier.
    pub(crate) fn ended(&self, pid: usize) {
        let _mpi = progress::hold();
        let all = self.reduce_or([0, ENDED, 0, 0]);
        NO_ABORT.store(true, Ordering::SeqCst);
        self.ended_together
            .store(all[1] & SYNCING == 0, Ordering::SeqCst);
        if all[1] & SYNCING != 0 {
            // Someone waits in a sync: tell them who ended. One of them
            // fails the run (and ends the job).
            self.min_ended(pid as u64, u64::MAX);
        }
    }

    /// Every reduction of the engine is this non-blocking one (`am.rs`):
    /// the dispatching barrier must match it.
    fn reduce_or(&self, mine: am::Words) -> am::Words {
        self.untimed(mine, am::Op::Or)
    }

    /// A reduction without a deadline (it cannot be interrupted).
    fn untimed(&self, mine: am::Words, op: am::Op) -> am::Words {
        match self.all_reduce(mine, op, None, false) {
            Ok((all, _)) => all,
            Err(_) => unreachable!("only a timed reduction is interrupted"),
        }
    }

    /// The check the next barrier carries: `Some(h)` for the sync of a
    /// collective (or a plain sync: `CHECK_SYNC`), whose descriptor hashes
    /// to `h`; the barrier's OR of the hashes and of their complements
    /// share a bit exactly when two processes' differ
    /// ([`check_failed`](Self::check_failed)). Barriers that are not a
    /// sync's carry nothing (zeros: they change no OR).
    pub(crate) fn set_check(&self, h: u64) {
        self.check.store(h, Ordering::Relaxed);
        self.check_set.store(true, Ordering::Relaxed);
    }

    /// The words of the check for the barrier starting now (and clears it).
    fn take_check(&self) -> [u64; 2] {
        if self.check_set.swap(false, Ordering::Relaxed) {
            let h = self.check.load(Ordering::Relaxed);
            [h, !h]
        } else {
            [0, 0]
        }
    }

    /// Whether the last barrier found processes whose checks differ (a
    /// collective called by some only, or with other arguments).
    pub(crate) fn check_failed(&self) -> bool {
        self.check_failed.load(Ordering::Relaxed)
    }

    /// The smallest pid of the processes that ended (`ended`: this
    /// process's pid if it ended, else `u64::MAX`), and of those that wait
    /// in a sync (`waiting`, likewise): the one that reports the error.
    fn min_ended(&self, ended: u64, waiting: u64) -> [u64; 2] {
        let all = self.untimed([ended, waiting, u64::MAX, u64::MAX], am::Op::Min);
        [all[0], all[1]]
    }

    /// A writer of this rank's streams on channel `ch`.
    pub(crate) fn writer(&self, ch: usize) -> StreamWriter<'_> {
        self.before_rewrite(ch);
        let out = self.out[ch].lock().unwrap_or_else(|p| p.into_inner());
        StreamWriter::growable(out, self.nprocs, CAPACITY)
    }

    /// The stream `src` sent this rank on channel `ch`, as delivered last.
    ///
    /// # Safety
    ///
    /// Only until channel `ch` is delivered again.
    pub(crate) unsafe fn stream(&self, src: usize, ch: usize) -> Option<Records<'_>> {
        let inbox = self.inbox[ch].lock().unwrap_or_else(|p| p.into_inner());
        let (at, len) = (inbox.at[src], inbox.len[src]);
        let data = inbox.data();
        assert!(at + len <= data.len(), "stream out of its buffer");
        // SAFETY: in bounds (checked), 8-aligned (`u64`s); the buffer is
        // not touched until the next delivery of this channel begins, after
        // the caller stopped reading (`nbx.rs`).
        Some(unsafe { Records::new(data.as_ptr().add(at).cast(), len * 8) })
    }
}
