//! The machine parameters a program reads ([`Bsp::machine`], C's
//! `bsp_g()`, `bsp_l()`, `bsp_s()`, `bsp_nhalf()`): g, l, n½ and s of
//! this host, engine and p, from the store the probe writes
//! ([`probe`](crate::probe), which measures them, documents them and
//! re-exports what is public here).

mod store;

pub use store::{hostname, load, load_from, save, save_to, store_path, Measurement};

use crate::{Bsp, Engine};

/// Where a [`Machine`]'s figures come from.
///
/// # Examples
///
/// ```
/// use bsplib::probe::{Machine, Source};
/// let m = Machine::for_run(bsplib::Engine::Threads, 2);
/// match m.source {
///     Source::Stored => println!("bspprobe measured this machine"),
///     _ => println!("the defaults: run bspprobe"),
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// Measured by the probe on this host, this bsplib version, engine
    /// and p, and read from the store.
    Stored,
    /// No measurement stored: [`Machine::defaults`].
    Default,
    /// Measured just now ([`measure`](crate::probe::measure)).
    Measured,
}

/// The BSP parameters of one engine at one p (see the [module
/// docs](crate::probe) for how each is measured).
///
/// # Examples
///
/// The predicted time of a superstep of 1 MiB in 8 puts after 1 ms of
/// computation:
///
/// ```
/// let m = bsplib::probe::Machine::defaults();
/// let t = m.cost(1e-3, 1 << 20, 8);
/// assert!(t > 1e-3 + m.l);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Machine {
    /// Seconds per byte, asymptotic (large puts).
    pub g: f64,
    /// Seconds per superstep.
    pub l: f64,
    /// Bytes: the message length at which half the asymptotic bandwidth
    /// is reached (a put of `n` bytes costs `g·(n + nhalf)`).
    pub nhalf: f64,
    /// Flop/s: the rate of an in-cache DAXPY.
    pub s: f64,
    /// Where the figures come from.
    pub source: Source,
}

/// The defaults' g: seconds per byte copied by the shared-memory engines,
/// measured by `examples/bench/` on the project's 2-core VM (the
/// collectives' former constant).
const DEFAULT_G: f64 = 0.15e-9;
/// The defaults' l (seconds), as [`DEFAULT_G`].
const DEFAULT_L: f64 = 2.0e-6;
/// The defaults' n½: with [`DEFAULT_G`], single 8-byte puts cost about 7.25 ns
/// per byte, `bench`'s section c on threads (`8·(7.25/0.15 − 1)`).
const DEFAULT_NHALF: f64 = 378.0;
/// The defaults' s (flop/s): the probe's DAXPY on the project's VM.
const DEFAULT_S: f64 = 1.0e10;

impl Machine {
    /// The built-in figures used when nothing was measured, the same for
    /// every engine and p: those of the `threads` engine on this
    /// project's 2-core VM (AMD EPYC): `g` = 0.15 ns per byte, `l` = 2 µs,
    /// `nhalf` = 378 bytes (so a single 8-byte put costs 7.24 ns per
    /// byte), `s` = 10¹⁰ flop/s.
    ///
    /// # Examples
    ///
    /// ```
    /// let m = bsplib::probe::Machine::defaults();
    /// assert_eq!(m.source, bsplib::probe::Source::Default);
    /// assert_eq!(m.l, 2.0e-6);
    /// ```
    pub fn defaults() -> Machine {
        Machine {
            g: DEFAULT_G,
            l: DEFAULT_L,
            nhalf: DEFAULT_NHALF,
            s: DEFAULT_S,
            source: Source::Default,
        }
    }

    /// The stored figures for `engine` at `p` processes on this host and
    /// bsplib version ([`load`]), or [`Machine::defaults`] if none were
    /// stored or the store cannot be read.
    ///
    /// # Examples
    ///
    /// ```
    /// let m = bsplib::probe::Machine::for_run(bsplib::Engine::Threads, 4);
    /// assert!(m.g > 0.0);
    /// ```
    pub fn for_run(engine: Engine, p: usize) -> Machine {
        load(engine, p)
            .ok()
            .flatten()
            .unwrap_or_else(Machine::defaults)
    }

    /// The predicted seconds of a superstep: `w + g·(h + records·nhalf)
    /// + l`, with `w` seconds of computation, `h` bytes the busiest
    /// process sends or receives, in `records` puts or messages.
    ///
    /// # Examples
    ///
    /// ```
    /// let m = bsplib::probe::Machine::defaults();
    /// assert!(m.cost(0.0, 1 << 20, 1) < m.cost(0.0, 1 << 20, 1 << 17));
    /// ```
    pub fn cost(&self, w: f64, h: usize, records: usize) -> f64 {
        w + self.g * (h as f64 + records as f64 * self.nhalf) + self.l
    }

    /// `bspbench`'s g: seconds per byte of an h-relation of single 8-byte
    /// puts, `g·(1 + nhalf/8)`.
    ///
    /// # Examples
    ///
    /// ```
    /// let m = bsplib::probe::Machine::defaults();
    /// assert!((m.g_word() - 7.25e-9).abs() < 0.02e-9); // 7.24 ns per byte
    /// ```
    pub fn g_word(&self) -> f64 {
        self.g * (1.0 + self.nhalf / 8.0)
    }
}

impl Bsp {
    /// The BSP parameters of the running engine at this run's p: those
    /// `bspprobe` measured and stored on this host for this bsplib
    /// version ([`probe::load`](load)), else the built-in
    /// [`Machine::defaults`] (`source` says which). Read from the store
    /// at this process's first call, then kept for the run. The
    /// collectives choose their algorithm with these figures.
    ///
    /// # BSP cost
    ///
    /// Local; the first call reads a small file.
    ///
    /// # Examples
    ///
    /// ```
    /// bsplib::run(2, |bsp| {
    ///     let m = bsp.machine();
    ///     assert!(m.g > 0.0 && m.l > 0.0);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    pub fn machine(&self) -> Machine {
        self.process().machine()
    }
}

impl crate::process::Process {
    /// [`Bsp::machine`].
    pub(crate) fn machine(&self) -> Machine {
        machine_of(&self.world)
    }
}

/// The machine parameters of `world`'s run ([`Machine::for_run`]), read
/// once for all its processes (on `processes` before the fork), so that
/// all choose the same collective forms even if the store changes
/// meanwhile.
pub(crate) fn machine_of(world: &crate::engine::World) -> Machine {
    *world.ext_or_init(|| Machine::for_run(world.engine(), world.nprocs()))
}
