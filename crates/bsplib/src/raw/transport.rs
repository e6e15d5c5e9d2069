//! The raw layer's transport test hooks: notifications and the
//! active-message transport (post, take, mark, wait, barrier), on which
//! later layers build; not part of the API.

use super::{Raw, Res};

impl Raw<'_> {
    /// Transport test hook, not part of the API (the one-sided
    /// synchronisation of a later layer is built on it): notifies process
    /// `pid` on channel `ch` (`0..4`).
    ///
    /// # Errors
    ///
    /// A pid out of range, a channel out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub fn notify(&self, pid: i64, ch: usize) -> Res {
        const CALL: &str = "bsp_notify";
        let loc = self.loc();
        let p = self.bsp.process();
        p.check_running(CALL, loc)?;
        let pid = p.check_pid(pid, CALL, loc)?;
        p.check_channel(ch, CALL, loc)?;
        p.world.notify(pid, ch);
        Ok(())
    }

    /// Transport test hook, not part of the API: waits until this process
    /// has received `target` notifications in all on channel `ch`.
    ///
    /// # Safety
    ///
    /// A transport test hook: nothing checks that what it waits for will
    /// come (no other process may ever notify or post), so it can wait for
    /// ever (or until the deadline). For the crate's own tests of the
    /// transport.
    ///
    /// # Errors
    ///
    /// A channel out of range; the run stopped, or its deadline passed,
    /// while waiting.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn wait_notified(&self, ch: usize, target: u64) -> Res {
        const CALL: &str = "bsp_wait";
        let loc = self.loc();
        let p = self.bsp.process();
        p.check_running(CALL, loc)?;
        p.check_channel(ch, CALL, loc)?;
        p.world
            .wait_notified(p.pid, ch, target)
            .map_err(|why| p.interrupted(why, CALL, loc))
    }

    /// Transport test hook, not part of the API (the active messages are
    /// built on it): posts `record` (whole 8-byte words, the first one's
    /// low 32 bits its length in bytes) to process `pid`'s active-message
    /// inbox. `Ok(false)` when the inbox has no room now.
    ///
    /// # Safety
    ///
    /// In a run in active-message mode, a forged record (an
    /// acknowledgement above all) can end another process's fence early
    /// and let its handlers write its memory while other processes read it
    /// during a sync: use it only in runs that never enter the mode.
    ///
    /// # Errors
    ///
    /// A pid out of range, a record of the wrong form or too large, a run
    /// stopped.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn am_transport_post(&self, pid: i64, record: &[u8]) -> Res<bool> {
        const CALL: &str = "am_post";
        let loc = self.loc();
        let p = self.bsp.process();
        p.check_running(CALL, loc)?;
        let pid = p.check_pid(pid, CALL, loc)?;
        let word = record
            .get(..8)
            .map(|w| u64::from_ne_bytes(w.try_into().unwrap_or_default()));
        if record.len() % 8 != 0
            || record.len() > p.world.am_max_record()
            || word.is_none_or(|w| w as u32 as usize != record.len())
        {
            return Err(p.fail(
                crate::ErrorKind::Overflow {
                    what: "active-message record",
                },
                CALL,
                loc,
            ));
        }
        p.world
            .am_post(p.pid, pid, &[record])
            .map_err(|why| p.interrupted(why, CALL, loc))
    }

    /// Transport test hook, not part of the API: the records that arrived
    /// for this process, concatenated.
    ///
    /// # Safety
    ///
    /// In a run in active-message mode, taking the records steals them
    /// from the library's dispatch: a fence waiting for their
    /// acknowledgements then waits for ever (or until the deadline). For
    /// the crate's own tests of the transport, in runs that never enter
    /// the mode.
    ///
    /// # Errors
    ///
    /// A run stopped.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn am_transport_take(&self) -> Res<Vec<u8>> {
        let loc = self.loc();
        let p = self.bsp.process();
        let mut out = Vec::new();
        p.world
            .am_take(p.pid, &mut out)
            .map_err(|why| p.interrupted(why, "am_take", loc))?;
        Ok(out)
    }

    /// Transport test hook, not part of the API: a mark of what arrived so
    /// far (see [`am_transport_wait`](Raw::am_transport_wait)).
    #[doc(hidden)]
    pub fn am_transport_mark(&self) -> u64 {
        let p = self.bsp.process();
        p.world.am_mark(p.pid)
    }

    /// Transport test hook, not part of the API: waits until something
    /// may have arrived since `mark`.
    ///
    /// # Safety
    ///
    /// A transport test hook: nothing checks that what it waits for will
    /// come (no other process may ever notify or post), so it can wait for
    /// ever (or until the deadline). For the crate's own tests of the
    /// transport.
    ///
    /// # Errors
    ///
    /// The run stopped, or its deadline passed, while waiting.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn am_transport_wait(&self, mark: u64) -> Res {
        let loc = self.loc();
        let p = self.bsp.process();
        p.world
            .am_wait(p.pid, mark)
            .map_err(|why| p.interrupted(why, "am_wait", loc))
    }

    /// Transport test hook, not part of the API: a barrier of every
    /// process (outside any sync: every process must make the same calls)
    /// that hands `poll` what arrives while it waits, and whatever arrived
    /// before it is left to the caller. `poll` may post.
    ///
    /// # Safety
    ///
    /// Every process must make this call where the others make it: a
    /// process in a sync would take this barrier for its own barrier A,
    /// and read this process's memory while it goes on computing.
    ///
    /// # Errors
    ///
    /// The run stopped, a process ended, or the deadline passed.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn am_transport_barrier(&self, poll: &mut dyn FnMut(&[u8])) -> Res {
        let loc = self.loc();
        // The handle is not borrowed while waiting: `poll` may post.
        let (world, me, mut episode) = {
            let p = self.bsp.process();
            (p.world.clone(), p.pid, p.episode)
        };
        let mut buf = Vec::new();
        let mut failed = None;
        let done = world.barrier_polling(&mut episode, 0, me, &mut || {
            buf.clear();
            match world.am_take(me, &mut buf) {
                Ok(()) => poll(&buf),
                Err(why) => failed = Some(why),
            }
            false
        });
        let mut p = self.bsp.process();
        p.episode = episode;
        done.and(failed.map_or(Ok(()), Err))
            .map(|_| ())
            .map_err(|why| p.interrupted(why, "am_barrier", loc))
    }
}
