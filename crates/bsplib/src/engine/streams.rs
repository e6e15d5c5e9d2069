//! The streams half of the transport contract: writing a process's
//! streams on a channel, delivering them, reading the stream a sender wrote
//! for a destination, and the channels' raw memory and capacity.

#[cfg(feature = "mpi")]
use super::mpi;
use super::{Interrupt, Sync, World};
use crate::mem::Records;
use crate::stream::{StreamWriter, REPLIES};

impl World {
    /// A writer of process `me`'s streams on channel `ch` (`stream.rs`):
    /// any channel on exchange engines, `REPLIES` on every engine.
    ///
    /// # Safety
    ///
    /// Only `me` writes its channels, and only while no other process
    /// reads that channel (the protocol of `superstep.rs`).
    pub(crate) unsafe fn writer(&self, me: usize, ch: usize) -> StreamWriter<'_> {
        match &self.sync {
            // SAFETY: forwarded.
            Sync::Processes(s) => unsafe { s.writer(me, ch) },
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.writer(ch),
            Sync::Serial(_) | Sync::Threads(_) => {
                assert_eq!(ch, REPLIES, "shared memory reads streams in place");
                // SAFETY: the caller is `me`, writing while nobody reads.
                let replies = unsafe { self.mailbox(me).replies_owner() };
                StreamWriter::buffer(replies, self.nprocs())
            }
        }
    }

    /// Makes the streams every process wrote on channel `ch` readable by
    /// their destinations. Channel `q` follows barrier A, whose flags said
    /// there is something to read (nothing to do but on `mpi`); the
    /// replies channel stands for barrier B.
    pub(crate) fn deliver(&self, episode: &mut u64, ch: usize) -> Result<(), Interrupt> {
        match &self.sync {
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.deliver(ch),
            _ if ch == REPLIES => self.barrier(episode, 0).map(drop),
            _ => Ok(()),
        }
    }

    /// The stream `src` wrote on channel `ch` for `dst`: any channel on
    /// exchange engines, `REPLIES` on every engine. `None` if the sender's
    /// directory does not give a range of its channel (a corrupted
    /// channel: refused by the receiver).
    ///
    /// # Safety
    ///
    /// Only after `deliver` of that channel, and until `src` writes the
    /// channel again (the protocol of `superstep.rs`).
    pub(crate) unsafe fn stream(&self, src: usize, ch: usize, dst: usize) -> Option<Records<'_>> {
        match &self.sync {
            // SAFETY: forwarded.
            Sync::Processes(s) => unsafe { s.stream(src, ch, dst) },
            // SAFETY: forwarded; an MPI rank receives only its own streams.
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => unsafe { m.stream(src, ch) },
            Sync::Serial(_) | Sync::Threads(_) => {
                assert_eq!(ch, REPLIES, "shared memory reads streams in place");
                // SAFETY: delivered (barrier B passed), not rewritten yet.
                unsafe { self.mailbox(src).replies() }.stream(dst)
            }
        }
    }

    /// `processes`: channel `ch` of process `pid` as raw shared memory,
    /// its start (page-aligned) and its length; `None` on other engines.
    /// Large put payloads are written into the top of the sender's
    /// channel at the call (`Process::push_put`).
    #[inline]
    pub(crate) fn channel_region(&self, pid: usize, ch: usize) -> Option<(*mut u8, usize)> {
        match &self.sync {
            Sync::Processes(s) => Some((s.channel(pid, ch), s.capacity())),
            _ => None,
        }
    }

    /// Exchange engines: the most one process can send in one superstep on
    /// one channel.
    pub(crate) fn capacity(&self) -> usize {
        match &self.sync {
            Sync::Processes(s) => s.capacity(),
            #[cfg(feature = "mpi")]
            Sync::Mpi(_) => mpi::CAPACITY,
            _ => usize::MAX,
        }
    }
}
