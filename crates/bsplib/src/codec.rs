//! Values across address spaces: the byte encoding of errors (the first
//! error of a run travels from the process that made it to the one that
//! reports it) and of results ([`Portable`], what `run` returns from
//! processes that are not threads of the caller).

mod error;
mod portable;
#[cfg(test)]
mod tests;

pub(crate) use error::{decode_error, encode_error, encode_error_within};
pub use portable::Portable;

use std::sync::atomic::{AtomicPtr, Ordering};

use crate::error::SourceLocation;

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
