//! The active-message inbox of the shared-memory engines: a bounded
//! multi-producer, single-consumer queue of bytes in a region of memory
//! (private memory on `threads` and `serial`, the shared mapping on
//! `processes`, where every process sees it at the same address).
//!
//! Producers append whole records under a spin lock; the consumer takes
//! every byte appended so far under the same lock. A record is appended
//! whole or not at all, so the consumer never sees part of one. The lock
//! is held only for a copy (no allocation, no call that can block), so a
//! waiter spins briefly and yields; a waiter also gives up when the run is
//! stopped (a process killed while holding it cannot make the others wait
//! forever). A lock keeps the protocol obviously correct across processes;
//! the design's lock-free ring (`ACTIVE_MESSAGES.md`, section 6) can
//! replace it behind the same two calls when a benchmark asks for it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Bytes of a ring's header, before its data.
pub(crate) const HEADER: usize = 64;

/// The ring's header: the lock and the two positions, counted in bytes
/// from the start of the run (they never wrap: 2^64 bytes is forever).
/// All-zero is a valid empty ring.
#[repr(C, align(64))]
struct Header {
    lock: AtomicU32,
    /// Bytes consumed so far.
    head: AtomicU64,
    /// Bytes appended so far.
    tail: AtomicU64,
}

const _: () = assert!(std::mem::size_of::<Header>() == HEADER);

/// A view of a ring in a region of `HEADER + capacity` bytes.
pub(crate) struct Ring {
    header: *const Header,
    data: *mut u8,
    capacity: usize,
}

// SAFETY: every access to the data goes through the lock in the header
// (atomics); the region outlives the view (callers' contract of `at`).
unsafe impl Send for Ring {}
// SAFETY: as above.
unsafe impl Sync for Ring {}

/// The run was stopped while waiting for the lock.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Stopped;

impl Ring {
    /// The ring in the region at `base`, of `len` bytes.
    ///
    /// # Safety
    ///
    /// `base` must be 64-byte aligned and valid for reads and writes of
    /// `len > HEADER` bytes for as long as the view is used, zeroed or a
    /// ring already, and accessed only through `Ring` views.
    pub(crate) unsafe fn at(base: *mut u8, len: usize) -> Ring {
        debug_assert!(base.addr() % 64 == 0 && len > HEADER);
        Ring {
            header: base.cast::<Header>(),
            // SAFETY: inside the region (`len > HEADER`).
            data: unsafe { base.add(HEADER) },
            capacity: len - HEADER,
        }
    }

    fn header(&self) -> &Header {
        // SAFETY: the region holds a header (`at`'s contract).
        unsafe { &*self.header }
    }

    /// Takes the lock; `Err` once `stopped()` says the run is over.
    fn lock(&self, stopped: &dyn Fn() -> bool) -> Result<Guard<'_>, Stopped> {
        let lock = &self.header().lock;
        let mut tries = 0u32;
        loop {
            if lock
                .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(Guard(lock));
            }
            tries = tries.wrapping_add(1);
            if tries % 64 == 0 {
                if stopped() {
                    return Err(Stopped);
                }
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Appends the concatenation of `parts` as one record, if it fits:
    /// `Ok(false)` (nothing appended) when the ring has no room for it now.
    pub(crate) fn push(
        &self,
        parts: &[&[u8]],
        stopped: &dyn Fn() -> bool,
    ) -> Result<bool, Stopped> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let _guard = self.lock(stopped)?;
        let h = self.header();
        let (head, tail) = (
            h.head.load(Ordering::Relaxed),
            h.tail.load(Ordering::Relaxed),
        );
        let used = (tail - head) as usize;
        if self.capacity - used < len {
            return Ok(false);
        }
        let mut at = tail;
        for part in parts {
            // SAFETY: `part` is a live slice outside the ring (a view
            // borrows no ring memory); the bytes written are free (checked
            // above) and ours while the lock is held.
            unsafe { self.copy_in(at, part) };
            at += part.len() as u64;
        }
        h.tail.store(at, Ordering::Relaxed);
        Ok(true)
    }

    /// Appends every byte appended so far (whole records) to `out`, and
    /// frees them. For the ring's one consumer.
    pub(crate) fn take(
        &self,
        out: &mut Vec<u8>,
        stopped: &dyn Fn() -> bool,
    ) -> Result<(), Stopped> {
        let h = self.header();
        // A look without the lock: nothing to take is the common case.
        if h.head.load(Ordering::Relaxed) == h.tail.load(Ordering::Acquire) {
            return Ok(());
        }
        let _guard = self.lock(stopped)?;
        let (head, tail) = (
            h.head.load(Ordering::Relaxed),
            h.tail.load(Ordering::Relaxed),
        );
        let n = (tail - head) as usize;
        out.reserve(n);
        let start = (head % self.capacity as u64) as usize;
        let first = n.min(self.capacity - start);
        // SAFETY: bytes `head..tail` are records written under the lock,
        // which we hold; they lie at `start..` and wrap to the start of the
        // data; `out` has room for `n` more (reserved above).
        unsafe {
            let dst = out.as_mut_ptr().add(out.len());
            std::ptr::copy_nonoverlapping(self.data.add(start), dst, first);
            std::ptr::copy_nonoverlapping(self.data, dst.add(first), n - first);
            out.set_len(out.len() + n);
        }
        h.head.store(tail, Ordering::Relaxed);
        Ok(())
    }

    /// Copies `bytes` to position `at`, wrapping around the end.
    ///
    /// # Safety
    ///
    /// The caller holds the lock and the bytes `at..at + bytes.len()` are
    /// free.
    unsafe fn copy_in(&self, at: u64, bytes: &[u8]) {
        let start = (at % self.capacity as u64) as usize;
        let first = bytes.len().min(self.capacity - start);
        // SAFETY: both pieces are inside the data area; the caller's
        // promise makes them ours.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.data.add(start), first);
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr().add(first),
                self.data,
                bytes.len() - first,
            );
        }
    }
}

/// The held lock, released on drop (Release: the bytes written under it
/// are visible to the next holder).
struct Guard<'a>(&'a AtomicU32);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

/// A ring in private memory (`threads`, `serial`).
pub(crate) struct OwnedRing {
    _mem: Box<[Line]>,
    ring: Ring,
}

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

impl OwnedRing {
    /// A ring of `capacity` bytes of data (a multiple of 64).
    pub(crate) fn new(capacity: usize) -> OwnedRing {
        let mut mem = vec![Line([0; 64]); (HEADER + capacity) / 64].into_boxed_slice();
        // SAFETY: `mem` is 64-aligned, zeroed, as long as the ring needs
        // (the box moves with it and its heap block does not), and only
        // used through this view.
        let ring = unsafe { Ring::at(mem.as_mut_ptr().cast(), HEADER + capacity) };
        OwnedRing { _mem: mem, ring }
    }

    pub(crate) fn ring(&self) -> &Ring {
        &self.ring
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never() -> bool {
        false
    }

    #[test]
    fn records_come_out_whole_in_order_and_wrap_around() {
        let r = OwnedRing::new(128);
        let ring = r.ring();
        let mut out = Vec::new();
        for round in 0..50u8 {
            let a = [round; 40];
            let b = [round ^ 0xff; 24];
            assert_eq!(ring.push(&[&a, &b], &never), Ok(true));
            assert_eq!(ring.push(&[&a], &never), Ok(true));
            // 104 of 128 bytes used: a third record of 40 does not fit.
            assert_eq!(ring.push(&[&a], &never), Ok(false));
            out.clear();
            ring.take(&mut out, &never).unwrap();
            assert_eq!(out.len(), 104);
            assert!(out[..40].iter().all(|&x| x == round));
            assert!(out[40..64].iter().all(|&x| x == round ^ 0xff));
            assert!(out[64..].iter().all(|&x| x == round));
        }
    }

    #[test]
    fn producers_on_many_threads_lose_nothing() {
        let r = OwnedRing::new(1024);
        let per = 2000u64;
        let mut got = Vec::new();
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let ring = r.ring();
                s.spawn(move || {
                    for i in 0..per {
                        let rec = (t << 32 | i).to_ne_bytes();
                        while !ring.push(&[&rec], &never).unwrap() {
                            std::thread::yield_now();
                        }
                    }
                });
            }
            let mut buf = Vec::new();
            while got.len() < (3 * per) as usize {
                buf.clear();
                r.ring().take(&mut buf, &never).unwrap();
                got.extend(
                    buf.chunks(8)
                        .map(|c| u64::from_ne_bytes(c.try_into().unwrap())),
                );
            }
        });
        // Each producer's records arrive in its order.
        for t in 0..3u64 {
            let mine: Vec<u64> = got
                .iter()
                .filter(|&&x| x >> 32 == t)
                .map(|&x| x & 0xffff_ffff)
                .collect();
            assert_eq!(mine, (0..per).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_stopped_run_ends_the_wait_for_the_lock() {
        let r = OwnedRing::new(64);
        let ring = r.ring();
        let _held = ring.lock(&never).unwrap();
        assert_eq!(ring.push(&[&[1; 8]], &|| true), Err(Stopped));
    }
}
