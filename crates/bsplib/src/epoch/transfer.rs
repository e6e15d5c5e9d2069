//! The transfers of an epoch: whether a put, get or accumulate belongs to
//! an open epoch, and the records that carry them (puts and gets in
//! pieces, accumulates checked for one operator and type per epoch).

use super::record::{ACC, CHUNK, GET, PUT, UNDER_LOCK};
use super::PendingGet;
use crate::error::{Error, ErrorKind};
use crate::process::{Keepalive, Loc, Process};
use crate::rma::{ElemType, Op};

impl Process {
    /// Whether a transfer to `pid`'s `slot` belongs to an open epoch of
    /// this process (a lock of it, or an access epoch of the slot naming
    /// `pid`); an access epoch of the slot not naming `pid` is an error.
    pub(crate) fn epoch_route(
        &self,
        pid: usize,
        slot: u64,
        call: &'static str,
        loc: Loc,
    ) -> Result<bool, Error> {
        if self
            .ext
            .epochs()
            .locks
            .iter()
            .any(|h| h.pid == pid && h.slot == slot)
        {
            return Ok(true);
        }
        match self.ext.epochs().access.iter().find(|a| a.slot == slot) {
            None => Ok(false),
            Some(a) if a.targets.contains(&pid) => Ok(true),
            Some(a) => {
                let detail = format!(
                    "a transfer to process {pid} in the access epoch of registration slot {slot} \
                     started{} to processes {:?}",
                    a.loc.map_or(String::new(), |l| format!(" at {l}")),
                    a.targets
                );
                Err(self.fail(ErrorKind::NoEpoch { detail }, call, loc))
            }
        }
    }

    /// [`UNDER_LOCK`] if a transfer to `pid`'s `slot` belongs to a lock
    /// epoch of this process, else 0 (an access epoch).
    pub(super) fn under_lock(&self, pid: usize, slot: u64) -> u64 {
        let locked = self
            .ext
            .epochs()
            .locks
            .iter()
            .any(|h| h.pid == pid && h.slot == slot);
        if locked {
            UNDER_LOCK
        } else {
            0
        }
    }

    /// A put of an epoch: sent now, in pieces.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn epoch_put(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        src: *const u8,
        nbytes: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        let data = unsafe { std::slice::from_raw_parts(src, nbytes) };
        let tagged = slot | self.under_lock(pid, slot);
        for (k, piece) in data.chunks(CHUNK).enumerate() {
            let at = (offset + k * CHUNK) as u64;
            let line = loc.map_or(0, |l| u64::from(l.line()));
            let words = [tagged, at, piece.len() as u64, line];
            self.rma_send(pid, PUT, &words, piece, call, loc)?;
        }
        Ok(())
    }

    /// A get of an epoch: requested now, delivered by `complete` or
    /// `unlock`.
    ///
    /// # Safety
    ///
    /// `dst` must be writable for `nbytes` bytes until the epoch closes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn epoch_get(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        dst: *mut u8,
        nbytes: usize,
        keep: Option<Keepalive>,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let flag = self.under_lock(pid, slot);
        let mut done = 0;
        while done < nbytes {
            let n = CHUNK.min(nbytes - done);
            let id = self.ext.epochs_mut().next_id;
            self.ext.epochs_mut().next_id += 1;
            self.ext.epochs_mut().gets.insert(
                id,
                PendingGet {
                    dst: dst.wrapping_add(done).expose_provenance(),
                    len: n,
                    pid,
                    slot,
                    _keep: keep.clone(),
                },
            );
            let words = [slot | flag, (offset + done) as u64, n as u64, id];
            self.rma_send(pid, GET, &words, &[], call, loc)?;
            done += n;
        }
        Ok(())
    }

    /// An accumulate of an epoch: one operator and type per target area
    /// and epoch (checked here for this origin, by the target across
    /// origins of an exposure epoch).
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn epoch_accumulate(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        src: *const u8,
        nbytes: usize,
        ty: ElemType,
        op: Op,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let desc = ty as u16 | (op as u16) << 8;
        let first = if let Some(h) = self
            .ext
            .epochs_mut()
            .locks
            .iter_mut()
            .find(|h| h.pid == pid && h.slot == slot)
        {
            *h.acc.get_or_insert((desc, loc))
        } else if let Some(a) = self
            .ext
            .epochs_mut()
            .access
            .iter_mut()
            .find(|a| a.slot == slot)
        {
            match a.accs.iter().find(|(q, _, _)| *q == pid) {
                Some(&(_, d, l)) => (d, l),
                None => {
                    a.accs.push((pid, desc, loc));
                    (desc, loc)
                }
            }
        } else {
            (desc, loc)
        };
        if first.0 != desc {
            let detail = format!(
                "this call accumulates with {} into registration slot {slot} of process {pid}, \
                 into which this process accumulated with {} earlier in this epoch{}",
                crate::rma::describe(desc),
                crate::rma::describe(first.0),
                first.1.map_or(String::new(), |l| format!(" (at {l})")),
            );
            return Err(self.fail(ErrorKind::AccumulateMismatch { detail }, call, loc));
        }
        // SAFETY: the caller's contract.
        let data = unsafe { std::slice::from_raw_parts(src, nbytes) };
        let tagged = slot | self.under_lock(pid, slot);
        self.send_acc(pid, ACC, tagged, offset, data, ty, desc, call, loc)
    }
}
