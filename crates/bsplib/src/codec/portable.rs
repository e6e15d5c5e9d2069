//! [`Portable`]: the values a process in another address space can return
//! (`run` on the `processes` and `mpi` engines), encoded to bytes there and
//! decoded here.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};

use super::{decode_error, encode_error};
use crate::error::Error;

/// A value a process can return from [`run`](crate::run): on the
/// `processes` and `mpi` engines, where the process has its own address
/// space, it is encoded to bytes there and decoded in the caller; on
/// `serial` and `threads` it moves as it is, never encoded.
///
/// `#[derive(Portable)]` writes the impl for a struct or an enum whose
/// fields are `Portable` (the derive macro, re-exported from the crate
/// `bsplib-derive`: `use bsplib::Portable` names both). Implemented here
/// for the primitive numbers, `bool`, `char`, `()`, `String`, [`Error`],
/// `Vec`, `VecDeque`, arrays, `Box`, `Option`, `Result`, `BTreeMap`,
/// `HashMap`, `BTreeSet`, `HashSet` and tuples of up to twelve elements.
///
/// An impl is user code the library calls (`engine/README.md`, "User
/// code: one guard"): an `encode` that panics where a process ends fails
/// the run with [`ErrorKind::Panicked`](crate::ErrorKind::Panicked),
/// naming `Portable::encode` and the process, and nobody waits for it; a
/// `decode` that panics, after every process ended, panics in
/// [`Runtime::run`](crate::Runtime::run).
///
/// # Examples
///
/// ```
/// use bsplib::{Engine, Portable, Runtime};
///
/// #[derive(Portable, Debug, PartialEq)]
/// struct Partial {
///     pid: usize,
///     sums: Vec<f64>,
/// }
///
/// let got = Runtime::new(2)
///     .engine(Engine::Processes)
///     .run(|bsp| Ok(Partial { pid: bsp.pid(), sums: vec![1.5; bsp.pid()] }))?;
/// assert_eq!(got[1], Partial { pid: 1, sums: vec![1.5] });
///
/// // By hand: the bytes, and a decode that rejects what is not an encoding.
/// let mut bytes = Vec::new();
/// (7u8, Some('x')).encode(&mut bytes);
/// assert_eq!(<(u8, Option<char>)>::decode(&mut bytes.as_slice()), Some((7, Some('x'))));
/// assert_eq!(bool::decode(&mut &[2u8][..]), None);
/// # Ok::<(), bsplib::Error>(())
/// ```
pub trait Portable: Sized {
    /// Appends the encoding of `self` to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Decodes a value from the front of `input`, advancing it; `None` if
    /// the bytes are not an encoding of `Self` (too short, or a value the
    /// type does not have): malformed input is never a panic.
    fn decode(input: &mut &[u8]) -> Option<Self>;
}

macro_rules! portable_number {
    ($($t:ty),*) => {$(
        impl Portable for $t {
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn decode(input: &mut &[u8]) -> Option<Self> {
                let (head, rest) = input.split_first_chunk::<{ std::mem::size_of::<$t>() }>()?;
                *input = rest;
                Some(<$t>::from_le_bytes(*head))
            }
        }
    )*};
}
portable_number!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128, f32, f64);

impl Portable for usize {
    fn encode(&self, out: &mut Vec<u8>) {
        (*self as u64).encode(out)
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        usize::try_from(u64::decode(input)?).ok()
    }
}

impl Portable for isize {
    fn encode(&self, out: &mut Vec<u8>) {
        (*self as i64).encode(out)
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        isize::try_from(i64::decode(input)?).ok()
    }
}

impl Portable for bool {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self))
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        match u8::decode(input)? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

impl Portable for char {
    fn encode(&self, out: &mut Vec<u8>) {
        u32::from(*self).encode(out)
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        char::from_u32(u32::decode(input)?)
    }
}

impl Portable for () {
    fn encode(&self, _: &mut Vec<u8>) {}
    fn decode(_: &mut &[u8]) -> Option<Self> {
        Some(())
    }
}

impl Portable for String {
    fn encode(&self, out: &mut Vec<u8>) {
        self.len().encode(out);
        out.extend_from_slice(self.as_bytes());
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let n = usize::decode(input)?;
        if n > input.len() {
            return None;
        }
        let (head, rest) = input.split_at(n);
        *input = rest;
        String::from_utf8(head.to_vec()).ok()
    }
}

impl<T: Portable> Portable for Vec<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.len().encode(out);
        self.iter().for_each(|x| x.encode(out));
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let n = usize::decode(input)?;
        // Every element takes at least... nothing (`()`): cap the
        // reservation by the input instead of trusting `n`.
        let mut v = Vec::with_capacity(n.min(input.len()));
        for _ in 0..n {
            v.push(T::decode(input)?);
        }
        Some(v)
    }
}

impl<T: Portable> Portable for Option<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.is_some().encode(out);
        if let Some(x) = self {
            x.encode(out);
        }
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        Some(if bool::decode(input)? {
            Some(T::decode(input)?)
        } else {
            None
        })
    }
}

impl<T: Portable, E: Portable> Portable for Result<T, E> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.is_ok().encode(out);
        match self {
            Ok(x) => x.encode(out),
            Err(e) => e.encode(out),
        }
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        Some(if bool::decode(input)? {
            Ok(T::decode(input)?)
        } else {
            Err(E::decode(input)?)
        })
    }
}

macro_rules! portable_tuple {
    ($($name:ident)+) => {
        impl<$($name: Portable),+> Portable for ($($name,)+) {
            #[allow(non_snake_case)]
            fn encode(&self, out: &mut Vec<u8>) {
                let ($($name,)+) = self;
                $($name.encode(out);)+
            }
            fn decode(input: &mut &[u8]) -> Option<Self> {
                Some(($($name::decode(input)?,)+))
            }
        }
    };
}
portable_tuple!(A);
portable_tuple!(A B);
portable_tuple!(A B C);
portable_tuple!(A B C D);
portable_tuple!(A B C D E);
portable_tuple!(A B C D E F);
portable_tuple!(A B C D E F G);
portable_tuple!(A B C D E F G H);
portable_tuple!(A B C D E F G H I);
portable_tuple!(A B C D E F G H I J);
portable_tuple!(A B C D E F G H I J K);
portable_tuple!(A B C D E F G H I J K L);

/// The elements in order, without a length (the type has it).
impl<T: Portable, const N: usize> Portable for [T; N] {
    fn encode(&self, out: &mut Vec<u8>) {
        self.iter().for_each(|x| x.encode(out));
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let mut v = Vec::with_capacity(N.min(input.len()));
        for _ in 0..N {
            v.push(T::decode(input)?);
        }
        v.try_into().ok()
    }
}

impl<T: Portable> Portable for Box<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        (**self).encode(out)
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        T::decode(input).map(Box::new)
    }
}

impl<T: Portable> Portable for VecDeque<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.len().encode(out);
        self.iter().for_each(|x| x.encode(out));
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        Vec::decode(input).map(VecDeque::from)
    }
}

/// The length, then the entries in the map's order; a key that comes twice
/// is not an encoding of a map.
impl<K: Portable + Ord, V: Portable> Portable for BTreeMap<K, V> {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_entries(self.len(), self.iter(), out)
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let mut map = BTreeMap::new();
        decode_entries(input, |k, v| map.insert(k, v).is_none())?;
        Some(map)
    }
}

/// As a `BTreeMap`, the entries in the map's (arbitrary) order.
impl<K, V, S> Portable for HashMap<K, V, S>
where
    K: Portable + Eq + Hash,
    V: Portable,
    S: BuildHasher + Default,
{
    fn encode(&self, out: &mut Vec<u8>) {
        encode_entries(self.len(), self.iter(), out)
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let mut map = HashMap::with_hasher(S::default());
        decode_entries(input, |k, v| map.insert(k, v).is_none())?;
        Some(map)
    }
}

/// The length, then the elements in the set's order; an element that
/// comes twice is not an encoding of a set.
impl<T: Portable + Ord> Portable for BTreeSet<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_entries(self.len(), self.iter().map(|x| (x, &())), out)
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let mut set = BTreeSet::new();
        decode_entries(input, |x, ()| set.insert(x))?;
        Some(set)
    }
}

/// As a `BTreeSet`, the elements in the set's (arbitrary) order.
impl<T, S> Portable for HashSet<T, S>
where
    T: Portable + Eq + Hash,
    S: BuildHasher + Default,
{
    fn encode(&self, out: &mut Vec<u8>) {
        encode_entries(self.len(), self.iter().map(|x| (x, &())), out)
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let mut set = HashSet::with_hasher(S::default());
        decode_entries(input, |x, ()| set.insert(x))?;
        Some(set)
    }
}

/// A collection's encoding: its length, then each key and value.
fn encode_entries<'a, K: Portable + 'a, V: Portable + 'a>(
    len: usize,
    entries: impl Iterator<Item = (&'a K, &'a V)>,
    out: &mut Vec<u8>,
) {
    len.encode(out);
    for (k, v) in entries {
        k.encode(out);
        v.encode(out);
    }
}

/// Decodes what [`encode_entries`] wrote, handing each entry to `insert`,
/// which says whether it was new: `None` on malformed input or an entry
/// that was not.
fn decode_entries<K: Portable, V: Portable>(
    input: &mut &[u8],
    mut insert: impl FnMut(K, V) -> bool,
) -> Option<()> {
    let n = usize::decode(input)?;
    for _ in 0..n {
        let (k, v) = (K::decode(input)?, V::decode(input)?);
        if !insert(k, v) {
            return None;
        }
    }
    Some(())
}

/// Errors cross address spaces too (a process may return what a call gave
/// it).
impl Portable for Error {
    fn encode(&self, out: &mut Vec<u8>) {
        let bytes = encode_error(self);
        bytes.len().encode(out);
        out.extend_from_slice(&bytes);
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let n = usize::decode(input)?;
        if n > input.len() {
            return None;
        }
        let (head, rest) = input.split_at(n);
        *input = rest;
        decode_error(head)
    }
}
