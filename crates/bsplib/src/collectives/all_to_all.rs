//! All-to-all, the paper's total exchange: [`Collectives::all_to_all`](crate::Collectives::all_to_all).

use bytemuck::Pod;

use super::{lost_p, Call, Collectives, Path, NAMES};
use crate::bsp::Bsp;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::Loc;

impl Bsp {
    /// [`all_to_all`](Collectives::all_to_all) as collective `kind` of [`NAMES`].
    pub(super) fn all_to_all_as<T: Pod>(
        &mut self,
        kind: usize,
        src: &[T],
        dst: &mut [T],
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[kind];
        let size = std::mem::size_of::<T>();
        let n = self.nprocs();
        if src.len() != dst.len() || src.len() % n != 0 {
            let p = &mut *self.process();
            return Err(p.fail(
                ErrorKind::LocalBounds {
                    what: "all_to_all destination (as long as the source, a multiple of p)",
                    needed: src.len().next_multiple_of(n) * size,
                    available: std::mem::size_of_val(dst),
                    elem: size,
                },
                name,
                loc,
            ));
        }
        let k = src.len() / n;
        let s: &[u8] = bytemuck::cast_slice(src);
        let call = Call {
            kind,
            root: 0,
            nbytes: s.len(),
            op: 0,
            path: Path::One,
        };
        let got = self.collective(
            call,
            loc,
            |p| {
                let me = p.pid;
                for q in (0..p.nprocs).filter(|&q| q != me) {
                    p.coll_put(q, &s[q * k * size..(q + 1) * k * size], name, loc)?;
                }
                Ok(())
            },
            |p| {
                (0..p.nprocs)
                    .map(|q| {
                        if q == p.pid {
                            Ok(s[q * k * size..(q + 1) * k * size].to_vec())
                        } else {
                            p.coll_data(q, k * size)
                                .map(<[u8]>::to_vec)
                                .ok_or_else(|| lost_p(p, name, q, loc))
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()
            },
        )?;
        let d: &mut [u8] = bytemuck::cast_slice_mut(dst);
        for (q, block) in got.iter().enumerate() {
            d[q * k * size..(q + 1) * k * size].copy_from_slice(block);
        }
        Ok(())
    }
}

impl Collectives<'_> {
    /// All-to-all (the paper's total exchange): `src` and `dst` hold `p ·
    /// k` elements; block `j` of `src` on process `i` becomes block `i` of
    /// `dst` on process `j`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LocalBounds`] if `src` and `dst` differ in length or
    /// their length is not a multiple of `p`; as for
    /// [`broadcast`](Collectives::broadcast).
    ///
    /// # BSP cost
    ///
    /// One superstep: `(p - 1)·k·g + l` for blocks of `k` bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| {
    ///     let me = bsp.pid() as u8;
    ///     let mut dst = [0u8; 2];
    ///     bsp.collectives().all_to_all(&[10 * me, 10 * me + 1], &mut dst)?;
    ///     Ok(dst)
    /// })?;
    /// assert_eq!(r, [[0, 10], [1, 11]]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn all_to_all<T: Pod>(&mut self, src: &[T], dst: &mut [T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp.all_to_all_as(4, src, dst, loc)
    }
}
