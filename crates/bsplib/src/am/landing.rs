//! Where a message's data lands on the target: the [`Landing`] a header
//! handler returns, the [`Target`] blocks of an area, checked against the
//! origin's vector with LAPI's rules, and the sink that writes the data as
//! it arrives.

use std::any::Any;
use std::marker::PhantomData;
use std::ops::Range;

use bytemuck::Pod;

use super::handlers::{CompletionFn, Done, Kind, Resolved};
use crate::bsp::area::AreaRef;
use crate::strided::Strided;

#[cfg(doc)]
use super::Arrival;

/// Where a message's data (`D`s) lands on the target, and what runs once
/// it has: returned by the header handler.
pub struct Landing<D> {
    to: To,
    then: Option<CompletionFn>,
    data: PhantomData<fn() -> D>,
}

pub(super) enum To {
    /// Nowhere: the message must carry no data.
    None,
    /// A buffer handed to the completion handler, made for the message's
    /// bytes (a `Vec<D>`, aligned for the `D`s).
    Buffer(fn(usize) -> Box<dyn Buffer>),
    /// Blocks of an area of this process: its owner, base, length in
    /// bytes, the element size, the target vector, and its storage kept
    /// alive until the data has landed.
    Area {
        owner: (u64, usize),
        base: *mut u8,
        bytes: usize,
        size: usize,
        target: Target,
        _keep: std::rc::Rc<dyn std::any::Any>,
    },
}

/// The buffer of [`Landing::buffer`]: a `Vec<D>`, written as bytes by
/// the dispatch and taken back as `D`s by the completion handler.
pub(super) trait Buffer {
    /// Its bytes, to write.
    fn bytes_mut(&mut self) -> &mut [u8];
    /// Itself, to take back as the `Vec<D>` it is.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<D: Pod> Buffer for Vec<D> {
    fn bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(self)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A buffer of `bytes` bytes of `D`s (the header handler's wrapper
/// checked that they are whole `D`s).
fn new_buffer<D: Pod>(bytes: usize) -> Box<dyn Buffer> {
    Box::new(vec![D::zeroed(); bytes / std::mem::size_of::<D>().max(1)])
}

/// The blocks of an area a message's data lands in, in elements of the
/// area's type. The kind must be the origin's ([`Arrival::kind`]), with
/// LAPI's rules: [`At`](Target::At) for contiguous data; for
/// [`Io`](Target::Io), as many blocks as the origin, of the same
/// lengths; for [`Strided`](Target::Strided), as many blocks as the
/// origin, of the same length, disjoint; for
/// [`Generic`](Target::Generic), any blocks, the elements flowing in
/// order (elements beyond the target's total are not copied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Contiguous, from this element.
    At(usize),
    /// These element ranges, block for block.
    Io(Vec<Range<usize>>),
    /// This strided selection.
    Strided(Strided),
    /// These element ranges, filled in order.
    Generic(Vec<Range<usize>>),
}

impl<D: Pod> Landing<D> {
    fn to(to: To) -> Landing<D> {
        Landing {
            to,
            then: None,
            data: PhantomData,
        }
    }

    /// No data lands (a message with data and this landing is an error on
    /// the target).
    pub fn none() -> Landing<D> {
        Landing::to(To::None)
    }

    /// The data lands in a buffer of `D`s, which the completion handler
    /// gets ([`Done::data`]).
    ///
    /// `D` is the handler's, which Rust learns from the header handler's
    /// return type: after the completion handler's body. A body that
    /// needs it sooner (a method of the elements) names it:
    /// `Landing::<D>::buffer()`, or `|d: &mut Done<'_, D>|`.
    ///
    /// ```
    /// use bsplib::am::{Handlers, Landing};
    /// let mut hs = Handlers::new();
    /// hs.add::<u8, u32>("sum", |_| {
    ///     Landing::<u32>::buffer().then(|d| println!("{}", d.data().iter().sum::<u32>()))
    /// });
    /// ```
    pub fn buffer() -> Landing<D> {
        Landing::to(To::Buffer(new_buffer::<D>))
    }

    /// The data lands in `target` of `area`, an area of this process
    /// (registered or not: the target's own handler names it).
    pub fn into(area: &AreaRef<D>, target: Target) -> Landing<D> {
        Landing::to(To::Area {
            owner: area.owner(),
            base: area.ptr(),
            bytes: area.size_bytes(),
            size: std::mem::size_of::<D>(),
            target,
            _keep: area.keepalive(),
        })
    }

    /// Runs `completion` on the target once the data has landed (before
    /// the target counter moves).
    ///
    /// # Panics
    ///
    /// Not here; if `completion` panics, as for a header handler
    /// ([`Handlers::add`](super::Handlers::add)): the run fails with
    /// [`ErrorKind::Panicked`](crate::ErrorKind::Panicked) naming the call
    /// that dispatched it, and the panic goes on from that call.
    pub fn then(mut self, completion: impl FnOnce(&mut Done<'_, D>) + 'static) -> Landing<D> {
        self.then = Some(Box::new(move |parts| Done::run(parts, completion)));
        self
    }

    /// The landing with its type erased, for the dispatch.
    pub(super) fn resolve(self) -> Resolved {
        Resolved {
            to: self.to,
            then: self.then,
        }
    }
}

/// Where a message's data goes on the target.
pub(super) enum Sink {
    /// Nowhere (the message has none).
    None,
    /// A buffer for the completion handler.
    Buffer(Box<dyn Buffer>),
    /// Blocks `(offset, len)` of an area from `base`, filled in order;
    /// bytes beyond them are dropped (GENERIC); `_keep` holds the area.
    Blocks {
        base: *mut u8,
        blocks: Vec<(usize, usize)>,
        _keep: std::rc::Rc<dyn std::any::Any>,
    },
}

impl Sink {
    /// Writes `bytes`, which start at byte `offset` of the message's data.
    pub(super) fn deliver(&mut self, offset: usize, bytes: &[u8]) {
        match self {
            Sink::None => {}
            Sink::Buffer(b) => b.bytes_mut()[offset..offset + bytes.len()].copy_from_slice(bytes),
            Sink::Blocks { base, blocks, .. } => {
                let (mut skip, mut left) = (offset, bytes);
                for &(at, n) in blocks.iter() {
                    if skip >= n {
                        skip -= n;
                        continue;
                    }
                    let k = (n - skip).min(left.len());
                    // SAFETY: `at + n` lies inside the area's storage
                    // (`target_blocks` checked it against its size), which
                    // `_keep` holds and this process owns; we run inside a
                    // `&mut Bsp` call, so no view of it is alive; `left`
                    // is a received record, not in the area.
                    unsafe { std::ptr::copy_nonoverlapping(left.as_ptr(), base.add(at + skip), k) };
                    left = &left[k..];
                    skip = 0;
                    if left.is_empty() {
                        break;
                    }
                }
            }
        }
    }
}

/// The byte blocks `(offset, len)` of `target` in an area of `bytes`
/// bytes of elements of `size` bytes, checked against the origin's kind and
/// block lengths with LAPI's rules.
pub(super) fn target_blocks(
    target: &Target,
    kind: Kind,
    lens: &[usize],
    bytes: usize,
    size: usize,
) -> Result<Vec<(usize, usize)>, String> {
    let range = |r: &Range<usize>| -> Result<(usize, usize), String> {
        let (s, e) = (r.start.checked_mul(size), r.end.checked_mul(size));
        match (s, e) {
            (Some(s), Some(e)) if s <= e && e <= bytes => Ok((s, e - s)),
            _ => Err(format!(
                "its header handler names elements {r:?} of an area of {} elements",
                bytes / size.max(1)
            )),
        }
    };
    let total: usize = lens.iter().sum();
    let mismatch = |what: &str| {
        Err(format!(
            "its header handler gives a {what} target for {kind:?} data (the kinds must match)"
        ))
    };
    match (target, kind) {
        (Target::At(start), Kind::Contiguous) => {
            match start.checked_mul(size).and_then(|s| Some((s, s.checked_add(total)?))) {
                Some((s, e)) if e <= bytes => Ok(vec![(s, total)]),
                _ => Err(format!(
                    "its header handler lands {total} bytes at element {start} of an area of {} elements",
                    bytes / size.max(1)
                )),
            }
        }
        (Target::Io(ranges), Kind::Io) => {
            if ranges.len() != lens.len() {
                return Err(format!(
                    "its header handler gives {} io-vector blocks for the origin's {}",
                    ranges.len(),
                    lens.len()
                ));
            }
            let blocks = ranges.iter().map(range).collect::<Result<Vec<_>, _>>()?;
            for (i, (b, l)) in blocks.iter().zip(lens).enumerate() {
                if b.1 != *l {
                    return Err(format!(
                        "io-vector block {i} has {} bytes on the target and {l} on the origin",
                        b.1
                    ));
                }
            }
            Ok(blocks)
        }
        (Target::Strided(st), Kind::Strided) => {
            let block = lens.first().copied().unwrap_or(0);
            if st.count != lens.len() || st.block.checked_mul(size) != Some(block) {
                return Err(format!(
                    "its strided target has {} blocks of {} elements of {size} bytes, the \
                     origin {} of {block} bytes",
                    st.count,
                    st.block,
                    lens.len()
                ));
            }
            if st.count > 1 && st.stride < st.block {
                return Err(format!(
                    "its strided target's stride {} is less than its block {}",
                    st.stride, st.block
                ));
            }
            st.indices_blocks()
                .ok_or_else(|| "its strided target overflows the address space".to_string())?
                .map(|r| range(&r))
                .collect()
        }
        (Target::Generic(ranges), Kind::Generic) => ranges.iter().map(range).collect(),
        (Target::At(_), _) => mismatch("contiguous"),
        (Target::Io(_), _) => mismatch("io-vector"),
        (Target::Strided(_), _) => mismatch("strided"),
        (Target::Generic(_), _) => mismatch("generic"),
    }
}

impl Strided {
    /// The element range of each block; `None` if the selection does not
    /// fit the address space (then no block is computed: every block ends
    /// at or before the last one's end, which is checked).
    pub(super) fn indices_blocks(&self) -> Option<impl Iterator<Item = Range<usize>> + '_> {
        self.end()?;
        Some((0..self.count).map(move |k| {
            let s = self.start + k * self.stride;
            s..s + self.block
        }))
    }
}
