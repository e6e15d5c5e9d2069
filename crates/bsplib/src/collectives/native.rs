//! The `mpi` engine's own collectives, after the collective's sync:
//! the readiness of every process for the MPI call, and the reductions
//! through `MPI_Allgather`, `MPI_Alltoallv` and `MPI_Allgatherv`.

use bytemuck::Pod;

use super::reduce::{fold_call, fold_parts};
use super::{to_vec, Call, NAMES};
use crate::bsp::Bsp;
use crate::error::Error;
use crate::process::{Loc, Process};

/// On `mpi`, reductions of up to this many bytes in all (`p · n`) gather
/// every contribution with one MPI call and fold locally; larger ones
/// reduce-scatter then all-gather (two calls, `≈ 2n` bytes per process).
const GATHER_MAX: usize = 32 << 10;

impl Bsp {
    /// After a collective's sync on `mpi`, before MPI's own collective:
    /// every process must enter the MPI call, or none. Barrier A found
    /// them all in this collective with the same arguments; if the sync
    /// then had nothing else to do (no puts, gets, messages or
    /// registrations anywhere, no active messages), nothing could fail
    /// since, and the call is made at once. Otherwise one more barrier: a
    /// process that failed in the sync takes part in it with its end, and
    /// it fails everywhere.
    pub(super) fn native_ready(
        &mut self,
        name: &'static str,
        loc: Loc,
    ) -> Result<std::cell::RefMut<'_, Process>, Error> {
        use crate::mailbox::{DATA, GET, HPPUT, LARGE, REG};
        let mut p = self.process();
        if p.last_flags & (REG | GET | DATA | HPPUT | LARGE) == 0 && p.ext.am_mut().ctx.is_none() {
            return Ok(p);
        }
        let mut episode = p.episode;
        let r = p.world.barrier(&mut episode, 0);
        p.episode = episode;
        match r {
            Ok(_) => Ok(p),
            Err(why) => Err(p.interrupted(why, name, loc)),
        }
    }

    /// The `mpi` engine's reductions, after the sync (whose barrier A
    /// checked the calls) and [`native_ready`](Bsp::native_ready): up to
    /// [`GATHER_MAX`] bytes in all, `MPI_Allgather` (`MPI_Gather`) of
    /// every contribution, folded in pid order by those that get the
    /// result; beyond, `MPI_Alltoallv` gives each process block `me` of
    /// everyone's data, which it folds in pid order in place in the
    /// receive buffer, and `MPI_Allgatherv` (`MPI_Gatherv`) gives the
    /// folded blocks to everyone (the root), straight into `inout`. No
    /// allocation once the receive buffer has grown.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fold_native<T: Pod, F: Fn(&T, &T) -> T>(
        &mut self,
        root: Option<usize>,
        inout: &mut [T],
        call: Call,
        closure: bool,
        bounds: &dyn Fn(usize) -> usize,
        f: &F,
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[call.kind];
        let user = fold_call(call.kind, if closure { 0 } else { 1 });
        self.collective(call, loc, |_| Ok(()), |_| Ok(()))?;
        let mut p = self.native_ready(name, loc)?;
        let (me, nprocs) = (p.pid, p.nprocs);
        let gets = root.is_none_or(|r| r == me);
        let n = std::mem::size_of_val(inout);
        if n == 0 {
            // Nothing to move (every process gives 0 bytes: barrier A
            // checked); no MPI call, as for a broadcast.
            return Ok(());
        }
        if n * nprocs <= GATHER_MAX {
            // Every contribution to the root(s), folded there in pid order.
            let mut scratch = p.take_buffer(|c| &mut c.scratch);
            let words = (n * nprocs).div_ceil(8).max(1);
            if scratch.len() < words {
                scratch.resize(words, 0);
            }
            let all = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut scratch)[..n * nprocs];
            if let Some(mpi) = p.world.rendezvous() {
                let mine: &[u8] = bytemuck::cast_slice(inout);
                if gets {
                    mpi.coll_gather(root, mine, all);
                } else {
                    mpi.coll_gather(root, mine, &mut []);
                }
            }
            if gets && n > 0 {
                let parts: Vec<Option<&[u8]>> = all
                    .chunks(n)
                    .enumerate()
                    .map(|(q, c)| (q != me).then_some(c))
                    .collect();
                p.call_user(user, loc, || fold_parts(&parts, inout, f));
            }
            p.give_buffer(|c| &mut c.scratch, scratch);
            return Ok(());
        }
        let (a, b) = (bounds(me), bounds(me + 1));
        let len = b - a;
        let mut scratch = p.take_buffer(|c| &mut c.scratch);
        let words = (len * nprocs).div_ceil(8).max(1);
        if scratch.len() < words {
            scratch.resize(words, 0);
        }
        let got = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut scratch)[..len * nprocs];
        let world = std::sync::Arc::clone(&p.world);
        let Some(mpi) = world.rendezvous() else {
            return Ok(());
        };
        mpi.coll_scatter_blocks(bytemuck::cast_slice(inout), bounds, got, len);
        let mut copied: Vec<T>;
        let folded: &[T] = if len > 0 {
            let (before, rest) = got.split_at_mut(me * len);
            let (mine, after) = rest.split_at_mut(len);
            let mut parts: Vec<Option<&[u8]>> = before.chunks(len).map(Some).collect();
            parts.push(None);
            parts.extend(after.chunks(len).map(Some));
            let acc: &mut [T] = if bytemuck::try_cast_slice::<u8, T>(mine).is_ok() {
                bytemuck::cast_slice_mut(mine)
            } else {
                copied = to_vec(mine);
                &mut copied
            };
            p.call_user(user, loc, || fold_parts(&parts, acc, f));
            acc
        } else {
            &[]
        };
        if closure {
            // A closure may panic between the two MPI calls: its process
            // then fails the run and ends, and its end reduction meets
            // this barrier, which every other process leaves with an error
            // instead of waiting in `MPI_Allgatherv` (`process/guard.rs`).
            let mut episode = p.episode;
            let r = world.barrier(&mut episode, 0);
            p.episode = episode;
            if let Err(why) = r {
                return Err(p.interrupted(why, name, loc));
            }
        }
        send_folded(mpi, root, folded, bounds, inout, gets);
        p.give_buffer(|c| &mut c.scratch, scratch);
        Ok(())
    }
}

/// Phase 2 of [`Bsp::fold_native`]: this process's folded block `acc` to
/// the root or everyone, the blocks into `out` on those that get them.
fn send_folded<T: Pod>(
    mpi: &crate::engine::Rendezvous,
    root: Option<usize>,
    acc: &[T],
    bounds: &dyn Fn(usize) -> usize,
    out: &mut [T],
    gets: bool,
) {
    let mine: &[u8] = bytemuck::cast_slice(acc);
    if gets {
        mpi.coll_gather_blocks(root, mine, bounds, bytemuck::cast_slice_mut(out));
    } else {
        mpi.coll_gather_blocks(root, mine, bounds, &mut []);
    }
}
