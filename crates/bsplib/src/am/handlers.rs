//! The handlers of a run and what they see: their registration
//! ([`Handlers`]), how messages name them ([`Handler`]), the message as a
//! header handler sees it ([`Arrival`]) and what a completion handler gets
//! ([`Done`]).
//!
//! The types live here: a handler is registered with its header's element
//! type `H` and its data's element type `D`, and the closure the dispatch
//! keeps (a [`HeaderFn`]) is the typed one wrapped, reading the record's
//! bytes as `H`s and `D`s. The dispatch itself deals in bytes.

use std::marker::PhantomData;

use bytemuck::Pod;

use super::landing::{Buffer, Landing, To};
use super::{Context, Counters, Outgoing, Source};
#[cfg(doc)]
use crate::am::Am;
use crate::bsp::area::AreaRef;
use crate::error::ErrorKind;

/// A header handler as the dispatch keeps it: the typed one wrapped
/// ([`Handlers::add`]); an `Err` is the reason the message fails on the
/// target.
pub(super) type HeaderFn = Box<dyn FnMut(&RawArrival<'_>) -> Result<Resolved, String>>;

/// A completion handler as the dispatch keeps it: the typed one wrapped
/// ([`Landing::then`]); it returns the error of a send it made, if any.
pub(super) type CompletionFn = Box<dyn FnOnce(DoneParts<'_>) -> Option<ErrorKind>>;

/// What a header handler said, its types erased: where the data lands and
/// what runs once it has.
pub(super) struct Resolved {
    pub(super) to: To,
    pub(super) then: Option<CompletionFn>,
}

/// The handlers of a run, registered by every process in the same order
/// (see [`Am::init`]).
#[derive(Default)]
pub struct Handlers {
    pub(super) list: Vec<(String, HeaderFn)>,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.list.iter().map(|(n, _)| n))
            .finish()
    }
}

/// A handler, as messages name it: its index in the [`Handlers`] and a
/// hash of its name, which the target checks against its own; typed by
/// its header's element type `H` and its data's element type `D`, so
/// that [`Am::send`] takes a `&[H]` header and `D`s of data.
pub struct Handler<H, D> {
    pub(super) named: Named,
    types: PhantomData<fn() -> (H, D)>,
}

/// A handler's index and name hash, as a record carries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Named {
    pub(super) index: u32,
    pub(super) hash: u32,
}

// By hand: the derives would ask `H` and `D` for the same traits.
impl<H, D> Clone for Handler<H, D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<H, D> Copy for Handler<H, D> {}

impl<H, D> PartialEq for Handler<H, D> {
    fn eq(&self, other: &Self) -> bool {
        self.named == other.named
    }
}

impl<H, D> Eq for Handler<H, D> {}

impl<H, D> std::hash::Hash for Handler<H, D> {
    fn hash<S: std::hash::Hasher>(&self, state: &mut S) {
        self.named.hash(state);
    }
}

impl<H, D> std::fmt::Debug for Handler<H, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler")
            .field("index", &self.named.index)
            .field("hash", &self.named.hash)
            .field("header", &std::any::type_name::<H>())
            .field("data", &std::any::type_name::<D>())
            .finish()
    }
}

impl Handlers {
    /// No handlers yet.
    pub fn new() -> Handlers {
        Handlers::default()
    }

    /// Adds the header handler `header` under `name`, for messages whose
    /// header is `H`s and whose data is `D`s; every process adds the same
    /// names, with the same types, in the same order. The handler gets the
    /// message's [`Arrival`] and says where its data lands.
    ///
    /// `H` and `D` are not zero-sized (a build error otherwise): a message
    /// of zero-sized elements would carry nothing to count them by. A
    /// handler of messages without data takes any `D` (`u8`, say), and
    /// its messages send `&[]`.
    ///
    /// # Panics
    ///
    /// Not here; if `header` panics where a message is handled, in the
    /// progress point that dispatched it ([`Bsp::sync`](crate::Bsp::sync),
    /// [`Am::poll`], [`Am::fence`], [`Am::wait_counter`], ...): the run
    /// fails with [`ErrorKind::Panicked`] naming that call, this process,
    /// the handler and the message's origin; the process's active-message
    /// state is left whole, it still completes the barrier the others
    /// wait in, and the panic goes on from that call. A program that
    /// catches it (`catch_unwind` around the sync) finds the run stopped:
    /// its later calls return an error, and the others' syncs fail too.
    ///
    /// ```
    /// use bsplib::am::{Handlers, Landing};
    /// let mut hs = Handlers::new();
    /// // A header of one `u32`, no data.
    /// let ping = hs.add::<u32, u8>("ping", |a| {
    ///     let n = a.header()[0];
    ///     Landing::none().then(move |_| println!("ping {n}"))
    /// });
    /// # let _ = ping;
    /// ```
    pub fn add<H: Pod, D: Pod>(
        &mut self,
        name: &str,
        mut header: impl FnMut(&Arrival<'_, H, D>) -> Landing<D> + 'static,
    ) -> Handler<H, D> {
        const {
            assert!(
                std::mem::size_of::<H>() != 0 && std::mem::size_of::<D>() != 0,
                "a handler's header and data elements are not zero-sized"
            )
        };
        let index = self.list.len() as u32;
        let wrapped = move |raw: &RawArrival<'_>| -> Result<Resolved, String> {
            let a = Arrival::<H, D>::read(raw)?;
            Ok(header(&a).resolve())
        };
        self.list.push((name.to_owned(), Box::new(wrapped)));
        Handler {
            named: Named {
                index,
                hash: name_hash(name),
            },
            types: PhantomData,
        }
    }
}

/// FNV-1a of a handler's name, folded to 32 bits.
pub(super) fn name_hash(name: &str) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h ^ (h >> 32)) as u32
}

// ----- what the target sees ----------------------------------------------------

/// How the origin laid out a message's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One contiguous block ([`Source::Contiguous`], LAPI's `LAPI_Amsend`).
    Contiguous,
    /// Blocks of any lengths, landing block for block
    /// ([`Source::Io`], `LAPI_GEN_IOVECTOR`).
    Io,
    /// Equal blocks at a stride ([`Source::Strided`],
    /// `LAPI_GEN_STRIDED_XFER`).
    Strided,
    /// Blocks of any lengths, the elements flowing in order into target
    /// blocks of any lengths ([`Source::Generic`], `LAPI_GEN_GENERIC`).
    Generic,
}

/// A message as the dispatch reads it from its record: bytes.
pub(super) struct RawArrival<'a> {
    pub(super) owner: (u64, usize),
    pub(super) src: usize,
    pub(super) uhdr: &'a [u8],
    pub(super) lens: &'a [usize],
    pub(super) total: usize,
    pub(super) kind: Kind,
}

/// A message as its header handler sees it: a header of `H`s, data of
/// `D`s.
pub struct Arrival<'a, H, D> {
    raw: &'a RawArrival<'a>,
    header: Header<'a, H>,
    data: PhantomData<fn() -> D>,
}

/// The header's elements: in the record where they are aligned for `H`,
/// else a copy.
enum Header<'a, H> {
    InPlace(&'a [H]),
    Copied(Vec<H>),
}

impl<'a, H: Pod, D: Pod> Arrival<'a, H, D> {
    /// The message of `raw` read as `H`s and `D`s; an error if its lengths
    /// are not whole elements (the origin registered the handler with
    /// other types).
    fn read(raw: &'a RawArrival<'a>) -> Result<Self, String> {
        let (h, d) = (std::mem::size_of::<H>(), std::mem::size_of::<D>());
        if raw.uhdr.len() % h != 0 || raw.lens.iter().any(|l| l % d != 0) {
            return Err(format!(
                "has a header of {} bytes and data blocks of {:?} bytes, not whole elements \
                 of its handler's types ({} of {h} bytes, {} of {d}): every process must \
                 add the same handlers, with the same types, in the same order",
                raw.uhdr.len(),
                raw.lens,
                std::any::type_name::<H>(),
                std::any::type_name::<D>(),
            ));
        }
        // A record's header starts 8-byte aligned in the received bytes;
        // where those are not aligned for `H` (an allocation is not bound
        // to be, and `H` may need more than 8), the header is copied.
        let header = match bytemuck::try_cast_slice::<u8, H>(raw.uhdr) {
            Ok(s) => Header::InPlace(s),
            Err(_) => Header::Copied(
                raw.uhdr
                    .chunks_exact(h)
                    .map(bytemuck::pod_read_unaligned)
                    .collect(),
            ),
        };
        Ok(Arrival {
            raw,
            header,
            data: PhantomData,
        })
    }
}

impl<H, D> Arrival<'_, H, D> {
    /// The origin.
    pub fn src(&self) -> usize {
        self.raw.src
    }

    /// The header's elements, as the origin passed them to
    /// [`send`](Am::send).
    pub fn header(&self) -> &[H] {
        match &self.header {
            Header::InPlace(s) => s,
            Header::Copied(v) => v,
        }
    }

    /// The data's elements in all.
    pub fn data_len(&self) -> usize {
        self.raw.total / std::mem::size_of::<D>().max(1)
    }

    /// The length of each of the origin's blocks, in elements.
    pub fn block_lens(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        let d = std::mem::size_of::<D>().max(1);
        self.raw.lens.iter().map(move |l| l / d)
    }

    /// How the origin laid out the data.
    pub fn kind(&self) -> Kind {
        self.raw.kind
    }

    /// The elements of `area`, an area of this process, to read (to decide
    /// where the data goes).
    ///
    /// # Panics
    ///
    /// If `area` belongs to another process or run.
    pub fn area<'b, T: Pod>(&'b self, area: &'b AreaRef<T>) -> &'b [T] {
        assert_eq!(
            area.owner(),
            self.raw.owner,
            "a header handler may only read areas of its own process"
        );
        // SAFETY: this process's area (checked), alive (`area` holds it);
        // handlers run only inside `&mut Bsp` calls, where no view exists,
        // and a header handler has no way to write it meanwhile.
        unsafe { std::slice::from_raw_parts(area.ptr().cast::<T>(), area.len()) }
    }
}

// ----- the completion handler ----------------------------------------------------

/// What the dispatch hands a completion handler, its types erased.
pub(super) struct DoneParts<'a> {
    pub(super) src: usize,
    /// The buffer of [`Landing::buffer`], if the data landed in one.
    pub(super) data: Option<Box<dyn Buffer>>,
    pub(super) owner: (u64, usize),
    pub(super) sends: &'a mut Vec<Outgoing>,
    pub(super) ctx: &'a Context,
}

/// What a completion handler gets: the message's origin, its data if it
/// landed in a buffer (as `D`s), this process's areas, and the right to
/// send.
pub struct Done<'a, D> {
    src: usize,
    data: Vec<D>,
    owner: (u64, usize),
    sends: &'a mut Vec<Outgoing>,
    ctx: &'a Context,
    error: Option<ErrorKind>,
}

impl<D: Pod> Done<'_, D> {
    /// Runs `completion` on what the dispatch handed over; the error of a
    /// send it made, if any.
    pub(super) fn run(
        parts: DoneParts<'_>,
        completion: impl FnOnce(&mut Done<'_, D>),
    ) -> Option<ErrorKind> {
        // The buffer is the `Vec<D>` that `Landing::<D>::buffer` made.
        let data = parts
            .data
            .and_then(|b| b.into_any().downcast::<Vec<D>>().ok())
            .map_or_else(Vec::new, |b| *b);
        let mut done = Done {
            src: parts.src,
            data,
            owner: parts.owner,
            sends: parts.sends,
            ctx: parts.ctx,
            error: None,
        };
        completion(&mut done);
        done.error
    }
}

impl<D> Done<'_, D> {
    /// The origin.
    pub fn src(&self) -> usize {
        self.src
    }

    /// The data, if it landed in a buffer ([`Landing::buffer`]); empty
    /// otherwise.
    pub fn data(&self) -> &[D] {
        &self.data
    }

    /// Takes the data buffer.
    pub fn take_data(&mut self) -> Vec<D> {
        std::mem::take(&mut self.data)
    }

    /// The elements of `area`, an area of this process, to read and write.
    ///
    /// # Panics
    ///
    /// If `area` belongs to another process or run (a handler is code of
    /// this process: that is a bug in it).
    ///
    /// The slice borrows `area` as well as the `Done`: the area cannot be
    /// dropped while the slice is alive.
    ///
    /// ```compile_fail
    /// # use bsplib::am::{Done, Landing};
    /// fn f(d: &mut Done<'_, u64>, r: bsplib::AreaRef<u64>) {
    ///     let s = d.area_mut(&r);
    ///     drop(r); // error: `r` is borrowed by `s`
    ///     s[0] = 1;
    /// }
    /// ```
    pub fn area_mut<'s, T: Pod>(&'s mut self, area: &'s AreaRef<T>) -> &'s mut [T] {
        assert_eq!(
            area.owner(),
            self.owner,
            "a completion handler may only touch areas of its own process"
        );
        // SAFETY: the area is this process's (checked), its storage alive
        // while the returned slice is (it borrows `area`, whose `Rc` holds
        // the storage); handlers run only inside `&mut Bsp` calls,
        // so no other view of it exists, and the returned borrow ends
        // before this `Done` (borrowed mutably) can hand out another.
        unsafe { std::slice::from_raw_parts_mut(area.ptr().cast::<T>(), area.len()) }
    }

    /// Sends an active message, as [`Am::send`] does; it leaves when
    /// this handler returns (or, while this process waits in a sync, when
    /// that sync returns).
    ///
    /// # Errors
    ///
    /// As for [`Am::send`]; the error also stops the run when the
    /// handler returns.
    pub fn send<'s, H2: Pod, D2: Pod>(
        &mut self,
        pid: usize,
        handler: Handler<H2, D2>,
        header: &[H2],
        data: impl Into<Source<'s, D2>>,
        counters: Counters<'_>,
    ) -> Result<(), ErrorKind> {
        let built = self.ctx.build(
            pid,
            handler.named,
            bytemuck::cast_slice(header),
            &data.into(),
            &counters,
        );
        match built {
            Ok(out) => {
                self.sends.push(out);
                Ok(())
            }
            Err(e) => {
                self.error.get_or_insert(e.clone());
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header whose bytes are not aligned for `H` is read from a copy;
    /// an aligned one in place; both give the origin's values.
    #[test]
    fn a_header_reads_the_same_aligned_or_not() {
        let words: [u64; 3] = [7, u64::MAX - 1, 1 << 40];
        let mut bytes = [0u8; 8 * 3 + 16];
        let at = (8 - bytes.as_ptr() as usize % 8) % 8; // 8-aligned
        for (start, in_place) in [(at, true), (at + 1, false)] {
            bytes[start..start + 24].copy_from_slice(bytemuck::cast_slice(&words));
            let raw = RawArrival {
                owner: (0, 0),
                src: 0,
                uhdr: &bytes[start..start + 24],
                lens: &[16],
                total: 16,
                kind: Kind::Contiguous,
            };
            let a = Arrival::<u64, [u32; 2]>::read(&raw).expect("whole elements");
            assert_eq!(a.header(), words);
            assert_eq!(matches!(a.header, Header::InPlace(_)), in_place);
            assert_eq!(a.data_len(), 2);
            assert!(a.block_lens().eq([2]));
        }
    }

    /// Lengths that are not whole elements are the target's error.
    #[test]
    fn a_header_of_part_elements_is_refused() {
        let raw = RawArrival {
            owner: (0, 0),
            src: 1,
            uhdr: &[0; 12],
            lens: &[8],
            total: 8,
            kind: Kind::Contiguous,
        };
        let e = Arrival::<u64, u8>::read(&raw).err().expect("refused");
        assert!(e.contains("a header of 12 bytes"), "{e}");
        let raw = RawArrival {
            uhdr: &[0; 8],
            lens: &[6],
            total: 6,
            ..raw
        };
        assert!(Arrival::<u64, u32>::read(&raw).is_err());
    }
}
