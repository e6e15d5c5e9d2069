//! The origin's side of post/start/complete/wait: `start` opens an access
//! epoch once every target posted, `complete` ends it.

use super::record::COMPLETE;
use super::{Access, Awaited, Epochs};
use crate::error::{Error, ErrorKind};
use crate::holds::{area_key, Held as Counted};
use crate::process::{Loc, Process};

impl Process {
    /// `bsp_win_start`: opens an access epoch of the area at `addr` to
    /// `targets`, once each has posted.
    pub(crate) fn rma_start(
        &mut self,
        addr: usize,
        targets: &[i64],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        let targets = self.rma_group(targets, call, loc)?;
        if let Some(a) = self.ext.epochs_mut().access.iter().find(|a| a.slot == slot) {
            let detail = format!(
                "a second start on registration slot {slot}, whose access epoch started{} is \
                 not complete",
                a.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        if let Some(h) = self
            .ext
            .epochs_mut()
            .locks
            .iter()
            .find(|h| h.slot == slot && targets.contains(&h.pid))
        {
            let detail = format!(
                "a start on registration slot {slot} to process {}, whose lock of it taken{} is \
                 held (unlock it first: access epochs to one process are disjoint)",
                h.pid,
                h.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        self.held_refuses(self.holds.check_wait(None), call, loc)?;
        let line = self.rma_line(slot, call, loc)?;
        let posted = |ep: &Epochs| -> Result<bool, String> {
            let w = &ep.lines[&line];
            for &t in &targets {
                if !w.posted(t)? {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        self.rma_progress(|_| targets.clone(), Awaited::Post, call, loc, posted)?;
        for &t in &targets {
            self.ext.epochs_mut().lines[&line].start_on(t);
        }
        let counted = Counted::Access {
            win: area_key(slot),
            targets: targets.clone(),
        };
        self.holds.open(counted, call, loc);
        self.ext.epochs_mut().access.push(Access {
            slot,
            targets,
            loc,
            accs: Vec::new(),
        });
        self.rewatch::<super::Epochs>();
        Ok(())
    }

    /// `bsp_win_complete`: ends the access epoch of the area at `addr`:
    /// its gets have delivered, and each target learns it is complete.
    pub(crate) fn rma_complete(
        &mut self,
        addr: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        let Some(i) = self
            .ext
            .epochs_mut()
            .access
            .iter()
            .position(|a| a.slot == slot)
        else {
            let detail = format!("complete of registration slot {slot} without a start");
            return Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc));
        };
        self.held_refuses(self.holds.check_wait(None), call, loc)?;
        let access = self.ext.epochs_mut().access.swap_remove(i);
        self.rewatch::<super::Epochs>();
        self.holds.close_epoch(area_key(slot), false);
        let targets = &access.targets;
        let delivered = |ep: &Epochs| {
            Ok(!ep
                .gets
                .values()
                .any(|g| g.slot == slot && targets.contains(&g.pid)))
        };
        self.rma_progress(|_| targets.clone(), Awaited::Answer, call, loc, delivered)?;
        for &t in &access.targets {
            self.rma_send(t, COMPLETE, &[slot], &[], call, loc)?;
        }
        self.rma_flush(call, loc)
    }
}
