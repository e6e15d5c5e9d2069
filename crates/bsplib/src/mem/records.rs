//! [`Records`]: the read-only, bounds-checked view of a record buffer
//! that owners and receivers parse (streams from other processes are not
//! trusted).

use std::marker::PhantomData;

use super::AlignedBuf;

/// A read-only view of 8-byte aligned records, in memory the reader may
/// not own: another process's outgoing buffer, or a stream in shared
/// memory. Reads are bounds-checked against the view's length.
///
/// The view borrows what it reads for `'a`: the buffer it was made from
/// ([`Records::of`]), or whatever the maker of an unchecked view
/// ([`Records::new`]) vouched for.
#[derive(Clone, Copy)]
pub(crate) struct Records<'a> {
    base: *const u8,
    len: usize,
    _bytes: PhantomData<&'a [u8]>,
}

impl<'a> Records<'a> {
    /// A view of `len` bytes at `base`.
    ///
    /// # Safety
    ///
    /// `base` must be 8-byte aligned and the bytes readable and unchanged
    /// for `'a` (pointers the view hands out are raw: using them later is
    /// their user's responsibility).
    #[inline]
    pub(crate) unsafe fn new(base: *const u8, len: usize) -> Self {
        debug_assert_eq!(base as usize % 8, 0);
        Records {
            base,
            len,
            _bytes: PhantomData,
        }
    }

    /// An empty view.
    #[inline]
    pub(crate) fn empty() -> Self {
        Records {
            base: std::ptr::NonNull::<u64>::dangling().as_ptr().cast(),
            len: 0,
            _bytes: PhantomData,
        }
    }

    /// A view of `buf`'s contents, borrowing it.
    #[inline]
    pub(crate) fn of(buf: &'a AlignedBuf) -> Self {
        Records {
            base: buf.as_ptr(),
            len: buf.len(),
            _bytes: PhantomData,
        }
    }

    /// Hints that byte `at` will be read soon (nothing if out of view).
    #[inline(always)]
    pub(crate) fn prefetch(&self, at: usize) {
        if at < self.len {
            super::prefetch_read(self.base.wrapping_add(at));
        }
    }

    /// Bytes in view.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes in view, for as long as the view's borrow.
    pub(crate) fn bytes(&self) -> &'a [u8] {
        // SAFETY: readable and unchanged for `'a` (the borrow of `of`, or
        // the contract of `new`).
        unsafe { std::slice::from_raw_parts(self.ptr(0, self.len), self.len) }
    }

    /// The 8-byte word at byte offset `at` (a multiple of 8).
    #[cfg(test)]
    pub(crate) fn word(&self, at: usize) -> usize {
        assert!(at % 8 == 0 && at + 8 <= self.len, "record word out of view");
        // SAFETY: in bounds (checked) and aligned (`base` is, `at` is a
        // multiple of 8); readable by the contract of `new`.
        unsafe { self.base.add(at).cast::<u64>().read() as usize }
    }

    /// The 8-byte word at byte offset `at`, or `None` beyond the view (a
    /// record cut short: streams from other processes are not trusted).
    #[inline]
    pub(crate) fn try_word(&self, at: usize) -> Option<usize> {
        if at % 8 == 0 && at.checked_add(8)? <= self.len {
            // SAFETY: in bounds (checked) and aligned (`base` is, `at` is
            // a multiple of 8); readable by the contract of `new`.
            Some(unsafe { self.base.add(at).cast::<u64>().read() as usize })
        } else {
            None
        }
    }

    /// Pointer to byte `at` of `len` bytes inside the view, or `None` if
    /// they are not all inside.
    #[inline]
    pub(crate) fn try_ptr(&self, at: usize, len: usize) -> Option<*const u8> {
        (at.checked_add(len)? <= self.len).then(|| self.base.wrapping_add(at))
    }

    /// Pointer to byte `at` of `len` bytes inside the view.
    #[inline]
    pub(crate) fn ptr(&self, at: usize, len: usize) -> *const u8 {
        assert!(
            at.checked_add(len).is_some_and(|end| end <= self.len),
            "record bytes out of view"
        );
        self.base.wrapping_add(at)
    }

    /// The sub-view of `len` bytes at byte offset `at` (a multiple of 8).
    #[inline]
    pub(crate) fn sub(&self, at: usize, len: usize) -> Records<'a> {
        debug_assert_eq!(at % 8, 0);
        Records {
            base: self.ptr(at, len),
            len,
            _bytes: PhantomData,
        }
    }
}
