//! The profiler from C, as a user meets it: BSPedupack's inner product
//! (`tests/c/inprod.c`) run with `bsprun --profile DIR` on every engine
//! `bsprun` has here (`BSPLIB_TEST_ENGINES` chooses, as for the other C
//! tests), its profile checked against what the program does, then
//! `bspprof DIR`: the report has the supersteps, the SVG pictures and the
//! program's sync lines; the merged trace is trace-event JSON with one
//! track per process.

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
    }
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
