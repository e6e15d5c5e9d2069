//! Gather, all-gather and scatter: [`Collectives::gather`](crate::Collectives::gather), [`Collectives::all_gather`](crate::Collectives::all_gather)
//! and [`Collectives::scatter`](crate::Collectives::scatter), in one superstep.

use bytemuck::Pod;

use super::{lost, lost_p, to_vec, Call, Collectives, Path, NAMES};
use crate::bsp::Bsp;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::Loc;

impl Bsp {
    /// [`scatter`](Collectives::scatter) as collective `kind` of [`NAMES`].
    pub(super) fn scatter_as<T: Pod>(
        &mut self,
        kind: usize,
        root: usize,
        src: Option<&[T]>,
        dst: &mut [T],
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[kind];
        let size = std::mem::size_of::<T>();
        let k = dst.len();
        {
            let p = &mut *self.process();
            let needed = k.saturating_mul(p.nprocs);
            if p.pid == root && src.is_none_or(|s| s.len() != needed) {
                return Err(p.fail(
                    ErrorKind::LocalBounds {
                        what: "scatter source",
                        needed: needed.saturating_mul(size),
                        available: src.map_or(0, std::mem::size_of_val),
                        elem: size,
                    },
                    name,
                    loc,
                ));
            }
        }
        let call = Call {
            kind,
            root,
            nbytes: std::mem::size_of_val(dst),
            op: 0,
            path: Path::One,
        };
        let got = self.collective(
            call,
            loc,
            |p| {
                if p.pid == root {
                    let s: &[u8] = bytemuck::cast_slice(src.unwrap_or_default());
                    for q in (0..p.nprocs).filter(|&q| q != root) {
                        p.coll_put(q, &s[q * k * size..(q + 1) * k * size], name, loc)?;
                    }
                }
                Ok(())
            },
            |p| {
                let len = std::mem::size_of_val(dst);
                Ok((p.pid != root).then(|| p.coll_data(root, len).map(<[u8]>::to_vec)))
            },
        )?;
        match got {
            Some(got) => {
                let got = got.ok_or_else(|| lost(self, name, root, loc))?;
                bytemuck::cast_slice_mut::<T, u8>(dst).copy_from_slice(&got);
            }
            None => {
                let me = self.pid();
                dst.copy_from_slice(&src.unwrap_or_default()[me * k..(me + 1) * k]);
            }
        }
        Ok(())
    }

    /// Gather to `root`, or to everyone (`None`), as collective `kind`
    /// with operator `op` (reductions gather, then fold).
    pub(crate) fn gather_to_as<T: Pod>(
        &mut self,
        root: Option<usize>,
        data: &[T],
        kind: usize,
        op: u64,
        loc: Loc,
    ) -> Result<Option<Vec<T>>, Error> {
        let name = NAMES[kind];
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let call = Call {
            kind,
            root: root.unwrap_or(0),
            nbytes: bytes.len(),
            op,
            path: Path::One,
        };
        let parts = self.collective(
            call,
            loc,
            |p| {
                for q in 0..p.nprocs {
                    if q != p.pid && root.is_none_or(|r| r == q) {
                        p.coll_put(q, bytes, name, loc)?;
                    }
                }
                Ok(())
            },
            |p| {
                if root.is_some_and(|r| r != p.pid) {
                    return Ok(None);
                }
                let mut all = Vec::with_capacity(bytes.len() * p.nprocs);
                for q in 0..p.nprocs {
                    if q == p.pid {
                        all.extend_from_slice(bytes);
                    } else {
                        match p.coll_data(q, bytes.len()) {
                            Some(d) => all.extend_from_slice(d),
                            None => return Err(lost_p(p, name, q, loc)),
                        }
                    }
                }
                Ok(Some(all))
            },
        )?;
        Ok(parts.map(|b| to_vec(&b)))
    }
}

impl Collectives<'_> {
    /// Gather: process `root` gets every process's `data`, concatenated in
    /// pid order (`Some` on the root, `None` elsewhere). Every process
    /// gives as many elements.
    ///
    /// # Errors
    ///
    /// As for [`broadcast`](Collectives::broadcast).
    ///
    /// # BSP cost
    ///
    /// One superstep: `(p - 1)·n·g + l` (the root receives `n` bytes from
    /// each other process).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| {
    ///     let mine = bsp.pid() as u8 * 10;
    ///     bsp.collectives().gather(0, &[mine])
    /// })?;
    /// assert_eq!(r, [Some(vec![0, 10, 20]), None, None]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn gather<T: Pod>(&mut self, root: usize, data: &[T]) -> Result<Option<Vec<T>>, Error> {
        let loc = Some(SourceLocation::caller());
        let all = self.bsp.gather_to_as(Some(root), data, 1, 0, loc)?;
        Ok(all)
    }

    /// All-gather: every process gets every process's `data`, concatenated
    /// in pid order. Every process gives as many elements.
    ///
    /// # Errors
    ///
    /// As for [`broadcast`](Collectives::broadcast).
    ///
    /// # BSP cost
    ///
    /// One superstep: `(p - 1)·n·g + l`.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| {
    ///     let mine = bsp.pid() as i16;
    ///     bsp.collectives().all_gather(&[mine; 2])
    /// })?;
    /// assert_eq!(r, [[0, 0, 1, 1], [0, 0, 1, 1]]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn all_gather<T: Pod>(&mut self, data: &[T]) -> Result<Vec<T>, Error> {
        let loc = Some(SourceLocation::caller());
        let all = self.bsp.gather_to_as(None, data, 3, 0, loc)?;
        Ok(all.unwrap_or_default())
    }

    /// Scatter: process `root` gives `src` (`p · dst.len()` elements; the
    /// others give `None`), and every process `i` gets elements `i ·
    /// dst.len() ..` of it in `dst`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LocalBounds`] if the root's `src` does not hold `p ·
    /// dst.len()` elements (or is `None`); as for
    /// [`broadcast`](Collectives::broadcast).
    ///
    /// # BSP cost
    ///
    /// One superstep: `(p - 1)·n·g + l` for `n` bytes per process.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| {
    ///     let all: Vec<u32> = (0..6).collect();
    ///     let src = (bsp.pid() == 2).then_some(&all[..]);
    ///     let mut mine = [0u32; 2];
    ///     bsp.collectives().scatter(2, src, &mut mine)?;
    ///     Ok(mine)
    /// })?;
    /// assert_eq!(r, [[0, 1], [2, 3], [4, 5]]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn scatter<T: Pod>(
        &mut self,
        root: usize,
        src: Option<&[T]>,
        dst: &mut [T],
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp.scatter_as(2, root, src, dst, loc)
    }
}
