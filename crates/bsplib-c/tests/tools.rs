//! `bspcc` as a user meets it: `make CC=bspcc` (which exports `CC=bspcc`
//! to bspcc itself), a compiler wrapper that leads back to bspcc, `--help`,
//! `--version`, no input file, and `--bsp-static` (with Open MPI's
//! libraries when libbsp has the mpi engine: built and run on `mpi` too
//! when `mpicc` and `mpirun` are on `PATH`, else that part is skipped with
//! a message). Every command runs under a time limit in its own process
//! group: a bspcc that ran itself would be killed and reported, not left to
//! fill the machine.

mod harness;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

use harness::{bsprun, lib_copy, on_path, run_command, BSPCC};

const TIMEOUT: Duration = Duration::from_secs(60);

/// A program that needs libbsp: process 0 prints `static ok <p>`.
const PROGRAM: &str = r#"#include <stdio.h>
#include "bsp.h"
int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs();
    bsp_sync();
    if (bsp_pid() == 0)
        printf("ok %d\n", p);
    bsp_end();
    return 0;
}
"#;

struct Output {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` (stdin from /dev/null) in its own process group; panics,
/// after killing the group, if it takes longer than [`TIMEOUT`] or leaves
/// processes behind.
fn run(cmd: &mut Command) -> Output {
    let what = format!("{cmd:?}");
    let out = run_command(cmd, None, TIMEOUT, |_, _| None);
    match (out.status, out.problem()) {
        (Some(status), None) => Output {
            status,
            stdout: out.stdout,
            stderr: out.stderr,
        },
        (_, problem) => panic!(
            "{what}: {}",
            problem.unwrap_or_else(|| "no exit status".into())
        ),
    }
}

/// A fresh directory for one test, holding `prog.c`.
fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("tools")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a test directory");
    std::fs::write(dir.join("prog.c"), PROGRAM).expect("prog.c");
    dir
}

/// A copy of the libraries Cargo built for this test (beside this binary),
/// which a concurrent `cargo build` with other features cannot replace.
fn lib_dir() -> PathBuf {
    lib_copy("tools", &["libbsp.so", "libbsp.a"])
}

/// `bspcc` in `dir`, with the test's libraries and no compiler variables
/// from the caller's environment.
fn bspcc(dir: &Path) -> Command {
    let mut cmd = Command::new(BSPCC);
    cmd.current_dir(dir)
        .env("BSPLIB_LIBDIR", lib_dir())
        .env_remove("CC")
        .env_remove("BSPCC_CC")
        .env_remove("BSPCC_DEPTH")
        .env_remove("LD_LIBRARY_PATH");
    cmd
}

/// `bsprun <args>` of `prog` in `dir`: must print `ok <p>`.
fn check_runs(dir: &Path, prog: &str, engine: &str, p: usize) {
    let out = run(bsprun(&dir.join(prog), engine, p, &[], &[]).current_dir(dir));
    assert!(
        out.status.success() && out.stdout == format!("ok {p}\n"),
        "{prog} on {engine}: {}\nstdout: {}\nstderr: {}",
        out.status,
        out.stdout,
        out.stderr
    );
}

#[test]
fn make_cc_bspcc_compiles_with_cc_instead_of_running_bspcc_again() {
    if !on_path("make") {
        eprintln!("skipping: make is not on PATH");
        return;
    }
    let dir = workdir("make");
    std::fs::write(
        dir.join("Makefile"),
        "prog: prog.c\n\t$(CC) prog.c -o prog\n",
    )
    .unwrap();
    let out = run(Command::new("make")
        .current_dir(&dir)
        .env("BSPLIB_LIBDIR", lib_dir())
        .env_remove("BSPCC_CC")
        .env_remove("BSPCC_DEPTH")
        .arg(format!("CC={BSPCC}")));
    assert!(
        out.status.success(),
        "make CC=bspcc: {}\n{}{}",
        out.status,
        out.stdout,
        out.stderr
    );
    // GNU make exports CC=bspcc to the recipe: bspcc skips its own name
    // without a word (once per compile would flood a build's output).
    assert!(
        out.stderr.is_empty(),
        "make CC=bspcc must be silent:\n{}",
        out.stderr
    );
    check_runs(&dir, "prog", "processes", 2);
}

#[test]
fn cc_or_bspcc_cc_naming_bspcc_by_name_or_path_falls_back_to_cc() {
    let dir = workdir("cc_self");
    let bin_dir = Path::new(BSPCC).parent().unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin_dir.to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let cases: [(&str, &str); 3] = [("CC", "bspcc"), ("CC", BSPCC), ("BSPCC_CC", "bspcc -O2")];
    for (i, (var, value)) in cases.into_iter().enumerate() {
        let exe = format!("prog{i}");
        let out = run(bspcc(&dir)
            .env("PATH", &path)
            .env(var, value)
            .args(["prog.c", "-o", &exe]));
        assert!(
            out.status.success(),
            "{var}={value}: {}\n{}",
            out.status,
            out.stderr
        );
        // CC naming bspcc (make CC=bspcc) is skipped silently; BSPCC_CC
        // naming it is the user's mistake and is said once.
        let expected = usize::from(var == "BSPCC_CC");
        assert_eq!(
            out.stderr.lines().count(),
            expected,
            "{var}={value}: {expected} message(s) expected:\n{}",
            out.stderr
        );
        if expected == 1 {
            assert!(
                out.stderr.contains(&format!("ignoring {var}=")),
                "{}",
                out.stderr
            );
        }
        check_runs(&dir, &exe, "threads", 2);
    }
}

#[test]
fn a_compiler_wrapper_that_runs_bspcc_again_is_stopped() {
    let dir = workdir("wrapper");
    let wrapper = dir.join("wrap.sh");
    std::fs::write(&wrapper, format!("#!/bin/sh\nexec '{BSPCC}' \"$@\"\n")).unwrap();
    let mut perms = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&wrapper, perms).unwrap();
    let out = run(bspcc(&dir)
        .env("BSPCC_CC", &wrapper)
        .args(["prog.c", "-o", "prog"]));
    assert!(!out.status.success(), "the loop must fail");
    assert!(
        out.stderr.contains("refusing to run") && out.stderr.contains("BSPCC_DEPTH"),
        "{}",
        out.stderr
    );
}

#[test]
fn help_and_version_are_bspccs_own() {
    let dir = workdir("help");
    for flag in ["--help", "-h", "--bsp-help"] {
        let out = run(bspcc(&dir).arg(flag));
        assert!(out.status.success(), "bspcc {flag}: {}", out.status);
        assert!(
            out.stdout.starts_with("Usage: bspcc")
                && [
                    "--bsp-static",
                    "--bsp-show",
                    "BSPCC_CC",
                    "BSPLIB_LIBDIR",
                    "bsprun"
                ]
                .iter()
                .all(|w| out.stdout.contains(w)),
            "bspcc {flag}:\n{}",
            out.stdout
        );
        assert!(out.stderr.is_empty(), "bspcc {flag}: {}", out.stderr);
    }
    let out = run(bspcc(&dir).arg("--version"));
    assert!(out.status.success(), "bspcc --version: {}", out.status);
    let last = out.stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("bspcc (bsplib) {}", env!("CARGO_PKG_VERSION"))),
        "{}",
        out.stdout
    );
}

#[test]
fn no_input_file_is_an_error_with_a_line_of_usage() {
    let dir = workdir("no_input");
    for args in [
        &[][..],
        &["-O2", "-Wall"],
        &["-o", "prog"],
        &["--bsp-static"],
    ] {
        let out = run(bspcc(&dir).args(args));
        assert_eq!(out.status.code(), Some(2), "bspcc {args:?}");
        assert!(out.stdout.is_empty(), "bspcc {args:?}: {}", out.stdout);
        assert_eq!(
            out.stderr.lines().count(),
            2,
            "bspcc {args:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr
                .starts_with("bspcc: no input files\nUsage: bspcc "),
            "{}",
            out.stderr
        );
    }
    // A query of the compiler needs no input: it still reaches the compiler.
    let out = run(bspcc(&dir).arg("-dumpversion"));
    assert!(out.status.success() && !out.stdout.is_empty());
}

#[test]
fn bsp_static_links_and_runs_also_with_the_mpi_engine() {
    let dir = workdir("static");
    let archive = std::fs::read(lib_dir().join("libbsp.a")).unwrap();
    let mpi = archive.windows(16).any(|w| w == b"MPI_Init_thread\0");
    if mpi && !on_path("mpicc") && std::env::var_os("BSPCC_MPI_LIBS").is_none() {
        eprintln!("skipping: libbsp.a has the mpi engine, and mpicc (Open MPI) is not on PATH");
        return;
    }
    let show = run(bspcc(&dir).args(["--bsp-static", "--bsp-show", "prog.c", "-o", "prog"]));
    assert!(show.status.success(), "{}", show.stderr);
    assert_eq!(
        show.stdout.contains("-lmpi"),
        mpi,
        "Open MPI's libraries exactly when libbsp.a has the mpi engine:\n{}",
        show.stdout
    );
    let out = run(bspcc(&dir).args(["--bsp-static", "prog.c", "-o", "prog"]));
    assert!(
        out.status.success(),
        "bspcc --bsp-static: {}\n{}",
        out.status,
        out.stderr
    );
    check_runs(&dir, "prog", "processes", 2);
    check_runs(&dir, "prog", "threads", 3);
    if mpi && on_path("mpirun") {
        check_runs(&dir, "prog", "mpi", 2);
    } else if mpi {
        eprintln!("skipping the mpi run: mpirun is not on PATH");
    }
}
