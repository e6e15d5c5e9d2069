//! The target's side of post/start/complete/wait: `post` opens an
//! exposure epoch, `wait` and `test` close it once every origin completed,
//! combining its accumulates in pid order.

use super::serve::{apply_acc, check_acc, conflict, note_wrote};
use super::{Awaited, Epochs, Exposure};
use crate::am::Dispatch;
use crate::error::{Error, ErrorKind};
use crate::holds::{area_key, Held as Counted};
use crate::process::{Loc, Process};

impl Process {
    /// `bsp_win_post`: exposes the area registered at `addr` to `origins`.
    pub(crate) fn rma_post(
        &mut self,
        addr: usize,
        origins: &[i64],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        let origins = self.rma_group(origins, call, loc)?;
        if let Some(e) = self
            .ext
            .epochs_mut()
            .exposures
            .iter()
            .find(|e| e.slot == slot)
        {
            let detail = format!(
                "a second post of registration slot {slot}, whose exposure epoch posted{} is \
                 not waited for",
                e.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        if let Some(h) = self
            .ext
            .epochs_mut()
            .locks
            .iter()
            .find(|h| h.slot == slot && h.pid == self.pid)
        {
            let detail = format!(
                "a post of registration slot {slot}, whose lock this process took{} is held \
                 (MPI: an area locked and exposed at once is erroneous; unlock it first)",
                h.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        let line = self.rma_line(slot, call, loc)?;
        let writes = self.checking().then(Vec::new);
        self.ext.epochs_mut().exposures.push(Exposure {
            slot,
            done: vec![false; origins.len()],
            origins: origins.clone(),
            accs: Vec::new(),
            first: None,
            loc,
            writes,
        });
        let counted = Counted::Exposure {
            win: area_key(slot),
            origins: origins.clone(),
        };
        self.holds.open(counted, call, loc);
        // Exposed before any origin can know it (it starts on the count).
        let shared = self.world.rendezvous().is_none();
        for q in origins {
            let posted = self.ext.epochs_mut().lines[&line].post_to(q);
            posted.map_err(|detail| self.fail(ErrorKind::Transport { detail }, call, loc))?;
            if shared && q != self.pid {
                // Wakes its start if it sleeps waiting for records.
                self.world.notify(q, crate::engine::AM_BELL);
            }
        }
        self.rma_flush(call, loc)
    }

    /// `bsp_win_wait` (`block`) and `bsp_win_test`: whether the exposure
    /// epoch of the area at `addr` is over (every origin completed); when
    /// it is, its accumulates are combined (origins in pid order, each
    /// origin's in issue order) and the epoch is closed.
    pub(crate) fn rma_wait(
        &mut self,
        addr: usize,
        block: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<bool, Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        if !self
            .ext
            .epochs_mut()
            .exposures
            .iter()
            .any(|e| e.slot == slot)
        {
            let detail = format!("wait or test of registration slot {slot} without a post");
            return Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc));
        }
        let origins = |ep: &Epochs| {
            ep.exposures
                .iter()
                .find(|e| e.slot == slot)
                .map_or(Vec::new(), |e| e.origins.clone())
        };
        let over = |ep: &Epochs| {
            ep.exposures
                .iter()
                .find(|e| e.slot == slot)
                .is_some_and(|e| e.done.iter().all(|&d| d))
        };
        if block {
            self.held_refuses(self.holds.check_wait(None), call, loc)?;
            self.rma_progress(origins, Awaited::Complete, call, loc, |ep| Ok(over(ep)))?;
        } else {
            self.rma_flush(call, loc)?;
            self.am_dispatch(call, loc)?;
            if !over(self.ext.epochs()) {
                return Ok(false);
            }
        }
        let i = self
            .ext
            .epochs_mut()
            .exposures
            .iter()
            .position(|e| e.slot == slot);
        let mut e = self
            .ext
            .epochs_mut()
            .exposures
            .swap_remove(i.unwrap_or_default());
        self.holds.close_epoch(area_key(slot), true);
        if let Some(writes) = e.writes.take() {
            if let Some(kind) = conflict(self.pid, slot, writes) {
                return Err(self.fail(kind, call, loc));
            }
        }
        e.accs.sort_by_key(|(from, _)| *from);
        if !e.accs.is_empty() {
            note_wrote(self.ext.epochs_mut(), slot);
        }
        for (from, rec) in &e.accs {
            let w = |i: usize| {
                u64::from_ne_bytes(rec[16 + 8 * i..24 + 8 * i].try_into().unwrap_or_default())
            };
            let (offset, n, d) = (w(1) as usize, w(2) as usize, w(3));
            let applied = check_acc(*from, d, n).and_then(|(ty, op)| {
                apply_acc(&self.reg, *from, slot, offset, n, ty, op, &rec[48..48 + n])
            });
            if let Err(d) = applied {
                return Err(match d {
                    Dispatch::Target(kind) => self.fail(kind, call, loc),
                    Dispatch::Interrupted(why) => self.interrupted(why, call, loc),
                });
            }
        }
        Ok(true)
    }
}
