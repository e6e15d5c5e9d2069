//! Bulk synchronous message passing: tag sizes, send, and the queue of the
//! messages sent to this process in the previous superstep.
//!
//! The queue is an index into the senders' published buffers (no copy at
//! the sync): those stay untouched until the first barrier of the next sync,
//! which is exactly the lifetime BSPlib gives a message (and `bsp_hpmove`
//! pointers).

use crate::error::{Error, ErrorKind};
use crate::mailbox::{DATA, REG};
use crate::mem::{self, Records};
use crate::process::{Loc, Process};

/// A message in the queue: pointers into the sender's published buffer.
#[derive(Clone, Copy)]
pub(crate) struct Msg {
    pub(crate) tag: *const u8,
    pub(crate) tag_len: usize,
    pub(crate) payload: *const u8,
    pub(crate) len: usize,
}

/// The bit of a message record's tag-length word that makes it a
/// *collective record* `[COLL_RECORD][len][payload]` (`collectives.rs`):
/// indexed into the library's queue, never the user's. No tag length
/// reaches it (tag sizes are checked against the address space).
pub(crate) const COLL_RECORD: usize = 1 << 63;

/// The messages delivered at the last sync, not yet moved; and the
/// collective records, with their senders.
#[derive(Default)]
pub(crate) struct Inbox {
    msgs: Vec<Msg>,
    head: usize,
    bytes: usize,
    pub(crate) coll: Vec<(usize, Msg)>,
    /// The bytes of messages put back by [`Inbox::restore`] (a collective
    /// of several supersteps), which `msgs` points into.
    kept: Vec<u64>,
}

/// The messages of a queue set aside across the inner syncs of a
/// collective of several supersteps: their tags and payloads, copied, at
/// word-aligned offsets.
pub(crate) struct Aside {
    bytes: Vec<u64>,
    /// `(tag offset, tag length, payload offset, payload length)`.
    msgs: Vec<(usize, usize, usize, usize)>,
}

impl Inbox {
    pub(crate) fn clear(&mut self) {
        self.msgs.clear();
        self.head = 0;
        self.bytes = 0;
        self.coll.clear();
        self.kept.clear();
    }

    /// Copies the messages still in the queue (`None` if there are none),
    /// to be put back by [`Inbox::restore`] after the syncs that would
    /// drop them.
    pub(crate) fn set_aside(&self) -> Option<Aside> {
        let msgs = &self.msgs[self.head..];
        if msgs.is_empty() {
            return None;
        }
        let words = |n: usize| n.div_ceil(8);
        let total: usize = msgs.iter().map(|m| words(m.tag_len) + words(m.len)).sum();
        let mut aside = Aside {
            bytes: vec![0u64; total],
            msgs: Vec::with_capacity(msgs.len()),
        };
        let base = aside.bytes.as_mut_ptr().cast::<u8>();
        let mut at = 0;
        for m in msgs {
            let tag_at = at;
            at += 8 * words(m.tag_len);
            let payload_at = at;
            at += 8 * words(m.len);
            // SAFETY: a queued message's tag and payload are readable
            // until the next `clear` (`collect`'s contract), and `bytes`
            // has room for both at these offsets (sized above).
            unsafe {
                mem::copy(m.tag, base.add(tag_at), m.tag_len);
                mem::copy(m.payload, base.add(payload_at), m.len);
            }
            aside.msgs.push((tag_at, m.tag_len, payload_at, m.len));
        }
        Some(aside)
    }

    /// Puts the messages of `aside` back in front of the queue; their
    /// bytes stay readable until the next `clear`.
    pub(crate) fn restore(&mut self, aside: Aside) {
        self.kept = aside.bytes;
        let base = self.kept.as_ptr().cast::<u8>();
        let back: Vec<Msg> = aside
            .msgs
            .iter()
            .map(|&(tag_at, tag_len, payload_at, len)| {
                self.bytes += len;
                // SAFETY: the offsets are inside `kept` (`set_aside`).
                unsafe {
                    Msg {
                        tag: base.add(tag_at),
                        tag_len,
                        payload: base.add(payload_at),
                        len,
                    }
                }
            })
            .collect();
        self.msgs.splice(self.head..self.head, back);
    }

    /// Indexes the message records `[tag len][len][tag][payload]` of one
    /// sender for this process; `Err` at the first record that does not
    /// fit the view or whose tag is not `tag_size` bytes, the tag size
    /// every process sent with in that superstep (the records before it
    /// are indexed). The tag length is checked because `bsp_get_tag`
    /// copies that many bytes into a buffer the caller sized by it.
    ///
    /// # Safety
    ///
    /// The bytes in view must stay readable and unchanged until the next
    /// `clear`.
    pub(crate) unsafe fn collect(
        &mut self,
        buf: Records<'_>,
        tag_size: usize,
        src: usize,
    ) -> Result<(), ()> {
        let mut at = 0;
        while at < buf.len() {
            let (Some(tag_len), Some(len)) = (buf.try_word(at), buf.try_word(at + 8)) else {
                return Err(());
            };
            if tag_len == COLL_RECORD {
                let payload = buf.try_ptr(at + 16, len).ok_or(())?;
                at += 16 + (len.checked_add(7).ok_or(())? & !7);
                self.coll.push((
                    src,
                    Msg {
                        tag: payload,
                        tag_len: 0,
                        payload,
                        len,
                    },
                ));
                continue;
            }
            if tag_len != tag_size {
                return Err(());
            }
            at += 16;
            let tag = buf.try_ptr(at, tag_len).ok_or(())?;
            at += tag_len.checked_add(7).ok_or(())? & !7;
            let payload = buf.try_ptr(at, len).ok_or(())?;
            at += len.checked_add(7).ok_or(())? & !7;
            self.msgs.push(Msg {
                tag,
                tag_len,
                payload,
                len,
            });
            self.bytes += len;
        }
        Ok(())
    }

    /// The first message, if any.
    #[inline]
    pub(crate) fn front(&self) -> Option<Msg> {
        self.msgs.get(self.head).copied()
    }

    /// Removes the first message and returns it; its bytes stay readable
    /// until the next `clear`.
    #[inline]
    pub(crate) fn pop_front(&mut self) -> Option<Msg> {
        let m = self.front()?;
        self.head += 1;
        self.bytes -= m.len;
        Some(m)
    }

    /// `(messages, payload bytes)` still in the queue.
    #[inline]
    pub(crate) fn size(&self) -> (usize, usize) {
        (self.msgs.len() - self.head, self.bytes)
    }
}

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
