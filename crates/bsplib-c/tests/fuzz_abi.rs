//! C ABI argument fuzzing: `tests/c/fuzz_abi.c`, built with `bspcc` under
//! AddressSanitizer, run with `bsprun` for many seeds; each seed makes one
//! BSPlib entry point (the 20 of `bsp.h` or a located `bsplib_*_at` twin)
//! be called with random good and bad arguments, by one process or all,
//! on a random engine and process count. The program prints what it calls
//! and how the call is classified (`expect=error|any|ub`, see the header
//! of `fuzz_abi.c` for the classification and for what is undetectable
//! user UB).
//!
//! Every run must end (no hang) without a panic of the library, and:
//! - `error`: a clean failure: non-zero exit status (not a signal), a
//!   `bsplib:` line naming the call (or its follow-up) and a process, no
//!   AddressSanitizer report;
//! - `any`: success (exit 0, `ok`, no `bsplib:` line) or a clean failure;
//! - `ub`: anything else goes (a report of AddressSanitizer is then the
//!   user's bug found; a crash should say `bsplib: <call>` first).
//!
//! Environment: `BSPLIB_FUZZ_SEED` (first seed, printed), `BSPLIB_FUZZ_SEEDS`
//! (how many, default 600, 60 under valgrind), `BSPLIB_TEST_ENGINES`, `BSPLIB_FUZZ_STRICT=1`
//! fails the known defects of [`KNOWN`] too, `BSPLIB_FUZZ_VERBOSE=1` prints
//! them in full.
//!
//! Long mode:
//! `BSPLIB_FUZZ_SEEDS=3000 cargo test -p bsplib-c --release --test fuzz_abi -- --nocapture`

mod harness;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use harness::*;

const MAX_P: usize = 4;
const HANG: Duration = Duration::from_secs(30);

/// Known defects: a name and the cases (call with its arguments, as the
/// program prints them) and failed checks it covers. Tolerated unless
/// `BSPLIB_FUZZ_STRICT=1`; remove an entry once fixed.
type Known = (&'static str, fn(&Case, &str) -> bool);
const KNOWN: &[Known] = &[];

/// What the program said it does.
#[derive(Debug, Default, Clone)]
struct Case {
    /// `bsp_put(0, NULL, reg, 0, 4)`.
    call: String,
    expect: String,
    names: Vec<String>,
    by: String,
}

fn parse_case(stderr: &str) -> Option<Case> {
    let line = stderr.lines().find_map(|l| l.strip_prefix("case: "))?;
    let (call, rest) = line.rsplit_once(" by ")?;
    let mut case = Case {
        call: call.to_owned(),
        ..Case::default()
    };
    for (i, word) in rest.split(' ').enumerate() {
        if i == 0 {
            case.by = word.to_owned();
        } else if let Some(e) = word.strip_prefix("expect=") {
            case.expect = e.to_owned();
        } else if let Some(n) = word.strip_prefix("names=") {
            case.names = n.split(',').map(str::to_owned).collect();
        }
    }
    Some(case)
}

/// The failed checks of one run: `(what, detail)`.
fn check(case: &Case, out: &Outcome) -> Vec<(&'static str, String)> {
    let mut failures: Vec<(&'static str, String)> = out
        .problems
        .iter()
        .map(|p| ("harness", p.clone()))
        .collect();
    // Undetectable UB (a misaligned pointer may trip a debug assertion of
    // the library: a panic) accepts anything but a hang.
    if case.expect == "ub" {
        return failures;
    }
    if out.stderr.contains("panicked at") || out.stderr.contains("fatal runtime error") {
        failures.push(("library panic", "a panic inside libbsp".into()));
    }
    let asan = out.stderr.contains("AddressSanitizer") || out.stderr.contains("LeakSanitizer");
    let signal = out.status.and_then(|s| s.signal());
    let success = out.status.is_some_and(|s| s.success());
    let named = out.stderr.lines().any(|l| {
        l.starts_with("bsplib:")
            && l.contains("process ")
            && case.names.iter().any(|n| l.contains(n.as_str()))
    });
    let clean_failure = !success && signal.is_none() && !asan && named;
    let clean_success = success && out.stdout == "ok\n" && !asan && !out.stderr.contains("bsplib:");
    let ok = match case.expect.as_str() {
        "error" => clean_failure,
        _ => clean_success || clean_failure,
    };
    if !ok {
        let what = if asan {
            "asan"
        } else if signal.is_some() {
            "signal"
        } else if success {
            "success"
        } else {
            "message"
        };
        failures.push((
            what,
            format!(
                "expected {}: got {}{}{}",
                if case.expect == "error" {
                    "a clean failure"
                } else {
                    "success or a clean failure"
                },
                describe(out.status),
                if asan {
                    ", an AddressSanitizer report"
                } else {
                    ""
                },
                if named {
                    ""
                } else {
                    ", no bsplib: line naming the call and a process"
                }
            ),
        ));
    }
    failures
}

#[test]
fn random_arguments_fail_cleanly_or_succeed() {
    let first = seed("BSPLIB_FUZZ_SEED");
    let n = harness::trials("BSPLIB_FUZZ_SEEDS", 600);
    eprintln!(
        "fuzz_abi: seeds {first}..{} (BSPLIB_FUZZ_SEED={first} replays)",
        first + n
    );
    let exe = build("fuzz_abi.c", "fuzz_abi", true);
    let engines = engines();
    if engines.is_empty() {
        return;
    }
    let mut rng = Rng::new(first ^ 0x5eed);
    let runs: Vec<(u64, String, usize)> = (0..n)
        .map(|i| {
            let engine = rng.pick(&engines).clone();
            (first + i, engine, rng.range(1, MAX_P))
        })
        .collect();
    let start = Instant::now();
    let results = par_map(&runs, |(seed, engine, p)| {
        let env = [("ASAN_OPTIONS", "detect_leaks=1".to_owned())];
        let out = run(&exe, engine, *p, &[seed.to_string()], &env, HANG, |_, _| {
            None
        });
        let case = parse_case(&out.stderr).unwrap_or_else(|| Case {
            call: "(no case line)".into(),
            expect: "any".into(),
            ..Case::default()
        });
        let failures = check(&case, &out);
        let report = format!(
            "seed {seed} ({engine}, p = {p}): {} by {} expect={}: {}\n  repro: ASAN_OPTIONS=detect_leaks=1 bsprun --engine {engine} -np {p} {} {seed}\n  stdout:\n{}  stderr:\n{}",
            case.call,
            case.by,
            case.expect,
            failures
                .iter()
                .map(|(w, d)| format!("[{w}] {d}"))
                .collect::<Vec<_>>()
                .join("; "),
            exe.display(),
            indent(&out.stdout),
            indent(&out.stderr)
        );
        (
            case,
            failures,
            report,
            out.status.is_some_and(|s| s.success()),
        )
    });

    let strict = env_flag("BSPLIB_FUZZ_STRICT");
    let mut per_call: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut known_count: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut failed, mut known) = (Vec::new(), Vec::new());
    for (case, failures, report, success) in &results {
        let name = case.call.split('(').next().unwrap_or("").to_owned();
        let e = per_call.entry(name).or_default();
        e[0] += 1;
        e[1] += usize::from(*success);
        e[2] += usize::from(case.expect == "ub");
        if failures.is_empty() {
            continue;
        }
        e[3] += 1;
        let defects: Option<Vec<&str>> = failures
            .iter()
            .map(|(w, _)| KNOWN.iter().find(|k| k.1(case, w)).map(|k| k.0))
            .collect();
        match defects {
            Some(ds) if !strict => {
                ds.into_iter()
                    .for_each(|d| *known_count.entry(d).or_default() += 1);
                known.push(report.clone());
            }
            _ => failed.push(report.clone()),
        }
    }
    eprintln!("fuzz_abi: per call (runs, succeeded, classified ub, failed checks):");
    for (call, [runs, ok, ub, bad]) in &per_call {
        eprintln!("  {call:<22} {runs:>4} {ok:>4} {ub:>4} {bad:>4}");
    }
    for (d, c) in &known_count {
        eprintln!("  known, tolerated (BSPLIB_FUZZ_STRICT=1 fails them): {c:>4} x {d}");
    }
    if env_flag("BSPLIB_FUZZ_VERBOSE") {
        eprintln!("{}", known.join("\n\n"));
    }
    eprintln!(
        "fuzz_abi: {n} seeds from {first} in {:.1?}: {} failed, {} known",
        start.elapsed(),
        failed.len(),
        known.len()
    );
    assert!(
        failed.is_empty(),
        "{} of {n} fuzz runs failed (first seed {first}):\n\n{}",
        failed.len(),
        failed.join("\n\n")
    );
}
