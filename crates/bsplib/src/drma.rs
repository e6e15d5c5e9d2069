//! Direct remote memory access: registration, put, get and their
//! unbuffered variants. Checks happen here, once, for every front door.

use crate::engine::{DESCRIPTOR, MIN_LARGE};
use crate::error::{Error, ErrorKind};
use crate::mailbox::{HpPut, DATA, GET, HPPUT, LARGE, REG};
use crate::process::{GetReq, Keepalive, Loc, Process};
use crate::registration::{RegOp, RegOpKind};

impl Process {
    /// `bsp_push_reg(addr, size)`; `addr == 0` registers `NULL`.
    pub(crate) fn push_reg(
        &mut self,
        addr: usize,
        size: i64,
        keep: Option<Keepalive>,
        loc: Loc,
    ) -> Result<(), Error> {
        const CALL: &str = "bsp_push_reg";
        self.check_running(CALL, loc)?;
        let size = self.check_nonneg(size, "size", CALL, loc)?;
        self.reg.note_push(addr, &mut self.pending_regs);
        self.out().reg_ops.push(RegOp {
            kind: RegOpKind::Push { addr, size },
            location: loc,
        });
        self.pending_keep.push(keep);
        self.flags |= REG;
        Ok(())
    }

    /// `bsp_pop_reg(addr)`.
    pub(crate) fn pop_reg(&mut self, addr: usize, loc: Loc) -> Result<(), Error> {
        self.check_running("bsp_pop_reg", loc)?;
        let claim = self.reg.claim(addr, &mut self.pending_regs);
        self.out().reg_ops.push(RegOp {
            kind: RegOpKind::Pop { addr, claim },
            location: loc,
        });
        self.flags |= REG;
        Ok(())
    }

    /// Resolves the local registered address `local` to its registration
    /// slot, checking that `offset + nbytes` lies inside the area `pid`
    /// registered in it: the slot number to put in the record. (The owner
    /// checks the record again: it trusts no sender.)
    #[inline]
    fn resolve(
        &self,
        pid: usize,
        local: usize,
        offset: usize,
        nbytes: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<u64, Error> {
        let Some(slot) = self.reg.lookup(local) else {
            return Err(self.fail(ErrorKind::NotRegistered { addr: local }, call, loc));
        };
        let remote = slot.entry(pid);
        if remote.addr == 0 {
            return Err(self.fail(ErrorKind::RemoteNull { remote: pid }, call, loc));
        }
        match offset.checked_add(nbytes) {
            Some(end) if end <= remote.size => Ok(slot.seq()),
            _ => Err(self.fail(
                ErrorKind::OutOfBounds {
                    remote: pid,
                    offset,
                    nbytes,
                    extent: remote.size,
                },
                call,
                loc,
            )),
        }
    }

    /// Checks the common arguments of a transfer; `None` for a transfer of
    /// zero bytes, which does nothing.
    #[inline]
    fn transfer_args(
        &self,
        pid: i64,
        offset: i64,
        nbytes: i64,
        call: &'static str,
        loc: Loc,
    ) -> Result<Option<(usize, usize, usize)>, Error> {
        self.check_running(call, loc)?;
        let pid = self.check_pid(pid, call, loc)?;
        let offset = self.check_nonneg(offset, "offset", call, loc)?;
        let nbytes = self.check_nonneg(nbytes, "nbytes", call, loc)?;
        Ok((nbytes != 0).then_some((pid, offset, nbytes)))
    }

    /// `bsp_put`: copies the source now, writes it at the sync.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    pub(crate) unsafe fn put(
        &mut self,
        pid: i64,
        src: *const u8,
        dst: usize,
        offset: i64,
        nbytes: i64,
        loc: Loc,
    ) -> Result<(), Error> {
        const CALL: &str = "bsp_put";
        let Some((pid, offset, nbytes)) = self.transfer_args(pid, offset, nbytes, CALL, loc)?
        else {
            return Ok(());
        };
        self.check_pointer(src, nbytes, "src", CALL, loc)?;
        let slot = self.resolve(pid, dst, offset, nbytes, CALL, loc)?;
        // SAFETY: the caller guarantees `src` is readable for `nbytes`.
        unsafe { self.push_put(pid, slot, offset, src, nbytes, CALL, loc) }
    }

    /// Appends a put record `[slot][offset][len][payload]` for `pid`.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn push_put(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        src: *const u8,
        nbytes: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if nbytes >= MIN_LARGE {
            // SAFETY: the caller guarantees `src` is readable for `nbytes`;
            // it is copied now.
            let large = unsafe { self.push_large(pid, slot, offset, src, nbytes, true, call, loc) };
            if let Some(done) = large {
                return done;
            }
        }
        self.dest(pid)
            .puts
            .try_reserve_record(nbytes)
            .map_err(|bytes| self.fail(ErrorKind::OutOfMemory { bytes }, call, loc))?;
        // SAFETY: the caller guarantees `src` is readable for `nbytes`.
        unsafe {
            self.dest(pid)
                .puts
                .push_record([slot as usize, offset, nbytes], src, nbytes)
        };
        self.flags |= DATA;
        Ok(())
    }

    /// A put of `nbytes >= MIN_LARGE` on an engine with a rendezvous
    /// (`engine/mpi/rendezvous.rs`): stages the payload (a copy now if
    /// `copy`, else the address) and appends the descriptor
    /// `[slot | DESCRIPTOR][offset][len]` for `pid`. `None` on other
    /// engines.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes; without `copy`, readable
    /// and unchanged until the end of the next sync.
    #[allow(clippy::too_many_arguments)]
    unsafe fn push_large(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        src: *const u8,
        nbytes: usize,
        copy: bool,
        call: &'static str,
        loc: Loc,
    ) -> Option<Result<(), Error>> {
        // SAFETY: forwarded from the caller.
        let staged = unsafe { self.world.rendezvous()?.stage(pid, src, nbytes, copy) };
        if let Err(bytes) = staged {
            return Some(Err(self.fail(ErrorKind::OutOfMemory { bytes }, call, loc)));
        }
        self.dest(pid)
            .puts
            .push_words([(slot | DESCRIPTOR) as usize, offset, nbytes]);
        self.flags |= DATA | LARGE;
        Some(Ok(()))
    }

    /// Appends a get request `[slot][offset][len]` for owner `pid`, whose
    /// reply goes to `dst`.
    pub(crate) fn push_get(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        dst: *mut u8,
        nbytes: usize,
    ) {
        self.dest(pid)
            .gets
            .push_words([slot as usize, offset, nbytes]);
        self.gets.push(GetReq {
            pid,
            dst,
            len: nbytes,
        });
        self.flags |= GET;
    }

    /// `bsp_hpput`: the receiver copies from `src` during the sync.
    ///
    /// # Safety
    ///
    /// `src` must stay readable and unchanged for `nbytes` bytes until the
    /// end of the next sync.
    pub(crate) unsafe fn hpput(
        &mut self,
        pid: i64,
        src: *const u8,
        dst: usize,
        offset: i64,
        nbytes: i64,
        loc: Loc,
    ) -> Result<(), Error> {
        const CALL: &str = "bsp_hpput";
        let Some((pid, offset, nbytes)) = self.transfer_args(pid, offset, nbytes, CALL, loc)?
        else {
            return Ok(());
        };
        self.check_pointer(src, nbytes, "src", CALL, loc)?;
        let slot = self.resolve(pid, dst, offset, nbytes, CALL, loc)?;
        if self.world.distributed() {
            if nbytes >= MIN_LARGE {
                // SAFETY: the caller keeps `src` readable and unchanged
                // until the end of the next sync.
                let large =
                    unsafe { self.push_large(pid, slot, offset, src, nbytes, false, CALL, loc) };
                if let Some(done) = large {
                    return done;
                }
            }
            // No shared memory to copy from at the sync: buffer it now,
            // which BSPlib allows ("any time before the end of the sync").
            // SAFETY: the caller guarantees `src` is readable for `nbytes`.
            return unsafe { self.push_put(pid, slot, offset, src, nbytes, CALL, loc) };
        }
        self.dest(pid).hpputs.push(HpPut {
            src,
            slot,
            offset,
            len: nbytes,
        });
        self.flags |= DATA | HPPUT;
        Ok(())
    }

    /// `bsp_get` (`hp == false`) and `bsp_hpget` (`hp == true`).
    ///
    /// # Safety
    ///
    /// `dst` must be writable for `nbytes` bytes until the end of the next
    /// sync, and (for `hp`) not accessed by anyone else until then.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn get(
        &mut self,
        pid: i64,
        src: usize,
        offset: i64,
        dst: *mut u8,
        nbytes: i64,
        hp: bool,
        keep: Option<Keepalive>,
        loc: Loc,
    ) -> Result<(), Error> {
        let call = if hp { "bsp_hpget" } else { "bsp_get" };
        let Some((pid, offset, nbytes)) = self.transfer_args(pid, offset, nbytes, call, loc)?
        else {
            return Ok(());
        };
        self.check_pointer(dst, nbytes, "dst", call, loc)?;
        let slot = self.resolve(pid, src, offset, nbytes, call, loc)?;
        self.push_get(pid, slot, offset, dst, nbytes);
        if let Some(k) = keep {
            self.get_keep.push(k);
        }
        Ok(())
    }
}
