//! The machine probe (issue 15): measures the BSP parameters g, l, n½ and
//! s of an engine at p processes the way Bisseling's `bspbench` does,
//! stores them per machine, and gives them to programs
//! ([`Bsp::machine`], C's `bsp_g()`, `bsp_l()`, `bsp_s()`,
//! `bsp_nhalf()`).
//!
//! # The parameters and their units
//!
//! All times are in **seconds**, all lengths in **bytes** (`bspbench`
//! gives g and l in flops; divide by [`Machine::s`] to compare):
//!
//! - **l** (seconds): the cost of a superstep, the intercept of the
//!   least-squares fit `T(h) = l + g_word·h` over h-relations of single
//!   8-byte words (`bspbench`'s: every process puts `h` words, one `put`
//!   each, spread cyclically over the others, then syncs).
//! - **g** (seconds per byte): the *asymptotic* cost of a byte, the slope
//!   of the same fit over h-relations of large puts (every process puts
//!   `h` bytes as one put to each other process, 16 KiB to 1 MiB each, 4
//!   MiB in the full probe: beyond the caches, as large collectives are).
//! - **n½** (bytes, Oxford's `bsp_nhalf`): the message length at which
//!   half the asymptotic bandwidth is reached. In the model a put of `n`
//!   bytes costs `g·(n + n½)`, so `n½ = 8·(g_word/g − 1)` with `g_word`
//!   the slope per byte of the single-word fit. An h-relation of `h`
//!   bytes in `k` puts costs `g·(h + k·n½) + l`.
//! - **s** (flop/s): the rate of a DAXPY (`y += a·x`, 1024 doubles, in
//!   cache) on process 0 while every process runs one: a stand-in for
//!   Oxford's `bsp_s`, which they gave in Mflop/s.
//!
//! # Where they are kept
//!
//! [`store_path`]: the file named by `$BSPLIB_MACHINE` if set, else
//! `$XDG_CACHE_HOME/bsplib/machine.json`, else
//! `$HOME/.cache/bsplib/machine.json`. One entry per (host name, bsplib
//! version, engine, p); saving a measurement replaces the entry of the
//! same key. A program reads the entry of its own host, version, engine
//! and p ([`Machine::for_run`]); without one, [`Machine::defaults`].
//!
//! # Examples
//!
//! ```
//! use bsplib::probe::{self, Options};
//! use bsplib::{Engine, Runtime};
//! let m = probe::measure(&Runtime::new(2).engine(Engine::Threads), &Options::quick())?;
//! assert!(m.machine.g > 0.0 && m.machine.l > 0.0 && m.machine.l < 1.0);
//! # Ok::<(), bsplib::Error>(())
//! ```

use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::{Area, Bsp, Engine, Error, Runtime};

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
    /// Measured just now ([`measure`]).
    Measured,
}

/// The BSP parameters of one engine at one p (see the [module
/// docs](self) for how each is measured).
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
/// measured by `examples/bench.rs` on the project's 2-core VM (the
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

/// How long and how often the probe measures.
///
/// # Examples
///
/// ```
/// let o = bsplib::probe::Options { reps: 3, ..bsplib::probe::Options::quick() };
/// let m = bsplib::probe::measure(&bsplib::Runtime::new(2), &o)?;
/// assert!(m.reps <= 3);
/// # Ok::<(), bsplib::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Repetitions of the whole sweep over h (one fit each; the spread
    /// is over them). At least 1; one more, first, warms up and is not
    /// counted.
    pub reps: usize,
    /// The h values (in 8-byte words per process) of the single-word
    /// h-relations; fewer than two distinct values: the quick probe's.
    pub word_hs: Vec<usize>,
    /// The sizes (in bytes per destination process) of the large-put
    /// h-relations; zeros are dropped, and fewer than two distinct sizes
    /// are the quick probe's.
    pub bulk_sizes: Vec<usize>,
    /// Words per measurement of the single-word h-relation (the supersteps
    /// repeated for one h are about this many words over h).
    pub words_per_measurement: usize,
    /// Bytes per measurement of the large-put h-relation.
    pub bytes_per_measurement: usize,
    /// Stop after the repetition that ends past this time (process 0's
    /// clock; at least 3 repetitions are counted), so that a loaded
    /// machine does not stretch the probe; `None`: all `reps`.
    pub budget: Option<std::time::Duration>,
}

impl Options {
    /// A short probe (well under a second at p = 2 on an idle machine;
    /// a few seconds when others load it): 15 repetitions of short
    /// measurements.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(bsplib::probe::Options::quick().reps, 15);
    /// ```
    pub fn quick() -> Options {
        Options {
            reps: 15,
            word_hs: vec![0, 32, 64, 128, 256, 512],
            bulk_sizes: vec![16 << 10, 64 << 10, 256 << 10, 1 << 20],
            words_per_measurement: 1 << 11,
            bytes_per_measurement: 1 << 20,
            budget: Some(std::time::Duration::from_secs(2)),
        }
    }
}

impl Default for Options {
    /// The full probe: 31 repetitions of longer measurements over more h
    /// and larger puts (a few seconds at p = 2).
    fn default() -> Options {
        Options {
            reps: 31,
            word_hs: vec![0, 16, 32, 64, 128, 256, 512, 1024],
            bulk_sizes: vec![16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20],
            words_per_measurement: 1 << 13,
            bytes_per_measurement: 8 << 20,
            budget: Some(std::time::Duration::from_secs(20)),
        }
    }
}

/// A measurement: the figures and how well they are known.
///
/// # Examples
///
/// ```
/// use bsplib::probe::{measure, Options};
/// let m = measure(&bsplib::Runtime::new(2), &Options::quick())?;
/// println!(
///     "g = {:.3} ns/byte ({:.3} to {:.3} over {} repetitions), residual {:.0}%",
///     m.machine.g * 1e9,
///     m.g_range.0 * 1e9,
///     m.g_range.1 * 1e9,
///     m.reps,
///     m.residual * 100.0
/// );
/// # Ok::<(), bsplib::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// The engine measured.
    pub engine: Engine,
    /// The processes measured.
    pub nprocs: usize,
    /// The fit, per h, of the time of a superstep a fifth of the way up
    /// the sorted times of every superstep of every repetition (others'
    /// work on the machine only ever adds time).
    pub machine: Machine,
    /// The smallest and largest g of the repetitions, each fitted alone.
    pub g_range: (f64, f64),
    /// The smallest and largest l of the repetitions, each fitted alone.
    pub l_range: (f64, f64),
    /// The smallest and largest n½ of the repetitions, each fitted alone.
    pub nhalf_range: (f64, f64),
    /// The root-mean-square residual of the single-word fit behind
    /// `machine`, relative to the mean time of its supersteps (0.05: 5%).
    pub residual: f64,
    /// The repetitions counted (fewer than [`Options::reps`] when the
    /// budget ran out).
    pub reps: usize,
    /// The points of the single-word fit: h (8-byte words each process
    /// puts) and seconds per superstep (bspbench's table).
    pub word_points: Vec<(usize, f64)>,
    /// The points of the large-put fit: bytes each process puts, and
    /// seconds per superstep.
    pub bulk_points: Vec<(usize, f64)>,
}

/// The most supersteps of one measurement.
const MAX_STEPS: usize = 1 << 14;

/// The fixed words of a measurement encoded for
/// [`Runtime::run_portable`] and the broadcast (the points follow).
const WORDS: usize = 16;

impl Measurement {
    fn encode(&self) -> Vec<f64> {
        let m = &self.machine;
        let mut v = vec![
            Engine::ALL
                .iter()
                .position(|e| *e == self.engine)
                .unwrap_or(0) as f64,
            self.nprocs as f64,
            m.g,
            m.l,
            m.nhalf,
            m.s,
            self.g_range.0,
            self.g_range.1,
            self.l_range.0,
            self.l_range.1,
            self.nhalf_range.0,
            self.nhalf_range.1,
            self.residual,
            self.reps as f64,
            self.word_points.len() as f64,
            self.bulk_points.len() as f64,
        ];
        for &(h, t) in self.word_points.iter().chain(&self.bulk_points) {
            v.extend([h as f64, t]);
        }
        v
    }

    fn decode(w: &[f64]) -> Measurement {
        let mut m = Measurement {
            engine: Engine::ALL[(w[0] as usize).min(Engine::ALL.len() - 1)],
            nprocs: w[1] as usize,
            machine: Machine {
                g: w[2],
                l: w[3],
                nhalf: w[4],
                s: w[5],
                source: Source::Measured,
            },
            g_range: (w[6], w[7]),
            l_range: (w[8], w[9]),
            nhalf_range: (w[10], w[11]),
            residual: w[12],
            reps: w[13] as usize,
            word_points: Vec::new(),
            bulk_points: Vec::new(),
        };
        let (nw, nb) = (w[14] as usize, w[15] as usize);
        let pairs: Vec<(usize, f64)> = w[WORDS..]
            .chunks_exact(2)
            .map(|c| (c[0] as usize, c[1]))
            .collect();
        m.word_points = pairs.iter().take(nw).copied().collect();
        m.bulk_points = pairs.iter().skip(nw).take(nb).copied().collect();
        m
    }
}

/// Measures g, l, n½ and s on the engine and p of `runtime` (each
/// process runs [`measure_in`]).
///
/// # Errors
///
/// The run's error (see [`Runtime::run_portable`]).
///
/// # Examples
///
/// ```
/// use bsplib::probe::{measure, Options};
/// let m = measure(&bsplib::Runtime::new(2), &Options::quick())?;
/// assert_eq!(m.nprocs, 2);
/// assert!(m.g_range.0 <= m.machine.g && m.machine.g <= m.g_range.1);
/// # Ok::<(), bsplib::Error>(())
/// ```
#[track_caller]
pub fn measure(runtime: &Runtime, options: &Options) -> Result<Measurement, Error> {
    let options = options.clone();
    let results = runtime.run_portable(move |bsp| Ok(measure_in(bsp, &options)?.encode()))?;
    Ok(Measurement::decode(&results[0]))
}

/// bspbench's destination of word `i` of process `s`: process
/// `(s + 1 + i mod (p-1)) mod p`, index `s + (i div (p-1))·p` (itself at
/// p = 1).
fn destination(s: usize, p: usize, i: usize) -> (usize, usize) {
    if p == 1 {
        return (0, i);
    }
    ((s + 1 + i % (p - 1)) % p, s + (i / (p - 1)) * p)
}

/// The least-squares line `y = a + b·x`: `(a, b, rms residual)`.
fn fit(points: &[(f64, f64)]) -> (f64, f64, f64) {
    let n = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x, sy + y));
    let (mx, my) = (sx / n, sy / n);
    let (sxx, sxy) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (x - mx), b + (x - mx) * (y - my))
    });
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let a = my - b * mx;
    let rss: f64 = points.iter().map(|(x, y)| (y - a - b * x).powi(2)).sum();
    (a, b, (rss / n).sqrt())
}

/// The superstep time taken for an h: the fifth of the way up the
/// sorted times. Others' work on the machine only adds time, and on a
/// loaded machine most supersteps wait for a descheduled process; the
/// very fastest ones are too fast (process 0 late out of the previous
/// sync sees a superstep the others had begun).
fn quantile(t: &mut [f64]) -> f64 {
    if t.is_empty() {
        return 0.0;
    }
    t.sort_by(f64::total_cmp);
    t[(t.len() - 1) / 5]
}

fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// Flop/s of an in-cache DAXPY on this process (the best of 3 timings of
/// about 2 ms each, `quick`; 10 ms otherwise).
fn flop_rate(quick: bool) -> f64 {
    const N: usize = 1024;
    let x: Vec<f64> = (0..N).map(|i| i as f64 * 1e-3).collect();
    let mut y = vec![1.0f64; N];
    let a = std::hint::black_box(1.0e-9);
    let reps = if quick { 1000 } else { 5000 };
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t0 = Instant::now();
        for _ in 0..reps {
            let x = std::hint::black_box(&x);
            for (y, x) in y.iter_mut().zip(x) {
                *y += a * x;
            }
            std::hint::black_box(&mut y);
        }
        best = best.min(t0.elapsed().as_secs_f64());
    }
    (2 * N * reps) as f64 / best.max(1e-9)
}

/// Measures on the running engine, every process calling it (a
/// collective of many supersteps); every process returns the same
/// measurement.
///
/// Each repetition times, on process 0, supersteps of the single-word
/// h-relation for each `h` of [`Options::word_hs`] (fitting l and
/// `g_word`) and of the large-put h-relation for each size of
/// [`Options::bulk_sizes`] (fitting g), interleaved so that a
/// disturbance hits every h alike. Each superstep is timed alone; the
/// result fits, for each h, the time a fifth of the way up the sorted
/// times of all repetitions (others' work on the machine only adds
/// time); the ranges are those of each repetition fitted alone.
///
/// # Errors
///
/// Those of the puts and syncs it makes (another process failed).
///
/// # Examples
///
/// ```
/// use bsplib::probe::{measure_in, Options};
/// let ms = bsplib::run(2, |bsp| measure_in(bsp, &Options::quick()))?;
/// assert_eq!(ms[0], ms[1]);
/// # Ok::<(), bsplib::Error>(())
/// ```
#[track_caller]
pub fn measure_in(bsp: &mut Bsp, options: &Options) -> Result<Measurement, Error> {
    // A line needs two points: lists of fewer distinct values are the
    // quick probe's; sizes of 0 bytes would take no time to put.
    let mut options = options.clone();
    let quick = Options::quick();
    let distinct = |v: &[usize]| v.iter().collect::<std::collections::BTreeSet<_>>().len();
    options.bulk_sizes.retain(|&m| m > 0);
    if distinct(&options.word_hs) < 2 {
        options.word_hs = quick.word_hs.clone();
    }
    if distinct(&options.bulk_sizes) < 2 {
        options.bulk_sizes = quick.bulk_sizes.clone();
    }
    let options = &options;
    let (pid, p) = (bsp.pid(), bsp.nprocs());
    let engine = bsp.process().world.engine();
    let quick = options.words_per_measurement <= quick.words_per_measurement;
    let hmax = options.word_hs.iter().copied().max().unwrap_or(0).max(1);
    let bmax = options.bulk_sizes.iter().copied().max().unwrap_or(0).max(8);
    let bwords = bmax.div_ceil(8);
    let src: Vec<u64> = (0..hmax.max(bwords) as u64).collect();
    let dest: Vec<(usize, usize)> = (0..hmax).map(|i| destination(pid, p, i)).collect();
    let words = Area::<u64>::new(bsp, p * (hmax / p.saturating_sub(1).max(1) + 1));
    let bulk = Area::<u64>::new(bsp, p * bwords);
    bsp.push_reg(&words)?;
    bsp.push_reg(&bulk)?;
    bsp.sync()?;
    let s = flop_rate(quick);
    bsp.sync()?;

    let reps = options.reps.max(1);
    // Seconds per superstep, per repetition and h.
    // Seconds of each superstep on process 0 (from one sync's return to
    // the next's), per repetition and h; and per h over all repetitions.
    let mut word_t: Vec<Vec<f64>> = Vec::with_capacity(reps);
    let mut bulk_t: Vec<Vec<f64>> = Vec::with_capacity(reps);
    let mut word_all: Vec<Vec<f64>> = vec![Vec::new(); options.word_hs.len()];
    let mut bulk_all: Vec<Vec<f64>> = vec![Vec::new(); options.bulk_sizes.len()];
    let others = p.saturating_sub(1).max(1);
    let start = Instant::now();
    let mut times = Vec::new();
    for rep in 0..=reps {
        let mut wt = Vec::with_capacity(options.word_hs.len());
        for (j, &h) in options.word_hs.iter().enumerate() {
            let steps = options
                .words_per_measurement
                .checked_div(h)
                .map_or((options.words_per_measurement / 64).max(8), |n| n.max(2))
                .min(MAX_STEPS);
            times.clear();
            bsp.sync()?;
            let mut t0 = Instant::now();
            for _ in 0..steps {
                for (i, &(to, at)) in dest[..h].iter().enumerate() {
                    bsp.put(to, &src[i..i + 1], &words, at)?;
                }
                bsp.sync()?;
                let t1 = Instant::now();
                times.push((t1 - t0).as_secs_f64());
                t0 = t1;
            }
            if rep > 0 {
                word_all[j].extend_from_slice(&times);
            }
            wt.push(quantile(&mut times));
        }
        let mut bt = Vec::with_capacity(options.bulk_sizes.len());
        for (j, &m) in options.bulk_sizes.iter().enumerate() {
            let mw = m.div_ceil(8);
            let steps = (options.bytes_per_measurement / (m * others)).clamp(2, MAX_STEPS);
            times.clear();
            bsp.sync()?;
            let mut t0 = Instant::now();
            for _ in 0..steps {
                for k in 1..=others {
                    bsp.put((pid + k) % p, &src[..mw], &bulk, pid * bwords)?;
                }
                bsp.sync()?;
                let t1 = Instant::now();
                times.push((t1 - t0).as_secs_f64());
                t0 = t1;
            }
            if rep > 0 {
                bulk_all[j].extend_from_slice(&times);
            }
            bt.push(quantile(&mut times));
        }
        if rep > 0 {
            word_t.push(wt);
            bulk_t.push(bt);
        }
        // Process 0's clock decides for everyone whether time is up.
        let mut stop = [u8::from(
            pid == 0 && word_t.len() >= 3 && options.budget.is_some_and(|b| start.elapsed() > b),
        )];
        bsp.broadcast(0, &mut stop)?;
        if stop[0] == 1 {
            break;
        }
    }
    let reps = word_t.len();

    // Process 0's timings decide; every process returns them.
    let mut words_out =
        vec![0.0f64; WORDS + 2 * (options.word_hs.len() + options.bulk_sizes.len())];
    if pid == 0 {
        let word_x: Vec<f64> = options.word_hs.iter().map(|&h| (8 * h) as f64).collect();
        let bulk_x: Vec<f64> = options
            .bulk_sizes
            .iter()
            .map(|&m| (m.div_ceil(8) * 8 * others) as f64)
            .collect();
        // One repetition's (or the minima's) l, g_word, g.
        let params = |wt: &[f64], bt: &[f64]| {
            let wp: Vec<(f64, f64)> = word_x.iter().copied().zip(wt.iter().copied()).collect();
            let bp: Vec<(f64, f64)> = bulk_x.iter().copied().zip(bt.iter().copied()).collect();
            let (l, g_word, rms) = fit(&wp);
            let (_, g, _) = fit(&bp);
            let (l, g) = (l.max(1e-9), g.max(1e-13));
            let nhalf = (8.0 * (g_word / g - 1.0)).max(0.0);
            let mean = wt.iter().sum::<f64>() / wt.len().max(1) as f64;
            (l, g, nhalf, rms / mean.max(1e-12))
        };
        // The headline: the fit of each h's low quantile over every
        // superstep of every repetition.
        let wmin: Vec<f64> = word_all.iter_mut().map(|t| quantile(t)).collect();
        let bmin: Vec<f64> = bulk_all.iter_mut().map(|t| quantile(t)).collect();
        let (l, g, nhalf, residual) = params(&wmin, &bmin);
        let each: Vec<_> = word_t
            .iter()
            .zip(&bulk_t)
            .map(|(w, b)| params(w, b))
            .collect();
        let m = Measurement {
            engine,
            nprocs: p,
            machine: Machine {
                g,
                l,
                nhalf,
                s,
                source: Source::Measured,
            },
            g_range: range(&each.iter().map(|e| e.1).collect::<Vec<_>>()),
            l_range: range(&each.iter().map(|e| e.0).collect::<Vec<_>>()),
            nhalf_range: range(&each.iter().map(|e| e.2).collect::<Vec<_>>()),
            residual,
            reps,
            word_points: options.word_hs.iter().copied().zip(wmin).collect(),
            bulk_points: bulk_x.iter().map(|&x| x as usize).zip(bmin).collect(),
        };
        words_out = m.encode();
    }
    bsp.broadcast(0, &mut words_out)?;
    bsp.pop_reg(&bulk)?;
    bsp.pop_reg(&words)?;
    bsp.sync()?;
    Ok(Measurement::decode(&words_out))
}

// ----- the store -------------------------------------------------------------

/// The store's file: `$BSPLIB_MACHINE` if set and not empty, else
/// `$XDG_CACHE_HOME/bsplib/machine.json` (an absolute `XDG_CACHE_HOME`),
/// else `$HOME/.cache/bsplib/machine.json`; `None` without any of them.
///
/// # Examples
///
/// ```
/// if let Some(path) = bsplib::probe::store_path() {
///     assert!(path.to_string_lossy().ends_with(".json") || std::env::var_os("BSPLIB_MACHINE").is_some());
/// }
/// ```
pub fn store_path() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(file) = var("BSPLIB_MACHINE") {
        return Some(file.into());
    }
    let cache = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("bsplib").join("machine.json"))
}

/// This machine's host name (`gethostname`), part of a stored entry's
/// key; `"unknown"` if it cannot be read.
///
/// # Examples
///
/// ```
/// assert!(!bsplib::probe::hostname().is_empty());
/// ```
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at
    // most that many bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match rc {
        0 if end > 0 => String::from_utf8_lossy(&buf[..end]).into_owned(),
        _ => "unknown".into(),
    }
}

/// One stored entry.
#[derive(Clone, Debug)]
struct Entry {
    host: String,
    version: String,
    engine: String,
    nprocs: usize,
    /// The line as written (kept verbatim when another entry is saved).
    line: String,
    machine: Machine,
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The fields of a flat JSON object of strings and numbers, or `None`.
fn parse_flat(line: &str) -> Option<Vec<(String, String)>> {
    let mut chars = line.trim().trim_end_matches(',').chars().peekable();
    let skip_ws = |c: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while c.peek().is_some_and(|c| c.is_whitespace()) {
            c.next();
        }
    };
    let string = |c: &mut std::iter::Peekable<std::str::Chars<'_>>| -> Option<String> {
        if c.next()? != '"' {
            return None;
        }
        let mut s = String::new();
        loop {
            match c.next()? {
                '"' => return Some(s),
                '\\' => match c.next()? {
                    'u' => {
                        let hex: String = (0..4).filter_map(|_| c.next()).collect();
                        s.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    other => s.push(other),
                },
                ch => s.push(ch),
            }
        }
    };
    skip_ws(&mut chars);
    if chars.next()? != '{' {
        return None;
    }
    let mut fields = Vec::new();
    loop {
        skip_ws(&mut chars);
        match chars.peek()? {
            '}' => return Some(fields),
            ',' => {
                chars.next();
                continue;
            }
            _ => {}
        }
        let key = string(&mut chars)?;
        skip_ws(&mut chars);
        if chars.next()? != ':' {
            return None;
        }
        skip_ws(&mut chars);
        let value = if chars.peek() == Some(&'"') {
            string(&mut chars)?
        } else {
            let mut v = String::new();
            while chars
                .peek()
                .is_some_and(|c| !matches!(c, ',' | '}') && !c.is_whitespace())
            {
                v.push(chars.next()?);
            }
            v
        };
        fields.push((key, value));
    }
}

fn parse_entry(line: &str) -> Option<Entry> {
    let fields = parse_flat(line)?;
    let get = |k: &str| {
        fields
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let num = |k: &str| {
        get(k)?
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
    };
    Some(Entry {
        host: get("host")?.into(),
        version: get("version")?.into(),
        engine: get("engine")?.into(),
        nprocs: get("p")?.parse().ok()?,
        line: line.trim().trim_end_matches(',').to_string(),
        machine: Machine {
            g: num("g")?,
            l: num("l")?,
            nhalf: num("nhalf")?,
            s: num("s")?,
            source: Source::Stored,
        },
    })
}

/// The entries of the store at `path` (none if it does not exist).
fn read_entries(path: &Path) -> io::Result<Vec<Entry>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot read the machine store {}: {e}", path.display()),
            ))
        }
    };
    let mut entries = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if !t.starts_with("{\"host\"") {
            continue;
        }
        entries.push(parse_entry(t).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the machine store {} has a malformed entry on line {}: {t}",
                    path.display(),
                    n + 1
                ),
            )
        })?);
    }
    Ok(entries)
}

/// The figures stored at `path` for `engine` at `p` processes on this
/// host and bsplib version, if any.
///
/// # Errors
///
/// The file exists but cannot be read, or holds a malformed entry (the
/// message names the file and the line).
///
/// # Examples
///
/// ```
/// let none = bsplib::probe::load_from("/nonexistent/machine.json".as_ref(), bsplib::Engine::Threads, 2)?;
/// assert!(none.is_none());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn load_from(path: &Path, engine: Engine, p: usize) -> io::Result<Option<Machine>> {
    let host = hostname();
    Ok(read_entries(path)?
        .into_iter()
        .find(|e| {
            e.host == host && e.version == VERSION && e.engine == engine.name() && e.nprocs == p
        })
        .map(|e| e.machine))
}

/// [`load_from`] the [`store_path`] (`Ok(None)` without one).
///
/// # Errors
///
/// As [`load_from`].
///
/// # Examples
///
/// ```
/// let m = bsplib::probe::load(bsplib::Engine::Threads, 2)?;
/// if let Some(m) = m {
///     assert_eq!(m.source, bsplib::probe::Source::Stored);
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn load(engine: Engine, p: usize) -> io::Result<Option<Machine>> {
    match store_path() {
        Some(path) => load_from(&path, engine, p),
        None => Ok(None),
    }
}

/// Stores `m` at `path`, replacing the entry of the same host, bsplib
/// version, engine and p and keeping the others (written to a temporary
/// file, then renamed into place; the directory is made if needed).
///
/// # Errors
///
/// The directory or file cannot be made or written, or the existing
/// store is malformed (it is not overwritten; the message names it).
///
/// # Examples
///
/// ```
/// use bsplib::probe::{self, Options};
/// let path = std::env::temp_dir().join(format!("bsplib-doc-machine-{}.json", std::process::id()));
/// let m = probe::measure(&bsplib::Runtime::new(2), &Options::quick())?;
/// probe::save_to(&path, &m)?;
/// let back = probe::load_from(&path, bsplib::Engine::Threads, 2)?.unwrap();
/// assert_eq!((back.g, back.l), (m.machine.g, m.machine.l));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_to(path: &Path, m: &Measurement) -> io::Result<()> {
    let mut entries = read_entries(path)?;
    let host = hostname();
    let engine = m.engine.name();
    entries.retain(|e| {
        !(e.host == host && e.version == VERSION && e.engine == engine && e.nprocs == m.nprocs)
    });
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mm = &m.machine;
    let line = format!(
        "{{\"host\":{},\"version\":{},\"engine\":{},\"p\":{},\"g\":{:e},\"l\":{:e},\"nhalf\":{:e},\"s\":{:e},\
         \"g_min\":{:e},\"g_max\":{:e},\"l_min\":{:e},\"l_max\":{:e},\"residual\":{:e},\"reps\":{},\"unix_time\":{now}}}",
        json_str(&host),
        json_str(VERSION),
        json_str(engine),
        m.nprocs,
        mm.g,
        mm.l,
        mm.nhalf,
        mm.s,
        m.g_range.0,
        m.g_range.1,
        m.l_range.0,
        m.l_range.1,
        m.residual,
        m.reps
    );
    let mut lines: Vec<String> = entries.into_iter().map(|e| e.line).collect();
    lines.push(line);
    let text = format!(
        "{{\"format\":\"bsplib machine 1\",\"units\":\"g: s/byte, l: s, nhalf: bytes, s: flop/s\",\"entries\":[\n{}\n]}}\n",
        lines.join(",\n")
    );
    let context = |what: &str, e: io::Error| {
        io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| context("make the directory of", e))?;
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| context("write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        context("replace", e)
    })
}

/// [`save_to`] the [`store_path`]; returns the path.
///
/// # Errors
///
/// No store path (none of `BSPLIB_MACHINE`, `XDG_CACHE_HOME`, `HOME` is
/// set: [`io::ErrorKind::NotFound`]), or as [`save_to`].
///
/// # Examples
///
/// ```no_run
/// let m = bsplib::probe::measure(&bsplib::Runtime::new(2), &bsplib::probe::Options::quick())?;
/// let path = bsplib::probe::save(&m)?;
/// println!("stored in {}", path.display());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save(m: &Measurement) -> io::Result<PathBuf> {
    let path = store_path().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "no place for the machine store: set BSPLIB_MACHINE, XDG_CACHE_HOME or HOME",
        )
    })?;
    save_to(&path, m)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_a_line() {
        let pts: Vec<(f64, f64)> = (0..5).map(|i| (i as f64, 2.0 + 3.0 * i as f64)).collect();
        let (a, b, r) = fit(&pts);
        assert!((a - 2.0).abs() < 1e-12 && (b - 3.0).abs() < 1e-12 && r < 1e-12);
    }

    #[test]
    fn entries_parse_back() {
        let line = r#"{"host":"a\"b","version":"1","engine":"threads","p":2,"g":1.5e-10,"l":2e-6,"nhalf":3.7e2,"s":1e9,"reps":5}"#;
        let e = parse_entry(line).unwrap();
        assert_eq!((e.host.as_str(), e.nprocs), ("a\"b", 2));
        assert_eq!((e.machine.g, e.machine.nhalf), (1.5e-10, 370.0));
        assert!(parse_entry(r#"{"host":"x","p":"two"}"#).is_none());
        assert_eq!(json_str("a\"b"), r#""a\"b""#);
    }
}
