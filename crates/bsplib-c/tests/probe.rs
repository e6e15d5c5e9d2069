//! The probe from the command line and from C: `bspprobe --quick`
//! measures and stores; the C enquiries `bsp_g`, `bsp_l`, `bsp_s` and
//! `bsp_nhalf` return what the store holds for the engine and p (the
//! defaults without an entry); `bspprof` predicts with the stored figures
//! unless given others, and says where they came from.
//!
//! Every store here is a file of the test's own, named by
//! `BSPLIB_MACHINE` in the commands' environments: never the real one.

mod harness;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use bsplib::probe::{self, Machine, Measurement, Source};
use bsplib::Engine;
use harness::{bsprun, lib_dir, out_dir, run_command, try_build, C_FLAGS};

const BSPPROBE: &str = env!("CARGO_BIN_EXE_bspprobe");
const BSPPROF: &str = env!("CARGO_BIN_EXE_bspprof");
const TIMEOUT: Duration = Duration::from_secs(120);

/// A fresh store path in this test's directory.
fn store(name: &str) -> PathBuf {
    let path = out_dir("probe").join(format!("{name}.json"));
    let _ = std::fs::remove_file(&path);
    path
}

fn fake(engine: Engine, nprocs: usize, g: f64, l: f64, nhalf: f64, s: f64) -> Measurement {
    Measurement {
        engine,
        nprocs,
        machine: Machine {
            g,
            l,
            nhalf,
            s,
            source: Source::Measured,
        },
        g_range: (g, g),
        l_range: (l, l),
        nhalf_range: (nhalf, nhalf),
        residual: 0.0,
        reps: 3,
        word_points: Vec::new(),
        bulk_points: Vec::new(),
    }
}

#[test]
fn bspprobe_quick_measures_prints_and_stores_threads_and_processes() {
    let path = store("bspprobe");
    let t0 = std::time::Instant::now();
    let out = Command::new(BSPPROBE)
        .args([
            "--quick",
            "--engine",
            "threads,processes",
            "-p",
            "2",
            "--store",
        ])
        .arg(&path)
        .output()
        .unwrap();
    let elapsed = t0.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("bspprobe --quick, 2 engines, {elapsed:?}:\n{stdout}");
    for engine in [Engine::Threads, Engine::Processes] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("{:<10}   2  ", engine.name()))),
            "{stdout}"
        );
        let m = probe::load_from(&path, engine, 2).unwrap().unwrap();
        assert!(m.g > 0.0 && m.l > 0.0 && m.l < 1.0, "{m:?}");
    }
    // Errors are clear, with status 2.
    let out = Command::new(BSPPROBE)
        .args(["--engine", "gpu"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--engine: 'gpu' is not valid"));
    let out = Command::new(BSPPROBE).args(["-p", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `level1_enquiries.c` on `engine` at p = 2 with the store `path`: the
/// figures process 0 prints.
fn enquiries(exe: &Path, engine: &str, path: &Path) -> String {
    let mut cmd = bsprun(
        exe,
        engine,
        2,
        &["print".into()],
        &[("BSPLIB_MACHINE", path.display().to_string())],
    );
    let o = run_command(&mut cmd, None, TIMEOUT, |_, _| None);
    assert!(
        o.status.is_some_and(|s| s.success()) && o.problem().is_none(),
        "{engine}: {:?} {:?}\n{}\n{}",
        o.status,
        o.problem(),
        o.stdout,
        o.stderr
    );
    o.stdout
}

#[test]
fn the_c_enquiries_return_the_stored_figures_else_the_defaults() {
    let exe = try_build("level1_enquiries.c", "probe", C_FLAGS, &[], &lib_dir())
        .unwrap_or_else(|e| panic!("{e}"));
    let path = store("enquiries");
    probe::save_to(
        &path,
        &fake(Engine::Threads, 2, 2.5e-10, 4.25e-6, 321.4, 3.5e9),
    )
    .unwrap();
    probe::save_to(
        &path,
        &fake(Engine::Processes, 2, 1.5e-10, 6.5e-6, 99.6, 2.5e9),
    )
    .unwrap();
    assert_eq!(
        enquiries(&exe, "threads", &path),
        "g=2.500000e-10 l=4.250000e-06 s=3.500000e+09 nhalf=321\n"
    );
    assert_eq!(
        enquiries(&exe, "processes", &path),
        "g=1.500000e-10 l=6.500000e-06 s=2.500000e+09 nhalf=100\n"
    );
    let d = Machine::defaults();
    let got: Vec<f64> = enquiries(&exe, "threads", &store("empty"))
        .split_whitespace()
        .map(|kv| kv.split_once('=').unwrap().1.parse().unwrap())
        .collect();
    let want = [d.g, d.l, d.s, d.nhalf.round()];
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-6 * w.abs(),
            "{got:?} against the defaults {want:?}"
        );
    }
    assert_eq!(got.len(), 4);
}

/// A profile of a small program: 2 processes of `threads`, 3 supersteps
/// of puts.
fn profile(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    bsplib::Runtime::new(2)
        .engine(Engine::Threads)
        .profile(Some(dir.to_path_buf()))
        .run(|bsp| {
            let x = bsplib::Area::<u64>::new(bsp, 64);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            for _ in 0..2 {
                bsp.put(1 - bsp.pid(), &x, 0, &[7u64; 64])?;
                bsp.sync()?;
            }
            Ok(())
        })
        .unwrap();
}

/// `bspprof <args> dir` with the store `path`: the report's model line.
fn model_line(dir: &Path, path: &Path, args: &[&str]) -> String {
    let out = Command::new(BSPPROF)
        .env("BSPLIB_MACHINE", path)
        .args(args)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let line = html
        .lines()
        .find(|l| l.contains("id=\"model\""))
        .unwrap_or_else(|| panic!("no model in the report"));
    line.to_string()
}

#[test]
fn bspprof_predicts_with_the_stored_figures_unless_given() {
    let dir = out_dir("probe").join("profile");
    profile(&dir);
    let path = store("bspprof");
    probe::save_to(&path, &fake(Engine::Threads, 2, 0.5e-9, 3e-6, 100.0, 1e9)).unwrap();
    let line = model_line(&dir, &path, &[]);
    assert!(
        line.contains("g = 0.5 ns per byte, l = 3 µs, n½ = 100 bytes")
            && line.contains("measured by <code>bspprobe</code> for threads, p = 2"),
        "{line}"
    );
    let line = model_line(&dir, &path, &["--g", "2", "--l", "1"]);
    assert!(
        line.contains("g = 2 ns per byte, l = 1 µs, n½ = 0 bytes")
            && line.contains("g, l, n½ given on the command line"),
        "{line}"
    );
    let line = model_line(&dir, &store("none"), &[]);
    assert!(
        line.contains("g = 0.15 ns per byte, l = 2 µs, n½ = 378 bytes")
            && line.contains("the library's defaults"),
        "{line}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
