//! BSMP on the handle: tag sizes, `send`, the queue (`qsize`,
//! `get_tag`, `move_payload`, `hpmove`) and [`Message`].

use super::*;

impl Bsp {
    /// `bsp_set_tagsize`: sets the tag size of messages sent from the next
    /// superstep on; returns the previous value given (the tag size in force
    /// for the next superstep before this call). Collective: every process
    /// makes the same calls with the same values in the same superstep.
    ///
    /// # Errors
    ///
    /// Differences between processes are reported by the next
    /// [`sync`](Bsp::sync) ([`ErrorKind::TagSizeMismatch`]).
    ///
    /// # Examples
    ///
    /// ```
    /// bsplib::run(2, |bsp| {
    ///     assert_eq!(bsp.set_tagsize(4)?, 0);
    ///     assert_eq!(bsp.set_tagsize(8)?, 4);
    ///     bsp.sync()?;
    ///     bsp.send((bsp.pid() + 1) % 2, &7u64.to_ne_bytes(), b"hi")?;
    ///     bsp.sync()?;
    ///     let m = bsp.hpmove().expect("one message");
    ///     assert_eq!((m.tag(), m.payload()), (&7u64.to_ne_bytes()[..], &b"hi"[..]));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn set_tagsize(&self, nbytes: usize) -> Result<usize, Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        let n = i64::try_from(nbytes).map_err(|_| {
            p.fail(
                ErrorKind::Overflow { what: "tag size" },
                "bsp_set_tagsize",
                loc,
            )
        })?;
        p.set_tagsize(n, loc)
    }

    /// The tag size of messages sent in this superstep.
    pub fn send_tagsize(&self) -> usize {
        self.process.borrow().send_tag_size()
    }

    /// `bsp_send`: copies `tag` and `payload` now and delivers them to the
    /// queue of process `pid` in the next superstep. Zero-length tags and
    /// payloads still make a message.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::TagLength`] if
    /// `tag.len()` is not the tag size in force ([`send_tagsize`](Bsp::send_tagsize)).
    ///
    /// # BSP cost
    ///
    /// Tag plus payload bytes towards both h-relations.
    #[track_caller]
    pub fn send(&self, pid: usize, tag: &[u8], payload: &[u8]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        let expected = p.send_tag_size();
        if tag.len() != expected {
            return Err(p.fail(
                ErrorKind::TagLength {
                    given: tag.len(),
                    expected,
                },
                "bsp_send",
                loc,
            ));
        }
        // SAFETY: both are live slices of the stated lengths.
        unsafe {
            p.send(
                pid_arg(pid),
                tag.as_ptr(),
                payload.as_ptr(),
                payload.len() as i64,
                loc,
            )
        }
    }

    /// [`send`](Bsp::send) of plain-old-data: the bytes of `tag` and of
    /// `payload`.
    ///
    /// # Errors
    ///
    /// As for [`send`](Bsp::send).
    #[track_caller]
    pub fn send_pod<Tag: Pod, T: Pod>(
        &self,
        pid: usize,
        tag: &Tag,
        payload: &[T],
    ) -> Result<(), Error> {
        self.send(pid, bytemuck::bytes_of(tag), bytemuck::cast_slice(payload))
    }

    /// `bsp_qsize`: `(messages, payload bytes)` still in the queue.
    ///
    /// # BSP cost
    ///
    /// Local.
    pub fn qsize(&self) -> (usize, usize) {
        self.process.borrow().inbox.size()
    }

    /// `bsp_get_tag`: copies the first message's tag into the front of
    /// `tag` and returns its payload length, or `None` if the queue is
    /// empty (C's status -1). The message stays in the queue.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LocalBounds`] if `tag` is shorter than the tag size of
    /// the queue.
    #[track_caller]
    pub fn get_tag(&self, tag: &mut [u8]) -> Result<Option<usize>, Error> {
        let loc = Some(SourceLocation::caller());
        let p = self.process();
        let Some(m) = p.inbox.front() else {
            return Ok(None);
        };
        if tag.len() < m.tag_len {
            return Err(p.fail(
                ErrorKind::LocalBounds {
                    what: "tag buffer",
                    needed: m.tag_len,
                    available: tag.len(),
                    elem: 1,
                },
                "bsp_get_tag",
                loc,
            ));
        }
        // SAFETY: the queue's tag bytes are readable until the next sync
        // (Inbox docs); `tag` has room for them.
        unsafe { crate::mem::copy(m.tag, tag.as_mut_ptr(), m.tag_len) };
        Ok(Some(m.len))
    }

    /// `bsp_move`: copies the first message's payload into `buf`, truncated
    /// to `buf.len()`, removes the message, and returns the number of bytes
    /// copied.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EmptyQueue`] if there is no message.
    #[track_caller]
    pub fn move_payload(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let loc = Some(SourceLocation::caller());
        // SAFETY: `buf` is writable for `buf.len()` bytes.
        unsafe {
            self.process()
                .move_payload(buf.as_mut_ptr(), buf.len() as i64, loc)
        }
    }

    /// `bsp_hpmove`: removes the first message from the queue and returns
    /// views of its tag and payload, without copying, or `None` if the
    /// queue is empty.
    ///
    /// BSPlib makes the caller promise not to use the pointers after the
    /// superstep; here the borrow checker does: the views borrow `self`,
    /// and [`sync`](Bsp::sync) needs `&mut self`. So this function is safe.
    /// Tag and payload start 8-byte aligned.
    pub fn hpmove(&self) -> Option<Message<'_>> {
        let m = self.process().inbox.pop_front()?;
        // SAFETY: the message's bytes stay allocated and unchanged until the
        // first barrier of the next sync (Inbox docs), which cannot start
        // while the returned borrow of `self` lives.
        let (tag, payload) = unsafe {
            (
                std::slice::from_raw_parts(m.tag, m.tag_len),
                std::slice::from_raw_parts(m.payload, m.len),
            )
        };
        Some(Message { tag, payload })
    }
}

/// A message taken from the queue by [`Bsp::hpmove`], valid for the rest of
/// the superstep.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    tag: &'a [u8],
    payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// The tag bytes.
    pub fn tag(&self) -> &'a [u8] {
        self.tag
    }

    /// The payload bytes.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// The tag read as a `T`, if it has `size_of::<T>()` bytes.
    pub fn tag_as<T: Pod>(&self) -> Option<T> {
        (self.tag.len() == std::mem::size_of::<T>()).then(|| bytemuck::pod_read_unaligned(self.tag))
    }

    /// The payload as a slice of `T`, if its length is a multiple of
    /// `size_of::<T>()` (the payload is 8-byte aligned, so this works for
    /// any `T` with alignment up to 8).
    pub fn payload_as<T: Pod>(&self) -> Option<&'a [T]> {
        bytemuck::try_cast_slice(self.payload).ok()
    }
}
