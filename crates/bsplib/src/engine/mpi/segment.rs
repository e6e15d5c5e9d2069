//! Staging memory that the other ranks of the node map (`README.md`
//! beside this file, "Large payloads"): an anonymous shared file
//! (`memfd_create`) per staging buffer, which a receiver opens through
//! `/proc/<sender>/fd/<fd>` and maps read-only. Nothing is named in the
//! file system, so nothing is left behind when a rank dies.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A sender's staging segment: `cap` bytes mapped read-write at `addr`.
pub(super) struct Segment {
    fd: OwnedFd,
    addr: usize,
    pub(super) cap: usize,
    /// Which segment this is, among this rank's (receivers map a segment
    /// once per generation).
    pub(super) gen: u64,
}

impl Segment {
    /// A new segment of at least `len` bytes (whole pages), or `None` if
    /// the system refuses one.
    pub(super) fn new(len: usize, gen: u64) -> Option<Segment> {
        let page = 4096;
        let cap = len.checked_add(page - 1)? & !(page - 1);
        // SAFETY: a constant C string; the flags are valid.
        let raw = unsafe { libc::memfd_create(c"bsplib-staging".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return None;
        }
        // SAFETY: `raw` is a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: a descriptor of ours.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), libc::off_t::try_from(cap).ok()?) } != 0 {
            return None;
        }
        let addr = map(&fd, cap, libc::PROT_READ | libc::PROT_WRITE)?;
        Some(Segment { fd, addr, cap, gen })
    }

    /// The first byte.
    pub(super) fn base(&self) -> *mut u8 {
        std::ptr::with_exposed_provenance_mut(self.addr)
    }

    /// Gives the memory of the bytes from `keep` (rounded up to a page) to
    /// the end back to the system: they read as zeros until written again.
    /// The size is unchanged, so receivers' mappings stay valid.
    pub(super) fn release_from(&self, keep: usize) {
        let from = keep.saturating_add(4095) & !4095;
        if from < self.cap {
            // SAFETY: a range of our own descriptor; failing, it releases
            // nothing, which changes nothing else.
            unsafe {
                libc::fallocate(
                    self.fd.as_raw_fd(),
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    from as libc::off_t,
                    (self.cap - from) as libc::off_t,
                )
            };
        }
    }

    /// The descriptor number a receiver opens under `/proc`.
    pub(super) fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: our mapping of `cap` bytes, used by nobody after this
        // (the descriptor closes after it; receivers keep their own).
        unsafe { libc::munmap(self.base().cast(), self.cap) };
    }
}

/// A receiver's read-only mapping of a sender's segment.
pub(super) struct Mapping {
    addr: usize,
    pub(super) len: usize,
    pub(super) gen: u64,
}

impl Mapping {
    /// Maps descriptor `fd` of OS process `os_pid` (a segment of
    /// generation `gen`), or the reason it cannot be.
    pub(super) fn open(os_pid: u64, fd: u64, gen: u64) -> Result<Mapping, String> {
        let path = format!("/proc/{os_pid}/fd/{fd}");
        let file = std::fs::File::open(&path).map_err(|e| format!("{path}: {e}"))?;
        let len = file.metadata().map_err(|e| format!("{path}: {e}"))?.len();
        let len = usize::try_from(len).map_err(|_| format!("{path}: too large"))?;
        if len == 0 {
            return Err(format!("{path}: empty"));
        }
        let fd = OwnedFd::from(file);
        let addr = map(&fd, len, libc::PROT_READ).ok_or_else(|| format!("{path}: mmap failed"))?;
        Ok(Mapping { addr, len, gen })
    }

    /// The first byte.
    pub(super) fn base(&self) -> *const u8 {
        std::ptr::with_exposed_provenance(self.addr)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: our mapping of `len` bytes, read by nobody after this.
        unsafe { libc::munmap(std::ptr::with_exposed_provenance_mut(self.addr), self.len) };
    }
}

/// Maps `len` bytes of `fd`, shared, with `prot`.
fn map(fd: &OwnedFd, len: usize, prot: i32) -> Option<usize> {
    // SAFETY: a new mapping chosen by the kernel, of a descriptor of ours.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            prot,
            // Populated now: one pass instead of a fault per page when
            // the first payload is written, or read.
            libc::MAP_SHARED | libc::MAP_POPULATE,
            fd.as_raw_fd(),
            0,
        )
    };
    (p != libc::MAP_FAILED).then(|| p.expose_provenance())
}

/// Whether this rank can map the segment that `os_pid` made with
/// descriptor `fd` (the start-up check that every rank can read its
/// neighbour's staging memory).
pub(super) fn can_open(os_pid: u64, fd: u64) -> bool {
    Mapping::open(os_pid, fd, 0).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    // What a sender writes, a receiver's mapping reads; memory given back
    // reads as zeros there and takes new writes, the mapping unchanged.
    #[test]
    fn a_mapping_sees_the_segment_and_its_release() {
        let seg = Segment::new(3 * 4096 + 1, 7).expect("a segment");
        assert_eq!(seg.cap, 4 * 4096);
        let me = u64::from(std::process::id());
        // SAFETY: `cap` bytes of our own mapping.
        unsafe { std::ptr::write_bytes(seg.base(), 0x5A, seg.cap) };
        let m = Mapping::open(me, seg.fd() as u64, seg.gen).expect("mapped");
        assert_eq!((m.len, m.gen), (seg.cap, 7));
        // SAFETY: `len` bytes of the read-only mapping.
        let view = |m: &Mapping| unsafe { std::slice::from_raw_parts(m.base(), m.len) }.to_vec();
        assert!(view(&m).iter().all(|&b| b == 0x5A));
        seg.release_from(4096 + 1);
        let got = view(&m);
        assert!(got[..2 * 4096].iter().all(|&b| b == 0x5A));
        assert!(got[2 * 4096..].iter().all(|&b| b == 0));
        // SAFETY: the last byte of our own mapping.
        unsafe { *seg.base().add(seg.cap - 1) = 9 };
        assert_eq!(view(&m)[seg.cap - 1], 9);
        assert!(can_open(me, seg.fd() as u64));
        assert!(Mapping::open(me, u64::from(u32::MAX), 1).is_err());
    }
}
