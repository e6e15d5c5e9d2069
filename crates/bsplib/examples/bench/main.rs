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
//! b. A 16 MiB `put`, `hpput` (from a vector, and from an `Area`), `get`
//!    and `put_owned` between two processes, each sending to (or fetching
//!    from) the other, on threads and processes, against single-thread
//!    `memcpy` of 16 MiB; then the hpputs and the get of 1 MiB on
//!    processes against `memcpy` of 1 MiB; for information, also two
//!    threads copying the same bytes each at the same time.
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
//!    call to `run` to its return.
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

use std::process::ExitCode;
use std::time::{Duration, Instant};

use report::print_table;

mod accumulate; // k
mod active_messages; // i
mod bandwidth; // b
mod collectives; // j
mod hrelation; // c, f
mod one_sided; // l
mod programs; // g
mod registration; // d
mod report; // statistics and the table
mod scaling; // e
mod strided; // h
mod sync; // a
mod timing; // the bounded loop, process 0's result

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
        sync::section(cfg, &mut rows)?;
    }
    if cfg.wants('b') {
        bandwidth::section(cfg, &mut rows)?;
    }
    if cfg.wants('c') {
        hrelation::section(cfg, &mut rows, &mut details)?;
    }
    if cfg.wants('d') {
        registration::section(cfg, &mut rows)?;
    }
    if cfg.wants('e') {
        scaling::section(cfg, &mut rows)?;
    }

    if cfg.wants('f') {
        hrelation::section_words(cfg, &mut rows)?;
    }

    if cfg.wants('g') {
        programs::section(cfg, &mut rows)?;
    }

    if cfg.wants('j') {
        collectives::section(cfg, &mut rows)?;
    }
    if cfg.wants('i') {
        active_messages::section(cfg, &mut rows)?;
    }
    if cfg.wants('k') {
        accumulate::section(cfg, &mut rows)?;
    }
    if cfg.wants('l') {
        one_sided::section(cfg, &mut rows)?;
    }
    if cfg.wants('h') {
        strided::section(cfg, &mut rows)?;
    }

    println!();
    print_table(&rows);

    if !details.is_empty() {
        hrelation::print_details(&details);
    }
    println!();
    println!(
        "total benchmark time: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child-scale") {
        return match scaling::child_scale(&args[2..]) {
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
