//! The profiler from C, as a user meets it: BSPedupack's inner product
//! (`tests/c/inprod.c`) run with `bsprun --profile DIR` on every engine
//! `bsprun` has here (`BSPLIB_TEST_ENGINES` chooses, as for the other C
//! tests), its profile checked against what the program does, then
//! `bspprof DIR`: the report has the supersteps, the SVG pictures and the
//! program's sync lines; the merged trace is trace-event JSON with one
//! track per process. BSPedupack's LU decomposition (`tests/c/lu.c`, 2D
//! cyclic on a 2 x 2 grid) the same way. For both, the numbers `bspprof`
//! shows (its report's table of supersteps and `bspprof --summary`) are
//! checked against those computed here from the profile files.

mod harness;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use harness::{build, engines, out_dir, run_command, BSPRUN};
use serde_json::Value;

const BSPPROF: &str = env!("CARGO_BIN_EXE_bspprof");
const TIMEOUT: Duration = Duration::from_secs(60);
const P: usize = 3;

/// The lines of `inprod.c`'s four `bsp_sync` calls, in program order.
const SYNC_LINES: [u32; 4] = [57, 63, 33, 39];

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

fn column(profile: &Value, row: usize, name: &str) -> Value {
    let b = &profile["bsplib"];
    let i = b["columns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    b["supersteps"][row][i].clone()
}

/// One superstep across the processes, computed from the profile files
/// as `bspprof` should: the measured time (the longest from the end of the
/// last sync to the end of this one), w (the longest computation), h (the
/// largest bytes out or in of any process), and the bytes sent and
/// received by all processes.
#[derive(Debug, Default)]
struct StepSeen {
    t_ns: u64,
    w_ns: u64,
    h: u64,
    records: u64,
    bytes_out: u64,
    bytes_in: u64,
}

fn steps_of(dir: &Path, p: usize) -> Vec<StepSeen> {
    let profs: Vec<Value> = (0..p)
        .map(|pid| json(&dir.join(format!("profile.{pid}.json"))))
        .collect();
    let n = profs[0]["bsplib"]["supersteps"].as_array().unwrap().len();
    (0..n)
        .map(|row| {
            let mut s = StepSeen::default();
            for prof in &profs {
                let u = |name: &str| column(prof, row, name).as_u64().unwrap();
                s.t_ns = s.t_ns.max(u("sync_end_ns") - u("compute_start_ns"));
                s.w_ns = s.w_ns.max(u("sync_start_ns") - u("compute_start_ns"));
                s.h = s.h.max(u("bytes_out").max(u("bytes_in")));
                s.records = s.records.max(u("records_out").max(u("records_in")));
                s.bytes_out += u("bytes_out");
                s.bytes_in += u("bytes_in");
            }
            s
        })
        .collect()
}

/// Runs `bspprof DIR` and `bspprof --summary --exclude 0 --g 1 --l 2 DIR`
/// and checks what they show against `steps` (from the profile files):
/// the number of supersteps, each superstep's h in the report's table,
/// and in the summary each superstep's measured time, w, h and records,
/// the prediction w + 1·h + 2 µs, and the totals.
fn check_bspprof(dir: &Path, what: &str, steps: &[StepSeen]) {
    let status = Command::new(BSPPROF)
        .arg(dir)
        .status()
        .expect("cannot run bspprof");
    assert!(status.success(), "{what}: bspprof {status}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains(&format!(
            "<b id=\"supersteps\">{}</b> supersteps",
            steps.len()
        )),
        "{what}"
    );
    // "Every superstep": superstep, measured, predicted, w, h, ended by, at.
    let rows: Vec<Vec<&str>> = html
        .split("<tr class=\"step\">")
        .skip(1)
        .map(|r| {
            r.split("<td")
                .skip(1)
                .map(|c| c.split_once('>').unwrap().1.split("</td>").next().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), steps.len(), "{what}");
    for (i, (row, seen)) in rows.iter().zip(steps).enumerate() {
        assert_eq!(row[0], i.to_string(), "{what}");
        assert_eq!(row[4], seen.h.to_string(), "{what}: h of superstep {i}");
    }

    let out = Command::new(BSPPROF)
        .args(["--summary", "--exclude", "0", "--g", "1", "--l", "2"])
        .arg(dir)
        .output()
        .expect("cannot run bspprof");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{what}: {text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].contains("g = 1 ns/byte, l = 2 us, nhalf = 0 bytes"),
        "{what}: {text}"
    );
    assert!(
        lines[2].trim_start().starts_with("superstep"),
        "{what}: {text}"
    );
    let table = &lines[3..3 + steps.len()];
    let (mut measured, mut predicted) = (0.0, 0.0);
    for (i, (line, seen)) in table.iter().zip(steps).enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |k: usize| f[k].parse::<f64>().unwrap();
        assert_eq!(f[0], i.to_string(), "{what}: {line}");
        let close = |a: f64, b: f64| (a - b).abs() <= 0.0015;
        assert!(
            close(num(1), seen.t_ns as f64 / 1e3),
            "{what}: measured: {line} {seen:?}"
        );
        assert!(
            close(num(3), seen.w_ns as f64 / 1e3),
            "{what}: w: {line} {seen:?}"
        );
        assert_eq!(f[4], seen.h.to_string(), "{what}: h: {line}");
        assert_eq!(f[5], seen.records.to_string(), "{what}: records: {line}");
        let last = i + 1 == steps.len();
        let expect = seen.w_ns as f64 / 1e3 + if last { 0.0 } else { seen.h as f64 / 1e3 + 2.0 };
        assert!(close(num(2), expect), "{what}: predicted: {line} {seen:?}");
        assert_eq!(
            f[7],
            if last { "bsp_end" } else { "bsp_sync" },
            "{what}: {line}"
        );
        assert_eq!(line.ends_with("(excluded)"), i == 0, "{what}: {line}");
        if i > 0 {
            measured += seen.t_ns as f64 / 1e3;
            predicted += expect;
        }
    }
    let errors = lines[3 + steps.len()];
    assert!(
        errors.contains(&format!(
            "over {} supersteps with a sync (excluded: 0)",
            steps.len() - 2
        )),
        "{what}: {errors}"
    );
    let total = lines[4 + steps.len()];
    let number_after = |key: &str| {
        total
            .split(key)
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    let tol = 0.002 * steps.len() as f64;
    assert!(
        (number_after("measured ") - measured).abs() <= tol,
        "{what}: {total} {measured}"
    );
    assert!(
        (number_after("predicted ") - predicted).abs() <= tol,
        "{what}: {total} {predicted}"
    );
}

/// `bsprun --profile DIR --engine E -np P exe args` (as `harness::bsprun`
/// runs programs: the libbsp they were built against), after emptying DIR.
fn run_profiled(
    dir: &Path,
    engine: &str,
    p: usize,
    exe: &Path,
    args: &[String],
    input: Option<&str>,
) -> String {
    for e in std::fs::read_dir(dir).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    let mut cmd = Command::new(BSPRUN);
    cmd.env_remove("LD_LIBRARY_PATH")
        .arg("--profile")
        .arg(dir)
        .args(["--engine", engine, "-np", &p.to_string()])
        .arg(exe)
        .args(args);
    let out = run_command(&mut cmd, input, TIMEOUT, |_, _| None);
    assert!(
        out.status.is_some_and(|s| s.success()) && out.problem().is_none(),
        "{engine}: {:?} {:?}\n{}{}",
        out.status,
        out.problem(),
        out.stdout,
        out.stderr
    );
    out.stdout
}

/// The lines of the `bsp_sync()` calls of a test program, in order.
fn sync_lines(file: &str) -> Vec<usize> {
    let source = std::fs::read_to_string(harness::c_dir().join(file)).unwrap();
    source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == "bsp_sync();")
        .map(|(i, _)| i + 1)
        .collect()
}

/// LU on a 2 x 2 grid, n = 24: 4 supersteps a stage, the registration
/// before and the check's two after, and the end.
#[test]
fn bsprun_profile_and_bspprof_on_lu() {
    const P: usize = 4;
    const N: usize = 24;
    let exe = build("lu.c", "profile", false);
    let lines = sync_lines("lu.c");
    assert_eq!(
        lines.len(),
        7,
        "lu.c's bsp_sync calls changed: update this test"
    );
    for engine in engines() {
        let dir = out_dir(&format!("profile-lu-{engine}"));
        let stdout = run_profiled(
            &dir,
            &engine,
            P,
            &exe,
            &[P.to_string(), N.to_string()],
            None,
        );
        assert_eq!(
            stdout,
            format!("lu: n = {N} on 2 x 2 processes: P*A = L*U, every entry within 1e-10\n"),
            "{engine}"
        );
        let rows = 4 * N + 4;
        for pid in 0..P {
            let prof = json(&dir.join(format!("profile.{pid}.json")));
            let what = format!("{engine} process {pid}");
            assert_eq!(
                prof["bsplib"]["supersteps"].as_array().unwrap().len(),
                rows,
                "{what}"
            );
            let line_of = |row: usize| match row {
                0 => lines[0],
                r if r <= 4 * N => lines[1 + (r - 1) % 4],
                r => lines[r - 4 * N + 4],
            };
            for row in 0..rows - 1 {
                assert_eq!(
                    column(&prof, row, "at"),
                    format!("lu.c:{}", line_of(row)),
                    "{what} superstep {row}"
                );
            }
            assert_eq!(column(&prof, rows - 1, "ended_by"), "bsp_end", "{what}");
        }
        let steps = steps_of(&dir, P);
        assert_eq!(steps.len(), rows);
        for (i, s) in steps.iter().enumerate() {
            // Every byte put is a byte received.
            assert_eq!(s.bytes_out, s.bytes_in, "{engine}: superstep {i}");
        }
        for k in 0..N {
            // The candidates (value, row): 16 bytes from each of the 2
            // processes of column k mod 2 to both of that column.
            assert_eq!(steps[1 + 4 * k].h, 32, "{engine}: stage {k}");
            assert_eq!(steps[1 + 4 * k].bytes_out, 64, "{engine}: stage {k}");
            // The pivot row r (a long) along the 2 processor rows.
            assert_eq!(steps[2 + 4 * k].h, 8, "{engine}: stage {k}");
            assert_eq!(steps[2 + 4 * k].bytes_out, 16, "{engine}: stage {k}");
            // A swap between processor rows moves two rows of 12 doubles
            // per processor column; within one, nothing.
            assert!([0, 96].contains(&steps[3 + 4 * k].h), "{engine}: stage {k}");
            // The multipliers below row k and row k right of column k,
            // each to the one other process of the row or column.
            let most = 16 * (N - 1 - k).div_ceil(2) as u64;
            assert!(steps[4 + 4 * k].h <= most, "{engine}: stage {k}");
            assert_eq!(
                steps[4 + 4 * k].bytes_out,
                16 * (N - 1 - k) as u64,
                "{engine}: stage {k}"
            );
        }
        // The check: every process's 12 x 12 block to all 4.
        assert_eq!(steps[4 * N + 1].h, 8 * 144 * 4, "{engine}");
        assert_eq!(
            steps[4 * N + 2].h,
            8 * 4,
            "{engine}: the residuals to process 0"
        );
        check_bspprof(&dir, &format!("lu on {engine}"), &steps);
    }
}

#[test]
fn bsprun_profile_and_bspprof_on_inprod() {
    let exe = build("inprod.c", "profile", false);
    let source = std::fs::read_to_string(harness::c_dir().join("inprod.c")).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    for line in SYNC_LINES {
        assert!(
            lines[line as usize - 1].contains("bsp_sync()"),
            "inprod.c:{line} is no longer a bsp_sync: update SYNC_LINES"
        );
    }
    for engine in engines() {
        let dir = out_dir(&format!("profile-{engine}"));
        for e in std::fs::read_dir(&dir).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        // `bsprun --profile DIR --engine E -np P inprod` (as `harness::bsprun`
        // runs programs: the libbsp they were built against).
        let mut cmd = Command::new(BSPRUN);
        cmd.env_remove("LD_LIBRARY_PATH")
            .arg("--profile")
            .arg(&dir)
            .args(["--engine", &engine, "-np", &P.to_string()])
            .arg(&exe);
        let out = run_command(&mut cmd, Some(&format!("{P} 1000\n")), TIMEOUT, |_, _| None);
        assert!(
            out.status.is_some_and(|s| s.success()) && out.problem().is_none(),
            "{engine}: {:?} {:?}\n{}{}",
            out.status,
            out.problem(),
            out.stdout,
            out.stderr
        );
        assert!(
            out.stdout.contains("is 333833500"),
            "{engine}: {}",
            out.stdout
        );

        // The profile: five supersteps (four syncs and the end) per process.
        for pid in 0..P {
            let prof = json(&dir.join(format!("profile.{pid}.json")));
            let what = format!("{engine} process {pid}");
            assert_eq!(prof["bsplib"]["engine"], engine.as_str(), "{what}");
            assert_eq!(prof["bsplib"]["nprocs"], P, "{what}");
            assert_eq!(
                prof["bsplib"]["supersteps"].as_array().unwrap().len(),
                5,
                "{what}"
            );
            for (row, line) in SYNC_LINES.iter().enumerate() {
                assert_eq!(
                    column(&prof, row, "at"),
                    format!("inprod.c:{line}"),
                    "{what} superstep {row}"
                );
            }
            assert_eq!(column(&prof, 4, "ended_by"), "bsp_end", "{what}");
            // Superstep 1: process 0 puts n (a long) to each other process.
            let (puts, bytes) = if pid == 0 {
                (P - 1, 8 * (P - 1))
            } else {
                (0, 0)
            };
            assert_eq!(column(&prof, 1, "puts_out"), puts, "{what}");
            assert_eq!(column(&prof, 1, "bytes_out"), bytes, "{what}");
            assert_eq!(column(&prof, 1, "puts_in"), usize::from(pid != 0), "{what}");
            // Superstep 3: every process puts its double to every process.
            assert_eq!(column(&prof, 3, "puts_out"), P, "{what}");
            assert_eq!(column(&prof, 3, "puts_in"), P, "{what}");
            assert_eq!(column(&prof, 3, "bytes_out"), 8 * P, "{what}");
            assert_eq!(column(&prof, 3, "bytes_in"), 8 * P, "{what}");
        }

        // bspprof: the report and the merged trace.
        let status = Command::new(BSPPROF)
            .arg(&dir)
            .status()
            .expect("cannot run bspprof");
        assert!(status.success(), "{engine}: bspprof {status}");
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        assert!(
            html.contains("<b id=\"supersteps\">5</b> supersteps"),
            "{engine}"
        );
        assert!(html.contains(&format!("p = <b>{P}</b>")), "{engine}");
        assert_eq!(
            html.matches("<svg").count(),
            3,
            "{engine}: timeline, bars, imbalance"
        );
        assert_eq!(html.matches("<tr class=\"step\">").count(), 5, "{engine}");
        for line in SYNC_LINES {
            assert!(
                html.contains(&format!("inprod.c:{line}")),
                "{engine}: line {line}"
            );
        }
        assert!(
            !html.contains("<script"),
            "{engine}: self-contained, no scripts"
        );
        assert!(
            !html.contains("http:") || !html.contains("src="),
            "{engine}: nothing fetched"
        );
        let trace = json(&dir.join("trace.json"));
        let events = trace["traceEvents"].as_array().unwrap();
        let tracks: std::collections::BTreeSet<u64> =
            events.iter().map(|e| e["tid"].as_u64().unwrap()).collect();
        assert_eq!(tracks.len(), P, "{engine}: one track per process");
        let slices = |cat: &str| {
            events
                .iter()
                .filter(|e| e["ph"] == "X" && e["cat"] == cat)
                .count()
        };
        assert_eq!(slices("compute"), 5 * P, "{engine}");
        assert_eq!(slices("sync"), 4 * P, "{engine}");
        assert_eq!(events.iter().filter(|e| e["ph"] == "C").count(), 4 * P);

        let steps = steps_of(&dir, P);
        assert_eq!(steps[1].h, 8 * (P as u64 - 1), "{engine}: n to the others");
        assert_eq!(
            steps[3].h,
            8 * P as u64,
            "{engine}: every local product to all"
        );
        assert_eq!(steps[3].bytes_out, 8 * (P * P) as u64, "{engine}");
        check_bspprof(&dir, &format!("inprod on {engine}"), &steps);
        check_partial(&dir, &engine);
    }
}

/// `bspprof` on the profile in `dir` (P processes, complete) without
/// process 1's file: it still summarises and reports (exit status 0), and
/// says which process is missing and where the others ran, on standard
/// error and in the report (issue 26, row 5).
///
/// (Apart from the warning that the machine was busy as the run started,
/// issue 27, which 3 processes on a 2-core machine, or a loaded one, give:
/// `tool_conventions.rs` tests it.)
fn check_partial(dir: &Path, engine: &str) {
    let host = |pid: usize| {
        let prof = json(&dir.join(format!("profile.{pid}.json")));
        prof["bsplib"]["host"]
            .as_str()
            .unwrap_or_else(|| panic!("{engine}: process {pid}'s profile names no host"))
            .to_string()
    };
    let (h0, h2) = (host(0), host(2));
    let complete = Command::new(BSPPROF)
        .arg("--summary")
        .arg(dir)
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&complete.stdout);
    let head = head.lines().next().unwrap_or_default();
    assert!(head.contains("3 of 3 process profiles"), "{engine}: {head}");
    let err = not_busy(&String::from_utf8_lossy(&complete.stderr));
    assert!(err.is_empty(), "{engine}: no warning: {err}");
    std::fs::remove_file(dir.join("profile.1.json")).unwrap();
    let ran = if h0 == h2 {
        format!("processes 0 and 2 ran on {h0}")
    } else {
        format!("process 0 ran on {h0}, 2 on {h2}")
    };
    let expect = format!(
        "2 of 3 processes left a profile in {}: process 1 left none ({ran}). \
         A process that ends abnormally",
        dir.display()
    );
    let out = Command::new(BSPPROF)
        .arg("--summary")
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{engine}: a partial profile is shown"
    );
    let err = not_busy(&String::from_utf8_lossy(&out.stderr));
    assert!(
        err.starts_with(&format!("bspprof: warning: {expect}")),
        "{engine}: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{engine}: one line: {err}");
    assert_eq!(
        err.contains("local to each node"),
        engine == "mpi",
        "{engine}: {err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("2 of 3 process profiles"),
        "{engine}: {text}"
    );
    let out = Command::new(BSPPROF).arg(dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{engine}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&expect),
        "{engine}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let warning = html
        .split("<p id=\"missing\"><b>Warning:</b> ")
        .nth(1)
        .and_then(|w| w.split("</p>").next())
        .unwrap_or_else(|| panic!("{engine}: no warning in the report"));
    assert!(warning.starts_with(&expect), "{engine}: {warning}");
}

#[test]
fn bspprof_names_a_directory_without_profiles() {
    let dir = out_dir("profile-empty");
    let out = Command::new(BSPPROF).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{} holds no profile.<pid>.json files",
            dir.display()
        )),
        "{err}"
    );
    let out = Command::new(BSPPROF).arg("--g").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A C run that fails at its end (`err_sync_after_end.c`: process 0 syncs
/// while the others have ended) under `bsprun --profile`: the processes
/// that ended leave their files (on `mpi` each writes its own, process 0
/// being unreachable, where `mpirun` lets it finish before it ends the
/// job), process 0 none, and `bspprof` says which processes are missing
/// and still summarises the others (`src/PROFILE.md`, "Memory and
/// output").
#[test]
fn a_failed_c_run_leaves_the_files_of_the_processes_that_ended() {
    let exe = build("err_sync_after_end.c", "profile", false);
    for engine in engines() {
        let dir = out_dir(&format!("profile-failed-{engine}"));
        for e in std::fs::read_dir(&dir).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        let mut cmd = Command::new(BSPRUN);
        cmd.env_remove("LD_LIBRARY_PATH")
            .arg("--profile")
            .arg(&dir)
            .args(["--engine", &engine, "-np", &P.to_string()])
            .arg(&exe);
        let out = run_command(&mut cmd, None, TIMEOUT, |_, _| None);
        assert!(
            out.status.is_some_and(|s| s.code() == Some(1)) && out.problem().is_none(),
            "{engine}: {:?} {:?}\n{}",
            out.status,
            out.problem(),
            out.stderr
        );
        let present: Vec<usize> = (0..P)
            .filter(|pid| dir.join(format!("profile.{pid}.json")).exists())
            .collect();
        assert!(!present.contains(&0), "{engine}: process 0 failed: no file");
        if engine != "mpi" {
            // threads: process 0's error ends the program, which the
            // other processes share: it waits for those still running or
            // writing their files (`Launch::settle`; before, under load,
            // about 1 run in 4 lost one).
            assert_eq!(present, (1..P).collect::<Vec<_>>(), "{engine}");
        }
        // mpi: mpirun may end a rank before it wrote. Best effort there:
        // what is present must be whole and right.
        for &pid in &present {
            let prof = json(&dir.join(format!("profile.{pid}.json")));
            let what = format!("{engine} process {pid}");
            assert_eq!(prof["bsplib"]["pid"], pid, "{what}");
            // One sync, then the end.
            assert_eq!(column(&prof, 1, "ended_by"), "bsp_end", "{what}");
        }
        if present.is_empty() {
            continue; // mpirun ended every rank before it wrote (mpi)
        }
        let out = Command::new(BSPPROF)
            .arg("--summary")
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{engine}");
        let err = String::from_utf8_lossy(&out.stderr);
        let missing: Vec<usize> = (0..P).filter(|pid| !present.contains(pid)).collect();
        let named = match missing[..] {
            [one] => format!("process {one} left none"),
            [a, b] => format!("processes {a} and {b} left none"),
            _ => unreachable!("P = 3, process 1 or 2 present"),
        };
        assert!(
            err.starts_with(&format!(
                "bspprof: warning: {} of {P} processes left a profile in {}: {named} (",
                present.len(),
                dir.display()
            )),
            "{engine}: {err}"
        );
    }
}

/// `stderr` without `bspprof`'s warning that the machine was busy as the
/// run started (issue 27, `tool_conventions.rs`).
fn not_busy(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.contains("the machine was busy as the run started"))
        .map(|l| format!("{l}\n"))
        .collect()
}
