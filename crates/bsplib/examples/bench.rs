//! The speed targets of the README (Performance), measured as ratios against baselines
//! timed in the same run on the same machine.
//!
//! ```text
//! cargo run --release --example bench                 # ~15 s on 2 cores
//! cargo run --release --example bench -- --reps 11    # more repetitions
//! cargo run --release --example bench -- --quick      # a few seconds, for CI
//! ```
//!
//! Every measurement is repeated R times (`--reps`, default 7) and reported
//! as its minimum and median (for bandwidths: the best, i.e. the bandwidth of
//! the fastest repetition, and the median). BSP timings are taken by process
//! 0 with `Instant`, after a sync that aligns the processes' starts. On a
//! noisy machine the repetitions of a measurement and of its baseline are
//! interleaved (each one a fresh run with its own warm-up), so that drift
//! in the background load hits both alike.
//!
//! a. Empty `sync` at p = 2 and p = 4 (threads engine) against a bare
//!    sense-reversing spin barrier with as many threads.
//! b. A 16 MiB `put` (and `hpput`) between two processes, each sending to
//!    the other, against single-thread `memcpy` of 16 MiB; for information,
//!    also two threads copying 16 MiB each at the same time.
//! c. The bspbench h-relation: every process puts h single 8-byte words,
//!    cyclically over the other processes, then syncs;
//!    g = (T(h) - T(empty sync)) / h, and a least-squares fit T = l + g h.
//! d. Popping 10^5 registrations (10^4 with `--quick`) oldest first
//!    against newest first, p = 2.
//! e. Scaling: a superstep in which every process puts one word to its
//!    right neighbour against an empty superstep, threads p = 2, 64, 256,
//!    1024 and processes p = 2, 8, 32 (quick: threads 2, 64; processes 8).

use std::convert::Infallible;
use std::hint::{black_box, spin_loop};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bsplib::{Area, Bsp, Engine, Error, Runtime};

/// Bytes moved by the bandwidth measurements.
const BIG: usize = 16 << 20;
/// A bounded loop looks at the clock every `CHECK` iterations (at least 2:
/// see [`bounded_loop`]).
const CHECK: u64 = 16;

/// Settings of one benchmark run.
struct Config {
    reps: usize,
    quick: bool,
    /// The sections to run (`--only abe`); all when `None`.
    only: Option<String>,
}

impl Config {
    /// True when section `letter` is to run.
    fn wants(&self, letter: char) -> bool {
        self.only.as_ref().is_none_or(|o| o.contains(letter))
    }

    /// Most barriers / syncs per repetition.
    fn sync_iters(&self) -> u64 {
        if self.quick {
            10_000
        } else {
            100_000
        }
    }

    /// Time after which a repetition of a barrier loop stops early (an
    /// oversubscribed spin barrier can take milliseconds per episode).
    fn sync_budget(&self) -> Duration {
        Duration::from_millis(if self.quick { 60 } else { 400 })
    }

    /// Time budget of `round`: round 0, the warm-up, gets a quarter.
    fn sync_budget_in(&self, round: usize) -> Duration {
        if round == 0 {
            self.sync_budget() / 4
        } else {
            self.sync_budget()
        }
    }

    /// Transfers (or copies) made before measuring a 16 MiB transfer. On
    /// this VM freshly allocated buffers get faster over their first few
    /// dozen passes (the host backs and settles the pages), so a short
    /// warm-up measures cold memory rather than the library.
    fn warmup(&self) -> usize {
        if self.quick {
            8
        } else {
            48
        }
    }

    /// Copies in `round`: round 0 is the warm-up.
    fn copies_in(&self, round: usize) -> usize {
        if round == 0 {
            self.warmup()
        } else {
            self.copies()
        }
    }

    /// 16 MiB transfers per repetition.
    fn copies(&self) -> usize {
        if self.quick {
            2
        } else {
            4
        }
    }

    /// The h values of the h-relation.
    fn hs(&self) -> &'static [usize] {
        if self.quick {
            &[1_000, 10_000]
        } else {
            &[1_000, 3_000, 10_000, 30_000, 100_000]
        }
    }

    /// Words put per repetition of one h (the number of supersteps is this
    /// divided by h, at least 3).
    fn words_per_rep(&self) -> usize {
        if self.quick {
            200_000
        } else {
            1_000_000
        }
    }
}

// ----- statistics ----------------------------------------------------------

/// Minimum and median of a sample.
#[derive(Clone, Copy)]
struct Stats {
    min: f64,
    median: f64,
}

fn stats(sample: &[f64]) -> Stats {
    let mut v = sample.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Stats { min: v[0], median }
}

/// Least-squares fit `y = a + b x`; returns `(a, b)`.
fn fit_line(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let b = sxy / sxx;
    (my - b * mx, b)
}

// ----- the bounded loop ------------------------------------------------------

/// Runs `step` (which contains a barrier every thread passes) until `max`
/// iterations are done or the leader saw `budget` elapse; returns the number
/// of iterations and the leader's elapsed time.
///
/// Every thread must leave after the same iteration. The leader decides:
/// every `CHECK` iterations it stores `round + 1` into `stop` *before* the
/// barrier of that iteration, and everyone reads `stop` *after* it, so the
/// barrier orders the store before all the reads of that iteration. Reads of
/// earlier checks happened before the barrier of the iteration preceding the
/// store (that is why `CHECK >= 2`), so no one sees the store early. `round`
/// numbers the loops of one run; the stored value only grows.
fn bounded_loop<E>(
    leader: bool,
    stop: &AtomicUsize,
    round: usize,
    max: u64,
    budget: Duration,
    mut step: impl FnMut() -> Result<(), E>,
) -> Result<(u64, Duration), E> {
    let t0 = Instant::now();
    let mut i = 0u64;
    loop {
        let check = i % CHECK == CHECK - 1;
        if leader && check && t0.elapsed() > budget {
            stop.store(round + 1, Ordering::Relaxed);
        }
        step()?;
        i += 1;
        if i >= max || (check && stop.load(Ordering::Relaxed) > round) {
            return Ok((i, t0.elapsed()));
        }
    }
}

// ----- a. barriers -----------------------------------------------------------

/// A bare sense-reversing spin barrier: the baseline of `sync`.
///
/// The classic centralised barrier: a counter and a sense flag. Both live on
/// one cache line (the struct is aligned to 128 bytes, so nothing else
/// shares it): with two threads that is measurably faster on this VM than
/// padding them onto separate lines (~150 vs ~200 ns), and the baseline
/// should be the best simple barrier, not a strawman.
#[repr(align(128))]
struct SpinBarrier {
    count: AtomicUsize,
    sense: AtomicBool,
    n: usize,
}

impl SpinBarrier {
    fn new(n: usize) -> Self {
        SpinBarrier {
            count: AtomicUsize::new(0),
            sense: AtomicBool::new(false),
            n,
        }
    }

    /// `local` is the caller's sense, flipped at every episode.
    #[inline]
    fn wait(&self, local: &mut bool) {
        let s = !*local;
        *local = s;
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // Everyone else sees the reset after seeing the new sense.
            self.count.store(0, Ordering::Relaxed);
            self.sense.store(s, Ordering::Release);
        } else {
            while self.sense.load(Ordering::Acquire) != s {
                spin_loop();
            }
        }
    }
}

/// Seconds per spin-barrier episode with `n` threads, one per repetition.
fn bench_spin(n: usize, reps: usize, cfg: &Config) -> Vec<f64> {
    let barrier = SpinBarrier::new(n);
    let stop = AtomicUsize::new(0);
    let worker = |leader: bool| -> Vec<f64> {
        let mut sense = false;
        let mut out = Vec::with_capacity(reps);
        // Round 0 warms up.
        for round in 0..=reps {
            barrier.wait(&mut sense);
            let budget = cfg.sync_budget_in(round);
            let step = || {
                barrier.wait(&mut sense);
                Ok::<(), Infallible>(())
            };
            let (iters, elapsed) =
                match bounded_loop(leader, &stop, round, cfg.sync_iters(), budget, step) {
                    Ok(done) => done,
                    Err(never) => match never {},
                };
            if round > 0 {
                out.push(elapsed.as_secs_f64() / iters as f64);
            }
        }
        out
    };
    std::thread::scope(|s| {
        let others: Vec<_> = (1..n).map(|_| s.spawn(|| worker(false))).collect();
        let mine = worker(true);
        for h in others {
            h.join().expect("a spin-barrier thread panicked");
        }
        mine
    })
}

/// Seconds per empty `sync` at `p` processes, one per repetition.
fn bench_sync(p: usize, reps: usize, cfg: &Config) -> Result<Vec<f64>, Error> {
    let stop = AtomicUsize::new(0);
    let results = Runtime::new(p).engine(Engine::Threads).run(|bsp| {
        let leader = bsp.pid() == 0;
        let mut out = Vec::with_capacity(reps);
        for round in 0..=reps {
            bsp.sync()?;
            let budget = cfg.sync_budget_in(round);
            let (iters, elapsed) =
                bounded_loop(leader, &stop, round, cfg.sync_iters(), budget, || {
                    bsp.sync()
                })?;
            if round > 0 {
                out.push(elapsed.as_secs_f64() / iters as f64);
            }
        }
        Ok(out)
    })?;
    Ok(first(results))
}

/// Seconds for one superstep in which each of 2 processes pops `n`
/// registrations (pushed in an earlier superstep), oldest first or newest
/// first, with the sync that applies the pops.
fn bench_pops(n: usize, oldest_first: bool) -> Result<f64, Error> {
    let results = Runtime::new(2).engine(Engine::Threads).run(|bsp| {
        let area = vec![0u8; n];
        let at = |i: usize| area.as_ptr().wrapping_add(i).cast::<std::ffi::c_void>();
        // SAFETY: every registered byte is inside `area`, which outlives the
        // registrations (all popped below), and nothing transfers into it.
        unsafe {
            for i in 0..n {
                bsp.raw().push_reg(at(i), 1)?;
            }
        }
        bsp.sync()?;
        let t0 = Instant::now();
        for k in 0..n {
            let i = if oldest_first { k } else { n - 1 - k };
            // SAFETY: as above.
            unsafe { bsp.raw().pop_reg(at(i))? };
        }
        bsp.sync()?;
        Ok(t0.elapsed().as_secs_f64())
    })?;
    Ok(first(results))
}

/// Seconds per superstep at `p` processes of `engine`: empty ones,
/// and ones in which every process puts one word to its right neighbour;
/// `(empty, one put)`, each the median of `rounds` rounds of `iters`.
fn bench_scale(
    engine: Engine,
    p: usize,
    iters: usize,
    rounds: usize,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let results = Runtime::new(p).engine(engine).run_portable(|bsp| {
        let x = bsplib::Area::<u64>::new(bsp, 1);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let right = (bsp.pid() + 1) % bsp.nprocs();
        let (mut empty, mut put) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..iters {
                bsp.sync()?;
            }
            empty.push(t0.elapsed().as_secs_f64() / iters as f64);
            bsp.sync()?;
            let t0 = Instant::now();
            for i in 0..iters {
                bsp.put(right, &[i as u64], &x, 0)?;
                bsp.sync()?;
            }
            put.push(t0.elapsed().as_secs_f64() / iters as f64);
        }
        Ok((empty, put))
    })?;
    Ok(first(results))
}

// ----- b. bandwidth ------------------------------------------------------------

/// Seconds per copy of `BIG` bytes by thread 0 while `threads` threads
/// each copy their own `BIG` bytes at the same time; one per repetition.
/// With one thread this is the `memcpy` baseline; with two it shows what
/// the memory system gives each of two processes copying at once.
fn bench_memcpy(threads: usize, reps: usize, cfg: &Config) -> Vec<f64> {
    let start = SpinBarrier::new(threads);
    let worker = || -> Vec<f64> {
        let src = vec![1u8; BIG];
        let mut dst = vec![0u8; BIG];
        let mut sense = false;
        let mut out = Vec::with_capacity(reps);
        // Round 0 warms up (page faults), with as many copies as `bench_put`.
        for round in 0..=reps {
            let copies = cfg.copies_in(round);
            start.wait(&mut sense);
            let t0 = Instant::now();
            for _ in 0..copies {
                black_box(&mut dst).copy_from_slice(black_box(&src));
            }
            let elapsed = t0.elapsed();
            black_box(&dst);
            if round > 0 {
                out.push(elapsed.as_secs_f64() / copies as f64);
            }
        }
        out
    };
    std::thread::scope(|s| {
        let others: Vec<_> = (1..threads).map(|_| s.spawn(worker)).collect();
        let mine = worker();
        for h in others {
            h.join().expect("a memcpy thread panicked");
        }
        mine
    })
}

/// Seconds per `put` (or `hpput`) of `BIG` bytes plus the sync, with both
/// processes of a p = 2 run sending to each other; one per repetition.
fn bench_put(hp: bool, reps: usize, cfg: &Config) -> Result<Vec<f64>, Error> {
    let results = Runtime::new(2).engine(Engine::Threads).run(|bsp| {
        let pid = bsp.pid();
        let other = 1 - pid;
        let src = vec![pid as u8 + 1; BIG];
        let dst = Area::<u8>::new(bsp, BIG);
        bsp.push_reg(&dst)?;
        bsp.sync()?;
        let mut out = Vec::with_capacity(reps);
        // Round 0 warms up (page faults, buffer growth; see
        // `Config::warmup`). It makes at least two transfers: supersteps
        // alternate between two outgoing buffers.
        for round in 0..=reps {
            let copies = cfg.copies_in(round);
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..copies {
                if hp {
                    // SAFETY: `src` is neither dropped nor modified before
                    // the sync below returns, and no process touches `dst`
                    // during the superstep except through this transfer.
                    unsafe { bsp.hpput(other, &src, &dst, 0)? };
                } else {
                    bsp.put(other, &src, &dst, 0)?;
                }
                bsp.sync()?;
            }
            let elapsed = t0.elapsed();
            if round > 0 {
                out.push(elapsed.as_secs_f64() / copies as f64);
            }
        }
        let got = dst.as_slice(bsp);
        let want = other as u8 + 1;
        if got[0] != want || got[BIG / 2] != want || got[BIG - 1] != want {
            bsp.abort(format!("process {pid}: wrong data after the 16 MiB put"));
        }
        bsp.pop_reg(&dst)?;
        bsp.sync()?;
        Ok(out)
    })?;
    Ok(first(results))
}

// ----- c. h-relation -----------------------------------------------------------

/// Seconds per superstep of the h-relation, per h, and of the empty sync.
struct HRelation {
    empty: Vec<f64>,
    per_h: Vec<(usize, Vec<f64>)>,
}

/// bspbench's destination of word `i` of process `s`: process
/// `(s + 1 + i mod (p-1)) mod p`, index `s + (i div (p-1)) p`.
#[inline]
fn destination(s: usize, p: usize, i: usize) -> (usize, usize) {
    ((s + 1 + i % (p - 1)) % p, s + (i / (p - 1)) * p)
}

fn bench_hrelation(p: usize, cfg: &Config) -> Result<HRelation, Error> {
    assert!(p >= 2, "the h-relation needs two processes");
    let hs = cfg.hs();
    let hmax = *hs.iter().max().expect("at least one h");
    let stop = AtomicUsize::new(0);
    let results = Runtime::new(p)
        .engine(Engine::Threads)
        .run(|bsp: &mut Bsp| {
            let (pid, leader) = (bsp.pid(), bsp.pid() == 0);
            let src: Vec<u64> = (0..hmax as u64).collect();
            let dest: Vec<(usize, usize)> = (0..hmax).map(|i| destination(pid, p, i)).collect();
            let dst = Area::<u64>::new(bsp, p * (hmax / (p - 1) + 1));
            bsp.push_reg(&dst)?;
            bsp.sync()?;

            let mut empty = Vec::with_capacity(cfg.reps);
            for round in 0..=cfg.reps {
                bsp.sync()?;
                let (iters, elapsed) = bounded_loop(
                    leader,
                    &stop,
                    round,
                    cfg.sync_iters() / 10,
                    cfg.sync_budget() / 4,
                    || bsp.sync(),
                )?;
                if round > 0 {
                    empty.push(elapsed.as_secs_f64() / iters as f64);
                }
            }

            let mut per_h = Vec::with_capacity(hs.len());
            for &h in hs {
                let steps = (cfg.words_per_rep() / h).max(3);
                let mut out = Vec::with_capacity(cfg.reps);
                for round in 0..=cfg.reps {
                    bsp.sync()?;
                    let t0 = Instant::now();
                    for _ in 0..steps {
                        for (i, &(to, at)) in dest[..h].iter().enumerate() {
                            bsp.put(to, &src[i..i + 1], &dst, at)?;
                        }
                        bsp.sync()?;
                    }
                    let elapsed = t0.elapsed();
                    if round > 0 {
                        out.push(elapsed.as_secs_f64() / steps as f64);
                    }
                }
                per_h.push((h, out));
            }

            // The last superstep delivered words 0..hmax of every other process.
            let got = dst.as_slice(bsp);
            for s in (0..p).filter(|&s| s != pid) {
                let c = (pid + p - s - 1) % p;
                for i in (c..hmax).step_by(p - 1) {
                    if got[destination(s, p, i).1] != i as u64 {
                        bsp.abort(format!("process {pid}: word {i} from {s} is wrong"));
                    }
                }
            }
            bsp.pop_reg(&dst)?;
            bsp.sync()?;
            Ok(HRelation { empty, per_h })
        })?;
    Ok(first(results))
}

/// Process 0's result.
fn first<R>(results: Vec<R>) -> R {
    results.into_iter().next().expect("a run has process 0")
}

// ----- report --------------------------------------------------------------------

/// One row of the table; values are already in the row's unit.
struct Row {
    name: String,
    unit: &'static str,
    value: Stats,
    baseline: Option<(String, Stats)>,
    target: Target,
}

/// What a row is judged against.
enum Target {
    /// The ratio to the baseline must be at most this.
    AtMost(f64, &'static str),
    /// The ratio to the baseline must be at least this.
    AtLeast(f64, &'static str),
    /// Nothing to judge here; the text says what to compare with.
    Info(&'static str),
}

impl Row {
    /// The target's text and, for ratio targets, whether the min/min and
    /// the median/median ratios meet it.
    fn judge(&self) -> String {
        let ratios = self
            .baseline
            .as_ref()
            .map(|(_, b)| (self.value.min / b.min, self.value.median / b.median));
        let (text, ok) = match (&self.target, ratios) {
            (Target::AtMost(t, what), Some((rmin, rmed))) => {
                (format!("<= {t}x {what}"), Some((rmin <= *t, rmed <= *t)))
            }
            (Target::AtLeast(t, what), Some((rmin, rmed))) => {
                (format!(">= {t}x {what}"), Some((rmin >= *t, rmed >= *t)))
            }
            (Target::Info(what), _) => (what.to_string(), None),
            (_, None) => ("?".to_string(), None),
        };
        let verdict = match ok {
            Some((true, true)) => "  met",
            Some((true, false)) => "  met by min only",
            Some((false, true)) => "  met by median only",
            Some((false, false)) => "  MISSED",
            None => "",
        };
        format!("{text}{verdict}")
    }
}

/// A number in at most 9 characters, with about 4 significant digits.
fn num(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{v:.3e}")
    } else if v.abs() >= 1e3 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A ratio, readable also when tiny.
fn ratio(v: f64) -> String {
    if v.abs() >= 0.01 {
        format!("{v:.2}x")
    } else {
        format!("{v:.1e}x")
    }
}

fn ns(s: Stats) -> Stats {
    Stats {
        min: s.min * 1e9,
        median: s.median * 1e9,
    }
}

/// Bandwidth in GiB/s from seconds per `BIG` bytes: "min" is the best.
fn gibs(s: Stats) -> Stats {
    let bw = |t: f64| BIG as f64 / t / (1u64 << 30) as f64;
    Stats {
        min: bw(s.min),
        median: bw(s.median),
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<33} {:<8} {:>9} {:>9} | {:<24} {:>9} {:>9} | {:>8} {:>8} | target",
        "measurement", "unit", "min", "median", "baseline", "min", "median", "ratio", "ratio"
    );
    println!(
        "{:<33} {:<8} {:>9} {:>9} | {:<24} {:>9} {:>9} | {:>8} {:>8} |",
        "", "", "(best)", "", "", "(best)", "", "min/min", "med/med"
    );
    println!("{}", "-".repeat(150));
    for r in rows {
        let (bname, bmin, bmed, rmin, rmed) = match &r.baseline {
            Some((name, b)) => (
                name.clone(),
                num(b.min),
                num(b.median),
                ratio(r.value.min / b.min),
                ratio(r.value.median / b.median),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into(), "-".into()),
        };
        println!(
            "{:<33} {:<8} {:>9} {:>9} | {:<24} {:>9} {:>9} | {:>8} {:>8} | {}",
            r.name,
            r.unit,
            num(r.value.min),
            num(r.value.median),
            bname,
            bmin,
            bmed,
            rmin,
            rmed,
            r.judge()
        );
    }
}

// ----- main -----------------------------------------------------------------------

const USAGE: &str =
    "usage: bench [--quick] [--reps N] [--only SECTIONS]   (sections: letters a-e of the header)";

/// The configuration, or `None` for `--help`.
fn parse_args() -> Result<Option<Config>, String> {
    let mut quick = false;
    let mut reps = None;
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--reps" => {
                let v = args.next().ok_or("--reps needs a value")?;
                match v.parse::<usize>() {
                    Ok(n) if n > 0 => reps = Some(n),
                    _ => return Err(format!("--reps needs a positive integer, got {v:?}")),
                }
            }
            "--only" => only = Some(args.next().ok_or("--only needs section letters")?),
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    let reps = reps.unwrap_or(if quick { 3 } else { 7 });
    Ok(Some(Config { reps, quick, only }))
}

fn run_all(cfg: &Config) -> Result<(), Error> {
    let started = Instant::now();
    let cores = bsplib::available_processes();
    println!(
        "bsplib bench: {} repetitions{}, {cores} hardware threads{}",
        cfg.reps,
        if cfg.quick { " (--quick)" } else { "" },
        if cores < 4 {
            "; p = 4 is oversubscribed"
        } else {
            ""
        }
    );
    let mut rows = Vec::new();
    let mut details = Vec::new();

    if cfg.wants('a') {
        // a. empty sync vs spin barrier.
        for p in [2usize, 4] {
            eprintln!("[bench] empty sync and spin barrier, p = {p}");
            let (mut sync, mut spin) = (Vec::new(), Vec::new());
            for _ in 0..cfg.reps {
                sync.extend(bench_sync(p, 1, cfg)?);
                spin.extend(bench_spin(p, 1, cfg));
            }
            let (sync, spin) = (ns(stats(&sync)), ns(stats(&spin)));
            rows.push(Row {
                name: format!("empty sync, p={p}"),
                unit: "ns/sync",
                value: sync,
                baseline: Some((format!("spin barrier, {p} threads"), spin)),
                target: if p == 2 {
                    Target::AtMost(1.5, "spin barrier")
                } else {
                    Target::Info("(p > cores: must not collapse)")
                },
            });
        }
    }
    if cfg.wants('b') {
        // b. 16 MiB put / hpput vs memcpy.
        eprintln!("[bench] 16 MiB memcpy, put and hpput");
        let (mut memcpy, mut memcpy2, mut put, mut hpput) = (vec![], vec![], vec![], vec![]);
        for _ in 0..cfg.reps {
            memcpy.extend(bench_memcpy(1, 1, cfg));
            memcpy2.extend(bench_memcpy(2, 1, cfg));
            put.extend(bench_put(false, 1, cfg)?);
            hpput.extend(bench_put(true, 1, cfg)?);
        }
        let memcpy = gibs(stats(&memcpy));
        let memcpy2 = gibs(stats(&memcpy2));
        let put = gibs(stats(&put));
        let hpput = gibs(stats(&hpput));
        rows.push(Row {
            name: "memcpy 16 MiB, 2 threads at once".into(),
            unit: "GiB/s",
            value: memcpy2,
            baseline: Some(("memcpy 16 MiB, 1 thread".into(), memcpy)),
            target: Target::Info("(info: each thread's share when both copy)"),
        });
        for (name, bw, target) in [
            ("put 16 MiB, p=2", put, 0.45),
            ("hpput 16 MiB, p=2", hpput, 0.8),
        ] {
            rows.push(Row {
                name: name.into(),
                unit: "GiB/s",
                value: bw,
                baseline: Some(("memcpy 16 MiB, 1 thread".into(), memcpy)),
                target: Target::AtLeast(target, "memcpy"),
            });
        }
    }
    if cfg.wants('c') {
        // c. h-relation.
        for p in [2usize, 4] {
            eprintln!("[bench] h-relation of single words, p = {p}");
            let hr = bench_hrelation(p, cfg)?;
            let empty = stats(&hr.empty);
            let target = "<= MulticoreBSP for C (peers: 61-74 ns/word)";
            let mut min_points = Vec::new();
            let mut med_points = Vec::new();
            let empty_row = details.len();
            for (h, sample) in &hr.per_h {
                let t = stats(sample);
                let hf = *h as f64;
                let g = Stats {
                    min: (t.min - empty.min) / hf * 1e9,
                    median: (t.median - empty.median) / hf * 1e9,
                };
                min_points.push((hf, t.min));
                med_points.push((hf, t.median));
                details.push((p, *h, ns(t), g));
                rows.push(Row {
                    name: format!("g, p={p}, h={h}"),
                    unit: "ns/word",
                    value: g,
                    baseline: None,
                    target: Target::Info(target),
                });
            }
            let (l_min, g_min) = fit_line(&min_points);
            let (l_med, g_med) = fit_line(&med_points);
            rows.push(Row {
                name: format!("g fitted (T = l + g h), p={p}"),
                unit: "ns/word",
                value: Stats {
                    min: g_min * 1e9,
                    median: g_med * 1e9,
                },
                baseline: None,
                target: Target::Info(target),
            });
            let l = Stats {
                min: l_min * 1e9,
                median: l_med * 1e9,
            };
            details.insert(empty_row, (p, 0, ns(empty), l));
        }
    }
    if cfg.wants('d') {
        // d. popping registrations out of order.
        let n = if cfg.quick { 10_000 } else { 100_000 };
        eprintln!("[bench] popping {n} registrations, newest and oldest first");
        let (mut lifo, mut fifo) = (Vec::new(), Vec::new());
        for _ in 0..cfg.reps.min(3) {
            lifo.push(bench_pops(n, false)?);
            fifo.push(bench_pops(n, true)?);
        }
        let ms = |s: Stats| Stats {
            min: s.min * 1e3,
            median: s.median * 1e3,
        };
        rows.push(Row {
            name: format!("pop {n} regs, oldest first"),
            unit: "ms",
            value: ms(stats(&fifo)),
            baseline: Some((format!("pop {n} regs, newest first"), ms(stats(&lifo)))),
            target: Target::AtMost(2.0, "newest first"),
        });
    }
    if cfg.wants('e') {
        // e. scaling: a superstep of one put per process against an empty one.
        let sweep: &[(Engine, usize)] = if cfg.quick {
            &[
                (Engine::Threads, 2),
                (Engine::Threads, 64),
                (Engine::Processes, 8),
            ]
        } else {
            &[
                (Engine::Threads, 2),
                (Engine::Threads, 64),
                (Engine::Threads, 256),
                (Engine::Threads, 1024),
                (Engine::Processes, 2),
                (Engine::Processes, 8),
                (Engine::Processes, 32),
            ]
        };
        for &(engine, p) in sweep {
            let name = engine.name();
            eprintln!("[bench] scaling, {name}, p = {p}: empty superstep and one put each");
            let iters = if p >= 256 { 20 } else { 200 };
            let (empty, put) = bench_scale(engine, p, iters, cfg.reps)?;
            let us = |s: Stats| Stats {
                min: s.min * 1e6,
                median: s.median * 1e6,
            };
            let short = if engine == Engine::Threads {
                ""
            } else {
                "proc "
            };
            rows.push(Row {
                name: format!("{short}one put each + sync, p={p}"),
                unit: "us",
                value: us(stats(&put)),
                baseline: Some((format!("{short}empty sync, p={p}"), us(stats(&empty)))),
                target: if p == 1024 {
                    Target::AtMost(1.5, "empty sync")
                } else {
                    Target::Info("(the trend; target at p = 1024)")
                },
            });
        }
    }

    println!();
    print_table(&rows);

    println!();
    println!("h-relation detail (time per superstep; h = 0 is the empty sync, its g column is the fitted l)");
    println!(
        "{:>3} {:>7} | {:>12} {:>12} | {:>10} {:>10}",
        "p", "h", "T min (us)", "T med (us)", "g min", "g med"
    );
    for (p, h, t, g) in details {
        let unit = if h == 0 { 1e-3 } else { 1.0 };
        println!(
            "{p:>3} {h:>7} | {:>12.2} {:>12.2} | {:>10.2} {:>10.2}{}",
            t.min / 1e3,
            t.median / 1e3,
            g.min * unit,
            g.median * unit,
            if h == 0 { "  (l, us)" } else { "  (ns/word)" }
        );
    }
    println!();
    println!(
        "total benchmark time: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() -> ExitCode {
    let cfg = match parse_args() {
        Ok(Some(c)) => c,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("bench: {msg}");
            return ExitCode::from(2);
        }
    };
    match run_all(&cfg) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}
