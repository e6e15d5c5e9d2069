//! How the collectives that have a choice move their data: the
//! [`Algorithm`] a program sets, the form ([`Path`]) chosen per call by
//! the BSP cost, and the two phases of the two-phase form.

use super::{lost_p, Call, Collectives, NAMES};
use crate::bsp::Bsp;
use crate::error::Error;
use crate::process::{Loc, Process};

/// How the collectives that have a choice (broadcast, reduce, all-reduce)
/// move their data: [`Collectives::set_algorithm`](crate::Collectives::set_algorithm). The result is the
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
pub(super) enum Path {
    One = 1,
    Two = 2,
    Native = 3,
}

// The shared-memory engines' `g` (seconds per byte a process copies) and
// `l` (seconds per sync with data) are the machine's (`Bsp::machine`,
// `probe.rs`): those `bspprobe` stored for this engine and p, else the
// defaults, 0.15 ns and 2 µs, which `examples/bench/` measured on a
// two-core machine.

impl Process {
    /// The form of a collective moving `n` bytes per process: a broadcast
    /// or a reduction to one root (`everyone` false), or an all-reduce
    /// (`everyone` true).
    pub(super) fn path(&self, n: usize, everyone: bool) -> Path {
        let p = self.nprocs;
        let algo = self
            .ext::<super::CollState>()
            .map_or(Algorithm::Auto, |c| c.algo);
        match algo {
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

impl Bsp {
    /// The first phase of a two-phase collective, ending its superstep:
    /// block `q` of `src` (`bounds`) goes to process `q` from `root`, or
    /// (`None`) from every process.
    pub(super) fn scatter_blocks(
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
    pub(super) fn gather_blocks(
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
            p.check_internal_sync(); // checking mode: the library's own sync
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
}

impl Collectives<'_> {
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
    ///     bsp.collectives().set_algorithm(Algorithm::TwoPhase);
    ///     let mut x = [bsp.pid() as u64; 5];
    ///     bsp.collectives().all_reduce(&mut x, Op::Sum)?;
    ///     Ok(x)
    /// })?;
    /// assert_eq!(r, [[3; 5]; 3]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    pub fn set_algorithm(&mut self, algorithm: Algorithm) {
        self.bsp
            .process()
            .with_ext(super::CollState::default, |c, _| c.algo = algorithm);
    }
}
