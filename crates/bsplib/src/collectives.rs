//! Collectives (the paper's Appendix A): broadcast, gather, scatter,
//! all-gather, all-to-all, reductions and scans, typed and safe, with no
//! user-visible registration. The design is in `COLLECTIVES.md` beside this
//! file.
//!
//! Each collective ends the superstep like [`Bsp::sync`] (the puts, gets
//! and sends issued before it are executed by it, and the message queue
//! afterwards holds the messages of the superstep it ended) and uses one
//! superstep. Its data travels as *collective records* in the message
//! section of the streams, read into a queue of the library's; each
//! process also sends its right neighbour a descriptor of its call
//! (collective, root, size, named operator, source location), so that a
//! collective called by some processes only, or with another root, size
//! or operator, fails the run naming both calls.
//!
//! Reductions and scans combine in pid order from the left, `x0 ⊕ x1 ⊕ …`,
//! element by element, on every process and engine: an associative
//! operator that does not commute gives a defined result, and
//! floating-point results are the same on every engine and run.

use bytemuck::Pod;

use crate::bsp::Bsp;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::process::{Loc, Process};
pub use crate::rma::Op;

pub mod level1;

/// The collectives, by the index their descriptors carry: the Rust
/// methods, then the C functions of `bsp_level1.h` ([`level1`]), so that
/// a mismatch names the call the program made.
pub(crate) const NAMES: [&str; 45] = [
    "broadcast",
    "gather",
    "scatter",
    "all_gather",
    "all_to_all",
    "reduce",
    "all_reduce",
    "scan",
    "exscan",
    "bsp_bcast",
    "bsp_gather",
    "bsp_scatter",
    "bsp_fold",
    "bsp_scan",
    "bsp_exchange",
    "bsp_all",
    "bsp_any",
    "bsp_sumI",
    "bsp_sumI_prefix",
    "bsp_sumR",
    "bsp_sumR_prefix",
    "bsp_sumD",
    "bsp_sumD_prefix",
    "bsp_productI",
    "bsp_productI_prefix",
    "bsp_productR",
    "bsp_productR_prefix",
    "bsp_productD",
    "bsp_productD_prefix",
    "bsp_minI",
    "bsp_minI_prefix",
    "bsp_minR",
    "bsp_minR_prefix",
    "bsp_minD",
    "bsp_minD_prefix",
    "bsp_maxI",
    "bsp_maxI_prefix",
    "bsp_maxR",
    "bsp_maxR_prefix",
    "bsp_maxD",
    "bsp_maxD_prefix",
    // `window/mod.rs`: KIND_NEW, KIND_FREE, KIND_NEW_C, KIND_FREE_C.
    "Window::new",
    "Window::free",
    "bsp_window_create",
    "bsp_window_free",
];

/// The first word of a collective record's payload.
const DESC: u64 = 0;
const DATA: u64 = 1;

/// The collective "index" of a plain sync in the checks of `mpi`.
const SYNC_KIND: u64 = u64::MAX;

/// How the collectives that have a choice (broadcast, reduce, all-reduce)
/// move their data: [`Bsp::set_collective_algorithm`]. The result is the
/// same whichever is used, bit for bit (reductions fold in pid order in
/// every one); only the time differs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Chosen per call by the BSP cost (the default): the one-phase form
    /// for small data; for large data the two-phase form where the
    /// machine's `g`, `l` and cores make it cheaper, and on the `mpi`
    /// engine MPI's own collectives (`MPI_Bcast`, `MPI_Alltoallv`,
    /// `MPI_Allgatherv`) after the superstep's sync.
    #[default]
    Auto,
    /// One superstep: the data goes straight to the processes that need
    /// it (`(p - 1)·n·g + l`).
    OnePhase,
    /// Two supersteps: a broadcast scatters the root's data then
    /// all-gathers it, a reduction reduce-scatters (block `j` folded by
    /// process `j`) then gathers or all-gathers (`≈ 2n·g + 2l`).
    TwoPhase,
}

/// The form a collective takes (in its descriptor's operator word, bits
/// 32 and up, so processes that chose differently are caught).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    One = 1,
    Two = 2,
    Native = 3,
}

/// On `mpi`, reductions of up to this many bytes in all (`p · n`) gather
/// every contribution with one MPI call and fold locally; larger ones
/// reduce-scatter then all-gather (two calls, `≈ 2n` bytes per process).
const GATHER_MAX: usize = 32 << 10;

// The shared-memory engines' `g` (seconds per byte a process copies) and
// `l` (seconds per sync with data) are the machine's (`Bsp::machine`,
// `probe.rs`): those `bspprobe` stored for this engine and p, else the
// defaults, 0.15 ns and 2 µs, which `examples/bench.rs` measured on a
// two-core machine.

impl Process {
    /// The form of a collective moving `n` bytes per process: a broadcast
    /// or a reduction to one root (`everyone` false), or an all-reduce
    /// (`everyone` true).
    fn path(&self, n: usize, everyone: bool) -> Path {
        let p = self.nprocs;
        match self.coll_algo {
            _ if p == 1 => Path::One,
            Algorithm::OnePhase => Path::One,
            Algorithm::TwoPhase => Path::Two,
            Algorithm::Auto if self.world.rendezvous().is_some() => {
                if crate::engine::coll_fits(n.saturating_mul(p)) {
                    Path::Native
                } else {
                    Path::One
                }
            }
            Algorithm::Auto => {
                // Bytes each form makes the busiest process copy (`h`:
                // into the streams, out of them, through the fold) and
                // makes all processes copy (`v`); the time is the larger
                // of `h` and `v` shared among the cores (processes
                // beyond the cores take turns), times `g`, plus `l` per
                // superstep. An all-reduce in one phase folds everything
                // on every process; in two, each process folds `1/p`.
                let (pf, n) = (p as f64, n as f64);
                let m = (pf - 1.0) * n;
                let ((h1, v1), (h2, v2)) = if everyone {
                    ((2.0 * m, 2.0 * pf * m), (4.0 * m / pf, 4.0 * m))
                } else {
                    (
                        (m, 2.0 * m),
                        (2.0 * m / pf + n / pf, 2.0 * m * (1.0 + 1.0 / pf)),
                    )
                };
                let c = crate::engine::cores().min(p) as f64;
                let m = self.machine();
                let one = h1.max(v1 / c) * m.g + m.l;
                let two = h2.max(v2 / c) * m.g + 2.0 * m.l;
                if two < one {
                    Path::Two
                } else {
                    Path::One
                }
            }
        }
    }
}

/// Element types the named operators ([`Op`], the one operator type of
/// reductions and accumulate) apply to: the primitive numbers. Sealed.
pub trait Reducible: Pod + sealed::Sealed {
    /// `op(a, b)`, or `None` if the operator does not apply to the type
    /// (a bitwise or logical operator on floats; a min or max with
    /// location on anything but a value–index pair).
    fn apply(op: Op, a: Self, b: Self) -> Option<Self>;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! int_reducible {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Reducible for $t {
            fn apply(op: Op, a: Self, b: Self) -> Option<Self> {
                Some(match op {
                    Op::Sum => a.wrapping_add(b),
                    Op::Product => a.wrapping_mul(b),
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                    Op::BitAnd => a & b,
                    Op::BitOr => a | b,
                    Op::BitXor => a ^ b,
                    Op::LogicalAnd => Self::from(a != 0 && b != 0),
                    Op::LogicalOr => Self::from(a != 0 || b != 0),
                    Op::LogicalXor => Self::from((a != 0) != (b != 0)),
                    Op::Replace => b,
                    Op::MinLoc | Op::MaxLoc => return None,
                })
            }
        }
    )*};
}
int_reducible!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

macro_rules! float_reducible {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Reducible for $t {
            fn apply(op: Op, a: Self, b: Self) -> Option<Self> {
                match op {
                    Op::Sum => Some(a + b),
                    Op::Product => Some(a * b),
                    Op::Min => Some(a.min(b)),
                    Op::Max => Some(a.max(b)),
                    Op::Replace => Some(b),
                    _ => None,
                }
            }
        }
    )*};
}
float_reducible!(f32, f64);

/// A descriptor as received: the fields and where the call was made.
struct Desc {
    fields: [u64; 4],
    line: u64,
    file: String,
}

impl Desc {
    fn name(&self) -> &'static str {
        if self.fields[0] == SYNC_KIND {
            return "bsp_sync";
        }
        NAMES
            .get(self.fields[0] as usize)
            .copied()
            .unwrap_or("a collective")
    }
}

impl Process {
    /// After a sync: the checks of collective calls. A collective's sync
    /// compares its descriptor with its left neighbour's; a plain sync
    /// fails if others ended the superstep with a collective.
    pub(crate) fn check_collective(&mut self, loc: Loc) -> Result<(), Error> {
        if self.world.rendezvous().is_some() {
            // Checked in barrier A (`coll_check_hash`).
            self.coll = None;
            return Ok(());
        }
        let left = (self.pid + self.nprocs - 1) % self.nprocs;
        let Some((name, mine)) = self.coll.take() else {
            if self.last_flags & crate::mailbox::COLL == 0 {
                return Ok(());
            }
            let detail = match self.descriptors().into_iter().next() {
                Some((q, d)) => format!(
                    "process {q} called {} ({}:{}) where this process called bsp_sync",
                    d.name(),
                    d.file,
                    d.line
                ),
                None => {
                    "other processes called a collective where this process called bsp_sync".into()
                }
            };
            return Err(self.fail_in_call(
                ErrorKind::CollectiveMismatch { detail },
                "bsp_sync",
                loc,
            ));
        };
        if self.left_fields(left) == Some(mine) {
            return Ok(());
        }
        let theirs = self.descriptors().into_iter().find(|(q, _)| *q == left);
        let detail = match theirs {
            Some((_, d)) if d.fields == mine => return Ok(()),
            Some((_, d)) => {
                let what = if d.fields[0] != mine[0] {
                    format!("it called {}", d.name())
                } else if d.fields[1] != mine[1] {
                    format!("its root is {}, ours {}", d.fields[1], mine[1])
                } else if d.fields[2] != mine[2] {
                    format!("it gave {} bytes, we {}", d.fields[2], mine[2])
                } else if d.fields[3] >> 32 != mine[3] >> 32 {
                    "it uses another algorithm (Bsp::set_collective_algorithm)".into()
                } else if elem_of(d.fields[3]) != elem_of(mine[3]) {
                    format!(
                        "its elements have {} bytes, ours {}",
                        elem_of(d.fields[3]),
                        elem_of(mine[3])
                    )
                } else {
                    "its operator differs".into()
                };
                format!(
                    "{name} here and on process {left} ({}:{}) do not match: {what}",
                    d.file, d.line
                )
            }
            None => format!("process {left} did not call {name}: it called bsp_sync"),
        };
        Err(self.fail_in_call(ErrorKind::CollectiveMismatch { detail }, name, loc))
    }

    /// [`fail`](Process::fail) naming the superstep of the call (the sync
    /// that found the error has already begun the next one).
    fn fail_in_call(&self, kind: ErrorKind, call: &'static str, loc: Loc) -> Error {
        let superstep = self.superstep.saturating_sub(1);
        let err = Error::new(kind, self.call_name(call), self.pid, superstep, loc);
        self.world.fail(err.clone());
        err
    }

    /// On `mpi`: the hash barrier A compares (this process's collective's
    /// descriptor, or a plain sync's).
    pub(crate) fn coll_check_hash(&self) -> u64 {
        let fields = self
            .coll
            .map_or([SYNC_KIND, self.check_sync_hash(), 0, 0], |(_, f)| f);
        fields.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &w| {
            (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
        })
    }

    /// On `mpi`, when barrier A found processes whose checks differ (every
    /// process learns it in the same barrier): every process sends every
    /// other its descriptor and the place of its call (`MPI_Allgather` of
    /// fixed-size slots; nothing else happens between the barrier and it,
    /// so every process takes part), and the error names the first two
    /// neighbours, in pid order, that disagree.
    pub(crate) fn coll_check_error(&mut self, loc: Loc) -> Error {
        const SLOT: usize = 512;
        let (mine_name, fields) = self
            .coll
            .take()
            .unwrap_or(("bsp_sync", [SYNC_KIND, self.check_sync_hash(), 0, 0]));
        let (file, line) = loc.map_or(("", 0), |l| (l.file(), l.line()));
        let file = &file.as_bytes()[..file.len().min(SLOT - 48)];
        let mut slot = [0u8; SLOT];
        for (i, w) in [
            fields[0],
            fields[1],
            fields[2],
            fields[3],
            u64::from(line),
            file.len() as u64,
        ]
        .iter()
        .enumerate()
        {
            slot[8 * i..8 * i + 8].copy_from_slice(&w.to_ne_bytes());
        }
        slot[48..48 + file.len()].copy_from_slice(file);
        let mut all = vec![0u8; SLOT * self.nprocs];
        if let Some(m) = self.world.rendezvous() {
            m.coll_gather(None, &slot, &mut all);
        }
        let desc = |q: usize| {
            let b = &all[q * SLOT..(q + 1) * SLOT];
            let w =
                |i: usize| u64::from_ne_bytes(b[8 * i..8 * i + 8].try_into().unwrap_or_default());
            let flen = (w(5) as usize).min(SLOT - 48);
            Desc {
                fields: [w(0), w(1), w(2), w(3)],
                line: w(4),
                file: String::from_utf8_lossy(&b[48..48 + flen]).into_owned(),
            }
        };
        let n = self.nprocs;
        // Checking mode: two plain syncs at different lines (`check.rs`).
        let first = (1..n)
            .map(|q| (q - 1, q))
            .chain(std::iter::once((n - 1, 0)))
            .map(|(a, b)| (a, b, desc(a), desc(b)))
            .find(|(_, _, da, db)| da.fields != db.fields);
        if let Some((a, b, da, db)) =
            first.filter(|(_, _, da, db)| da.fields[0] == SYNC_KIND && db.fields[0] == SYNC_KIND)
        {
            let kind = ErrorKind::SyncMismatch {
                syncs: Box::new([
                    (a, format!("{}:{}", da.file, da.line)),
                    (b, format!("{}:{}", db.file, db.line)),
                ]),
            };
            let call = self.call_name(mine_name);
            let err = Error::new(kind, call, self.pid, self.superstep, loc);
            self.world.fail_collective(err.clone(), self.pid);
            return err;
        }
        let detail = (1..n)
            .map(|q| (q - 1, q))
            .chain(std::iter::once((n - 1, 0)))
            .map(|(a, b)| (a, b, desc(a), desc(b)))
            .find(|(_, _, da, db)| da.fields != db.fields)
            .map_or_else(
                || "the processes ended the superstep with different collectives".into(),
                |(a, b, da, db)| {
                    let at = |d: &Desc| format!("{}:{}", d.file, d.line);
                    let what = if da.fields[0] != db.fields[0] {
                        return format!(
                            "process {a} called {} ({}) where process {b} called {} ({})",
                            da.name(),
                            at(&da),
                            db.name(),
                            at(&db)
                        );
                    } else if da.fields[1] != db.fields[1] {
                        format!(
                            "the root is {} on process {a}, {} on process {b}",
                            da.fields[1], db.fields[1]
                        )
                    } else if da.fields[2] != db.fields[2] {
                        format!(
                            "process {a} gave {} bytes, process {b} {}",
                            da.fields[2], db.fields[2]
                        )
                    } else if da.fields[3] >> 32 != db.fields[3] >> 32 {
                        "they use different algorithms (Bsp::set_collective_algorithm)".into()
                    } else if elem_of(da.fields[3]) != elem_of(db.fields[3]) {
                        format!(
                            "process {a}'s elements have {} bytes, process {b}'s {}",
                            elem_of(da.fields[3]),
                            elem_of(db.fields[3])
                        )
                    } else {
                        "their operators differ".into()
                    };
                    format!(
                        "{} on process {a} ({}) and on process {b} ({}) do not match: {what}",
                        da.name(),
                        at(&da),
                        at(&db)
                    )
                },
            );
        let err = Error::new(
            ErrorKind::CollectiveMismatch { detail },
            self.call_name(mine_name),
            self.pid,
            self.superstep,
            loc,
        );
        self.world.fail_collective(err.clone(), self.pid);
        err
    }

    /// The fields of the descriptor process `left` sent in the last sync,
    /// if it sent one (read in place: the check of every collective).
    fn left_fields(&self, left: usize) -> Option<[u64; 4]> {
        self.inbox.coll.iter().find_map(|&(src, m)| {
            // SAFETY: as in `descriptors`.
            let bytes = unsafe { std::slice::from_raw_parts(m.payload, m.len) };
            let w = |i: usize| {
                bytes
                    .get(8 * i..8 * i + 8)
                    .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
            };
            if src != left || w(0) != Some(DESC) {
                return None;
            }
            Some([w(1)?, w(2)?, w(3)?, w(4)?])
        })
    }

    /// The descriptors received in the last sync, with their senders.
    fn descriptors(&self) -> Vec<(usize, Desc)> {
        let mut out = Vec::new();
        for &(src, m) in &self.inbox.coll {
            // SAFETY: the record's bytes stay readable until the inbox is
            // cleared (barrier A of the next sync).
            let bytes = unsafe { std::slice::from_raw_parts(m.payload, m.len) };
            let w = |i: usize| {
                bytes
                    .get(8 * i..8 * i + 8)
                    .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
            };
            if w(0) != Some(DESC) {
                continue;
            }
            let (Some(f0), Some(f1), Some(f2), Some(f3), Some(line), Some(flen)) =
                (w(1), w(2), w(3), w(4), w(5), w(6))
            else {
                continue;
            };
            let file = bytes
                .get(56..56 + (flen as usize).min(bytes.len().saturating_sub(56)))
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            out.push((
                src,
                Desc {
                    fields: [f0, f1, f2, f3],
                    line,
                    file,
                },
            ));
        }
        out
    }

    /// The data record of `len` bytes process `from` sent us in the last
    /// sync, if any (one of another length, which only a corrupted stream
    /// holds once the descriptors matched, counts as none).
    fn coll_data(&self, from: usize, len: usize) -> Option<&[u8]> {
        self.inbox.coll.iter().find_map(|&(src, m)| {
            // SAFETY: as in `descriptors`.
            let bytes = unsafe { std::slice::from_raw_parts(m.payload, m.len) };
            (src == from && bytes.get(..8) == Some(&DATA.to_ne_bytes()[..]) && m.len == 8 + len)
                .then(|| &bytes[8..])
        })
    }

    /// The data records of `len` bytes every other process sent us in the
    /// last sync, in pid order, `None` in this process's place (what
    /// [`fold_parts`] takes).
    fn coll_parts(
        &self,
        len: usize,
        name: &'static str,
        loc: Loc,
    ) -> Result<Vec<Option<&[u8]>>, Error> {
        (0..self.nprocs)
            .map(|q| {
                if q == self.pid {
                    Ok(None)
                } else {
                    self.coll_data(q, len)
                        .map(Some)
                        .ok_or_else(|| lost_p(self, name, q, loc))
                }
            })
            .collect()
    }

    /// Sends `data` to `to` as this collective's data record.
    fn coll_put(
        &mut self,
        to: usize,
        data: &[u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.coll_send(to, DATA, data, call, loc)
    }
}

/// The element size of a collective that splits its data into blocks of
/// whole elements (broadcasts, reductions), in bits 16..32 of the
/// descriptor's operator word: the same bytes in elements of another size
/// would make other blocks (and on `mpi` MPI calls whose sizes differ).
fn elem_size<T>() -> u64 {
    (std::mem::size_of::<T>() as u64 & 0xffff) << 16
}

/// Bits 16..32 of a descriptor's operator word ([`elem_size`]).
fn elem_of(word: u64) -> u64 {
    word >> 16 & 0xffff
}

/// What a collective checks and sends before its sync.
struct Call {
    kind: usize,
    root: usize,
    nbytes: usize,
    op: u64,
    path: Path,
}

impl Bsp {
    /// The frame of every collective: checks, `send` (the data records),
    /// the descriptor to the right neighbour, the sync and its checks;
    /// then `read` gets the process to read what arrived.
    fn collective<R>(
        &mut self,
        call: Call,
        loc: Loc,
        send: impl FnOnce(&mut Process) -> Result<(), Error>,
        read: impl FnOnce(&Process) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let name = NAMES[call.kind];
        {
            let p = &mut *self.process();
            p.check_running(name, loc)?;
            if call.root >= p.nprocs {
                return Err(p.fail(
                    ErrorKind::PidOutOfRange {
                        pid: i64::try_from(call.root).unwrap_or(i64::MAX),
                        nprocs: p.nprocs,
                    },
                    name,
                    loc,
                ));
            }
            send(p)?;
            let fields = [
                call.kind as u64,
                call.root as u64,
                call.nbytes as u64,
                call.op | (call.path as u64) << 32,
            ];
            // On `mpi` barrier A checks the calls (`coll_check_hash`);
            // elsewhere the right neighbour compares this descriptor, sent
            // from a buffer kept for it (no allocation per call).
            if p.world.rendezvous().is_none() {
                let (file, line) = loc.map_or(("", 0), |l| (l.file(), l.line()));
                let mut desc = std::mem::take(&mut p.coll_desc);
                desc.clear();
                for w in [fields[0], fields[1], fields[2], fields[3], u64::from(line)] {
                    desc.extend_from_slice(&w.to_ne_bytes());
                }
                desc.extend_from_slice(&(file.len() as u64).to_ne_bytes());
                desc.extend_from_slice(file.as_bytes());
                let right = (p.pid + 1) % p.nprocs;
                let sent = p.coll_send(right, DESC, &desc, name, loc);
                p.coll_desc = desc;
                sent?;
            }
            p.coll = Some((name, fields));
        }
        self.sync_at(loc)?;
        let p = &mut *self.process();
        p.check_library_wrote();
        read(p)
    }

    /// Chooses how this process's broadcasts and reductions move their
    /// data from now on ([`Algorithm`]; [`Algorithm::Auto`] at the start).
    /// Every process must make the same choice: the collectives' checks
    /// compare the form each process used.
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{Algorithm, Op};
    /// let r = bsplib::run(3, |bsp| {
    ///     bsp.set_collective_algorithm(Algorithm::TwoPhase);
    ///     let mut x = [bsp.pid() as u64; 5];
    ///     bsp.all_reduce(&mut x, Op::Sum)?;
    ///     Ok(x)
    /// })?;
    /// assert_eq!(r, [[3; 5]; 3]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    pub fn set_collective_algorithm(&mut self, algorithm: Algorithm) {
        self.process().coll_algo = algorithm;
    }

    /// Broadcast: copies `data` of process `root` into `data` of every
    /// process. Collective: every process calls it in the same superstep
    /// with the same `root` and length.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::PidOutOfRange`] for a root out of range;
    /// [`ErrorKind::CollectiveMismatch`] when processes disagree (another
    /// collective, root or length, or a plain sync); as for
    /// [`sync`](Bsp::sync).
    ///
    /// # BSP cost
    ///
    /// For `n` bytes, by the form [`Algorithm`] chooses: one superstep,
    /// `(p - 1)·n·g + l` (the root sends `n` to each other process); or
    /// two, `≈ 2·(p - 1)/p·n·g + 2l` (the root scatters `n/p` to each,
    /// then everyone sends its block to everyone); on `mpi`, from 32 KiB,
    /// a sync then `MPI_Bcast`.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| {
    ///     let mut x = [bsp.pid() as u32; 2];
    ///     bsp.broadcast(1, &mut x)?;
    ///     Ok(x)
    /// })?;
    /// assert_eq!(r, [[1, 1]; 3]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn broadcast<T: Pod>(&mut self, root: usize, data: &mut [T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.broadcast_as(0, root, data, loc)
    }

    /// [`broadcast`](Bsp::broadcast) as collective `kind` of [`NAMES`].
    fn broadcast_as<T: Pod>(
        &mut self,
        kind: usize,
        root: usize,
        data: &mut [T],
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[kind];
        let nbytes = std::mem::size_of_val(data);
        let (path, nprocs) = {
            let p = self.process();
            (p.path(nbytes, false), p.nprocs)
        };
        let call = Call {
            kind,
            root,
            nbytes,
            op: elem_size::<T>(),
            path,
        };
        let bounds = block_bounds::<T>(data.len(), nprocs);
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(data);
        match path {
            Path::One => {
                // The root's data is copied straight into its records, and
                // the records straight into the others' `data`.
                let src: &[u8] = bytes;
                self.collective(
                    call,
                    loc,
                    |p| {
                        if p.pid == root {
                            for q in (0..p.nprocs).filter(|&q| q != root) {
                                p.coll_put(q, src, name, loc)?;
                            }
                        }
                        Ok(())
                    },
                    |_| Ok(()),
                )?;
                let p = self.process();
                if p.pid != root {
                    let got = p
                        .coll_data(root, nbytes)
                        .ok_or_else(|| lost_p(&p, name, root, loc))?;
                    bytes.copy_from_slice(got);
                }
            }
            Path::Two => {
                // Block `q` of the root's data to process `q`, then every
                // block to everyone.
                self.scatter_blocks(call, Some(root), bytes, &bounds, loc)?;
                {
                    let p = self.process();
                    let me = p.pid;
                    if me != root {
                        let (a, b) = (bounds(me), bounds(me + 1));
                        let got = p
                            .coll_data(root, b - a)
                            .ok_or_else(|| lost_p(&p, name, root, loc))?;
                        bytes[a..b].copy_from_slice(got);
                    }
                }
                self.gather_blocks(name, None, &bounds, bytes, loc)?;
            }
            Path::Native => {
                self.collective(call, loc, |_| Ok(()), |_| Ok(()))?;
                let p = self.native_ready(name, loc)?;
                // (Nothing to move: no MPI call, which some MPIs refuse
                // with the dangling address of an empty slice.)
                if let (Some(mpi), false) = (p.world.rendezvous(), bytes.is_empty()) {
                    mpi.coll_bcast(root, bytes);
                }
            }
        }
        Ok(())
    }

    /// After a collective's sync on `mpi`, before MPI's own collective:
    /// every process must enter the MPI call, or none. Barrier A found
    /// them all in this collective with the same arguments; if the sync
    /// then had nothing else to do (no puts, gets, messages or
    /// registrations anywhere, no active messages), nothing could fail
    /// since, and the call is made at once. Otherwise one more barrier: a
    /// process that failed in the sync takes part in it with its end, and
    /// it fails everywhere.
    fn native_ready(
        &mut self,
        name: &'static str,
        loc: Loc,
    ) -> Result<std::cell::RefMut<'_, Process>, Error> {
        use crate::mailbox::{DATA, GET, HPPUT, LARGE, REG};
        let mut p = self.process();
        if p.last_flags & (REG | GET | DATA | HPPUT | LARGE) == 0 && p.am.is_none() {
            return Ok(p);
        }
        let mut episode = p.episode;
        let r = p.world.barrier(&mut episode, 0);
        p.episode = episode;
        match r {
            Ok(_) => Ok(p),
            Err(why) => Err(p.interrupted(why, name, loc)),
        }
    }

    /// The first phase of a two-phase collective, ending its superstep:
    /// block `q` of `src` (`bounds`) goes to process `q` from `root`, or
    /// (`None`) from every process.
    fn scatter_blocks(
        &mut self,
        call: Call,
        root: Option<usize>,
        src: &[u8],
        bounds: &dyn Fn(usize) -> usize,
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[call.kind];
        self.collective(
            call,
            loc,
            |p| {
                let me = p.pid;
                if root.is_none_or(|r| r == me) {
                    for q in (0..p.nprocs).filter(|&q| q != me) {
                        p.coll_put(q, &src[bounds(q)..bounds(q + 1)], name, loc)?;
                    }
                }
                Ok(())
            },
            |_| Ok(()),
        )
    }

    /// The second phase of a two-phase collective: every process sends
    /// its block `all[bounds(me)..bounds(me + 1)]` to every other (`root`
    /// `None`) or to `root`, and after one more sync each receiver has
    /// every block in `all`. The message queue (the messages sent in the
    /// superstep the collective ended) is set aside across that sync.
    fn gather_blocks(
        &mut self,
        name: &'static str,
        root: Option<usize>,
        bounds: &dyn Fn(usize) -> usize,
        all: &mut [u8],
        loc: Loc,
    ) -> Result<(), Error> {
        let aside = {
            let p = &mut *self.process();
            let me = p.pid;
            let mine = &all[bounds(me)..bounds(me + 1)];
            for q in (0..p.nprocs).filter(|&q| q != me && root.is_none_or(|r| r == q)) {
                p.coll_put(q, mine, name, loc)?;
            }
            if let Some(c) = &mut p.check {
                c.internal = true; // checking mode: the library's own sync
            }
            p.inbox.set_aside()
        };
        self.sync_at(loc)?;
        let p = &mut *self.process();
        p.check_library_wrote();
        if root.is_none_or(|r| r == p.pid) {
            for q in (0..p.nprocs).filter(|&q| q != p.pid) {
                let (a, b) = (bounds(q), bounds(q + 1));
                let got = p
                    .coll_data(q, b - a)
                    .ok_or_else(|| lost_p(p, name, q, loc))?;
                all[a..b].copy_from_slice(got);
            }
        }
        if let Some(aside) = aside {
            p.inbox.restore(aside);
        }
        Ok(())
    }

    /// Gather: process `root` gets every process's `data`, concatenated in
    /// pid order (`Some` on the root, `None` elsewhere). Every process
    /// gives as many elements.
    ///
    /// # Errors
    ///
    /// As for [`broadcast`](Bsp::broadcast).
    ///
    /// # BSP cost
    ///
    /// One superstep: `(p - 1)·n·g + l` (the root receives `n` bytes from
    /// each other process).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| bsp.gather(0, &[bsp.pid() as u8 * 10]))?;
    /// assert_eq!(r, [Some(vec![0, 10, 20]), None, None]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn gather<T: Pod>(&mut self, root: usize, data: &[T]) -> Result<Option<Vec<T>>, Error> {
        let loc = Some(SourceLocation::caller());
        let all = self.gather_to_as(Some(root), data, 1, 0, loc)?;
        Ok(all)
    }

    /// All-gather: every process gets every process's `data`, concatenated
    /// in pid order. Every process gives as many elements.
    ///
    /// # Errors
    ///
    /// As for [`broadcast`](Bsp::broadcast).
    ///
    /// # BSP cost
    ///
    /// One superstep: `(p - 1)·n·g + l`.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| bsp.all_gather(&[bsp.pid() as i16; 2]))?;
    /// assert_eq!(r, [[0, 0, 1, 1], [0, 0, 1, 1]]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn all_gather<T: Pod>(&mut self, data: &[T]) -> Result<Vec<T>, Error> {
        let loc = Some(SourceLocation::caller());
        let all = self.gather_to_as(None, data, 3, 0, loc)?;
        Ok(all.unwrap_or_default())
    }

    /// Scatter: process `root` gives `src` (`p · dst.len()` elements; the
    /// others give `None`), and every process `i` gets elements `i ·
    /// dst.len() ..` of it in `dst`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LocalBounds`] if the root's `src` does not hold `p ·
    /// dst.len()` elements (or is `None`); as for
    /// [`broadcast`](Bsp::broadcast).
    ///
    /// # BSP cost
    ///
    /// One superstep: `(p - 1)·n·g + l` for `n` bytes per process.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| {
    ///     let all: Vec<u32> = (0..6).collect();
    ///     let src = (bsp.pid() == 2).then_some(&all[..]);
    ///     let mut mine = [0u32; 2];
    ///     bsp.scatter(2, src, &mut mine)?;
    ///     Ok(mine)
    /// })?;
    /// assert_eq!(r, [[0, 1], [2, 3], [4, 5]]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn scatter<T: Pod>(
        &mut self,
        root: usize,
        src: Option<&[T]>,
        dst: &mut [T],
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.scatter_as(2, root, src, dst, loc)
    }

    /// [`scatter`](Bsp::scatter) as collective `kind` of [`NAMES`].
    fn scatter_as<T: Pod>(
        &mut self,
        kind: usize,
        root: usize,
        src: Option<&[T]>,
        dst: &mut [T],
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[kind];
        let size = std::mem::size_of::<T>();
        let k = dst.len();
        {
            let p = &mut *self.process();
            let needed = k.saturating_mul(p.nprocs);
            if p.pid == root && src.is_none_or(|s| s.len() != needed) {
                return Err(p.fail(
                    ErrorKind::LocalBounds {
                        what: "scatter source",
                        needed: needed.saturating_mul(size),
                        available: src.map_or(0, std::mem::size_of_val),
                    },
                    name,
                    loc,
                ));
            }
        }
        let call = Call {
            kind,
            root,
            nbytes: std::mem::size_of_val(dst),
            op: 0,
            path: Path::One,
        };
        let got = self.collective(
            call,
            loc,
            |p| {
                if p.pid == root {
                    let s: &[u8] = bytemuck::cast_slice(src.unwrap_or_default());
                    for q in (0..p.nprocs).filter(|&q| q != root) {
                        p.coll_put(q, &s[q * k * size..(q + 1) * k * size], name, loc)?;
                    }
                }
                Ok(())
            },
            |p| {
                let len = std::mem::size_of_val(dst);
                Ok((p.pid != root).then(|| p.coll_data(root, len).map(<[u8]>::to_vec)))
            },
        )?;
        match got {
            Some(got) => {
                let got = got.ok_or_else(|| lost(self, name, root, loc))?;
                bytemuck::cast_slice_mut::<T, u8>(dst).copy_from_slice(&got);
            }
            None => {
                let me = self.pid();
                dst.copy_from_slice(&src.unwrap_or_default()[me * k..(me + 1) * k]);
            }
        }
        Ok(())
    }

    /// All-to-all (the paper's total exchange): `src` and `dst` hold `p ·
    /// k` elements; block `j` of `src` on process `i` becomes block `i` of
    /// `dst` on process `j`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LocalBounds`] if `src` and `dst` differ in length or
    /// their length is not a multiple of `p`; as for
    /// [`broadcast`](Bsp::broadcast).
    ///
    /// # BSP cost
    ///
    /// One superstep: `(p - 1)·k·g + l` for blocks of `k` bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| {
    ///     let me = bsp.pid() as u8;
    ///     let mut dst = [0u8; 2];
    ///     bsp.all_to_all(&[10 * me, 10 * me + 1], &mut dst)?;
    ///     Ok(dst)
    /// })?;
    /// assert_eq!(r, [[0, 10], [1, 11]]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn all_to_all<T: Pod>(&mut self, src: &[T], dst: &mut [T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.all_to_all_as(4, src, dst, loc)
    }

    /// [`all_to_all`](Bsp::all_to_all) as collective `kind` of [`NAMES`].
    fn all_to_all_as<T: Pod>(
        &mut self,
        kind: usize,
        src: &[T],
        dst: &mut [T],
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[kind];
        let size = std::mem::size_of::<T>();
        let n = self.nprocs();
        if src.len() != dst.len() || src.len() % n != 0 {
            let p = &mut *self.process();
            return Err(p.fail(
                ErrorKind::LocalBounds {
                    what: "all_to_all destination (as long as the source, a multiple of p)",
                    needed: src.len().next_multiple_of(n) * size,
                    available: std::mem::size_of_val(dst),
                },
                name,
                loc,
            ));
        }
        let k = src.len() / n;
        let s: &[u8] = bytemuck::cast_slice(src);
        let call = Call {
            kind,
            root: 0,
            nbytes: s.len(),
            op: 0,
            path: Path::One,
        };
        let got = self.collective(
            call,
            loc,
            |p| {
                let me = p.pid;
                for q in (0..p.nprocs).filter(|&q| q != me) {
                    p.coll_put(q, &s[q * k * size..(q + 1) * k * size], name, loc)?;
                }
                Ok(())
            },
            |p| {
                (0..p.nprocs)
                    .map(|q| {
                        if q == p.pid {
                            Ok(s[q * k * size..(q + 1) * k * size].to_vec())
                        } else {
                            p.coll_data(q, k * size)
                                .map(<[u8]>::to_vec)
                                .ok_or_else(|| lost_p(p, name, q, loc))
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()
            },
        )?;
        let d: &mut [u8] = bytemuck::cast_slice_mut(dst);
        for (q, block) in got.iter().enumerate() {
            d[q * k * size..(q + 1) * k * size].copy_from_slice(block);
        }
        Ok(())
    }

    /// Reduction to `root` with a closure: `root` gets `x0 ⊕ x1 ⊕ … ⊕
    /// x(p-1)` element by element, combined in pid order from the left
    /// (`Some` on the root, `None` elsewhere). Every process gives as many
    /// elements.
    ///
    /// # Errors
    ///
    /// As for [`broadcast`](Bsp::broadcast) (closures are not compared
    /// across processes).
    ///
    /// # BSP cost
    ///
    /// For `n` bytes per process, by the form [`Algorithm`] chooses: one
    /// superstep, `(p - 1)·n·g + l` and `(p - 1)·len` applications of `f`
    /// on the root; or two (reduce-scatter, then gather),
    /// `≈ 2·(p - 1)/p·n·g + 2l` and `(p - 1)·len/p` applications on every
    /// process; on `mpi`, from 32 KiB, a sync then `MPI_Alltoallv` and
    /// `MPI_Gatherv` (the same counts).
    ///
    /// # Examples
    ///
    /// "Keep the left one" is associative but not commutative: the result
    /// is process 0's value, because contributions combine in pid order.
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| {
    ///     let mine = [b'a' + bsp.pid() as u8];
    ///     bsp.reduce_with(2, &mine, |l: &u8, _r: &u8| *l)
    /// })?;
    /// assert_eq!(r[2], Some(vec![b'a']));
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn reduce_with<T: Pod>(
        &mut self,
        root: usize,
        data: &[T],
        f: impl Fn(&T, &T) -> T,
    ) -> Result<Option<Vec<T>>, Error> {
        let loc = Some(SourceLocation::caller());
        self.fold(Some(root), data, 0, 5, &f, loc)
    }

    /// All-reduce with a closure: every process gets `x0 ⊕ … ⊕ x(p-1)`
    /// in `data`, element by element, combined in pid order.
    ///
    /// # Errors
    ///
    /// As for [`reduce_with`](Bsp::reduce_with).
    ///
    /// # BSP cost
    ///
    /// For `n` bytes per process, by the form [`Algorithm`] chooses: one
    /// superstep, `(p - 1)·n·g + l` and `(p - 1)·len` applications of `f`
    /// on every process; or two (reduce-scatter, then all-gather),
    /// `≈ 2·(p - 1)/p·n·g + 2l` and `(p - 1)·len/p` applications; on
    /// `mpi`, from 32 KiB, a sync then `MPI_Alltoallv` and
    /// `MPI_Allgatherv` (the same counts).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(4, |bsp| {
    ///     let mut x = [bsp.pid() as u64 + 1, 1];
    ///     bsp.all_reduce_with(&mut x, |a, b| a * b)?;
    ///     Ok(x)
    /// })?;
    /// assert_eq!(r[3], [24, 1]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn all_reduce_with<T: Pod>(
        &mut self,
        data: &mut [T],
        f: impl Fn(&T, &T) -> T,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.fold_in(None, data, 0, 6, &f, loc)
    }

    /// All-reduce with a named operator ([`Op`]), which the processes'
    /// descriptors compare.
    ///
    /// # Errors
    ///
    /// As for [`broadcast`](Bsp::broadcast);
    /// [`ErrorKind::CollectiveMismatch`] also for another operator on
    /// another process; [`ErrorKind::AccumulateOperator`] for an operator
    /// not defined on `T` (a bitwise or logical one on floats, a min or
    /// max with location on a number); [`ErrorKind::LocalBounds`] never.
    ///
    /// # Panics
    ///
    /// None: an operator not defined on `T` is an error (above).
    ///
    /// # BSP cost
    ///
    /// As for [`all_reduce_with`](Bsp::all_reduce_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::Op;
    /// let r = bsplib::run(3, |bsp| {
    ///     let mut x = [0.5 * bsp.pid() as f64];
    ///     bsp.all_reduce(&mut x, Op::Sum)?;
    ///     Ok(x[0])
    /// })?;
    /// assert_eq!(r, [1.5; 3]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn all_reduce<T: Reducible>(&mut self, data: &mut [T], op: Op) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let f = self.named::<T>(op, NAMES[6], loc)?;
        self.fold_in(None, data, op.id(), 6, &f, loc)
    }

    /// Reduction to `root` with a named operator.
    ///
    /// # Errors
    ///
    /// As for [`all_reduce`](Bsp::all_reduce).
    ///
    /// # Panics
    ///
    /// None.
    ///
    /// # BSP cost
    ///
    /// As for [`reduce_with`](Bsp::reduce_with).
    #[track_caller]
    pub fn reduce<T: Reducible>(
        &mut self,
        root: usize,
        data: &[T],
        op: Op,
    ) -> Result<Option<Vec<T>>, Error> {
        let loc = Some(SourceLocation::caller());
        let f = self.named::<T>(op, NAMES[5], loc)?;
        self.fold(Some(root), data, op.id(), 5, &f, loc)
    }

    /// Inclusive scan with a closure: process `i` gets `x0 ⊕ … ⊕ xi` in
    /// `data`, element by element, combined in pid order.
    ///
    /// # Errors
    ///
    /// As for [`reduce_with`](Bsp::reduce_with).
    ///
    /// # BSP cost
    ///
    /// One superstep: process `i` sends `n` bytes to each of the `p - 1 -
    /// i` after it: `(p - 1)·n·g + l`.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(4, |bsp| {
    ///     let mut x = [bsp.pid() as i32 + 1];
    ///     bsp.scan_with(&mut x, |a, b| a + b)?;
    ///     Ok(x[0])
    /// })?;
    /// assert_eq!(r, [1, 3, 6, 10]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn scan_with<T: Pod>(
        &mut self,
        data: &mut [T],
        f: impl Fn(&T, &T) -> T,
    ) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let r = self.prefix(data, 0, 7, true, &f, loc)?;
        data.copy_from_slice(&r.unwrap_or_default());
        Ok(())
    }

    /// Exclusive scan with a closure: process `i > 0` gets `x0 ⊕ … ⊕
    /// x(i-1)`; process 0 gets `None`.
    ///
    /// # Errors
    ///
    /// As for [`reduce_with`](Bsp::reduce_with).
    ///
    /// # BSP cost
    ///
    /// As for [`scan_with`](Bsp::scan_with).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(3, |bsp| bsp.exscan_with(&[bsp.pid() as u8 + 1], |a, b| a + b))?;
    /// assert_eq!(r, [None, Some(vec![1]), Some(vec![3])]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn exscan_with<T: Pod>(
        &mut self,
        data: &[T],
        f: impl Fn(&T, &T) -> T,
    ) -> Result<Option<Vec<T>>, Error> {
        let loc = Some(SourceLocation::caller());
        self.prefix(data, 0, 8, false, &f, loc)
    }

    /// Inclusive scan with a named operator.
    ///
    /// # Errors
    ///
    /// As for [`all_reduce`](Bsp::all_reduce).
    ///
    /// # Panics
    ///
    /// None.
    ///
    /// # BSP cost
    ///
    /// As for [`scan_with`](Bsp::scan_with).
    #[track_caller]
    pub fn scan<T: Reducible>(&mut self, data: &mut [T], op: Op) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let f = self.named::<T>(op, NAMES[7], loc)?;
        let r = self.prefix(data, op.id(), 7, true, &f, loc)?;
        data.copy_from_slice(&r.unwrap_or_default());
        Ok(())
    }

    /// `op` as the combining function of a reduction on `T` (`call`), or
    /// the error of an operator not defined on `T`.
    fn named<T: Reducible>(
        &self,
        op: Op,
        call: &'static str,
        loc: Loc,
    ) -> Result<impl Fn(&T, &T) -> T, Error> {
        if T::apply(op, T::zeroed(), T::zeroed()).is_none() {
            let p = self.process();
            return Err(p.fail(
                ErrorKind::AccumulateOperator {
                    op: op.name(),
                    ty: std::any::type_name::<T>(),
                },
                call,
                loc,
            ));
        }
        // Defined on `T`: `apply` gives a value for every pair.
        Ok(move |a: &T, b: &T| T::apply(op, *a, *b).unwrap_or(*b))
    }

    /// Reduction to `root` (or everyone, `None`), as collective `kind`
    /// with operator `op`: `x0 ⊕ x1 ⊕ … ⊕ x(p-1)` element by element, in
    /// that order whatever the form. `inout` holds this process's data and
    /// receives the result (on the root, or everywhere); the others' is
    /// left as it was.
    #[allow(clippy::too_many_arguments)]
    fn fold_in<T: Pod, F: Fn(&T, &T) -> T>(
        &mut self,
        root: Option<usize>,
        inout: &mut [T],
        op: u64,
        kind: usize,
        f: &F,
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[kind];
        let m = inout.len();
        let nbytes = std::mem::size_of_val(inout);
        let (path, nprocs, me) = {
            let p = self.process();
            (p.path(nbytes, root.is_none()), p.nprocs, p.pid)
        };
        let call = Call {
            kind,
            root: root.unwrap_or(0),
            nbytes,
            op: op | elem_size::<T>(),
            path,
        };
        let gets = root.is_none_or(|r| r == me);
        match path {
            Path::One => {
                let src: &[u8] = bytemuck::cast_slice(inout);
                self.collective(
                    call,
                    loc,
                    |p| {
                        let me = p.pid;
                        for q in (0..p.nprocs).filter(|&q| q != me) {
                            if root.is_none_or(|r| r == q) {
                                p.coll_put(q, src, name, loc)?;
                            }
                        }
                        Ok(())
                    },
                    |_| Ok(()),
                )?;
                if gets {
                    let p = self.process();
                    let parts = p.coll_parts(nbytes, name, loc)?;
                    fold_parts(&parts, inout, f);
                }
            }
            Path::Two | Path::Native => {
                let bounds = block_bounds::<T>(m, nprocs);
                let size = std::mem::size_of::<T>().max(1);
                let (a, b) = (bounds(me), bounds(me + 1));
                // Phase 1 (reduce-scatter): block `q` of everyone's data to
                // process `q`, which folds the `p` blocks in pid order.
                if path == Path::Native {
                    return self.fold_native(root, inout, call, &bounds, f, loc);
                }
                let mut block: Vec<T> = inout[a / size..b / size].to_vec();
                self.scatter_blocks(call, None, bytemuck::cast_slice(inout), &bounds, loc)?;
                {
                    let p = self.process();
                    let parts = p.coll_parts(b - a, name, loc)?;
                    fold_parts(&parts, &mut block, f);
                }
                // Phase 2: the folded blocks to the root, or to everyone;
                // `gather_blocks` sends this process's block from `out`.
                let out: &mut [u8] = bytemuck::cast_slice_mut(inout);
                let keep = (!gets).then(|| out[a..b].to_vec());
                out[a..b].copy_from_slice(bytemuck::cast_slice(&block));
                self.gather_blocks(name, root, &bounds, out, loc)?;
                if let Some(keep) = keep {
                    out[a..b].copy_from_slice(&keep);
                }
            }
        }
        Ok(())
    }

    /// The `mpi` engine's reductions, after the sync (whose barrier A
    /// checked the calls) and [`native_ready`](Bsp::native_ready): up to
    /// [`GATHER_MAX`] bytes in all, `MPI_Allgather` (`MPI_Gather`) of
    /// every contribution, folded in pid order by those that get the
    /// result; beyond, `MPI_Alltoallv` gives each process block `me` of
    /// everyone's data, which it folds in pid order in place in the
    /// receive buffer, and `MPI_Allgatherv` (`MPI_Gatherv`) gives the
    /// folded blocks to everyone (the root), straight into `inout`. No
    /// allocation once the receive buffer has grown.
    fn fold_native<T: Pod, F: Fn(&T, &T) -> T>(
        &mut self,
        root: Option<usize>,
        inout: &mut [T],
        call: Call,
        bounds: &dyn Fn(usize) -> usize,
        f: &F,
        loc: Loc,
    ) -> Result<(), Error> {
        let name = NAMES[call.kind];
        self.collective(call, loc, |_| Ok(()), |_| Ok(()))?;
        let mut p = self.native_ready(name, loc)?;
        let (me, nprocs) = (p.pid, p.nprocs);
        let gets = root.is_none_or(|r| r == me);
        let n = std::mem::size_of_val(inout);
        if n == 0 {
            // Nothing to move (every process gives 0 bytes: barrier A
            // checked); no MPI call, as for a broadcast.
            return Ok(());
        }
        if n * nprocs <= GATHER_MAX {
            // Every contribution to the root(s), folded there in pid order.
            let mut scratch = std::mem::take(&mut p.coll_scratch);
            let words = (n * nprocs).div_ceil(8).max(1);
            if scratch.len() < words {
                scratch.resize(words, 0);
            }
            let all = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut scratch)[..n * nprocs];
            if let Some(mpi) = p.world.rendezvous() {
                let mine: &[u8] = bytemuck::cast_slice(inout);
                if gets {
                    mpi.coll_gather(root, mine, all);
                } else {
                    mpi.coll_gather(root, mine, &mut []);
                }
            }
            if gets && n > 0 {
                let parts: Vec<Option<&[u8]>> = all
                    .chunks(n)
                    .enumerate()
                    .map(|(q, c)| (q != me).then_some(c))
                    .collect();
                fold_parts(&parts, inout, f);
            }
            p.coll_scratch = scratch;
            return Ok(());
        }
        let (a, b) = (bounds(me), bounds(me + 1));
        let len = b - a;
        let mut scratch = std::mem::take(&mut p.coll_scratch);
        let words = (len * nprocs).div_ceil(8).max(1);
        if scratch.len() < words {
            scratch.resize(words, 0);
        }
        let got = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut scratch)[..len * nprocs];
        let Some(mpi) = p.world.rendezvous() else {
            return Ok(());
        };
        mpi.coll_scatter_blocks(bytemuck::cast_slice(inout), bounds, got, len);
        if len > 0 {
            let (before, rest) = got.split_at_mut(me * len);
            let (mine, after) = rest.split_at_mut(len);
            let mut parts: Vec<Option<&[u8]>> = before.chunks(len).map(Some).collect();
            parts.push(None);
            parts.extend(after.chunks(len).map(Some));
            match bytemuck::try_cast_slice_mut::<u8, T>(mine) {
                Ok(acc) => {
                    fold_parts(&parts, acc, f);
                    send_folded(mpi, root, acc, bounds, inout, gets);
                }
                Err(_) => {
                    let mut acc: Vec<T> = to_vec(mine);
                    fold_parts(&parts, &mut acc, f);
                    send_folded(mpi, root, &acc, bounds, inout, gets);
                }
            }
        } else {
            send_folded::<T>(mpi, root, &[], bounds, inout, gets);
        }
        p.coll_scratch = scratch;
        Ok(())
    }

    /// [`fold_in`](Bsp::fold_in) leaving `data` as it is: the result on
    /// the root (or everywhere), `None` elsewhere.
    fn fold<T: Pod, F: Fn(&T, &T) -> T>(
        &mut self,
        root: Option<usize>,
        data: &[T],
        op: u64,
        kind: usize,
        f: &F,
        loc: Loc,
    ) -> Result<Option<Vec<T>>, Error> {
        let mut v = data.to_vec();
        self.fold_in(root, &mut v, op, kind, f, loc)?;
        let me = self.pid();
        Ok(root.is_none_or(|r| r == me).then_some(v))
    }

    /// Scans: process `i` sends its data to every process after it, and
    /// folds what came from those before it (and its own, if inclusive).
    fn prefix<T: Pod, F: Fn(&T, &T) -> T>(
        &mut self,
        data: &[T],
        op: u64,
        kind: usize,
        inclusive: bool,
        f: &F,
        loc: Loc,
    ) -> Result<Option<Vec<T>>, Error> {
        let name = NAMES[kind];
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let call = Call {
            kind,
            root: 0,
            nbytes: bytes.len(),
            op,
            path: Path::One,
        };
        let before = self.collective(
            call,
            loc,
            |p| {
                for q in p.pid + 1..p.nprocs {
                    p.coll_put(q, bytes, name, loc)?;
                }
                Ok(())
            },
            |p| {
                (0..p.pid)
                    .map(|q| {
                        p.coll_data(q, bytes.len())
                            .map(to_vec::<T>)
                            .ok_or_else(|| lost_p(p, name, q, loc))
                    })
                    .collect::<Result<Vec<_>, _>>()
            },
        )?;
        let mut parts = before.into_iter();
        let mut acc = match parts.next() {
            Some(first) => first,
            None if inclusive => return Ok(Some(data.to_vec())),
            None => return Ok(None),
        };
        let rest = parts.chain(inclusive.then(|| data.to_vec()));
        for x in rest {
            for (a, b) in acc.iter_mut().zip(&x) {
                *a = f(a, b);
            }
        }
        Ok(Some(acc))
    }

    /// Gather to `root`, or to everyone (`None`), as collective `kind`
    /// with operator `op` (reductions gather, then fold).
    pub(crate) fn gather_to_as<T: Pod>(
        &mut self,
        root: Option<usize>,
        data: &[T],
        kind: usize,
        op: u64,
        loc: Loc,
    ) -> Result<Option<Vec<T>>, Error> {
        let name = NAMES[kind];
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let call = Call {
            kind,
            root: root.unwrap_or(0),
            nbytes: bytes.len(),
            op,
            path: Path::One,
        };
        let parts = self.collective(
            call,
            loc,
            |p| {
                for q in 0..p.nprocs {
                    if q != p.pid && root.is_none_or(|r| r == q) {
                        p.coll_put(q, bytes, name, loc)?;
                    }
                }
                Ok(())
            },
            |p| {
                if root.is_some_and(|r| r != p.pid) {
                    return Ok(None);
                }
                let mut all = Vec::with_capacity(bytes.len() * p.nprocs);
                for q in 0..p.nprocs {
                    if q == p.pid {
                        all.extend_from_slice(bytes);
                    } else {
                        match p.coll_data(q, bytes.len()) {
                            Some(d) => all.extend_from_slice(d),
                            None => return Err(lost_p(p, name, q, loc)),
                        }
                    }
                }
                Ok(Some(all))
            },
        )?;
        Ok(parts.map(|b| to_vec(&b)))
    }
}

/// The error of a collective whose data from `from` did not come (only
/// when the descriptors matched but the record is missing: a corrupted or
/// forged stream).
fn lost(bsp: &mut Bsp, name: &'static str, from: usize, loc: Loc) -> Error {
    lost_p(&bsp.process(), name, from, loc)
}

fn lost_p(p: &Process, name: &'static str, from: usize, loc: Loc) -> Error {
    p.fail_in_call(
        ErrorKind::CollectiveMismatch {
            detail: format!(
                "the data of {name} from process {from} did not come with the bytes of this \
                 process's call (it called another collective, or with another size)"
            ),
        },
        name,
        loc,
    )
}

/// Phase 2 of [`Bsp::fold_native`]: this process's folded block `acc` to
/// the root or everyone, the blocks into `out` on those that get them.
fn send_folded<T: Pod>(
    mpi: &crate::engine::Rendezvous,
    root: Option<usize>,
    acc: &[T],
    bounds: &dyn Fn(usize) -> usize,
    out: &mut [T],
    gets: bool,
) {
    let mine: &[u8] = bytemuck::cast_slice(acc);
    if gets {
        mpi.coll_gather_blocks(root, mine, bounds, bytemuck::cast_slice_mut(out));
    } else {
        mpi.coll_gather_blocks(root, mine, bounds, &mut []);
    }
}

/// The byte offsets of the blocks a collective of `m` elements of `T`
/// splits into for `p` processes: block `q` is `bounds(q) ..
/// bounds(q + 1)`, whole elements, the first `m mod p` blocks one element
/// shorter than the others at most.
fn block_bounds<T>(m: usize, p: usize) -> impl Fn(usize) -> usize {
    let size = std::mem::size_of::<T>();
    move |q: usize| ((q as u128 * m as u128 / p as u128) as usize) * size
}

/// Folds `parts` (one per process in pid order: the bytes of its data,
/// or `None` for this process's own, which is `acc` on entry) element by
/// element from the left into `acc`: `acc[i] = x0[i] ⊕ x1[i] ⊕ …`. Works
/// through chunks that stay in cache, reading each record in place when
/// it is aligned for `T`; no copy of the whole data is made.
fn fold_parts<T: Pod, F: Fn(&T, &T) -> T>(parts: &[Option<&[u8]>], acc: &mut [T], f: &F) {
    const CHUNK: usize = 4096;
    let size = std::mem::size_of::<T>();
    if size == 0 || parts.len() < 2 {
        return;
    }
    let mut run: Vec<T> = Vec::with_capacity(CHUNK.min(acc.len()));
    let mut tmp: Vec<T> = Vec::new();
    for (c, out) in acc.chunks_mut(CHUNK).enumerate() {
        let at = c * CHUNK;
        run.clear();
        for (i, part) in parts.iter().enumerate() {
            let x: &[T] = match part {
                None => out,
                Some(b) => {
                    let b = &b[at * size..(at + out.len()) * size];
                    match bytemuck::try_cast_slice::<u8, T>(b) {
                        Ok(xs) => xs,
                        Err(_) => {
                            tmp.clear();
                            tmp.extend(b.chunks_exact(size).map(bytemuck::pod_read_unaligned::<T>));
                            &tmp
                        }
                    }
                }
            };
            if i == 0 {
                run.extend_from_slice(x);
            } else {
                for (a, b) in run.iter_mut().zip(x) {
                    *a = f(a, b);
                }
            }
        }
        out.copy_from_slice(&run);
    }
}

/// The `T`s whose bytes are `b` (copied: `b` need not be aligned).
fn to_vec<T: Pod>(b: &[u8]) -> Vec<T> {
    let size = std::mem::size_of::<T>();
    if size == 0 {
        return Vec::new();
    }
    let n = b.len() / size;
    let mut v = vec![T::zeroed(); n];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(&b[..n * size]);
    v
}
