//! How a failed run ends, run many times: the C programs of `tests/c/`
//! whose error comes after (or because of) `bsp_end`, two ordinary
//! errors and a `bsp_init` SPMD function returning without `bsp_end`, each run [`REPEAT`] times per engine with `bsprun`, P cycling
//! over 2..=4. Every run must:
//!
//! - end (no hang: [`TIMEOUT`], then the process group is killed), with a
//!   non-zero exit status;
//! - print the library's error exactly once, naming the call and the
//!   `file:line` of the `/* ERROR */` marker (the process and superstep
//!   where no call is to blame);
//! - have that `bsplib:` line as the last line of its standard error: no
//!   MPI_ABORT banner, `ORTE_ERROR_LOG` line or other Open MPI report
//!   after it (`bsprun --engine mpi` writes the error last, dropping
//!   Open MPI's reports after it);
//! - never print "not reached".
//!
//! The engines are `threads` and `processes`, or those named in
//! `BSPLIB_TEST_ENGINES` (comma-separated), as for `tests/c_programs.rs`:
//! `.ci/mpi` runs this file with `BSPLIB_TEST_ENGINES=mpi` (build with
//! `--features mpi`). On `mpi` the test is skipped, with a message, when
//! `mpirun` is not on `PATH` or the build lacks the feature.

mod harness;

use std::path::PathBuf;
use std::time::Duration;

use harness::{
    describe, indent_tail, lib_copy, marker_line, on_path, par_map, run, try_build, Outcome,
    C_FLAGS,
};

/// Runs of each program on each engine (the defects were 1 to 5 in 20).
const REPEAT: usize = 20;
/// A run taking longer than this is a hang.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A program, the call its error must name, and its smallest P.
struct Prog {
    file: &'static str,
    call: &'static str,
    min_p: usize,
    /// The error names the `file:line` of the `/* ERROR */` marker (an
    /// error no call makes, a process returning without `bsp_end`, names
    /// no line).
    located: bool,
}

#[rustfmt::skip]
const AFTER_END: &[Prog] = &[
    // A call after bsp_end: plain SPMD, bsp_init mode, bsp_abort.
    Prog { file: "err_call_after_end.c", call: "bsp_sync", min_p: 2, located: true },
    Prog { file: "err_call_after_end_init.c", call: "bsp_push_reg", min_p: 2, located: true },
    Prog { file: "err_abort_after_end.c", call: "bsp_abort", min_p: 2, located: true },
    // Two processes wait in a sync while the others ended: both find it.
    Prog { file: "err_two_wait_after_end.c", call: "bsp_sync", min_p: 3, located: true },
];

#[rustfmt::skip]
const ORDINARY: &[Prog] = &[
    Prog { file: "err_sync_after_end.c", call: "bsp_sync", min_p: 2, located: true },
    Prog { file: "err_put_out_of_bounds.c", call: "bsp_put", min_p: 2, located: true },
];

/// The engines to run on (those of `bsprun`); `mpi` only where it can run.
fn engines() -> Vec<String> {
    harness::engines()
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

/// A `bsp_init` SPMD function returning without `bsp_end` (process 1,
/// while the others wait in `bsp_sync`): issue 26 saw the mpi job exit 0
/// in 1 run of 6.
#[rustfmt::skip]
const SPMD_RETURNS: &[Prog] = &[
    Prog { file: "err_init_spmd_returns.c", call: "without calling bsp_end", min_p: 2, located: false },
];

#[test]
fn a_call_after_bsp_end_ends_the_run_once_cleanly_with_a_failure_status() {
    run_all(AFTER_END);
}

#[test]
fn an_error_is_printed_once_and_is_the_last_line_of_stderr() {
    run_all(ORDINARY);
}

#[test]
fn a_bsp_init_spmd_function_returning_without_bsp_end_always_fails_the_run() {
    run_all(SPMD_RETURNS);
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
        let out = run(exe, engine, p, &[p.to_string()], &[], TIMEOUT, |_, _| None);
        check(prog, &out).map_err(|why| {
            format!(
                "{} [engine {engine}, P = {p}]: {why}\n  status: {}\n  stdout:\n{}\n  stderr:\n{}",
                prog.file,
                describe(out.status),
                indent_tail(&out.stdout, usize::MAX),
                indent_tail(&out.stderr, usize::MAX)
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
    if let Some(problem) = out.problem() {
        return Err(problem);
    }
    if out.status.is_none_or(|s| s.code().is_none_or(|c| c == 0)) {
        return Err("expected a non-zero exit status".into());
    }
    if out.stdout.contains("not reached") {
        return Err("the program went on after the error".into());
    }
    let location = if prog.located {
        format!("{}:{}", prog.file, marker_line(prog.file)?)
    } else {
        "process 1, superstep 1".into()
    };
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

/// `bspcc <C_FLAGS> file -o <tmpdir>/error_endings/<stem>`, linking a
/// copy of the libbsp.so Cargo built for this test, made once: a
/// concurrent `cargo build` with other features cannot replace it under
/// the programs.
fn build(prog: &Prog) -> Result<PathBuf, String> {
    let libs = lib_copy("error_endings", &["libbsp.so"]);
    try_build(prog.file, "error_endings", C_FLAGS, &[], &libs)
        .map_err(|e| format!("{}: {e}", prog.file))
}
