//! Helpers of the error-path tests (`errors.rs`, `errors_collective.rs`).
//!
//! A failing run keeps only its first error, so a check inside a process
//! that fails after it would be masked. Scenarios therefore note what their
//! processes saw in a [`Log`], and the checks run after the run.
#![allow(dead_code)]

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use bsplib::{Area, Bsp, Error, ErrorKind};

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

/// What the processes of one run saw, with their pids.
pub type Log = Arc<Mutex<Vec<(usize, Seen)>>>;

pub fn note(log: &Log, bsp: &Bsp, seen: Seen) {
    log.lock().unwrap().push((bsp.pid(), seen));
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
        let seen = std::mem::take(&mut *log.lock().unwrap());
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

pub fn out_of_bounds(remote: usize, offset: usize, nbytes: usize, extent: usize) -> ErrorKind {
    ErrorKind::OutOfBounds {
        remote,
        offset,
        nbytes,
        extent,
    }
}

pub fn local_bounds(what: &'static str, needed: usize, available: usize) -> ErrorKind {
    ErrorKind::LocalBounds {
        what,
        needed,
        available,
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
            Op::Put => bsp.put(pid, &local.as_slice(bsp)[..len], reg, offset),
            // SAFETY: see above.
            Op::HpPut => unsafe { bsp.hpput(pid, &local.as_slice(bsp)[..len], reg, offset) },
            Op::Get => bsp.get(pid, reg, offset, local, 0, len),
            // SAFETY: see above.
            Op::HpGet => unsafe { bsp.hpget(pid, reg, offset, local, 0, len) },
        }
    }
}
