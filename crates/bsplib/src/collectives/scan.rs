//! Scans: inclusive and exclusive, with a closure or a named operator;
//! process `i` folds, in pid order, the data of those before it.

use bytemuck::Pod;

use super::reduce::fold_call;
use super::{lost_p, to_vec, Call, Collectives, Op, Path, Reducible, NAMES};
use crate::bsp::Bsp;
use crate::error::{Error, SourceLocation};
use crate::process::Loc;

impl Bsp {
    /// Scans: process `i` sends its data to every process after it, and
    /// folds what came from those before it (and its own, if inclusive).
    pub(super) fn prefix<T: Pod, F: Fn(&T, &T) -> T>(
        &mut self,
        data: &[T],
        op: u64,
        kind: usize,
        inclusive: bool,
        f: &F,
        loc: Loc,
    ) -> Result<Option<Vec<T>>, Error> {
        let name = NAMES[kind];
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let call = Call {
            kind,
            root: 0,
            nbytes: bytes.len(),
            op,
            path: Path::One,
        };
        let before = self.collective(
            call,
            loc,
            |p| {
                for q in p.pid + 1..p.nprocs {
                    p.coll_put(q, bytes, name, loc)?;
                }
                Ok(())
            },
            |p| {
                (0..p.pid)
                    .map(|q| {
                        p.coll_data(q, bytes.len())
                            .map(to_vec::<T>)
                            .ok_or_else(|| lost_p(p, name, q, loc))
                    })
                    .collect::<Result<Vec<_>, _>>()
            },
        )?;
        let mut parts = before.into_iter();
        let mut acc = match parts.next() {
            Some(first) => first,
            None if inclusive => return Ok(Some(data.to_vec())),
            None => return Ok(None),
        };
        let rest = parts.chain(inclusive.then(|| data.to_vec()));
        self.process().call_user(fold_call(kind, op), loc, || {
            for x in rest {
                for (a, b) in acc.iter_mut().zip(&x) {
                    *a = f(a, b);
                }
            }
        });
        Ok(Some(acc))
    }
}

impl Collectives<'_> {
    /// Inclusive scan with a closure: process `i` gets `x0 ⊕ … ⊕ xi` in
    /// `data`, element by element, combined in pid order.
    ///
    /// # Errors
    ///
    /// As for [`reduce_with`](Collectives::reduce_with).
    ///
    /// # Panics
    ///
    /// As for [`reduce_with`](Collectives::reduce_with).
    ///
    /// # BSP cost
    ///
    /// One superstep: process `i` sends `n` bytes to each of the `p - 1 -
    /// i` after it: `(p - 1)·n·g + l`.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(4, |bsp| {
    ///     let mut x = [bsp.pid() as i32 + 1];
    ///     bsp.collectives().scan_with(&mut x, |a, b| a + b)?;
    ///     Ok(x[0])
    /// })?;
    /// assert_eq!(r, [1, 3, 6, 10]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn scan_with<T: Pod>(
        &mut self,
        data: &mut [T],
        f: impl Fn(&T, &T) -> T,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let r = self.bsp.prefix(data, 0, 7, true, &f, loc)?;
        data.copy_from_slice(&r.unwrap_or_default());
        Ok(())
    }

    /// Exclusive scan with a closure: process `i > 0` gets `x0 ⊕ … ⊕
    /// x(i-1)`; process 0 gets `None`.
    ///
    /// # Errors
    ///
    /// As for [`reduce_with`](Collectives::reduce_with).
    ///
    /// # Panics
    ///
    /// As for [`reduce_with`](Collectives::reduce_with).
    ///
    /// # BSP cost
    ///
    /// As for [`scan_with`](Collectives::scan_with).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| {
    ///     let mine = bsp.pid() as u8 + 1;
    ///     bsp.collectives().exscan_with(&[mine], |a, b| a + b)
    /// })?;
    /// assert_eq!(r, [None, Some(vec![1]), Some(vec![3])]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn exscan_with<T: Pod>(
        &mut self,
        data: &[T],
        f: impl Fn(&T, &T) -> T,
    ) -> Result<Option<Vec<T>>, Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp.prefix(data, 0, 8, false, &f, loc)
    }

    /// Inclusive scan with a named operator.
    ///
    /// # Errors
    ///
    /// As for [`all_reduce`](Collectives::all_reduce).
    ///
    /// # Panics
    ///
    /// None.
    ///
    /// # BSP cost
    ///
    /// As for [`scan_with`](Collectives::scan_with).
    #[track_caller]
    pub fn scan<T: Reducible>(&mut self, data: &mut [T], op: Op) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let f = self.bsp.named::<T>(op, NAMES[7], loc)?;
        let r = self.bsp.prefix(data, op.id(), 7, true, &f, loc)?;
        data.copy_from_slice(&r.unwrap_or_default());
        Ok(())
    }
}
