//! [`Bsp`]: the handle of one BSP process, and the safe Rust API.

use crate::error::SourceLocation;
use std::cell::RefCell;
use std::fmt::Display;
use std::marker::PhantomData;

use bytemuck::Pod;

use crate::area::Area;
use crate::error::{Error, ErrorKind};
use crate::process::Process;

/// Unwinds a process that called [`Bsp::abort`]; caught by the run.
pub(crate) struct AbortUnwind;

/// The handle of one BSP process: every BSPlib primitive is a method.
///
/// A `Bsp` is handed to the SPMD function by [`run`](crate::run) and
/// [`Runtime::run`](crate::Runtime::run). It is neither `Send` nor `Sync`.
/// Methods that only queue work take `&self`; [`sync`](Bsp::sync) takes
/// `&mut self`, which ends every borrow of local registered memory before
/// the data moves.
///
/// Supersteps are numbered from 0.
pub struct Bsp {
    process: RefCell<Process>,
    /// The run's id and this process's pid, which every [`Area`] made with
    /// this handle records: the areas it may be used with.
    owner: (u64, usize),
    _not_send: PhantomData<*mut ()>,
}

impl Bsp {
    pub(crate) fn new(process: Process) -> Self {
        Bsp {
            owner: (process.world.id(), process.pid),
            process: RefCell::new(process),
            _not_send: PhantomData,
        }
    }

    /// The run and process of this handle (see [`Area`]).
    #[inline]
    pub(crate) fn owner(&self) -> (u64, usize) {
        self.owner
    }

    /// The check every call that takes an [`Area`] makes first: the area
    /// was created by this process, in this run. An area of another run
    /// (kept in a `thread_local`, say) names no registration of this one,
    /// and its views were never guarded by this run's syncs.
    #[inline]
    pub(crate) fn own<T: Pod>(
        &self,
        p: &Process,
        area: &Area<T>,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let (created_run, created_pid) = area.owner();
        if (created_run, created_pid) == self.owner {
            return Ok(());
        }
        Err(p.fail(
            ErrorKind::ForeignArea {
                created_run,
                created_pid,
                run: self.owner.0,
            },
            call,
            loc,
        ))
    }

    #[inline]
    pub(crate) fn process(&self) -> std::cell::RefMut<'_, Process> {
        self.process.borrow_mut()
    }

    /// The superstep this process is in (`bsp_sync` calls made so far).
    pub(crate) fn superstep_now(&self) -> u64 {
        self.process.borrow().superstep
    }

    /// `bsp_pid`: this process's id, in `0..nprocs()`.
    ///
    /// # BSP cost
    ///
    /// Local; no communication.
    #[inline]
    pub fn pid(&self) -> usize {
        self.process.borrow().pid
    }

    /// `bsp_nprocs`: the number of processes of this run.
    ///
    /// # BSP cost
    ///
    /// Local; no communication.
    #[inline]
    pub fn nprocs(&self) -> usize {
        self.process.borrow().nprocs
    }

    /// Sets how this process's errors name BSPlib's calls, for front doors
    /// in other languages: `names` maps the core's name of a call (C's:
    /// `bsp_put`, `bsp_push_reg`) to the one the caller knows (Fortran's
    /// `bspput`, `bsppushreg`); `None` keeps the core's names. It applies
    /// to the errors this process finds from now on, also those that a
    /// sync finds about earlier calls. Returns the previous setting.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = bsplib::run(2, |bsp| {
    ///     bsp.set_call_names(Some(|call| if call == "bsp_get" { "bspget" } else { call }));
    ///     let x = bsplib::Area::from_vec(bsp, vec![0u32; 1]);
    ///     bsp.push_reg(&x)?;
    ///     bsp.sync()?;
    ///     bsp.get(0, &x, 1, &x, 0, 1)?; // past the end of x on process 0
    ///     bsp.sync()
    /// })
    /// .unwrap_err();
    /// assert_eq!(err.call(), "bspget");
    /// ```
    pub fn set_call_names(
        &mut self,
        names: Option<fn(&'static str) -> &'static str>,
    ) -> Option<fn(&'static str) -> &'static str> {
        std::mem::replace(&mut self.process().call_names, names)
    }

    /// The current superstep number (0 before the first [`sync`](Bsp::sync)).
    #[inline]
    pub fn superstep(&self) -> u64 {
        self.superstep_now()
    }

    /// `bsp_time`: seconds since the start of the run, on this process's
    /// clock. Clocks of different processes are not synchronised.
    ///
    /// # BSP cost
    ///
    /// Local; no communication.
    #[inline]
    pub fn time(&self) -> f64 {
        self.process.borrow().time()
    }

    /// `bsp_sync`: ends the superstep. Registrations, pops and tag sizes of
    /// this superstep take effect; gets read their sources (the values at
    /// the end of this superstep), then get data and then put data is
    /// written; the messages sent in this superstep become the queue of the
    /// next, and the previous queue is discarded.
    ///
    /// # Errors
    ///
    /// Registration or tag-size calls that differ between processes
    /// ([`ErrorKind::RegistrationMismatch`], [`ErrorKind::TagSizeMismatch`],
    /// [`ErrorKind::NotRegistered`] for popping an unregistered address); a
    /// process that returned from the SPMD function while this one waits
    /// ([`ErrorKind::ProcessEnded`]); and [`ErrorKind::Stopped`] when the
    /// run was stopped by an error elsewhere.
    ///
    /// # BSP cost
    ///
    /// One superstep: `l` plus `g` times the h-relation of the superstep
    /// (the most bytes any process sends or receives).
    ///
    /// # Examples
    ///
    /// ```
    /// let steps = bsplib::run(2, |bsp| {
    ///     bsp.sync()?;
    ///     bsp.sync()?;
    ///     Ok(bsp.superstep())
    /// })?;
    /// assert_eq!(steps, vec![2, 2]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn sync(&mut self) -> Result<(), Error> {
        self.sync_at(Some(SourceLocation::caller()))
    }

    /// [`sync`](Bsp::sync), reporting `loc` as the caller's location.
    pub(crate) fn sync_at(&mut self, loc: Option<SourceLocation>) -> Result<(), Error> {
        let p = self.process.get_mut();
        p.sync(loc)?;
        crate::process::note_superstep(p.superstep);
        Ok(())
    }

    /// `bsp_abort`: stops every process of the run, without a barrier. The
    /// run returns [`ErrorKind::Aborted`] with `message`; other processes
    /// get [`ErrorKind::Stopped`] from their next `sync`.
    ///
    /// This process unwinds out of the SPMD function at once (a silent
    /// unwind, not a panic message); with `panic = "abort"` the whole OS
    /// process aborts instead.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| -> Result<(), bsplib::Error> {
    ///     if bsp.pid() == 1 {
    ///         bsp.abort("cannot go on");
    ///     }
    ///     bsp.sync()?;
    ///     Ok(())
    /// });
    /// let e = r.unwrap_err();
    /// assert_eq!(e.pid(), 1);
    /// assert!(e.to_string().contains("cannot go on"));
    /// ```
    #[track_caller]
    pub fn abort(&self, message: impl Display) -> ! {
        let loc = SourceLocation::caller();
        // Format first: the user's `Display` may call methods of `self`.
        let message = message.to_string();
        let _ = self.process().abort(message, Some(loc));
        std::panic::resume_unwind(Box::new(AbortUnwind))
    }

    // ----- registration -------------------------------------------------

    /// `bsp_push_reg`: registers all of `area` for remote access, in the
    /// next slot; takes effect at the next sync. Collective: every process
    /// makes the same sequence of push and pop calls (see
    /// [`push_reg_null`](Bsp::push_reg_null) for processes with nothing to
    /// register).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ForeignArea`] at once if `area` was created by another
    /// process or in another run. Mismatches between processes are
    /// reported by the next [`sync`](Bsp::sync).
    ///
    /// # BSP cost
    ///
    /// A registration sync costs an extra `O(p)` words per slot.
    #[track_caller]
    pub fn push_reg<T: Pod>(&self, area: &Area<T>) -> Result<(), Error> {
        self.push_reg_prefix(area, area.len())
    }

    /// `bsp_push_reg` with an extent of the first `len` elements of `area`
    /// (an area may be registered again with another extent: the newer
    /// slot shadows the older one).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ForeignArea`] if `area` was created by another process
    /// or in another run; [`ErrorKind::LocalBounds`] if `len > area.len()`.
    #[track_caller]
    pub fn push_reg_prefix<T: Pod>(&self, area: &Area<T>, len: usize) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        self.own(&p, area, "bsp_push_reg", loc)?;
        if len > area.len() {
            let size = std::mem::size_of::<T>();
            return Err(p.fail(
                ErrorKind::LocalBounds {
                    what: "area",
                    needed: len.saturating_mul(size),
                    available: area.size_bytes(),
                },
                "bsp_push_reg",
                loc,
            ));
        }
        let bytes = (len * std::mem::size_of::<T>()) as i64;
        p.push_reg(area.addr(), bytes, Some(area.keepalive()), loc)
    }

    /// `bsp_push_reg(NULL, 0)`: takes part in a collective registration
    /// without registering anything; puts and gets into this process
    /// through the slot are errors.
    #[track_caller]
    pub fn push_reg_null(&self) -> Result<(), Error> {
        self.process()
            .push_reg(0, 0, None, Some(SourceLocation::caller()))
    }

    /// `bsp_pop_reg`: removes the most recent slot in which this process
    /// registered `area`, at the next sync. Any live slot may be popped,
    /// but every process must name the same slot. A process that registered
    /// `NULL` in the slot takes part with [`pop_reg_null`](Bsp::pop_reg_null).
    ///
    /// Keep the `Area` while it is registered if you mean to pop it: a
    /// dropped area can no longer be named, so its slot (and memory) then
    /// stays until the end of the run.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ForeignArea`] at once if `area` was created by another
    /// process or in another run. Reported by the next
    /// [`sync`](Bsp::sync): an area with no live slot
    /// ([`ErrorKind::NotRegistered`]) or processes naming different slots
    /// ([`ErrorKind::RegistrationMismatch`]).
    #[track_caller]
    pub fn pop_reg<T: Pod>(&self, area: &Area<T>) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        self.own(&p, area, "bsp_pop_reg", loc)?;
        p.pop_reg(area.addr(), loc)
    }

    /// `bsp_pop_reg(NULL)`: takes part in the pop of a slot in which this
    /// process registered `NULL` (see [`push_reg_null`](Bsp::push_reg_null)).
    /// The slot is the one the other processes name; if every process pops
    /// `NULL`, it is the most recent slot that is `NULL` everywhere.
    #[track_caller]
    pub fn pop_reg_null(&self) -> Result<(), Error> {
        self.process().pop_reg(0, Some(SourceLocation::caller()))
    }

    // ----- DRMA -----------------------------------------------------------

    /// `bsp_put`: copies `src` now and writes it at the next sync into the
    /// area registered on process `pid` in the slot of `dst`, starting at
    /// element `offset`. A put to oneself also lands at the sync.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ForeignArea`] if an area given was created by another
    /// process or in another run (an `Area` kept from an earlier run);
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::NotRegistered`] if `dst`
    /// has no live slot here; [`ErrorKind::RemoteNull`] if `pid` registered
    /// `NULL` in it; [`ErrorKind::OutOfBounds`] if the transfer does not fit
    /// the extent registered on `pid`. Any error stops the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes towards this process's outgoing and `pid`'s
    /// incoming h-relation.
    ///
    /// # Examples
    ///
    /// The paper's `reverse`:
    ///
    /// ```
    /// let r = bsplib::run(4, |bsp| {
    ///     let x = bsplib::Area::from_vec(bsp, vec![bsp.pid() as i32]);
    ///     bsp.push_reg(&x)?;
    ///     bsp.sync()?;
    ///     let v = x.as_slice(bsp)[0];
    ///     bsp.put(bsp.nprocs() - bsp.pid() - 1, &[v], &x, 0)?;
    ///     bsp.sync()?;
    ///     bsp.pop_reg(&x)?;
    ///     Ok(x.as_slice(bsp)[0])
    /// })?;
    /// assert_eq!(r, vec![3, 2, 1, 0]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn put<T: Pod>(
        &self,
        pid: usize,
        src: &[T],
        dst: &Area<T>,
        offset: usize,
    ) -> Result<(), Error> {
        self.put_at(pid, src, dst, offset, Some(SourceLocation::caller()))
    }

    /// [`put`](Bsp::put) at `loc` (the one-sided epochs' guards).
    pub(crate) fn put_at<T: Pod>(
        &self,
        pid: usize,
        src: &[T],
        dst: &Area<T>,
        offset: usize,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let mut p = self.process();
        self.own(&p, dst, "bsp_put", loc)?;
        let (offset, nbytes) = typed_range::<T>(&p, offset, src.len(), "bsp_put", loc)?;
        // SAFETY: `src` is a live slice of `nbytes` bytes; `put` copies it
        // before returning.
        unsafe {
            p.put(
                pid_arg(pid),
                src.as_ptr().cast(),
                dst.addr(),
                offset,
                nbytes,
                loc,
            )
        }
    }

    /// `bsp_hpput`: like [`put`](Bsp::put) but unbuffered on both sides: the
    /// data may be copied at any time until the end of the next sync (this
    /// engine copies it during the sync, once, straight from `src`).
    ///
    /// # Safety
    ///
    /// BSPlib: "correct data delivery is only guaranteed if: (1) no
    /// communications alter the source area; (2) no subsequent local
    /// computations alter the source area; (3) no other communications
    /// alter the destination area; and (4) no computation on the remote
    /// process alters the destination area during the entire superstep."
    /// In Rust terms: `src` must stay alive and unmodified until the next
    /// [`sync`](Bsp::sync) returns, and nothing may read or write the
    /// destination range on `pid` during that time except this transfer.
    ///
    /// # Errors
    ///
    /// As for [`put`](Bsp::put).
    ///
    /// # BSP cost
    ///
    /// As for [`put`](Bsp::put), with one copy instead of two.
    #[track_caller]
    pub unsafe fn hpput<T: Pod>(
        &self,
        pid: usize,
        src: &[T],
        dst: &Area<T>,
        offset: usize,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        self.own(&p, dst, "bsp_hpput", loc)?;
        let (offset, nbytes) = typed_range::<T>(&p, offset, src.len(), "bsp_hpput", loc)?;
        // SAFETY: the caller keeps `src` alive and unchanged until the end
        // of the next sync.
        unsafe {
            p.hpput(
                pid_arg(pid),
                src.as_ptr().cast(),
                dst.addr(),
                offset,
                nbytes,
                loc,
            )
        }
    }

    /// A put of data the library takes over: like [`put`](Bsp::put), but
    /// without the copy at the call. The library holds `data` until the
    /// end of the next sync, and the receiver copies straight from it
    /// during that sync, or sends it from there (it is an `hpput` whose
    /// source the library owns: one copy on the engines sharing one address
    /// space, on `processes` from 64 KiB where the kernel allows
    /// cross-memory attach, and on `mpi` from 32 KiB, by rendezvous; a copy
    /// at the call otherwise, as `put` does). One copy instead of
    /// two, with no `unsafe`: nobody can change `data` meanwhile, since the
    /// library owns it (an `Arc<[T]>` is shared but immutable). Sending one
    /// `Arc<[T]>` to many processes copies it once per receiver.
    ///
    /// `data` is a `Vec<T>`, a `Box<[T]>`, an `Arc<[T]>` or an
    /// `Arc<Vec<T>>` ([`Owned`]); it is dropped after the sync, or leaked
    /// if that sync fails (another process may still be reading it).
    ///
    /// # Errors
    ///
    /// As for [`put`](Bsp::put).
    ///
    /// # BSP cost
    ///
    /// As for [`put`](Bsp::put); on shared memory the sync closes with a
    /// third barrier, as for [`hpput`](Bsp::hpput).
    ///
    /// # Examples
    ///
    /// Every process sends the same block to every other, one copy each:
    ///
    /// ```
    /// use std::sync::Arc;
    /// let r = bsplib::run(3, |bsp| {
    ///     let (me, p) = (bsp.pid(), bsp.nprocs());
    ///     let all = bsplib::Area::<u32>::new(bsp, 2 * p);
    ///     bsp.push_reg(&all)?;
    ///     bsp.sync()?;
    ///     let block: Arc<[u32]> = Arc::from(vec![me as u32; 2]);
    ///     for to in 0..p {
    ///         bsp.put_owned(to, Arc::clone(&block), &all, 2 * me)?;
    ///     }
    ///     bsp.sync()?;
    ///     Ok(all.as_slice(bsp).to_vec())
    /// })?;
    /// assert!(r.iter().all(|v| v == &[0, 0, 1, 1, 2, 2]));
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn put_owned<T: Pod, D: Owned<T>>(
        &self,
        pid: usize,
        data: D,
        dst: &Area<T>,
        offset: usize,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        self.own(&p, dst, "bsp_put", loc)?;
        let src = data.elements();
        let (offset, nbytes) = typed_range::<T>(&p, offset, src.len(), "bsp_put", loc)?;
        let ptr = src.as_ptr().cast::<u8>();
        // An hpput whose source the library owns: each engine reads it when
        // it can (at the sync, or by rendezvous on `mpi`) and copies it now
        // otherwise. SAFETY: `data` owns the `nbytes` bytes at `ptr` (a heap block,
        // which does not move when `data` does); the process keeps `data`
        // until the end of the next sync (or forever if that sync fails),
        // and nobody can change the bytes meanwhile: the library owns
        // `data`, and the shared owners of an `Arc` can only read.
        unsafe { p.hpput(pid_arg(pid), ptr, dst.addr(), offset, nbytes, loc)? };
        p.owned.push(Box::new(data));
        Ok(())
    }

    /// `bsp_get`: at the next sync, reads `len` elements from element
    /// `offset` of the area registered on process `pid` in the slot of `src`
    /// (their value at the end of this superstep, on `pid`) and writes them
    /// into `dst` from element `dst_offset`, before any put data is written.
    ///
    /// # Errors
    ///
    /// As for [`put`](Bsp::put), the extent check applying to `src` on
    /// `pid`; [`ErrorKind::LocalBounds`] if `dst` is too short.
    ///
    /// # BSP cost
    ///
    /// `len * size_of::<T>()` bytes towards `pid`'s outgoing and this
    /// process's incoming h-relation; the sync gets a second barrier.
    ///
    /// # Examples
    ///
    /// The manual page's `cyclic_shift`:
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| {
    ///     let x = bsplib::Area::from_vec(bsp, vec![10 * bsp.pid() as u64]);
    ///     bsp.push_reg(&x)?;
    ///     bsp.sync()?;
    ///     let left = (bsp.pid() + bsp.nprocs() - 1) % bsp.nprocs();
    ///     bsp.get(left, &x, 0, &x, 0, 1)?;
    ///     bsp.sync()?;
    ///     Ok(x.as_slice(bsp)[0])
    /// })?;
    /// assert_eq!(r, vec![20, 0, 10]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn get<T: Pod>(
        &self,
        pid: usize,
        src: &Area<T>,
        offset: usize,
        dst: &Area<T>,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        // SAFETY: `get_into` checks `dst` and keeps its storage alive until
        // the sync writes it; views of `dst` cannot live across the sync.
        unsafe { self.get_into(pid, src, offset, dst, dst_offset, len, false, loc) }
    }

    /// `bsp_hpget`: like [`get`](Bsp::get) but unbuffered on both sides: the
    /// source may be read, and the destination written, at any time until
    /// the end of the next sync.
    ///
    /// # Safety
    ///
    /// BSPlib: the "unbuffered on source, unbuffered on destination
    /// semantics in which the two-way communication can take effect at any
    /// time during the superstep." In Rust terms: until the next
    /// [`sync`](Bsp::sync) returns, nothing may write the source range on
    /// `pid`, and nothing else may read or write the destination range.
    ///
    /// # Errors
    ///
    /// As for [`get`](Bsp::get).
    #[allow(clippy::too_many_arguments)]
    #[track_caller]
    pub unsafe fn hpget<T: Pod>(
        &self,
        pid: usize,
        src: &Area<T>,
        offset: usize,
        dst: &Area<T>,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        // SAFETY: the caller accepts the unbuffered contract above.
        unsafe { self.get_into(pid, src, offset, dst, dst_offset, len, true, loc) }
    }

    /// Shared body of `get` and `hpget`.
    ///
    /// # Safety
    ///
    /// For `hp`, the caller's `hpget` contract.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn get_into<T: Pod>(
        &self,
        pid: usize,
        src: &Area<T>,
        offset: usize,
        dst: &Area<T>,
        dst_offset: usize,
        len: usize,
        hp: bool,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let call = if hp { "bsp_hpget" } else { "bsp_get" };
        let mut p = self.process();
        self.own(&p, src, call, loc)?;
        self.own(&p, dst, call, loc)?;
        if dst_offset
            .checked_add(len)
            .is_none_or(|end| end > dst.len())
        {
            let size = std::mem::size_of::<T>();
            return Err(p.fail(
                ErrorKind::LocalBounds {
                    what: "destination area",
                    needed: dst_offset.saturating_add(len).saturating_mul(size),
                    available: dst.size_bytes(),
                },
                call,
                loc,
            ));
        }
        let (offset, nbytes) = typed_range::<T>(&p, offset, len, call, loc)?;
        // SAFETY: `dst_offset + len <= dst.len()`, so the destination range
        // lies inside `dst`, whose storage the keepalive holds until the
        // sync; the sync needs `&mut Bsp`, so no local view of it is alive
        // when it is written. For `hp` the caller's contract covers races.
        unsafe {
            let dst_ptr = dst.ptr().add(dst_offset * std::mem::size_of::<T>());
            p.get(
                pid_arg(pid),
                src.addr(),
                offset,
                dst_ptr,
                nbytes,
                hp,
                Some(dst.keepalive()),
                loc,
            )
        }
    }

    // ----- BSMP -----------------------------------------------------------

    /// `bsp_set_tagsize`: sets the tag size of messages sent from the next
    /// superstep on; returns the previous value given (the tag size in force
    /// for the next superstep before this call). Collective: every process
    /// makes the same calls with the same values in the same superstep.
    ///
    /// # Errors
    ///
    /// Differences between processes are reported by the next
    /// [`sync`](Bsp::sync) ([`ErrorKind::TagSizeMismatch`]).
    ///
    /// # Examples
    ///
    /// ```
    /// bsplib::run(2, |bsp| {
    ///     assert_eq!(bsp.set_tagsize(4)?, 0);
    ///     assert_eq!(bsp.set_tagsize(8)?, 4);
    ///     bsp.sync()?;
    ///     bsp.send((bsp.pid() + 1) % 2, &7u64.to_ne_bytes(), b"hi")?;
    ///     bsp.sync()?;
    ///     let m = bsp.hpmove().expect("one message");
    ///     assert_eq!((m.tag(), m.payload()), (&7u64.to_ne_bytes()[..], &b"hi"[..]));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn set_tagsize(&self, nbytes: usize) -> Result<usize, Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        let n = i64::try_from(nbytes).map_err(|_| {
            p.fail(
                ErrorKind::Overflow { what: "tag size" },
                "bsp_set_tagsize",
                loc,
            )
        })?;
        p.set_tagsize(n, loc)
    }

    /// The tag size of messages sent in this superstep.
    pub fn send_tagsize(&self) -> usize {
        self.process.borrow().send_tag_size()
    }

    /// `bsp_send`: copies `tag` and `payload` now and delivers them to the
    /// queue of process `pid` in the next superstep. Zero-length tags and
    /// payloads still make a message.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::TagLength`] if
    /// `tag.len()` is not the tag size in force ([`send_tagsize`](Bsp::send_tagsize)).
    ///
    /// # BSP cost
    ///
    /// Tag plus payload bytes towards both h-relations.
    #[track_caller]
    pub fn send(&self, pid: usize, tag: &[u8], payload: &[u8]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        let expected = p.send_tag_size();
        if tag.len() != expected {
            return Err(p.fail(
                ErrorKind::TagLength {
                    given: tag.len(),
                    expected,
                },
                "bsp_send",
                loc,
            ));
        }
        // SAFETY: both are live slices of the stated lengths.
        unsafe {
            p.send(
                pid_arg(pid),
                tag.as_ptr(),
                payload.as_ptr(),
                payload.len() as i64,
                loc,
            )
        }
    }

    /// [`send`](Bsp::send) of plain-old-data: the bytes of `tag` and of
    /// `payload`.
    ///
    /// # Errors
    ///
    /// As for [`send`](Bsp::send).
    #[track_caller]
    pub fn send_pod<Tag: Pod, T: Pod>(
        &self,
        pid: usize,
        tag: &Tag,
        payload: &[T],
    ) -> Result<(), Error> {
        self.send(pid, bytemuck::bytes_of(tag), bytemuck::cast_slice(payload))
    }

    /// `bsp_qsize`: `(messages, payload bytes)` still in the queue.
    ///
    /// # BSP cost
    ///
    /// Local.
    pub fn qsize(&self) -> (usize, usize) {
        self.process.borrow().inbox.size()
    }

    /// `bsp_get_tag`: copies the first message's tag into the front of
    /// `tag` and returns its payload length, or `None` if the queue is
    /// empty (C's status -1). The message stays in the queue.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LocalBounds`] if `tag` is shorter than the tag size of
    /// the queue.
    #[track_caller]
    pub fn get_tag(&self, tag: &mut [u8]) -> Result<Option<usize>, Error> {
        let loc = Some(SourceLocation::caller());
        let p = self.process();
        let Some(m) = p.inbox.front() else {
            return Ok(None);
        };
        if tag.len() < m.tag_len {
            return Err(p.fail(
                ErrorKind::LocalBounds {
                    what: "tag buffer",
                    needed: m.tag_len,
                    available: tag.len(),
                },
                "bsp_get_tag",
                loc,
            ));
        }
        // SAFETY: the queue's tag bytes are readable until the next sync
        // (Inbox docs); `tag` has room for them.
        unsafe { crate::mem::copy(m.tag, tag.as_mut_ptr(), m.tag_len) };
        Ok(Some(m.len))
    }

    /// `bsp_move`: copies the first message's payload into `buf`, truncated
    /// to `buf.len()`, removes the message, and returns the number of bytes
    /// copied.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EmptyQueue`] if there is no message.
    #[track_caller]
    pub fn move_payload(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let loc = Some(SourceLocation::caller());
        // SAFETY: `buf` is writable for `buf.len()` bytes.
        unsafe {
            self.process()
                .move_payload(buf.as_mut_ptr(), buf.len() as i64, loc)
        }
    }

    /// `bsp_hpmove`: removes the first message from the queue and returns
    /// views of its tag and payload, without copying, or `None` if the
    /// queue is empty.
    ///
    /// BSPlib makes the caller promise not to use the pointers after the
    /// superstep; here the borrow checker does: the views borrow `self`,
    /// and [`sync`](Bsp::sync) needs `&mut self`. So this function is safe.
    /// Tag and payload start 8-byte aligned.
    pub fn hpmove(&self) -> Option<Message<'_>> {
        let m = self.process().inbox.pop_front()?;
        // SAFETY: the message's bytes stay allocated and unchanged until the
        // first barrier of the next sync (Inbox docs), which cannot start
        // while the returned borrow of `self` lives.
        let (tag, payload) = unsafe {
            (
                std::slice::from_raw_parts(m.tag, m.tag_len),
                std::slice::from_raw_parts(m.payload, m.len),
            )
        };
        Some(Message { tag, payload })
    }

    /// The raw layer: BSPlib's pointer API, for the C interface and for
    /// callers that manage memory themselves.
    pub fn raw(&self) -> crate::raw::Raw<'_> {
        crate::raw::Raw::new(self)
    }
}

/// A message taken from the queue by [`Bsp::hpmove`], valid for the rest of
/// the superstep.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    tag: &'a [u8],
    payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// The tag bytes.
    pub fn tag(&self) -> &'a [u8] {
        self.tag
    }

    /// The payload bytes.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// The tag read as a `T`, if it has `size_of::<T>()` bytes.
    pub fn tag_as<T: Pod>(&self) -> Option<T> {
        (self.tag.len() == std::mem::size_of::<T>()).then(|| bytemuck::pod_read_unaligned(self.tag))
    }

    /// The payload as a slice of `T`, if its length is a multiple of
    /// `size_of::<T>()` (the payload is 8-byte aligned, so this works for
    /// any `T` with alignment up to 8).
    pub fn payload_as<T: Pod>(&self) -> Option<&'a [T]> {
        bytemuck::try_cast_slice(self.payload).ok()
    }
}

/// Converts a typed element range to the byte offset and length of the raw
/// layer, failing on overflow.
fn typed_range<T>(
    p: &Process,
    offset: usize,
    len: usize,
    call: &'static str,
    loc: Option<SourceLocation>,
) -> Result<(i64, i64), Error> {
    let size = std::mem::size_of::<T>();
    let bytes = |n: usize, what| {
        n.checked_mul(size)
            .and_then(|b| i64::try_from(b).ok())
            .ok_or_else(|| p.fail(ErrorKind::Overflow { what }, call, loc))
    };
    Ok((bytes(offset, "offset")?, bytes(len, "length")?))
}

/// A `usize` pid for the core's signed check (huge values stay out of range).
#[inline]
pub(crate) fn pid_arg(pid: usize) -> i64 {
    i64::try_from(pid).unwrap_or(i64::MAX)
}

/// Data [`Bsp::put_owned`] can take over: `Vec<T>`, `Box<[T]>`,
/// `Arc<[T]>` and `Arc<Vec<T>>`, whose elements live in a heap block that
/// stays put when the value moves and that nobody can change while the
/// library holds the value. Sealed: other types cannot promise that.
pub trait Owned<T>: sealed::Sealed + 'static {
    /// The elements.
    fn elements(&self) -> &[T];
}

mod sealed {
    pub trait Sealed {}
    impl<T: 'static> Sealed for Vec<T> {}
    impl<T: 'static> Sealed for Box<[T]> {}
    impl<T: 'static> Sealed for std::sync::Arc<[T]> {}
    impl<T: 'static> Sealed for std::sync::Arc<Vec<T>> {}
}

impl<T: Pod> Owned<T> for Vec<T> {
    fn elements(&self) -> &[T] {
        self
    }
}

impl<T: Pod> Owned<T> for Box<[T]> {
    fn elements(&self) -> &[T] {
        self
    }
}

impl<T: Pod> Owned<T> for std::sync::Arc<[T]> {
    fn elements(&self) -> &[T] {
        self
    }
}

impl<T: Pod> Owned<T> for std::sync::Arc<Vec<T>> {
    fn elements(&self) -> &[T] {
        self
    }
}
