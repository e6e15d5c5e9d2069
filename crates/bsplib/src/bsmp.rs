//! Bulk synchronous message passing: tag sizes, send, and the calls that
//! read the queue of the messages sent to this process in the previous
//! superstep (the queue itself: `process/inbox.rs`).

use crate::error::{Error, ErrorKind};
use crate::mailbox::{DATA, REG};
use crate::mem;
use crate::process::inbox::COLL_RECORD;
use crate::process::{Loc, Process};

impl Process {
    /// `bsp_set_tagsize`: returns the previous value given (C).
    pub(crate) fn set_tagsize(&mut self, size: i64, loc: Loc) -> Result<usize, Error> {
        self.check_running("bsp_set_tagsize", loc)?;
        let size = self.check_nonneg(size, "tag size", "bsp_set_tagsize", loc)?;
        let prev = self.tags.next;
        self.tags.next = size;
        let t = &mut self.out().tag;
        t.calls += 1;
        t.last = size;
        t.location = loc;
        self.flags |= REG;
        Ok(prev)
    }

    /// The tag size of messages sent in this superstep (B).
    #[inline]
    pub(crate) fn send_tag_size(&self) -> usize {
        self.tags.send
    }

    /// `bsp_send`: copies `tag` (the tag size in force) and the payload now.
    ///
    /// # Safety
    ///
    /// `tag` must be readable for the tag size in force and `payload` for
    /// `nbytes` bytes.
    pub(crate) unsafe fn send(
        &mut self,
        pid: i64,
        tag: *const u8,
        payload: *const u8,
        nbytes: i64,
        loc: Loc,
    ) -> Result<(), Error> {
        const CALL: &str = "bsp_send";
        self.check_running(CALL, loc)?;
        self.note_transfer(CALL, loc)?;
        let pid = self.check_pid(pid, CALL, loc)?;
        let len = self.check_nonneg(nbytes, "payload nbytes", CALL, loc)?;
        let tag_len = self.tags.send;
        self.check_pointer(tag, tag_len, "tag", CALL, loc)?;
        self.check_pointer(payload, len, "payload", CALL, loc)?;
        self.dest(pid)
            .sends
            .try_reserve_record(tag_len.saturating_add(len).saturating_add(8))
            .map_err(|bytes| self.fail(ErrorKind::OutOfMemory { bytes }, CALL, loc))?;
        let buf = &mut self.dest(pid).sends;
        // SAFETY: the caller guarantees both ranges are readable. The
        // header and the tag form one record, the payload another, each
        // padded to 8: the layout `Inbox::collect` reads.
        unsafe {
            buf.push_record([tag_len, len], tag, tag_len);
            buf.push_raw(payload, len);
        }
        self.flags |= DATA;
        Ok(())
    }

    /// Sends the word `first` then `body` to `pid` as one collective record
    /// (copied now, with no copy in between), to be read from `inbox.coll`
    /// after the sync that ends this superstep.
    pub(crate) fn coll_send(
        &mut self,
        pid: usize,
        first: u64,
        body: &[u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.dest(pid)
            .sends
            .try_reserve_record(body.len().saturating_add(16))
            .map_err(|bytes| self.fail(ErrorKind::OutOfMemory { bytes }, call, loc))?;
        let buf = &mut self.dest(pid).sends;
        let first = first.to_ne_bytes();
        // SAFETY: the header and the payload's first word are one record,
        // the rest of the payload another (each a multiple of 8, then
        // padded): one payload of `8 + body.len()` bytes, the layout
        // `Inbox::collect` reads; both sources are live slices.
        unsafe {
            buf.push_record([COLL_RECORD, 8 + body.len()], first.as_ptr(), 8);
            buf.push_raw(body.as_ptr(), body.len());
        }
        self.flags |= DATA;
        Ok(())
    }

    /// `bsp_move`: copies at most `max` bytes of the first message's payload
    /// to `dst` and removes the message; returns the bytes copied.
    ///
    /// # Safety
    ///
    /// `dst` must be writable for `min(max, payload length)` bytes.
    pub(crate) unsafe fn move_payload(
        &mut self,
        dst: *mut u8,
        max: i64,
        loc: Loc,
    ) -> Result<usize, Error> {
        const CALL: &str = "bsp_move";
        let max = self.check_nonneg(max, "reception nbytes", CALL, loc)?;
        let Some(m) = self.inbox.front() else {
            return Err(self.fail(ErrorKind::EmptyQueue, CALL, loc));
        };
        let n = m.len.min(max);
        self.check_pointer(dst, n, "payload", CALL, loc)?;
        self.inbox.pop_front();
        // SAFETY: `m.payload` is readable for `m.len` bytes until the next
        // sync (Inbox docs); the caller vouches for `dst`.
        unsafe { mem::copy(m.payload, dst, n) };
        Ok(n)
    }
}
