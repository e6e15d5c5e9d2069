//! Writing per-destination streams into an engine's outgoing channel: a
//! superstep's streams (`exchange.rs`) or get replies (`superstep.rs`),
//! into a fixed region of shared memory (`processes`), a growable buffer
//! handed to MPI (`mpi`), or a buffer read in place (`serial`, `threads`).

use std::marker::PhantomData;
use std::sync::MutexGuard;

use crate::mem::{self, Records};

/// The channel of the outgoing streams of supersteps of parity `q`: `q`.
/// The channel of the replies to get requests:
pub(crate) const REPLIES: usize = 2;

/// A growable outgoing channel: the streams back to back, and where each
/// destination's starts and how long it is (in bytes).
#[derive(Default)]
pub(crate) struct Outbox {
    pub(crate) data: Vec<u64>,
    pub(crate) dir: Vec<(usize, usize)>,
}

/// Where a writer writes.
enum Target<'a> {
    /// A fixed region: a directory of `nprocs` `(offset, length)` pairs,
    /// then the streams; `capacity` bytes in all.
    Fixed {
        base: *mut u8,
        capacity: usize,
        nprocs: usize,
        _region: PhantomData<&'a mut [u8]>,
    },
    /// A growable buffer, with its directory beside it (`mpi`).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    Growable(MutexGuard<'a, Outbox>, usize),
    /// A growable buffer in memory the other processes read in place
    /// (the get replies of `serial` and `threads`).
    Buffer(&'a mut Outbox),
}

/// Writes one stream per destination, each 8-byte aligned. Every method
/// that writes returns `Err(bytes needed)` when a fixed region is full.
pub(crate) struct StreamWriter<'a> {
    target: Target<'a>,
    at: usize,
    start: usize,
    dest: usize,
}

impl<'a> StreamWriter<'a> {
    /// A writer into the fixed region of `capacity` bytes at `base`, for
    /// `nprocs` destinations.
    ///
    /// # Safety
    ///
    /// The region must be writable, 8-aligned, and written by no one else
    /// (and read by no one) while the writer lives.
    pub(crate) unsafe fn fixed(base: *mut u8, capacity: usize, nprocs: usize) -> Self {
        StreamWriter {
            target: Target::Fixed {
                base,
                capacity,
                nprocs,
                _region: PhantomData,
            },
            at: 16 * nprocs,
            start: 0,
            dest: 0,
        }
    }

    /// A writer into `outbox`, emptied first, for `nprocs` destinations.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    /// At most `capacity` bytes in all.
    pub(crate) fn growable(
        mut outbox: MutexGuard<'a, Outbox>,
        nprocs: usize,
        capacity: usize,
    ) -> Self {
        outbox.dir.clear();
        outbox.dir.resize(nprocs, (0, 0));
        StreamWriter {
            target: Target::Growable(outbox, capacity),
            at: 0,
            start: 0,
            dest: 0,
        }
    }

    /// A writer into `outbox`, emptied first, for `nprocs` destinations;
    /// no limit but memory.
    pub(crate) fn buffer(outbox: &'a mut Outbox, nprocs: usize) -> Self {
        outbox.dir.clear();
        outbox.dir.resize(nprocs, (0, 0));
        StreamWriter {
            target: Target::Buffer(outbox),
            at: 0,
            start: 0,
            dest: 0,
        }
    }

    /// Lowers the end of a fixed region to `end` bytes from its start (the
    /// rest holds payloads written there already: `Process::push_bulk`).
    pub(crate) fn limit(&mut self, end: usize) {
        if let Target::Fixed { capacity, .. } = &mut self.target {
            *capacity = (*capacity).min(end);
        }
    }

    /// Starts the stream for `dest`.
    pub(crate) fn begin(&mut self, dest: usize) {
        self.dest = dest;
        self.start = self.at;
    }

    /// Ends the stream started by `begin`.
    pub(crate) fn end(&mut self) {
        let (start, len) = (self.start, self.at - self.start);
        match &mut self.target {
            Target::Fixed { base, nprocs, .. } => {
                assert!(self.dest < *nprocs);
                let dir = base.cast::<u64>();
                // SAFETY: the directory occupies the first `16 * nprocs`
                // bytes of the region, ours alone (contract of `fixed`).
                unsafe {
                    dir.add(2 * self.dest).write(start as u64);
                    dir.add(2 * self.dest + 1).write(len as u64);
                }
            }
            Target::Growable(outbox, _) => outbox.dir[self.dest] = (start, len),
            Target::Buffer(outbox) => outbox.dir[self.dest] = (start, len),
        }
    }

    /// Makes room for `n` more bytes (padded to 8); returns where they go
    /// and the new end.
    fn reserve(&mut self, n: usize) -> Result<(*mut u8, usize), usize> {
        let end = self.at.checked_add(mem::pad8(n)).ok_or(usize::MAX)?;
        match &mut self.target {
            Target::Fixed { base, capacity, .. } => {
                if end > *capacity {
                    return Err(end);
                }
                // SAFETY: in bounds of the region (checked).
                Ok((unsafe { base.add(self.at) }, end))
            }
            Target::Growable(outbox, capacity) => {
                if end > *capacity {
                    return Err(end);
                }
                Ok((grow(outbox, self.at, end), end))
            }
            Target::Buffer(outbox) => Ok((grow(outbox, self.at, end), end)),
        }
    }

    /// Skips to the next multiple of `n` (a multiple of 8) from the start
    /// of the target; the bytes skipped are never read.
    pub(crate) fn align(&mut self, n: usize) -> Result<(), usize> {
        debug_assert!(n % 8 == 0 && self.at % 8 == 0);
        let skip = (n - self.at % n) % n;
        if skip != 0 {
            let (_, end) = self.reserve(skip)?;
            self.at = end;
        }
        Ok(())
    }

    /// Appends a word.
    pub(crate) fn word(&mut self, w: usize) -> Result<(), usize> {
        let (at, end) = self.reserve(8)?;
        // SAFETY: `reserve` gave 8 writable bytes, 8-aligned (every record
        // is padded to 8 and the region starts aligned).
        unsafe { at.cast::<u64>().write(w as u64) };
        self.at = end;
        Ok(())
    }

    /// Appends `len` bytes from `src`, padded to 8.
    ///
    /// # Safety
    ///
    /// `src` must be readable for `len` bytes and not inside the target.
    pub(crate) unsafe fn bytes(&mut self, src: *const u8, len: usize) -> Result<(), usize> {
        let (at, end) = self.reserve(len)?;
        // SAFETY: `reserve` gave `len` writable bytes; the caller vouches
        // for `src`.
        unsafe { mem::copy(src, at, len) };
        self.at = end;
        Ok(())
    }

    /// Appends the blocks of `shape` read from `src`, packed, padded to 8.
    ///
    /// # Safety
    ///
    /// Every block of `shape` from `src` must be readable and not inside
    /// the target; `shape.len()` must not overflow.
    pub(crate) unsafe fn gather(&mut self, src: *const u8, shape: mem::Shape) -> Result<(), usize> {
        let len = shape.block * shape.count;
        let (at, end) = self.reserve(len)?;
        // SAFETY: `reserve` gave `len` writable bytes; the caller vouches
        // for the source blocks.
        unsafe { mem::copy_blocks(src, shape.stride, at, shape.block, shape.block, shape.count) };
        self.at = end;
        Ok(())
    }
}

/// Grows `outbox` to hold at least `end` bytes; where byte `at` goes.
fn grow(outbox: &mut Outbox, at: usize, end: usize) -> *mut u8 {
    let data = &mut outbox.data;
    if data.len() < end / 8 {
        let grown = (end / 8).max(data.len() * 2);
        data.resize(grown, 0);
    }
    // SAFETY: `data` holds at least `end >= at` bytes now.
    unsafe { data.as_mut_ptr().cast::<u8>().add(at) }
}

impl Outbox {
    /// The stream for `dest`, as last written (`None` if the directory
    /// has no such aligned range: not for a writer of this crate).
    pub(crate) fn stream(&self, dest: usize) -> Option<Records<'_>> {
        let (at, len) = self.dir.get(dest).copied().unwrap_or((0, 0));
        if at.checked_add(len)? > self.data.len() * 8 || at % 8 != 0 {
            return None;
        }
        // SAFETY: in bounds and 8-aligned (checked, on `u64`s); the caller
        // of the view keeps the outbox unchanged while it is used.
        Some(unsafe { Records::new(self.data.as_ptr().cast::<u8>().add(at), len) })
    }
}
