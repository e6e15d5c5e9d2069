//! The raw layer's fault-injection hooks: forged records (puts, gets,
//! accumulates, sends, strided transfers) that skip the origin's checks,
//! for the crate's own tests of the owner's and receiver's checks.

use super::{Raw, Res};

impl Raw<'_> {
    /// Test hook for the owner's checks, not part of the API: sends `pid`
    /// a put record naming registration slot `slot` (slots are numbered
    /// in push order from 0, the same on every process), `offset` and
    /// `data`, with none of the sender's checks. The owner resolves and
    /// checks every record in its own table at the sync, so a record
    /// naming memory it does not have fails the run there with
    /// [`ErrorKind::InvalidRecord`](crate::ErrorKind::InvalidRecord);
    /// nothing is written.
    ///
    /// # Safety
    ///
    /// Exists for the crate's own fault-injection tests: the record it
    /// forges bypasses the origin's checks, and what the owner (or
    /// receiver) does with it is what those tests test. Such a record may
    /// make the run fail, or hang. Call it only in tests of those checks.
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn forge_put(&self, pid: i64, slot: u64, offset: usize, data: &[u8]) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_put", loc)?;
        let pid = p.check_pid(pid, "bsp_put", loc)?;
        // SAFETY: `data` is readable for its length.
        unsafe { p.push_put(pid, slot, offset, data.as_ptr(), data.len(), "bsp_put", loc) }
    }

    /// Test hook for the owner's checks of accumulates, not part of the
    /// API: sends `pid` an accumulate record `[slot | ACCUMULATE][offset]
    /// [len][desc][data]` with `desc` as given (`type | op << 8 | line <<
    /// 32`), with none of the sender's checks. The owner refuses a slot it
    /// does not have, a range beyond its area, an unknown or undefined
    /// type and operator pair, or a length that is not a whole number of
    /// elements, with
    /// [`ErrorKind::InvalidRecord`](crate::ErrorKind::InvalidRecord).
    ///
    /// # Safety
    ///
    /// Exists for the crate's own fault-injection tests: the record it
    /// forges bypasses the origin's checks, and what the owner (or
    /// receiver) does with it is what those tests test. Such a record may
    /// make the run fail, or hang. Call it only in tests of those checks.
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn forge_accumulate(
        &self,
        pid: i64,
        slot: u64,
        offset: usize,
        desc: u64,
        data: &[u8],
    ) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_accumulate", loc)?;
        let pid = p.check_pid(pid, "bsp_accumulate", loc)?;
        let header = [
            (slot | crate::rma::ACCUMULATE) as usize,
            offset,
            data.len(),
            desc as usize,
        ];
        let buf = &mut p.dest(pid).puts;
        buf.try_reserve_record(data.len() + 8)
            .expect("room for a test record");
        // SAFETY: `data` is readable for its length.
        unsafe { buf.push_record4(header, data.as_ptr(), data.len()) };
        p.flags |= crate::mailbox::DATA;
        Ok(())
    }

    /// Test hook for the receiver's checks, not part of the API: sends
    /// `pid` a put record saying that its `len` bytes are at byte `at` of
    /// this process's channel (`remote == false`: the record of a large
    /// put on `processes`) or at address `at` of this process's memory
    /// (`remote`: an hpput read with cross-memory attach), whatever is
    /// there. The receiver refuses a range outside the channel, an address
    /// the kernel will not read, or such a record on an engine without
    /// that path, with
    /// [`ErrorKind::InvalidRecord`](crate::ErrorKind::InvalidRecord).
    ///
    /// # Safety
    ///
    /// Exists for the crate's own fault-injection tests: the record it
    /// forges bypasses the origin's checks, and what the owner (or
    /// receiver) does with it is what those tests test. Such a record may
    /// make the run fail, or hang. Call it only in tests of those checks.
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn forge_put_elsewhere(
        &self,
        pid: i64,
        slot: u64,
        offset: usize,
        len: usize,
        at: usize,
        remote: bool,
    ) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_put", loc)?;
        let pid = p.check_pid(pid, "bsp_put", loc)?;
        p.dest(pid).puts.push_words([
            slot as usize,
            offset,
            len | if remote {
                crate::mem::PUT_REMOTE
            } else {
                crate::mem::PUT_BULK
            },
            at,
        ]);
        p.flags |= crate::mailbox::DATA;
        Ok(())
    }

    /// Test hook for the receiver's checks, not part of the API: sends
    /// `pid` a message whose tag is `tag`, whatever the tag size in force
    /// (the receiver refuses a tag of another length at the sync, with
    /// [`ErrorKind::InvalidRecord`](crate::ErrorKind::InvalidRecord)).
    ///
    /// # Safety
    ///
    /// Exists for the crate's own fault-injection tests: the record it
    /// forges bypasses the origin's checks, and what the owner (or
    /// receiver) does with it is what those tests test. Such a record may
    /// make the run fail, or hang. Call it only in tests of those checks.
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn forge_send(&self, pid: i64, tag: &[u8], payload: &[u8]) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_send", loc)?;
        let pid = p.check_pid(pid, "bsp_send", loc)?;
        let out = p.out_sends(pid);
        // SAFETY: both slices are readable for their lengths.
        unsafe {
            out.push_record([tag.len(), payload.len()], tag.as_ptr(), tag.len());
            out.push_raw(payload.as_ptr(), payload.len());
        }
        p.flags |= crate::mailbox::DATA;
        Ok(())
    }

    /// Test hook for the owner's checks, not part of the API: asks `pid`
    /// for `len` bytes at `offset` of registration slot `slot`, with none
    /// of the requester's checks, into a buffer of the library's that is
    /// dropped after the sync. See [`forge_put`](Raw::forge_put).
    ///
    /// # Safety
    ///
    /// Exists for the crate's own fault-injection tests: the record it
    /// forges bypasses the origin's checks, and what the owner (or
    /// receiver) does with it is what those tests test. Such a record may
    /// make the run fail, or hang. Call it only in tests of those checks.
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn forge_get(&self, pid: i64, slot: u64, offset: usize, len: usize) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_get", loc)?;
        let pid = p.check_pid(pid, "bsp_get", loc)?;
        let sink = std::rc::Rc::new(std::cell::UnsafeCell::new(
            vec![0u8; len].into_boxed_slice(),
        ));
        // SAFETY: no reference to the buffer exists; the pointer is used
        // by this sync only, while the keepalive below holds the buffer.
        let dst = unsafe { (*sink.get()).as_mut_ptr() };
        // No source address: always a request, which the owner checks.
        p.push_get(pid, slot, offset, 0, dst, len);
        p.get_keep.push(sink);
        Ok(())
    }

    /// Test hook for the owner's checks, not part of the API: sends `pid`
    /// the strided put record `[slot | VECTOR][offset][len][block][stride]`
    /// followed by `data` (which need not hold `len` bytes), with none of
    /// the sender's checks. The owner refuses a shape whose blocks do not
    /// divide `len` or overlap, a span beyond its area, or a record cut
    /// short, with [`ErrorKind::InvalidRecord`](crate::ErrorKind::InvalidRecord).
    ///
    /// # Safety
    ///
    /// Exists for the crate's own fault-injection tests: the record it
    /// forges bypasses the origin's checks, and what the owner (or
    /// receiver) does with it is what those tests test. Such a record may
    /// make the run fail, or hang. Call it only in tests of those checks.
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn forge_put_strided(
        &self,
        pid: i64,
        slot: u64,
        offset: usize,
        len: usize,
        block: usize,
        stride: usize,
        data: &[u8],
    ) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_put_strided", loc)?;
        let pid = p.check_pid(pid, "bsp_put_strided", loc)?;
        let out = &mut p.dest(pid).puts;
        out.push_words([
            (slot | crate::mem::VECTOR) as usize,
            offset,
            len,
            block,
            stride,
        ]);
        // SAFETY: `data` is readable for its length.
        unsafe { out.push_raw(data.as_ptr(), data.len()) };
        p.flags |= crate::mailbox::DATA;
        Ok(())
    }

    /// Test hook for the owner's checks, not part of the API: asks `pid`
    /// for `count` blocks of `block` bytes at a stride of `stride` from
    /// `offset` of registration slot `slot` (`stride != block`), with none
    /// of the requester's checks, into a buffer of the library's. See
    /// [`forge_put_strided`](Raw::forge_put_strided).
    ///
    /// # Safety
    ///
    /// Exists for the crate's own fault-injection tests: the record it
    /// forges bypasses the origin's checks, and what the owner (or
    /// receiver) does with it is what those tests test. Such a record may
    /// make the run fail, or hang. Call it only in tests of those checks.
    ///
    /// # Errors
    ///
    /// A pid out of range, a run already stopped.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn forge_get_strided(
        &self,
        pid: i64,
        slot: u64,
        offset: usize,
        block: usize,
        stride: usize,
        count: usize,
    ) -> Res {
        let loc = self.loc();
        let mut p = self.bsp.process();
        p.check_running("bsp_get_strided", loc)?;
        let pid = p.check_pid(pid, "bsp_get_strided", loc)?;
        let len = block.saturating_mul(count);
        let sink = std::rc::Rc::new(std::cell::UnsafeCell::new(
            vec![0u8; len].into_boxed_slice(),
        ));
        // SAFETY: no reference to the buffer exists; the pointer is used
        // by this sync only, while the keepalive below holds the buffer.
        let dst = unsafe { (*sink.get()).as_mut_ptr() };
        let from = crate::mem::Shape {
            block,
            stride,
            count,
        };
        // No source address: always a request, which the owner checks.
        p.push_get_shaped(
            pid,
            slot,
            offset,
            0,
            dst,
            from,
            crate::mem::Shape::contiguous(len),
        );
        p.get_keep.push(sink);
        Ok(())
    }
}
