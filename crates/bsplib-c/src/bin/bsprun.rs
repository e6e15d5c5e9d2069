//! `bsprun`: runs a BSPlib program with a chosen number of processes and
//! engine.
//!
//! ```text
//! bsprun [options] program [args...]
//! bsprun -np 4 ./prog input.txt
//! bsprun --engine=processes --nprocs 8 ./prog
//! ```
//!
//! The options (see [`usage`]) come before the program, in any order, the
//! last of a repeated one winning: `-np P` (also `-npes`, `-n`, `--np`,
//! `--nprocs`, `--np=P`, `--nprocs=P`) sets `BSPLIB_NPROCS`, `--engine E`
//! (one of [`ENGINES`]) sets `BSPLIB_ENGINE`; `--` ends the options. The
//! first other argument is the program, and all arguments after it go to the
//! program unchanged. `bsprun` then replaces itself with the program
//! (`exec`), so the exit status and signals are the program's own. It exits
//! with 2 on a usage error and 127 if the program cannot be run.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::fd::BorrowedFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

#[path = "loadavg/mod.rs"]
mod loadavg;
#[path = "bsprun/output.rs"]
mod output;
#[path = "bsprun/screen.rs"]
mod screen;
#[path = "bsprun/tags.rs"]
mod tags;

/// Every engine `--engine` accepts, as spelled in `BSPLIB_ENGINE`.
const ENGINES: [&str; 3] = ["threads", "processes", "mpi"];

/// The short usage printed after a usage error (with the error and a
/// pointer to `--help`).
const SYNOPSIS: &str = "Usage: bsprun [-np P] [--engine E] [options] program [args...]";

/// The help text printed by `--help`.
fn usage() -> String {
    format!(
        "\
Usage: bsprun [options] program [args...]

Runs a BSPlib program. Options come before the program; all arguments after
the program are passed to it unchanged.

Options:
  -np P, -npes P, -n P, --np P, --nprocs P, --np=P, --nprocs=P
                  number of processes (a positive integer)
  --engine E, --engine=E
                  engine: {}
  --deadline S, --deadline=S
                  stop the run when a process waits in bsp_sync longer
                  than S seconds, naming the processes that never arrived
                  and the superstep each was last seen in
  --profile DIR, --profile=DIR
                  profile the run: each process writes, at its end,
                  DIR/profile.<pid>.json (a Chrome / Perfetto trace with
                  every superstep's times, h-relation and sync line);
                  bspprof DIR makes a report of them. Warns first (one
                  line on standard error) when the machine is too busy
                  for the times to be the program's own: the 1-minute
                  load average, rounded, above the cores the run leaves
                  free, or more processes than cores
  --check         checking mode: stop the run when processes end a
                  superstep at syncs on different lines (check-syncs), when
                  puts from different processes overlap in one area in one
                  superstep, or when an hpput source / hpget destination
                  changes before its sync; each finding names the calls,
                  processes, superstep and lines
  --progress      show the superstep count, the rate and the slowest
                  process on the terminal (standard error), updated in
                  place, erased before the program's own output and at
                  the end (the program's output then passes through bsprun
                  on a pseudo-terminal; nothing if stderr is not a
                  terminal; BSPLIB_PROGRESS=force draws it anyway)
  --label         start every line of output with the process that printed
                  it: \"[2] text\" (processes and mpi engines; the threads
                  engine's processes share one output stream)
  --              end of options: the next argument is the program
  -h, --help      print this help and exit
  --version       print the version and the engines of this build, and exit

The number of processes: a program asks for P in bsp_begin(P) and gets at
most the processes available, which bsp_nprocs() reports before bsp_begin:
-np P (or BSPLIB_NPROCS=P) if given, else the machine's cores (mpi: the
job's ranks). A program that asks for more than that, as BSPedupack's do
(\"Sorry, only 2 processors available\"), needs -np: bsprun -np 4 ./bench,
or for scripts that run bsprun without -np (BSPedupack's runtests):
BSPLIB_NPROCS=4 ./runtests. More processes than cores run, slower.

Environment set for the program (only when the option is given):
  BSPLIB_NPROCS   the number of processes
  BSPLIB_ENGINE   the engine
  BSPLIB_DEADLINE the deadline, in seconds
  BSPLIB_PROFILE  the profile directory (made absolute)
  BSPLIB_CHECK    1 (--check)
  BSPLIB_PROGRESS 1 (--progress)
  BSPLIB_LABEL    1 (--label, processes engine)

Output comes in whole lines: several processes printing at once never cut
each other's lines (a line is written once its newline is; a line of
process 0 still unfinished after 0.25 s, a prompt, is written as it is).

Environment read by bsprun itself:
  BSPLIB_ENGINE   the engine when --engine is not given (default processes)
  BSPLIB_NPROCS   the processes when -np is not given (mpi: mpirun -np)
  BSPLIB_LOADAVG  replaces the load average read from /proc/loadavg (tests)
  BSPLIB_MPIRUN, BSPLIB_MPIRUN_FLAGS  the mpi engine's launcher (below)

Exit status: the program's (128 + signal if it was killed); 2 on a usage
error; 127 if the program cannot be run.

On Ctrl-C (SIGINT), and on SIGTERM, SIGHUP or SIGQUIT, bsprun prints where
every process is (computing in superstep s, or waiting in its bsp_sync)
before the program ends. If the program is killed by a signal that it could
not report itself (SIGKILL, say), bsprun names the processes and their
supersteps.

The mpi engine runs the program under mpirun -np P (P from -np, else
BSPLIB_NPROCS, else mpirun's default: the slots); set BSPLIB_MPIRUN to
choose the mpirun, and BSPLIB_MPIRUN_FLAGS for its options (default
\"--oversubscribe --bind-to none\"), e.g. \"--hostfile hosts\" for a cluster.
It passes every BSPLIB_ variable that is set (the ones above, and
BSPLIB_WINDOW_MEMORY, BSPLIB_MPI_SHARED_WINDOWS, BSPLIB_MPI_PROGRESS,
BSPLIB_MACHINE, ...) to every host with -x; the run-wide settings are
process 0's in any case.
",
        ENGINES.join(", ")
    )
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Action {
    /// Run a program.
    Run(Invocation),
    /// Print the usage text.
    Help,
    /// Print the version.
    Version,
}

/// A program to run and the settings to run it with.
#[derive(Debug, PartialEq, Eq)]
struct Invocation {
    /// `BSPLIB_NPROCS`, if an option gave it.
    nprocs: Option<usize>,
    /// `BSPLIB_ENGINE` (one of [`ENGINES`]), if an option gave it.
    engine: Option<&'static str>,
    /// `BSPLIB_DEADLINE` (seconds), if an option gave it.
    deadline: Option<String>,
    /// `BSPLIB_PROFILE` (a directory), if an option gave it.
    profile: Option<OsString>,
    /// `BSPLIB_CHECK=1` (`--check`).
    check: bool,
    /// `BSPLIB_PROGRESS=1` (`--progress`).
    progress: bool,
    /// `--label`: every line starts with `[pid] `.
    label: bool,
    /// The program, resolved through `PATH` if it has no `/`.
    program: OsString,
    /// The program's arguments.
    args: Vec<OsString>,
}

/// A malformed command line.
#[derive(Debug, PartialEq, Eq)]
enum UsageError {
    /// The option (named) needs a value but is the last argument.
    MissingValue(String),
    /// The value of a process-count option is not a positive integer.
    BadNprocs { option: String, value: String },
    /// The value of `--engine` is not one of [`ENGINES`].
    BadEngine(String),
    /// The value of `--deadline` is not a positive number of seconds.
    BadDeadline(String),
    /// An argument before the program looks like an option but is not one.
    UnknownOption(String),
    /// The command line names no program.
    NoProgram,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::MissingValue(option) => write!(f, "option {option} needs a value"),
            UsageError::BadNprocs { option, value } => write!(
                f,
                "{option}: the number of processes must be a positive integer, not '{value}'"
            ),
            UsageError::BadEngine(value) => write!(
                f,
                "--engine: unknown engine '{value}' (expected one of: {})",
                ENGINES.join(", ")
            ),
            UsageError::BadDeadline(value) => write!(
                f,
                "--deadline: the deadline must be a positive number of seconds, not '{value}'"
            ),
            UsageError::UnknownOption(option) => write!(f, "unknown option '{option}'"),
            UsageError::NoProgram => write!(f, "no program to run"),
        }
    }
}

/// Whether `arg` is to be read as an option: it starts with `-` and is not
/// just `-`.
fn is_option(arg: &OsStr) -> bool {
    let bytes = arg.as_encoded_bytes();
    bytes.len() > 1 && bytes[0] == b'-'
}

/// Parses the arguments after `bsprun` itself.
///
/// Hand-written rather than with clap: clap cannot express single-dash
/// multi-letter options such as `-np` and `-npes`, nor stop at the first
/// non-option so that the program's own options pass through untouched.
fn parse<S: AsRef<OsStr>>(args: &[S]) -> Result<Action, UsageError> {
    let mut nprocs = None;
    let mut engine = None;
    let mut deadline = None;
    let mut profile = None;
    let (mut check, mut progress, mut label) = (false, false, false);
    let mut rest = args.iter().map(AsRef::as_ref);
    while let Some(arg) = rest.next() {
        let program = if arg == "--" {
            rest.next().ok_or(UsageError::NoProgram)?
        } else if is_option(arg) {
            let text = arg.to_string_lossy();
            // `=` attaches a value to long options only.
            let (name, inline) = match text.split_once('=') {
                Some((name, value)) if name.starts_with("--") => (name, Some(value)),
                _ => (&*text, None),
            };
            let mut value = || match inline {
                Some(value) => Ok(value.to_owned()),
                None => rest
                    .next()
                    .map(|v| v.to_string_lossy().into_owned())
                    .ok_or_else(|| UsageError::MissingValue(name.to_owned())),
            };
            match (name, inline) {
                ("-h" | "--help", None) => return Ok(Action::Help),
                ("--version", None) => return Ok(Action::Version),
                ("-np" | "-npes" | "-n" | "--np" | "--nprocs", _) => {
                    nprocs = Some(parse_nprocs(name, value()?)?);
                }
                ("--engine", _) => engine = Some(parse_engine(value()?)?),
                ("--deadline", _) => deadline = Some(parse_deadline(value()?)?),
                ("--profile", _) => profile = Some(absolute(value()?)),
                ("--check", None) => check = true,
                ("--progress", None) => progress = true,
                ("--label", None) => label = true,
                _ => return Err(UsageError::UnknownOption(text.into_owned())),
            }
            continue;
        } else {
            arg
        };
        return Ok(Action::Run(Invocation {
            nprocs,
            engine,
            deadline,
            profile,
            check,
            progress,
            label,
            program: program.to_owned(),
            args: rest.map(OsStr::to_owned).collect(),
        }));
    }
    Err(UsageError::NoProgram)
}

/// The profile directory, absolute (the program may change directory).
fn absolute(dir: String) -> OsString {
    std::path::absolute(&dir).map_or_else(|_| dir.into(), Into::into)
}

/// The value of the process-count option `option`: a positive decimal
/// integer without sign.
fn parse_nprocs(option: &str, value: String) -> Result<usize, UsageError> {
    match value.parse::<usize>() {
        Ok(p) if p > 0 && value.bytes().all(|b| b.is_ascii_digit()) => Ok(p),
        _ => Err(UsageError::BadNprocs {
            option: option.to_owned(),
            value,
        }),
    }
}

/// The value of `--deadline`: a positive, finite number of seconds.
fn parse_deadline(value: String) -> Result<String, UsageError> {
    match value.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(value),
        _ => Err(UsageError::BadDeadline(value)),
    }
}

/// The engine named `value`, as its entry of [`ENGINES`].
fn parse_engine(value: String) -> Result<&'static str, UsageError> {
    ENGINES
        .into_iter()
        .find(|&e| e == value)
        .ok_or(UsageError::BadEngine(value))
}

/// The command that runs the program without a launcher.
fn direct_command(inv: &Invocation) -> Command {
    let mut command = Command::new(&inv.program);
    command.args(&inv.args);
    command
}

/// The command for the `mpi` engine: the program under `mpirun`
/// (`$BSPLIB_MPIRUN`, default `mpirun`) with `-np P`, the flags in
/// `$BSPLIB_MPIRUN_FLAGS` (split on whitespace; default
/// `--oversubscribe --bind-to none`, for one machine with fewer cores
/// than processes), and `-x` for the variables the ranks need. Under an
/// `mpirun` already (`OMPI_COMM_WORLD_SIZE` is set), the program runs
/// directly.
fn mpi_command(inv: &Invocation) -> Result<Command, String> {
    if !cfg!(feature = "mpi") {
        return Err("the mpi engine is not available in this build \
                    (install with make install MPI=1, or build with \
                    cargo build --release --features mpi)"
            .to_owned());
    }
    if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some() {
        return Ok(direct_command(inv));
    }
    let mpirun = std::env::var_os("BSPLIB_MPIRUN").unwrap_or_else(|| "mpirun".into());
    let flags = mpirun_flags();
    let mut command = Command::new(mpirun);
    // `-np`, else `BSPLIB_NPROCS` (a script running bsprun without -np,
    // such as BSPedupack's runtests): mpirun's own default is the slots.
    let nprocs = inv.nprocs.or_else(nprocs_from_env);
    if let Some(p) = nprocs {
        command.arg("-np").arg(p.to_string());
    }
    command.args(flags.split_whitespace());
    if !own_output_flags(&flags) {
        // Each rank's lines are put back together from the tags
        // (`bsprun/tags.rs`).
        command.arg("--tag-output");
    }
    command.args(["-x", "BSPLIB_ENGINE"]);
    if nprocs.is_some() {
        command.args(["-x", "BSPLIB_NPROCS"]);
    }
    // Every run-wide setting, to every host (the library also takes them
    // from process 0 at the start: engine/mpi/README.md, "Start"), and
    // every other BSPLIB_ variable set here (BSPLIB_WINDOW_MEMORY,
    // BSPLIB_MPI_SHARED_WINDOWS, BSPLIB_MPI_PROGRESS, BSPLIB_MACHINE, ...):
    // a rank sees only its node's login environment and what -x forwards.
    for (on, var) in [
        (inv.profile.is_some(), "BSPLIB_PROFILE"),
        (inv.check, "BSPLIB_CHECK"),
        (inv.progress, "BSPLIB_PROGRESS"),
        (inv.deadline.is_some(), "BSPLIB_DEADLINE"),
    ] {
        if on && std::env::var_os(var).is_none() {
            command.args(["-x", var]);
        }
    }
    let mut set: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("BSPLIB_") && !k.starts_with("BSPLIB_MPIRUN"))
        .filter(|k| k != "BSPLIB_ENGINE" && k != "BSPLIB_NPROCS")
        .collect();
    set.sort();
    for var in set {
        command.args(["-x", &var]);
    }
    command.arg(&inv.program).args(&inv.args);
    Ok(command)
}

/// `$BSPLIB_MPIRUN_FLAGS`, or the default `--oversubscribe --bind-to
/// none`.
fn mpirun_flags() -> String {
    std::env::var("BSPLIB_MPIRUN_FLAGS")
        .unwrap_or_else(|_| "--oversubscribe --bind-to none".to_owned())
}

/// Whether `flags` choose how `mpirun` writes the ranks' output itself
/// (its own tags, time stamps, XML, files): then it is passed on as it
/// comes, lines unmended and unlabelled.
fn own_output_flags(flags: &str) -> bool {
    flags.split_whitespace().any(|word| {
        let name = word.trim_start_matches('-');
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        word.starts_with('-')
            && ["tag-output", "timestamp-output", "xml", "output-filename"].contains(&name)
    })
}

/// Replaces this process with the invocation's program; returns only on
/// failure, with the exit code to use.
fn run(inv: &Invocation) -> ExitCode {
    let command = match inv.engine {
        Some("mpi") => mpi_command(inv),
        _ => Ok(direct_command(inv)),
    };
    let mut command = match command {
        Ok(command) => command,
        Err(message) => {
            eprintln!("bsprun: {message}");
            return ExitCode::from(2);
        }
    };
    if let Some(p) = inv.nprocs {
        command.env("BSPLIB_NPROCS", p.to_string());
    }
    if let Some(engine) = inv.engine {
        command.env("BSPLIB_ENGINE", engine);
    }
    let engine = inv
        .engine
        .map(str::to_owned)
        .or_else(|| std::env::var("BSPLIB_ENGINE").ok())
        .unwrap_or_else(|| "processes".into());
    if let Some(deadline) = &inv.deadline {
        command.env("BSPLIB_DEADLINE", deadline);
    }
    if let Some(dir) = &inv.profile {
        command.env("BSPLIB_PROFILE", dir);
        warn_if_busy(inv, &engine);
    }
    if inv.check {
        command.env("BSPLIB_CHECK", "1");
    }
    if inv.progress && std::env::var_os("BSPLIB_PROGRESS").is_none() {
        // Under mpirun the program's stderr is a pipe (mpirun's, relayed
        // by us): our own terminal decides there.
        // SAFETY: `isatty` has no preconditions.
        let tty = unsafe { libc::isatty(2) } == 1;
        let value = if engine == "mpi" && tty { "force" } else { "1" };
        command.env("BSPLIB_PROGRESS", value);
    }
    if inv.label {
        match engine.as_str() {
            "processes" => {
                command.env("BSPLIB_LABEL", "1");
            }
            "mpi" if !own_output_flags(&mpirun_flags()) => {}
            _ => {
                eprintln!(
                    "bsprun: --label is not available on the {engine} engine{}",
                    if engine == "mpi" {
                        " with BSPLIB_MPIRUN_FLAGS's own output options (--tag-output, \
                         --timestamp-output, --xml, --output-filename)"
                    } else {
                        ": its processes share one output stream"
                    }
                );
                return ExitCode::from(2);
            }
        }
    }
    if inv.engine == Some("mpi") && std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none() {
        let tagged = !own_output_flags(&mpirun_flags());
        // The progress view drawn by rank 0 on our terminal: the relay
        // erases it before the ranks' output (`screen.rs`).
        let drawn = progress_drawn(inv);
        return output::run_mpirun(command, &inv.program, tagged, inv.label, drawn);
    }
    if engine == "mpi" {
        let error = command.exec();
        eprintln!(
            "bsprun: cannot run {}: {error}",
            inv.program.to_string_lossy()
        );
        return ExitCode::from(127);
    }
    // The progress line drawn on the terminal: the program's output
    // through `bsprun`, which erases the line before it (`screen.rs`).
    let screen = if progress_drawn(inv) {
        screen::Relay::new(&mut command)
    } else {
        None
    };
    run_watched(command, &inv.program, &engine, screen)
}

/// `BSPLIB_NPROCS`, if it is a number of processes.
fn nprocs_from_env() -> Option<usize> {
    let v = std::env::var("BSPLIB_NPROCS").ok()?;
    v.trim().parse().ok().filter(|&p: &usize| p > 0)
}

/// Whether `--progress` draws its line: on our standard error if it is a
/// terminal, or anywhere with `BSPLIB_PROGRESS=force`.
fn progress_drawn(inv: &Invocation) -> bool {
    let forced =
        std::env::var("BSPLIB_PROGRESS").is_ok_and(|v| matches!(v.trim(), "force" | "always"));
    // SAFETY: `isatty` has no preconditions.
    inv.progress && (forced || unsafe { libc::isatty(2) } == 1)
}

/// `--profile`: one line on standard error when the times the profile
/// will hold cannot be the program's own: more processes than cores, or
/// a load average (before the run) above the cores it leaves free
/// (`loadavg`). The processes: `-np`, else `BSPLIB_NPROCS`, else the
/// cores (the C library's default). On `mpi` with hosts of its own
/// (`BSPLIB_MPIRUN_FLAGS`), this host's load says nothing: no check.
fn warn_if_busy(inv: &Invocation, engine: &str) {
    let cores = bsplib::available_processes();
    if engine == "mpi" {
        let flags = mpirun_flags();
        let elsewhere = flags.split_whitespace().any(|w| {
            let name = w.trim_start_matches('-');
            let name = name.split_once('=').map_or(name, |(n, _)| n);
            ["host", "H", "hostfile", "machinefile", "default-hostfile"].contains(&name)
        });
        if elsewhere {
            return;
        }
    }
    let procs = inv
        .nprocs
        .or_else(nprocs_from_env)
        .unwrap_or(if engine == "serial" { 1 } else { cores });
    if let Some((why, cause)) = loadavg::untrusted(bsplib::probe::load_average(), cores, procs) {
        eprintln!("bsprun: warning: {why}: the profile's times will include {cause}");
    }
}

/// The program of [`run_watched`], for the signal handler.
static CHILD_PID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// The last termination signal `bsprun` received (0: none).
static SIGNALLED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Notes a termination signal; the waiting loop of [`run_watched`] reports
/// and passes it on.
extern "C" fn note_signal(signal: libc::c_int) {
    SIGNALLED.store(signal, std::sync::atomic::Ordering::Relaxed);
}

/// Runs the program (`threads`, `processes`) as a child, with a status
/// board (a memory file whose descriptor the library finds in
/// `BSPLIB_STATUS_FD`) on which every process notes its superstep and
/// whether it waits in a sync. On a termination signal (Ctrl-C) this prints
/// where every process is, then passes the signal on; if the program dies
/// from a signal without having reported anything itself (`SIGKILL` cannot
/// be caught), this names the processes and their supersteps.
fn run_watched(
    mut command: Command,
    program: &OsStr,
    engine: &str,
    mut screen: Option<screen::Relay>,
) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    // SAFETY: memfd_create takes a NUL-terminated name; without
    // MFD_CLOEXEC the program inherits the descriptor.
    let fd = unsafe { libc::memfd_create(c"bsplib-status".as_ptr(), 0) };
    if fd >= 0 {
        command.env("BSPLIB_STATUS_FD", fd.to_string());
    }
    // What the program's processes wrote comes before anything said here
    // after its end (the output relay of `processes` may outlive process
    // 0 a moment).
    let mut holders = output::Holders::new();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            eprintln!("bsprun: cannot run {}: {error}", program.to_string_lossy());
            return ExitCode::from(127);
        }
    };
    if let Some(holders) = holders.as_mut() {
        holders.spawned();
    }
    // The command holds copies of the pseudo-terminal: its end is the
    // end of the program's output.
    drop(command);
    if let Some(screen) = screen.as_mut() {
        screen.start();
    }
    let pid = i32::try_from(child.id()).unwrap_or(0);
    CHILD_PID.store(pid, std::sync::atomic::Ordering::Relaxed);
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT] {
        // SAFETY: a zeroed sigaction is valid; the handler only stores to
        // an atomic. No SA_RESTART: waitpid returns EINTR on a signal.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = note_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(signal, &sa, std::ptr::null_mut());
        }
    }
    let mut interrupted = false;
    // Once a signal was passed on: when to end a program that ignores it.
    let mut kill_at: Option<std::time::Instant> = None;
    let status = loop {
        let mut raw = 0;
        // Blocking, unless a program that was passed a signal must be
        // watched for the moment it has to be killed.
        let flags = if kill_at.is_some() { libc::WNOHANG } else { 0 };
        // SAFETY: waits for our own child; `raw` is a live int.
        let r = unsafe { libc::waitpid(pid, &mut raw, flags) };
        if r == pid {
            break std::process::ExitStatus::from_raw(raw);
        }
        if let Some(at) = kill_at {
            if std::time::Instant::now() >= at {
                // SAFETY: kill(2) on our own child has no memory effects.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                kill_at = None;
            } else {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        let signal = SIGNALLED.swap(0, std::sync::atomic::Ordering::Relaxed);
        if signal != 0 {
            if !interrupted {
                interrupted = true;
                let places = describe(fd);
                // After the erase of the progress line, if one is drawn.
                screen::say(&format!(
                    "bsplib: interrupted by signal {signal} ({}){}\n",
                    signal_name(signal),
                    places
                ));
            }
            // SAFETY: kill(2) on our own child has no memory effects.
            unsafe { libc::kill(pid, signal) };
            // A program that ignores the signal (started in the background
            // by a shell, say) is killed two seconds later.
            kill_at.get_or_insert(std::time::Instant::now() + std::time::Duration::from_secs(2));
            continue;
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // Not our child any more (should not happen): use std's wait.
            break child
                .wait()
                .unwrap_or_else(|_| std::process::ExitStatus::from_raw(1 << 8));
        }
    };
    if let Some(screen) = screen {
        screen.finish();
    }
    if let Some(signal) = status.signal() {
        if let Some(holders) = &holders {
            holders.wait(std::time::Duration::from_secs(2));
        }
        // Read once: whether the program reported, and where each process was.
        let (reported, places) = read_board(fd).unwrap_or_default();
        let list = join_places(&places);
        if !interrupted && !reported {
            let name = signal_name(signal);
            match places.first() {
                Some((superstep, _)) if engine == "processes" => eprintln!(
                    "bsplib: the SPMD function (process 0, superstep {superstep}): process 0 was killed by signal {signal} ({name}); the others ended with it ({list})"
                ),
                _ => eprintln!(
                    "bsplib: {} was killed by signal {signal} ({name}), which ended all its processes (engine {engine}){}",
                    program.to_string_lossy(),
                    if list.is_empty() { String::new() } else { format!(": {list}") }
                ),
            }
        }
    }
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The status board `bsprun` passed the program in `fd`, if a run used it.
fn read_board(fd: i32) -> Option<(bool, Vec<(u64, String)>)> {
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` is the memory file this `bsprun` created, which it
    // never closes.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    bsplib::launch::describe_status(fd)
}

/// "process 0: computing in superstep 3; process 1: ...".
fn join_places(places: &[(u64, String)]) -> String {
    places
        .iter()
        .map(|(_, place)| place.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// ": process 0: computing in superstep 3; process 1: ..." from the board
/// in `fd`, or nothing.
fn describe(fd: i32) -> String {
    match read_board(fd) {
        Some((_, places)) if !places.is_empty() => format!(": {}", join_places(&places)),
        _ => String::new(),
    }
}

/// The name of signal `signal`, as `strsignal` gives it.
fn signal_name(signal: i32) -> String {
    // SAFETY: strsignal returns a pointer to a static or thread-local
    // string, read at once.
    unsafe {
        let s = libc::strsignal(signal);
        if s.is_null() {
            "unknown signal".into()
        } else {
            std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
        }
    }
}

/// The version line and the engines of this build: `threads, processes`,
/// and `mpi` with the MPI library it was built with.
fn version() -> String {
    let mut engines = ENGINES[..2].join(", ");
    if cfg!(feature = "mpi") {
        engines.push_str(", mpi");
        if let Some(library) = mpi_library() {
            engines.push_str(&format!(" ({library})"));
        }
    }
    format!(
        "bsprun (bsplib) {}\nengines: {engines}\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The MPI library libbsp was built with: the first words of
/// `MPI_Get_library_version` (which MPI allows before `MPI_Init`), such as
/// "Open MPI v4.1.2".
#[cfg(feature = "mpi")]
fn mpi_library() -> Option<String> {
    extern "C" {
        fn MPI_Get_library_version(version: *mut std::ffi::c_char, len: *mut i32) -> i32;
    }
    // MPI_MAX_LIBRARY_VERSION_STRING: 256 in Open MPI, 8192 in MPICH.
    let mut buf = vec![0 as std::ffi::c_char; 8192];
    let mut len = 0;
    // SAFETY: the buffer holds MPI_MAX_LIBRARY_VERSION_STRING characters
    // for every MPI this builds with; `len` is a live int.
    if unsafe { MPI_Get_library_version(buf.as_mut_ptr(), &mut len) } != 0 {
        return None;
    }
    let bytes: Vec<u8> = buf[..(len.max(0) as usize).min(buf.len())]
        .iter()
        .map(|&c| c as u8)
        .collect();
    let text = String::from_utf8_lossy(&bytes);
    let first = text.split([',', '\n', '\0']).next()?.trim();
    (!first.is_empty()).then(|| first.to_owned())
}

#[cfg(not(feature = "mpi"))]
fn mpi_library() -> Option<String> {
    None
}

/// Writes `text` to standard output; on a closed pipe (`bsprun --help |
/// true`) ends as a C program would, killed by `SIGPIPE`, silently.
fn print_out(text: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => die_of_sigpipe(),
        Err(e) => {
            eprintln!("bsprun: writing to standard output: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Ends this process by `SIGPIPE` (Rust ignores it by default: writes
/// fail with `EPIPE` instead).
fn die_of_sigpipe() -> ExitCode {
    // SAFETY: restores the default action and raises the signal, which
    // ends the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    ExitCode::from(128 + libc::SIGPIPE as u8)
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match parse(&args) {
        Ok(Action::Run(inv)) => run(&inv),
        Ok(Action::Help) => print_out(&usage()),
        Ok(Action::Version) => print_out(&version()),
        Err(error) => {
            eprintln!("bsprun: {error}\n{SYNOPSIS}\nTry 'bsprun --help' for more information.");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parse of `args`, summarised: for a run, the process count and
    /// engine (`-` if absent), `|` and the program's words; else its `Debug`.
    fn summary(args: &[&str]) -> String {
        match parse(args) {
            Ok(Action::Run(inv)) => {
                let np = inv.nprocs.map_or("-".into(), |p| p.to_string());
                let words = std::iter::once(&inv.program).chain(&inv.args);
                let words: Vec<_> = words.map(|w| w.to_string_lossy()).collect();
                format!("{np} {} | {}", inv.engine.unwrap_or("-"), words.join(" "))
            }
            Ok(action) => format!("{action:?}"),
            Err(error) => format!("{error:?}"),
        }
    }

    /// Checks each `(command line split on spaces, expected summary)` pair.
    fn check(cases: &[(&str, &str)]) {
        for (line, expected) in cases {
            let args: Vec<_> = line.split_whitespace().collect();
            assert_eq!(summary(&args), *expected, "bsprun {line}");
        }
    }

    #[test]
    fn spellings_order_and_pass_through() {
        for form in "-np 3|-npes 3|-n 3|--np 3|--nprocs 3|--np=3|--nprocs=3".split('|') {
            check(&[(&format!("{form} ./prog a"), "3 - | ./prog a")]);
        }
        check(&[
            ("--engine processes -np 2 p", "2 processes | p"),
            (
                "-np 5 --engine=mpi -n 2 --engine processes p",
                "2 processes | p",
            ),
            ("--engine=threads p", "- threads | p"),
            ("--engine mpi p", "- mpi | p"),
            ("-np 007 p", "7 - | p"),
            (
                "-np 2 ./p -np 7 --help -- -x",
                "2 - | ./p -np 7 --help -- -x",
            ),
            ("prog -h", "- - | prog -h"),
            ("- x", "- - | - x"),
            ("-np 2 -- -weird x", "2 - | -weird x"),
            ("-- -np 2", "- - | -np 2"),
            ("-np 2 --help prog", "Help"),
            ("-h", "Help"),
            ("--version", "Version"),
        ]);
    }

    #[test]
    fn profile_directory_made_absolute() {
        for line in ["--profile prof -np 2 p", "--profile=prof -np 2 p"] {
            let args: Vec<_> = line.split_whitespace().collect();
            let Ok(Action::Run(inv)) = parse(&args) else {
                panic!("bsprun {line}")
            };
            let dir = std::path::PathBuf::from(inv.profile.expect("a profile directory"));
            assert!(dir.is_absolute() && dir.ends_with("prof"), "{dir:?}");
        }
        assert_eq!(
            summary(&["-np", "2", "--profile"]),
            "MissingValue(\"--profile\")"
        );
    }

    #[test]
    fn check_and_progress_are_flags_before_the_program() {
        let Ok(Action::Run(inv)) = parse(&["--check", "--progress", "-np", "2", "p", "--check"])
        else {
            panic!("bsprun --check --progress")
        };
        assert!(inv.check && inv.progress);
        // After the program, the program's own argument.
        assert_eq!(inv.args, ["--check"]);
        let Ok(Action::Run(inv)) = parse(&["-np", "2", "p"]) else {
            panic!("bsprun -np 2 p")
        };
        assert!(!inv.check && !inv.progress);
        assert_eq!(summary(&["--check=1", "p"]), "UnknownOption(\"--check=1\")");
    }

    #[test]
    fn label_is_a_flag_and_mpiruns_own_output_options_are_seen() {
        let Ok(Action::Run(inv)) = parse(&["--label", "-np", "2", "p", "--label"]) else {
            panic!("bsprun --label -np 2 p --label")
        };
        assert!(inv.label);
        assert_eq!(inv.args, ["--label"]);
        assert_eq!(summary(&["--label=1", "p"]), "UnknownOption(\"--label=1\")");
        for flags in [
            "--oversubscribe --tag-output",
            "-timestamp-output",
            "--output-filename=d",
        ] {
            assert!(own_output_flags(flags), "{flags}");
        }
        assert!(!own_output_flags(
            "--oversubscribe --bind-to none --hostfile tag-output"
        ));
    }

    #[test]
    fn usage_errors() {
        for option in "-np -npes -n --np --nprocs --engine".split(' ') {
            check(&[(option, &format!("MissingValue({option:?})"))]);
        }
        for value in "0|-2|abc|+3|3x|2.5||99999999999999999999".split('|') {
            let expected = format!(r#"BadNprocs {{ option: "-np", value: {value:?} }}"#);
            assert_eq!(summary(&["-np", value, "p"]), expected);
        }
        for option in "-x --verbose -np=4 --help=yes -NP".split(' ') {
            let expected = format!("UnknownOption({option:?})");
            check(&[(&format!("{option} p"), &expected)]);
        }
        check(&[
            ("--np=0 p", r#"BadNprocs { option: "--np", value: "0" }"#),
            ("--engine gpu p", r#"BadEngine("gpu")"#),
            ("--engine= p", r#"BadEngine("")"#),
            ("", "NoProgram"),
            ("-np 4 --engine threads", "NoProgram"),
            ("-np 2 --", "NoProgram"),
        ]);
    }

    #[test]
    fn messages() {
        let (option, value) = ("-np".to_owned(), "0".to_owned());
        let bad = UsageError::BadNprocs { option, value };
        let message = "-np: the number of processes must be a positive integer, not '0'";
        assert_eq!(bad.to_string(), message);
        let unknown = UsageError::UnknownOption("-x".into());
        assert_eq!(unknown.to_string(), "unknown option '-x'");
    }
}
