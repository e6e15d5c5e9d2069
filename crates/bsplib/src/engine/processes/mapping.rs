//! A shared (or private) anonymous mapping, unmapped on drop: the memory
//! of the control block, the streams, the index, the inboxes and the
//! windows of a run.

use std::ptr::NonNull;

/// A shared anonymous mapping, unmapped on drop.
pub(crate) struct Mapping {
    pub(super) ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    pub(super) fn new(len: usize, noreserve: bool) -> Result<Self, String> {
        Self::with(len, noreserve, true)
    }

    /// An anonymous mapping of `len` bytes, shared (inherited by forked
    /// processes) or private, optionally reserving no memory.
    pub(crate) fn with(len: usize, noreserve: bool, shared: bool) -> Result<Self, String> {
        let flags = if shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        } | libc::MAP_ANONYMOUS
            | if noreserve { libc::MAP_NORESERVE } else { 0 };
        // SAFETY: a fresh anonymous mapping: no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "mmap of {len} bytes: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Mapping {
            ptr: NonNull::new(p.cast()).ok_or("mmap returned null")?,
            len,
        })
    }
}

impl Mapping {
    /// The first byte.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The bytes mapped.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

// SAFETY: plain memory; who touches which bytes when is its users'
// protocol.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping was created by `new` and nothing borrowed from
        // it outlives the `Shared` that owns it.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
