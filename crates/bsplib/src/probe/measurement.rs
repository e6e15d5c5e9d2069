//! The probe's measurement: its options, the h-relations it times (after
//! Bisseling's `bspbench`), the least-squares fits of g, l and n½, the
//! DAXPY rate s, and the measurement every process returns.

use std::time::Instant;

use crate::codec::Portable;
use crate::machine::{Machine, Measurement, Source};
use crate::{Area, Bsp, Engine, Error, Runtime};

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

/// The most supersteps of one measurement.
const MAX_STEPS: usize = 1 << 14;

/// The fixed words of a measurement encoded for the broadcast and for
/// [`Runtime::run`] (the points follow).
const WORDS: usize = 16;

impl Measurement {
    fn to_words(&self) -> Vec<f64> {
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

    fn from_words(w: &[f64]) -> Measurement {
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
/// The run's error (see [`Runtime::run`]).
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
    let mut results = runtime.run(move |bsp| measure_in(bsp, &options))?;
    Ok(results.swap_remove(0))
}

/// A measurement crosses address spaces (`run` on `processes` and `mpi`)
/// as the words of the broadcast: the fixed ones, then the points.
impl Portable for Measurement {
    fn encode(&self, out: &mut Vec<u8>) {
        self.to_words().encode(out)
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let w = Vec::<f64>::decode(input)?;
        let counts = w.get(WORDS - 2..WORDS)?;
        let points = (counts[0] as usize).checked_add(counts[1] as usize)?;
        (w.len() - WORDS == points.checked_mul(2)?).then(|| Measurement::from_words(&w))
    }
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
                    bsp.put(to, &words, at, &src[i..i + 1])?;
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
                    bsp.put((pid + k) % p, &bulk, pid * bwords, &src[..mw])?;
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
        bsp.collectives().broadcast(0, &mut stop)?;
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
        words_out = m.to_words();
    }
    bsp.collectives().broadcast(0, &mut words_out)?;
    bsp.pop_reg(&bulk)?;
    bsp.pop_reg(&words)?;
    bsp.sync()?;
    Ok(Measurement::from_words(&words_out))
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
}
