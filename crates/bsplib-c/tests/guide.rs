//! The user guide's C and Fortran programs (`guide/src/*.md`), built with
//! `bspcc` / `bspf90` and run with `bsprun` on every engine
//! (`BSPLIB_TEST_ENGINES`, else `threads` and `processes`; CI's MPI step
//! sets `mpi`), their output checked: what the guide shows runs.
//!
//! The convention, in a chapter's Markdown:
//!
//! - A complete program is a fenced block whose info string is `c` or
//!   `fortran` followed by comma-separated attributes: `run:P` (run it with
//!   `bsprun -np P`), `file:NAME` (its file name, which errors print),
//!   `check` to run it in the checking mode (`BSPLIB_CHECK=1`, as
//!   `bsprun --check`), and `fails` for a program whose run must end with
//!   an error, as in
//!   ` ```c,run:4,file:hello.c `. Blocks without `run:` are fragments,
//!   never built. (`key:value`, not `key=value`: rustdoc, which reads the
//!   same Markdown for the Rust examples, warns about `=` there.)
//! - The program's expected output is the next ` ```text,output ` block
//!   (its stdout lines, in any order: processes print at once), and for a
//!   failing program the next ` ```text,stderr ` block (each of its lines
//!   must occur in a line of stderr: a message whose reporting process
//!   varies is shown from its first fixed word), both before the next
//!   program.
//!
//! Also checked here, for the Rust side: every fenced block of the guide
//! has a language (rustdoc would take an unmarked block for Rust), and
//! every chapter of `SUMMARY.md` is included by `crates/bsplib/src/lib.rs`
//! (its `guide` doc-tests), so that the Rust examples of every chapter are
//! compiled and run by `cargo test --doc -p bsplib`.
//!
//! Without gfortran the Fortran programs are skipped with a message,
//! except under CI (`CI=true`), where that fails.

mod harness;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use harness::{describe, engines, indent_tail, lib_dir, out_dir, par_map, run, BSPCC};

const BSPF90: &str = env!("CARGO_BIN_EXE_bspf90");
/// A run taking longer than this is a hang.
const TIMEOUT: Duration = Duration::from_secs(60);

fn guide_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guide/src")
}

/// The chapters `SUMMARY.md` lists, as file names.
fn chapters() -> Vec<String> {
    let summary = std::fs::read_to_string(guide_dir().join("SUMMARY.md"))
        .expect("guide/src/SUMMARY.md is readable");
    let mut files = Vec::new();
    for part in summary.split("](").skip(1) {
        let file = part.split(')').next().unwrap_or("");
        if file.ends_with(".md") {
            files.push(file.to_owned());
        }
    }
    assert!(
        files.len() > 10,
        "SUMMARY.md lists {} chapters",
        files.len()
    );
    files
}

/// A fenced block of a chapter.
struct Block {
    chapter: String,
    /// The line (from 1) of its opening fence.
    line: usize,
    info: String,
    text: String,
}

impl Block {
    fn lang(&self) -> &str {
        self.info.split(',').next().unwrap_or("").trim()
    }

    fn attr(&self, key: &str) -> Option<&str> {
        self.info.split(',').skip(1).find_map(|a| {
            let a = a.trim();
            if a == key {
                Some("")
            } else {
                a.strip_prefix(key)?.strip_prefix(':')
            }
        })
    }

    fn place(&self) -> String {
        format!("guide/src/{}:{}", self.chapter, self.line)
    }
}

/// The fenced blocks of `chapter` (``` fences, not nested).
fn blocks(chapter: &str) -> Vec<Block> {
    let text = std::fs::read_to_string(guide_dir().join(chapter))
        .unwrap_or_else(|e| panic!("guide/src/{chapter}: {e}"));
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match (&mut open, trimmed.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    chapter: chapter.to_owned(),
                    line: i + 1,
                    info: info.trim().to_owned(),
                    text: String::new(),
                })
            }
            (Some(_), Some(rest)) if rest.trim().is_empty() => out.push(open.take().unwrap()),
            (Some(b), _) => {
                b.text.push_str(line);
                b.text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(
        open.is_none(),
        "guide/src/{chapter}: a fenced block is not closed"
    );
    out
}

/// A program of the guide to build and run.
struct Program {
    place: String,
    chapter: String,
    fortran: bool,
    file: String,
    source: String,
    nprocs: usize,
    fails: bool,
    check: bool,
    stdout: Option<Vec<String>>,
    stderr: Option<Vec<String>>,
}

fn programs() -> Vec<Program> {
    let mut out = Vec::new();
    for chapter in chapters() {
        let blocks = blocks(&chapter);
        for (i, b) in blocks.iter().enumerate() {
            let fortran = match b.lang() {
                "c" => false,
                "fortran" => true,
                _ => continue,
            };
            let Some(np) = b.attr("run") else { continue };
            let nprocs = np
                .parse()
                .unwrap_or_else(|_| panic!("{}: run:{np} is not a number", b.place()));
            let file = b
                .attr("file")
                .unwrap_or_else(|| panic!("{}: a program needs file:NAME", b.place()));
            let later = blocks[i + 1..]
                .iter()
                .take_while(|n| !(matches!(n.lang(), "c" | "fortran") && n.attr("run").is_some()));
            let expected = |kind: &str| {
                later
                    .clone()
                    .find(|n| n.lang() == "text" && n.attr(kind).is_some())
                    .map(|n| n.text.lines().map(str::to_owned).collect::<Vec<_>>())
            };
            out.push(Program {
                place: b.place(),
                chapter: chapter.trim_end_matches(".md").to_owned(),
                fortran,
                file: file.to_owned(),
                source: b.text.clone(),
                nprocs,
                fails: b.attr("fails").is_some(),
                check: b.attr("check").is_some(),
                stdout: expected("output"),
                stderr: expected("stderr"),
            });
        }
    }
    out
}

/// Whether gfortran is there; outside CI, its absence skips the Fortran
/// programs with a message, under CI it fails.
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
        eprintln!("SKIPPED: gfortran is not installed: the guide's Fortran programs not run");
    }
    found
}

/// Builds `prog` in `<tmpdir>/guide/<chapter>/`, where its file is
/// written, so that `__FILE__` is the bare file name the guide shows.
fn build(prog: &Program) -> Result<PathBuf, String> {
    let dir = out_dir(&format!("guide/{}", prog.chapter));
    std::fs::write(dir.join(&prog.file), &prog.source)
        .map_err(|e| format!("writing {}: {e}", prog.file))?;
    let exe = dir.join(prog.file.split('.').next().unwrap_or("prog"));
    let (tool, flags): (&str, &[&str]) = if prog.fortran {
        (BSPF90, &["-O2"])
    } else {
        (BSPCC, harness::C_FLAGS)
    };
    let output = Command::new(tool)
        .env("BSPLIB_LIBDIR", lib_dir())
        .current_dir(&dir)
        .args(flags)
        .arg(&prog.file)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run {tool}: {e}"))?;
    if output.status.success() {
        Ok(exe)
    } else {
        Err(format!(
            "{}: {} {} failed ({}):\n{}{}",
            prog.place,
            Path::new(tool).file_name().unwrap().to_string_lossy(),
            prog.file,
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// What is wrong with one run of `prog` on `engine`, if anything.
fn check_run(prog: &Program, exe: &Path, engine: &str) -> Option<String> {
    let env = if prog.check {
        vec![("BSPLIB_CHECK", "1".to_owned())]
    } else {
        Vec::new()
    };
    let out = run(exe, engine, prog.nprocs, &[], &env, TIMEOUT, |_, _| None);
    let what = format!(
        "{} ({}, bsprun --engine {engine}{} -np {})",
        prog.place,
        prog.file,
        if prog.check { " --check" } else { "" },
        prog.nprocs
    );
    let shown = || {
        format!(
            "\n  stdout:\n{}\n  stderr:\n{}",
            indent_tail(&out.stdout, 3000),
            indent_tail(&out.stderr, 3000)
        )
    };
    if let Some(problem) = out.problem() {
        return Some(format!("{what}: {problem}{}", shown()));
    }
    let ok = out.status.is_some_and(|s| s.success());
    if ok == prog.fails {
        return Some(format!(
            "{what}: {} expected, got {}{}",
            if prog.fails { "an error" } else { "success" },
            describe(out.status),
            shown()
        ));
    }
    if let Some(expected) = &prog.stdout {
        let mut want: Vec<&str> = expected.iter().map(String::as_str).collect();
        let mut got: Vec<&str> = out.stdout.lines().collect();
        want.sort_unstable();
        got.sort_unstable();
        if want != got {
            return Some(format!(
                "{what}: the output is not the guide's (lines in any order)\n  expected:\n{}{}",
                indent_tail(&expected.join("\n"), 3000),
                shown()
            ));
        }
    }
    if let Some(expected) = &prog.stderr {
        for line in expected {
            if !out.stderr.lines().any(|l| l.contains(line.as_str())) {
                return Some(format!(
                    "{what}: stderr lacks the guide's line\n    {line}{}",
                    shown()
                ));
            }
        }
    }
    if !prog.fails && !out.stderr.is_empty() {
        return Some(format!(
            "{what}: a correct program wrote to stderr{}",
            shown()
        ));
    }
    None
}

#[test]
fn every_fenced_block_of_the_guide_names_its_language() {
    let mut bad = Vec::new();
    for chapter in chapters() {
        for b in blocks(&chapter) {
            if b.lang().is_empty() {
                bad.push(b.place());
            }
        }
    }
    assert!(
        bad.is_empty(),
        "fenced blocks without a language (rustdoc would compile them as Rust; \
         write ```text, ```sh, ...): {}",
        bad.join(", ")
    );
}

#[test]
fn every_chapter_is_a_doc_test_of_the_bsplib_crate() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../bsplib/src/lib.rs"))
            .expect("crates/bsplib/src/lib.rs is readable");
    let missing: Vec<String> = chapters()
        .into_iter()
        .filter(|c| !lib.contains(&format!("include_str!(\"../../../guide/src/{c}\")")))
        .collect();
    assert!(
        missing.is_empty(),
        "chapters whose Rust examples are not doc-tests: add \
         #[doc = include_str!(\"../../../guide/src/CHAPTER\")] to the `guide` module of \
         crates/bsplib/src/lib.rs for {}",
        missing.join(", ")
    );
}

#[test]
fn the_guides_c_and_fortran_programs_build_run_and_print_what_it_shows() {
    let programs = programs();
    assert!(
        programs.iter().filter(|p| !p.fortran).count() >= 5 && programs.iter().any(|p| p.fortran),
        "the guide's runnable programs were not found ({} of them)",
        programs.len()
    );
    let fortran = have_gfortran();
    let wanted: Vec<&Program> = programs.iter().filter(|p| fortran || !p.fortran).collect();
    let built = par_map(&wanted, |p| build(p));
    let mut failures: Vec<String> = built.iter().filter_map(|b| b.clone().err()).collect();
    let mut jobs = Vec::new();
    for (prog, exe) in wanted.iter().zip(&built) {
        if let Ok(exe) = exe {
            for engine in engines() {
                jobs.push((*prog, exe.clone(), engine));
            }
        }
    }
    failures.extend(
        par_map(&jobs, |(prog, exe, engine)| check_run(prog, exe, engine))
            .into_iter()
            .flatten(),
    );
    println!(
        "the guide's programs: {} built, {} runs ({})",
        built.len(),
        jobs.len(),
        engines().join(", ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
