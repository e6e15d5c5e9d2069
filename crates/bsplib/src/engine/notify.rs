//! Point-to-point notifications (`World::notify`, `World::wait_notified`):
//! counters per process and channel, for the one-sided synchronisation of
//! the extension layers.

use super::{Interrupt, Sync, World};

/// Channels of point-to-point notifications (`World::notify`): each
/// process counts the notifications it received on each. The last one is
/// the active-message path's ([`AM_BELL`](super::AM_BELL)); the others are for the
/// extension layers (and the test hooks).
pub(crate) const BELLS: usize = 5;

impl World {
    /// Point-to-point notification: tells process `to` on channel `ch`
    /// (`< BELLS`) that everything this process did before is done, and
    /// wakes it if it waits. Cheap: one atomic add on shared memory (a
    /// wake-up only for a sleeping waiter), one small message on `mpi`.
    /// (For the one-sided synchronisation of the extension layers:
    /// post/start/complete/wait, locks, counters.)
    pub(crate) fn notify(&self, to: usize, ch: usize) {
        match &self.sync {
            Sync::Serial(s) => s.one().ring(&self.bells[to][ch]),
            Sync::Threads(b) => b.ring(&self.bells[to][ch]),
            Sync::Processes(s) => s.barrier().ring(s.bell(to, ch)),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.notify(to, ch),
        }
    }

    /// Waits until process `me` has received `target` notifications in
    /// all on channel `ch` (counted from the start of the run), with
    /// acquire ordering: what the notifiers did before notifying is
    /// visible after. Interrupted when the run is stopped, and by its
    /// deadline; otherwise a notification that never comes waits forever.
    #[cfg_attr(not(feature = "raw"), allow(dead_code))]
    pub(crate) fn wait_notified(&self, me: usize, ch: usize, target: u64) -> Result<(), Interrupt> {
        match &self.sync {
            Sync::Serial(s) => s.one().await_bell(&self.bells[me][ch], target),
            Sync::Threads(b) => b.await_bell(&self.bells[me][ch], target),
            Sync::Processes(s) => s.barrier().await_bell(s.bell(me, ch), target),
            #[cfg(feature = "mpi")]
            Sync::Mpi(m) => m.wait_notified(ch, target),
        }
    }
}
