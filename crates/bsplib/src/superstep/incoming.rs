//! What each process sent us in one sync, as views of its mailbox half
//! or its stream (`Incoming`, `From`), and the rendezvous transfers of
//! step 5 (`Transfers`).

use crate::engine::{Rendezvous, RendezvousStopped, World};
use crate::exchange::Sections;
use crate::mailbox::{HpPut, TagCalls, LARGE};
use crate::mem::Records;
use crate::process::Process;
use crate::registration::RegOp;

use super::published;
/// The rendezvous transfers of step 5 (`engine/mpi/rendezvous.rs`), when
/// someone staged a large payload: [`begin`](Transfers::begin) posts our
/// sends, [`settle`](Transfers::settle) waits for our receives and sends;
/// dropped unsettled (an error in step 5), it abandons them: receives not
/// yet matched are cancelled, the others completed, so nothing writes our
/// memory after the sync returns.
pub(super) struct Transfers<'a> {
    pub(super) rendezvous: Option<&'a Rendezvous>,
}

impl<'a> Transfers<'a> {
    pub(super) fn begin(world: &'a World, all: u32) -> Self {
        let rendezvous = if all & LARGE != 0 {
            world.rendezvous()
        } else {
            None
        };
        if let Some(r) = rendezvous {
            r.post_sends();
        }
        Transfers { rendezvous }
    }

    pub(super) fn settle(mut self) -> Result<(), RendezvousStopped> {
        match self.rendezvous.take() {
            Some(r) => r.settle().inspect_err(|_| r.abandon()),
            None => Ok(()),
        }
    }
}

impl Drop for Transfers<'_> {
    fn drop(&mut self) {
        if let Some(r) = self.rendezvous {
            r.abandon();
        }
    }
}

/// Where the streams addressed to one process come from in this sync.
#[derive(Clone, Copy)]
pub(super) struct Incoming<'a> {
    pub(super) world: &'a World,
    pub(super) q: usize,
    pub(super) me: usize,
}

/// What one process sent us in one superstep.
pub(crate) struct From<'a> {
    pub(super) collective: Collective<'a>,
    pub(super) gets: Records<'a>,
    pub(super) puts: Records<'a>,
    pub(super) sends: Records<'a>,
    /// Shared memory only.
    pub(super) hpputs: &'a [HpPut],
}

/// A sender's registration and tag-size calls.
pub(super) enum Collective<'a> {
    /// Read in place (shared memory).
    Calls(TagCalls, &'a [RegOp]),
    /// Encoded in a stream (`exchange.rs`).
    Encoded(Records<'a>),
}

impl<'a> Incoming<'a> {
    /// What `src` sent us; `None` if its stream no longer splits into
    /// sections (checked once by `check_streams`, but another process
    /// could write shared memory in between: every read is checked).
    pub(super) fn get(&self, src: usize) -> Option<From<'a>> {
        if self.world.distributed() {
            // SAFETY: delivered after barrier A, rewritten two syncs from
            // now (`exchange.rs`); the view borrows the world.
            let s = unsafe { self.world.stream(src, self.q, self.me) };
            let s = s.and_then(Sections::of)?;
            let collective = if src == self.me {
                // Our own calls from our own memory, never from a channel
                // another process could write: they make our column of the
                // slot table, which every record is checked against.
                let own = published(self.world, src, self.q);
                Collective::Calls(own.tag, &own.reg_ops)
            } else {
                Collective::Encoded(s.collective)
            };
            return Some(From {
                collective,
                gets: s.gets,
                puts: s.puts,
                sends: s.sends,
                hpputs: &[],
            });
        }
        let out = published(self.world, src, self.q);
        let collective = Collective::Calls(out.tag, &out.reg_ops);
        Some(match out.for_dest(self.me) {
            Some(to) => From {
                collective,
                gets: Records::of(&to.gets),
                puts: Records::of(&to.puts),
                sends: Records::of(&to.sends),
                hpputs: &to.hpputs,
            },
            None => From {
                collective,
                gets: Records::empty(),
                puts: Records::empty(),
                sends: Records::empty(),
                hpputs: &[],
            },
        })
    }
}

impl Process {
    /// The profiler (`profile.rs`), right after a sync that ended the
    /// superstep of parity `q` with records (`REG | GET | DATA`): calls
    /// `f(puts, hpputs, sends, get requests)` with what each process sent
    /// us. The streams stay readable until barrier A of the next sync
    /// (module docs; exchange engines rewrite channel `q` two syncs on).
    pub(crate) fn for_each_received(
        &self,
        q: usize,
        mut f: impl FnMut(Records<'_>, &[HpPut], Records<'_>, Records<'_>),
    ) {
        let incoming = Incoming {
            world: &self.world,
            q,
            me: self.pid,
        };
        for src in 0..self.nprocs {
            if let Some(from) = incoming.get(src) {
                f(from.puts, from.hpputs, from.sends, from.gets);
            }
        }
    }
}
