//! Every raw byte copy of the library goes through this module.
//!
//! The callers discharge the obligations listed on each function; this
//! module keeps the `unsafe` copies in one place so they can be audited.

use std::mem::MaybeUninit;
use std::ptr;

mod records;
pub(crate) use records::Records;

/// Copies of more than this many bytes go in pieces of [`PIECE`] bytes.
const PIECED_FROM: usize = 2 * PIECE;

/// The piece of a large copy: small enough that the C library copies it
/// through the cache (glibc switches to non-temporal stores, which bypass
/// the cache, from about half a megabyte on common machines).
const PIECE: usize = 256 << 10;

/// Copies `len` bytes from `src` to `dst`.
///
/// Every copy of the library's transfers is consumed soon after by another
/// core (a receiver reading a staged payload) or by the program (a
/// destination it asked for), so a large copy goes in cache-sized pieces:
/// the C library would copy it in one go with non-temporal stores, which
/// send it to memory and make the next reader fetch it back. Measured on
/// this project's 2-core VM, a 16 MiB payload written by one thread and
/// read by another moves 1.4-1.7x faster in 256 KiB pieces
/// (`engine/README.md`, "Copies").
///
/// # Safety
///
/// `src` must be valid for reads and `dst` valid for writes of `len` bytes,
/// and no other thread may write either range during the copy. The ranges
/// may overlap (the copy is a `memmove`). `len == 0` is always allowed, with
/// any pointers.
#[inline]
pub(crate) unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    if len == 0 {
        return;
    }
    if len < PIECED_FROM {
        // SAFETY: the caller guarantees both ranges are valid for `len`
        // bytes and not written concurrently; `ptr::copy` allows overlap.
        unsafe { ptr::copy(src, dst, len) }
    } else {
        // SAFETY: as above.
        unsafe { copy_large(src, dst, len) }
    }
}

/// [`copy`] of at least [`PIECED_FROM`] bytes.
///
/// # Safety
///
/// As for [`copy`].
#[cold]
unsafe fn copy_large(src: *const u8, dst: *mut u8, len: usize) {
    let (s, d) = (src.addr(), dst.addr());
    if s.abs_diff(d) < len {
        // Overlapping ranges (a program moving data within one area): one
        // `memmove`, which picks the safe direction.
        // SAFETY: the caller guarantees both ranges are valid for `len`
        // bytes and not written concurrently; `ptr::copy` allows overlap.
        return unsafe { ptr::copy(src, dst, len) };
    }
    let mut at = 0;
    while at < len {
        let n = PIECE.min(len - at);
        // SAFETY: `at + n <= len`, so both pieces lie inside the ranges the
        // caller vouched for, and the ranges do not overlap (checked above).
        unsafe { ptr::copy_nonoverlapping(src.add(at), dst.add(at), n) };
        at += n;
    }
}

/// Copies `len` bytes from `src` to `dst` like [`copy`], with stores that
/// bypass the cache where the target has them (x86_64): for a large copy
/// that another core reads next (a staged rendezvous payload, read by the
/// receiving process), writing lines that core still caches from the
/// previous read is several times slower than streaming them to memory.
///
/// # Safety
///
/// As for [`copy`], and the ranges must not overlap.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) unsafe fn copy_streaming(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        // Up to the first 16-aligned byte of `dst`, then 64-byte blocks of
        // aligned streaming stores, then the tail.
        let head = dst.align_offset(16).min(len);
        let end = head + ((len - head) & !63);
        // SAFETY: the caller's ranges; `head` bytes at the start.
        unsafe { copy(src, dst, head) };
        let mut i = head;
        while i < end {
            // SAFETY: bytes `i..i + 64` are inside both ranges (`end <=
            // len`); `dst + i` is 16-aligned (`i - head` is a multiple of
            // 64); SSE2 is part of x86_64.
            unsafe {
                let s = src.add(i).cast::<__m128i>();
                let d = dst.add(i).cast::<__m128i>();
                let (a, b) = (_mm_loadu_si128(s), _mm_loadu_si128(s.add(1)));
                let (c, e) = (_mm_loadu_si128(s.add(2)), _mm_loadu_si128(s.add(3)));
                _mm_stream_si128(d, a);
                _mm_stream_si128(d.add(1), b);
                _mm_stream_si128(d.add(2), c);
                _mm_stream_si128(d.add(3), e);
            }
            i += 64;
        }
        // SAFETY: orders the streaming stores before whatever follows (the
        // payload is handed to MPI after this); then the tail, in range.
        unsafe {
            _mm_sfence();
            copy(src.add(end), dst.add(end), len - end);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded.
    unsafe {
        copy(src, dst, len)
    }
}

/// The byte layout of one side of a strided transfer: `count` blocks of
/// `block` bytes, block `k` starting `k * stride` bytes after the first.
/// A contiguous range of `n` bytes is `{ block: n, stride: n, count: 1 }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) block: usize,
    pub(crate) stride: usize,
    pub(crate) count: usize,
}

impl Shape {
    /// A contiguous range of `len` bytes.
    #[inline]
    pub(crate) const fn contiguous(len: usize) -> Shape {
        Shape {
            block: len,
            stride: len,
            count: 1,
        }
    }

    /// The bytes the blocks hold (`None` on overflow).
    #[inline]
    pub(crate) fn len(&self) -> Option<usize> {
        self.block.checked_mul(self.count)
    }

    /// The bytes from the first block's start to the last block's end (0
    /// without blocks; `None` on overflow).
    #[inline]
    pub(crate) fn span(&self) -> Option<usize> {
        match self.count {
            0 => Some(0),
            n => (n - 1).checked_mul(self.stride)?.checked_add(self.block),
        }
    }

    /// Whether the blocks are disjoint (a stride of at least the block,
    /// or fewer than two blocks): a destination's blocks must be.
    #[inline]
    pub(crate) fn disjoint(&self) -> bool {
        self.count <= 1 || self.stride >= self.block
    }

    /// Whether it is one contiguous range.
    #[inline]
    pub(crate) fn is_contiguous(&self) -> bool {
        self.count <= 1 || self.stride == self.block
    }
}

/// Copies `count` blocks of `block` bytes, block `k` from `src + k *
/// src_stride` to `dst + k * dst_stride`. Blocks of 1, 2, 4, 8 and 16
/// bytes (one element: a matrix column) are moved by loads and stores of
/// that width, not by a call to the C library per block.
///
/// # Safety
///
/// Every source block must be valid for reads and every destination block
/// for writes, no other thread may write either during the copy, and no
/// destination block may overlap a source block.
#[inline]
pub(crate) unsafe fn copy_blocks(
    src: *const u8,
    src_stride: usize,
    dst: *mut u8,
    dst_stride: usize,
    block: usize,
    count: usize,
) {
    /// One block of `W` bytes per step, unaligned.
    ///
    /// # Safety
    ///
    /// As for `copy_blocks`, with `block == size_of::<W>()`.
    #[inline(always)]
    unsafe fn each<W: Copy>(s: *const u8, ss: usize, d: *mut u8, ds: usize, count: usize) {
        for k in 0..count {
            // SAFETY: block `k` of each side, valid by the caller's promise.
            unsafe {
                let v = s.add(k * ss).cast::<W>().read_unaligned();
                d.add(k * ds).cast::<W>().write_unaligned(v);
            }
        }
    }
    if count == 1 || (src_stride == block && dst_stride == block) {
        // SAFETY: one contiguous range on each side (the blocks abut).
        return unsafe { copy(src, dst, block * count) };
    }
    // SAFETY: forwarded; each arm moves exactly `block` bytes per block.
    unsafe {
        match block {
            1 => each::<u8>(src, src_stride, dst, dst_stride, count),
            2 => each::<u16>(src, src_stride, dst, dst_stride, count),
            4 => each::<u32>(src, src_stride, dst, dst_stride, count),
            8 => each::<u64>(src, src_stride, dst, dst_stride, count),
            16 => each::<u128>(src, src_stride, dst, dst_stride, count),
            _ => {
                for k in 0..count {
                    copy(src.add(k * src_stride), dst.add(k * dst_stride), block);
                }
            }
        }
    }
}

/// Copies the blocks of `from` (starting at `src`) to the blocks of `to`
/// (starting at `dst`), bytes flowing in order: both shapes hold the same
/// number of bytes, in blocks of any sizes.
///
/// # Safety
///
/// As for [`copy_blocks`], for the blocks of both shapes, and
/// `from.len() == to.len()`.
pub(crate) unsafe fn copy_shaped(src: *const u8, from: Shape, dst: *mut u8, to: Shape) {
    debug_assert_eq!(from.len(), to.len());
    if from.block == to.block {
        // SAFETY: forwarded: the same blocks on both sides.
        return unsafe { copy_blocks(src, from.stride, dst, to.stride, to.block, to.count) };
    }
    if from.is_contiguous() {
        // SAFETY: forwarded: a scatter of packed bytes.
        return unsafe { copy_blocks(src, to.block, dst, to.stride, to.block, to.count) };
    }
    if to.is_contiguous() {
        // SAFETY: forwarded: a gather into packed bytes.
        return unsafe { copy_blocks(src, from.stride, dst, from.block, from.block, from.count) };
    }
    // Different blocks on both sides: walk them together.
    let (mut i, mut j, mut a, mut b) = (0, 0, 0, 0);
    while i < from.count && j < to.count {
        let n = (from.block - a).min(to.block - b);
        // SAFETY: `a + n <= from.block`, `b + n <= to.block`: inside block
        // `i` of `from` and block `j` of `to`.
        unsafe { copy(src.add(i * from.stride + a), dst.add(j * to.stride + b), n) };
        a += n;
        b += n;
        if a == from.block {
            (i, a) = (i + 1, 0);
        }
        if b == to.block {
            (j, b) = (j + 1, 0);
        }
    }
}

/// A cache line of a buffer: the unit [`AlignedBuf`] allocates in, so its
/// start is 64-byte aligned.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// A growable byte buffer whose start is 64-byte aligned and whose records
/// are each padded to 8 bytes, so that a payload stored in it can be handed
/// out as an aligned pointer (`bsp_hpmove`). Cleared buffers keep their
/// capacity: steady-state supersteps allocate nothing. Growth does not
/// zero the new memory: each record writes all of its bytes, padding
/// included, so the bytes in use are always initialised. After a spike
/// (a superstep that sent much more than the recent ones) a buffer of more
/// than [`KEEP`] bytes gives memory back: see [`clear`](Self::clear).
#[derive(Default)]
pub(crate) struct AlignedBuf {
    /// Allocated lines; bytes `0..len` are initialised.
    lines: Vec<MaybeUninit<Line>>,
    len: usize,
    /// A high-water mark of the bytes used per superstep that decays by
    /// an eighth at each clear.
    recent: usize,
}

/// Buffers up to this many bytes keep their capacity whatever their use.
const KEEP: usize = 1 << 20;

/// The most header words a record has (a put: slot, offset, length).
pub(crate) const MAX_HEADER: usize = 3;

/// A put's payload of at least this many bytes starts at the same
/// position within a cache line as its source: the copies into and out
/// of the buffer are then mutually aligned, which the C library's large
/// copies need to run at full speed (2.7x slower otherwise, measured on
/// this project's VM).
pub(crate) const ALIGNED_PUT_FROM: usize = 4096;

/// The length word of a put record: the payload's length in the low
/// [`PUT_PAD_SHIFT`] bits, the bytes of padding between the header and
/// the payload (0 to 63) above them, and the [`PUT_BULK`] flag.
pub(crate) const PUT_PAD_SHIFT: u32 = 56;

/// Flag of a put record's length word: the payload is not in the record
/// but in the sender's channel, at the byte offset the record's fourth
/// word gives (`processes`: `Process::push_put`).
pub(crate) const PUT_BULK: usize = 1 << 62;

/// Flag of a put record's length word: the payload is in the sender's
/// own memory, at the address the record's fourth word gives, read by the
/// receiver with cross-memory attach (`processes`: an hpput, `cma.rs`).
pub(crate) const PUT_REMOTE: usize = 1 << 63;

const _: () = assert!((63 << PUT_PAD_SHIFT) & (PUT_BULK | PUT_REMOTE) == 0);

/// Flag of a put record's slot word: a record an extension owns (today
/// the superstep's accumulate, `rma/`): `[slot | EXTENDED][offset][len]
/// [word]` then the payload padded to 8 bytes, or, with `len & PUT_BULK`,
/// one word: the payload's offset in the sender's channel. Step 5 of the
/// sync checks only that it fits its section and notes it; after every
/// put it goes to the extension that takes the `RECORDS` hook point
/// (`extension.rs`). No registration slot has this bit.
pub(crate) const EXTENDED: u64 = 1 << 61;

/// Bytes of an [`EXTENDED`] record's header.
pub(crate) const EXTENDED_HEADER: usize = 32;

/// What errors call an [`EXTENDED`] record the core refuses (the one
/// kind there is).
pub(crate) const EXTENDED_WHAT: &str = "accumulate";

/// Flag of a put record's or get request's slot word: a strided transfer
/// (`[slot | VECTOR][offset][len][block][stride]`, the owner's side of the
/// shape; a put's payload follows, packed). No registration slot has this
/// bit, nor [`DESCRIPTOR`](crate::engine::DESCRIPTOR)'s.
pub(crate) const VECTOR: u64 = 1 << 62;

/// Flag of a put record's first word: a small put, its whole header in
/// that one word, `[SMALL | (len - 1) << 57 | slot << 40 | offset]`,
/// then its payload in a word of its own (16 bytes for a word put, where
/// `[slot][offset][len][payload]` takes 32: half the bytes to write, and
/// for the owner to read across cores). Puts of 1 to [`SMALL_PUT_MAX`]
/// bytes into slots below 2^17 at offsets below 2^40 take this form
/// (`small_put_word`). No registration slot has this bit.
pub(crate) const SMALL: u64 = 1 << 60;

/// The largest put a [`SMALL`] record carries.
pub(crate) const SMALL_PUT_MAX: usize = 8;

const SMALL_SLOT_SHIFT: u32 = 40;
const SMALL_LEN_SHIFT: u32 = 57;
const _: () = assert!(SMALL >> SMALL_LEN_SHIFT == 8 && SMALL_SLOT_SHIFT + 17 == SMALL_LEN_SHIFT);

/// The [`SMALL`] record's word of a put, if the put has that form.
#[inline]
pub(crate) fn small_put_word(slot: u64, offset: usize, len: usize) -> Option<u64> {
    let fits = (1..=SMALL_PUT_MAX).contains(&len)
        && slot < 1 << (SMALL_LEN_SHIFT - SMALL_SLOT_SHIFT)
        && (offset as u64) < 1 << SMALL_SLOT_SHIFT;
    fits.then(|| {
        SMALL | (len as u64 - 1) << SMALL_LEN_SHIFT | slot << SMALL_SLOT_SHIFT | offset as u64
    })
}

/// A [`SMALL`] record's `(slot, offset, len)`.
#[inline]
pub(crate) fn small_put_fields(word: u64) -> (u64, usize, usize) {
    (
        (word >> SMALL_SLOT_SHIFT) & ((1 << (SMALL_LEN_SHIFT - SMALL_SLOT_SHIFT)) - 1),
        (word & ((1 << SMALL_SLOT_SHIFT) - 1)) as usize,
        ((word >> SMALL_LEN_SHIFT) & 7) as usize + 1,
    )
}

/// Copies `len <= 8` bytes between ranges that do not overlap, without a
/// call for a word or half a word (the small puts' payloads).
///
/// # Safety
///
/// `src` readable and `dst` writable for `len` bytes, not overlapping.
#[inline]
pub(crate) unsafe fn copy_small(src: *const u8, dst: *mut u8, len: usize) {
    debug_assert!(len <= SMALL_PUT_MAX);
    // SAFETY: the caller's obligations, for the sizes named.
    unsafe {
        match len {
            8 => ptr::copy_nonoverlapping(src, dst, 8),
            4 => ptr::copy_nonoverlapping(src, dst, 4),
            _ => ptr::copy_nonoverlapping(src, dst, len),
        }
    }
}

/// Where a put record's payload is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Payload {
    /// In the record, after the padding.
    Inline,
    /// In the sender's channel ([`PUT_BULK`]).
    Bulk,
    /// In the sender's memory ([`PUT_REMOTE`]).
    Remote,
}

/// A put record's length word: (payload length, padding, where the
/// payload is).
#[inline]
pub(crate) fn put_len(word: usize) -> (usize, usize, Payload) {
    let payload = if word & PUT_BULK != 0 {
        Payload::Bulk
    } else if word & PUT_REMOTE != 0 {
        Payload::Remote
    } else {
        Payload::Inline
    };
    (
        word & ((1 << PUT_PAD_SHIFT) - 1),
        (word >> PUT_PAD_SHIFT) & 63,
        payload,
    )
}

/// Rounds `n` up to a multiple of 8.
#[inline]
pub(crate) fn pad8(n: usize) -> usize {
    (n + 7) & !7
}

impl AlignedBuf {
    /// Bytes in use.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is stored.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets the contents. The capacity stays, unless it is more than
    /// [`KEEP`] bytes and more than twice the recent use (a high-water
    /// mark that decays by an eighth per clear): then the buffer shrinks to
    /// that use. Steady traffic therefore allocates nothing, and a spike's
    /// memory is given back within a few supersteps.
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.recent = self.len.max(self.recent - self.recent / 8);
        self.len = 0;
        if self.lines.len() * 64 > KEEP.max(2 * self.recent) {
            self.shrink();
        }
    }

    /// Gives back the memory above the recent use (at least `KEEP / 2`).
    #[cold]
    fn shrink(&mut self) {
        let keep = self.recent.max(KEEP / 2).div_ceil(64);
        self.lines.truncate(keep);
        self.lines.shrink_to_fit();
    }

    /// [`grow_to`](Self::grow_to), out of the hot paths.
    #[cold]
    #[inline(never)]
    fn grow_cold(&mut self, bytes: usize) -> Result<(), usize> {
        self.grow_to(bytes)
    }

    /// Makes the buffer hold at least `bytes` bytes; `Err(bytes)` if the
    /// memory cannot be had.
    fn grow_to(&mut self, bytes: usize) -> Result<(), usize> {
        let need = bytes.div_ceil(64);
        if need <= self.lines.len() {
            return Ok(());
        }
        let want = need.max(self.lines.len().saturating_mul(2));
        let more = want - self.lines.len();
        self.lines.try_reserve_exact(more).map_err(|_| bytes)?;
        // SAFETY: the capacity is at least `want` (reserved above), and
        // `MaybeUninit` elements need no initialisation.
        unsafe { self.lines.set_len(want) };
        Ok(())
    }

    /// Reserves `n` bytes (rounded up to 8) at the end and returns the offset
    /// of the first. The last word of the range is zeroed: the caller
    /// writes the rest, and the padding is then initialised.
    #[inline]
    fn reserve_record(&mut self, n: usize) -> usize {
        let at = self.len;
        let new_len = at + pad8(n);
        if new_len > self.lines.len() * 64 {
            if let Err(bytes) = self.grow_to(new_len) {
                std::alloc::handle_alloc_error(
                    std::alloc::Layout::from_size_align(bytes, 64)
                        .unwrap_or(std::alloc::Layout::new::<Line>()),
                );
            }
        }
        self.len = new_len;
        if (at ^ new_len) >= 64 {
            // A new line begun: ask ahead, as `push_small_put` does.
            self.prefetch_ahead(new_len);
        }
        if new_len > at {
            // SAFETY: `new_len - 8 >= at` is inside the allocation (grown
            // above) and 8-aligned.
            unsafe { self.as_mut_ptr().add(new_len - 8).cast::<u64>().write(0) };
        }
        at
    }

    /// Makes room for a record of `len` payload bytes (and its header of
    /// at most [`MAX_HEADER`] words, and a put's alignment padding)
    /// without aborting when memory runs out: `Err` with the bytes asked
    /// for. A later `push_record` or `push_put` of that size then does
    /// not allocate.
    pub(crate) fn try_reserve_record(&mut self, len: usize) -> Result<(), usize> {
        let bytes = len.checked_add(8 * MAX_HEADER + 63 + 7).ok_or(usize::MAX)?;
        let end = self.len.checked_add(bytes).ok_or(usize::MAX)?;
        self.grow_to(end)
    }

    /// Writes header word `i` of the record at `at`.
    #[inline]
    fn set_word(&mut self, at: usize, i: usize, w: usize) {
        debug_assert!(at % 8 == 0 && at + 8 * i + 8 <= self.len);
        // SAFETY: inside the bytes in use (reserved by the caller), 8-aligned.
        unsafe {
            self.as_mut_ptr()
                .add(at + 8 * i)
                .cast::<u64>()
                .write(w as u64)
        };
    }

    /// Appends a record: `N` header words, then `len` bytes read from
    /// `src`, padded to 8. One capacity check for the whole record.
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `len` bytes (any pointer if `len` is 0).
    #[inline]
    pub(crate) unsafe fn push_record<const N: usize>(
        &mut self,
        header: [usize; N],
        src: *const u8,
        len: usize,
    ) {
        const { assert!(N <= MAX_HEADER) };
        let at = self.reserve_record(8 * N + len);
        for (i, h) in header.into_iter().enumerate() {
            self.set_word(at, i, h);
        }
        // SAFETY: `reserve_record` made bytes `at+8N..at+8N+len` part of
        // the buffer; the caller guarantees `src` is readable for `len`
        // bytes, and `src` cannot alias the buffer, which `&mut self` owns.
        unsafe { copy(src, self.as_mut_ptr().add(at + 8 * N), len) }
    }

    /// Appends a put record `[slot][offset][len | pad << 56][pad][payload]`
    /// (padded to 8): a payload of [`ALIGNED_PUT_FROM`] bytes or more
    /// starts at the same offset within a cache line as `src`.
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `len` bytes (any pointer if `len` is
    /// 0), and `len < 2^56`.
    #[inline]
    pub(crate) unsafe fn push_put(&mut self, slot: u64, offset: usize, src: *const u8, len: usize) {
        debug_assert!(len >> PUT_PAD_SHIFT == 0);
        let pad = if len >= ALIGNED_PUT_FROM {
            src.addr().wrapping_sub(self.len + 24) & 63
        } else {
            0
        };
        let at = self.reserve_record(24 + pad + len);
        self.set_word(at, 0, slot as usize);
        self.set_word(at, 1, offset);
        self.set_word(at, 2, len | pad << PUT_PAD_SHIFT);
        // SAFETY: `reserve_record` made bytes `at+24..at+24+pad+len` part
        // of the buffer; the padding is zeroed so that every byte in use is
        // initialised; the caller guarantees `src` is readable for `len`
        // bytes, and `src` cannot alias the buffer, which `&mut self` owns.
        unsafe {
            let payload = self.as_mut_ptr().add(at + 24);
            ptr::write_bytes(payload, 0, pad);
            copy(src, payload.add(pad), len);
        }
    }

    /// Appends a [`SMALL`] put record: `word` (`small_put_word`), then
    /// the `len <= 8` bytes from `src` in a word of their own, zero-padded.
    /// `Err(bytes)` if the memory cannot be had.
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `len` bytes.
    #[inline(always)]
    pub(crate) unsafe fn push_small_put(
        &mut self,
        word: u64,
        src: *const u8,
        len: usize,
    ) -> Result<(), usize> {
        let at = self.len;
        if at + 16 > self.lines.len() * 64 {
            self.grow_cold(at + 16)?;
        }
        self.len = at + 16;
        // The receiver read these lines at a sync: without the hint, the
        // first store to each waits for the other core to give it up, the
        // store buffer fills and every put waits (issue 28: g at p = 2
        // 45 -> 13 ns a word on threads, `engine/README.md`).
        if at % 64 == 0 {
            self.prefetch_ahead(at);
        }
        // SAFETY: bytes `at..at+16` are inside the allocation (grown above)
        // and 8-aligned; both words are written whole (the payload's after
        // zeroing it); the caller vouches for `src`, which cannot alias
        // the buffer (`&mut self` owns it).
        unsafe {
            let record = self.as_mut_ptr().add(at);
            record.cast::<u64>().write(word);
            let payload = record.add(8);
            if len != 8 {
                payload.cast::<u64>().write(0);
            }
            copy_small(src, payload, len);
        }
        Ok(())
    }

    /// Appends a strided put record `[slot | VECTOR][offset][len][block]
    /// [stride]` (the destination's shape) followed by the payload: the
    /// blocks of `from`, read from `src`, packed (and padded to 8).
    ///
    /// # Safety
    ///
    /// Every block of `from` from `src` must be valid for reads;
    /// `from.len()` must not overflow.
    pub(crate) unsafe fn push_strided(&mut self, header: [usize; 5], src: *const u8, from: Shape) {
        let len = from.block * from.count;
        let at = self.reserve_record(40 + len);
        for (i, h) in header.into_iter().enumerate() {
            self.set_word(at, i, h);
        }
        // SAFETY: `reserve_record` made bytes `at+40..at+40+len` part of
        // the buffer; the caller vouches for the source blocks, which
        // cannot alias the buffer (`&mut self` owns it).
        unsafe {
            copy_blocks(
                src,
                from.stride,
                self.as_mut_ptr().add(at + 40),
                from.block,
                from.block,
                from.count,
            )
        }
    }

    /// Appends a record of four header words and `len` bytes read from
    /// `src`, padded to 8 (an accumulate record, `rma.rs`). One capacity
    /// check for the whole record.
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `len` bytes (any pointer if `len` is 0).
    #[inline]
    pub(crate) unsafe fn push_record4(&mut self, header: [usize; 4], src: *const u8, len: usize) {
        let at = self.reserve_record(32 + len);
        for (i, h) in header.into_iter().enumerate() {
            self.set_word(at, i, h);
        }
        // SAFETY: `reserve_record` made bytes `at+32..at+32+len` part of
        // the buffer; the caller guarantees `src` is readable for `len`
        // bytes, and `src` cannot alias the buffer, which `&mut self` owns.
        unsafe { copy(src, self.as_mut_ptr().add(at + 32), len) }
    }

    /// Appends the words of `record` (a record without payload).
    #[inline]
    pub(crate) fn push_words<const N: usize>(&mut self, record: [usize; N]) {
        let at = self.reserve_record(8 * N);
        for (i, h) in record.into_iter().enumerate() {
            self.set_word(at, i, h);
        }
    }

    /// Reads back the 8-byte word at byte offset `at` (a multiple of 8).
    #[cfg(test)]
    pub(crate) fn word(&self, at: usize) -> usize {
        assert!(at % 8 == 0 && at + 8 <= self.len);
        // SAFETY: in the initialised bytes (checked), 8-aligned.
        unsafe { self.as_ptr().add(at).cast::<u64>().read() as usize }
    }

    /// Appends `len` bytes read from `src`, padded to 8.
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `len` bytes (any pointer if `len` is 0).
    #[inline]
    pub(crate) unsafe fn push_raw(&mut self, src: *const u8, len: usize) {
        let at = self.reserve_record(len);
        // SAFETY: `reserve_record` made bytes `at..at+len` part of the
        // buffer; the caller guarantees `src` is readable for `len` bytes,
        // and `src` cannot alias the buffer, which `&mut self` owns.
        unsafe { copy(src, self.as_mut_ptr().add(at), len) }
    }

    /// The bytes in use.
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: the first `len` bytes of the allocation are initialised
        // (every record writes all of its bytes).
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) }
    }

    /// Pointer to the first byte.
    #[inline]
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.lines.as_ptr().cast()
    }

    #[inline]
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.lines.as_mut_ptr().cast()
    }

    /// Asks for the line [`PREFETCH_AHEAD`] bytes past byte `at` for
    /// writing, if the buffer has it: called as a record begins a line.
    #[inline(always)]
    fn prefetch_ahead(&mut self, at: usize) {
        if at + PREFETCH_AHEAD < self.lines.len() * 64 {
            prefetch_write(self.as_mut_ptr().wrapping_add(at + PREFETCH_AHEAD));
        }
    }
}

/// How far ahead of the record being written (or read) a buffer's line is
/// prefetched.
pub(crate) const PREFETCH_AHEAD: usize = 512;

/// Asks for the cache line at `p` in a writable state (`prefetchw`): a
/// hint, never a fault, whatever `p` is.
#[inline(always)]
fn prefetch_write(p: *mut u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: a prefetch reads and writes nothing and cannot fault; x86
    // processors without `prefetchw` execute it as a no-op.
    unsafe {
        std::arch::asm!("prefetchw [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(any(not(target_arch = "x86_64"), miri))]
    let _ = p;
}

/// Asks for the cache line at `p` for reading (`prefetcht0`): a hint,
/// never a fault, whatever `p` is.
#[inline(always)]
pub(crate) fn prefetch_read(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: a prefetch reads and writes nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(any(not(target_arch = "x86_64"), miri))]
    let _ = p;
}

#[cfg(test)]
mod tests;
