//! Helpers of the error-path tests (`errors.rs`, `errors_collective.rs`).
//!
//! A failing run keeps only its first error, so a check inside a process
//! that fails after it would be masked. Scenarios therefore note what their
//! processes saw in a [`Log`], and the checks run after the run.
#![allow(dead_code)]

use std::mem::size_of;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bsplib::{Area, Bsp, Error, ErrorKind, Portable};

use crate::common::{configurations_with, run_expecting_error};

/// Length of the areas of the transfer scenarios.
pub const LEN: usize = 8;

/// The test files whose lines errors must name.
const FILES: [&str; 2] = ["errors.rs", "errors_collective.rs"];

/// What a process saw.
#[derive(Debug)]
pub enum Seen {
    /// What the SPMD function returned (noted by [`expect_failure`]).
    Returned(Result<(), Error>),
    /// The result of some call, noted by the scenario.
    Call(Result<(), Error>),
    /// A local address (of an `Area`).
    Addr(usize),
    /// The source line of an offending call.
    Line(u32),
    /// Memory contents.
    Values(Vec<u32>),
}

impl Portable for Seen {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Seen::Returned(r) => {
                out.push(0);
                r.encode(out);
            }
            Seen::Call(r) => {
                out.push(1);
                r.encode(out);
            }
            Seen::Addr(a) => {
                out.push(2);
                a.encode(out);
            }
            Seen::Line(l) => {
                out.push(3);
                l.encode(out);
            }
            Seen::Values(v) => {
                out.push(4);
                v.encode(out);
            }
        }
    }

    fn decode(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::decode(input)? {
            0 => Seen::Returned(Portable::decode(input)?),
            1 => Seen::Call(Portable::decode(input)?),
            2 => Seen::Addr(Portable::decode(input)?),
            3 => Seen::Line(Portable::decode(input)?),
            4 => Seen::Values(Portable::decode(input)?),
            _ => return None,
        })
    }
}

/// What the processes of one run saw, with their pids.
///
/// The processes of the `processes` engine are forked, each with its own
/// copy of the Rust heap, so the log lives in an anonymous shared mapping
/// made before the run: every forked process inherits it, and what one
/// appends every other (the test, in process 0) sees. Entries are encoded
/// `(pid, Seen)` pairs, each after its length (a `u64`), appended under a
/// spin lock in the mapping (a process-shared `Mutex` would need
/// `pthread_mutexattr_setpshared`; a spin lock is enough for the few short
/// appends of a test). Cheap to clone; the last clone of a process unmaps
/// it (in that process only).
#[derive(Clone, Default)]
pub struct Log(Arc<Shared>);

/// The header at the start of the mapping; the entries follow it.
#[repr(C)]
struct Header {
    /// 0: free; otherwise the OS pid of the holder.
    lock: AtomicU32,
    /// An append did not fit.
    overflowed: AtomicBool,
    /// Bytes of entries after the header (written under `lock`).
    len: AtomicUsize,
}

/// The shared mapping of a [`Log`].
struct Shared {
    base: NonNull<u8>,
}

// SAFETY: the mapping is shared memory that lives as long as `Shared`; its
// header is only accessed through atomics and its entries only under the
// header's lock, so it may be used from any thread.
unsafe impl Send for Shared {}
// SAFETY: as for `Send`.
unsafe impl Sync for Shared {}

impl Shared {
    /// Bytes of the mapping (header included).
    const BYTES: usize = 4 << 20;
    /// How long to wait for the lock before calling it a deadlock (a
    /// process killed while holding it).
    const PATIENCE: Duration = Duration::from_secs(30);

    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a `Header` (zeroed by mmap, which
        // is a valid, unlocked, empty header: atomics of zero), is
        // page-aligned, and lives as long as `self`.
        unsafe { self.base.cast::<Header>().as_ref() }
    }

    /// The entries' bytes: the mapping after the header.
    fn data(&self) -> *mut u8 {
        // SAFETY: the header lies within the mapping, which is bigger.
        unsafe { self.base.as_ptr().add(size_of::<Header>()) }
    }

    const CAPACITY: usize = Self::BYTES - size_of::<Header>();

    /// Runs `f` holding the lock, with the entries' bytes and their length.
    fn locked<R>(&self, f: impl FnOnce(*mut u8, &AtomicUsize) -> R) -> R {
        let header = self.header();
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() } as u32;
        let start = Instant::now();
        let mut spins = 0u32;
        while header
            .lock
            .compare_exchange_weak(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
                if start.elapsed() > Self::PATIENCE {
                    let holder = header.lock.load(Ordering::Relaxed);
                    panic!("the log's lock is held by OS process {holder}: a deadlock");
                }
            }
        }
        struct Unlock<'a>(&'a AtomicU32);
        impl Drop for Unlock<'_> {
            fn drop(&mut self) {
                self.0.store(0, Ordering::Release);
            }
        }
        let _unlock = Unlock(&header.lock);
        f(self.data(), &header.len)
    }
}

impl Default for Shared {
    fn default() -> Self {
        // SAFETY: an anonymous mapping at an address of the kernel's
        // choosing touches no existing memory.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                Self::BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert!(
            p != libc::MAP_FAILED,
            "mmap of the log: {}",
            std::io::Error::last_os_error()
        );
        let base = NonNull::new(p.cast::<u8>()).expect("mmap gave a null mapping");
        Shared { base }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `Shared::default` with this size,
        // and no reference into it outlives `self`.
        let r = unsafe { libc::munmap(self.base.as_ptr().cast(), Self::BYTES) };
        debug_assert_eq!(r, 0, "munmap of the log");
    }
}

impl Log {
    /// Appends `(pid, seen)`.
    pub fn push(&self, pid: usize, seen: &Seen) {
        let mut entry = Vec::new();
        0u64.encode(&mut entry); // room for the length
        pid.encode(&mut entry);
        seen.encode(&mut entry);
        let body = (entry.len() - size_of::<u64>()) as u64;
        entry[..size_of::<u64>()].copy_from_slice(&body.to_le_bytes());
        let fits = self.0.locked(|data, len| {
            let at = len.load(Ordering::Relaxed);
            if entry.len() > Shared::CAPACITY - at {
                return false;
            }
            // SAFETY: `at + entry.len()` is within the entries' bytes
            // (checked above), which no one else accesses while we hold
            // the lock; `entry` is a separate heap buffer.
            unsafe { std::ptr::copy_nonoverlapping(entry.as_ptr(), data.add(at), entry.len()) };
            len.store(at + entry.len(), Ordering::Relaxed);
            true
        });
        if !fits {
            // Panicking here would fail the process, not the test: the
            // test's `entries` reports it.
            self.0.header().overflowed.store(true, Ordering::Release);
        }
    }

    /// Every entry so far, in the order they were appended.
    pub fn entries(&self) -> Vec<(usize, Seen)> {
        assert!(
            !self.0.header().overflowed.load(Ordering::Acquire),
            "the log is full ({} bytes)",
            Shared::BYTES
        );
        let bytes = self.0.locked(|data, len| {
            let len = len.load(Ordering::Relaxed);
            // SAFETY: the first `len` bytes of the entries were written by
            // appends, and no one writes them while we hold the lock.
            unsafe { std::slice::from_raw_parts(data, len) }.to_vec()
        });
        let mut input = &bytes[..];
        let mut entries = Vec::new();
        while !input.is_empty() {
            let body = u64::decode(&mut input).expect("an entry's length") as usize;
            let (mut entry, rest) = input.split_at(body);
            let decoded = <(usize, Seen)>::decode(&mut entry).expect("an encoded entry");
            assert!(entry.is_empty(), "an entry's trailing bytes");
            entries.push(decoded);
            input = rest;
        }
        entries
    }

    /// Every entry so far, leaving the log empty.
    pub fn take(&self) -> Vec<(usize, Seen)> {
        let entries = self.entries();
        self.0.locked(|_, len| len.store(0, Ordering::Relaxed));
        entries
    }
}

pub fn note(log: &Log, bsp: &Bsp, seen: Seen) {
    log.push(bsp.pid(), &seen);
}

/// `noted!(log, bsp, call)`: makes `call`, noting its line, and gives its
/// result (for errors that a later sync attributes to the call).
#[allow(unused_macros)] // errors.rs has no use for it
macro_rules! noted {
    ($log:expr, $bsp:expr, $call:expr) => {{
        let (line, r) = (line!(), $call);
        $crate::errors_support::note($log, $bsp, $crate::errors_support::Seen::Line(line));
        r
    }};
}

pub fn is_last(bsp: &Bsp) -> bool {
    bsp.pid() == bsp.nprocs() - 1
}

/// The identity of an area for registration: the address of its first element.
pub fn addr<T: bytemuck::Pod>(bsp: &Bsp, a: &Area<T>) -> usize {
    a.as_slice(bsp).as_ptr() as usize
}

/// Like `common::expect_error`, with a fresh [`Log`] per run in which every
/// process's returned result is noted: runs `spmd` on every configuration
/// with at least `min_p` processes; each run must fail with an error that is
/// not `Stopped`, which `verify` checks together with the log.
pub fn expect_failure<F, V>(min_p: usize, spmd: F, verify: V)
where
    F: Fn(&mut Bsp, &Log) -> Result<(), Error> + Send + Sync + Clone + 'static,
    V: Fn(usize, &Error, &[(usize, Seen)]),
{
    for (engine, p, n) in configurations_with(min_p) {
        let (log, f) = (Log::default(), spmd.clone());
        let l = log.clone();
        let err = run_expecting_error(engine, p, move |bsp| {
            let r = f(bsp, &l);
            note(&l, bsp, Seen::Returned(r.clone()));
            r
        });
        let seen = log.take();
        let checked = catch_unwind(AssertUnwindSafe(|| verify(n, &err, &seen)));
        if let Err(panic) = checked {
            eprintln!(
                "failed on {} p={p}: error {err}; seen {seen:?}",
                engine.name()
            );
            resume_unwind(panic);
        }
    }
}

/// Asserts that `err` is `kind`, names `call`, process `pid` and
/// `superstep`, and the line of the test file the call was made from.
#[track_caller]
pub fn assert_error(err: &Error, kind: ErrorKind, call: &str, pid: usize, superstep: u64) {
    assert_eq!(err.kind(), &kind, "kind of: {err}");
    assert_located(err, call, pid, superstep);
}

/// [`assert_error`] for kinds with free-text details: returns the location.
#[track_caller]
pub fn assert_located(
    err: &Error,
    call: &str,
    pid: usize,
    superstep: u64,
) -> bsplib::SourceLocation {
    assert_names(err, call, pid, superstep);
    let loc = err
        .location()
        .unwrap_or_else(|| panic!("no location in: {err}"));
    let file = loc.file();
    assert!(
        FILES.iter().any(|f| file.ends_with(f)),
        "location {loc} of: {err}"
    );
    assert!(
        err.to_string().contains(&format!("{file}:{}", loc.line())),
        "{err}"
    );
    loc
}

/// Asserts the call, process and superstep of `err`, and its message.
#[track_caller]
pub fn assert_names(err: &Error, call: &str, pid: usize, superstep: u64) {
    assert_eq!(err.call(), call, "call of: {err}");
    assert_eq!(err.pid(), pid, "pid of: {err}");
    assert_eq!(err.superstep(), superstep, "superstep of: {err}");
    let msg = err.to_string();
    let parts = [
        call,
        &format!("process {pid}"),
        &format!("superstep {superstep}"),
    ];
    for part in parts {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }
    assert!(msg.contains(&err.kind().to_string()), "{msg}");
}

/// `elem`: the element size of a typed call (1 for the pointer API).
pub fn out_of_bounds(
    remote: usize,
    offset: usize,
    nbytes: usize,
    extent: usize,
    elem: usize,
) -> ErrorKind {
    ErrorKind::OutOfBounds {
        remote,
        offset,
        nbytes,
        extent,
        elem,
    }
}

pub fn local_bounds(what: &'static str, needed: usize, available: usize, elem: usize) -> ErrorKind {
    ErrorKind::LocalBounds {
        what,
        needed,
        available,
        elem,
    }
}

pub fn pid_out_of_range(pid: i64, nprocs: usize) -> ErrorKind {
    ErrorKind::PidOutOfRange { pid, nprocs }
}

/// The detail of a registration or tag-size mismatch.
#[track_caller]
pub fn mismatch_detail(err: &Error) -> &str {
    match err.kind() {
        ErrorKind::RegistrationMismatch { detail } | ErrorKind::TagSizeMismatch { detail } => {
            detail
        }
        _ => panic!("not a mismatch: {err}"),
    }
}

/// What process `pid` returned, if it returned.
pub fn returned(seen: &[(usize, Seen)], pid: usize) -> Option<&Result<(), Error>> {
    seen.iter().find_map(|(p, s)| match s {
        Seen::Returned(r) if *p == pid => Some(r),
        _ => None,
    })
}

/// The results of the calls process `pid` noted.
pub fn calls(seen: &[(usize, Seen)], pid: usize) -> Vec<&Result<(), Error>> {
    let noted = seen.iter().filter(|(p, _)| *p == pid);
    noted
        .filter_map(|(_, s)| match s {
            Seen::Call(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// Every process but those of `except` returned `Stopped` (the run was
/// stopped by an error elsewhere, and no process hangs).
#[track_caller]
pub fn assert_others_stopped(n: usize, except: &[usize], seen: &[(usize, Seen)]) {
    for pid in (0..n).filter(|p| !except.contains(p)) {
        let r = returned(seen, pid).unwrap_or_else(|| panic!("process {pid} did not return"));
        let e = r
            .as_ref()
            .expect_err("a process must fail after an error elsewhere");
        assert!(e.is_stopped() && e.pid() == pid, "process {pid}: {e}");
    }
}

/// Every process returned an error (the run's error or `Stopped`).
#[track_caller]
pub fn assert_all_failed(n: usize, seen: &[(usize, Seen)]) {
    for pid in 0..n {
        let r = returned(seen, pid).unwrap_or_else(|| panic!("process {pid} did not return"));
        assert!(r.is_err(), "process {pid} returned Ok");
    }
}

pub fn the_addr(seen: &[(usize, Seen)]) -> usize {
    let mut addrs = seen.iter().filter_map(|(_, s)| match s {
        Seen::Addr(a) => Some(*a),
        _ => None,
    });
    addrs.next().expect("an address was noted")
}

pub fn the_line(seen: &[(usize, Seen)]) -> u32 {
    let mut lines = seen.iter().filter_map(|(_, s)| match s {
        Seen::Line(l) => Some(*l),
        _ => None,
    });
    lines.next().expect("a line was noted")
}

/// The four DRMA transfers, to run each scenario with each.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Put,
    HpPut,
    Get,
    HpGet,
}

pub const OPS: [Op; 4] = [Op::Put, Op::HpPut, Op::Get, Op::HpGet];

impl Op {
    pub fn call(self) -> &'static str {
        match self {
            Op::Put => "bsp_put",
            Op::HpPut => "bsp_hpput",
            Op::Get => "bsp_get",
            Op::HpGet => "bsp_hpget",
        }
    }

    pub fn is_put(self) -> bool {
        matches!(self, Op::Put | Op::HpPut)
    }

    /// Transfers `len` elements between element `offset` of the area `pid`
    /// registered in the slot of `reg` and the front of `local` (the source
    /// of a put, the destination of a get). Errors name the caller's line.
    ///
    /// The hp variants are sound because every scenario keeps `local` alive
    /// and untouched until the next sync, and no process touches the remote
    /// range in that superstep.
    #[track_caller]
    pub fn issue(
        self,
        bsp: &Bsp,
        pid: usize,
        reg: &Area<u32>,
        offset: usize,
        local: &Area<u32>,
        len: usize,
    ) -> Result<(), Error> {
        match self {
            Op::Put => bsp.put(pid, reg, offset, &local.as_slice(bsp)[..len]),
            // SAFETY: see above.
            Op::HpPut => unsafe { bsp.hpput(pid, reg, offset, &local.as_slice(bsp)[..len]) },
            Op::Get => bsp.get(pid, reg, offset, local.range(..len)),
            // SAFETY: see above.
            Op::HpGet => unsafe { bsp.hpget(pid, reg, offset, local.range(..len)) },
        }
    }
}
