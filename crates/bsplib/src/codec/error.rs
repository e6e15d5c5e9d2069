//! The byte encoding of errors: the first error of a run travels from the
//! process that made it to the one that reports it.

use super::{read_location, write_location, Reader, Writer};
use crate::error::{Error, ErrorKind};

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
            elem,
        } => {
            w.u64(5);
            for v in [remote, offset, nbytes, extent, elem] {
                word(&mut w, *v);
            }
        }
        K::LocalBounds {
            what,
            needed,
            available,
            elem,
        } => {
            w.u64(6);
            w.str(what);
            word(&mut w, *needed);
            word(&mut w, *available);
            word(&mut w, *elem);
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
            elem: r.usize()?,
        },
        6 => K::LocalBounds {
            what: r.static_str()?,
            needed: r.usize()?,
            available: r.usize()?,
            elem: r.usize()?,
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
