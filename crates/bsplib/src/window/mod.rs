//! [`Window`]: memory other processes lock and access directly, with no
//! help from its owner (MPI's passive target, done with a lock word and
//! post/completion counters in shared memory on `threads` and
//! `processes`, and in an MPI window through MPI's atomics on `mpi`).
//! Every lock, view and epoch is counted in the process (`holds.rs`), so
//! soundness does not rest on the guards' borrows. The design, and why it
//! is sound, is in sections 9 and 10 of `../ONE_SIDED.md`. The control
//! lines of registered areas in one-sided use are windows with no data
//! (`control.rs`).
//!
//! The files, after MPI's one-sided concepts: `create.rs` (the type, its
//! creation and release), `memory.rs` (where the memory is, per engine),
//! `lock.rs` and `lockword.rs` (passive target), `local.rs` (views of
//! one's own memory), `epoch.rs` and `pscw.rs` (active target:
//! post/start/complete/wait), `accumulate.rs`, `raw.rs` (the C entry
//! points), `control.rs`.

mod accumulate;
mod control;
mod create;
mod epoch;
mod local;
mod lock;
mod lockword;
mod memory;
mod pscw;
#[cfg(feature = "raw")]
mod raw;

pub(crate) use control::reserve;
pub use create::Window;
pub use epoch::WinEpoch;
pub use local::{Local, LocalMut};
pub use lock::LockKind;
pub use lock::WinLock;
use memory::Mem;

/// The lock word's cache line at the head of a window's block; also the
/// largest element alignment a window takes. The epochs' counters follow
/// ([`header`]), then the data.
const HEADER: usize = 64;

/// Bytes before a window's data in its block, for `nprocs` processes: the
/// lock word's line, then `posts[q]` (posts of process `q` to this one)
/// and `dones[q]` (completions of process `q` here), rounded to a line.
pub(crate) fn header(nprocs: usize) -> usize {
    HEADER + (16 * nprocs).next_multiple_of(HEADER)
}

/// The lock word's writer bit; the bits below count the readers.
const WRITER: u64 = 1 << 63;

/// The collectives' names of window creation and release
/// (`collectives::NAMES`).
pub(crate) const KIND_NEW: usize = 41;
pub(crate) const KIND_FREE: usize = 42;
/// The same, called from C.
pub(crate) const KIND_NEW_C: usize = 43;
pub(crate) const KIND_FREE_C: usize = 44;
