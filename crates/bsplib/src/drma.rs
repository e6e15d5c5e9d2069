//! Direct remote memory access: registration, put, get and their
//! unbuffered variants. Checks happen here, once, for every front door.

use crate::engine::area_memory::MIN_AREA;
use crate::engine::{DESCRIPTOR, MIN_LARGE};
use crate::error::{Error, ErrorKind};
use crate::mailbox::{HpPut, DATA, GET, HPPUT, LARGE, REG};
use crate::mem::{self, Shape, PUT_BULK, PUT_REMOTE, VECTOR};
use crate::process::extension::{NOTES, ROUTE, TRANSFER};
use crate::process::{GetReq, Keepalive, Loc, Process};
use crate::registration::{RegOp, RegOpKind};

/// Puts of at least this many bytes write their payload straight into the
/// sender's channel on `processes` (`Process::push_bulk`).
pub(crate) const BULK_FROM: usize = 64 << 10;

/// Bytes at the bottom of a channel that bulk payloads leave to the streams.
const BULK_FLOOR: usize = 1 << 20;

/// Gets and hpputs of at least this many bytes are read across address
/// spaces by cross-memory attach (`processes`, `engine/cma.rs`): one
/// system call each, which smaller transfers do not repay.
const CROSS_FROM: usize = 64 << 10;

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
    pub(crate) fn resolve(
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
                    elem: self.unit,
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
        &mut self,
        pid: i64,
        offset: i64,
        nbytes: i64,
        call: &'static str,
        loc: Loc,
    ) -> Result<Option<(usize, usize, usize)>, Error> {
        self.check_running(call, loc)?;
        self.note_transfer(call, loc)?;
        let pid = self.check_pid(pid, call, loc)?;
        let offset = self.check_nonneg(offset, "offset", call, loc)?;
        let nbytes = self.check_nonneg(nbytes, "nbytes", call, loc)?;
        Ok((nbytes != 0).then_some((pid, offset, nbytes)))
    }

    /// `bsp_put`: copies the source now, writes it at the sync. A word or
    /// less takes [`put_small`](Self::put_small), inlined into the caller;
    /// the rest the general path.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    #[inline(always)]
    pub(crate) unsafe fn put(
        &mut self,
        pid: i64,
        src: *const u8,
        dst: usize,
        offset: i64,
        nbytes: i64,
        loc: Loc,
    ) -> Result<(), Error> {
        // SAFETY: forwarded from our caller.
        if unsafe { self.put_small(pid, src, dst, offset, nbytes) } {
            return Ok(());
        }
        // SAFETY: forwarded from our caller.
        unsafe { self.put_general(pid, src, dst, offset, nbytes, loc) }
    }

    /// [`put`](Self::put)'s general path: every check, with its error,
    /// the hook points, and the record of the put's size.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    #[inline(never)]
    pub(crate) unsafe fn put_general(
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
        if self.watch & ROUTE != 0 {
            if let Some(r) = self.hook_route(pid, slot, CALL, loc)? {
                // SAFETY: the caller guarantees `src` is readable for `nbytes`.
                return unsafe { (r.put)(self, pid, slot, offset, src, nbytes, CALL, loc) };
            }
        }
        if self.watch & NOTES != 0 {
            let whole = Shape::contiguous(nbytes);
            self.hook_note_put(pid, slot, offset, whole, CALL, loc);
        }
        // SAFETY: the caller guarantees `src` is readable for `nbytes`.
        unsafe { self.push_put(pid, slot, offset, src, nbytes, CALL, loc) }
    }

    /// The common put, a word or less while no extension watches the
    /// transfers, in one pass: the checks of [`put`](Self::put) (running,
    /// pid, offset, length, pointer, the slot and its extent on `pid`) and
    /// its [`SMALL`](mem::SMALL) record, without a call but the slot's
    /// lookup. `false` (nothing done) for anything else, errors included:
    /// [`put`](Self::put) then takes its general path, which finds them.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    #[inline(always)]
    pub(crate) unsafe fn put_small(
        &mut self,
        pid: i64,
        src: *const u8,
        dst: usize,
        offset: i64,
        nbytes: i64,
    ) -> bool {
        let plain = self.watch & (TRANSFER | ROUTE | NOTES) == 0 && !self.poisoned;
        if !plain
            || !(1..=mem::SMALL_PUT_MAX as i64).contains(&nbytes)
            || offset < 0
            || pid < 0
            || pid as u64 >= self.nprocs as u64
            || src.is_null()
            || self.world.is_stopped()
        {
            return false;
        }
        let (pid, offset, nbytes) = (pid as usize, offset as usize, nbytes as usize);
        let Some((slot, remote)) = self.reg.lookup_entry(dst, pid) else {
            return false;
        };
        let Some(word) = mem::small_put_word(slot, offset, nbytes) else {
            return false;
        };
        // `offset < 2^40` (the record's form): no overflow.
        if remote.addr == 0 || offset + nbytes > remote.size {
            return false;
        }
        // SAFETY: the caller guarantees `src` is readable for `nbytes`.
        if unsafe { self.dest_hot(pid).puts.push_small_put(word, src, nbytes) }.is_err() {
            return false;
        }
        self.flags |= DATA;
        true
    }

    /// Appends a put for `pid`: a [`SMALL`](mem::SMALL) record (a word
    /// or less), a descriptor of a rendezvous (`mpi`, 32 KiB and more), a
    /// record whose payload is in our channel (`processes`, 64 KiB and
    /// more), or a record `[slot][offset][len][payload]` with the payload
    /// copied into the mailbox.
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
        if let Some(word) = mem::small_put_word(slot, offset, nbytes) {
            // A word or less: the one-word header of `mem::SMALL`.
            // SAFETY: the caller guarantees `src` is readable for `nbytes`.
            let pushed = unsafe { self.dest(pid).puts.push_small_put(word, src, nbytes) };
            self.flags |= DATA;
            return pushed.map_err(|bytes| self.fail(ErrorKind::OutOfMemory { bytes }, call, loc));
        }
        if nbytes >= MIN_LARGE {
            // SAFETY: the caller guarantees `src` is readable for `nbytes`;
            // it is copied now.
            let large = unsafe { self.push_large(pid, slot, offset, src, nbytes, true, call, loc) };
            if let Some(done) = large {
                return done;
            }
        }
        if nbytes >= BULK_FROM {
            // SAFETY: forwarded from our caller.
            if unsafe { self.push_bulk(pid, slot, offset, src, nbytes) } {
                return Ok(());
            }
        }
        let puts = &mut self.dest(pid).puts;
        let room = puts.try_reserve_record(nbytes);
        if room.is_ok() {
            // SAFETY: the caller guarantees `src` is readable for `nbytes`.
            unsafe { puts.push_put(slot, offset, src, nbytes) };
            self.flags |= DATA;
        }
        room.map_err(|bytes| self.fail(ErrorKind::OutOfMemory { bytes }, call, loc))
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

    /// `processes`: writes a large put's payload straight into the top of
    /// our channel of this superstep's parity, which the sync's streams
    /// will not reach (`exchange.rs` limits them) and which receivers read
    /// in place: two copies in all, as on threads, instead of three
    /// (mailbox, channel, destination). The record `[slot][offset][len |
    /// PUT_BULK][channel offset]` goes in the mailbox. The payload starts
    /// at its source's offset within a cache line (the channel is
    /// page-aligned). `false` (nothing done) on other engines, or when the
    /// channel has no room left: then the put takes the usual path.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    unsafe fn push_bulk(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        src: *const u8,
        nbytes: usize,
    ) -> bool {
        // SAFETY: forwarded from our caller.
        let Some(at) = (unsafe { self.stage_bulk(src, nbytes) }) else {
            return false;
        };
        self.dest(pid)
            .puts
            .push_words([slot as usize, offset, nbytes | PUT_BULK, at]);
        self.flags |= DATA;
        true
    }

    /// `processes`: copies `nbytes` from `src` into the top of our channel
    /// of this superstep's parity (see [`push_bulk`](Self::push_bulk)),
    /// and returns their offset in the channel; `None` (nothing done) on
    /// other engines or when the channel has no room left.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `nbytes` bytes.
    pub(crate) unsafe fn stage_bulk(&mut self, src: *const u8, nbytes: usize) -> Option<usize> {
        let q = self.parity;
        let (base, capacity) = self.world.channel_region(self.pid, q)?;
        // Highest start that fits below the payloads already there, moved
        // down to the source's offset within a cache line; streams keep
        // at least `BULK_FLOOR` bytes below.
        let top = (capacity - self.bulk[q]).checked_sub(nbytes)?;
        let at = top.wrapping_sub(top.wrapping_sub(src.addr()) & 63);
        if at > top || at < BULK_FLOOR {
            return None;
        }
        // SAFETY: `at + nbytes <= capacity`: inside our channel `q`, which
        // only we write, and which nobody reads during this superstep
        // (its readers of superstep `t - 2` finished at barrier A of sync
        // `t - 1`); the caller vouches for `src`, which cannot be inside
        // the channel (a mapping of the library's).
        unsafe { mem::copy(src, base.add(at), nbytes) };
        self.bulk[q] = capacity - at;
        Some(at)
    }

    /// Records a get from owner `pid` into `dst`. It is sent as a request
    /// `[slot][offset][len]` (resolved and checked by the owner, which
    /// replies at the sync) unless this process shares one address space
    /// with the owner and no get of this superstep writes our registered
    /// memory: then we copy the source ourselves at the sync, once, after
    /// every process has finished the superstep and before anyone writes
    /// registered memory (`superstep.rs`, step 4). A destination outside
    /// our registered memory cannot be read by anyone during the sync, so
    /// writing it early is unobservable. `src` is the source resolved in
    /// the owner's entry of our table (0 where we cannot read the owner's
    /// memory: `mpi`, or `processes` without cross-memory attach). On
    /// `processes` only gets of [`CROSS_FROM`] bytes or more are read
    /// across address spaces (a system call each).
    pub(crate) fn push_get(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        src: usize,
        dst: *mut u8,
        nbytes: usize,
    ) {
        let whole = Shape::contiguous(nbytes);
        self.push_get_shaped(pid, slot, offset, src, dst, whole, whole);
    }

    /// [`push_get`](Self::push_get) of `from` (the blocks on the owner,
    /// from `offset`) into `to` (the blocks from `dst`), which hold the
    /// same bytes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push_get_shaped(
        &mut self,
        pid: usize,
        slot: u64,
        offset: usize,
        src: usize,
        dst: *mut u8,
        from: Shape,
        to: Shape,
    ) {
        let req = GetReq {
            pid,
            dst,
            len: to.block * to.count,
            slot,
            offset,
            src,
            from,
            to,
        };
        if !self.gets_sent {
            let span = to.span().unwrap_or(usize::MAX);
            if src != 0 && !self.reg.covers(dst.addr(), span) {
                self.gets.push(req);
                self.flags |= GET;
                return;
            }
            // From now on every get of this superstep is a request, so
            // that replies land in call order: send the earlier ones too.
            self.gets_sent = true;
            for i in 0..self.gets.len() {
                let g = self.gets[i];
                g.request(&mut self.dest(g.pid).gets);
            }
        }
        req.request(&mut self.dest(pid).gets);
        self.gets.push(req);
        self.flags |= GET;
    }

    /// Checks the shapes of a strided transfer: the lengths agree and do
    /// not overflow, the destination's blocks (`to`) are disjoint. `None`
    /// for a transfer of zero bytes, else `(bytes, source span,
    /// destination span)`.
    fn check_shapes(
        &self,
        from: Shape,
        to: Shape,
        call: &'static str,
        loc: Loc,
    ) -> Result<Option<(usize, usize, usize)>, Error> {
        let overflow = |what| self.fail(ErrorKind::Overflow { what }, call, loc);
        let len = to.len().ok_or_else(|| overflow("destination length"))?;
        let src = from.len().ok_or_else(|| overflow("source length"))?;
        if src != len {
            return Err(self.fail(ErrorKind::ShapeMismatch { src, dst: len }, call, loc));
        }
        if len == 0 {
            return Ok(None);
        }
        if !to.disjoint() {
            let (block, stride) = (to.block, to.stride);
            return Err(self.fail(ErrorKind::OverlappingBlocks { block, stride }, call, loc));
        }
        let from_span = from.span().ok_or_else(|| overflow("source extent"))?;
        let to_span = to.span().ok_or_else(|| overflow("destination extent"))?;
        Ok(Some((len, from_span, to_span)))
    }

    /// A strided put (`bsp_put_strided`, `bsp_put_vec`, `Bsp::put_strided`):
    /// the blocks of `from` read from `src` now, written at the sync into
    /// the blocks of `to` from byte `offset` of the area registered on
    /// `pid` in the slot of `dst`. One record `[slot | VECTOR][offset][len]
    /// [block][stride][payload]`, whose shape the owner checks against its
    /// own extent; a contiguous transfer is an ordinary put.
    ///
    /// # Safety
    ///
    /// Every block of `from` from `src` must be readable.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn put_strided(
        &mut self,
        pid: i64,
        src: *const u8,
        from: Shape,
        dst: usize,
        offset: usize,
        to: Shape,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.note_transfer(call, loc)?;
        let pid = self.check_pid(pid, call, loc)?;
        let Some((len, from_span, to_span)) = self.check_shapes(from, to, call, loc)? else {
            return Ok(());
        };
        self.check_pointer(src, from_span, "src", call, loc)?;
        let slot = self.resolve(pid, dst, offset, to_span, call, loc)?;
        if self.watch & NOTES != 0 {
            self.hook_note_put(pid, slot, offset, to, call, loc);
        }
        if from.is_contiguous() && to.is_contiguous() {
            // SAFETY: the caller vouches for the one block of `len` bytes.
            return unsafe { self.push_put(pid, slot, offset, src, len, call, loc) };
        }
        let room = self.dest(pid).puts.try_reserve_record(len + 16);
        room.map_err(|bytes| self.fail(ErrorKind::OutOfMemory { bytes }, call, loc))?;
        let header = [(slot | VECTOR) as usize, offset, len, to.block, to.stride];
        // SAFETY: the caller vouches for the blocks of `from`; `len` did
        // not overflow.
        unsafe { self.dest(pid).puts.push_strided(header, src, from) };
        self.flags |= DATA;
        Ok(())
    }

    /// A strided get (`bsp_get_strided`, `bsp_get_vec`, `Bsp::get_strided`):
    /// at the sync, the blocks of `from` from byte `offset` of the area
    /// registered on `pid` in the slot of `src` are written into the
    /// blocks of `to` from `dst`. The request `[slot | VECTOR][offset][len]
    /// [block][stride]` is checked by the owner, which replies packed; we
    /// scatter. On shared memory we copy it ourselves when we may (as
    /// [`push_get`](Self::push_get) says).
    ///
    /// # Safety
    ///
    /// Every block of `to` from `dst` must stay writable until the end of
    /// the next sync, and not be accessed by this process while it runs.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn get_strided(
        &mut self,
        pid: i64,
        src: usize,
        offset: usize,
        from: Shape,
        dst: *mut u8,
        to: Shape,
        keep: Option<Keepalive>,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.check_running(call, loc)?;
        self.note_transfer(call, loc)?;
        let pid = self.check_pid(pid, call, loc)?;
        let Some((len, from_span, to_span)) = self.check_shapes(from, to, call, loc)? else {
            return Ok(());
        };
        self.check_pointer(dst, to_span, "dst", call, loc)?;
        let slot = self.resolve(pid, src, offset, from_span, call, loc)?;
        // As in `get`; another address space is read for contiguous
        // sources only.
        let base = || {
            let base = self.reg.lookup(src).map_or(0, |s| s.entry(pid).addr);
            base.wrapping_add(offset)
        };
        let at = if !self.world.distributed() {
            base()
        } else if len >= MIN_AREA && from.is_contiguous() && to.is_contiguous() {
            let at = base();
            if self.world.readable_elsewhere(pid, at, len, CROSS_FROM) {
                at
            } else {
                0
            }
        } else {
            0
        };
        let whole = Shape::contiguous(len);
        let (from, to) = if from.is_contiguous() && to.is_contiguous() {
            (whole, whole)
        } else {
            (from, to)
        };
        self.push_get_shaped(pid, slot, offset, at, dst, from, to);
        if let Some(k) = keep {
            self.get_keep.push(k);
        }
        Ok(())
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
        if self.watch & ROUTE != 0 {
            if let Some(r) = self.hook_route(pid, slot, CALL, loc)? {
                // In an epoch, copied now (the epoch may end before any
                // sync). SAFETY: the caller guarantees `src` is readable
                // for `nbytes`.
                return unsafe { (r.put)(self, pid, slot, offset, src, nbytes, CALL, loc) };
            }
        }
        if self.watch & NOTES != 0 {
            let whole = Shape::contiguous(nbytes);
            self.hook_note_put(pid, slot, offset, whole, CALL, loc);
            // SAFETY: the caller keeps `src` readable until the sync.
            unsafe { self.hook_note_hp(CALL, src, nbytes, loc) };
        }
        if self.world.distributed()
            && self
                .world
                .readable_elsewhere(self.pid, src.addr(), nbytes, CROSS_FROM)
        {
            // `processes`, a source in our area memory or read by cross-
            // memory attach: the receiver reads it from our memory at the
            // sync, which closes with barrier C (the record names our
            // address; the receiver checks it against our region of area
            // memory, or the kernel against our mappings).
            self.dest(pid).puts.push_words([
                slot as usize,
                offset,
                nbytes | PUT_REMOTE,
                src.addr(),
            ]);
            self.flags |= DATA | HPPUT;
            return Ok(());
        }
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
        if self.watch & ROUTE != 0 {
            if let Some(r) = self.hook_route(pid, slot, call, loc)? {
                // SAFETY: the caller keeps `dst` writable until the epoch
                // (which ends before the next sync) delivers it.
                return unsafe { (r.get)(self, pid, slot, offset, dst, nbytes, keep, call, loc) };
            }
        }
        if hp && self.watch & NOTES != 0 {
            // SAFETY: the caller keeps `dst` writable (and readable: it is
            // ordinary memory) until the sync.
            unsafe { self.hook_note_hp(call, dst, nbytes, loc) };
        }
        // Whether we may read the owner's memory ourselves: in this one
        // address space, in its area memory, or by cross-memory attach
        // from `CROSS_FROM` bytes. The owner's entry (`resolve` checked the
        // range) is an address the owner registered, in this address space
        // or in the owner's.
        let at = || {
            let base = self.reg.lookup(src).map_or(0, |s| s.entry(pid).addr);
            base.wrapping_add(offset)
        };
        let from = if !self.world.distributed() {
            at()
        } else if nbytes >= MIN_AREA {
            let at = at();
            if self.world.readable_elsewhere(pid, at, nbytes, CROSS_FROM) {
                at
            } else {
                0
            }
        } else {
            0
        };
        self.push_get(pid, slot, offset, from, dst, nbytes);
        if let Some(k) = keep {
            self.get_keep.push(k);
        }
        Ok(())
    }
}
