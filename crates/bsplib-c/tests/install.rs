//! The compiler wrappers as an installed toolchain (issue 27): a prefix
//! laid out as `make install` lays it out (`bin/`, `lib/`, `include/`)
//! and then moved, where `bspcc` and `bspf90` find everything beside
//! themselves; `--showme[:compile|:link]`; Oxford's `-fcheck-syncs` (the
//! checking mode, on every engine of [`engines`]) and `-flibrary-level`;
//! usage errors; and a closed pipe on standard output. The whole install
//! from a fresh clone (pkg-config, CMake, man pages, `make uninstall`) is
//! `.ci/install-check`.

mod harness;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use harness::{bsprun, engines, lib_copy, on_path, run_command, BSPCC};

const BSPF90: &str = env!("CARGO_BIN_EXE_bspf90");
const BSPF77: &str = env!("CARGO_BIN_EXE_bspf77");
const TIMEOUT: Duration = Duration::from_secs(120);

/// Every process prints its greeting.
const HELLO: &str = r#"#include <stdio.h>
#include "bsp.h"
int main(void) {
    bsp_begin(bsp_nprocs());
    printf("hello %d of %d\n", bsp_pid(), bsp_nprocs());
    bsp_end();
    return 0;
}
"#;

/// Processes end superstep 0 at syncs on different lines.
const DIVERGING_SYNCS: &str = r#"#include <stdio.h>
#include "bsp.h"
int main(void) {
    bsp_begin(bsp_nprocs());
    if (bsp_pid() == 0)
        bsp_sync();
    else
        bsp_sync();
    if (bsp_pid() == 0)
        printf("ended\n");
    bsp_end();
    return 0;
}
"#;

struct Output {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` in its own process group under [`TIMEOUT`]; panics on a
/// hang or processes left behind.
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

/// A fresh directory for one test.
fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("install")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a test directory");
    dir
}

/// A copy of the libraries Cargo built for this test.
fn lib_dir() -> PathBuf {
    lib_copy("install", &["libbsp.so", "libbsp.a"])
}

/// `wrapper` with no compiler variables or library directory from the
/// caller's environment.
fn wrapper(exe: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(exe);
    cmd.current_dir(dir)
        .env_remove("BSPLIB_LIBDIR")
        .env_remove("CC")
        .env_remove("BSPCC_CC")
        .env_remove("BSPF90_FC")
        .env_remove("FC")
        .env_remove("BSPCC_DEPTH")
        .env_remove("LD_LIBRARY_PATH");
    cmd
}

/// A prefix as `make install` lays it out: the wrappers in `bin/`, the
/// libraries in `lib/`, the headers in `include/`.
fn make_prefix(prefix: &Path) {
    let source_include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    for sub in ["bin", "lib", "include"] {
        std::fs::create_dir_all(prefix.join(sub)).unwrap();
    }
    for (exe, name) in [(BSPCC, "bspcc"), (BSPF90, "bspf90")] {
        std::fs::copy(exe, prefix.join("bin").join(name)).unwrap();
    }
    for lib in ["libbsp.so", "libbsp.a"] {
        std::fs::copy(lib_dir().join(lib), prefix.join("lib").join(lib)).unwrap();
    }
    for header in ["bsp.h", "fbsp.h"] {
        std::fs::copy(
            source_include.join(header),
            prefix.join("include").join(header),
        )
        .unwrap();
    }
}

/// `bsprun` of `exe` on `engine` with `p` processes, in `dir`.
fn bsprun_in(dir: &Path, exe: &str, engine: &str, p: usize) -> Output {
    run(bsprun(&dir.join(exe), engine, p, &[], &[]).current_dir(dir))
}

/// The greetings of `p` processes, sorted.
fn greetings(p: usize) -> String {
    (0..p).map(|i| format!("hello {i} of {p}\n")).collect()
}

fn sorted_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn a_moved_prefix_compiles_links_and_runs_from_itself() {
    let dir = workdir("prefix");
    std::fs::write(dir.join("hello.c"), HELLO).unwrap();
    let first = dir.join("first");
    make_prefix(&first);
    // Moved as a whole: nothing may refer to the old place.
    let prefix = dir.join("moved prefix");
    std::fs::rename(&first, &prefix).unwrap();
    let bspcc = prefix.join("bin/bspcc");

    let compile = run(wrapper(&bspcc, &dir).arg("--showme:compile"));
    assert!(compile.status.success(), "{}", compile.stderr);
    assert_eq!(
        compile.stdout,
        format!("'-I{}'\n", prefix.join("include").display())
    );
    let link = run(wrapper(&bspcc, &dir).arg("--showme:link"));
    let libdir = prefix.join("lib");
    assert_eq!(
        link.stdout,
        format!(
            "'-L{0}' -Wl,--disable-new-dtags '-Wl,-rpath,{0}' -lbsp -lpthread -ldl -lm\n",
            libdir.display()
        )
    );
    let libs = run(wrapper(&bspcc, &dir).arg("--showme:libs"));
    assert_eq!(libs.stdout, "bsp pthread dl m\n");
    let shown = run(wrapper(&bspcc, &dir).args(["--showme", "hello.c", "-o", "hello"]));
    assert!(
        shown.stdout.starts_with(&format!(
            "cc '-I{}' hello.c -o hello '-L{}'",
            prefix.join("include").display(),
            libdir.display()
        )),
        "{}",
        shown.stdout
    );

    let built = run(wrapper(&bspcc, &dir).args(["hello.c", "-o", "hello"]));
    assert!(built.status.success(), "bspcc: {}", built.stderr);
    assert!(built.stderr.is_empty(), "bspcc: {}", built.stderr);
    for engine in engines() {
        let out = bsprun_in(&dir, "hello", &engine, 3);
        assert!(out.status.success(), "{engine}: {}", out.stderr);
        assert_eq!(sorted_lines(&out.stdout), greetings(3), "{engine}");
    }
    // The program loads the prefix's library (the rpath), not another.
    let ldd = Command::new("ldd").arg(dir.join("hello")).output().unwrap();
    let text = String::from_utf8_lossy(&ldd.stdout);
    assert!(
        text.contains(&format!("=> {}/libbsp.so", libdir.display())),
        "{text}"
    );

    // The headers found beside the wrapper, not the source tree's: a
    // prefix without bsp.h says where it looked.
    std::fs::remove_file(prefix.join("include/bsp.h")).unwrap();
    std::fs::write(prefix.join("include/bsp.h"), "#error prefix header\n").unwrap();
    let out = run(wrapper(&bspcc, &dir).args(["-c", "hello.c"]));
    assert!(
        !out.status.success() && out.stderr.contains("prefix header"),
        "{}",
        out.stderr
    );
}

#[test]
fn fortran_from_a_prefix() {
    if !on_path("gfortran") {
        eprintln!("skipping: gfortran is not on PATH");
        return;
    }
    let dir = workdir("fortran");
    let prefix = dir.join("prefix");
    make_prefix(&prefix);
    std::fs::write(
        dir.join("hello.f90"),
        "program hello\n  implicit none\n  include 'fbsp.h'\n  call bspbegin(bspnprocs())\n  \
         write (*, '(a,i0,a,i0)') 'hello ', bsppid(), ' of ', bspnprocs()\n  call bspend()\n\
         end program hello\n",
    )
    .unwrap();
    let bspf90 = prefix.join("bin/bspf90");
    let compile = run(wrapper(&bspf90, &dir).arg("--showme:compile"));
    assert_eq!(
        compile.stdout,
        format!(
            "-I{} -fallow-argument-mismatch -fno-tree-pta\n",
            prefix.join("include").display()
        )
    );
    let built = run(wrapper(&bspf90, &dir).args(["hello.f90", "-o", "hello"]));
    assert!(built.status.success(), "bspf90: {}", built.stderr);
    for engine in engines() {
        let out = bsprun_in(&dir, "hello", &engine, 2);
        assert!(out.status.success(), "{engine}: {}", out.stderr);
        assert_eq!(sorted_lines(&out.stdout), greetings(2), "{engine}");
    }
}

#[test]
fn check_syncs_turns_the_checking_mode_on() {
    let dir = workdir("check_syncs");
    std::fs::write(dir.join("syncs.c"), DIVERGING_SYNCS).unwrap();
    let bspcc = |args: &[&str]| {
        let mut cmd = wrapper(Path::new(BSPCC), &dir);
        cmd.env("BSPLIB_LIBDIR", lib_dir()).args(args);
        run(&mut cmd)
    };
    let shown = bspcc(&["--showme", "-fcheck-syncs", "-flibrary-level=2", "syncs.c"]);
    assert!(
        shown.stdout.contains("check_syncs.o") && !shown.stdout.contains("-flibrary-level"),
        "{}",
        shown.stdout
    );
    for (flags, exe) in [
        (&["-fcheck-syncs", "-flibrary-level", "0"][..], "checked"),
        (&[][..], "plain"),
    ] {
        let mut args = flags.to_vec();
        args.extend(["syncs.c", "-o", exe]);
        let out = bspcc(&args);
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "bspcc {args:?}: {}",
            out.stderr
        );
    }
    for engine in engines() {
        let out = bsprun_in(&dir, "checked", &engine, 2);
        assert!(
            !out.status.success() && out.stderr.contains("check-syncs"),
            "-fcheck-syncs on {engine}: {}\n{}{}",
            out.status,
            out.stdout,
            out.stderr
        );
        let out = bsprun_in(&dir, "plain", &engine, 2);
        assert!(
            out.status.success() && out.stdout == "ended\n",
            "without -fcheck-syncs on {engine}: {}\n{}",
            out.status,
            out.stderr
        );
    }
    // The environment still decides: BSPLIB_CHECK=0 turns it off.
    let mut cmd = bsprun(&dir.join("checked"), "threads", 2, &[], &[]);
    let out = run(cmd.current_dir(&dir).env("BSPLIB_CHECK", "0"));
    assert!(out.status.success(), "BSPLIB_CHECK=0: {}", out.stderr);
}

#[test]
fn usage_errors_are_short_and_exit_2() {
    let dir = workdir("usage");
    for exe in [BSPCC, BSPF90, BSPF77] {
        let name = Path::new(exe).file_name().unwrap().to_str().unwrap();
        for args in [
            &[][..],
            &["--showme:everything"],
            &["-flibrary-level=9", "a.c"],
        ] {
            let out = run(wrapper(Path::new(exe), &dir).args(args));
            assert_eq!(out.status.code(), Some(2), "{name} {args:?}");
            assert!(out.stdout.is_empty(), "{name} {args:?}: {}", out.stdout);
            let lines: Vec<&str> = out.stderr.lines().collect();
            assert_eq!(lines.len(), 2, "{name} {args:?}: {}", out.stderr);
            assert!(lines[0].starts_with(&format!("{name}: ")), "{}", lines[0]);
            assert!(
                lines[1].starts_with(&format!("Usage: {name} ")),
                "{}",
                lines[1]
            );
        }
        let help = run(wrapper(Path::new(exe), &dir).arg("--help"));
        assert!(help.status.success() && help.stdout.contains("--showme:compile"));
        let version = run(wrapper(Path::new(exe), &dir).arg("--version"));
        assert!(
            version.status.success()
                && version
                    .stdout
                    .contains(&format!("{name} (bsplib) {}", env!("CARGO_PKG_VERSION"))),
            "{name} --version: {}",
            version.stdout
        );
    }
}

#[test]
fn a_closed_pipe_ends_the_wrappers_quietly() {
    let dir = workdir("pipe");
    for exe in [BSPCC, BSPF90, BSPF77] {
        for args in [&["--version"][..], &["--help"], &["--showme:link"]] {
            let mut child = wrapper(Path::new(exe), &dir)
                .env("BSPLIB_LIBDIR", lib_dir())
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // `| true`: the reader goes away before anything is written.
            drop(child.stdout.take());
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            let status = child.wait().unwrap();
            assert!(
                !stderr.contains("panicked") && status.code() != Some(101),
                "{exe} {args:?}: {status}\n{stderr}"
            );
            assert!(stderr.is_empty(), "{exe} {args:?}: {stderr}");
        }
    }
}
