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

mod bell;
#[cfg(all(test, loom))]
mod loom_tests;
mod wake;

pub(crate) use bell::Bell;
pub(crate) use wake::{Check, Local, Wake};

#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

use crate::engine::Interrupt;

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
