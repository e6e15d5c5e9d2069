//! The end of a run: bytes of every process brought to process 0 (the
//! profiler's files, `../../PROFILE.md`), so that what each rank recorded
//! is written on process 0's file system whatever the others' are.
//!
//! Only after a normal end, when every process of the run ended in the
//! same reduction (`Mpi::ended` found nobody syncing, or `Mpi::finish`
//! returned: [`Mpi::ended_together`]): then every process calls this next
//! and none waits for a process that will not come. The lengths travel
//! with `MPI_Gather`; then process 0 receives each other process's bytes
//! in pid order (point-to-point, tag [`TAG`], in pieces of at most 1 GiB:
//! no `int` count or displacement over the whole), handing each to its
//! caller before it receives the next, so it holds one process's bytes at
//! a time.

use mpi::traits::*;

use super::progress;
use super::Mpi;

/// Tag of the gathered bytes (below the bells; 98 is the rendezvous').
const TAG: i32 = 97;
const _: () = assert!(TAG != super::STOP_TAG && TAG < super::BELL_TAG);

/// The largest piece of one message.
const PIECE: usize = 1 << 30;

impl Mpi {
    /// True once every process of the run has ended together: no process
    /// can still be waiting in a sync, so a collective call of every
    /// process at the end cannot wait for one that will not come.
    pub(crate) fn ended_together(&self) -> bool {
        self.ended_together
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Collective over the run, after [`ended_together`](Self::ended_together):
    /// on process 0, `each(pid, bytes)` for every process in pid order,
    /// `mine` for itself; on the others, `mine` sent to process 0.
    pub(crate) fn gather_at_root(&self, mine: &[u8], each: &mut dyn FnMut(usize, &[u8])) {
        let _mpi = progress::hold();
        let root = self.comm.process_at_rank(0);
        let len = mine.len() as u64;
        if self.comm.rank() != 0 {
            root.gather_into(&len);
            for piece in mine.chunks(PIECE) {
                root.send_with_tag(piece, TAG);
            }
            return;
        }
        let mut lens = vec![0u64; self.nprocs];
        root.gather_into_root(&len, &mut lens[..]);
        each(0, mine);
        let mut buf = Vec::new();
        for (pid, &len) in lens.iter().enumerate().skip(1) {
            buf.clear();
            buf.resize(len as usize, 0);
            let from = self.comm.process_at_rank(pid as i32);
            for piece in buf.chunks_mut(PIECE) {
                from.receive_into_with_tag(piece, TAG);
            }
            each(pid, &buf);
        }
    }
}
