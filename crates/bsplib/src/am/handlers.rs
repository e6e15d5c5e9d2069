//! The handlers of a run and what they see: their registration
//! ([`Handlers`]), how messages name them ([`Handler`]), the message as a
//! header handler sees it ([`Arrival`]) and what a completion handler gets
//! ([`Done`]).

use bytemuck::Pod;

use super::landing::Landing;
use super::{Context, Counters, Outgoing, Source};
use crate::bsp::area::AreaRef;
#[cfg(doc)]
use crate::bsp::Bsp;
use crate::error::ErrorKind;

pub(super) type HeaderFn = Box<dyn FnMut(&Arrival<'_>) -> Landing>;
pub(super) type CompletionFn = Box<dyn FnOnce(&mut Done<'_>)>;

/// The handlers of a run, registered by every process in the same order
/// (see [`Bsp::am_init`]).
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
/// hash of its name, which the target checks against its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handler {
    pub(super) index: u32,
    pub(super) hash: u32,
}

impl Handlers {
    /// No handlers yet.
    pub fn new() -> Handlers {
        Handlers::default()
    }

    /// Adds the header handler `header` under `name`; every process adds
    /// the same names in the same order. The handler gets the message's
    /// [`Arrival`] and says where its data lands.
    pub fn add(
        &mut self,
        name: &str,
        header: impl FnMut(&Arrival<'_>) -> Landing + 'static,
    ) -> Handler {
        let index = self.list.len() as u32;
        self.list.push((name.to_owned(), Box::new(header)));
        Handler {
            index,
            hash: name_hash(name),
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
    /// Blocks of any lengths, the bytes flowing in order into target blocks
    /// of any lengths ([`Source::Generic`], `LAPI_GEN_GENERIC`).
    Generic,
}

/// A message as its header handler sees it.
pub struct Arrival<'a> {
    pub(super) owner: (u64, usize),
    pub(super) src: usize,
    pub(super) uhdr: &'a [u8],
    pub(super) lens: &'a [usize],
    pub(super) total: usize,
    pub(super) kind: Kind,
}

impl Arrival<'_> {
    /// The origin.
    pub fn src(&self) -> usize {
        self.src
    }

    /// The user header's bytes.
    pub fn uhdr(&self) -> &[u8] {
        self.uhdr
    }

    /// The user header read as one `T` (`None` if it is shorter).
    pub fn uhdr_as<T: Pod>(&self) -> Option<T> {
        let n = std::mem::size_of::<T>();
        (self.uhdr.len() >= n).then(|| bytemuck::pod_read_unaligned(&self.uhdr[..n]))
    }

    /// The user header read as `T`s (trailing bytes that do not make a
    /// whole `T` are ignored).
    pub fn uhdr_as_vec<T: Pod>(&self) -> Vec<T> {
        let n = std::mem::size_of::<T>().max(1);
        self.uhdr
            .chunks_exact(n)
            .map(bytemuck::pod_read_unaligned)
            .collect()
    }

    /// The byte length of each of the origin's blocks.
    pub fn lens(&self) -> &[usize] {
        self.lens
    }

    /// The data's bytes in all.
    pub fn total(&self) -> usize {
        self.total
    }

    /// How the origin laid out the data.
    pub fn kind(&self) -> Kind {
        self.kind
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
            self.owner,
            "a header handler may only read areas of its own process"
        );
        // SAFETY: this process's area (checked), alive (`area` holds it);
        // handlers run only inside `&mut Bsp` calls, where no view exists,
        // and a header handler has no way to write it meanwhile.
        unsafe { std::slice::from_raw_parts(area.ptr().cast::<T>(), area.len()) }
    }
}

/// What a completion handler gets: the message's origin, its data if it
/// landed in a buffer, this process's areas, and the right to send.
pub struct Done<'a> {
    pub(super) src: usize,
    pub(super) data: Vec<u8>,
    pub(super) owner: (u64, usize),
    pub(super) sends: &'a mut Vec<Outgoing>,
    pub(super) ctx: &'a Context,
    pub(super) error: Option<ErrorKind>,
}

impl Done<'_> {
    /// The origin.
    pub fn src(&self) -> usize {
        self.src
    }

    /// The data, if it landed in a buffer ([`Landing::buffer`]); empty
    /// otherwise.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The data read as `T`s (a copy: the buffer need not be aligned).
    pub fn data_as<T: Pod>(&self) -> Vec<T> {
        let n = std::mem::size_of::<T>().max(1);
        self.data
            .chunks_exact(n)
            .map(bytemuck::pod_read_unaligned)
            .collect()
    }

    /// Takes the data buffer.
    pub fn take_data(&mut self) -> Vec<u8> {
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
    /// fn f(d: &mut Done<'_>, r: bsplib::AreaRef<u64>) {
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

    /// Sends an active message, as [`Bsp::am_send`] does; it leaves when
    /// this handler returns (or, while this process waits in a sync, when
    /// that sync returns).
    ///
    /// # Errors
    ///
    /// As for [`Bsp::am_send`]; the error also stops the run when the
    /// handler returns.
    pub fn send<T: Pod>(
        &mut self,
        pid: usize,
        handler: Handler,
        uhdr: &[impl Pod],
        src: Source<'_, T>,
        counters: Counters<'_>,
    ) -> Result<(), ErrorKind> {
        match self
            .ctx
            .build(pid, handler, bytemuck::cast_slice(uhdr), &src, &counters)
        {
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
