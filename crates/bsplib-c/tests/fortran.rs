//! The Fortran test programs of `tests/f/`, built with `bspf90` and run
//! with `bsprun` on every engine (`BSPLIB_TEST_ENGINES`, else `threads`
//! and `processes`; CI's MPI step sets `mpi`) and P = 1..4.
//!
//! Every program checks itself (`tests/f/fcheck.inc`: a failed check calls
//! `bspabort`). The tables say what each run must produce: exit status 0
//! and an exact stdout for the normal programs; for the error programs a
//! non-zero status and a stderr line naming the Fortran routine (`bspput`,
//! not C's `bsp_put`), `process <pid>` and `superstep <s>`. Fortran passes
//! no source location, so none is expected; each error program marks its
//! faulty call `! ERROR` all the same, for the reader.
//!
//! Without gfortran the tests say so and pass, except under CI (`CI=true`),
//! where they fail: `.ci/run` installs gfortran.

mod harness;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use harness::{
    bsprun, describe, has_number, indent_tail, lib_dir, out_dir, par_map, run_command, Outcome,
};

const BSPF90: &str = env!("CARGO_BIN_EXE_bspf90");
const BSPF77: &str = env!("CARGO_BIN_EXE_bspf77");
const NPROCS: [usize; 4] = [1, 2, 3, 4];
/// A run taking longer than this is a hang.
const TIMEOUT: Duration = Duration::from_secs(60);
/// Failure reports show this much of a run's output (the tail).
const SHOWN: usize = 4000;
/// Flags of every build: optimised, so that registered variables are
/// shown to live in memory across `bspsync` as the binding needs.
const FLAGS: &[&str] = &["-O2", "-g"];

/// What a run must produce.
#[derive(Clone, Copy)]
enum Expect {
    /// Exit status 0 and stdout exactly `ok\n`.
    Ok,
    /// Exit status 0 and exactly this stdout, given P.
    Stdout(fn(usize) -> String),
    /// Exit status 0 and these stdout lines in any order, given P.
    Lines(fn(usize) -> String),
    /// Non-zero status and a stderr line naming `routine`, `process <pid>`
    /// and `superstep <superstep>`. Skipped below `min_p`.
    Error {
        routine: &'static str,
        pid: usize,
        superstep: usize,
        min_p: usize,
    },
    /// Non-zero status, `stderr_has` in stderr, nothing on stdout.
    Fails {
        stderr_has: &'static str,
        min_p: usize,
    },
}

/// A program of `tests/f/` (with C files of its own, for a mixed one).
#[derive(Clone, Copy)]
struct Prog {
    file: &'static str,
    with: &'static [&'static str],
    expect: Expect,
}

const fn ok(file: &'static str) -> Prog {
    Prog {
        file,
        with: &[],
        expect: Expect::Ok,
    }
}

const fn err(
    file: &'static str,
    routine: &'static str,
    pid: usize,
    superstep: usize,
    min_p: usize,
) -> Prog {
    Prog {
        file,
        with: &[],
        expect: Expect::Error {
            routine,
            pid,
            superstep,
            min_p,
        },
    }
}

/// One program per routine (most use several).
#[rustfmt::skip]
const ROUTINES: &[Prog] = &[
    ok("begin_end.f90"),
    Prog { expect: Expect::Stdout(|_| "before\nok\nafter\n".into()), ..ok("init_mode.f90") },
    ok("time.f90"),
    ok("sync.f90"),
    ok("push_pop_reg.f90"),
    ok("put.f90"),
    ok("get.f90"),
    ok("hpput.f90"),
    ok("hpget.f90"),
    ok("set_tagsize.f90"),
    ok("bsmp.f90"),
    Prog { expect: Expect::Fails { stderr_has: "bspabort test: 42 forty-two\n", min_p: 1 }, ..ok("abort.f90") },
    Prog { with: &["mixed_helper.c"], ..ok("mixed.f90") },
    ok("level1.f90"),
];

/// The paper's and manual pages' examples, ported, results checked.
#[rustfmt::skip]
const PAPER_EXAMPLES: &[Prog] = &[
    ok("reverse.f90"),
    ok("put_array.f90"),
    ok("get_array.f"),
    ok("bsp_sum.f90"),
    ok("cyclic_shift.f90"),
    Prog { expect: Expect::Lines(allsums_out), ..ok("allsums.f90") },
    ok("sparse_vec.f90"),
];

/// One program per misuse; `err(file, routine, pid, superstep, min_p)`.
#[rustfmt::skip]
const ERRORS: &[Prog] = &[
    err("err_put_out_of_bounds.f90", "bspput", 1, 1, 2),
    err("err_get_unregistered.f90", "bspget", 0, 1, 1),
    err("err_hpput_pid_out_of_range.f90", "bsphpput", 0, 1, 1),
    err("err_hpget_negative_nbytes.f90", "bsphpget", 0, 2, 1),
    err("err_push_reg_mismatch.f90", "bsppushreg", 1, 0, 2),
    err("err_push_reg_negative_size.f90", "bsppushreg", 0, 0, 1),
    err("err_pop_reg_unregistered.f90", "bsppopreg", 0, 1, 1),
    err("err_put_to_unregistered_slot.f90", "bspput", 1, 1, 2),
    err("err_set_tagsize_negative.f90", "bspsettagsize", 0, 0, 1),
    err("err_send_pid_out_of_range.f90", "bspsend", 0, 1, 1),
    err("err_move_empty_queue.f90", "bspmove", 0, 1, 1),
    err("err_sync_after_end.f90", "bspsync", 0, 0, 1),
    err("err_pid_before_begin.f90", "bsppid", 0, 0, 1),
    err("err_init_after_begin.f90", "bspinit", 0, 1, 1),
    err("err_bcast_negative_nbytes.f90", "bspbcast", 0, 1, 1),
    Prog { expect: Expect::Fails { stderr_has: "process 1 aborts while the others wait in bspsync", min_p: 2 }, ..ok("err_abort_in_sync.f90") },
];

fn allsums_out(p: usize) -> String {
    (1..=p)
        .map(|y| format!("y={y} sums={}\n", y * (y + 1) / 2))
        .collect()
}

fn f_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("f")
}

/// Whether the Fortran tests can run: gfortran is there, or (outside CI)
/// a message says why they are skipped. Under CI its absence fails.
fn have_gfortran() -> bool {
    let found = Command::new("gfortran")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "gfortran is missing under CI: .ci/run installs it (apt-get install gfortran)"
        );
        eprintln!(
            "SKIPPED: gfortran is not installed (apt-get install gfortran): Fortran tests not run"
        );
    }
    found
}

/// `<wrapper> FLAGS file with... -o <out>/<stem>` in `tests/f`, with the
/// libbsp of this build.
fn build(wrapper: &str, file: &str, with: &[&str]) -> Result<PathBuf, String> {
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    let exe = out_dir("fortran").join(stem);
    let output = Command::new(wrapper)
        .env("BSPLIB_LIBDIR", lib_dir())
        .current_dir(f_dir())
        .args(FLAGS)
        .arg(file)
        .args(with)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run {wrapper}: {e}"))?;
    if output.status.success() {
        Ok(exe)
    } else {
        Err(format!(
            "{wrapper} {file} failed ({}):\n{}",
            output.status,
            indent_tail(&String::from_utf8_lossy(&output.stderr), SHOWN)
        ))
    }
}

fn min_p(expect: &Expect) -> usize {
    match *expect {
        Expect::Error { min_p, .. } | Expect::Fails { min_p, .. } => min_p,
        _ => 1,
    }
}

/// The line (from 1) of the single `! ERROR` marker of `file`.
fn marker_line(file: &str) -> Result<usize, String> {
    let text = std::fs::read_to_string(f_dir().join(file)).map_err(|e| format!("{file}: {e}"))?;
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_end().ends_with("! ERROR"))
        .map(|(i, _)| i + 1)
        .collect();
    match lines[..] {
        [line] => Ok(line),
        _ => Err(format!(
            "{file} must have one ! ERROR marker, has {}",
            lines.len()
        )),
    }
}

/// Checks one run against its expectation.
fn check(prog: &Prog, engine: &str, p: usize, out: &Outcome) -> Result<(), String> {
    if let Some(problem) = out.problem() {
        return Err(problem);
    }
    let want_success = matches!(
        prog.expect,
        Expect::Ok | Expect::Stdout(_) | Expect::Lines(_)
    );
    if out.status.is_none_or(|s| s.success() != want_success) {
        return Err(format!(
            "expected {}",
            if want_success {
                "exit status 0"
            } else {
                "a non-zero exit status"
            }
        ));
    }
    if want_success {
        if let Some(line) = out.stderr.lines().find(|l| l.starts_with("bsplib:")) {
            return Err(format!("a successful run reported {line:?}"));
        }
    }
    let sorted = |s: &str| {
        let mut v: Vec<&str> = s.lines().collect();
        v.sort_unstable();
        v.join("\n")
    };
    // Under mpirun, lines of different ranks may arrive in any order.
    let same = |want: &str| {
        if engine == "mpi" {
            sorted(want) == sorted(&out.stdout)
        } else {
            want == out.stdout
        }
    };
    match prog.expect {
        Expect::Ok if !same("ok\n") => Err("expected stdout \"ok\\n\"".into()),
        Expect::Stdout(f) if !same(&f(p)) => Err(format!("expected stdout:\n{}", f(p))),
        Expect::Lines(f) if sorted(&f(p)) != sorted(&out.stdout) => {
            Err(format!("expected these lines in any order:\n{}", f(p)))
        }
        Expect::Error {
            routine,
            pid,
            superstep,
            ..
        } => {
            marker_line(prog.file)?;
            let want = [format!("process {pid}"), format!("superstep {superstep}")];
            let named = |l: &str| {
                l.starts_with("bsplib: ")
                    && l.contains(&format!(" {routine} "))
                    && want.iter().all(|w| has_number(l, w))
            };
            if out.stderr.lines().any(named) {
                Ok(())
            } else {
                Err(format!(
                    "expected a stderr line \"bsplib: {routine} (...)\" naming {}",
                    want.join(", ")
                ))
            }
        }
        Expect::Fails { stderr_has, .. } => {
            if !out.stderr.contains(stderr_has) {
                Err(format!("expected {stderr_has:?} on stderr"))
            } else if !out.stdout.is_empty() {
                Err("expected nothing on stdout".into())
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// Builds every program once, runs each on every engine at each P it
/// applies to, and fails with the list of failing runs.
fn run_table(progs: &[Prog]) {
    if !have_gfortran() {
        return;
    }
    let built = par_map(progs, |prog| build(BSPF90, prog.file, prog.with));
    let mut failures: Vec<String> = built.iter().filter_map(|b| b.clone().err()).collect();
    let mut jobs = Vec::new();
    for (prog, exe) in progs.iter().zip(&built) {
        let Ok(exe) = exe else { continue };
        for engine in harness::engines() {
            for &p in NPROCS.iter().filter(|&&p| p >= min_p(&prog.expect)) {
                jobs.push((*prog, exe.clone(), engine.clone(), p));
            }
        }
    }
    let results = par_map(&jobs, |(prog, exe, engine, p)| {
        let outcome = run_command(
            &mut bsprun(exe, engine, *p, &[p.to_string()], &[]),
            None,
            TIMEOUT,
            |_, _| None,
        );
        check(prog, engine, *p, &outcome).map_err(|why| {
            format!(
                "{} [engine {engine}, P = {p}]: {why}\n  status: {}\n  stdout:\n{}\n  stderr:\n{}",
                prog.file,
                describe(outcome.status),
                indent_tail(&outcome.stdout, SHOWN),
                indent_tail(&outcome.stderr, SHOWN)
            )
        })
    });
    let passed = results.iter().filter(|r| r.is_ok()).count();
    failures.extend(results.into_iter().filter_map(Result::err));
    eprintln!("fortran: {passed} of {} runs passed", jobs.len());
    assert!(
        failures.is_empty(),
        "{} failure(s) ({passed} of {} runs passed):\n\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n\n")
    );
}

#[test]
fn each_routine_program_passes_on_every_engine_with_1_to_4_processes() {
    run_table(ROUTINES);
}

#[test]
fn paper_examples_in_fortran_give_the_documented_results() {
    run_table(PAPER_EXAMPLES);
}

#[test]
fn every_fortran_misuse_stops_the_run_naming_the_fortran_routine_process_and_superstep() {
    run_table(ERRORS);
}

/// The paper's style (a `REAL*8` array in one `bspput`, an `INTEGER`
/// scalar in the next, no interfaces) is an error for gfortran alone and
/// builds with `bspf90`; `bspf77` builds fixed-form source.
#[test]
fn bspf90_compiles_paper_style_programs_that_gfortran_alone_refuses() {
    if !have_gfortran() {
        return;
    }
    let plain = Command::new("gfortran")
        .current_dir(f_dir())
        .args(["-fsyntax-only", "put.f90"])
        .output()
        .expect("gfortran runs");
    assert!(
        !plain.status.success() && String::from_utf8_lossy(&plain.stderr).contains("Type mismatch"),
        "gfortran alone was expected to refuse put.f90's mixed argument types"
    );
    build(BSPF90, "put.f90", &[]).unwrap_or_else(|e| panic!("{e}"));
    let exe = build(BSPF77, "get_array.f", &[]).unwrap_or_else(|e| panic!("{e}"));
    let out = run_command(
        &mut bsprun(&exe, "processes", 2, &[], &[]),
        None,
        TIMEOUT,
        |_, _| None,
    );
    assert_eq!(
        (out.status.is_some_and(|s| s.success()), out.stdout.as_str()),
        (true, "ok\n"),
        "get_array.f built by bspf77: {}",
        out.stderr
    );
}
