//! The progress points of a process in active-message mode: the dispatch
//! of what arrived, the fence, the waits (and their checks for messages
//! that cannot come), barrier A of a sync, and [`Am::wait_counter`],
//! [`Am::poll`] and [`Am::fence`].

use super::mode::not_active;
use super::{Am, Counter, Dispatch};
use crate::engine::Interrupt;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::{Loc, Process};

impl Process {
    /// Whether this process is in active-message mode.
    pub(crate) fn am_active(&self) -> bool {
        self.ext.am().ctx.is_some()
    }

    /// The error of a dispatch that stopped, as `call`'s.
    fn dispatch_error(&self, d: Dispatch, call: &'static str, loc: Loc) -> Error {
        match d {
            Dispatch::Interrupted(why) => self.interrupted(why, call, loc),
            Dispatch::Target(kind) => self.fail(kind, call, loc),
        }
    }

    /// Handles what arrived (a progress point).
    pub(crate) fn am_dispatch(&mut self, call: &'static str, loc: Loc) -> Result<(), Error> {
        let am = self.ext.am_mut();
        let serve = am.serve;
        let Some(mut ctx) = am.ctx.take() else {
            return Ok(());
        };
        ctx.superstep = self.superstep;
        ctx.site = (self.call_name(call), loc);
        let r = ctx.dispatch(&self.world, false).and_then(|()| match serve {
            Some(serve) => serve(&mut ctx, &mut self.ext, &self.reg, &self.world),
            None => Ok(()),
        });
        let panicked = ctx.panicked.take();
        self.ext.am_mut().ctx = Some(ctx);
        if let Some(panic) = panicked {
            // A handler panicked: the run has failed (`process/guard.rs`),
            // the context is back; the panic goes on.
            self.poison();
            panic.resume();
        }
        r.map_err(|d| self.dispatch_error(d, call, loc))
    }

    /// Waits, dispatching, until every message this process sent has been
    /// handled (and acknowledged), including those its own completion
    /// handlers send meanwhile.
    pub(crate) fn am_fence(&mut self, call: &'static str, loc: Loc) -> Result<(), Error> {
        let mut started = None;
        loop {
            let mark = self.world.am_mark(self.pid);
            self.am_dispatch(call, loc)?;
            match &self.ext.am_mut().ctx {
                Some(ctx) if ctx.outstanding() => {}
                _ => return Ok(()),
            }
            self.am_pause(mark, &mut started, call, loc)?;
        }
    }

    /// The wait of a dispatching loop (`wait`, `fence`): for a ring if
    /// nothing of ours waits for room in an inbox, else a yield (an inbox
    /// that frees room rings no one), checking the run's stop and deadline,
    /// and that no process we owe messages to has ended.
    pub(crate) fn am_pause(
        &self,
        mark: u64,
        started: &mut Option<std::time::Instant>,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.am_pause_or_yield(mark, started, true, call, loc)
    }

    /// [`am_pause`](Process::am_pause), with a yield instead of the wait
    /// for a record unless `sleep`: for a wait on a word of shared or MPI
    /// memory (a lock word, a post counter) whose change rings no bell.
    pub(crate) fn am_pause_or_yield(
        &self,
        mark: u64,
        started: &mut Option<std::time::Instant>,
        sleep: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let Some(ctx) = self.ext.am().ctx.as_ref() else {
            return Ok(());
        };
        if let Some(q) = (0..self.nprocs).find(|&q| {
            q != self.pid
                && ctx.owes(q)
                && self.world.board().get(q).1 == crate::engine::board::State::Ended
        }) {
            return Err(self.fail(
                ErrorKind::AmMismatch {
                    detail: format!(
                        "process {q} ended with active messages for it pending (sent and not \
                         handled)"
                    ),
                },
                call,
                loc,
            ));
        }
        // Nothing of ours in flight, nothing arrived since the mark, and
        // every other process has ended: nothing can ever come.
        let ended = |q: usize| self.world.board().get(q).1 == crate::engine::board::State::Ended;
        if !ctx.outstanding()
            && self.world.am_mark(self.pid) == mark
            && (0..self.nprocs).all(|q| q == self.pid || ended(q))
        {
            return Err(self.fail(
                ErrorKind::AmMismatch {
                    detail: "waits for active messages that cannot come: none of this \
                             process's is in flight, and every other process has ended"
                        .into(),
                },
                call,
                loc,
            ));
        }
        if self.world.is_stopped() {
            return Err(self.stopped(call, loc));
        }
        // The deadline counts from the start of this wait (`am_wait`
        // returns every 50 ms to let us look at ended processes).
        let t0 = *started.get_or_insert_with(std::time::Instant::now);
        if self.world.deadline().is_some_and(|d| t0.elapsed() > d) {
            return Err(self.interrupted(Interrupt::Deadline, call, loc));
        }
        if sleep && !ctx.backlogged() {
            return self
                .world
                .am_wait(self.pid, mark)
                .map_err(|why| self.interrupted(why, call, loc));
        }
        std::thread::yield_now();
        // The wait for a record takes a failed process's stop message on
        // `mpi`; without it, look for one here.
        if !sleep && self.world.poll_stopped() {
            return Err(self.stopped(call, loc));
        }
        Ok(())
    }

    /// [`am_pause`](Process::am_pause) for a counter wait (`wait_counter`,
    /// `LAPI_Waitcntr`) whose counter is short of `n`: fails the run when
    /// it can never move (`watch` is kept by the caller across its loop).
    ///
    /// Certain when this process has nothing in flight and nothing waiting
    /// for room, nothing arrived over two turns of its loop (so every
    /// acknowledgement and completed send has moved its counters), and
    /// every other process has ended or waits in barrier A past its fence:
    /// everything that process sent was handled (its fence waited for
    /// that), and what its handlers send there is held until the sync
    /// returns, which needs this process. Nothing can then reach this
    /// process in this superstep. Processes that all wait for counters
    /// (none in its sync) are not detected: one may still be computing
    /// before it sends; the run's deadline ends that wait.
    pub(crate) fn am_pause_counter(
        &self,
        mark: u64,
        started: &mut Option<std::time::Instant>,
        watch: &mut Option<u64>,
        short: (i64, i64),
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let ended = |q: usize| self.world.board().get(q).1 == crate::engine::board::State::Ended;
        // Every other process ended (as this process's board shows):
        // `am_pause` says so.
        let all_ended = (0..self.nprocs).all(|q| q == self.pid || ended(q));
        if let (Some(ctx), false) = (self.ext.am().ctx.as_ref(), all_ended) {
            let now = self.world.am_mark(self.pid);
            if ctx.outstanding() || now != mark {
                *watch = None;
            } else if *watch != Some(now) {
                *watch = Some(now);
            } else if self.world.others_fenced(self.pid, self.superstep) == Some(true) {
                let (value, n) = short;
                return Err(self.fail(
                    ErrorKind::AmMismatch {
                        detail: format!(
                            "waits for a counter to reach {n} (it is {value}) that can never \
                             move: nothing of this process's is in flight, and every other \
                             process has ended or waits in its sync with nothing in flight \
                             (what its handlers send there is held until the sync returns)"
                        ),
                    },
                    call,
                    loc,
                ));
            }
        }
        self.am_pause(mark, started, call, loc)
    }

    /// Barrier A of a sync in active-message mode: dispatches while it
    /// waits; completion handlers' sends are held until the sync returns.
    pub(crate) fn am_barrier(
        &mut self,
        flags: u32,
        call: &'static str,
        loc: Loc,
    ) -> Result<u32, Error> {
        let Some(mut ctx) = self.ext.am_mut().ctx.take() else {
            return self
                .world
                .barrier(&mut self.episode, flags)
                .map_err(|why| self.interrupted(why, call, loc));
        };
        ctx.in_barrier = true;
        ctx.superstep = self.superstep;
        let world = self.world.clone();
        // Past the fence: nothing of ours in flight, our handlers' sends
        // held. A counter wait elsewhere reads this (`am_pause_counter`).
        world.set_fenced(self.pid, Some(self.superstep));
        let (name, superstep) = (self.call_name(call), self.superstep);
        ctx.site = (name, loc);
        let mut failure: Option<Dispatch> = None;
        let serve = self.ext.am().serve;
        let (slots, reg) = (&mut self.ext, &self.reg);
        let done = world.barrier_polling(&mut self.episode, flags, self.pid, &mut || {
            if failure.is_some() {
                return false;
            }
            let served = ctx.dispatch(&world, true).and_then(|()| match serve {
                Some(serve) => serve(&mut ctx, slots, reg, &world),
                None => Ok(()),
            });
            if let Err(d) = served {
                if let Dispatch::Target(kind) = &d {
                    // Stop the others now: they may be waiting for us.
                    let err = Error::new(kind.clone(), name, ctx.pid, superstep, loc);
                    world.fail_in_barrier(err);
                }
                failure = Some(d);
                return false;
            }
            // Acknowledgements waiting for room in an inbox: poll again.
            ctx.backlogged()
        });
        ctx.in_barrier = false;
        world.set_fenced(self.pid, None);
        let panicked = ctx.panicked.take();
        self.ext.am_mut().ctx = Some(ctx);
        if let Some(panic) = panicked {
            // A handler panicked while we waited: the run has failed and
            // the barrier completed (its poll returned at once since). The
            // sync does its part of what follows (`leave_after_panic`),
            // fails, and resumes the panic.
            self.caught = Some(panic);
            return done.map_err(|why| self.interrupted(why, call, loc));
        }
        if let Some(d) = failure {
            return Err(self.dispatch_error(d, call, loc));
        }
        done.map_err(|why| self.interrupted(why, call, loc))
    }

    /// After a sync: sends what completion handlers sent during it.
    pub(crate) fn am_release_held(&mut self, call: &'static str, loc: Loc) -> Result<(), Error> {
        let Some(mut ctx) = self.ext.am_mut().ctx.take() else {
            return Ok(());
        };
        ctx.epoch = self.superstep;
        let held = std::mem::take(&mut ctx.held);
        let mut r = Ok(());
        for out in held {
            if let Err(why) = ctx.send(&self.world, out) {
                r = Err(why);
                break;
            }
        }
        self.ext.am_mut().ctx = Some(ctx);
        r.map_err(|why| self.interrupted(why, call, loc))
    }
}

impl Am<'_> {
    /// Waits until `counter` reaches `n`, handling the messages that
    /// arrive meanwhile (a progress point), then subtracts `n` (LAPI's
    /// `LAPI_Waitcntr`).
    ///
    /// # Errors
    ///
    /// Errors found handling messages; [`ErrorKind::AmMismatch`] outside
    /// active-message mode or for a counter of another process; the run
    /// stopped, or its deadline passed, while waiting.
    #[track_caller]
    pub fn wait_counter(&mut self, counter: &Counter, n: u64) -> Result<(), Error> {
        const CALL: &str = "am_wait_counter";
        let loc = Some(SourceLocation::caller());
        let mut p = self.bsp.process();
        p.check_running(CALL, loc)?;
        if !p.ext.am_mut().ctx.as_ref().is_some_and(|c| c.mine(counter)) {
            return Err(not_active(&p, CALL, loc));
        }
        let (mut started, mut watch) = (None, None);
        loop {
            let mark = p.world.am_mark(p.pid);
            p.am_dispatch(CALL, loc)?;
            let v = counter.get();
            if v >= n {
                counter.set(v - n);
                return Ok(());
            }
            let short = (v as i64, n as i64);
            p.am_pause_counter(mark, &mut started, &mut watch, short, CALL, loc)?;
        }
    }

    /// Handles the messages that have arrived, without waiting (LAPI's
    /// `LAPI_Probe`): a progress point for a process that computes long
    /// between library calls.
    ///
    /// # Errors
    ///
    /// Errors found handling them; [`ErrorKind::AmMismatch`] outside
    /// active-message mode.
    #[track_caller]
    pub fn poll(&mut self) -> Result<(), Error> {
        const CALL: &str = "am_poll";
        let loc = Some(SourceLocation::caller());
        let mut p = self.bsp.process();
        p.check_running(CALL, loc)?;
        if !p.am_active() {
            return Err(not_active(&p, CALL, loc));
        }
        p.am_dispatch(CALL, loc)
    }

    /// Waits, handling what arrives, until every message this process sent
    /// has been handled by its target (LAPI's `LAPI_Fence`).
    ///
    /// # Errors
    ///
    /// As for [`wait_counter`](Am::wait_counter).
    #[track_caller]
    pub fn fence(&mut self) -> Result<(), Error> {
        const CALL: &str = "am_fence";
        let loc = Some(SourceLocation::caller());
        let mut p = self.bsp.process();
        p.check_running(CALL, loc)?;
        if !p.am_active() {
            return Err(not_active(&p, CALL, loc));
        }
        p.am_fence(CALL, loc)
    }
}
