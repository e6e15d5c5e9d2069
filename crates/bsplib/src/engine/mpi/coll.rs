//! MPI's own collectives for the large collectives of `collectives.rs`
//! (`../../COLLECTIVES.md`, section 8): `MPI_Bcast`, `MPI_Alltoallv`,
//! `MPI_Allgatherv`, `MPI_Gatherv` over byte buffers.
//!
//! They are blocking calls, made only after the collective's sync and an
//! agreement barrier (`collectives.rs`): every process of the run then
//! calls the same one with matching sizes, so none can wait for a process
//! that will not come (a process that fails before the agreement takes
//! part in its reduction with `ENDED`, and nobody enters the MPI call).
//! Counts are `int`s: the callers fall back to collective records when a
//! size does not fit (`engine::coll_fits`).

use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;
use mpi::Count;

use super::progress;
use super::Mpi;

/// Counts and displacements of the blocks `bounds(0) .. bounds(p)`.
fn partition(p: usize, bounds: &dyn Fn(usize) -> usize) -> (Vec<Count>, Vec<Count>) {
    let at = |q: usize| Count::try_from(bounds(q)).unwrap_or(Count::MAX);
    let displs: Vec<Count> = (0..p).map(at).collect();
    let counts = (0..p).map(|q| at(q + 1) - at(q)).collect();
    (counts, displs)
}

impl Mpi {
    /// `MPI_Allgather` (`root` `None`) or `MPI_Gather` to `root` of
    /// `mine` from every process into `all` (`p · mine.len()` bytes on
    /// those that get it; empty on the others).
    pub(crate) fn coll_gather(&self, root: Option<usize>, mine: &[u8], all: &mut [u8]) {
        let _mpi = progress::hold();
        match root {
            None => self.comm.all_gather_into(mine, all),
            Some(root) => {
                let at = self.comm.process_at_rank(root as i32);
                if self.comm.rank() as usize == root {
                    at.gather_into_root(mine, all);
                } else {
                    at.gather_into(mine);
                }
            }
        }
    }

    /// `MPI_Bcast` of `buf` from `root`.
    pub(crate) fn coll_bcast(&self, root: usize, buf: &mut [u8]) {
        let _mpi = progress::hold();
        self.comm.process_at_rank(root as i32).broadcast_into(buf);
    }

    /// `MPI_Alltoallv`: block `q` of `send` (`bounds` of `send`) to process
    /// `q`; from each process `q`, its block for us into `recv` at `q ·
    /// mine` (every block for us is `mine` bytes).
    pub(crate) fn coll_scatter_blocks(
        &self,
        send: &[u8],
        bounds: &dyn Fn(usize) -> usize,
        recv: &mut [u8],
        mine: usize,
    ) {
        let _mpi = progress::hold();
        let p = self.nprocs;
        let (counts, displs) = partition(p, bounds);
        let rcounts = vec![Count::try_from(mine).unwrap_or(Count::MAX); p];
        let rdispls: Vec<Count> = (0..p).map(|q| (q * mine) as Count).collect();
        let s = Partition::new(send, counts, displs);
        let mut r = PartitionMut::new(recv, rcounts, rdispls);
        self.comm.all_to_all_varcount_into(&s, &mut r);
    }

    /// `MPI_Allgatherv` (`root` `None`) or `MPI_Gatherv` to `root`: block
    /// `q` of `all` (`bounds`) from process `q`; ours is `mine`.
    pub(crate) fn coll_gather_blocks(
        &self,
        root: Option<usize>,
        mine: &[u8],
        bounds: &dyn Fn(usize) -> usize,
        all: &mut [u8],
    ) {
        let _mpi = progress::hold();
        let (counts, displs) = partition(self.nprocs, bounds);
        match root {
            None => {
                let mut r = PartitionMut::new(all, counts, displs);
                self.comm.all_gather_varcount_into(mine, &mut r);
            }
            Some(root) => {
                let at = self.comm.process_at_rank(root as i32);
                if self.comm.rank() as usize == root {
                    let mut r = PartitionMut::new(all, counts, displs);
                    at.gather_varcount_into_root(mine, &mut r);
                } else {
                    at.gather_varcount_into(mine);
                }
            }
        }
    }
}
