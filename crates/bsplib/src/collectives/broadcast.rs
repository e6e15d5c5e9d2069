//! Broadcast: [`Collectives::broadcast`](crate::Collectives::broadcast) in each of its forms (one phase, two
//! phases, `MPI_Bcast`).

use bytemuck::Pod;

use super::{block_bounds, elem_size, lost_p, Call, Collectives, Path, NAMES};
use crate::bsp::Bsp;
use crate::error::{Error, SourceLocation};
use crate::process::Loc;

#[cfg(doc)]
use super::Algorithm;
#[cfg(doc)]
use crate::error::ErrorKind;

impl Bsp {
    /// [`broadcast`](Collectives::broadcast) as collective `kind` of [`NAMES`].
    pub(super) fn broadcast_as<T: Pod>(
        &mut self,
        kind: usize,
        root: usize,
        data: &mut [T],
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[kind];
        let nbytes = std::mem::size_of_val(data);
        let (path, nprocs) = {
            let p = self.process();
            (p.path(nbytes, false), p.nprocs)
        };
        let call = Call {
            kind,
            root,
            nbytes,
            op: elem_size::<T>(),
            path,
        };
        let bounds = block_bounds::<T>(data.len(), nprocs);
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(data);
        match path {
            Path::One => {
                // The root's data is copied straight into its records, and
                // the records straight into the others' `data`.
                let src: &[u8] = bytes;
                self.collective(
                    call,
                    loc,
                    |p| {
                        if p.pid == root {
                            for q in (0..p.nprocs).filter(|&q| q != root) {
                                p.coll_put(q, src, name, loc)?;
                            }
                        }
                        Ok(())
                    },
                    |_| Ok(()),
                )?;
                let p = self.process();
                if p.pid != root {
                    let got = p
                        .coll_data(root, nbytes)
                        .ok_or_else(|| lost_p(&p, name, root, loc))?;
                    bytes.copy_from_slice(got);
                }
            }
            Path::Two => {
                // Block `q` of the root's data to process `q`, then every
                // block to everyone.
                self.scatter_blocks(call, Some(root), bytes, &bounds, loc)?;
                {
                    let p = self.process();
                    let me = p.pid;
                    if me != root {
                        let (a, b) = (bounds(me), bounds(me + 1));
                        let got = p
                            .coll_data(root, b - a)
                            .ok_or_else(|| lost_p(&p, name, root, loc))?;
                        bytes[a..b].copy_from_slice(got);
                    }
                }
                self.gather_blocks(name, None, &bounds, bytes, loc)?;
            }
            Path::Native => {
                self.collective(call, loc, |_| Ok(()), |_| Ok(()))?;
                let p = self.native_ready(name, loc)?;
                // (Nothing to move: no MPI call, which some MPIs refuse
                // with the dangling address of an empty slice.)
                if let (Some(mpi), false) = (p.world.rendezvous(), bytes.is_empty()) {
                    mpi.coll_bcast(root, bytes);
                }
            }
        }
        Ok(())
    }
}

impl Collectives<'_> {
    /// Broadcast: copies `data` of process `root` into `data` of every
    /// process. Collective: every process calls it in the same superstep
    /// with the same `root` and length.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::PidOutOfRange`] for a root out of range;
    /// [`ErrorKind::CollectiveMismatch`] when processes disagree (another
    /// collective, root or length, or a plain sync); as for
    /// [`sync`](Bsp::sync).
    ///
    /// # BSP cost
    ///
    /// For `n` bytes, by the form [`Algorithm`] chooses: one superstep,
    /// `(p - 1)·n·g + l` (the root sends `n` to each other process); or
    /// two, `≈ 2·(p - 1)/p·n·g + 2l` (the root scatters `n/p` to each,
    /// then everyone sends its block to everyone); on `mpi`, from 32 KiB,
    /// a sync then `MPI_Bcast`.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| {
    ///     let mut x = [bsp.pid() as u32; 2];
    ///     bsp.collectives().broadcast(1, &mut x)?;
    ///     Ok(x)
    /// })?;
    /// assert_eq!(r, [[1, 1]; 3]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn broadcast<T: Pod>(&mut self, root: usize, data: &mut [T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp.broadcast_as(0, root, data, loc)
    }
}
