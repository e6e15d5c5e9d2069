//! The raw layer's BSMP: the tag size, sends and the message queue
//! (`bsp_get_tag`, `bsp_move`, `bsp_hpmove`) through C pointers.

use std::ffi::c_void;

use super::{Raw, Res};

impl Raw<'_> {
    /// `bsp_set_tagsize`: returns the previous value (C writes it back
    /// through its pointer argument).
    ///
    /// # Errors
    ///
    /// A negative size; mismatches are reported by the next sync.
    #[track_caller]
    pub fn set_tagsize(&self, nbytes: i64) -> Res<i64> {
        self.bsp
            .process()
            .set_tagsize(nbytes, self.loc())
            .map(|prev| prev as i64)
    }

    /// `bsp_send(pid, tag, payload, nbytes)`; the tag has the tag size in
    /// force for this superstep.
    ///
    /// # Safety
    ///
    /// `tag` must be readable for the tag size in force, `payload` for
    /// `nbytes` bytes (either may be null when its size is 0).
    ///
    /// # Errors
    ///
    /// Pid out of range, negative `nbytes`.
    #[track_caller]
    pub unsafe fn send(
        &self,
        pid: i64,
        tag: *const c_void,
        payload: *const c_void,
        nbytes: i64,
    ) -> Res {
        let loc = self.loc();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.bsp
                .process()
                .send(pid, tag.cast(), payload.cast(), nbytes, loc)
        }
    }

    /// `bsp_qsize`: `(messages, payload bytes)` in the queue.
    pub fn qsize(&self) -> (usize, usize) {
        self.bsp.qsize()
    }

    /// `bsp_get_tag`: `None` (status -1) on an empty queue; otherwise copies
    /// the tag (the queue's tag size) to `tag` and returns the payload
    /// length.
    ///
    /// # Safety
    ///
    /// `tag` must be writable for the queue's tag size.
    ///
    /// # Errors
    ///
    /// A null `tag` when the queue's tag size is not 0.
    #[track_caller]
    pub unsafe fn get_tag(&self, tag: *mut c_void) -> Res<Option<usize>> {
        let loc = self.loc();
        let p = self.bsp.process();
        let Some(m) = p.inbox.front() else {
            return Ok(None);
        };
        p.check_pointer(tag, m.tag_len, "tag", "bsp_get_tag", loc)?;
        // SAFETY: the message is readable until the next sync; the caller
        // vouches for `tag`, which is not null.
        unsafe { crate::mem::copy(m.tag, tag.cast(), m.tag_len) };
        Ok(Some(m.len))
    }

    /// `bsp_move(payload, reception_nbytes)`: returns the bytes copied.
    ///
    /// # Safety
    ///
    /// `payload` must be writable for `reception_nbytes` bytes.
    ///
    /// # Errors
    ///
    /// An empty queue; a negative `reception_nbytes`.
    #[track_caller]
    pub unsafe fn move_payload(&self, payload: *mut c_void, reception_nbytes: i64) -> Res<usize> {
        let loc = self.loc();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.bsp
                .process()
                .move_payload(payload.cast(), reception_nbytes, loc)
        }
    }

    /// `bsp_hpmove`: `None` (-1) on an empty queue; otherwise removes the
    /// first message and returns pointers to its tag and payload, valid
    /// until the end of the superstep, and the payload length.
    pub fn hpmove(&self) -> Option<(*const c_void, *const c_void, usize)> {
        let m = self.bsp.process().inbox.pop_front()?;
        Some((m.tag.cast(), m.payload.cast(), m.len))
    }
}
