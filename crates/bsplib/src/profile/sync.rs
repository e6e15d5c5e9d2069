//! The profiled sync: `bsp_sync` with the profiler on, counting what the
//! superstep sent and received around the sync and keeping its row.

use super::counts::{add_stream, Counts};
use super::recorder::Row;
use crate::error::Error;
use crate::mailbox::{DATA, GET, REG};
use crate::mem::Records;
use crate::process::{Loc, Process};

impl Process {
    /// A sync switches active-message mode (`superstep.rs`, after barrier
    /// A, where every message sent before it has been handled): keeps the
    /// totals of the session it may close.
    #[cold]
    pub(crate) fn profile_am_closing(&mut self) {
        let totals = self.am.as_ref().map(|am| am.message_totals());
        if let Some(r) = &mut self.profile {
            r.am_closing = totals;
        }
    }

    /// The active-message totals `(sent, handled)` the profiler saw last
    /// in this process's current session (zero in a new session).
    fn am_seen(&self) -> (u64, u64) {
        match &self.profile {
            Some(r) if r.am_seen.0 == self.am_sessions => (r.am_seen.1, r.am_seen.2),
            _ => (0, 0),
        }
    }

    /// `bsp_sync` with the profiler on: counts what this superstep sends,
    /// runs the sync, counts what it received, and keeps the row.
    #[cold]
    #[inline(never)]
    pub(crate) fn sync_profiled(&mut self, loc: Loc) -> Result<(), Error> {
        let start_ns = match &self.profile {
            Some(r) => r.now_ns(),
            None => return self.sync_unprofiled(loc),
        };
        let mut c = Counts::default();
        // What we send: our mailbox half of this superstep (shared memory
        // reads it in place; exchange engines compose their streams from
        // it), and our gets.
        let out = self.out_ref();
        for dest in 0..self.nprocs {
            if let Some(to) = out.for_dest(dest) {
                add_stream(
                    &mut c,
                    true,
                    Records::of(&to.puts),
                    &to.hpputs,
                    Records::of(&to.sends),
                    None,
                );
            }
        }
        c.gets_out = self.gets.len() as u64;
        c.get_bytes_in = self.gets.iter().map(|g| g.len as u64).sum();
        c.records_out += c.gets_out;
        c.bytes_in += c.get_bytes_in;
        // Active messages: those sent in this superstep (counted before
        // the sync: messages its completion handlers send while it waits
        // belong to the next one), and those handled up to the end of this
        // sync, whose fence handles every message sent before it.
        let am_before = self.am.as_ref().map(|am| am.message_totals());
        if let Some((sent, _)) = am_before {
            c.am_out = sent.saturating_sub(self.am_seen().0);
        }
        let ended_by = self.call_name(self.coll.map_or("bsp_sync", |(name, _)| name));
        let superstep = self.superstep;
        let q = self.parity;

        let result = self.sync_unprofiled(loc);

        if result.is_ok() && self.last_flags & (REG | GET | DATA) != 0 {
            self.for_each_received(q, |puts, hpputs, sends, gets| {
                add_stream(&mut c, false, puts, hpputs, sends, Some(gets));
            });
        }
        // After `am_term` the session is gone: its last count is the one
        // taken as the sync closed it (`profile_am_closing`).
        let closing = self.profile.as_mut().and_then(|r| r.am_closing.take());
        let am_after = self.am.as_ref().map(|am| am.message_totals()).or(closing);
        if let Some((_, handled)) = am_after {
            c.am_in = handled.saturating_sub(self.am_seen().1);
        }
        c.records_out += c.am_out;
        c.records_in += c.am_in;
        if self.am.is_some() {
            // The session after the sync: the one before it (a plain
            // sync), or a new one (`am_init`), in which nothing was sent
            // before the sync.
            let sent = am_before.map_or(0, |(sent, _)| sent);
            let handled = am_after.map_or(0, |(_, handled)| handled);
            let session = self.am_sessions;
            if let Some(r) = &mut self.profile {
                r.am_seen = (session, sent, handled);
            }
        }
        if let Some(r) = &mut self.profile {
            let end = r.now_ns();
            r.rows.push(Row {
                superstep,
                compute_start_ns: r.last_end_ns,
                sync_start_ns: start_ns,
                sync_end_ns: end,
                counts: c,
                failed: result.is_err(),
                at: loc,
                ended_by,
            });
            r.last_end_ns = end;
            r.superstep = self.superstep;
        }
        result
    }
}
