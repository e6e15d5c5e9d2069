//! What every epoch call shares: its checks (one-sided mode, the slot,
//! the group), the control line of a slot, and the wait loop that serves
//! what arrives until the call's condition holds.

use super::{Awaited, Epochs};
use crate::engine::board::State;
use crate::error::{Error, ErrorKind};
use crate::process::{Loc, Process};
use crate::window::Window;

impl Process {
    pub(super) fn rma_mode(&self, call: &'static str, loc: Loc) -> Result<(), Error> {
        if self.ext.am().ctx.is_some() {
            return Ok(());
        }
        Err(self.fail(
            ErrorKind::NoEpoch {
                detail: "not in one-sided mode (bsp.rma().init() / bsp_rma_init first, or \
                         bsp.am().init() / LAPI_Init)"
                    .into(),
            },
            call,
            loc,
        ))
    }

    pub(super) fn rma_slot(&self, addr: usize, call: &'static str, loc: Loc) -> Result<u64, Error> {
        match self.reg.lookup(addr) {
            Some(s) => Ok(s.seq()),
            None => Err(self.fail(ErrorKind::NotRegistered { addr }, call, loc)),
        }
    }

    pub(super) fn rma_group(
        &self,
        pids: &[i64],
        call: &'static str,
        loc: Loc,
    ) -> Result<Vec<usize>, Error> {
        let mut out = Vec::with_capacity(pids.len());
        for &q in pids {
            out.push(self.check_pid(q, call, loc)?);
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Handles what arrives until `done`, watching `watch` for processes
    /// that can never answer (on shared memory, where the status board
    /// shows every process).
    pub(super) fn rma_progress(
        &mut self,
        watch: impl Fn(&Epochs) -> Vec<usize>,
        awaited: Awaited,
        call: &'static str,
        loc: Loc,
        mut done: impl FnMut(&Epochs) -> Result<bool, String>,
    ) -> Result<(), Error> {
        let transport = |p: &Process, detail| p.fail(ErrorKind::Transport { detail }, call, loc);
        self.rma_flush(call, loc)?;
        if done(self.ext.epochs()).map_err(|d| transport(self, d))? {
            return Ok(());
        }
        let mut started = None;
        let mut suspect: Option<(usize, std::time::Instant)> = None;
        let mut watched: Option<Vec<usize>> = None;
        loop {
            let mark = self.world.am_mark(self.pid);
            self.am_dispatch(call, loc)?;
            if done(self.ext.epochs()).map_err(|d| transport(self, d))? {
                return Ok(());
            }
            // The status board: shared memory, or on `mpi` the board of
            // one-sided mode (`rma_board`); none under LAPI's `am_init`
            // on `mpi` (then the run's deadline ends the wait).
            if self.world.peer_state(self.pid).is_some() {
                let mut now_suspect = None;
                let watch = watched.get_or_insert_with(|| watch(self.ext.epochs()));
                for &q in watch.iter().filter(|&&q| q != self.pid) {
                    let Some((step, state)) = self.world.peer_state(q) else {
                        break;
                    };
                    if state == State::Ended {
                        return Err(self.unmatched(q, awaited, "ended", call, loc));
                    }
                    if matches!(awaited, Awaited::Post | Awaited::Complete)
                        && state == State::Syncing
                        && step == self.superstep & ((1 << 30) - 1)
                    {
                        now_suspect = Some(q);
                    }
                }
                // A process seen in its sync may have posted just before:
                // the record is surely here after one more dispatch and a
                // grace period (the board is written without ordering).
                suspect = match (now_suspect, suspect) {
                    (Some(q), Some((s, t0))) if q == s => {
                        if t0.elapsed() > std::time::Duration::from_millis(100) {
                            return Err(self.unmatched(q, awaited, "entered its sync", call, loc));
                        }
                        Some((s, t0))
                    }
                    (Some(q), _) => Some((q, std::time::Instant::now())),
                    (None, _) => None,
                };
            }
            // A lock word's release rings no bell; a post rings the
            // origin's bell on shared memory, not on `mpi`.
            let sleep = match awaited {
                Awaited::Lock => false,
                Awaited::Post => self.world.rendezvous().is_none(),
                Awaited::Complete | Awaited::Answer => true,
            };
            self.am_pause_or_yield(mark, &mut started, sleep, call, loc)?;
        }
    }

    pub(super) fn unmatched(
        &self,
        q: usize,
        awaited: Awaited,
        did: &str,
        call: &'static str,
        loc: Loc,
    ) -> Error {
        let what = match awaited {
            Awaited::Post => {
                "posting an exposure epoch to this process (a start to a process that never posts)"
            }
            Awaited::Complete => {
                "completing the access epoch this process's exposure epoch admits it to"
            }
            Awaited::Answer => "answering this process's unlock or get",
            Awaited::Lock => "taking part in the lock epoch this process waits to open on it",
        };
        self.fail(
            ErrorKind::EpochUnmatched {
                detail: format!("process {q} {did} without {what}"),
            },
            call,
            loc,
        )
    }

    /// The control line of `slot` (its lock word and post counters:
    /// `window/control.rs`), made on its first use here.
    pub(super) fn rma_line(
        &mut self,
        slot: u64,
        call: &'static str,
        loc: Loc,
    ) -> Result<u64, Error> {
        let Some(line) = self.reg.line(slot) else {
            let detail = format!("registration slot {slot} is not live");
            return Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc));
        };
        if !self.ext.epochs_mut().lines.contains_key(&line) {
            let w = Window::control_line(self, line).map_err(|kind| self.fail(kind, call, loc))?;
            self.ext.epochs_mut().lines.insert(line, w);
        }
        Ok(line)
    }
}
