//! Strided and io-vector puts and gets: many blocks in one call (a matrix
//! column, a block of a 2-D array, a list of pieces).

use bytemuck::Pod;

use crate::bsp::area::Area;
use crate::bsp::{pid_arg, Bsp};
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::mem::Shape;
use crate::process::Process;

/// A strided selection of elements: `count` blocks of `block` consecutive
/// elements, block `k` starting at element `start + k * stride`. Counts
/// are in elements of the transfer's type, as every offset of the Rust
/// API is.
///
/// # Examples
///
/// Column 2 of a row-major 4 × 5 matrix is elements 2, 7, 12 and 17:
///
/// ```
/// use bsplib::Strided;
/// let col = Strided::column(2, 4, 5);
/// assert_eq!(col, Strided::new(2, 1, 5, 4));
/// assert_eq!(col.len(), 4);
/// assert_eq!(col.indices().collect::<Vec<_>>(), [2, 7, 12, 17]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Strided {
    /// The first element of the first block.
    pub start: usize,
    /// Elements per block.
    pub block: usize,
    /// Elements from the start of one block to the start of the next.
    pub stride: usize,
    /// The number of blocks.
    pub count: usize,
}

impl Strided {
    /// `count` blocks of `block` elements, `stride` apart, from `start`.
    pub const fn new(start: usize, block: usize, stride: usize, count: usize) -> Strided {
        Strided {
            start,
            block,
            stride,
            count,
        }
    }

    /// The `len` elements from `start`: one block.
    pub const fn contiguous(start: usize, len: usize) -> Strided {
        Strided::new(start, len, len, 1)
    }

    /// Column `col` of a row-major matrix of `rows` rows of `row_len`
    /// elements: `rows` blocks of one element, `row_len` apart.
    pub const fn column(col: usize, rows: usize, row_len: usize) -> Strided {
        Strided::new(col, 1, row_len, rows)
    }

    /// The elements selected (`block * count`, saturating).
    pub const fn len(&self) -> usize {
        self.block.saturating_mul(self.count)
    }

    /// Whether no element is selected.
    pub const fn is_empty(&self) -> bool {
        self.block == 0 || self.count == 0
    }

    /// The index of every element selected, in transfer order (the order
    /// in which data flows between the two sides).
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.count)
            .flat_map(move |k| (0..self.block).map(move |i| self.start + k * self.stride + i))
    }

    /// The element after the last one selected (`start` when none is);
    /// `None` on overflow.
    pub(crate) fn end(&self) -> Option<usize> {
        if self.is_empty() {
            return Some(self.start);
        }
        (self.count - 1)
            .checked_mul(self.stride)?
            .checked_add(self.block)?
            .checked_add(self.start)
    }

    /// The byte offset of the first element and the byte shape.
    fn bytes<T>(
        &self,
        p: &Process,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(usize, Shape), Error> {
        let size = std::mem::size_of::<T>();
        let b = |n: usize, what| {
            n.checked_mul(size)
                .ok_or_else(|| p.fail(ErrorKind::Overflow { what }, call, loc))
        };
        Ok((
            b(self.start, "offset")?,
            Shape {
                block: b(self.block, "block")?,
                stride: b(self.stride, "stride")?,
                count: self.count,
            },
        ))
    }
}

/// One piece of an io-vector transfer ([`Bsp::put_vec`], [`Bsp::get_vec`]):
/// `len` elements from element `src` of the source to element `dst` of the
/// destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// The first element on the source side.
    pub src: usize,
    /// The first element on the destination side.
    pub dst: usize,
    /// Elements.
    pub len: usize,
}

impl Piece {
    /// `len` elements from `src` to `dst`.
    pub const fn new(src: usize, dst: usize, len: usize) -> Piece {
        Piece { src, dst, len }
    }
}

/// The error of a selection that does not fit a local buffer of `len`
/// elements of `T`, if it does not.
fn local_fit<T>(
    p: &Process,
    s: &Strided,
    len: usize,
    what: &'static str,
    call: &'static str,
    loc: Option<SourceLocation>,
) -> Result<(), Error> {
    let size = std::mem::size_of::<T>();
    match s.end() {
        Some(end) if end <= len || s.is_empty() => Ok(()),
        end => Err(p.fail(
            ErrorKind::LocalBounds {
                what,
                needed: end.map_or(usize::MAX, |e| e.saturating_mul(size)),
                available: len.saturating_mul(size),
                elem: size,
            },
            call,
            loc,
        )),
    }
}

impl Bsp {
    /// A strided put: copies the elements of `src` selected by `from` now,
    /// and writes them at the next sync, in order, into the elements
    /// selected by `to` of the area registered on process `pid` in the
    /// slot of `dst`. `from` and `to` select the same number of elements,
    /// in blocks of any sizes; `to`'s blocks must not overlap. One record
    /// carries the whole transfer, and the owner checks its shape against
    /// the extent it registered: a matrix column of `n` elements costs one
    /// put of `n` elements, not `n` puts.
    ///
    /// # Errors
    ///
    /// As for [`put`](Bsp::put), the extent check applying to the span of
    /// `to` (from its first element to the end of its last block);
    /// [`ErrorKind::LocalBounds`] if `from` does not fit `src`;
    /// [`ErrorKind::ShapeMismatch`] if `from` and `to` select different
    /// numbers of elements; [`ErrorKind::OverlappingBlocks`] if `to`'s
    /// stride is less than its block (with more than one block).
    ///
    /// # BSP cost
    ///
    /// `from.len() * size_of::<T>()` bytes towards this process's
    /// outgoing and `pid`'s incoming h-relation, and 40 bytes of record.
    ///
    /// # Examples
    ///
    /// Every process sends its column of a row-major 3 × 3 matrix to
    /// process 0, into the matching column:
    ///
    /// ```
    /// use bsplib::{Area, Strided};
    /// let r = bsplib::run(3, |bsp| {
    ///     let (me, n) = (bsp.pid(), 3);
    ///     let m = Area::<f64>::new(bsp, n * n);
    ///     bsp.push_reg(&m)?;
    ///     bsp.sync()?;
    ///     let mine = [me as f64; 3];
    ///     let col = Strided::column(me, n, n);
    ///     bsp.put_strided(0, &m, col, &mine, Strided::contiguous(0, n))?;
    ///     bsp.sync()?;
    ///     Ok(m.as_slice(bsp).to_vec())
    /// })?;
    /// assert_eq!(r[0], [0., 1., 2., 0., 1., 2., 0., 1., 2.]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn put_strided<T: Pod>(
        &self,
        pid: usize,
        dst: &Area<T>,
        to: Strided,
        src: &[T],
        from: Strided,
    ) -> Result<(), Error> {
        const CALL: &str = "bsp_put_strided";
        let loc = Some(SourceLocation::caller());
        let mut p = self.process_of::<T>();
        self.own(&p, dst, CALL, loc)?;
        local_fit::<T>(&p, &from, src.len(), "source", CALL, loc)?;
        let (first, from_b) = from.bytes::<T>(&p, CALL, loc)?;
        let (offset, to_b) = to.bytes::<T>(&p, CALL, loc)?;
        // SAFETY: every block of `from` lies in `src` (checked above),
        // which is copied before the call returns.
        unsafe {
            p.put_strided(
                pid_arg(pid),
                src.as_ptr().cast::<u8>().wrapping_add(first),
                from_b,
                dst.addr(),
                offset,
                to_b,
                CALL,
                loc,
            )
        }
    }

    /// A strided get: at the next sync, reads the elements selected by
    /// `from` of the area registered on process `pid` in the slot of `src`
    /// (their values at the end of this superstep) and writes them, in
    /// order, into the elements of `dst` selected by `to`, before any put
    /// data is written. `from` and `to` select the same number of
    /// elements; `to`'s blocks must not overlap.
    ///
    /// # Errors
    ///
    /// As for [`get`](Bsp::get), the extent check applying to the span of
    /// `from`; [`ErrorKind::LocalBounds`] if `to` does not fit `dst`;
    /// [`ErrorKind::ShapeMismatch`] and [`ErrorKind::OverlappingBlocks`]
    /// as for [`put_strided`](Bsp::put_strided).
    ///
    /// # BSP cost
    ///
    /// `from.len() * size_of::<T>()` bytes towards `pid`'s outgoing and
    /// this process's incoming h-relation; the sync gets a second barrier.
    ///
    /// # Examples
    ///
    /// Process 0 collects the diagonal of everyone's 2 × 2 block:
    ///
    /// ```
    /// use bsplib::{Area, Strided};
    /// let r = bsplib::run(2, |bsp| {
    ///     let me = bsp.pid() as u32;
    ///     let block = Area::from_vec(bsp, vec![10 * me, 1, 2, 10 * me + 3]);
    ///     let diag = Area::<u32>::new(bsp, 4);
    ///     bsp.push_reg(&block)?;
    ///     bsp.sync()?;
    ///     if me == 0 {
    ///         for q in 0..2 {
    ///             let to = Strided::contiguous(2 * q, 2);
    ///             bsp.get_strided(q, &block, Strided::new(0, 1, 3, 2), &diag, to)?;
    ///         }
    ///     }
    ///     bsp.sync()?;
    ///     Ok(diag.as_slice(bsp).to_vec())
    /// })?;
    /// assert_eq!(r[0], [0, 3, 10, 13]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn get_strided<T: Pod>(
        &self,
        pid: usize,
        src: &Area<T>,
        from: Strided,
        dst: &Area<T>,
        to: Strided,
    ) -> Result<(), Error> {
        const CALL: &str = "bsp_get_strided";
        let loc = Some(SourceLocation::caller());
        let mut p = self.process_of::<T>();
        self.own(&p, src, CALL, loc)?;
        self.own(&p, dst, CALL, loc)?;
        local_fit::<T>(&p, &to, dst.len(), "destination area", CALL, loc)?;
        let (offset, from_b) = from.bytes::<T>(&p, CALL, loc)?;
        let (first, to_b) = to.bytes::<T>(&p, CALL, loc)?;
        // SAFETY: every block of `to` lies inside `dst` (checked above),
        // whose storage the keepalive holds until the sync; the sync needs
        // `&mut Bsp`, so no local view of it is alive when it is written.
        unsafe {
            p.get_strided(
                pid_arg(pid),
                src.addr(),
                offset,
                from_b,
                dst.ptr().wrapping_add(first),
                to_b,
                Some(dst.keepalive()),
                CALL,
                loc,
            )
        }
    }

    /// An io-vector put: for each piece, copies `src[piece.src..][..piece.len]`
    /// now and writes it at the next sync from element `piece.dst` of the
    /// area registered on process `pid` in the slot of `dst`, in piece
    /// order (a later piece wins where two overlap). One put per piece,
    /// with one call.
    ///
    /// # Errors
    ///
    /// As for [`put`](Bsp::put), for each piece; [`ErrorKind::LocalBounds`]
    /// if a piece does not fit `src`. Pieces before a failing one are sent.
    ///
    /// # BSP cost
    ///
    /// The pieces' bytes towards this process's outgoing and `pid`'s
    /// incoming h-relation, and 24 bytes of record per piece.
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{Area, Piece};
    /// let r = bsplib::run(2, |bsp| {
    ///     let a = Area::<u8>::new(bsp, 6);
    ///     bsp.push_reg(&a)?;
    ///     bsp.sync()?;
    ///     let pieces = [Piece::new(0, 4, 2), Piece::new(2, 0, 3)];
    ///     bsp.put_vec(1 - bsp.pid(), &a, &pieces, b"abcde")?;
    ///     bsp.sync()?;
    ///     Ok(a.as_slice(bsp).to_vec())
    /// })?;
    /// assert_eq!(r[0], [b'c', b'd', b'e', 0, b'a', b'b']);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn put_vec<T: Pod>(
        &self,
        pid: usize,
        dst: &Area<T>,
        pieces: &[Piece],
        src: &[T],
    ) -> Result<(), Error> {
        const CALL: &str = "bsp_put_vec";
        let loc = Some(SourceLocation::caller());
        let mut p = self.process_of::<T>();
        self.own(&p, dst, CALL, loc)?;
        for piece in pieces {
            let from = Strided::contiguous(piece.src, piece.len);
            local_fit::<T>(&p, &from, src.len(), "source", CALL, loc)?;
            let (first, shape) = from.bytes::<T>(&p, CALL, loc)?;
            let (offset, _) = Strided::contiguous(piece.dst, 0).bytes::<T>(&p, CALL, loc)?;
            // SAFETY: the piece lies in `src` (checked above), which is
            // copied before the call returns.
            unsafe {
                p.put_strided(
                    pid_arg(pid),
                    src.as_ptr().cast::<u8>().wrapping_add(first),
                    shape,
                    dst.addr(),
                    offset,
                    shape,
                    CALL,
                    loc,
                )?
            };
        }
        Ok(())
    }

    /// An io-vector get: for each piece, at the next sync, reads
    /// `piece.len` elements from element `piece.src` of the area
    /// registered on process `pid` in the slot of `src` and writes them
    /// from element `piece.dst` of `dst`, in piece order.
    ///
    /// # Errors
    ///
    /// As for [`get`](Bsp::get), for each piece. Pieces before a failing
    /// one are requested.
    ///
    /// # BSP cost
    ///
    /// The pieces' bytes towards `pid`'s outgoing and this process's
    /// incoming h-relation; the sync gets a second barrier.
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{Area, Piece};
    /// let r = bsplib::run(2, |bsp| {
    ///     let a = Area::from_vec(bsp, vec![bsp.pid() as u16 * 10; 3]);
    ///     let b = Area::<u16>::new(bsp, 4);
    ///     bsp.push_reg(&a)?;
    ///     bsp.sync()?;
    ///     let pieces = [Piece::new(0, 0, 1), Piece::new(1, 2, 2)];
    ///     bsp.get_vec(1 - bsp.pid(), &a, &pieces, &b)?;
    ///     bsp.sync()?;
    ///     Ok(b.as_slice(bsp).to_vec())
    /// })?;
    /// assert_eq!(r, [[10, 0, 10, 10], [0, 0, 0, 0]]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn get_vec<T: Pod>(
        &self,
        pid: usize,
        src: &Area<T>,
        pieces: &[Piece],
        dst: &Area<T>,
    ) -> Result<(), Error> {
        const CALL: &str = "bsp_get_vec";
        let loc = Some(SourceLocation::caller());
        let mut p = self.process_of::<T>();
        self.own(&p, src, CALL, loc)?;
        self.own(&p, dst, CALL, loc)?;
        for piece in pieces {
            let to = Strided::contiguous(piece.dst, piece.len);
            local_fit::<T>(&p, &to, dst.len(), "destination area", CALL, loc)?;
            let (first, shape) = to.bytes::<T>(&p, CALL, loc)?;
            let (offset, _) = Strided::contiguous(piece.src, 0).bytes::<T>(&p, CALL, loc)?;
            // SAFETY: as in `get_strided`: the piece lies inside `dst`,
            // held until the sync, with no view alive when it is written.
            unsafe {
                p.get_strided(
                    pid_arg(pid),
                    src.addr(),
                    offset,
                    shape,
                    dst.ptr().wrapping_add(first),
                    shape,
                    Some(dst.keepalive()),
                    CALL,
                    loc,
                )?
            };
        }
        Ok(())
    }
}
