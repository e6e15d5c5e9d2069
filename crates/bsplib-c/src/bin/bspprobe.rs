//! `bspprobe`: measures the machine's BSP parameters g, l, n½ and s per
//! engine and p (as Bisseling's `bspbench` does: h-relations of growing
//! h, a least-squares fit of `T(h) = l + g·h`), prints them with their
//! spread over the repetitions, and stores them where programs find them
//! (`bsplib::probe`: `Bsp::machine`, C's `bsp_g()` ..., `bspprof`, the
//! collectives' choice).
//!
//! ```text
//! bspprobe [--engine E[,E...]] [-p P[,P...]] [--quick] [--reps N] [--store FILE | --no-store] [-v]
//! ```

use std::ffi::OsString;
use std::process::{Command, ExitCode};

use bsplib::probe::{self, Measurement, Options};
use bsplib::{Engine, Runtime};

#[path = "loadavg/mod.rs"]
mod loadavg;

/// The short usage printed after a usage error.
const SYNOPSIS: &str = "Usage: bspprobe [--engine E,...] [-p P,...] [--quick] [--reps N] [--store FILE | --no-store] [-v]";

fn usage() -> String {
    format!(
        "\
Usage: bspprobe [options]

Measures the BSP parameters of this machine for each engine and number of
processes (h-relations of single 8-byte puts and of large puts, fitted by
least squares as bspbench does), prints them with their range over the
repetitions, and stores them for programs (Bsp::machine, bsp_g() ...,
bspprof, the collectives).

Units: g in seconds per byte (printed in ns/byte; asymptotic, large puts),
l in seconds (printed in us), nhalf in bytes (the message length reaching
half the asymptotic bandwidth: a put of n bytes costs g*(n + nhalf)),
g_word = g*(1 + nhalf/8) (bspbench's g, single 8-byte puts), s in flop/s
(an in-cache DAXPY).

Options:
  --engine LIST   engines, comma-separated: threads, processes, serial, mpi
                  (default threads,processes; mpi runs this program under
                  mpirun -np P with BSPLIB_MPIRUN_FLAGS, default
                  --oversubscribe --bind-to none)
  -p LIST         numbers of processes, comma-separated (default {})
  --quick         a short probe (15 repetitions of short measurements; well
                  under 10 s at p = 2)
  --reps N        repetitions (default 31, quick 15)
  --store FILE    the store (default: $BSPLIB_MACHINE, else
                  $XDG_CACHE_HOME/bsplib/machine.json, else
                  ~/.cache/bsplib/machine.json)
  --no-store      print only
  -v, --verbose   also print the fitted points: seconds per superstep for
                  each h (bspbench's table)
  -h, --help      print this help and exit
  --version       print the version and exit

The figures are this machine's only when the probe has its cores to
itself: before measuring, bspprobe warns (one line on standard error)
when the 1-minute load average, rounded, exceeds the cores the largest p
leaves free, or when p exceeds the cores. BSPLIB_LOADAVG replaces the
load average read from /proc/loadavg (for tests).

Exit status: 0; 1 if a measurement failed or could not be stored; 2 on a
usage error.
",
        default_procs()
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// 2, and the machine's hardware threads if more.
fn default_procs() -> Vec<usize> {
    let cores = bsplib::available_processes();
    if cores > 2 {
        vec![2, cores]
    } else {
        vec![2]
    }
}

/// What the command line asks for.
#[derive(Debug)]
enum Action {
    Run(Cli),
    Help,
    Version,
}

#[derive(Debug)]
struct Cli {
    engines: Vec<Engine>,
    procs: Vec<usize>,
    quick: bool,
    reps: Option<usize>,
    store: Option<Option<std::path::PathBuf>>,
    verbose: bool,
}

fn list<T>(v: &str, what: &str, f: impl Fn(&str) -> Option<T>) -> Result<Vec<T>, String> {
    let items: Vec<T> = v
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| f(s).ok_or_else(|| format!("{what}: '{s}' is not valid")))
        .collect::<Result<_, _>>()?;
    if items.is_empty() {
        return Err(format!("{what}: an empty list"));
    }
    Ok(items)
}

fn parse(args: &[OsString]) -> Result<Action, String> {
    let mut cli = Cli {
        engines: vec![Engine::Threads, Engine::Processes],
        procs: default_procs(),
        quick: false,
        reps: None,
        store: None,
        verbose: false,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let text = arg.to_string_lossy();
        let (name, inline) = match text.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (text.to_string(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().map(|v| v.to_string_lossy().into_owned()))
                .ok_or_else(|| format!("option {name} needs a value"))
        };
        match name.as_str() {
            "-h" | "--help" => return Ok(Action::Help),
            "--version" => return Ok(Action::Version),
            "--engine" => {
                cli.engines = list(&value()?, "--engine", |s| {
                    Engine::from_name(s).filter(|e| *e != Engine::Serial || s == "serial")
                })?
            }
            "-p" | "--procs" => {
                cli.procs = list(&value()?, "-p", |s| {
                    s.parse().ok().filter(|&p: &usize| p > 0)
                })?
            }
            "--quick" => cli.quick = true,
            "--reps" => {
                let v = value()?;
                cli.reps = Some(
                    v.parse()
                        .ok()
                        .filter(|&n: &usize| n > 0)
                        .ok_or_else(|| format!("--reps: not a positive count: '{v}'"))?,
                );
            }
            "--store" => cli.store = Some(Some(value()?.into())),
            "--no-store" => cli.store = Some(None),
            "-v" | "--verbose" => cli.verbose = true,
            _ => return Err(format!("unknown argument '{name}'")),
        }
    }
    Ok(Action::Run(cli))
}

fn options(cli: &Cli) -> Options {
    let mut o = if cli.quick {
        Options::quick()
    } else {
        Options::default()
    };
    if let Some(r) = cli.reps {
        o.reps = r;
    }
    o
}

const HEADER: &str = "engine       p  g (ns/byte)              l (us)                nhalf (bytes)     g_word (ns/byte)  s (Gflop/s)  residual  reps";

fn row(m: &Measurement) -> String {
    let mm = &m.machine;
    format!(
        "{:<10} {:>3}  {:<24} {:<21} {:<17} {:<17} {:<12} {:<9} {}",
        m.engine.name(),
        m.nprocs,
        format!(
            "{:.3} [{:.3}-{:.3}]",
            mm.g * 1e9,
            m.g_range.0 * 1e9,
            m.g_range.1 * 1e9
        ),
        format!(
            "{:.2} [{:.2}-{:.2}]",
            mm.l * 1e6,
            m.l_range.0 * 1e6,
            m.l_range.1 * 1e6
        ),
        format!(
            "{:.0} [{:.0}-{:.0}]",
            mm.nhalf, m.nhalf_range.0, m.nhalf_range.1
        ),
        format!("{:.2}", mm.g_word() * 1e9),
        format!("{:.2}", mm.s * 1e-9),
        format!("{:.1}%", m.residual * 100.0),
        m.reps
    )
}

/// The fitted points, for `--verbose`.
fn points(m: &Measurement) -> String {
    let mut out = String::from(
        "    single words, h (words per process): us per superstep
     ",
    );
    for (h, t) in &m.word_points {
        out += &format!(" {h}: {:.2}", t * 1e6);
    }
    out += "\n    large puts, h (bytes per process): us per superstep\n     ";
    for (h, t) in &m.bulk_points {
        out += &format!(" {h}: {:.2}", t * 1e6);
    }
    out
}

/// Prints the row of `m` (and its points if asked).
fn print(cli: &Cli, m: &Measurement) {
    println!("{}", row(m));
    if cli.verbose {
        println!("{}", points(m));
    }
}

/// Stores `m` where the command line says; prints where, or why not.
fn store(cli: &Cli, m: &Measurement) -> Result<(), String> {
    let result = match &cli.store {
        Some(None) => return Ok(()),
        Some(Some(path)) => probe::save_to(path, m).map(|()| path.clone()),
        None => probe::save(m),
    };
    result
        .map(|path| {
            println!(
                "  stored {} p = {} in {}",
                m.engine.name(),
                m.nprocs,
                path.display()
            )
        })
        .map_err(|e| format!("cannot store the measurement: {e}"))
}

/// Under `mpirun` already: measures the job's ranks (rank 0 prints and
/// stores).
fn inside_mpirun(cli: &Cli) -> Result<(), String> {
    let size: usize = std::env::var("OMPI_COMM_WORLD_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or("OMPI_COMM_WORLD_SIZE is not a number")?;
    let runtime = Runtime::new(size).engine(Engine::Mpi);
    let m = probe::measure(&runtime, &options(cli)).map_err(|e| e.to_string())?;
    // Only rank 0 returns from the run.
    print(cli, &m);
    store(cli, &m)
}

/// Runs this program under `mpirun -np p` for the mpi engine.
fn via_mpirun(p: usize, args: &[OsString]) -> Result<(), String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find bspprobe itself: {e}"))?;
    let mpirun = std::env::var_os("BSPLIB_MPIRUN").unwrap_or_else(|| "mpirun".into());
    let flags = std::env::var("BSPLIB_MPIRUN_FLAGS")
        .unwrap_or_else(|_| "--oversubscribe --bind-to none".to_owned());
    let mut command = Command::new(&mpirun);
    command
        .arg("-np")
        .arg(p.to_string())
        .args(flags.split_whitespace())
        .args(["-x", "BSPLIB_ENGINE=mpi"]);
    if std::env::var_os("BSPLIB_MACHINE").is_some() {
        command.args(["-x", "BSPLIB_MACHINE"]);
    }
    command.arg(me).args(args).arg("--engine=mpi");
    let status = command
        .status()
        .map_err(|e| format!("cannot run {}: {e}", mpirun.to_string_lossy()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("mpirun -np {p} failed ({status})"))
    }
}

fn main() -> ExitCode {
    // A closed standard output (`bspprobe | head -1`) ends bspprobe as it
    // ends C tools, by SIGPIPE, silently (Rust's default, ignoring it,
    // makes print! panic).
    // SAFETY: restores the default action of one signal, before any
    // thread is started.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let cli = match parse(&args) {
        Ok(Action::Run(cli)) => cli,
        Ok(Action::Help) => {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Ok(Action::Version) => {
            println!("bspprobe (bsplib) {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("bspprobe: {e}\n{SYNOPSIS}\nTry 'bspprobe --help' for more information.");
            return ExitCode::from(2);
        }
    };
    if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some() && cli.engines.contains(&Engine::Mpi) {
        return match inside_mpirun(&cli) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                // One write: under a plain `mpirun` the lines of several ranks then
                // never break into each other.
                let line = format!("bspprobe: {e}\n");
                eprint!("{line}");
                ExitCode::FAILURE
            }
        };
    }
    let opts = options(&cli);
    println!(
        "bspprobe: host {}, bsplib {}, {} (up to {} repetitions; figures: each superstep timed, a fifth of the way up per h; [ranges]: each repetition alone)",
        probe::hostname(),
        env!("CARGO_PKG_VERSION"),
        if cli.quick { "quick" } else { "full" },
        opts.reps
    );
    // Before the first measurement: later, the load average includes the
    // probe's own.
    let most = cli.procs.iter().copied().max().unwrap_or(1);
    let cores = bsplib::available_processes();
    if let Some((why, cause)) = loadavg::untrusted(bsplib::probe::load_average(), cores, most) {
        eprintln!(
            "bspprobe: warning: {why}: the figures will include {cause}, not this machine's g and l"
        );
    }
    println!("{HEADER}");
    let mut failed = false;
    for &engine in &cli.engines {
        if !engine.is_available() {
            eprintln!(
                "bspprobe: the {} engine is not in this build (cargo build --release --features mpi)",
                engine.name()
            );
            failed = true;
            continue;
        }
        for &p in &cli.procs {
            if engine == Engine::Serial && p != 1 {
                continue;
            }
            let outcome = if engine == Engine::Mpi {
                // mpirun's rank 0 prints the row and stores.
                via_mpirun(p, &strip_engine(&args))
            } else {
                probe::measure(&Runtime::new(p).engine(engine), &opts)
                    .map_err(|e| e.to_string())
                    .and_then(|m| {
                        print(&cli, &m);
                        store(&cli, &m)
                    })
            };
            if let Err(e) = outcome {
                eprintln!("bspprobe: {} p = {p}: {e}", engine.name());
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `args` without the engines and the numbers of processes (an mpirun
/// job measures its own size; the caller adds `--engine=mpi`).
fn strip_engine(args: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let t = a.to_string_lossy();
        if t == "--engine" || t == "-p" || t == "--procs" {
            it.next();
        } else if !(t.starts_with("--engine=") || t.starts_with("--procs=")) {
            out.push(a.clone());
        }
    }
    out
}
