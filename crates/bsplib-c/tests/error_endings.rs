//! How a failed run ends, run many times: the C programs of `tests/c/`
//! whose error comes after (or because of) `bsp_end`, and two ordinary
//! errors, each run [`REPEAT`] times per engine with `bsprun`, P cycling
//! over 2..=4. Every run must:
//!
//! - end (no hang: [`TIMEOUT`], then the process group is killed), with a
//!   non-zero exit status;
//! - print the library's error exactly once, naming the call and the
//!   `file:line` of the `/* ERROR */` marker;
//! - have that `bsplib:` line as the last line of its standard error: no
//!   MPI_ABORT banner, `ORTE_ERROR_LOG` line or other Open MPI report
//!   after it (`bsprun --engine mpi` drops what follows the error);
//! - never print "not reached".
//!
//! The engines are `threads` and `processes`, or those named in
//! `BSPLIB_TEST_ENGINES` (comma-separated), as for `tests/c_programs.rs`:
//! `.ci/mpi` runs this file with `BSPLIB_TEST_ENGINES=mpi` (build with
//! `--features mpi`). On `mpi` the test is skipped, with a message, when
//! `mpirun` is not on `PATH` or the build lacks the feature.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const BSPCC: &str = env!("CARGO_BIN_EXE_bspcc");
const BSPRUN: &str = env!("CARGO_BIN_EXE_bsprun");
/// Runs of each program on each engine (the defects were 1 to 5 in 20).
const REPEAT: usize = 20;
/// A run taking longer than this is a hang.
const TIMEOUT: Duration = Duration::from_secs(60);
/// Runs at once (the machine has 2 cores).
const WORKERS: usize = 2;

/// A program, the call its error must name, and its smallest P.
struct Prog {
    file: &'static str,
    call: &'static str,
    min_p: usize,
}

#[rustfmt::skip]
const AFTER_END: &[Prog] = &[
    // A call after bsp_end: plain SPMD, bsp_init mode, bsp_abort.
    Prog { file: "err_call_after_end.c", call: "bsp_sync", min_p: 2 },
    Prog { file: "err_call_after_end_init.c", call: "bsp_push_reg", min_p: 2 },
    Prog { file: "err_abort_after_end.c", call: "bsp_abort", min_p: 2 },
    // Two processes wait in a sync while the others ended: both find it.
    Prog { file: "err_two_wait_after_end.c", call: "bsp_sync", min_p: 3 },
];

#[rustfmt::skip]
const ORDINARY: &[Prog] = &[
    Prog { file: "err_sync_after_end.c", call: "bsp_sync", min_p: 2 },
    Prog { file: "err_put_out_of_bounds.c", call: "bsp_put", min_p: 2 },
];

/// The engines to run on; `mpi` only where it can run.
fn engines() -> Vec<String> {
    let listed: Vec<String> = match std::env::var("BSPLIB_TEST_ENGINES") {
        Ok(list) => list.split(',').map(|e| e.trim().to_owned()).collect(),
        Err(_) => vec!["threads".into(), "processes".into()],
    };
    listed
        .into_iter()
        .filter(|engine| {
            if engine != "mpi" {
                return true;
            }
            if !cfg!(feature = "mpi") {
                eprintln!("skipping the mpi engine: build with --features mpi");
                return false;
            }
            if !on_path("mpirun") {
                eprintln!("skipping the mpi engine: mpirun is not on PATH");
                return false;
            }
            true
        })
        .collect()
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(name).is_file()))
}

#[test]
fn a_call_after_bsp_end_ends_the_run_once_cleanly_with_a_failure_status() {
    run_all(AFTER_END);
}

#[test]
fn an_error_is_printed_once_and_is_the_last_line_of_stderr() {
    run_all(ORDINARY);
}

fn run_all(progs: &[Prog]) {
    let engines = engines();
    if engines.is_empty() {
        return;
    }
    let built = par_map(progs, build);
    let mut failures: Vec<String> = built.iter().filter_map(|b| b.clone().err()).collect();
    let mut jobs = Vec::new();
    for (prog, exe) in progs.iter().zip(&built) {
        let Ok(exe) = exe else { continue };
        for engine in &engines {
            for i in 0..REPEAT {
                let p = prog.min_p + i % (5 - prog.min_p);
                jobs.push((prog, exe.as_path(), engine.as_str(), p));
            }
        }
    }
    let results = par_map(&jobs, |&(prog, exe, engine, p)| {
        let out = run(exe, engine, p);
        check(prog, &out).map_err(|why| {
            format!(
                "{} [engine {engine}, P = {p}]: {why}\n  status: {}\n  stdout:\n{}\n  stderr:\n{}",
                prog.file,
                describe(out.status),
                indent(&out.stdout),
                indent(&out.stderr)
            )
        })
    });
    let passed = results.iter().filter(|r| r.is_ok()).count();
    failures.extend(results.into_iter().filter_map(Result::err));
    eprintln!(
        "{passed} of {} runs passed (engines {})",
        jobs.len(),
        engines.join(", ")
    );
    assert!(
        failures.is_empty(),
        "{} failure(s) ({passed} of {} runs passed):\n\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n\n")
    );
}

fn check(prog: &Prog, out: &Outcome) -> Result<(), String> {
    if let Some(problem) = &out.problem {
        return Err(problem.clone());
    }
    if out.status.is_none_or(|s| s.code().is_none_or(|c| c == 0)) {
        return Err("expected a non-zero exit status".into());
    }
    if out.stdout.contains("not reached") {
        return Err("the program went on after the error".into());
    }
    let location = format!("{}:{}", prog.file, marker_line(prog.file)?);
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("bsplib:"))
        .collect();
    match errors[..] {
        [line] if line.contains(prog.call) && line.contains(&location) => {}
        [_] => {
            return Err(format!(
                "expected the error to name {} and {location}",
                prog.call
            ))
        }
        _ => return Err(format!("expected one bsplib: line, found {}", errors.len())),
    }
    let last = out.stderr.lines().rev().find(|l| !l.trim().is_empty());
    if !last.is_some_and(|l| l.starts_with("bsplib:")) {
        return Err("the bsplib: error is not the last line of stderr".into());
    }
    for noise in ["MPI_ABORT", "ORTE_ERROR_LOG", "mpirun"] {
        if out.stderr.contains(noise) {
            return Err(format!("Open MPI's report ({noise}) on stderr"));
        }
    }
    Ok(())
}

/// The line (from 1) of the single `/* ERROR */` marker in `file`.
fn marker_line(file: &str) -> Result<usize, String> {
    let text = std::fs::read_to_string(c_dir().join(file)).map_err(|e| format!("{file}: {e}"))?;
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("/* ERROR */"))
        .map(|(i, _)| i + 1)
        .collect();
    match lines[..] {
        [line] => Ok(line),
        _ => Err(format!("{file}: expected one /* ERROR */ marker")),
    }
}

fn c_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c")
}

/// A copy of the libbsp.so Cargo built for this test (beside this binary),
/// made once: the programs link the copy, which a concurrent `cargo build`
/// with other features cannot replace under them.
fn lib_dir() -> PathBuf {
    static COPY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    COPY.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary's path");
        let built = exe.parent().expect("a directory").join("libbsp.so");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("error_endings/lib");
        std::fs::create_dir_all(&dir).expect("a directory for libbsp.so");
        std::fs::copy(&built, dir.join("libbsp.so"))
            .unwrap_or_else(|e| panic!("copying {}: {e}", built.display()));
        dir
    })
    .clone()
}

/// `bspcc -std=c99 ... file -o <tmpdir>/<stem>`, in `tests/c`.
fn build(prog: &Prog) -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("error_endings");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let exe = dir.join(prog.file.trim_end_matches(".c"));
    let output = Command::new(BSPCC)
        .env("BSPLIB_LIBDIR", lib_dir())
        .current_dir(c_dir())
        .args([
            "-std=c99",
            "-D_POSIX_C_SOURCE=200809L",
            "-Wall",
            "-Werror",
            "-g",
        ])
        .arg(prog.file)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run bspcc: {e}"))?;
    if output.status.success() {
        Ok(exe)
    } else {
        Err(format!(
            "{}: bspcc failed: {}",
            prog.file,
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

struct Outcome {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    problem: Option<String>,
}

/// `bsprun --engine <engine> -np <p> <exe> <p>` in its own process group,
/// under [`TIMEOUT`].
fn run(exe: &Path, engine: &str, p: usize) -> Outcome {
    let mut child = Command::new(BSPRUN)
        .env_remove("LD_LIBRARY_PATH")
        .args(["--engine", engine, "-np", &p.to_string()])
        .arg(exe)
        .arg(p.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {BSPRUN}: {e}"));
    let group = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    let pipes: [Box<dyn Read + Send>; 2] = [
        Box::new(child.stdout.take().unwrap()),
        Box::new(child.stderr.take().unwrap()),
    ];
    for (i, mut pipe) in pipes.into_iter().enumerate() {
        let tx = tx.clone();
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = tx.send((i, bytes));
        });
    }
    let deadline = Instant::now() + TIMEOUT;
    let mut problem = None;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for bsprun") {
            break Some(status);
        }
        if Instant::now() >= deadline {
            problem = Some(format!("no exit after {TIMEOUT:?}: a hang (killed)"));
            kill_group(group);
            break child.wait().ok();
        }
        thread::sleep(Duration::from_millis(5));
    };
    let mut output = [Vec::new(), Vec::new()];
    for _ in 0..2 {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok((i, bytes)) => output[i] = bytes,
            Err(_) => {
                problem.get_or_insert_with(|| {
                    "processes left behind kept stdout/stderr open (killed)".into()
                });
                kill_group(group);
            }
        }
    }
    let [stdout, stderr] = output.map(|b| String::from_utf8_lossy(&b).into_owned());
    Outcome {
        status,
        stdout,
        stderr,
        problem,
    }
}

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

/// SIGKILL to every process of the group `group`.
fn kill_group(group: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; it has no
    // memory-safety preconditions.
    unsafe { kill(-group, 9) };
}

fn describe(status: Option<ExitStatus>) -> String {
    match status {
        None => "unknown".into(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => s.to_string(),
        },
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    | {l}\n")).collect()
}

/// `f` over `items` on [`WORKERS`] threads; results in the order of `items`.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                *results[i].lock().unwrap() = Some(f(item));
            });
        }
    });
    results
        .into_iter()
        .map(|m| m.into_inner().unwrap().expect("every item is done"))
        .collect()
}
