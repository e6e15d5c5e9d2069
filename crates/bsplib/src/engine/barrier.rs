//! A reducing, interruptible barrier that costs one atomic read-modify-write
//! per arrival, and waits by spinning briefly, then yielding, then parking.
//!
//! - **Arrivals** are counted by one ever-increasing word, `arrivals`, in
//!   units of 8 (its two low bits are the `PARKED` flags below, the third
//!   is `STOPPED`). Every
//!   process counts the episodes it has passed (`episode`, kept by the
//!   caller), so episode `e` is complete exactly when `arrivals >= (e+1)·p`:
//!   no division, and no reset, hence no second write by the last arriver.
//!   Arrival is one `fetch_add` (AcqRel); waiters acquire-load the word.
//!   All arrivals' RMWs form one release sequence, so everything any process
//!   wrote before arriving happens-before everything every process does
//!   after leaving.
//! - **Flags** (the OR that tells every process whether anyone communicated)
//!   accumulate in `acc[e % 3]` by `fetch_or`, before the arrival's
//!   `fetch_add`, and are read after completion. Before arriving at episode
//!   `e`, a process clears `acc[(e+1) % 3]` if it is non-zero: every process
//!   read that accumulator (episode `e-2`) before arriving at `e-1`, and
//!   nobody ORs into it for episode `e+1` before `e` is complete. Three
//!   accumulators make this safe without any extra synchronisation.
//! - **Interruption**: the run's failure travels with the barrier word:
//!   `stop` sets its `STOPPED` bit (`fetch_or`), which every waiter sees in
//!   the word it polls anyway, and every later arrival sees in the word its
//!   `fetch_add` returns. `ended` (a process returned and will never
//!   arrive) is on a separate, read-mostly line, looked at every 64 spins.
//!   Either ends the wait with an [`Interrupt`]. A process that ends (or
//!   fails) after leaving a barrier may be seen as ended (or the run as
//!   stopped) by a slower waiter of that same barrier: the waiter checks
//!   the count first (the stopped word shows it complete: the stop came
//!   after the arrival that completed it in the word's modification order)
//!   or re-reads `arrivals` after seeing `ended` (the process that set it
//!   had acquired the completed count before storing it, Release/Acquire),
//!   so it leaves the barrier normally.
//! - **Parking** ([`Wake`]): a waiter of episode `e` re-checks the count
//!   and sets `PARKED[e % 2]` with a compare-exchange that fails if the
//!   count changed, then sleeps. The arrival that completes the episode gets
//!   the old word from its `fetch_add`: if it has the flag, it clears it and
//!   notifies. Either the exchange precedes that `fetch_add` in the word's
//!   modification order (the arriver sees the flag and notifies, and the
//!   [`Wake`] implementation guarantees that a notification after a check
//!   is not lost: [`Local`] checks and notifies under one mutex; the
//!   `processes` engine's futex re-reads a wake counter in the kernel), or
//!   it follows it and fails (the waiter then sees the episode complete).
//!   Waiters of episode `e+2`, the next users of the same flag, cannot park
//!   before the arriver cleared it (they wait for `e+1`, which needs the
//!   arriver's next arrival). `stop` and `ended` always notify.
//!   No wake-up is lost, and the common path pays nothing for parking.

#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
use loom::sync::{Condvar, Mutex};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::{Condvar, Mutex};

use crossbeam_utils::CachePadded;

use crate::engine::Interrupt;

/// A notification counter ([`Barrier::ring`]): the barrier's own atomic
/// type, so that the loom model covers the engines' counters too.
pub(crate) type Bell = AtomicU64;

const NONE: usize = usize::MAX;

/// One arrival in `arrivals`.
const ONE: u64 = 8;

/// The bit of `arrivals` that says the run was stopped.
const STOPPED: u64 = 4;

/// The count in an `arrivals` word.
#[inline]
fn count(word: u64) -> u64 {
    word & !7
}

/// The flag a parked waiter of episode `e` sets.
#[inline]
fn parked(e: u64) -> u64 {
    1 << (e & 1)
}

/// How long a waiter busy-waits before yielding and before parking.
#[derive(Clone, Copy, Debug)]
struct Patience {
    spins: u32,
    yields: u32,
}

impl Patience {
    fn for_procs(nprocs: usize, oversubscribed_spins: u32) -> Self {
        if cfg!(loom) {
            return Patience {
                spins: 0,
                yields: 1,
            };
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if nprocs <= cores {
            // Every process has a core: spinning is the fastest wait, and a
            // futex wake-up costs ~300 times a spin barrier here.
            Patience {
                spins: 1 << 16,
                yields: 1 << 10,
            }
        } else {
            // Oversubscribed: the process we wait for may need our core.
            Patience {
                spins: oversubscribed_spins,
                yields: 1 << 6,
            }
            // (Every spin limit is a multiple of 64: see `await_count_with`.)
        }
    }
}

/// See the module documentation. `W` is how waiters sleep: [`Local`] for
/// threads of one OS process, a futex in shared memory for the `processes`
/// engine.
pub(crate) struct Barrier<W: Wake = Local> {
    arrivals: CachePadded<AtomicU64>,
    acc: CachePadded<[AtomicU32; 3]>,
    nprocs: u64,
    patience: Patience,
    stopped: AtomicBool,
    ended: AtomicUsize,
    /// The run's deadline in milliseconds (0: none): a waiter that waited
    /// this long gives up with [`Interrupt::Deadline`].
    deadline_ms: AtomicU64,
    wake: W,
}

/// What a parked waiter's check found.
pub(crate) enum Check {
    /// Stop waiting: the episode is complete or the wait was interrupted.
    Done,
    /// The state changed under us: check again.
    Retry,
    /// Our parked flag is set and nothing changed: sleep.
    Sleep,
}

/// How waiters sleep and are woken. `park` must not lose a `notify` that
/// follows a `check` returning [`Check::Sleep`].
pub(crate) trait Wake {
    /// Sleeps until `check` returns [`Check::Done`], calling it before each
    /// sleep and after each wake-up; sleeps at most until `until` (then
    /// checks again).
    fn park(&self, check: impl FnMut() -> Check, until: Option<std::time::Instant>);
    /// How long a waiter busy-waits before yielding when the processes
    /// outnumber the cores (a multiple of 64).
    const OVERSUBSCRIBED_SPINS: u32 = 1 << 6;
    /// Wakes every parked waiter.
    fn notify(&self);
}

/// Sleeping for threads of one OS process: a mutex and a condition variable.
/// The check runs under the mutex and `notify` takes it, so a notification
/// cannot fall between a check and the wait.
#[derive(Default)]
pub(crate) struct Local {
    lock: Mutex<()>,
    cv: Condvar,
}

impl Wake for Local {
    const OVERSUBSCRIBED_SPINS: u32 = 0;

    fn park(&self, mut check: impl FnMut() -> Check, until: Option<std::time::Instant>) {
        let mut guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match check() {
                Check::Done => return,
                Check::Retry => continue,
                Check::Sleep => match until {
                    #[cfg(not(loom))]
                    Some(until) => {
                        let left = until.saturating_duration_since(std::time::Instant::now());
                        guard = self
                            .cv
                            .wait_timeout(guard, left)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                    }
                    _ => guard = self.cv.wait(guard).unwrap_or_else(|p| p.into_inner()),
                },
            }
        }
    }

    fn notify(&self) {
        drop(self.lock.lock().unwrap_or_else(|p| p.into_inner()));
        self.cv.notify_all();
    }
}

impl Barrier<Local> {
    /// A barrier for `nprocs >= 1` threads.
    pub(crate) fn new(nprocs: usize) -> Self {
        Self::with_wake(nprocs, Local::default())
    }
}

impl<W: Wake> Barrier<W> {
    /// A barrier for `nprocs >= 1` processes that sleep with `wake`.
    pub(crate) fn with_wake(nprocs: usize, wake: W) -> Self {
        assert!(nprocs >= 1, "a barrier needs a process");
        Barrier {
            arrivals: CachePadded::new(AtomicU64::new(0)),
            acc: CachePadded::new([AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)]),
            nprocs: nprocs as u64,
            patience: Patience::for_procs(nprocs, W::OVERSUBSCRIBED_SPINS),
            stopped: AtomicBool::new(false),
            ended: AtomicUsize::new(NONE),
            deadline_ms: AtomicU64::new(0),
            wake,
        }
    }

    /// Sets the run's deadline (before the processes start).
    pub(crate) fn set_deadline(&self, limit: Option<std::time::Duration>) {
        let ms = limit.map_or(0, |d| {
            u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
        });
        self.deadline_ms.store(ms, Ordering::Relaxed);
    }

    /// The run's deadline, if any.
    pub(crate) fn deadline(&self) -> Option<std::time::Duration> {
        match self.deadline_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(std::time::Duration::from_millis(ms)),
        }
    }

    /// Arrives at the barrier `*episode` (the number of barriers this process
    /// passed, which this increments) with `flags`; returns the OR of every
    /// process's flags once all have arrived.
    #[inline]
    pub(crate) fn wait(&self, episode: &mut u64, flags: u32) -> Result<u32, Interrupt> {
        self.arrive(episode, flags, None)
    }

    /// [`wait`](Self::wait) that, while it waits, calls `poll` once at
    /// the start and then whenever `bell` (a notification counter of the
    /// caller's) has been rung since it last looked, or at every turn
    /// while `poll` returns true (it has work waiting for room elsewhere):
    /// the dispatching barrier of active messages (`ACTIVE_MESSAGES.md`,
    /// section 2). A parked waiter also sets the bell's sleep bit, so that
    /// a ring wakes it (the same compare-exchange discipline as the
    /// barrier's own flag and [`await_bell`](Self::await_bell)).
    pub(crate) fn wait_polling(
        &self,
        episode: &mut u64,
        flags: u32,
        bell: &AtomicU64,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<u32, Interrupt> {
        self.arrive(episode, flags, Some((bell, poll)))
    }

    /// The body of [`wait`](Self::wait) and
    /// [`wait_polling`](Self::wait_polling).
    #[inline]
    fn arrive(
        &self,
        episode: &mut u64,
        flags: u32,
        polling: Option<(&AtomicU64, &mut dyn FnMut() -> bool)>,
    ) -> Result<u32, Interrupt> {
        if self.stopped.load(Ordering::Relaxed) {
            return Err(Interrupt::Stopped);
        }
        let e = *episode;
        let stale = &self.acc[((e + 1) % 3) as usize];
        if stale.load(Ordering::Relaxed) != 0 {
            stale.store(0, Ordering::Relaxed);
        }
        if flags != 0 {
            self.acc[(e % 3) as usize].fetch_or(flags, Ordering::Relaxed);
        }
        // Episode `e` completes when the count reaches `target`.
        let target = (e + 1) * self.nprocs * ONE;
        let old = self.arrivals.fetch_add(ONE, Ordering::AcqRel);
        if count(old) + ONE == target {
            if old & parked(e) != 0 {
                self.arrivals.fetch_and(!parked(e), Ordering::Relaxed);
                self.notify();
            }
        } else {
            self.await_count_with(e, target, polling)?;
        }
        *episode = e + 1;
        Ok(self.acc[(e % 3) as usize].load(Ordering::Acquire))
    }

    /// Returns once the count reached `target`, or with the reason it never
    /// will; with `polling`, calling `poll` as [`wait_polling`](Self::wait_polling)
    /// says.
    fn await_count_with(
        &self,
        e: u64,
        target: u64,
        mut polling: Option<(&AtomicU64, &mut dyn FnMut() -> bool)>,
    ) -> Result<(), Interrupt> {
        let done = || count(self.arrivals.load(Ordering::Acquire)) >= target;
        // The bell's count (in units of 2) when we last polled.
        let mut seen = polling
            .as_ref()
            .map_or(0, |(b, _)| b.load(Ordering::Acquire) >> 1);
        // What arrived before the bell was read (it may have been rung
        // before we came) is polled for once, now. A poll that returns
        // true has work it could not finish (records waiting for room in
        // an inbox): it is called again at every turn, and we do not park.
        let mut busy = match polling.as_mut() {
            Some((_, poll)) => poll(),
            None => false,
        };
        let mut spins = 0u32;
        let mut yields = 0u32;
        // Set once spinning is over (no clock is read on the fast path).
        let mut until: Option<Option<std::time::Instant>> = None;
        loop {
            let word = self.arrivals.load(Ordering::Acquire);
            if count(word) >= target {
                return Ok(());
            }
            if word & STOPPED != 0 {
                return Err(Interrupt::Stopped);
            }
            // While spinning, look at the (read-mostly) `ended` line only
            // every 64th time: a second line in the poll loop costs about a
            // quarter of a barrier here. Once spinning is over, `spins`
            // stays at its limit, a multiple of 64: every time.
            if spins % 64 == 0 {
                if let Some(why) = self.ended_interruption() {
                    return if done() { Ok(()) } else { Err(why) };
                }
            }
            if let Some((bell, poll)) = polling.as_mut() {
                let rung = bell.load(Ordering::Acquire) >> 1;
                if rung != seen || busy {
                    seen = rung;
                    busy = poll();
                    if busy {
                        // Not parking: the ended and deadline checks of the
                        // parking path are made here.
                        if let Some(why) = self.ended_interruption() {
                            return if done() { Ok(()) } else { Err(why) };
                        }
                        let until = *until.get_or_insert_with(|| self.deadline_from_now());
                        if until.is_some_and(|t| std::time::Instant::now() >= t) {
                            return if done() {
                                Ok(())
                            } else {
                                Err(Interrupt::Deadline)
                            };
                        }
                        yield_now();
                    }
                    continue;
                }
            }
            if spins < self.patience.spins {
                spins += 1;
                std::hint::spin_loop();
            } else {
                let until = *until.get_or_insert_with(|| self.deadline_from_now());
                if until.is_some_and(|t| std::time::Instant::now() >= t) {
                    return if done() {
                        Ok(())
                    } else {
                        Err(Interrupt::Deadline)
                    };
                }
                if yields < self.patience.yields {
                    yields += 1;
                    yield_now();
                } else {
                    let bell = polling.as_ref().map(|(b, _)| (*b, seen));
                    self.park(e, target, until, bell);
                }
            }
        }
    }

    /// When a wait starting now must give up, if the run has a deadline.
    fn deadline_from_now(&self) -> Option<std::time::Instant> {
        if cfg!(loom) {
            return None;
        }
        self.deadline().map(|d| std::time::Instant::now() + d)
    }

    /// A process ended: nobody waiting for it will see it arrive.
    #[inline]
    fn ended_interruption(&self) -> Option<Interrupt> {
        let ended = self.ended.load(Ordering::Acquire);
        (ended != NONE).then_some(Interrupt::Ended(ended))
    }

    /// Sleeps until the count reaches `target` or the wait is interrupted,
    /// or (with `bell = Some((bell, seen))`) the bell is rung past `seen`.
    fn park(
        &self,
        e: u64,
        target: u64,
        until: Option<std::time::Instant>,
        bell: Option<(&AtomicU64, u64)>,
    ) {
        self.wake.park(
            || {
                let word = self.arrivals.load(Ordering::Acquire);
                if count(word) >= target
                    || word & STOPPED != 0
                    || self.ended_interruption().is_some()
                    || until.is_some_and(|t| std::time::Instant::now() >= t)
                {
                    return Check::Done;
                }
                if let Some((bell, seen)) = bell {
                    // The bell's sleep bit first: a ring after this makes
                    // its ringer notify, one before it shows in the count.
                    let b = bell.load(Ordering::Acquire);
                    if b >> 1 != seen {
                        return Check::Done;
                    }
                    if b & 1 == 0
                        && bell
                            .compare_exchange(b, b | 1, Ordering::AcqRel, Ordering::Acquire)
                            .is_err()
                    {
                        return Check::Retry;
                    }
                }
                if word & parked(e) == 0
                    && self
                        .arrivals
                        .compare_exchange(
                            word,
                            word | parked(e),
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        )
                        .is_err()
                {
                    return Check::Retry;
                }
                Check::Sleep
            },
            until,
        );
    }

    fn notify(&self) {
        self.wake.notify();
    }

    /// Point-to-point notification: adds one to `bell`, a counter of the
    /// process notified (in units of 2: bit 0 says it sleeps), with
    /// release ordering, and wakes it if it sleeps. Everything the caller
    /// wrote before is visible to the notified process once its
    /// [`await_bell`](Self::await_bell) has seen this notification.
    pub(crate) fn ring(&self, bell: &AtomicU64) {
        let old = bell.fetch_add(2, Ordering::AcqRel);
        if old & 1 != 0 {
            bell.fetch_and(!1, Ordering::Relaxed);
            self.notify();
        }
    }

    /// Waits until `bell` (this process's) has been rung `target` times in
    /// all. Interrupted by [`stop`](Self::stop) and by the run's deadline;
    /// a notification that never comes otherwise waits forever, as a
    /// receive with no sender does. The same spin, yield and park as a
    /// barrier, and the same argument against lost wake-ups: the waiter
    /// sets the sleep bit with a compare-exchange that fails if a
    /// notification came in between; a notifier that finds the bit set
    /// wakes it.
    pub(crate) fn await_bell(&self, bell: &AtomicU64, target: u64) -> Result<(), Interrupt> {
        self.await_bell_until(bell, target, None)
    }

    /// [`await_bell`](Self::await_bell) that also returns (with `Ok`, as
    /// if woken) once `soft` has passed, for a caller that must look at
    /// something else from time to time (whether a process it waits for
    /// has ended).
    pub(crate) fn await_bell_until(
        &self,
        bell: &AtomicU64,
        target: u64,
        soft: Option<std::time::Instant>,
    ) -> Result<(), Interrupt> {
        let reached = |word: u64| word >> 1 >= target;
        let past =
            |t: Option<std::time::Instant>| t.is_some_and(|t| std::time::Instant::now() >= t);
        let mut spins = 0u32;
        let mut yields = 0u32;
        let mut until: Option<Option<std::time::Instant>> = None;
        loop {
            let word = bell.load(Ordering::Acquire);
            if reached(word) {
                return Ok(());
            }
            if self.arrivals.load(Ordering::Acquire) & STOPPED != 0 {
                return Err(Interrupt::Stopped);
            }
            if !cfg!(loom) && past(soft) {
                return Ok(());
            }
            if spins < self.patience.spins {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            let until = *until.get_or_insert_with(|| self.deadline_from_now());
            if until.is_some_and(|t| std::time::Instant::now() >= t) {
                return Err(Interrupt::Deadline);
            }
            if yields < self.patience.yields {
                yields += 1;
                yield_now();
                continue;
            }
            let wake_at = match (until, if cfg!(loom) { None } else { soft }) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            self.wake.park(
                || {
                    let word = bell.load(Ordering::Acquire);
                    if reached(word)
                        || self.arrivals.load(Ordering::Acquire) & STOPPED != 0
                        || past(wake_at)
                    {
                        return Check::Done;
                    }
                    if word & 1 == 0
                        && bell
                            .compare_exchange(word, word | 1, Ordering::AcqRel, Ordering::Acquire)
                            .is_err()
                    {
                        return Check::Retry;
                    }
                    Check::Sleep
                },
                wake_at,
            );
        }
    }

    /// Stops the run: every current and future wait returns
    /// [`Interrupt::Stopped`].
    pub(crate) fn stop(&self) {
        // The flag for callers between barriers (`is_stopped`, read at
        // every call), the bit for waiters and arrivals.
        self.stopped.store(true, Ordering::Relaxed);
        self.arrivals.fetch_or(STOPPED, Ordering::Release);
        self.notify();
    }

    /// Process `pid` returned from the SPMD function: it will not arrive at
    /// any later barrier.
    pub(crate) fn ended(&self, pid: usize) {
        let _ = self
            .ended
            .compare_exchange(NONE, pid, Ordering::AcqRel, Ordering::Acquire);
        self.notify();
    }

    /// True once [`stop`](Self::stop) was called.
    #[inline]
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }
}

#[cfg(loom)]
fn yield_now() {
    loom::thread::yield_now();
}

#[cfg(not(loom))]
fn yield_now() {
    std::thread::yield_now();
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! Model checks of the barrier and stop protocol:
    //! `RUSTFLAGS="--cfg loom" cargo test -p bsplib --lib --release loom`.
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    /// Data written before a barrier is seen after it, flags are reduced,
    /// and the barrier can be reused (two episodes).
    #[test]
    fn loom_barrier_publishes_and_reduces() {
        loom::model(|| {
            let mut k = 0;
            let b = Arc::new(Barrier::new(2));
            let data = Arc::new(AtomicUsize::new(0));
            let (b2, d2) = (b.clone(), data.clone());
            let t = thread::spawn(move || {
                let mut k = 0;
                d2.store(7, Ordering::Relaxed);
                let all = b2.wait(&mut k, 1).unwrap();
                assert_eq!(all, 3);
                b2.wait(&mut k, 0).unwrap();
            });
            let all = b.wait(&mut k, 2).unwrap();
            assert_eq!(all, 3);
            assert_eq!(data.load(Ordering::Relaxed), 7);
            assert_eq!(b.wait(&mut k, 0).unwrap(), 0);
            t.join().unwrap();
        });
    }

    /// Three processes: every one leaves with the OR of all flags, and the
    /// parked ones are woken.
    #[test]
    fn loom_three_processes_reduce() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(|| {
            let mut k = 0;
            let b = Arc::new(Barrier::new(3));
            let ts: Vec<_> = [1u32, 2]
                .into_iter()
                .map(|f| {
                    let b = b.clone();
                    thread::spawn(move || b.wait(&mut 0, f).unwrap())
                })
                .collect();
            assert_eq!(b.wait(&mut k, 4).unwrap(), 7);
            for t in ts {
                assert_eq!(t.join().unwrap(), 7);
            }
        });
    }

    /// Flags of one episode never leak into another, across the reuse of
    /// the three accumulators.
    #[test]
    fn loom_flags_stay_in_their_episode() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(2);
        builder.check(|| {
            let mut k = 0;
            let b = Arc::new(Barrier::new(2));
            let b2 = b.clone();
            let t = thread::spawn(move || {
                let mut k = 0;
                let got: Vec<u32> = [1, 0, 0, 2]
                    .into_iter()
                    .map(|f| b2.wait(&mut k, f).unwrap())
                    .collect();
                assert_eq!(got, [1, 0, 4, 2]);
            });
            let got: Vec<u32> = [0, 0, 4, 0]
                .into_iter()
                .map(|f| b.wait(&mut k, f).unwrap())
                .collect();
            assert_eq!(got, [1, 0, 4, 2]);
            t.join().unwrap();
        });
    }

    /// A stop while another process waits ends the wait: no hang.
    #[test]
    fn loom_stop_interrupts_waiter() {
        loom::model(|| {
            let b = Arc::new(Barrier::new(2));
            let b2 = b.clone();
            let t = thread::spawn(move || b2.wait(&mut 0, 0));
            b.stop();
            assert_eq!(t.join().unwrap(), Err(Interrupt::Stopped));
        });
    }

    /// A stop right after a barrier completes does not fail a slower
    /// waiter of that barrier; its next wait fails.
    #[test]
    fn loom_stop_after_barrier_is_seen_at_the_next() {
        loom::model(|| {
            let mut k = 0;
            let b = Arc::new(Barrier::new(2));
            let b2 = b.clone();
            let t = thread::spawn(move || {
                let mut k = 0;
                b2.wait(&mut k, 0).unwrap();
                b2.stop();
            });
            assert_eq!(b.wait(&mut k, 0), Ok(0));
            assert_eq!(b.wait(&mut k, 0), Err(Interrupt::Stopped));
            t.join().unwrap();
        });
    }

    /// A process that ends right after a barrier does not make a slower
    /// waiter of that barrier fail; one that ends before arriving does.
    #[test]
    fn loom_end_after_barrier_is_not_an_error() {
        loom::model(|| {
            let mut k = 0;
            let b = Arc::new(Barrier::new(2));
            let b2 = b.clone();
            let t = thread::spawn(move || {
                let mut k = 0;
                b2.wait(&mut k, 0).unwrap();
                b2.ended(1);
            });
            assert_eq!(b.wait(&mut k, 0), Ok(0));
            assert_eq!(b.wait(&mut k, 0), Err(Interrupt::Ended(1)));
            t.join().unwrap();
        });
    }

    /// A stop racing with the last arrival: every waiter either completes
    /// or is stopped, none hangs.
    #[test]
    fn loom_stop_racing_the_last_arrival_never_hangs() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(|| {
            let b = Arc::new(Barrier::new(2));
            let b2 = b.clone();
            let t = thread::spawn(move || b2.wait(&mut 0, 0));
            let b3 = b.clone();
            let s = thread::spawn(move || b3.stop());
            let mine = b.wait(&mut 0, 0);
            let theirs = t.join().unwrap();
            s.join().unwrap();
            for r in [mine, theirs] {
                assert!(matches!(r, Ok(0) | Err(Interrupt::Stopped)), "{r:?}");
            }
        });
    }

    /// A notification publishes what was written before it, and wakes a
    /// waiter however the two interleave (spinning, or parked).
    #[test]
    fn loom_bell_publishes_and_wakes() {
        loom::model(|| {
            let b = Arc::new(Barrier::new(2));
            let bell = Arc::new(AtomicU64::new(0));
            let data = Arc::new(AtomicUsize::new(0));
            let (b2, bell2, d2) = (b.clone(), bell.clone(), data.clone());
            let t = thread::spawn(move || {
                d2.store(7, Ordering::Relaxed);
                b2.ring(&bell2);
                b2.ring(&bell2);
            });
            b.await_bell(&bell, 2).unwrap();
            assert_eq!(data.load(Ordering::Relaxed), 7);
            t.join().unwrap();
        });
    }

    /// A stop ends a wait for a notification that never comes.
    #[test]
    fn loom_stop_interrupts_a_bell_wait() {
        loom::model(|| {
            let b = Arc::new(Barrier::new(2));
            let bell = Arc::new(AtomicU64::new(0));
            let b2 = b.clone();
            let t = thread::spawn(move || b2.stop());
            assert_eq!(b.await_bell(&bell, 1), Err(Interrupt::Stopped));
            t.join().unwrap();
        });
    }

    /// The dispatching barrier: a waiter in `wait_polling` sees a record
    /// posted (data, then a ring) by a process that waits for the answer
    /// before it arrives; it answers from inside its poll, and both leave.
    /// However the ring and the waiter's parking interleave, no wake-up is
    /// lost (the waiter sets the bell's sleep bit as well as the
    /// barrier's).
    #[test]
    fn loom_polling_barrier_answers_and_wakes() {
        loom::model(|| {
            let b = Arc::new(Barrier::new(2));
            // The waiter's bell and the asker's (for the answer).
            let bells = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
            let question = Arc::new(AtomicUsize::new(0));
            let (b2, bells2, q2) = (b.clone(), bells.clone(), question.clone());
            let t = thread::spawn(move || {
                q2.store(7, Ordering::Relaxed);
                b2.ring(&bells2[0]);
                // Wait for the answer, then arrive.
                b2.await_bell(&bells2[1], 1).unwrap();
                b2.wait(&mut 0, 0).unwrap();
            });
            let mut answered = false;
            let mut k = 0;
            b.wait_polling(&mut k, 0, &bells[0], &mut || {
                if !answered && question.load(Ordering::Relaxed) == 7 {
                    answered = true;
                    b.ring(&bells[1]);
                }
                false
            })
            .unwrap();
            assert!(answered);
            t.join().unwrap();
        });
    }
}
