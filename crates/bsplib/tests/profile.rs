//! The superstep profiler (`src/profile.rs`, `src/PROFILE.md`): a known
//! program's profile has exactly the counts it should, on every engine
//! (serial, threads p = 1..7, processes p = 1..4, and mpi under
//! `mpirun`), and every file is a trace-event file with the expected
//! tracks and slices.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use bsplib::{Area, Bsp, Engine, Error, ErrorKind, Runtime};
use common::{configurations, mpi_mode, HANG};
use serde_json::Value;

/// A directory for one run's profile, the same on every rank of an
/// `mpirun` job (named after the parent, which is mpirun's daemon there)
/// and unique otherwise.
fn profile_dir(name: &str) -> PathBuf {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    // SAFETY: `getppid` has no preconditions.
    let parent = unsafe { libc::getppid() };
    let me = if mpi_mode() { 0 } else { std::process::id() };
    std::env::temp_dir().join(format!("bsplib-profile-{parent}-{me}-{name}-{n}"))
}

/// The processes whose files this test process checks, and then removes:
/// all of them; under `mpirun`, all of them on process 0's rank, which
/// writes every process's file at the end of the run (`PROFILE.md`), and
/// none on the others.
fn own_pids(n: usize) -> Vec<usize> {
    if mpi_mode() {
        let rank = std::env::var("OMPI_COMM_WORLD_RANK").expect("an Open MPI rank");
        if rank != "0" {
            return Vec::new();
        }
    }
    (0..n).collect()
}

/// Removes the files of `pids` and, once empty, the directory.
fn clean(dir: &Path, pids: &[usize]) {
    for pid in pids {
        std::fs::remove_file(dir.join(format!("profile.{pid}.json"))).unwrap();
    }
    let _ = std::fs::remove_dir(dir);
}

/// Runs `spmd` profiled into `dir` (as `common::run_on` runs it).
fn run_profiled<F>(engine: Engine, p: usize, dir: &Path, spmd: F) -> Result<Vec<u32>, Error>
where
    F: Fn(&mut Bsp) -> Result<u32, Error> + Sync + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let runtime = Runtime::new(p)
            .engine(engine)
            .return_everywhere(true)
            .profile(Some(dir));
        // SAFETY: as in `common::run_on`: the test binary's other threads
        // take no lock a scenario needs.
        let runtime = unsafe { runtime.fork_with_threads() };
        let _ = tx.send(runtime.run(spmd));
    });
    rx.recv_timeout(HANG)
        .unwrap_or_else(|_| panic!("profiled run on {} p={p}: a hang", engine.name()))
}

/// The lines of this file where the known program's syncs are.
static LINES: [AtomicUsize; 3] = [
    AtomicUsize::new(0),
    AtomicUsize::new(0),
    AtomicUsize::new(0),
];

/// The known program: superstep 0 registers; superstep 1 puts 12 + 4
/// bytes to the right neighbour and sends an 8-byte message to the left;
/// superstep 2 gets 8 bytes from the left and sends two 5-byte messages
/// to the right; superstep 3 ends with the process. (Not formatted: each
/// sync and the `line!()` that notes its line stay on one line.)
#[rustfmt::skip]
fn known(bsp: &mut Bsp) -> Result<u32, Error> {
    let p = bsp.nprocs();
    let (right, left) = ((bsp.pid() + 1) % p, (bsp.pid() + p - 1) % p);
    let x = Area::<i32>::new(bsp, 4);
    let y = Area::<i32>::new(bsp, 2);
    bsp.push_reg(&x)?;
    bsp.push_reg(&y)?;
    bsp.sync()?; LINES[0].store(line!() as usize, Ordering::Relaxed);
    bsp.put(right, &x, 0, &[1, 2, 3])?;
    bsp.put(right, &x, 3, &[4])?;
    bsp.send(left, &[], &[7u8; 8])?;
    bsp.sync()?; LINES[1].store(line!() as usize, Ordering::Relaxed);
    bsp.get(left, &x, 0, y.range(..2))?;
    bsp.send(right, &[], &[1u8; 5])?;
    bsp.send(right, &[], &[2u8; 5])?;
    bsp.sync()?; LINES[2].store(line!() as usize, Ordering::Relaxed);
    Ok(bsp.pid() as u32)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Row `i` of a profile as a map from column name to value.
fn row(profile: &Value, i: usize) -> std::collections::HashMap<String, Value> {
    let b = &profile["bsplib"];
    let cols = b["columns"].as_array().unwrap();
    let r = b["supersteps"][i].as_array().unwrap();
    assert_eq!(cols.len(), r.len());
    cols.iter()
        .map(|c| c.as_str().unwrap().to_string())
        .zip(r.iter().cloned())
        .collect()
}

#[test]
fn a_known_program_has_exact_counts_and_a_valid_trace() {
    for (engine, p) in configurations() {
        let dir = profile_dir("known");
        let got = run_profiled(engine, p, &dir, known)
            .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        let n = got.len();
        let what = |pid: usize| format!("{} p={p} process {pid}", engine.name());
        let mut tids = std::collections::BTreeSet::new();
        let pids = own_pids(n);
        for &pid in &pids {
            let prof = read_json(&dir.join(format!("profile.{pid}.json")));
            let b = &prof["bsplib"];
            assert_eq!(b["engine"], engine.name(), "{}", what(pid));
            assert_eq!(b["nprocs"], n as u64, "{}", what(pid));
            assert_eq!(b["pid"], pid as u64, "{}", what(pid));
            assert!(b["start_unix_us"].as_u64().unwrap() > 1_600_000_000_000_000);
            assert!(
                b["host"].as_str().is_some_and(|h| !h.is_empty()),
                "{}: the host",
                what(pid)
            );
            let rows = b["supersteps"].as_array().unwrap();
            assert_eq!(rows.len(), 4, "{}: 3 syncs and the end", what(pid));
            let expect: [&[(&str, u64)]; 4] = [
                &[
                    ("bytes_out", 0),
                    ("bytes_in", 0),
                    ("records_out", 0),
                    ("records_in", 0),
                ],
                &[
                    ("puts_out", 2),
                    ("puts_in", 2),
                    ("messages_out", 1),
                    ("messages_in", 1),
                    ("bytes_out", 16 + 8),
                    ("bytes_in", 16 + 8),
                    ("records_out", 3),
                    ("records_in", 3),
                    ("gets_out", 0),
                ],
                &[
                    ("puts_out", 0),
                    ("gets_out", 1),
                    ("get_bytes_in", 8),
                    ("gets_served", 1),
                    ("messages_out", 2),
                    ("messages_in", 2),
                    ("bytes_out", 10),
                    ("bytes_in", 8 + 10),
                    ("records_out", 3),
                    ("records_in", 2),
                ],
                &[("bytes_out", 0), ("bytes_in", 0)],
            ];
            let mut last_end = 0;
            for (s, fields) in expect.iter().enumerate() {
                let r = row(&prof, s);
                assert_eq!(r["superstep"], s as u64, "{}", what(pid));
                for &(k, v) in *fields {
                    assert_eq!(r[k], v, "{} superstep {s}: {k}", what(pid));
                }
                for k in [
                    "hpputs_out",
                    "hpputs_in",
                    "am_out",
                    "am_in",
                    "other_out",
                    "other_in",
                ] {
                    assert_eq!(r[k], 0, "{} superstep {s}: {k}", what(pid));
                }
                let (c, ss, se) = (
                    r["compute_start_ns"].as_u64().unwrap(),
                    r["sync_start_ns"].as_u64().unwrap(),
                    r["sync_end_ns"].as_u64().unwrap(),
                );
                assert!(
                    last_end <= c && c <= ss && ss <= se,
                    "{}: times in order",
                    what(pid)
                );
                if s > 0 {
                    assert_eq!(
                        c,
                        last_end,
                        "{}: a superstep computes from the last sync's end",
                        what(pid)
                    );
                }
                last_end = se;
                if s < 3 {
                    assert_eq!(r["ended_by"], "bsp_sync");
                    let at = r["at"].as_str().unwrap();
                    let line = LINES[s].load(Ordering::Relaxed);
                    assert!(
                        at.ends_with(&format!("profile.rs:{line}")),
                        "{} superstep {s}: at {at}, expected line {line}",
                        what(pid)
                    );
                } else {
                    assert_eq!(r["ended_by"], "bsp_end");
                }
            }
            // The trace: 3 metadata events, 4 compute and 3 sync slices,
            // and 3 counters, all on this process's track.
            let events = prof["traceEvents"].as_array().unwrap();
            let count = |ph: &str, cat: Option<&str>| {
                events
                    .iter()
                    .filter(|e| e["ph"] == ph && cat.is_none_or(|c| e["cat"] == c))
                    .count()
            };
            assert_eq!(count("M", None), 3, "{}", what(pid));
            assert_eq!(count("X", Some("compute")), 4, "{}", what(pid));
            assert_eq!(count("X", Some("sync")), 3, "{}", what(pid));
            assert_eq!(count("C", None), 3, "{}", what(pid));
            assert_eq!(events.len(), 13, "{}", what(pid));
            for e in events {
                assert_eq!(e["pid"], 1);
                assert_eq!(e["tid"], pid as u64);
                tids.insert(pid);
                if e["ph"] != "M" {
                    assert!(e["ts"].as_f64().unwrap() >= 0.0);
                }
                if e["ph"] == "X" {
                    assert!(e["dur"].as_f64().unwrap() >= 0.0);
                    assert!(e["args"]["superstep"].is_u64());
                }
            }
            let syncs: Vec<&Value> = events.iter().filter(|e| e["cat"] == "sync").collect();
            assert_eq!(syncs[1]["args"]["bytes_out"], 24);
            assert_eq!(syncs[1]["args"]["puts_out"], 2);
            assert_eq!(syncs[2]["name"], "bsp_sync");
            let counters: Vec<&Value> = events.iter().filter(|e| e["ph"] == "C").collect();
            assert_eq!(counters[2]["args"]["in"], 18);
        }
        assert_eq!(
            tids.len(),
            pids.len(),
            "{}: a track per process",
            engine.name()
        );
        clean(&dir, &pids);
    }
}

#[test]
fn a_collective_names_itself_as_the_end_of_its_superstep() {
    for (engine, p) in configurations() {
        let dir = profile_dir("coll");
        let got = run_profiled(engine, p, &dir, |bsp| {
            let mut v = [bsp.pid() as u64; 3];
            bsp.collectives().broadcast(0, &mut v)?;
            Ok(v[0] as u32)
        })
        .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        let (mut out, mut inn) = (0, 0);
        let pids = own_pids(got.len());
        for &pid in &pids {
            let prof = read_json(&dir.join(format!("profile.{pid}.json")));
            let first = row(&prof, 0);
            assert_eq!(first["ended_by"], "broadcast", "{} p={p}", engine.name());
            assert!(first["at"].as_str().unwrap().contains("profile.rs:"));
            out += first["collective_out"].as_u64().unwrap();
            inn += first["collective_in"].as_u64().unwrap();
        }
        if !mpi_mode() {
            // Every collective record sent is received.
            assert_eq!(out, inn, "{} p={p}", engine.name());
            if got.len() > 1 {
                assert!(out > 0, "{} p={p}: records moved", engine.name());
            }
        }
        clean(&dir, &pids);
    }
}

#[test]
fn hpputs_and_owned_puts_are_counted_as_hpputs_where_the_engine_keeps_them_apart() {
    for (engine, p) in configurations() {
        let dir = profile_dir("hp");
        let got = run_profiled(engine, p, &dir, |bsp| {
            let right = (bsp.pid() + 1) % bsp.nprocs();
            let x = Area::<u64>::new(bsp, 4);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            let src = [7u64, 8];
            // SAFETY: `src` lives until after the sync and nobody else
            // touches words 0..2 of `x` on `right` in this superstep.
            unsafe { bsp.hpput(right, &x, 0, &src)? };
            bsp.put_owned(right, &x, 2, vec![9u64])?;
            bsp.put(right, &x, 3, &[10u64])?;
            bsp.sync()?;
            Ok(x.as_slice(bsp).iter().sum::<u64>() as u32)
        })
        .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        assert!(
            got.iter().all(|&v| v == 34),
            "{} p={p}: {got:?}",
            engine.name()
        );
        let pids = own_pids(got.len());
        for &pid in &pids {
            let prof = read_json(&dir.join(format!("profile.{pid}.json")));
            let r = row(&prof, 1);
            let what = format!("{} p={p} process {pid}", engine.name());
            // Shared memory keeps the hpput and the owned put apart; the
            // exchange engines send small ones as puts (PROFILE.md).
            let hp = match engine {
                Engine::Serial | Engine::Threads => 2,
                _ => 0,
            };
            for dir in ["out", "in"] {
                assert_eq!(r[&format!("hpputs_{dir}")], hp, "{what}");
                assert_eq!(r[&format!("puts_{dir}")], 3 - hp, "{what}");
                assert_eq!(r[&format!("records_{dir}")], 3, "{what}");
                assert_eq!(r[&format!("bytes_{dir}")], 32, "{what}");
            }
        }
        clean(&dir, &pids);
    }
}

/// An accumulate record is of a kind the walker does not know: it counts
/// one `other` record and stops the walk of that stream (PROFILE.md), not
/// misread as a put with its payload words read as record headers.
#[test]
fn an_accumulate_counts_as_other_and_is_not_misread_as_a_put() {
    use bsplib::Op;
    for (engine, p) in configurations() {
        let dir = profile_dir("acc");
        let got = run_profiled(engine, p, &dir, |bsp| {
            let right = (bsp.pid() + 1) % bsp.nprocs();
            let x = Area::<u64>::new(bsp, 4);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            bsp.put(right, &x, 0, &[10u64])?;
            bsp.accumulate(right, &x, 1, &[5u64, 0], Op::Sum)?;
            bsp.sync()?;
            Ok(x.as_slice(bsp).iter().sum::<u64>() as u32)
        })
        .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        assert!(
            got.iter().all(|&v| v == 15),
            "{} p={p}: {got:?}",
            engine.name()
        );
        let pids = own_pids(got.len());
        for &pid in &pids {
            let prof = read_json(&dir.join(format!("profile.{pid}.json")));
            let r = row(&prof, 1);
            let what = format!("{} p={p} process {pid}", engine.name());
            for dir in ["out", "in"] {
                assert_eq!(r[&format!("puts_{dir}")], 1, "{what}");
                assert_eq!(r[&format!("other_{dir}")], 1, "{what}");
                assert_eq!(r[&format!("records_{dir}")], 2, "{what}");
                assert_eq!(r[&format!("bytes_{dir}")], 8, "{what}");
            }
        }
        clean(&dir, &pids);
    }
}

#[test]
fn active_messages_are_counted_in_the_superstep_they_are_sent_and_handled_in() {
    use bsplib::am::{Counters, Handlers, Landing};
    for (engine, p) in configurations() {
        let dir = profile_dir("am");
        let got = run_profiled(engine, p, &dir, |bsp| {
            let right = (bsp.pid() + 1) % bsp.nprocs();
            let mut hs = Handlers::new();
            let nothing = hs.add::<u32, u8>("nothing", |_| Landing::none());
            bsp.am().init(hs)?; // superstep 0
            for k in 0..3u32 {
                bsp.am().send(right, nothing, &[k], &[], Counters::none())?;
            }
            bsp.sync()?; // superstep 1: 3 sent, 3 handled
            bsp.am()
                .send(right, nothing, &[9u32], &[], Counters::none())?;
            bsp.am().term()?; // superstep 2: 1 sent, 1 handled
            Ok(0)
        })
        .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        let pids = own_pids(got.len());
        for &pid in &pids {
            let prof = read_json(&dir.join(format!("profile.{pid}.json")));
            let what = format!("{} p={p} process {pid}", engine.name());
            for (s, n) in [(0, 0), (1, 3), (2, 1), (3, 0)] {
                let r = row(&prof, s);
                assert_eq!(r["am_out"], n, "{what} superstep {s}");
                assert_eq!(r["am_in"], n, "{what} superstep {s}");
                assert_eq!(r["records_out"], n, "{what} superstep {s}");
            }
        }
        clean(&dir, &pids);
    }
}

#[test]
fn a_directory_that_cannot_be_made_fails_the_start_naming_it() {
    if mpi_mode() {
        return;
    }
    let file = std::env::temp_dir().join(format!("bsplib-profile-file-{}", std::process::id()));
    std::fs::write(&file, b"not a directory").unwrap();
    let dir = file.join("sub");
    let err = Runtime::new(2)
        .profile(Some(dir.clone()))
        .run(|bsp| bsp.sync())
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Startup { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&dir.display().to_string()), "{text}");
    assert!(text.contains("profile directory"), "{text}");
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn a_profile_that_cannot_be_written_at_the_end_leaves_the_run_s_outcome() {
    if mpi_mode() {
        return;
    }
    // The directory disappears during the run: the files cannot be
    // written (each process says so on standard error), and the run still
    // returns its results.
    let dir = profile_dir("gone");
    let gone = dir.clone();
    let r = Runtime::new(2)
        .profile(Some(dir.clone()))
        .run(move |bsp| {
            bsp.sync()?;
            if bsp.pid() == 0 {
                std::fs::remove_dir_all(&gone).unwrap();
            }
            bsp.sync()?;
            Ok(bsp.pid())
        })
        .unwrap();
    assert_eq!(r, vec![0, 1]);
    assert!(!dir.exists());
}
