//! The BSMP queue of a process: the messages sent to it in the previous
//! superstep, as an index into the senders' published buffers (no copy
//! at the sync): those stay untouched until the first barrier of the next
//! sync, which is exactly the lifetime BSPlib gives a message (and
//! `bsp_hpmove` pointers). `bsmp.rs` has the calls that fill and read it.

use crate::mem::{self, Records};

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
