//! Post/start/complete/wait: the post and completion counters in each
//! process's block, the post, start, complete and wait that count them,
//! and the wait for counts, which watches the run.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use bytemuck::Pod;

use super::{Mem, Window, HEADER};
use crate::engine::window::{futex_wait, futex_wake};
use crate::engine::Interrupt;
use crate::error::{Error, ErrorKind};
use crate::process::{Loc, Process};

impl<T: Pod> Window<T> {
    /// Counter `which` (0: posts, 1: dones) of process `from` in `pid`'s
    /// block (shared memory engines).
    fn counter(&self, pid: usize, which: usize, from: usize) -> &AtomicU64 {
        let n = self.lens.len();
        match &self.mem {
            // SAFETY: the counters lie between the lock word's line and
            // the data ([`header`]), 8-byte aligned, in memory the run
            // keeps mapped while this handle lives; only ever accessed
            // atomically.
            Mem::Shared { heads, .. } => unsafe {
                &*std::ptr::with_exposed_provenance::<AtomicU64>(
                    heads[pid] + HEADER + 8 * (which * n + from),
                )
            },
            #[cfg(feature = "mpi")]
            Mem::Mpi(_) => unreachable!("mpi windows count epochs in MPI"),
        }
    }

    /// `pid`'s bell and its count of sleepers, beside its lock word
    /// (shared memory engines).
    fn bell(&self, pid: usize) -> (&AtomicU32, &AtomicU32) {
        match &self.mem {
            // SAFETY: bytes 8..16 of the block's first line, 4-byte
            // aligned, in memory the run keeps mapped while this handle
            // lives; only ever accessed atomically.
            Mem::Shared { heads, .. } => unsafe {
                (
                    &*std::ptr::with_exposed_provenance::<AtomicU32>(heads[pid] + 8),
                    &*std::ptr::with_exposed_provenance::<AtomicU32>(heads[pid] + 12),
                )
            },
            #[cfg(feature = "mpi")]
            Mem::Mpi(_) => unreachable!("mpi windows count epochs in MPI"),
        }
    }

    /// Adds one to counter `which` of this process in `pid`'s block and
    /// wakes `pid` if it sleeps on its bell.
    fn count(
        &self,
        p: &Process,
        pid: usize,
        which: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.count_raw(pid, which)
            .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc))?;
        // In active-message mode `pid` may wait on its inbox's bell
        // (`await_counts`): ring that too (shared memory).
        if p.ext.am().ctx.is_some() && pid != p.pid && self.world.rendezvous().is_none() {
            self.world.notify(pid, crate::engine::AM_BELL);
        }
        Ok(())
    }

    /// [`count`](Window::count), MPI's failure as its words.
    pub(super) fn count_raw(&self, pid: usize, which: usize) -> Result<(), String> {
        let from = self.owner.1;
        match &self.mem {
            Mem::Shared { .. } => {
                self.counter(pid, which, from)
                    .fetch_add(1, Ordering::Release);
                let (bell, sleepers) = self.bell(pid);
                bell.fetch_add(1, Ordering::SeqCst);
                if sleepers.load(Ordering::SeqCst) > 0 {
                    futex_wake(bell);
                }
                Ok(())
            }
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => win.count(pid, which, from, self.lens.len()),
        }
    }

    /// Counter `which` of process `from` in this process's own block.
    fn read_count(
        &self,
        p: &Process,
        which: usize,
        from: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<u64, Error> {
        self.read_count_raw(which, from)
            .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc))
    }

    /// [`read_count`](Window::read_count), MPI's failure as its words.
    pub(super) fn read_count_raw(&self, which: usize, from: usize) -> Result<u64, String> {
        match &self.mem {
            Mem::Shared { .. } => Ok(self
                .counter(self.owner.1, which, from)
                .load(Ordering::Acquire)),
            // 32 bits on `mpi`: widened by the epochs counted locally
            // (`started`, `waited` never run more than one epoch ahead of a
            // counter, so the high bits are theirs).
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => {
                let low = win.counter(self.owner.1, which, from, self.lens.len())?;
                let seen = if which == 0 {
                    self.started.borrow()[from]
                } else {
                    self.waited.borrow()[from]
                };
                Ok(seen + u64::from(low.wrapping_sub(seen as u32)))
            }
        }
    }

    /// Waits until every `(q, which, want)` of `awaited` has counter
    /// `which` of `q` in this process's block at `want` or more. Fails
    /// when the run stops, at its deadline, or when some `q` ended or
    /// waits in the sync of this superstep (it can then never count: seen
    /// on the status board of `threads` and `processes`), naming `what`
    /// it did not do.
    ///
    /// In active-message or one-sided mode it also serves what arrives
    /// (instead of sleeping on the bell): a process that waits here may be
    /// the target of an area's lock epoch whose holder waits for its
    /// answer before it can count (every caller holds the handle
    /// mutably, or is the C interface: no view of an area is alive).
    fn await_counts(
        &self,
        p: &mut Process,
        awaited: &[(usize, usize, u64)],
        what: &str,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let done = |p: &Process| -> Result<bool, Error> {
            for &(q, which, want) in awaited {
                if self.read_count(p, which, q, call, loc)? < want {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        let mut tries = 0u32;
        let mut since: Option<std::time::Instant> = None;
        let mut suspect: Option<(usize, std::time::Instant)> = None;
        while !done(p)? {
            tries += 1;
            if tries < self.spins {
                std::hint::spin_loop();
                continue;
            }
            if tries < self.spins + 16 {
                std::thread::yield_now();
                continue;
            }
            match &self.mem {
                _ if p.ext.am_mut().ctx.is_some() => {
                    // Serve, then sleep on the inbox's bell, which a
                    // record and (on shared memory) a count ring; on
                    // `mpi` counts ring nothing: a yield.
                    let mark = self.world.am_mark(p.pid);
                    p.am_dispatch(call, loc)?;
                    if !done(p)? {
                        if self.world.rendezvous().is_none() {
                            self.world
                                .am_wait(p.pid, mark)
                                .map_err(|why| p.interrupted(why, call, loc))?;
                        } else {
                            std::thread::yield_now();
                        }
                    }
                }
                Mem::Shared { .. } => {
                    // Sleep until a count rings the bell (the counters
                    // awaited are in this process's own block, whose bell
                    // every count rings; no wake-up is lost: a count after
                    // our look at the bell changes it, and the futex does
                    // not sleep then), or 50 ms, to look at the run.
                    let (bell, sleepers) = self.bell(p.pid);
                    let seen = bell.load(Ordering::SeqCst);
                    sleepers.fetch_add(1, Ordering::SeqCst);
                    if !done(p)? {
                        futex_wait(bell, seen, std::time::Duration::from_millis(50));
                    }
                    sleepers.fetch_sub(1, Ordering::SeqCst);
                }
                // Counts come by MPI's one-sided operations: poll them.
                #[cfg(feature = "mpi")]
                Mem::Mpi(_) => std::thread::yield_now(),
            }
            if self.world.poll_stopped() {
                return Err(p.stopped(call, loc));
            }
            let t0 = *since.get_or_insert_with(std::time::Instant::now);
            if self.world.deadline().is_some_and(|d| t0.elapsed() > d) {
                return Err(p.interrupted(Interrupt::Deadline, call, loc));
            }
            let mut now = None;
            for &(q, which, want) in awaited {
                if self.read_count(p, which, q, call, loc)? >= want {
                    continue;
                }
                let Some((step, state)) = self.world.peer_state(q) else {
                    break;
                };
                if state == crate::engine::board::State::Ended {
                    now = Some((q, "ended"));
                    break;
                }
                if state == crate::engine::board::State::Syncing
                    && step == p.superstep & ((1 << 30) - 1)
                {
                    now = now.or(Some((q, "entered its sync")));
                }
            }
            // A process seen in its sync (or ended) may have counted just
            // before: the board is written without ordering, so a grace
            // period before the verdict.
            suspect = match (now, suspect) {
                (Some((q, did)), Some((s, t))) if q == s => {
                    if t.elapsed() > std::time::Duration::from_millis(100) && !done(p)? {
                        return Err(p.fail(
                            ErrorKind::EpochUnmatched {
                                detail: format!("process {q} {did} without {what}"),
                            },
                            call,
                            loc,
                        ));
                    }
                    Some((s, t))
                }
                (Some((q, _)), _) => Some((q, std::time::Instant::now())),
                (None, _) => None,
            };
        }
        Ok(())
    }

    /// Posts an exposure epoch to `origins` (sorted, distinct): one
    /// count in each origin's block.
    pub(super) fn ep_post(
        &self,
        p: &Process,
        origins: &[usize],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        for &o in origins {
            self.count(p, o, 0, call, loc)?;
        }
        Ok(())
    }

    /// Starts an access epoch on `targets` (sorted, distinct): waits
    /// until each posted to this process.
    pub(super) fn ep_start(
        &self,
        p: &mut Process,
        targets: &[usize],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let awaited: Vec<(usize, usize, u64)> = {
            let started = self.started.borrow();
            targets.iter().map(|&t| (t, 0, started[t] + 1)).collect()
        };
        self.await_counts(
            p,
            &awaited,
            "posting an exposure epoch to this process (a start to a process that never posts)",
            call,
            loc,
        )?;
        let mut started = self.started.borrow_mut();
        for &t in targets {
            started[t] += 1;
        }
        Ok(())
    }

    /// Completes the access epoch on `targets`: one count in each
    /// target's block (every transfer of the epoch is complete already:
    /// each released its target's lock).
    pub(super) fn ep_complete(
        &self,
        p: &Process,
        targets: &[usize],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        for &t in targets {
            self.count(p, t, 1, call, loc)?;
        }
        Ok(())
    }

    /// Waits (`block`) or looks whether every one of `origins` completed
    /// the exposure epoch; true (and the epoch closed) when they did.
    pub(super) fn ep_wait(
        &self,
        p: &mut Process,
        origins: &[usize],
        block: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<bool, Error> {
        if self.world.poll_stopped() {
            return Err(p.stopped(call, loc));
        }
        let awaited: Vec<(usize, usize, u64)> = {
            let waited = self.waited.borrow();
            origins.iter().map(|&o| (o, 1, waited[o] + 1)).collect()
        };
        if block {
            // Nothing another process could wait for is held meanwhile.
            p.held_refuses(p.holds.check_wait(None), call, loc)?;
            self.await_counts(
                p,
                &awaited,
                "completing the access epoch this process's exposure epoch admits it to",
                call,
                loc,
            )?;
        } else {
            for &(o, which, want) in &awaited {
                if self.read_count(p, which, o, call, loc)? < want {
                    return Ok(false);
                }
            }
        }
        let mut waited = self.waited.borrow_mut();
        for &o in origins {
            waited[o] += 1;
        }
        Ok(true)
    }
}
