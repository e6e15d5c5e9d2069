//! The deadline on `mpi`, and who waits where (`README.md` beside this
//! file, "The deadline").
//!
//! Ranks share no status board, so a rank asks: a **query** (tag
//! [`QUERY_TAG`]) to every other rank, which each answers (tag
//! [`ANSWER_TAG`]) from whichever wait of the engine it is in (the
//! reductions' test loop, the wait for a record or a notification, the
//! windows' polling) with where it is: its status word (superstep and
//! state, as `../board.rs` encodes it, noted by `World::set_state`) and
//! whether it waits in barrier A past its fence (active-message mode). A
//! rank that computes, or is stopped (`SIGSTOP`), or loops without calling
//! the library, does not answer.
//!
//! - **The deadline** (`Runtime::deadline`, `BSPLIB_DEADLINE`): a wait
//!   that has spun and then yielded for longer than the deadline returns
//!   [`Interrupt::Deadline`]; its process asks every other rank
//!   ([`deadline_round`](Mpi::deadline_round)), names those that did not
//!   answer within [`GRACE`] or answered from elsewhere than this sync,
//!   and the job ends (`MPI_Abort`: a process that never arrives cannot
//!   take part in ending the run any other way). Several ranks reach
//!   their deadline at about the same time: a rank that sees the query of
//!   a rank of smaller pid leaves the report to it (one line), and
//!   reports itself only if the job has not ended one deadline later.
//! - **Counter waits** ([`others_fenced`](Mpi::others_fenced)): whether
//!   every other process has ended or waits in barrier A past its fence,
//!   asked without blocking (the counter wait goes on dispatching while
//!   the answers come).
//!
//! Nothing of this runs on the fast path: a reduction that completes
//! while it spins reads no clock and probes for nothing; a wait that
//! yields answers queries every [`TURNS`] turns and reads the clock then
//! (only when a deadline is set).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mpi::traits::*;

use super::{progress, Interrupt, Mpi};

/// Message tags of the queries and their answers (after the reductions'
/// 106: `am.rs`).
const QUERY_TAG: i32 = 107;
const ANSWER_TAG: i32 = 108;

/// A query's kind (its second word): the deadline passed (the querier
/// reports, unless a rank of smaller pid does), or a counter wait asks.
const DEADLINE: u64 = 1;
const COUNTER: u64 = 0;

/// How long a querier waits for the answers. A waiting rank answers within
/// [`TURNS`] yields; this leaves room for a loaded machine and a network.
pub(super) const GRACE: Duration = Duration::from_millis(500);

/// A yielding wait answers queries (and reads the clock for the deadline)
/// once every this many turns.
pub(super) const TURNS: u32 = 16;

/// The deadline's state on one rank.
#[derive(Default)]
pub(super) struct Deadline {
    /// The run's deadline in nanoseconds (0: none).
    limit_ns: AtomicU64,
    /// This rank's status word (`superstep << 2 | state`).
    word: AtomicU64,
    /// `superstep + 1` while this rank waits in barrier A of `superstep`
    /// past its fence (active-message mode), else 0.
    fenced: AtomicU64,
    /// A rank of smaller pid reported its deadline: it ends the job.
    deferred: AtomicBool,
    rounds: Mutex<Rounds>,
}

/// The queries this rank made.
#[derive(Default)]
struct Rounds {
    /// The number of the last query (answers carry it back).
    seq: u64,
    /// Per rank, its answer to query `seq`: `[word, fenced]`.
    answers: Vec<Option<[u64; 2]>>,
    /// When query `seq` went out (`None`: no round open).
    open: Option<Instant>,
    /// The counter waits' rounds: the superstep whose answer was "every
    /// other process has ended or is fenced" (that cannot change while
    /// this process waits), the time before which no new round starts,
    /// and the pause after a round that found someone still working.
    fenced_in: Option<u64>,
    not_before: Option<Instant>,
    pause: Duration,
}

impl Mpi {
    /// Sets the run's deadline (before the processes start; on every rank
    /// the same: the run-wide settings are process 0's).
    pub(crate) fn set_deadline(&self, limit: Option<Duration>) {
        let ns = limit.map_or(0, |d| {
            u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1)
        });
        self.dl.limit_ns.store(ns, Ordering::Relaxed);
    }

    /// The run's deadline, if any.
    pub(crate) fn deadline(&self) -> Option<Duration> {
        match self.dl.limit_ns.load(Ordering::Relaxed) {
            0 => None,
            ns => Some(Duration::from_nanos(ns)),
        }
    }

    /// Notes this rank's status word (what it answers a query with).
    #[inline]
    pub(crate) fn note_state(&self, word: u64) {
        self.dl.word.store(word, Ordering::Relaxed);
    }

    /// Notes that this rank waits in barrier A of `superstep` past its
    /// fence (`Some`), or no longer (`None`).
    pub(crate) fn note_fenced(&self, superstep: Option<u64>) {
        let v = superstep.map_or(0, |s| s.wrapping_add(1));
        self.dl.fenced.store(v, Ordering::Relaxed);
    }

    /// One turn of a yielding wait: every [`TURNS`] turns, answers the
    /// queries that came and, when `timed` and the run has a deadline,
    /// reads the clock (`started`: when this wait began yielding).
    pub(super) fn waited(
        &self,
        turns: &mut u32,
        started: &mut Option<Instant>,
        timed: bool,
    ) -> Result<(), Interrupt> {
        let _mpi = progress::hold();
        *turns = turns.wrapping_add(1);
        if *turns % TURNS != 0 {
            return Ok(());
        }
        self.serve_queries();
        if let (true, Some(limit)) = (timed, self.deadline()) {
            if started.get_or_insert_with(Instant::now).elapsed() > limit {
                return Err(Interrupt::Deadline);
            }
        }
        Ok(())
    }

    /// Answers every query that came (from any wait of this rank).
    pub(crate) fn serve_queries(&self) {
        let _mpi = progress::hold();
        let me = self.comm.rank();
        while let Some((msg, status)) = self
            .comm
            .any_process()
            .immediate_matched_probe_with_tag(QUERY_TAG)
        {
            let q: [u64; 2] = receive_words(msg);
            let from = status.source_rank();
            if q[1] == DEADLINE && from < me {
                self.dl.deferred.store(true, Ordering::Relaxed);
            }
            let answer = [
                q[0],
                self.dl.word.load(Ordering::Relaxed),
                self.dl.fenced.load(Ordering::Relaxed),
            ];
            self.send_words(from as usize, ANSWER_TAG, &answer);
        }
    }

    /// Opens a round: query `kind` to every other rank.
    fn ask(&self, r: &mut Rounds, kind: u64) {
        let _mpi = progress::hold();
        let me = self.comm.rank();
        r.seq += 1;
        r.answers.clear();
        r.answers.resize(self.nprocs, None);
        r.open = Some(Instant::now());
        for to in (0..self.nprocs).filter(|&to| to != me as usize) {
            self.send_words(to, QUERY_TAG, &[r.seq, kind]);
        }
    }

    /// Sends `words` without waiting (a rank asked may never answer, nor
    /// take part in setting up a connection: `send_bytes`).
    fn send_words(&self, to: usize, tag: i32, words: &[u64]) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        self.send_bytes(to, tag, &bytes);
    }

    /// Takes the answers that came (dropping those of earlier rounds);
    /// true once every other rank answered the open round.
    fn collect(&self, r: &mut Rounds) -> bool {
        let _mpi = progress::hold();
        while let Some((msg, status)) = self
            .comm
            .any_process()
            .immediate_matched_probe_with_tag(ANSWER_TAG)
        {
            let a: [u64; 3] = receive_words(msg);
            let from = status.source_rank() as usize;
            if a[0] == r.seq && from < r.answers.len() {
                r.answers[from] = Some([a[1], a[2]]);
            }
        }
        let me = self.comm.rank() as usize;
        (0..self.nprocs).all(|q| q == me || r.answers[q].is_some())
    }

    /// The deadline passed while this process waited: asks every other
    /// rank where it is and returns, per pid, the status word each
    /// answered with (`None`: no answer within [`GRACE`]). When a rank of
    /// smaller pid reports too, this waits (answering queries) for it to
    /// end the job, and returns only if that has not happened one
    /// deadline later. The caller reports and ends the job.
    pub(crate) fn deadline_round(&self) -> Vec<Option<u64>> {
        let _mpi = progress::hold();
        let mut r = self.dl.rounds.lock().unwrap_or_else(|p| p.into_inner());
        self.serve_queries();
        self.ask(&mut r, DEADLINE);
        let t0 = Instant::now();
        while !self.collect(&mut r) && t0.elapsed() < GRACE {
            self.serve_queries();
            std::thread::yield_now();
        }
        r.open = None;
        let answers = r.answers.iter().map(|a| a.map(|[w, _]| w)).collect();
        if self.dl.deferred.load(Ordering::Relaxed) {
            // A rank of smaller pid reports and ends the job.
            let until = Instant::now() + self.deadline().unwrap_or(GRACE);
            while Instant::now() < until {
                self.serve_queries();
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        answers
    }

    /// For a counter wait in `superstep`: whether every other process has
    /// ended or waits in barrier A of `superstep` past its fence (its
    /// messages all handled, its handlers' sends held until the sync
    /// returns, which needs this process): `None` while the answers are
    /// not all in. Never blocks: the first call asks, later ones collect;
    /// a round that finds a process elsewhere is repeated after a pause
    /// that doubles up to a second. "Yes" cannot change while this
    /// process waits, and is kept for the superstep.
    pub(crate) fn others_fenced(&self, superstep: u64) -> Option<bool> {
        let _mpi = progress::hold();
        let mut r = self.dl.rounds.lock().unwrap_or_else(|p| p.into_inner());
        if r.fenced_in == Some(superstep) {
            return Some(true);
        }
        let Some(open) = r.open else {
            if r.not_before.is_some_and(|t| Instant::now() < t) {
                return Some(false);
            }
            self.ask(&mut r, COUNTER);
            return None;
        };
        let all = self.collect(&mut r);
        if !all && open.elapsed() < GRACE {
            return None;
        }
        r.open = None;
        let me = self.comm.rank() as usize;
        let fenced = all
            && (0..self.nprocs).all(|q| {
                q == me
                    || r.answers[q].is_some_and(|[word, fenced]| {
                        word & 3 == crate::engine::board::State::Ended as u64
                            || fenced == superstep.wrapping_add(1)
                    })
            });
        if fenced {
            r.fenced_in = Some(superstep);
            r.pause = Duration::ZERO;
        } else {
            r.pause = (r.pause * 2).clamp(Duration::from_millis(20), Duration::from_secs(1));
            r.not_before = Some(Instant::now() + r.pause);
        }
        Some(fenced)
    }
}

/// Receives a message of `N` words sent by `send_words` (as bytes, the
/// type it was sent with); a shorter one leaves zeros.
fn receive_words<const N: usize>(msg: mpi::point_to_point::Message) -> [u64; N] {
    let mut bytes = [[0u8; 8]; N];
    msg.matched_receive_into(bytes.as_flattened_mut());
    bytes.map(u64::from_ne_bytes)
}
