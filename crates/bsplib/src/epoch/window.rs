//! A window's epochs in one-sided mode: the accumulates (and, in checking
//! mode, the notes of puts) an origin sends as records, the completions,
//! and what the target takes of them at its `wait`.

use super::record::{WACC, WDONE, WNOTE};
use super::serve::{check_acc, conflict};
use super::{Epochs, WinAcc};
use crate::am::Dispatch;
use crate::error::{Error, ErrorKind};
use crate::process::{Loc, Process};
use crate::rma::{ElemType, Op};

impl Process {
    /// An accumulate of a window's access epoch (window `win`, `data`
    /// whole elements of `ty` for byte `off` of `pid`'s memory, checked by
    /// the caller): records to `pid`, which combines them at its `wait`
    /// in pid order. Needs one-sided mode (the records' path).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn win_accumulate(
        &mut self,
        win: u64,
        pid: usize,
        off: usize,
        data: &[u8],
        ty: ElemType,
        op: Op,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if self.ext.am_mut().ctx.is_none() {
            let detail = "an accumulate in a window's epoch needs one-sided mode (rma_init / \
                          bsp_rma_init): its contributions travel as records, which the \
                          target combines at its wait in pid order (or use a lock)"
                .into();
            return Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc));
        }
        if !op.is_defined_on(ty) {
            return Err(self.fail(
                ErrorKind::AccumulateOperator {
                    op: op.name(),
                    ty: ty.name(),
                },
                call,
                loc,
            ));
        }
        let desc = ty as u16 | (op as u16) << 8;
        self.send_acc(pid, WACC, win, off, data, ty, desc, call, loc)
    }

    /// Checking mode, in one-sided mode: tells `pid` of a put of window
    /// `win`'s access epoch (`n` bytes at byte `off`), for its overlap
    /// check at `wait`.
    pub(crate) fn win_note_put(
        &mut self,
        win: u64,
        pid: usize,
        off: usize,
        n: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if !self.checking() || self.ext.am_mut().ctx.is_none() {
            return Ok(());
        }
        let line = loc.map_or(0, |l| u64::from(l.line()));
        let words = [win, off as u64, n as u64, line];
        self.rma_send(pid, WNOTE, &words, &[], call, loc)
    }

    /// In one-sided mode, tells each of `targets` that this process's
    /// access epoch of window `win` is complete (after its accumulates),
    /// before the window's own count.
    pub(crate) fn win_done(
        &mut self,
        win: u64,
        targets: &[usize],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if self.ext.am_mut().ctx.is_none() {
            return Ok(());
        }
        for &t in targets {
            self.rma_send(t, WDONE, &[win], &[], call, loc)?;
        }
        self.rma_flush(call, loc)
    }

    /// In one-sided mode, whether every one of `origins` told this
    /// process that its access epoch of window `win` is complete; waits
    /// for it if `block` (each origin sent it before counting its
    /// completion, which the caller saw: it is on its way). True outside
    /// one-sided mode.
    pub(crate) fn win_arrived(
        &mut self,
        win: u64,
        origins: &[usize],
        block: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<bool, Error> {
        if self.ext.am_mut().ctx.is_none() {
            return Ok(true);
        }
        let all = |ep: &Epochs| {
            ep.wins
                .get(&win)
                .is_some_and(|a| origins.iter().all(|o| a.done.contains(o)))
        };
        self.rma_flush(call, loc)?;
        let mut started = None;
        loop {
            let mark = self.world.am_mark(self.pid);
            self.am_dispatch(call, loc)?;
            if all(self.ext.epochs()) {
                return Ok(true);
            }
            if !block {
                return Ok(false);
            }
            self.am_pause_or_yield(mark, &mut started, true, call, loc)?;
        }
    }

    /// The accumulates of window `win`'s exposure epoch, origins in pid
    /// order and each origin's in issue order, as `(origin, offset, data,
    /// type, operator)`; forgets what arrived for the epoch.
    /// In checking mode, a put and an accumulate of one byte, or puts of
    /// one byte from two origins, are `OverlappingPuts` (as in an area's
    /// exposure epoch).
    pub(crate) fn win_take(&mut self, win: u64) -> Result<Vec<WinAcc>, Dispatch> {
        let Some(mut a) = self.ext.epochs_mut().wins.remove(&win) else {
            return Ok(Vec::new());
        };
        a.accs.sort_by_key(|(from, _)| *from);
        if self.checking() {
            let mut writes = std::mem::take(&mut a.puts);
            for (from, rec) in &a.accs {
                let w = |i: usize| {
                    u64::from_ne_bytes(rec[16 + 8 * i..24 + 8 * i].try_into().unwrap_or_default())
                };
                writes.push((
                    w(1) as usize,
                    w(2) as usize,
                    *from,
                    true,
                    (w(3) >> 32) as u32,
                ));
            }
            if let Some(kind) = conflict(self.pid, u64::MAX, writes) {
                return Err(Dispatch::Target(kind));
            }
        }
        let mut out = Vec::with_capacity(a.accs.len());
        for (from, rec) in a.accs {
            let w = |i: usize| {
                u64::from_ne_bytes(rec[16 + 8 * i..24 + 8 * i].try_into().unwrap_or_default())
            };
            let (off, n, d) = (w(1) as usize, w(2) as usize, w(3));
            let (ty, op) = check_acc(from, d, n)?;
            out.push(WinAcc {
                off,
                data: rec[48..48 + n].to_vec(),
                ty,
                op,
            });
        }
        Ok(out)
    }
}
