//! The origin's side of passive-target locks: `lock` takes the lock word
//! of the area's control line, `unlock` releases it once the target
//! applied every transfer of the epoch.

use super::record::UNLOCK;
use super::{Awaited, Epochs, Held, LockKind};
use crate::error::{Error, ErrorKind};
use crate::holds::{area_key, Held as Counted};
use crate::process::{Loc, Process};

impl Process {
    /// `bsp_lock`: takes the lock word of the area at `addr` on `pid`
    /// (its control line), serving what arrives while it waits; the
    /// target applies the epoch's transfers as they arrive.
    pub(crate) fn rma_lock(
        &mut self,
        pid: i64,
        addr: usize,
        kind: LockKind,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let pid = self.check_pid(pid, call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        if let Some(h) = self
            .ext
            .epochs_mut()
            .locks
            .iter()
            .find(|h| h.pid == pid && h.slot == slot)
        {
            let detail = format!(
                "a second lock of registration slot {slot} on process {pid}, locked{} and not \
                 unlocked",
                h.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        // MPI: distinct access epochs of one window to one process are
        // disjoint (a lock inside a started epoch to the same target is
        // erroneous).
        if let Some(a) = self
            .ext
            .epochs_mut()
            .access
            .iter()
            .find(|a| a.slot == slot && a.targets.contains(&pid))
        {
            let detail = format!(
                "a lock of registration slot {slot} on process {pid} inside the access epoch \
                 to it started{} (complete it first: access epochs to one process are disjoint)",
                a.loc.map_or(String::new(), |l| format!(" at {l}"))
            );
            return Err(self.fail(ErrorKind::EpochOpen { detail }, call, loc));
        }
        // The lock word of the area's control line, taken as a window's
        // (the owner takes no part); records the owner applies carry the
        // epoch's transfers. Served meanwhile: the holder may wait for
        // this process's answer.
        // One lock at a time, none with a view held (for windows and
        // areas together): nothing another process waits for is held
        // while this one waits.
        let free = self.holds.check_lock(self.pid, area_key(slot), pid);
        self.held_refuses(free, call, loc)?;
        let line = self.rma_line(slot, call, loc)?;
        let exclusive = kind == LockKind::Exclusive;
        let taken = |ep: &Epochs| ep.lines[&line].try_take(pid, exclusive);
        self.rma_progress(|_| vec![pid], Awaited::Lock, call, loc, taken)?;
        let counted = Counted::Lock {
            win: area_key(slot),
            pid,
            exclusive,
        };
        self.holds.open(counted, call, loc);
        self.ext.epochs_mut().locks.push(Held {
            pid,
            slot,
            exclusive,
            unlocking: false,
            loc,
            acc: None,
        });
        self.rewatch::<super::Epochs>();
        Ok(())
    }

    /// `bsp_unlock`: releases the lock of the area at `addr` on `pid`
    /// once every transfer of the epoch is done at the target.
    pub(crate) fn rma_unlock(
        &mut self,
        pid: i64,
        addr: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.rma_mode(call, loc)?;
        let pid = self.check_pid(pid, call, loc)?;
        let slot = self.rma_slot(addr, call, loc)?;
        let Some(h) = self
            .ext
            .epochs_mut()
            .locks
            .iter_mut()
            .find(|h| h.pid == pid && h.slot == slot && !h.unlocking)
        else {
            let detail =
                format!("unlock of registration slot {slot} on process {pid} without a lock");
            return Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc));
        };
        let counted = Counted::Lock {
            win: area_key(slot),
            pid,
            exclusive: h.exclusive,
        };
        let free = self.holds.check_wait(Some(&counted));
        self.held_refuses(free, call, loc)?;
        if let Some(h) = self
            .ext
            .epochs_mut()
            .locks
            .iter_mut()
            .find(|h| h.pid == pid && h.slot == slot && !h.unlocking)
        {
            h.unlocking = true;
        }
        self.rma_send(pid, UNLOCK, &[slot], &[], call, loc)?;
        let done = |ep: &Epochs| {
            Ok(ep
                .locks
                .iter()
                .any(|h| h.pid == pid && h.slot == slot && !h.unlocking))
        };
        self.rma_progress(|_| vec![pid], Awaited::Answer, call, loc, done)?;
        // Every transfer of the epoch is done at `pid`: the next holder
        // sees them.
        let i = self
            .ext
            .epochs_mut()
            .locks
            .iter()
            .position(|h| h.pid == pid && h.slot == slot);
        let h = self
            .ext
            .epochs_mut()
            .locks
            .swap_remove(i.unwrap_or_default());
        self.rewatch::<super::Epochs>();
        self.holds.close(&counted);
        let line = self.rma_line(slot, call, loc)?;
        let released = self.ext.epochs_mut().lines[&line].give_back(pid, h.exclusive);
        released.map_err(|detail| self.fail(ErrorKind::Transport { detail }, call, loc))
    }
}
