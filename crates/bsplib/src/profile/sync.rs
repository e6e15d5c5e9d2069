//! The profiled sync: the profiler is an extension of the process
//! (`extension.rs`) that takes part around every sync, counting what the
//! superstep sent before it and what it received after it, and keeping
//! its row.

use super::counts::{add_stream, Counts};
use super::recorder::{Recorder, Row};
use super::Setup;
use crate::error::Error;
use crate::mailbox::{DATA, GET, REG};
use crate::mem::Records;
use crate::process::extension::{Extension, AROUND_SYNC};
use crate::process::{Loc, Process};

/// What the profiler keeps of a sync between its two hooks.
pub(crate) struct InSync {
    start_ns: u64,
    counts: Counts,
    am_before: Option<(u64, u64)>,
    ended_by: &'static str,
    superstep: u64,
    q: usize,
}

/// Installs the profiler's recorder in a new process of a profiled run.
pub(crate) fn install(p: &mut Process) {
    let recorder = p
        .world
        .ext::<Setup>()
        .map(|setup| Recorder::new(setup, p.pid, p.nprocs, p.start));
    if let Some(r) = recorder {
        p.install(r);
    }
}

impl Recorder {
    /// The active-message totals `(sent, handled)` the profiler saw last
    /// in the process's current session (zero in a new session).
    fn am_seen_in(&self, session: u32) -> (u64, u64) {
        if self.am_seen.0 == session {
            (self.am_seen.1, self.am_seen.2)
        } else {
            (0, 0)
        }
    }
}

impl crate::process::extension::Slotted for Recorder {
    const KEY: usize = 6;
}

impl Extension for Recorder {
    fn wants(&self) -> u32 {
        AROUND_SYNC
    }

    /// Counts what this superstep sends.
    fn before_sync(&mut self, p: &mut Process, _loc: Loc) -> Result<(), Error> {
        let start_ns = self.now_ns();
        let mut c = Counts::default();
        // What we send: our mailbox half of this superstep (shared memory
        // reads it in place; exchange engines compose their streams from
        // it), and our gets.
        let out = p.out_ref();
        for dest in 0..p.nprocs {
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
        c.gets_out = p.gets.len() as u64;
        c.get_bytes_in = p.gets.iter().map(|g| g.len as u64).sum();
        c.records_out += c.gets_out;
        c.bytes_in += c.get_bytes_in;
        // Active messages: those sent in this superstep (counted before
        // the sync: messages its completion handlers send while it waits
        // belong to the next one), and those handled up to the end of this
        // sync, whose fence handles every message sent before it.
        let am_before = p.ext.am_mut().ctx.as_ref().map(|am| am.message_totals());
        if let Some((sent, _)) = am_before {
            c.am_out = sent.saturating_sub(self.am_seen_in(p.ext.am_mut().sessions).0);
        }
        self.pending = Some(InSync {
            start_ns,
            counts: c,
            am_before,
            ended_by: p.call_name(p.sync_desc.map_or("bsp_sync", |(name, _)| name)),
            superstep: p.superstep,
            q: p.parity,
        });
        Ok(())
    }

    /// Counts what the superstep received, and keeps its row.
    fn after_sync(&mut self, p: &mut Process, loc: Loc, ok: bool) -> Result<(), Error> {
        let Some(InSync {
            start_ns,
            counts: mut c,
            am_before,
            ended_by,
            superstep,
            q,
        }) = self.pending.take()
        else {
            return Ok(());
        };
        if ok && p.last_flags & (REG | GET | DATA) != 0 {
            p.for_each_received(q, |puts, hpputs, sends, gets| {
                add_stream(&mut c, false, puts, hpputs, sends, Some(gets));
            });
        }
        // After `am_term` the session is gone: its last count is the one
        // taken as the sync closed it (`Process::am_closed`).
        let closing = p.ext.am_mut().closed.take();
        let am_after = p
            .ext
            .am_mut()
            .ctx
            .as_ref()
            .map(|am| am.message_totals())
            .or(closing);
        if let Some((_, handled)) = am_after {
            c.am_in = handled.saturating_sub(self.am_seen_in(p.ext.am_mut().sessions).1);
        }
        c.records_out += c.am_out;
        c.records_in += c.am_in;
        if p.ext.am_mut().ctx.is_some() {
            // The session after the sync: the one before it (a plain
            // sync), or a new one (`am_init`), in which nothing was sent
            // before the sync.
            let sent = am_before.map_or(0, |(sent, _)| sent);
            let handled = am_after.map_or(0, |(_, handled)| handled);
            self.am_seen = (p.ext.am_mut().sessions, sent, handled);
        }
        let end = self.now_ns();
        self.rows.push(Row {
            superstep,
            compute_start_ns: self.last_end_ns,
            sync_start_ns: start_ns,
            sync_end_ns: end,
            counts: c,
            failed: !ok,
            at: loc,
            ended_by,
        });
        self.last_end_ns = end;
        self.superstep = p.superstep;
        Ok(())
    }
}
