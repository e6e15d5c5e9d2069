//! DRMA on the handle: `put`, `put_owned`, `get` and their typed
//! ranges (element offsets and lengths turned into the core's bytes).

use super::*;

impl Bsp {
    /// `bsp_put`: copies `src` now and writes it at the next sync into the
    /// area registered on process `pid` in the slot of `dst`, starting at
    /// element `offset`. A put to oneself also lands at the sync.
    ///
    /// Every transfer takes its arguments in one order: the target process,
    /// where (the area and the offset there, in elements), the data.
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
    ///     bsp.put(bsp.nprocs() - bsp.pid() - 1, &x, 0, &[v])?;
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
        dst: &Area<T>,
        offset: usize,
        src: &[T],
    ) -> Result<(), Error> {
        self.put_at(pid, dst, offset, src, Some(SourceLocation::caller()))
    }

    /// [`put`](Bsp::put) at `loc` (the one-sided epochs' guards).
    pub(crate) fn put_at<T: Pod>(
        &self,
        pid: usize,
        dst: &Area<T>,
        offset: usize,
        src: &[T],
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let mut p = self.process_of::<T>();
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
    /// data may be copied at any time until the end of the next sync. On
    /// `threads` and `serial` the receiver copies it during the sync, once,
    /// straight from `src`; on `processes` too when `src` lies in an
    /// [`Area`] of 4 KiB or more (areas that large live in memory every
    /// process maps), else it is copied at the call and again at the sync;
    /// on `mpi` it is sent from `src` from 32 KiB.
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
    /// As for [`put`](Bsp::put), with one copy instead of two where the
    /// receiver can read `src` (above).
    #[track_caller]
    pub unsafe fn hpput<T: Pod>(
        &self,
        pid: usize,
        dst: &Area<T>,
        offset: usize,
        src: &[T],
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process_of::<T>();
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
    ///         bsp.put_owned(to, &all, 2 * me, Arc::clone(&block))?;
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
        dst: &Area<T>,
        offset: usize,
        data: D,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process_of::<T>();
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

    /// `bsp_get`: at the next sync, reads `dst.len()` elements from element
    /// `offset` of the area registered on process `pid` in the slot of `src`
    /// (their value at the end of this superstep, on `pid`) and writes them
    /// into `dst`, before any put data is written. `dst` is an area (`&y`,
    /// all of it) or part of one ([`y.range(a..b)`](Area::range)).
    ///
    /// # Errors
    ///
    /// As for [`put`](Bsp::put), the extent check applying to `src` on
    /// `pid`; [`ErrorKind::LocalBounds`] if `dst` is too short.
    ///
    /// # BSP cost
    ///
    /// `dst.len() * size_of::<T>()` bytes towards `pid`'s outgoing and this
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
    ///     bsp.get(left, &x, 0, &x)?;
    ///     bsp.sync()?;
    ///     Ok(x.as_slice(bsp)[0])
    /// })?;
    /// assert_eq!(r, vec![20, 0, 10]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn get<'a, T: Pod>(
        &self,
        pid: usize,
        src: &Area<T>,
        offset: usize,
        dst: impl Into<AreaRange<'a, T>>,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        // SAFETY: `get_into` checks `dst` and keeps its storage alive until
        // the sync writes it; views of `dst` cannot live across the sync.
        unsafe { self.get_into(pid, src, offset, dst.into(), false, loc) }
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
    #[track_caller]
    pub unsafe fn hpget<'a, T: Pod>(
        &self,
        pid: usize,
        src: &Area<T>,
        offset: usize,
        dst: impl Into<AreaRange<'a, T>>,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        // SAFETY: the caller accepts the unbuffered contract above.
        unsafe { self.get_into(pid, src, offset, dst.into(), true, loc) }
    }

    /// Shared body of `get` and `hpget`.
    ///
    /// # Safety
    ///
    /// For `hp`, the caller's `hpget` contract.
    pub(crate) unsafe fn get_into<T: Pod>(
        &self,
        pid: usize,
        src: &Area<T>,
        offset: usize,
        dst: AreaRange<'_, T>,
        hp: bool,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let call = if hp { "bsp_hpget" } else { "bsp_get" };
        let mut p = self.process_of::<T>();
        self.own(&p, src, call, loc)?;
        let AreaRange {
            area: dst,
            start: dst_offset,
            end,
        } = dst;
        self.own(&p, dst, call, loc)?;
        if dst_offset > end || end > dst.len() {
            let size = std::mem::size_of::<T>();
            return Err(p.fail(
                ErrorKind::LocalBounds {
                    what: "destination area",
                    needed: end.max(dst_offset).saturating_mul(size),
                    available: dst.size_bytes(),
                    elem: size,
                },
                call,
                loc,
            ));
        }
        let len = end - dst_offset;
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
