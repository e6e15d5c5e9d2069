//! Reductions: the element types of the named operators ([`Reducible`]),
//! reduce and all-reduce with a closure or a named operator, folded in
//! pid order from the left whatever the form.

use bytemuck::Pod;

use super::{block_bounds, elem_size, Call, Collectives, Op, Path, NAMES};
use crate::bsp::Bsp;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::Loc;

#[cfg(doc)]
use super::Algorithm;

/// Element types the named operators ([`Op`], the one operator type of
/// reductions and accumulate) apply to: the primitive numbers. Sealed.
pub trait Reducible: Pod + sealed::Sealed {
    /// `op(a, b)`, or `None` if the operator does not apply to the type
    /// (a bitwise or logical operator on floats; a min or max with
    /// location on anything but a value–index pair).
    fn apply(op: Op, a: Self, b: Self) -> Option<Self>;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! int_reducible {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Reducible for $t {
            fn apply(op: Op, a: Self, b: Self) -> Option<Self> {
                Some(match op {
                    Op::Sum => a.wrapping_add(b),
                    Op::Product => a.wrapping_mul(b),
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                    Op::BitAnd => a & b,
                    Op::BitOr => a | b,
                    Op::BitXor => a ^ b,
                    Op::LogicalAnd => Self::from(a != 0 && b != 0),
                    Op::LogicalOr => Self::from(a != 0 || b != 0),
                    Op::LogicalXor => Self::from((a != 0) != (b != 0)),
                    Op::Replace => b,
                    Op::MinLoc | Op::MaxLoc => return None,
                })
            }
        }
    )*};
}
int_reducible!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

macro_rules! float_reducible {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Reducible for $t {
            fn apply(op: Op, a: Self, b: Self) -> Option<Self> {
                match op {
                    Op::Sum => Some(a + b),
                    Op::Product => Some(a * b),
                    Op::Min => Some(a.min(b)),
                    Op::Max => Some(a.max(b)),
                    Op::Replace => Some(b),
                    _ => None,
                }
            }
        }
    )*};
}
float_reducible!(f32, f64);

impl Bsp {
    /// `op` as the combining function of a reduction on `T` (`call`), or
    /// the error of an operator not defined on `T`.
    pub(super) fn named<T: Reducible>(
        &self,
        op: Op,
        call: &'static str,
        loc: Loc,
    ) -> Result<impl Fn(&T, &T) -> T, Error> {
        if T::apply(op, T::zeroed(), T::zeroed()).is_none() {
            let p = self.process();
            return Err(p.fail(
                ErrorKind::AccumulateOperator {
                    op: op.name(),
                    ty: std::any::type_name::<T>(),
                },
                call,
                loc,
            ));
        }
        // Defined on `T`: `apply` gives a value for every pair.
        Ok(move |a: &T, b: &T| T::apply(op, *a, *b).unwrap_or(*b))
    }

    /// Reduction to `root` (or everyone, `None`), as collective `kind`
    /// with operator `op`: `x0 ⊕ x1 ⊕ … ⊕ x(p-1)` element by element, in
    /// that order whatever the form. `inout` holds this process's data and
    /// receives the result (on the root, or everywhere); the others' is
    /// left as it was.
    #[allow(clippy::too_many_arguments)]
    fn fold_in<T: Pod, F: Fn(&T, &T) -> T>(
        &mut self,
        root: Option<usize>,
        inout: &mut [T],
        op: u64,
        kind: usize,
        f: &F,
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[kind];
        let m = inout.len();
        let nbytes = std::mem::size_of_val(inout);
        let (path, nprocs, me) = {
            let p = self.process();
            (p.path(nbytes, root.is_none()), p.nprocs, p.pid)
        };
        let call = Call {
            kind,
            root: root.unwrap_or(0),
            nbytes,
            op: op | elem_size::<T>(),
            path,
        };
        let gets = root.is_none_or(|r| r == me);
        match path {
            Path::One => {
                let src: &[u8] = bytemuck::cast_slice(inout);
                self.collective(
                    call,
                    loc,
                    |p| {
                        let me = p.pid;
                        for q in (0..p.nprocs).filter(|&q| q != me) {
                            if root.is_none_or(|r| r == q) {
                                p.coll_put(q, src, name, loc)?;
                            }
                        }
                        Ok(())
                    },
                    |_| Ok(()),
                )?;
                if gets {
                    let p = self.process();
                    let parts = p.coll_parts(nbytes, name, loc)?;
                    p.call_user(fold_call(kind, op), loc, || fold_parts(&parts, inout, f));
                }
            }
            Path::Two | Path::Native => {
                let bounds = block_bounds::<T>(m, nprocs);
                let size = std::mem::size_of::<T>().max(1);
                let (a, b) = (bounds(me), bounds(me + 1));
                // Phase 1 (reduce-scatter): block `q` of everyone's data to
                // process `q`, which folds the `p` blocks in pid order.
                if path == Path::Native {
                    return self.fold_native(root, inout, call, op == 0, &bounds, f, loc);
                }
                let mut block: Vec<T> = inout[a / size..b / size].to_vec();
                self.scatter_blocks(call, None, bytemuck::cast_slice(inout), &bounds, loc)?;
                {
                    let p = self.process();
                    let parts = p.coll_parts(b - a, name, loc)?;
                    p.call_user(fold_call(kind, op), loc, || {
                        fold_parts(&parts, &mut block, f)
                    });
                }
                // Phase 2: the folded blocks to the root, or to everyone;
                // `gather_blocks` sends this process's block from `out`.
                let out: &mut [u8] = bytemuck::cast_slice_mut(inout);
                let keep = (!gets).then(|| out[a..b].to_vec());
                out[a..b].copy_from_slice(bytemuck::cast_slice(&block));
                self.gather_blocks(name, root, &bounds, out, loc)?;
                if let Some(keep) = keep {
                    out[a..b].copy_from_slice(&keep);
                }
            }
        }
        Ok(())
    }

    /// [`fold_in`](Bsp::fold_in) leaving `data` as it is: the result on
    /// the root (or everywhere), `None` elsewhere.
    pub(super) fn fold<T: Pod, F: Fn(&T, &T) -> T>(
        &mut self,
        root: Option<usize>,
        data: &[T],
        op: u64,
        kind: usize,
        f: &F,
        loc: Loc,
    ) -> Result<Option<Vec<T>>, Error> {
        let mut v = data.to_vec();
        self.fold_in(root, &mut v, op, kind, f, loc)?;
        let me = self.pid();
        Ok(root.is_none_or(|r| r == me).then_some(v))
    }
}

impl Collectives<'_> {
    /// Reduction to `root` with a closure: `root` gets `x0 ⊕ x1 ⊕ … ⊕
    /// x(p-1)` element by element, combined in pid order from the left
    /// (`Some` on the root, `None` elsewhere). Every process gives as many
    /// elements.
    ///
    /// # Errors
    ///
    /// As for [`broadcast`](Collectives::broadcast) (closures are not compared
    /// across processes).
    ///
    /// # Panics
    ///
    /// If `f` panics, on the process where it does: the run fails with
    /// [`ErrorKind::Panicked`] naming this call, the process and the
    /// caller's line (every other process leaves this collective, or its
    /// next call, with an error; none waits), and the panic goes on. A
    /// program that catches it finds the run stopped: its later calls
    /// return an error.
    ///
    /// # BSP cost
    ///
    /// For `n` bytes per process, by the form [`Algorithm`] chooses: one
    /// superstep, `(p - 1)·n·g + l` and `(p - 1)·len` applications of `f`
    /// on the root; or two (reduce-scatter, then gather),
    /// `≈ 2·(p - 1)/p·n·g + 2l` and `(p - 1)·len/p` applications on every
    /// process; on `mpi`, from 32 KiB, a sync then `MPI_Alltoallv` and
    /// `MPI_Gatherv` (the same counts).
    ///
    /// # Examples
    ///
    /// "Keep the left one" is associative but not commutative: the result
    /// is process 0's value, because contributions combine in pid order.
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| {
    ///     let mine = [b'a' + bsp.pid() as u8];
    ///     bsp.collectives().reduce_with(2, &mine, |l: &u8, _r: &u8| *l)
    /// })?;
    /// assert_eq!(r[2], Some(vec![b'a']));
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn reduce_with<T: Pod>(
        &mut self,
        root: usize,
        data: &[T],
        f: impl Fn(&T, &T) -> T,
    ) -> Result<Option<Vec<T>>, Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp.fold(Some(root), data, 0, 5, &f, loc)
    }

    /// All-reduce with a closure: every process gets `x0 ⊕ … ⊕ x(p-1)`
    /// in `data`, element by element, combined in pid order.
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
    /// For `n` bytes per process, by the form [`Algorithm`] chooses: one
    /// superstep, `(p - 1)·n·g + l` and `(p - 1)·len` applications of `f`
    /// on every process; or two (reduce-scatter, then all-gather),
    /// `≈ 2·(p - 1)/p·n·g + 2l` and `(p - 1)·len/p` applications; on
    /// `mpi`, from 32 KiB, a sync then `MPI_Alltoallv` and
    /// `MPI_Allgatherv` (the same counts), with a barrier between them
    /// (a process whose `f` panicked leaves it to no one).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(4, |bsp| {
    ///     let mut x = [bsp.pid() as u64 + 1, 1];
    ///     bsp.collectives().all_reduce_with(&mut x, |a, b| a * b)?;
    ///     Ok(x)
    /// })?;
    /// assert_eq!(r[3], [24, 1]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn all_reduce_with<T: Pod>(
        &mut self,
        data: &mut [T],
        f: impl Fn(&T, &T) -> T,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp.fold_in(None, data, 0, 6, &f, loc)
    }

    /// All-reduce with a named operator ([`Op`]), which the processes'
    /// descriptors compare.
    ///
    /// # Errors
    ///
    /// As for [`broadcast`](Collectives::broadcast);
    /// [`ErrorKind::CollectiveMismatch`] also for another operator on
    /// another process; [`ErrorKind::AccumulateOperator`] for an operator
    /// not defined on `T` (a bitwise or logical one on floats, a min or
    /// max with location on a number); [`ErrorKind::LocalBounds`] never.
    ///
    /// # Panics
    ///
    /// None: an operator not defined on `T` is an error (above).
    ///
    /// # BSP cost
    ///
    /// As for [`all_reduce_with`](Collectives::all_reduce_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::Op;
    /// let r = bsplib::run(3, |bsp| {
    ///     let mut x = [0.5 * bsp.pid() as f64];
    ///     bsp.collectives().all_reduce(&mut x, Op::Sum)?;
    ///     Ok(x[0])
    /// })?;
    /// assert_eq!(r, [1.5; 3]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn all_reduce<T: Reducible>(&mut self, data: &mut [T], op: Op) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let f = self.bsp.named::<T>(op, NAMES[6], loc)?;
        self.bsp.fold_in(None, data, op.id(), 6, &f, loc)
    }

    /// Reduction to `root` with a named operator.
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
    /// As for [`reduce_with`](Collectives::reduce_with).
    #[track_caller]
    pub fn reduce<T: Reducible>(
        &mut self,
        root: usize,
        data: &[T],
        op: Op,
    ) -> Result<Option<Vec<T>>, Error> {
        let loc = Some(SourceLocation::caller());
        let f = self.bsp.named::<T>(op, NAMES[5], loc)?;
        self.bsp.fold(Some(root), data, op.id(), 5, &f, loc)
    }
}

/// The call a reduction's or scan's combining function runs for, as the
/// error of its panic names it (`process/guard.rs`): the closure form
/// (`all_reduce_with`, ...) for a closure (operator word 0), else the
/// collective's name.
pub(super) fn fold_call(kind: usize, op: u64) -> &'static str {
    match (op, kind) {
        (0, 5) => "reduce_with",
        (0, 6) => "all_reduce_with",
        (0, 7) => "scan_with",
        (0, 8) => "exscan_with",
        _ => NAMES[kind],
    }
}

/// Folds `parts` (one per process in pid order: the bytes of its data,
/// or `None` for this process's own, which is `acc` on entry) element by
/// element from the left into `acc`: `acc[i] = x0[i] ⊕ x1[i] ⊕ …`. Works
/// through chunks that stay in cache, reading each record in place when
/// it is aligned for `T`; no copy of the whole data is made.
pub(super) fn fold_parts<T: Pod, F: Fn(&T, &T) -> T>(
    parts: &[Option<&[u8]>],
    acc: &mut [T],
    f: &F,
) {
    const CHUNK: usize = 4096;
    let size = std::mem::size_of::<T>();
    if size == 0 || parts.len() < 2 {
        return;
    }
    let mut run: Vec<T> = Vec::with_capacity(CHUNK.min(acc.len()));
    let mut tmp: Vec<T> = Vec::new();
    for (c, out) in acc.chunks_mut(CHUNK).enumerate() {
        let at = c * CHUNK;
        run.clear();
        for (i, part) in parts.iter().enumerate() {
            let x: &[T] = match part {
                None => out,
                Some(b) => {
                    let b = &b[at * size..(at + out.len()) * size];
                    match bytemuck::try_cast_slice::<u8, T>(b) {
                        Ok(xs) => xs,
                        Err(_) => {
                            tmp.clear();
                            tmp.extend(b.chunks_exact(size).map(bytemuck::pod_read_unaligned::<T>));
                            &tmp
                        }
                    }
                }
            };
            if i == 0 {
                run.extend_from_slice(x);
            } else {
                for (a, b) in run.iter_mut().zip(x) {
                    *a = f(a, b);
                }
            }
        }
        out.copy_from_slice(&run);
    }
}
