//! Values across address spaces: the byte encoding of errors (the first
//! error of a run travels from the process that made it to the one that
//! reports it) and of results ([`Portable`], what `run` returns from
//! processes that are not threads of the caller).

use std::sync::atomic::{AtomicPtr, Ordering};

use crate::error::{Error, ErrorKind, SourceLocation};

/// Appends little-endian words and length-prefixed strings.
#[derive(Default)]
pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    pub(crate) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

/// Reads what a [`Writer`] wrote; every read fails cleanly on short input.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }

    pub(crate) fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }

    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.usize()?;
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    pub(crate) fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }

    pub(crate) fn static_str(&mut self) -> Option<&'static str> {
        Some(intern(std::str::from_utf8(self.bytes()?).ok()?))
    }
}

/// A `'static` copy of `s`, made once per distinct string (call names and
/// source file names: a handful per program). The copies are kept in a
/// lock-free list: a process forked while another thread held a lock
/// would wait for it forever, and a global root keeps leak checkers from
/// calling the copies lost.
pub(crate) fn intern(s: &str) -> &'static str {
    struct Node {
        s: &'static str,
        next: *mut Node,
    }
    static HEAD: AtomicPtr<Node> = AtomicPtr::new(std::ptr::null_mut());
    let mut at = HEAD.load(Ordering::Acquire);
    while !at.is_null() {
        // SAFETY: nodes are leaked boxes, never freed or changed after
        // they are published (Release CAS below, Acquire loads).
        let node = unsafe { &*at };
        if node.s == s {
            return node.s;
        }
        at = node.next;
    }
    let copy: &'static str = Box::leak(s.to_owned().into_boxed_str());
    let node = Box::into_raw(Box::new(Node {
        s: copy,
        next: std::ptr::null_mut(),
    }));
    let mut head = HEAD.load(Ordering::Acquire);
    loop {
        // SAFETY: `node` is ours until the CAS publishes it.
        unsafe { (*node).next = head };
        match HEAD.compare_exchange_weak(head, node, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return copy,
            Err(now) => head = now,
        }
    }
}

pub(crate) fn write_location(w: &mut Writer, loc: Option<SourceLocation>) {
    match loc {
        None => w.u64(0),
        Some(l) => {
            w.u64(1);
            w.str(l.file());
            w.u64(l.line().into());
            w.u64(l.column().into());
        }
    }
}

pub(crate) fn read_location(r: &mut Reader<'_>) -> Option<Option<SourceLocation>> {
    Some(match r.u64()? {
        0 => None,
        _ => Some(SourceLocation::new(
            r.static_str()?,
            u32::try_from(r.u64()?).ok()?,
            u32::try_from(r.u64()?).ok()?,
        )),
    })
}

/// The bytes of `err`.
pub(crate) fn encode_error(err: &Error) -> Vec<u8> {
    use ErrorKind as K;
    let mut w = Writer::default();
    w.str(err.call());
    w.u64(err.pid() as u64);
    w.u64(err.superstep());
    write_location(&mut w, err.location());
    let word = |w: &mut Writer, v: usize| w.u64(v as u64);
    match err.kind() {
        K::PidOutOfRange { pid, nprocs } => {
            w.u64(0);
            w.u64(*pid as u64);
            word(&mut w, *nprocs);
        }
        K::Negative { what, value } => {
            w.u64(1);
            w.str(what);
            w.u64(*value as u64);
        }
        K::Overflow { what } => {
            w.u64(2);
            w.str(what);
        }
        K::NotRegistered { addr } => {
            w.u64(3);
            word(&mut w, *addr);
        }
        K::RemoteNull { remote } => {
            w.u64(4);
            word(&mut w, *remote);
        }
        K::OutOfBounds {
            remote,
            offset,
            nbytes,
            extent,
        } => {
            w.u64(5);
            for v in [remote, offset, nbytes, extent] {
                word(&mut w, *v);
            }
        }
        K::LocalBounds {
            what,
            needed,
            available,
        } => {
            w.u64(6);
            w.str(what);
            word(&mut w, *needed);
            word(&mut w, *available);
        }
        K::RegistrationMismatch { detail } => {
            w.u64(7);
            w.str(detail);
        }
        K::TagSizeMismatch { detail } => {
            w.u64(8);
            w.str(detail);
        }
        K::TagLength { given, expected } => {
            w.u64(9);
            word(&mut w, *given);
            word(&mut w, *expected);
        }
        K::EmptyQueue => w.u64(10),
        K::NoProcesses => w.u64(11),
        K::Nested => w.u64(12),
        K::Startup { detail } => {
            w.u64(13);
            w.str(detail);
        }
        K::Aborted { message } => {
            w.u64(14);
            w.str(message);
        }
        K::Panicked { message } => {
            w.u64(15);
            w.str(message);
        }
        K::ProcessEnded { ended } => {
            w.u64(16);
            word(&mut w, *ended);
        }
        K::Stopped => w.u64(17),
        K::OutsideRun => w.u64(18),
        K::Died { detail } => {
            w.u64(19);
            w.str(detail);
        }
        K::Capacity { needed, capacity } => {
            w.u64(20);
            word(&mut w, *needed);
            word(&mut w, *capacity);
        }
        K::NullPointer { what } => {
            w.u64(21);
            w.str(what);
        }
        K::IntOverflow { what, value } => {
            w.u64(22);
            w.str(what);
            w.u64(*value);
        }
        K::Deadline { limit_ms, laggards } => {
            w.u64(23);
            w.u64(*limit_ms);
            w.str(laggards);
        }
        K::OutOfMemory { bytes } => {
            w.u64(24);
            word(&mut w, *bytes);
        }
        K::NotABspProcess { what } => {
            w.u64(25);
            w.str(what);
        }
        K::InvalidRecord {
            what,
            sender,
            detail,
        } => {
            w.u64(26);
            w.str(what);
            word(&mut w, *sender);
            w.str(detail);
        }
        K::ThreadsAtFork { threads } => {
            w.u64(27);
            word(&mut w, *threads);
        }
        K::ForeignArea {
            created_run,
            created_pid,
            run,
        } => {
            w.u64(28);
            w.u64(*created_run);
            word(&mut w, *created_pid);
            w.u64(*run);
        }
        K::OverlappingBlocks { block, stride } => {
            w.u64(29);
            word(&mut w, *block);
            word(&mut w, *stride);
        }
        K::ShapeMismatch { src, dst } => {
            w.u64(30);
            word(&mut w, *src);
            word(&mut w, *dst);
        }
        // Accumulate (`rma.rs`): numbered from 60, clear of the kinds
        // other extensions add after 34.
        K::AccumulateOperator { op, ty } => {
            w.u64(60);
            w.str(op);
            w.str(ty);
        }
        K::AccumulateMismatch { detail } => {
            w.u64(61);
            w.str(detail);
        }
        K::EpochOpen { detail } => {
            w.u64(64);
            w.str(detail);
        }
        K::NoEpoch { detail } => {
            w.u64(65);
            w.str(detail);
        }
        K::EpochUnmatched { detail } => {
            w.u64(66);
            w.str(detail);
        }
        K::Transport { detail } => {
            w.u64(67);
            w.str(detail);
        }
        K::AccumulateUnknown { what, value } => {
            w.u64(62);
            w.str(what);
            w.u64(*value as u64);
        }
        K::HintViolated { hint, detail } => {
            w.u64(63);
            w.str(hint);
            w.str(detail);
        }
        K::AmArgument { code, detail } => {
            w.u64(31);
            w.str(code);
            w.str(detail);
        }
        K::AmTarget {
            origin,
            seq,
            reason,
        } => {
            w.u64(32);
            word(&mut w, *origin);
            w.u64(*seq);
            w.str(reason);
        }
        K::AmMismatch { detail } => {
            w.u64(33);
            w.str(detail);
        }
        K::CollectiveMismatch { detail } => {
            w.u64(34);
            w.str(detail);
        }
        K::SyncMismatch { syncs } => {
            w.u64(40);
            for (pid, at) in syncs.iter() {
                word(&mut w, *pid);
                w.str(at);
            }
        }
        K::OverlappingPuts {
            owner,
            slot,
            bytes,
            puts,
        } => {
            w.u64(41);
            word(&mut w, *owner);
            w.u64(*slot);
            word(&mut w, bytes.start);
            word(&mut w, bytes.end);
            for (pid, put) in puts.iter() {
                word(&mut w, *pid);
                w.str(put);
            }
        }
        K::HpRegionChanged {
            call,
            what,
            len,
            places,
        } => {
            w.u64(42);
            w.str(call);
            w.str(what);
            word(&mut w, *len);
            w.str(&places[0]);
            w.str(&places[1]);
        }
    }
    w.0
}

/// The bytes of `err`, at most `max` of them: a longer message (a huge
/// `bsp_abort` text, say) is cut, marked with `...`, so that the error
/// still decodes as itself.
pub(crate) fn encode_error_within(err: &Error, max: usize) -> Vec<u8> {
    let bytes = encode_error(err);
    if bytes.len() <= max {
        return bytes;
    }
    use ErrorKind as K;
    let cut = |s: &String| {
        let mut keep = max.saturating_sub(1024).min(s.len());
        while !s.is_char_boundary(keep) {
            keep -= 1;
        }
        format!("{}...", &s[..keep])
    };
    let kind = match err.kind() {
        K::RegistrationMismatch { detail } => K::RegistrationMismatch {
            detail: cut(detail),
        },
        K::TagSizeMismatch { detail } => K::TagSizeMismatch {
            detail: cut(detail),
        },
        K::Startup { detail } => K::Startup {
            detail: cut(detail),
        },
        K::CollectiveMismatch { detail } => K::CollectiveMismatch {
            detail: cut(detail),
        },
        K::AccumulateMismatch { detail } => K::AccumulateMismatch {
            detail: cut(detail),
        },
        K::EpochOpen { detail } => K::EpochOpen {
            detail: cut(detail),
        },
        K::NoEpoch { detail } => K::NoEpoch {
            detail: cut(detail),
        },
        K::EpochUnmatched { detail } => K::EpochUnmatched {
            detail: cut(detail),
        },
        K::Transport { detail } => K::Transport {
            detail: cut(detail),
        },
        K::HintViolated { hint, detail } => K::HintViolated {
            hint,
            detail: cut(detail),
        },
        K::Died { detail } => K::Died {
            detail: cut(detail),
        },
        K::Aborted { message } => K::Aborted {
            message: cut(message),
        },
        K::Panicked { message } => K::Panicked {
            message: cut(message),
        },
        K::AmTarget {
            origin,
            seq,
            reason,
        } => K::AmTarget {
            origin: *origin,
            seq: *seq,
            reason: cut(reason),
        },
        K::Deadline { limit_ms, laggards } => K::Deadline {
            limit_ms: *limit_ms,
            laggards: cut(laggards),
        },
        other => other.clone(),
    };
    let short = Error::new(kind, err.call(), err.pid(), err.superstep(), err.location());
    let bytes = encode_error(&short);
    assert!(bytes.len() <= max, "an error too long to record");
    bytes
}

/// The error whose bytes are `bytes`.
pub(crate) fn decode_error(bytes: &[u8]) -> Option<Error> {
    use ErrorKind as K;
    let mut r = Reader(bytes);
    let call = r.static_str()?;
    let pid = r.usize()?;
    let superstep = r.u64()?;
    let location = read_location(&mut r)?;
    let kind = match r.u64()? {
        0 => K::PidOutOfRange {
            pid: r.u64()? as i64,
            nprocs: r.usize()?,
        },
        1 => K::Negative {
            what: r.static_str()?,
            value: r.u64()? as i64,
        },
        2 => K::Overflow {
            what: r.static_str()?,
        },
        3 => K::NotRegistered { addr: r.usize()? },
        4 => K::RemoteNull { remote: r.usize()? },
        5 => K::OutOfBounds {
            remote: r.usize()?,
            offset: r.usize()?,
            nbytes: r.usize()?,
            extent: r.usize()?,
        },
        6 => K::LocalBounds {
            what: r.static_str()?,
            needed: r.usize()?,
            available: r.usize()?,
        },
        7 => K::RegistrationMismatch {
            detail: r.string()?,
        },
        8 => K::TagSizeMismatch {
            detail: r.string()?,
        },
        9 => K::TagLength {
            given: r.usize()?,
            expected: r.usize()?,
        },
        10 => K::EmptyQueue,
        11 => K::NoProcesses,
        12 => K::Nested,
        13 => K::Startup {
            detail: r.string()?,
        },
        14 => K::Aborted {
            message: r.string()?,
        },
        15 => K::Panicked {
            message: r.string()?,
        },
        16 => K::ProcessEnded { ended: r.usize()? },
        17 => K::Stopped,
        18 => K::OutsideRun,
        19 => K::Died {
            detail: r.string()?,
        },
        20 => K::Capacity {
            needed: r.usize()?,
            capacity: r.usize()?,
        },
        21 => K::NullPointer {
            what: r.static_str()?,
        },
        22 => K::IntOverflow {
            what: r.static_str()?,
            value: r.u64()?,
        },
        23 => K::Deadline {
            limit_ms: r.u64()?,
            laggards: r.string()?,
        },
        24 => K::OutOfMemory { bytes: r.usize()? },
        25 => K::NotABspProcess {
            what: r.static_str()?,
        },
        26 => K::InvalidRecord {
            what: r.static_str()?,
            sender: r.usize()?,
            detail: r.string()?,
        },
        27 => K::ThreadsAtFork {
            threads: r.usize()?,
        },
        28 => K::ForeignArea {
            created_run: r.u64()?,
            created_pid: r.usize()?,
            run: r.u64()?,
        },
        29 => K::OverlappingBlocks {
            block: r.usize()?,
            stride: r.usize()?,
        },
        30 => K::ShapeMismatch {
            src: r.usize()?,
            dst: r.usize()?,
        },
        60 => K::AccumulateOperator {
            op: r.static_str()?,
            ty: r.static_str()?,
        },
        61 => K::AccumulateMismatch {
            detail: r.string()?,
        },
        64 => K::EpochOpen {
            detail: r.string()?,
        },
        65 => K::NoEpoch {
            detail: r.string()?,
        },
        66 => K::EpochUnmatched {
            detail: r.string()?,
        },
        67 => K::Transport {
            detail: r.string()?,
        },
        62 => K::AccumulateUnknown {
            what: r.static_str()?,
            value: r.u64()? as i64,
        },
        63 => K::HintViolated {
            hint: r.static_str()?,
            detail: r.string()?,
        },
        31 => K::AmArgument {
            code: r.static_str()?,
            detail: r.string()?,
        },
        32 => K::AmTarget {
            origin: r.usize()?,
            seq: r.u64()?,
            reason: r.string()?,
        },
        33 => K::AmMismatch {
            detail: r.string()?,
        },
        34 => K::CollectiveMismatch {
            detail: r.string()?,
        },
        40 => K::SyncMismatch {
            syncs: Box::new([(r.usize()?, r.string()?), (r.usize()?, r.string()?)]),
        },
        41 => K::OverlappingPuts {
            owner: r.usize()?,
            slot: r.u64()?,
            bytes: r.usize()?..r.usize()?,
            puts: Box::new([(r.usize()?, r.string()?), (r.usize()?, r.string()?)]),
        },
        42 => K::HpRegionChanged {
            call: r.static_str()?,
            what: r.static_str()?,
            len: r.usize()?,
            places: Box::new([r.string()?, r.string()?]),
        },
        _ => return None,
    };
    Some(Error::new(kind, call, pid, superstep, location))
}

/// A value that can be returned from a process in another address space
/// (the `processes` engine): it is encoded to bytes there and decoded here.
///
/// Implemented for the primitive numbers, `bool`, `char`, `()`, `String`,
/// [`Error`], `Vec`, `Option`, `Result` and tuples of up to four of those.
///
/// # Examples
///
/// ```
/// use bsplib::{Engine, Runtime};
/// let sums = Runtime::new(2)
///     .engine(Engine::Processes)
///     .run_portable(|bsp| Ok((bsp.pid(), vec![1.5f64; bsp.pid()])))?;
/// assert_eq!(sums, vec![(0, vec![]), (1, vec![1.5])]);
/// # Ok::<(), bsplib::Error>(())
/// ```
pub trait Portable: Sized {
    /// Appends the encoding of `self` to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Decodes a value from the front of `input`, advancing it; `None` if
    /// the bytes are not an encoding of `Self`.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Portable + PartialEq + std::fmt::Debug>(v: T) {
        let mut out = Vec::new();
        v.encode(&mut out);
        let mut input = out.as_slice();
        assert_eq!(T::decode(&mut input), Some(v));
        assert!(input.is_empty());
    }

    #[test]
    fn portable_values_round_trip() {
        round_trip(7u32);
        round_trip(-3i64);
        round_trip(usize::MAX);
        round_trip(2.5f64);
        round_trip((1u8, String::from("héllo"), vec![Some(1i32), None]));
        round_trip(vec![(); 3]);
        round_trip(Ok::<_, String>(vec![true, false]));
    }

    #[test]
    fn truncated_input_is_rejected() {
        let mut out = Vec::new();
        vec![1u64, 2, 3].encode(&mut out);
        out.pop();
        assert_eq!(Vec::<u64>::decode(&mut out.as_slice()), None);
    }

    #[test]
    fn long_errors_are_cut_and_still_decode() {
        let e = Error::new(
            ErrorKind::Aborted {
                message: "é".repeat(50_000),
            },
            "bsp_abort",
            1,
            2,
            None,
        );
        let bytes = encode_error_within(&e, 1 << 16);
        assert!(bytes.len() <= 1 << 16);
        let d = decode_error(&bytes).expect("decodes");
        assert_eq!((d.call(), d.pid(), d.superstep()), ("bsp_abort", 1, 2));
        match d.kind() {
            ErrorKind::Aborted { message } => {
                assert!(message.ends_with("...") && message.starts_with("éé"))
            }
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn errors_round_trip() {
        let loc = Some(SourceLocation::new("prog.c", 12, 0));
        for kind in [
            ErrorKind::OutOfBounds {
                remote: 1,
                offset: 2,
                nbytes: 3,
                extent: 4,
            },
            ErrorKind::Negative {
                what: "nbytes",
                value: -5,
            },
            ErrorKind::Aborted {
                message: "stop".into(),
            },
            ErrorKind::Died {
                detail: "killed".into(),
            },
            ErrorKind::Deadline {
                limit_ms: 1500,
                laggards: "never arrived: process 1 (computing in superstep 3)".into(),
            },
            ErrorKind::OutOfMemory { bytes: 1 << 40 },
            ErrorKind::NotABspProcess {
                what: "a thread the program created",
            },
            ErrorKind::InvalidRecord {
                what: "put",
                sender: 2,
                detail: "names registration slot 7, which this process does not have".into(),
            },
            ErrorKind::ThreadsAtFork { threads: 3 },
            ErrorKind::ForeignArea {
                created_run: 4,
                created_pid: 1,
                run: 5,
            },
            ErrorKind::OverlappingBlocks {
                block: 16,
                stride: 8,
            },
            ErrorKind::ShapeMismatch { src: 24, dst: 32 },
            ErrorKind::AccumulateOperator {
                op: "bitwise xor",
                ty: "f64",
            },
            ErrorKind::AccumulateMismatch {
                detail: "process 1 (line 3) accumulates with max over f64".into(),
            },
            ErrorKind::EpochOpen {
                detail: "lock of area slot 2 on process 1 (line 9)".into(),
            },
            ErrorKind::NoEpoch {
                detail: "unlock without lock".into(),
            },
            ErrorKind::EpochUnmatched {
                detail: "process 3 entered its sync without posting".into(),
            },
            ErrorKind::Transport {
                detail: "MPI_Win_unlock returned 47 (MPI_ERR_RMA_SYNC)".into(),
            },
            ErrorKind::AccumulateUnknown {
                what: "operator",
                value: -7,
            },
            ErrorKind::HintViolated {
                hint: "NO_PUT",
                detail: "is false: process 1's bsp_put at a.c:9 wrote".into(),
            },
            ErrorKind::AmArgument {
                code: "LAPI_ERR_UHDR_LEN",
                detail: "too long".into(),
            },
            ErrorKind::AmTarget {
                origin: 1,
                seq: 7,
                reason: "no such counter".into(),
            },
            ErrorKind::AmMismatch {
                detail: "some only".into(),
            },
            ErrorKind::CollectiveMismatch {
                detail: "another root".into(),
            },
            ErrorKind::SyncMismatch {
                syncs: Box::new([(0, "a.c:10".into()), (2, "a.c:12".into())]),
            },
            ErrorKind::OverlappingPuts {
                owner: 1,
                slot: 3,
                bytes: 8..16,
                puts: Box::new([
                    (0, "bsp_put at a.c:20".into()),
                    (2, "bsp_hpput at a.c:21".into()),
                ]),
            },
            ErrorKind::HpRegionChanged {
                call: "bsp_hpput",
                what: "source",
                len: 8,
                places: Box::new(["a.c:30".into(), "a.c:31".into()]),
            },
        ] {
            let e = Error::new(kind, "bsp_put", 3, 9, loc);
            assert_eq!(decode_error(&encode_error(&e)), Some(e));
        }
    }
}
