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
//! b. A 16 MiB `put`, `hpput`, `get` and `put_owned` between two processes, each
//!    sending to (or fetching from) the other, on threads and processes,
//!    against single-thread `memcpy` of 16 MiB; for information, also two
//!    threads copying 16 MiB each at the same time.
//! c. The bspbench h-relation: every process puts h single 8-byte words,
//!    cyclically over the other processes, then syncs;
//!    g = (T(h) - T(empty sync)) / h, and a least-squares fit T = l + g h.
//! d. Popping 10^5 registrations (10^4 with `--quick`) oldest first
//!    against newest first, p = 2.
//! e. Scaling: a superstep in which every process puts one word to its
//!    right neighbour against an empty superstep, and the peak memory,
//!    threads p = 2, 8, 64, 256, 1024 and processes p = 2, 8, 32 (quick:
//!    threads 2, 64; processes 8), each in a child process of its own;
//!    at p = 1024 the empty superstep against a futex barrier of 1024
//!    threads.
//! f. Processes, one-word transfers: the h-relation of (c) with h = 1024
//!    words per process, as time per word moved by the whole run,
//!    (T(h) - T(empty)) / (h p), at p = 32 against p = 2 (quick: 8 vs 2).
//! g. Whole programs on processes at p = 1024 (quick: 64): the empty
//!    program, and 3 supersteps (register, one put each, pop), from the
//!    call to `run_portable` to its return.
//!
//! h. A column of a row-major matrix of doubles with 4096 rows (4096
//!    elements) put into the same column of the other process's matrix,
//!    p = 2 both ways, per superstep: one `put_strided` against 4096
//!    one-element `put`s and against one contiguous `put` of the same
//!    32 KiB, on threads and processes, for 8 columns (256 KiB matrices,
//!    in cache) and 64 (2 MiB, one cache line per element); for
//!    information, against the same gather and scatter done locally
//!    without the library (the floor of any strided transfer).
//!
//! i. An active-message round trip, p = 2: process 0 sends a message,
//!    whose completion handler on process 1 answers with a message that
//!    moves a counter process 0 waits on; against the same exchange with
//!    `bsp_send` and two syncs (one per direction), on threads and
//!    processes.
//!
//! j. Collectives on threads, p = 2 and 4: a broadcast of 8 bytes and of
//!    16 MiB and an all-reduce (sum) of one double and of 1 Mi doubles,
//!    against the same written with plain puts and a sync the obvious way
//!    (the root puts its data into every process's registered area; every
//!    process puts its vector to every other, then folds in pid order).
//!
//! k. Accumulate (sum) of 1 Mi doubles (8 MiB) into the other process's
//!    registered area, p = 2 both ways, per superstep, against a put of
//!    the same bytes, on threads and processes.
//!
//! l. One-sided synchronisation (`bsplib::epoch`), threads: a ring
//!    neighbour exchange (every process puts one word into its right
//!    neighbour's area) with post/start/complete/wait against the same
//!    exchange with a `sync`, and with a `Window` epoch (counters in shared
//!    memory), at p = 2, 8 and 64 (quick: 8); and the latency
//!    of lock / put 8 bytes / unlock of another process's area (which
//!    waits in its sync meanwhile) and of this process's own, against an
//!    uncontended `std::sync::Mutex` lock, 8-byte store and unlock; the
//!    same with a `Window` (straight into shared memory, no call of the
//!    target), threads and processes.
//!
//! `--only LETTERS` runs some sections (`--only be`).

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

/// The transfer of a bandwidth measurement.
#[derive(Clone, Copy, PartialEq)]
enum Transfer {
    Put,
    HpPut,
    Get,
    /// `put_owned` of an `Arc<[u8]>` (a clone each time: no copy).
    Owned,
}

impl Transfer {
    fn name(self) -> &'static str {
        match self {
            Transfer::Put => "put",
            Transfer::HpPut => "hpput",
            Transfer::Get => "get",
            Transfer::Owned => "put_owned",
        }
    }
}

/// Seconds per transfer of `BIG` bytes plus the sync, with both processes
/// of a p = 2 run of `engine` sending to each other (a get: fetching from
/// each other, into memory that is not registered); one per repetition.
fn bench_transfer(
    engine: Engine,
    kind: Transfer,
    reps: usize,
    cfg: &Config,
) -> Result<Vec<f64>, Error> {
    let results = Runtime::new(2).engine(engine).run_portable(|bsp| {
        let pid = bsp.pid();
        let other = 1 - pid;
        let src = vec![pid as u8 + 1; BIG];
        let owned: std::sync::Arc<[u8]> = std::sync::Arc::from(&src[..]);
        let mut dst = Area::<u8>::new(bsp, BIG);
        let local = Area::<u8>::new(bsp, BIG);
        dst.as_mut_slice(bsp).fill(pid as u8 + 1);
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
                match kind {
                    // SAFETY: `src` is neither dropped nor modified before
                    // the sync below returns, and no process touches `dst`
                    // during the superstep except through this transfer.
                    Transfer::HpPut => unsafe { bsp.hpput(other, &src, &dst, 0)? },
                    Transfer::Put => bsp.put(other, &src, &dst, 0)?,
                    Transfer::Get => bsp.get(other, &dst, 0, &local, 0, BIG)?,
                    Transfer::Owned => bsp.put_owned(other, owned.clone(), &dst, 0)?,
                }
                bsp.sync()?;
            }
            let elapsed = t0.elapsed();
            if round > 0 {
                out.push(elapsed.as_secs_f64() / copies as f64);
            }
        }
        let got = if kind == Transfer::Get {
            local.as_slice(bsp)
        } else {
            dst.as_slice(bsp)
        };
        let want = other as u8 + 1;
        if got[0] != want || got[BIG / 2] != want || got[BIG - 1] != want {
            bsp.abort(format!(
                "process {pid}: wrong data after the 16 MiB {}",
                kind.name()
            ));
        }
        bsp.pop_reg(&dst)?;
        bsp.sync()?;
        Ok(out)
    })?;
    Ok(first(results))
}

// ----- h. strided puts ------------------------------------------------------------

/// Rows of the matrices of section h.
const COL_ROWS: usize = 4096;

/// How section h moves a column.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Column {
    /// One `put_strided`.
    Strided,
    /// One `put` per element.
    Singles,
    /// One `put` of the same bytes, contiguous on both sides.
    Contiguous,
}

/// Seconds per superstep in which each of the 2 processes of a run of
/// `engine` moves a column to the other the `how` way; one per repetition.
fn bench_column(
    engine: Engine,
    how: Column,
    cols: usize,
    reps: usize,
    cfg: &Config,
) -> Result<Vec<f64>, Error> {
    use bsplib::Strided;
    let steps = if cfg.quick { 20 } else { 200 };
    let results = Runtime::new(2).engine(engine).run_portable(move |bsp| {
        let pid = bsp.pid();
        let other = 1 - pid;
        let n = COL_ROWS * cols;
        let local: Vec<f64> = (0..n).map(|i| (pid * n + i) as f64).collect();
        let m = Area::<f64>::new(bsp, n);
        bsp.push_reg(&m)?;
        bsp.sync()?;
        let c = 5;
        let col = Strided::column(c, COL_ROWS, cols);
        let mut out = Vec::with_capacity(reps);
        for round in 0..=reps {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..steps {
                match how {
                    Column::Strided => bsp.put_strided(other, &local, col, &m, col)?,
                    Column::Singles => {
                        for r in 0..COL_ROWS {
                            let at = r * cols + c;
                            bsp.put(other, &local[at..at + 1], &m, at)?;
                        }
                    }
                    Column::Contiguous => bsp.put(other, &local[..COL_ROWS], &m, 0)?,
                }
                bsp.sync()?;
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / steps as f64);
            }
        }
        let got = m.as_slice(bsp);
        let (at, want) = match how {
            Column::Contiguous => (COL_ROWS - 1, (other * n + COL_ROWS - 1) as f64),
            _ => {
                let at = (COL_ROWS - 1) * cols + c;
                (at, (other * n + at) as f64)
            }
        };
        if got[at] != want {
            bsp.abort(format!(
                "process {pid}: wrong data after the column transfers"
            ));
        }
        bsp.pop_reg(&m)?;
        bsp.sync()?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Seconds per local column move of section h without the library: the
/// column gathered from one matrix into a packed buffer and scattered
/// into another matrix, as a strided put does on its two sides (here
/// both on one thread); one per repetition.
fn bench_column_local(cols: usize, reps: usize, cfg: &Config) -> Vec<f64> {
    let steps = if cfg.quick { 20 } else { 200 };
    let n = COL_ROWS * cols;
    let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let mut b = vec![0f64; n];
    let mut packed = vec![0f64; COL_ROWS];
    let c = 5;
    let mut out = Vec::with_capacity(reps);
    for round in 0..=reps {
        let t0 = Instant::now();
        for _ in 0..steps {
            let a = black_box(&a);
            for (r, x) in packed.iter_mut().enumerate() {
                *x = a[r * cols + c];
            }
            let packed = black_box(&packed);
            for (r, x) in packed.iter().enumerate() {
                b[r * cols + c] = *x;
            }
            black_box(&mut b);
        }
        if round > 0 {
            out.push(t0.elapsed().as_secs_f64() / steps as f64);
        }
    }
    out
}

// ----- i. active-message round trip --------------------------------------------------

/// Seconds per round trip between the 2 processes of a run of `engine`:
/// an active message and its answer (`am`), or a `bsp_send` each way with
/// a sync after each; one per repetition.
fn bench_roundtrip(engine: Engine, am: bool, reps: usize, cfg: &Config) -> Result<Vec<f64>, Error> {
    use bsplib::am::{CounterId, Counters, Handler, Handlers, Landing, Source};
    use std::cell::Cell;
    use std::rc::Rc;
    let trips = if cfg.quick { 200 } else { 5000 };
    let results = Runtime::new(2).engine(engine).run_portable(move |bsp| {
        let me = bsp.pid();
        let mut out = Vec::with_capacity(reps);
        if !am {
            for round in 0..=reps {
                bsp.sync()?;
                let t0 = Instant::now();
                for i in 0..trips as u64 {
                    if me == 0 {
                        bsp.send(1, &[], &i.to_ne_bytes())?;
                    }
                    bsp.sync()?;
                    if me == 1 {
                        let m = bsp.hpmove().expect("the question");
                        let v = u64::from_ne_bytes(m.payload().try_into().unwrap_or_default());
                        bsp.send(0, &[], &(v + 1).to_ne_bytes())?;
                    }
                    bsp.sync()?;
                    if me == 0 && bsp.hpmove().is_none() {
                        bsp.abort("no answer");
                    }
                }
                if round > 0 {
                    out.push(t0.elapsed().as_secs_f64() / trips as f64);
                }
            }
            return Ok(out);
        }
        // Process 1's "ask" handler answers with "answer", which moves the
        // counter of process 0 whose id travels in the question.
        let answer: Rc<Cell<Option<Handler>>> = Rc::new(Cell::new(None));
        let a2 = answer.clone();
        let mut hs = Handlers::new();
        let ask = hs.add("ask", move |a| {
            let id: CounterId = a.uhdr_as().unwrap_or_default();
            let (src, h) = (a.src(), a2.get().expect("registered"));
            Landing::none().then(move |d| {
                let c = Counters::none().tgt(id);
                d.send(src, h, &[0u64], Source::<u8>::Contiguous(&[]), c)
                    .expect("an answer can be sent");
            })
        });
        answer.set(Some(hs.add("answer", |_| Landing::none())));
        bsp.am_init(hs)?;
        // Process 0 waits on `answered`, process 1 on `asked` (moved by
        // each question); the ids travel by a put.
        let answered = bsp.counter()?;
        let asked = bsp.counter()?;
        let ids = Area::<CounterId>::new(bsp, 1);
        bsp.push_reg(&ids)?;
        bsp.sync()?;
        if me == 1 {
            bsp.put(0, &[asked.id()], &ids, 0)?;
        }
        bsp.sync()?;
        let theirs = ids.as_slice(bsp)[0];
        for round in 0..=reps {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..trips {
                if me == 0 {
                    let c = Counters::none().tgt(theirs);
                    bsp.am_send(1, ask, &[answered.id()], Source::<u8>::Contiguous(&[]), c)?;
                    bsp.wait(&answered, 1)?;
                } else {
                    bsp.wait(&asked, 1)?;
                }
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / trips as f64);
            }
        }
        bsp.pop_reg(&ids)?;
        bsp.am_term()?;
        Ok(out)
    })?;
    Ok(first(results))
}

// ----- j. collectives ---------------------------------------------------------------

/// Which operation section j times.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Coll {
    Broadcast,
    AllReduce,
}

/// Seconds per operation on `n` elements (bytes for a broadcast, doubles
/// for an all-reduce) at `p` threads: the collective with `algorithm`, or
/// (`None`) the same with puts and one sync; one per repetition.
fn bench_collective(
    p: usize,
    what: Coll,
    n: usize,
    algorithm: Option<bsplib::Algorithm>,
    cfg: &Config,
) -> Result<Vec<f64>, Error> {
    let plain = algorithm.is_none();
    let reps = match (cfg.quick, n > 1 << 16) {
        (true, _) => 3,
        (false, true) => 10,
        (false, false) => 2_000,
    };
    let results = Runtime::new(p).engine(Engine::Threads).run(move |bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let mut bytes = vec![me as u8; n];
        let mut x = vec![me as f64 + 0.5; n];
        // The plain versions' registered areas: the broadcast's buffer, and
        // every process's vector side by side.
        let dst = Area::<u8>::new(bsp, if what == Coll::Broadcast { n } else { 0 });
        let all = Area::<f64>::new(bsp, if what == Coll::AllReduce { n * p } else { 0 });
        bsp.push_reg(&dst)?;
        bsp.push_reg(&all)?;
        bsp.sync()?;
        let mut out = Vec::new();
        bsp.set_collective_algorithm(algorithm.unwrap_or_default());
        for round in 0..=1 {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..reps {
                match (what, plain) {
                    (Coll::Broadcast, false) => bsp.broadcast(0, &mut bytes)?,
                    (Coll::Broadcast, true) => {
                        if me == 0 {
                            for q in 1..p {
                                bsp.put(q, &bytes, &dst, 0)?;
                            }
                        }
                        bsp.sync()?;
                        if me != 0 {
                            bytes.copy_from_slice(dst.as_slice(bsp));
                        }
                    }
                    (Coll::AllReduce, false) => bsp.all_reduce(&mut x, bsplib::Op::Sum)?,
                    (Coll::AllReduce, true) => {
                        for q in 0..p {
                            bsp.put(q, &x, &all, me * n)?;
                        }
                        bsp.sync()?;
                        let v = all.as_slice(bsp);
                        x.copy_from_slice(&v[..n]);
                        for q in 1..p {
                            for (a, b) in x.iter_mut().zip(&v[q * n..(q + 1) * n]) {
                                *a += b;
                            }
                        }
                    }
                }
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / reps as f64);
            }
        }
        bsp.pop_reg(&all)?;
        bsp.pop_reg(&dst)?;
        bsp.sync()?;
        Ok(out)
    })?;
    Ok(first(results))
}

// ----- e. scaling: futex barrier baseline, child runs -------------------------

/// The baseline of the empty superstep at p = 1024: a central barrier
/// whose waiters sleep on a futex (the kernel's wait queue), woken all at
/// once by the last arrival. Written for the benchmark, as simple as such
/// a barrier gets.
struct FutexBarrier {
    arrived: std::sync::atomic::AtomicU32,
    generation: std::sync::atomic::AtomicU32,
    n: u32,
}

impl FutexBarrier {
    fn new(n: usize) -> Self {
        FutexBarrier {
            arrived: std::sync::atomic::AtomicU32::new(0),
            generation: std::sync::atomic::AtomicU32::new(0),
            n: u32::try_from(n).expect("fewer than 2^32 threads"),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            // SAFETY: FUTEX_WAKE on a live, aligned u32.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.generation.as_ptr(),
                    libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                    i32::MAX,
                )
            };
        } else {
            while self.generation.load(Ordering::Acquire) == generation {
                // SAFETY: FUTEX_WAIT on a live, aligned u32; returns at
                // once if the generation moved on.
                unsafe {
                    libc::syscall(
                        libc::SYS_futex,
                        self.generation.as_ptr(),
                        libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                        generation,
                        std::ptr::null::<libc::timespec>(),
                    )
                };
            }
        }
    }
}

/// Seconds per futex-barrier episode with `n` threads, `rounds` rounds of
/// `iters` episodes.
fn bench_futex(n: usize, iters: usize, rounds: usize) -> Vec<f64> {
    let barrier = FutexBarrier::new(n);
    std::thread::scope(|s| {
        for _ in 1..n {
            s.spawn(|| {
                for _ in 0..rounds * (iters + 1) {
                    barrier.wait();
                }
            });
        }
        let mut out = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            barrier.wait();
            let t0 = Instant::now();
            for _ in 0..iters {
                barrier.wait();
            }
            out.push(t0.elapsed().as_secs_f64() / iters as f64);
        }
        out
    })
}

/// This process's peak resident memory (`VmHWM`: of its address space,
/// which `exec` replaced, unlike `getrusage`'s figure, which keeps the
/// parent's from before the `exec`) and that of its largest waited child
/// (forked, not exec'd: the `processes` engine's), in KiB.
fn peak_kib() -> (u64, u64) {
    let me = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0);
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    (me, u.ru_maxrss as u64)
}

/// Child mode (`bench --child-scale ENGINE P ITERS ROUNDS`): runs
/// [`bench_scale`] alone in this process and prints, on one line, the
/// empty and one-put timings and the peak memory, so that the parent
/// measures each configuration's memory apart from the others.
fn child_scale(args: &[String]) -> Result<(), String> {
    let [engine, p, iters, rounds] = args else {
        return Err("--child-scale needs ENGINE P ITERS ROUNDS".into());
    };
    let engine = Engine::from_name(engine).ok_or("unknown engine")?;
    let num = |a: &String| a.parse::<usize>().map_err(|e| e.to_string());
    let (empty, put) =
        bench_scale(engine, num(p)?, num(iters)?, num(rounds)?).map_err(|e| e.to_string())?;
    let (me, children) = peak_kib();
    let list = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:e}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    println!("{} {} {me} {children}", list(&empty), list(&put));
    Ok(())
}

/// One configuration of the scaling sweep, run in a child process:
/// `(empty, one put, peak KiB)`; for `processes` the peak is that of one
/// process (the largest), for `threads` that of the whole run.
fn scale_in_child(
    engine: Engine,
    p: usize,
    iters: usize,
    rounds: usize,
) -> Result<(Vec<f64>, Vec<f64>, u64), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::process::Command::new(exe)
        .args(["--child-scale", engine.name()])
        .args([p, iters, rounds].map(|n| n.to_string()))
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("the child run of {} p = {p} failed", engine.name()));
    }
    let line = String::from_utf8_lossy(&out.stdout);
    let parts: Vec<&str> = line.split_whitespace().collect();
    let [empty, put, me, children] = parts[..] else {
        return Err(format!("unexpected child output {line:?}"));
    };
    let list = |s: &str| -> Result<Vec<f64>, String> {
        s.split(',')
            .map(|x| x.parse::<f64>().map_err(|e| e.to_string()))
            .collect()
    };
    let kib = |s: &str| s.parse::<u64>().map_err(|e| e.to_string());
    let peak = if engine == Engine::Threads {
        kib(me)?
    } else {
        kib(me)?.max(kib(children)?)
    };
    Ok((list(empty)?, list(put)?, peak))
}

// ----- f. one-word transfers on processes ----------------------------------------

/// Seconds per superstep at `p` processes of `engine`: empty, and with
/// every process putting `h` single words cyclically over the others
/// (bspbench's pattern); `(empty, h-relation)`, one per round.
fn bench_words(
    engine: Engine,
    p: usize,
    h: usize,
    steps: usize,
    rounds: usize,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let results = Runtime::new(p).engine(engine).run_portable(move |bsp| {
        let pid = bsp.pid();
        let src: Vec<u64> = (0..h as u64).collect();
        let dest: Vec<(usize, usize)> = (0..h).map(|i| destination(pid, p, i)).collect();
        let dst = Area::<u64>::new(bsp, p * (h / (p - 1) + 1));
        bsp.push_reg(&dst)?;
        bsp.sync()?;
        let (mut empty, mut full) = (Vec::new(), Vec::new());
        for round in 0..=rounds {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..steps {
                bsp.sync()?;
            }
            let e = t0.elapsed().as_secs_f64() / steps as f64;
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..steps {
                for (i, &(to, at)) in dest.iter().enumerate() {
                    bsp.put(to, &src[i..i + 1], &dst, at)?;
                }
                bsp.sync()?;
            }
            let f = t0.elapsed().as_secs_f64() / steps as f64;
            if round > 0 {
                empty.push(e);
                full.push(f);
            }
        }
        Ok((empty, full))
    })?;
    Ok(first(results))
}

// ----- g. whole programs at p = 1024 on processes -----------------------------------

/// Seconds for a whole `processes` run of `p` processes: the empty
/// program (`supersteps == 0`), or 3 supersteps as in the `hello` example
/// (register, one put to the right neighbour, pop).
fn bench_program(p: usize, supersteps: usize) -> Result<f64, Error> {
    let t0 = Instant::now();
    Runtime::new(p)
        .engine(Engine::Processes)
        .run_portable(move |bsp| {
            if supersteps == 0 {
                return Ok(());
            }
            let (pid, p) = (bsp.pid(), bsp.nprocs());
            let inbox = Area::<u64>::new(bsp, 1);
            bsp.push_reg(&inbox)?;
            bsp.sync()?;
            bsp.put((pid + 1) % p, &[pid as u64], &inbox, 0)?;
            bsp.sync()?;
            let got = inbox.as_slice(bsp)[0];
            if got != ((pid + p - 1) % p) as u64 {
                bsp.abort(format!("process {pid} received {got}"));
            }
            bsp.pop_reg(&inbox)?;
            bsp.sync()?;
            Ok(())
        })?;
    Ok(t0.elapsed().as_secs_f64())
}

// ----- l. one-sided synchronisation -------------------------------------------------

/// Microseconds from seconds.
fn us_stats(v: &[f64]) -> Stats {
    let s = stats(v);
    Stats {
        min: s.min * 1e6,
        median: s.median * 1e6,
    }
}

/// Seconds per round of a ring exchange on threads: every process puts one
/// word into its right neighbour's area, with post/start/complete/wait
/// (`pscw`) or with a sync; one per repetition.
fn bench_ring(p: usize, pscw: bool, cfg: &Config) -> Result<Vec<f64>, Error> {
    let rounds: usize = match (cfg.quick, p > 16) {
        (true, _) => 300,
        (false, false) => 3000,
        (false, true) => 600,
    };
    let results = Runtime::new(p)
        .engine(Engine::Threads)
        .run_portable(move |bsp| {
            let (me, p) = (bsp.pid(), bsp.nprocs());
            let (left, right) = ((me + p - 1) % p, (me + 1) % p);
            let x = Area::<u64>::new(bsp, 1);
            bsp.push_reg(&x)?;
            if pscw {
                bsp.rma_init()?;
            } else {
                bsp.sync()?;
            }
            let mut out = Vec::new();
            for round in 0..=1 {
                bsp.sync()?;
                let n = if round == 0 { rounds / 10 } else { rounds };
                let t0 = Instant::now();
                for i in 0..n {
                    if pscw {
                        let e = bsp.epoch(&x, &[left], &[right])?;
                        e.put(right, 0, &[i as u64])?;
                        e.wait()?;
                    } else {
                        bsp.put(right, &[i as u64], &x, 0)?;
                        bsp.sync()?;
                    }
                }
                if round > 0 {
                    out.push(t0.elapsed().as_secs_f64() / n as f64);
                }
            }
            black_box(x.as_slice(bsp)[0]);
            if pscw {
                bsp.rma_term()?;
            }
            Ok(out)
        })?;
    Ok(first(results))
}

/// Seconds per round of the ring exchange of [`bench_ring`] with a
/// [`bsplib::Window`] epoch (counters in shared memory) on `engine`.
fn bench_ring_window(engine: Engine, p: usize, cfg: &Config) -> Result<Vec<f64>, Error> {
    let rounds: usize = match (cfg.quick, p > 16) {
        (true, _) => 300,
        (false, false) => 3000,
        (false, true) => 600,
    };
    let results = Runtime::new(p).engine(engine).run_portable(move |bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let (left, right) = ((me + p - 1) % p, (me + 1) % p);
        let mut w = bsplib::Window::<u64>::new(bsp, 1)?;
        let mut out = Vec::new();
        for round in 0..=1 {
            bsp.sync()?;
            let n = if round == 0 { rounds / 10 } else { rounds };
            let t0 = Instant::now();
            for i in 0..n {
                let mut e = w.epoch(bsp, &[left], &[right])?;
                e.put(right, 0, &[i as u64])?;
                e.wait()?;
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / n as f64);
            }
        }
        black_box(w.local(bsp)?[0]);
        w.free(bsp)?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Seconds per lock / put of 8 bytes / unlock by process 0 of p = 2, on
/// process 1's area (which waits in its sync meanwhile) or on its own.
fn bench_lock(own: bool, cfg: &Config) -> Result<Vec<f64>, Error> {
    let n: usize = if cfg.quick { 500 } else { 5000 };
    let results = Runtime::new(2)
        .engine(Engine::Threads)
        .run_portable(move |bsp| {
            let x = Area::<u64>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma_init()?;
            let mut out = Vec::new();
            if bsp.pid() == 0 {
                let t = if own { 0 } else { 1 };
                for round in 0..=1 {
                    let m = if round == 0 { n / 10 } else { n };
                    let t0 = Instant::now();
                    for i in 0..m {
                        let l = bsp.lock(t, &x, bsplib::LockKind::Exclusive)?;
                        l.put(0, &[i as u64])?;
                        l.unlock()?;
                    }
                    if round > 0 {
                        out.push(t0.elapsed().as_secs_f64() / m as f64);
                    }
                }
            }
            bsp.sync()?; // process 1 serves the locks in here
            black_box(x.as_slice(bsp)[0]);
            bsp.rma_term()?;
            Ok(out)
        })?;
    Ok(first(results))
}

/// Seconds per lock / put of 8 bytes / unlock of a [`bsplib::Window`] by
/// process 0 of p = 2, of process 1's memory (which waits in its sync
/// meanwhile, making no call for it) or of its own.
fn bench_window_lock(engine: Engine, own: bool, cfg: &Config) -> Result<Vec<f64>, Error> {
    let n: usize = if cfg.quick { 5_000 } else { 100_000 };
    let results = Runtime::new(2).engine(engine).run_portable(move |bsp| {
        let w = bsplib::Window::<u64>::new(bsp, 1)?;
        let mut out = Vec::new();
        if bsp.pid() == 0 {
            let t = if own { 0 } else { 1 };
            for round in 0..=1 {
                let m = if round == 0 { n / 10 } else { n };
                let t0 = Instant::now();
                for i in 0..m {
                    let mut l = w.lock(bsp, t, bsplib::LockKind::Exclusive)?;
                    l.put(0, &[i as u64])?;
                }
                if round > 0 {
                    out.push(t0.elapsed().as_secs_f64() / m as f64);
                }
            }
        }
        bsp.sync()?;
        black_box(w.local(bsp)?[0]);
        w.free(bsp)?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Seconds per uncontended `Mutex` lock, 8-byte store and unlock.
fn bench_mutex(cfg: &Config) -> Vec<f64> {
    let n: usize = if cfg.quick { 100_000 } else { 1_000_000 };
    let m = std::sync::Mutex::new(0u64);
    let t0 = Instant::now();
    for i in 0..n {
        *black_box(&m).lock().unwrap_or_else(|e| e.into_inner()) = i as u64;
    }
    vec![t0.elapsed().as_secs_f64() / n as f64]
}

// ----- k. accumulate ------------------------------------------------------------

/// Seconds per superstep in which each of 2 processes accumulates (sum,
/// `acc`) or puts 1 Mi doubles into the other's registered area, then
/// syncs; one per repetition.
fn bench_accumulate(engine: Engine, acc: bool, cfg: &Config) -> Result<Vec<f64>, Error> {
    const N: usize = 1 << 20;
    let steps = if cfg.quick { 2 } else { 8 };
    let results = Runtime::new(2).engine(engine).run_portable(move |bsp| {
        let other = 1 - bsp.pid();
        let x = Area::from_vec(bsp, vec![0.5f64; N]);
        let src: Vec<f64> = (0..N).map(|i| i as f64 * 1e-3).collect();
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let mut out = Vec::new();
        for round in 0..=1 {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..if round == 0 { 2 } else { steps } {
                if acc {
                    bsp.accumulate(other, &src, &x, 0, bsplib::rma::Op::Sum)?;
                } else {
                    bsp.put(other, &src, &x, 0)?;
                }
                bsp.sync()?;
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / steps as f64);
            }
        }
        black_box(x.as_slice(bsp)[N - 1]);
        bsp.pop_reg(&x)?;
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
    /// The value itself (min and median) must be at most this, in the
    /// row's unit.
    Under(f64),
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
            (Target::Under(t), _) => (
                format!("<= {t} {}", self.unit),
                Some((self.value.min <= *t, self.value.median <= *t)),
            ),
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
    "usage: bench [--quick] [--reps N] [--only SECTIONS]   (sections: letters a-l of the header)";

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

/// Runs the sections asked for; the error of a run, or why a child run
/// failed.
fn run_all(cfg: &Config) -> Result<(), Box<dyn std::error::Error>> {
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
                    Target::AtMost(1.3, "spin barrier")
                } else {
                    Target::Info("(p > cores: must not collapse)")
                },
            });
        }
    }
    if cfg.wants('b') {
        // b. 16 MiB put / hpput / get vs memcpy, threads and processes.
        let engines: &[Engine] = &[Engine::Threads, Engine::Processes];
        let kinds = [
            Transfer::Put,
            Transfer::HpPut,
            Transfer::Get,
            Transfer::Owned,
        ];
        eprintln!("[bench] 16 MiB memcpy; put, hpput and get on threads and processes");
        let (mut memcpy, mut memcpy2) = (vec![], vec![]);
        let mut bw: Vec<Vec<f64>> = vec![Vec::new(); engines.len() * kinds.len()];
        for _ in 0..cfg.reps {
            memcpy.extend(bench_memcpy(1, 1, cfg));
            memcpy2.extend(bench_memcpy(2, 1, cfg));
            for (e, &engine) in engines.iter().enumerate() {
                for (k, &kind) in kinds.iter().enumerate() {
                    bw[e * kinds.len() + k].extend(bench_transfer(engine, kind, 1, cfg)?);
                }
            }
        }
        let memcpy = gibs(stats(&memcpy));
        let memcpy2 = gibs(stats(&memcpy2));
        rows.push(Row {
            name: "memcpy 16 MiB, 2 threads at once".into(),
            unit: "GiB/s",
            value: memcpy2,
            baseline: Some(("memcpy 16 MiB, 1 thread".into(), memcpy)),
            target: Target::Info("(info: each thread's share when both copy)"),
        });
        for (e, &engine) in engines.iter().enumerate() {
            for (k, &kind) in kinds.iter().enumerate() {
                let threads = engine == Engine::Threads;
                let target = match kind {
                    Transfer::Put => Target::AtLeast(0.5, "memcpy"),
                    Transfer::HpPut => Target::AtLeast(0.9, "memcpy"),
                    Transfer::Get if threads => Target::AtLeast(0.9, "memcpy (one copy)"),
                    Transfer::Get => Target::Info("(info: two copies between address spaces)"),
                    Transfer::Owned if threads => Target::AtLeast(0.9, "memcpy (one copy)"),
                    Transfer::Owned => Target::Info("(info: a put between address spaces)"),
                };
                rows.push(Row {
                    name: format!(
                        "{}{} 16 MiB, p=2",
                        if threads { "" } else { "proc " },
                        kind.name()
                    ),
                    unit: "GiB/s",
                    value: gibs(stats(&bw[e * kinds.len() + k])),
                    baseline: Some(("memcpy 16 MiB, 1 thread".into(), memcpy)),
                    target,
                });
            }
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
        // e. scaling: a superstep of one put per process against an empty
        // one, each configuration in a child process (its peak memory);
        // at p = 1024 the empty superstep against a futex barrier.
        let sweep: &[(Engine, usize)] = if cfg.quick {
            &[
                (Engine::Threads, 2),
                (Engine::Threads, 64),
                (Engine::Processes, 8),
            ]
        } else {
            &[
                (Engine::Threads, 2),
                (Engine::Threads, 8),
                (Engine::Threads, 64),
                (Engine::Threads, 256),
                (Engine::Threads, 1024),
                (Engine::Processes, 2),
                (Engine::Processes, 8),
                (Engine::Processes, 32),
            ]
        };
        let us = |s: Stats| Stats {
            min: s.min * 1e6,
            median: s.median * 1e6,
        };
        for &(engine, p) in sweep {
            let name = engine.name();
            eprintln!("[bench] scaling, {name}, p = {p}: empty superstep and one put each");
            let iters = if p >= 256 { 20 } else { 200 };
            let (empty, put, kib) = scale_in_child(engine, p, iters, cfg.reps)?;
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
            let mib = kib as f64 / 1024.0;
            rows.push(Row {
                name: format!(
                    "{short}peak memory, p={p}{}",
                    if engine == Engine::Threads {
                        ""
                    } else {
                        " (1 proc)"
                    }
                ),
                unit: "MiB",
                value: Stats {
                    min: mib,
                    median: mib,
                },
                baseline: None,
                target: if p == 1024 {
                    Target::Under(64.0)
                } else {
                    Target::Info("(the trend; target at p = 1024)")
                },
            });
            if engine == Engine::Threads && p == 1024 {
                eprintln!("[bench] futex barrier, 1024 threads");
                let futex = bench_futex(p, iters, cfg.reps);
                rows.push(Row {
                    name: format!("empty sync, p={p}"),
                    unit: "us",
                    value: us(stats(&empty)),
                    baseline: Some((format!("futex barrier, {p} thr"), us(stats(&futex)))),
                    target: Target::AtMost(2.0, "futex barrier"),
                });
            }
        }
    }

    if cfg.wants('f') {
        // f. one-word transfers on processes, per word moved, p = 32 vs 2.
        let (h, steps) = if cfg.quick { (256, 10) } else { (1024, 20) };
        let ps: &[usize] = if cfg.quick { &[2, 8] } else { &[2, 32] };
        let mut per_word = Vec::new();
        for &p in ps {
            eprintln!("[bench] processes, p = {p}: h = {h} single words per process");
            let (empty, full) = bench_words(Engine::Processes, p, h, steps, cfg.reps)?;
            let words = (h * p) as f64;
            let (e, f) = (stats(&empty), stats(&full));
            let w = Stats {
                min: (f.min - e.min) / words * 1e9,
                median: (f.median - e.median) / words * 1e9,
            };
            per_word.push((p, w));
        }
        let (p0, base) = per_word[0];
        for &(p, st) in &per_word[1..] {
            rows.push(Row {
                name: format!("proc ns per word moved, p={p}"),
                unit: "ns/word",
                value: st,
                baseline: Some((format!("the same, p={p0}"), base)),
                target: if p == 32 {
                    Target::AtMost(3.0, "p = 2")
                } else {
                    Target::Info("(the trend; target at p = 32)")
                },
            });
        }
    }

    if cfg.wants('g') {
        // g. whole programs on processes: an empty one, and 3 supersteps.
        let p = if cfg.quick { 64 } else { 1024 };
        for supersteps in [0usize, 3] {
            eprintln!("[bench] processes, p = {p}: a whole program of {supersteps} supersteps");
            let runs = if cfg.quick { 2 } else { 3 };
            let mut t = Vec::new();
            for _ in 0..runs {
                t.push(bench_program(p, supersteps)?);
            }
            rows.push(Row {
                name: format!("proc program, p={p}, {supersteps} ssteps"),
                unit: "s",
                value: stats(&t),
                baseline: None,
                target: if p == 1024 {
                    Target::Under(if supersteps == 0 { 5.0 } else { 10.0 })
                } else {
                    Target::Info("(the trend; target at p = 1024)")
                },
            });
        }
    }

    if cfg.wants('j') {
        // j. collectives against plain puts and syncs, threads.
        for p in [2usize, 4] {
            for (what, n, label) in [
                (Coll::Broadcast, 8, "broadcast 8 B"),
                (Coll::Broadcast, 16 << 20, "broadcast 16 MiB"),
                (Coll::AllReduce, 1, "all_reduce 1 double"),
                (Coll::AllReduce, 1 << 20, "all_reduce 1 Mi doubles"),
            ] {
                eprintln!("[bench] threads p = {p}: {label}");
                use bsplib::Algorithm;
                let (mut auto, mut one, mut two, mut plain) = (vec![], vec![], vec![], vec![]);
                for _ in 0..cfg.reps {
                    auto.extend(bench_collective(p, what, n, Some(Algorithm::Auto), cfg)?);
                    plain.extend(bench_collective(p, what, n, None, cfg)?);
                    one.extend(bench_collective(
                        p,
                        what,
                        n,
                        Some(Algorithm::OnePhase),
                        cfg,
                    )?);
                    two.extend(bench_collective(
                        p,
                        what,
                        n,
                        Some(Algorithm::TwoPhase),
                        cfg,
                    )?);
                }
                let us = |v: &[f64]| {
                    let s = stats(v);
                    Stats {
                        min: s.min * 1e6,
                        median: s.median * 1e6,
                    }
                };
                rows.push(Row {
                    name: format!("{label}, p={p}"),
                    unit: "us/op",
                    value: us(&auto),
                    baseline: Some(("plain puts + sync".into(), us(&plain))),
                    target: Target::Info("(the algorithm chosen by the cost)"),
                });
                rows.push(Row {
                    name: format!("{label}, p={p}, two-phase"),
                    unit: "us/op",
                    value: us(&two),
                    baseline: Some(("one-phase".into(), us(&one))),
                    target: Target::Info("(both forms, forced)"),
                });
            }
        }
    }
    if cfg.wants('i') {
        // i. active-message round trip against bsp_send and two syncs.
        for engine in [Engine::Threads, Engine::Processes] {
            eprintln!("[bench] {}: active-message round trip", engine.name());
            let (mut am, mut send) = (vec![], vec![]);
            for _ in 0..cfg.reps {
                am.extend(bench_roundtrip(engine, true, 1, cfg)?);
                send.extend(bench_roundtrip(engine, false, 1, cfg)?);
            }
            let name = engine.name();
            rows.push(Row {
                name: format!("{name} AM round trip"),
                unit: "ns",
                value: ns(stats(&am)),
                baseline: Some((format!("bsp_send + 2 syncs, {name}"), ns(stats(&send)))),
                target: Target::Info("(no target: the issue asks for the numbers)"),
            });
        }
    }
    if cfg.wants('k') {
        // k. accumulate of 1 Mi doubles against a put of the same bytes.
        for engine in [Engine::Threads, Engine::Processes] {
            eprintln!("[bench] {}: accumulate 1 Mi doubles", engine.name());
            let (mut acc, mut put) = (vec![], vec![]);
            for _ in 0..cfg.reps {
                acc.extend(bench_accumulate(engine, true, cfg)?);
                put.extend(bench_accumulate(engine, false, cfg)?);
            }
            let ms = |v: &[f64]| {
                let s = stats(v);
                Stats {
                    min: s.min * 1e3,
                    median: s.median * 1e3,
                }
            };
            let name = engine.name();
            rows.push(Row {
                name: format!("{name} accumulate 8 MiB (sum), p=2"),
                unit: "ms/sstep",
                value: ms(&acc),
                baseline: Some((format!("put of 8 MiB, {name}"), ms(&put))),
                target: Target::Info("(no target: the issue asks for the numbers)"),
            });
        }
    }
    if cfg.wants('l') {
        // l. post/start/complete/wait against sync on a ring; lock latency.
        let ps: &[usize] = if cfg.quick { &[8] } else { &[2, 8, 64] };
        for &p in ps {
            eprintln!("[bench] threads: ring exchange, post/start/complete/wait and sync, p = {p}");
            let (mut pscw, mut sync, mut win) = (vec![], vec![], vec![]);
            for _ in 0..cfg.reps {
                pscw.extend(bench_ring(p, true, cfg)?);
                sync.extend(bench_ring(p, false, cfg)?);
                win.extend(bench_ring_window(Engine::Threads, p, cfg)?);
            }
            let sync = us_stats(&sync);
            rows.push(Row {
                name: format!("ring exchange, post/start/complete/wait, p={p}"),
                unit: "us/round",
                value: us_stats(&pscw),
                baseline: Some((format!("the same with sync, p={p}"), sync)),
                target: Target::AtMost(1.0, "sync (faster, more so as p grows)"),
            });
            rows.push(Row {
                name: format!("ring exchange, Window epoch, p={p}"),
                unit: "us/round",
                value: us_stats(&win),
                baseline: Some((format!("the same with sync, p={p}"), sync)),
                target: Target::AtMost(1.0, "sync (faster, more so as p grows)"),
            });
        }
        eprintln!("[bench] threads: lock / put 8 bytes / unlock against a mutex");
        let (mut other, mut own, mut mutex) = (vec![], vec![], vec![]);
        for _ in 0..cfg.reps {
            other.extend(bench_lock(false, cfg)?);
            own.extend(bench_lock(true, cfg)?);
            mutex.extend(bench_mutex(cfg));
        }
        let mutex = us_stats(&mutex);
        rows.push(Row {
            name: "lock/put 8 B/unlock, other process, p=2".into(),
            unit: "us/epoch",
            value: us_stats(&other),
            baseline: Some(("uncontended Mutex lock/store/unlock".into(), mutex)),
            target: Target::Info("(one round trip to the target's progress point)"),
        });
        rows.push(Row {
            name: "lock/put 8 B/unlock, own area, p=2".into(),
            unit: "us/epoch",
            value: us_stats(&own),
            baseline: Some(("uncontended Mutex lock/store/unlock".into(), mutex)),
            target: Target::Info("(through this process's own inbox)"),
        });
        for engine in [Engine::Threads, Engine::Processes] {
            eprintln!(
                "[bench] {}: window lock / put 8 bytes / unlock against a mutex",
                engine.name()
            );
            let (mut other, mut own, mut mutex) = (vec![], vec![], vec![]);
            for _ in 0..cfg.reps {
                other.extend(bench_window_lock(engine, false, cfg)?);
                own.extend(bench_window_lock(engine, true, cfg)?);
                mutex.extend(bench_mutex(cfg));
            }
            let mutex = us_stats(&mutex);
            for (what, v) in [("other process", other), ("own memory", own)] {
                rows.push(Row {
                    name: format!("Window lock/put 8 B/unlock, {what}, {} p=2", engine.name()),
                    unit: "us/epoch",
                    value: us_stats(&v),
                    baseline: Some(("uncontended Mutex lock/store/unlock".into(), mutex)),
                    target: Target::Info("(straight into shared memory; the target makes no call)"),
                });
            }
        }
    }
    if cfg.wants('h') {
        // h. a matrix column: one strided put, single puts, a contiguous put.
        for (engine, cols) in [
            (Engine::Threads, 8),
            (Engine::Threads, 64),
            (Engine::Processes, 8),
            (Engine::Processes, 64),
        ] {
            eprintln!(
                "[bench] {}: a 4096-double column of 4096 x {cols}, strided, single puts, contiguous",
                engine.name()
            );
            let (mut strided, mut singles, mut contiguous) = (vec![], vec![], vec![]);
            let mut local = vec![];
            for _ in 0..cfg.reps {
                local.extend(bench_column_local(cols, 1, cfg));
                strided.extend(bench_column(engine, Column::Strided, cols, 1, cfg)?);
                singles.extend(bench_column(engine, Column::Singles, cols, 1, cfg)?);
                contiguous.extend(bench_column(engine, Column::Contiguous, cols, 1, cfg)?);
            }
            let us = |v: &[f64]| {
                let s = stats(v);
                Stats {
                    min: s.min * 1e6,
                    median: s.median * 1e6,
                }
            };
            let name = engine.name();
            rows.push(Row {
                name: format!("{name} 4096x{cols} column, strided"),
                unit: "us/sstep",
                value: us(&strided),
                baseline: Some((format!("4096 single puts, {name}"), us(&singles))),
                target: Target::AtMost(0.2, "single puts"),
            });
            rows.push(Row {
                name: format!("{name} 4096x{cols} column, strided"),
                unit: "us/sstep",
                value: us(&strided),
                baseline: Some((format!("contiguous 32 KiB put, {name}"), us(&contiguous))),
                target: Target::AtMost(1.5, "contiguous put"),
            });
            rows.push(Row {
                name: format!("{name} 4096x{cols} column, strided"),
                unit: "us/sstep",
                value: us(&strided),
                baseline: Some(("column gathered + scattered locally".into(), us(&local))),
                target: Target::Info("(the floor: the same two strided passes, no library)"),
            });
        }
    }

    println!();
    print_table(&rows);

    if !details.is_empty() {
        print_details(&details);
    }
    println!();
    println!(
        "total benchmark time: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The h-relation's table: time per superstep and g for each p and h.
fn print_details(details: &[(usize, usize, Stats, Stats)]) {
    println!();
    println!("h-relation detail (time per superstep; h = 0 is the empty sync, its g column is the fitted l)");
    println!(
        "{:>3} {:>7} | {:>12} {:>12} | {:>10} {:>10}",
        "p", "h", "T min (us)", "T med (us)", "g min", "g med"
    );
    for &(p, h, t, g) in details {
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
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child-scale") {
        return match child_scale(&args[2..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(why) => {
                eprintln!("bench --child-scale: {why}");
                ExitCode::FAILURE
            }
        };
    }
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
