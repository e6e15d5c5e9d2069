//! Every process's profile is in process 0's directory at the end of a
//! run, on every engine (`src/PROFILE.md`, "Memory and output"): on
//! `threads` and `processes` each process writes its own file; on `mpi`
//! the files travel to process 0, which writes them all, so a directory
//! local to each host (`/tmp` on a cluster) holds the whole profile on
//! process 0's host and nothing on the others (issue 26, rows 4 and 5).
//! Each file names the host its process ran on.
//!
//! Under `mpirun` (`.ci/mpi`, `.ci/cluster`) every rank runs the same
//! checks: process 0's rank reads the files; a rank on another host than
//! process 0's checks that its own directory holds none.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use bsplib::{Area, Bsp, Engine, Error, Runtime};
use common::{configurations, mpi_mode, HANG};
use serde_json::Value;

/// This host's name, as the library writes it.
fn host() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    assert_eq!(rc, 0, "gethostname");
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Runs `spmd` on `engine` (as `common::run_on`), profiled into `dir` if
/// given.
fn run<R, F>(engine: Engine, p: usize, dir: Option<&Path>, spmd: F) -> Result<Vec<R>, Error>
where
    F: Fn(&mut Bsp) -> Result<R, Error> + Sync + Send + 'static,
    R: bsplib::Portable + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let dir = dir.map(Path::to_path_buf);
    std::thread::spawn(move || {
        let runtime = Runtime::new(p)
            .engine(engine)
            .return_everywhere(true)
            .profile(dir);
        // SAFETY: as in `common::run_on`: the test binary's other threads
        // take no lock a scenario needs.
        let runtime = unsafe { runtime.fork_with_threads() };
        let _ = tx.send(runtime.run(spmd));
    });
    rx.recv_timeout(HANG)
        .unwrap_or_else(|_| panic!("run on {} p={p}: a hang", engine.name()))
}

/// A directory for one profiled run, the same path on every rank of an
/// `mpirun` job: process 0 picks its name in an unprofiled run first (its
/// OS pid and a count), and every rank gets the name with the results.
fn agreed_dir(engine: Engine, p: usize, name: &str) -> PathBuf {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let token = format!("{}-{n}", std::process::id());
    let names = run(engine, p, None, move |bsp| {
        let mut mine = token.clone().into_bytes();
        mine.resize(64, 0);
        let mut word = [0u8; 64];
        word.copy_from_slice(&mine);
        bsp.collectives().broadcast(0, &mut word)?;
        let end = word.iter().position(|&b| b == 0).unwrap_or(64);
        Ok(String::from_utf8_lossy(&word[..end]).into_owned())
    })
    .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
    std::env::temp_dir().join(format!("bsplib-gathered-{}-{name}", names[0]))
}

/// The `profile.<pid>.json` files of `dir` (pids), and whether anything
/// else of the library's is left there (a temporary file).
fn listing(dir: &Path) -> (BTreeSet<usize>, Vec<String>) {
    let mut pids = BTreeSet::new();
    let mut other = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (pids, other);
    };
    for e in entries {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        match name
            .strip_prefix("profile.")
            .and_then(|r| r.strip_suffix(".json"))
            .and_then(|n| n.parse().ok())
        {
            Some(pid) => {
                pids.insert(pid);
            }
            None => other.push(name),
        }
    }
    (pids, other)
}

/// Checks `dir` after a run whose processes returned `hosts` (each its
/// host name): on process 0's host, one complete file per process, each
/// naming its process's host; on another host, no file. `rows(pid)`: the
/// rows process `pid`'s file must have. Then removes what this rank may.
fn check_and_clean(
    engine: Engine,
    dir: &Path,
    hosts: &[String],
    rows: &dyn Fn(usize) -> usize,
    what: &str,
) {
    let n = hosts.len();
    let what = format!("{} p={n} {what}", engine.name());
    let me = host();
    let rank0 = !mpi_mode() || std::env::var("OMPI_COMM_WORLD_RANK").as_deref() == Ok("0");
    if !rank0 {
        if me != hosts[0] {
            // Another host than process 0's: nothing was written here.
            let (pids, other) = listing(dir);
            assert!(
                pids.is_empty() && other.is_empty(),
                "{what}: {me} (not process 0's host {}) holds {pids:?} {other:?}",
                hosts[0]
            );
            let _ = std::fs::remove_dir(dir);
        }
        return;
    }
    let (pids, other) = listing(dir);
    assert_eq!(
        pids,
        (0..n).collect::<BTreeSet<_>>(),
        "{what}: every process's file in {}",
        dir.display()
    );
    assert!(other.is_empty(), "{what}: left over: {other:?}");
    for (pid, host) in hosts.iter().enumerate() {
        let path = dir.join(format!("profile.{pid}.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{what}: {} is not JSON: {e}", path.display()));
        let b = &v["bsplib"];
        assert_eq!(b["pid"], pid as u64, "{what}");
        assert_eq!(b["nprocs"], n as u64, "{what}");
        assert_eq!(b["engine"], engine.name(), "{what}");
        assert_eq!(
            b["host"], *host,
            "{what}: process {pid}'s file names its host"
        );
        let steps = b["supersteps"].as_array().unwrap();
        assert_eq!(steps.len(), rows(pid), "{what}: process {pid}'s rows");
        let ended_by = b["columns"]
            .as_array()
            .unwrap()
            .iter()
            .position(|c| c == "ended_by")
            .unwrap();
        assert_eq!(
            steps.last().unwrap()[ended_by],
            "bsp_end",
            "{what}: process {pid}'s file ends with its end"
        );
        let events = v["traceEvents"].as_array().unwrap();
        assert!(
            events.iter().all(|e| e["tid"] == pid as u64),
            "{what}: process {pid}'s track"
        );
        std::fs::remove_file(&path).unwrap();
    }
    std::fs::remove_dir(dir).unwrap();
}

/// Three supersteps, each a put to the right neighbour; returns the host.
fn ring(bsp: &mut Bsp) -> Result<String, Error> {
    let p = bsp.nprocs();
    let x = Area::<u64>::new(bsp, 1);
    bsp.push_reg(&x)?;
    bsp.sync()?;
    for step in 0..3u64 {
        bsp.put((bsp.pid() + 1) % p, &x, 0, &[step])?;
        bsp.sync()?;
    }
    Ok(host())
}

#[test]
fn every_process_s_profile_is_in_process_0_s_directory() {
    for (engine, p) in configurations() {
        let dir = agreed_dir(engine, p, "ring");
        let hosts = run(engine, p, Some(&dir), ring)
            .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        // 4 syncs and the end.
        check_and_clean(engine, &dir, &hosts, &|_| 5, "a run that ends well");
    }
}

#[test]
fn a_failed_run_still_leaves_every_process_s_profile() {
    for (engine, p) in configurations() {
        let n = Runtime::new(p).engine(engine).nprocs();
        if n < 2 {
            continue;
        }
        // The hosts, from a run that ends well.
        let hosts = run(engine, p, None, |_| Ok(host())).unwrap();
        let dir = agreed_dir(engine, p, "failed");
        // Process 1 fails in superstep 2 (a put to a process that does not
        // exist); the others leave that superstep's sync with an error.
        let r = run(engine, p, Some(&dir), |bsp| {
            bsp.sync()?;
            bsp.sync()?;
            if bsp.pid() == 1 {
                let x = Area::<u64>::new(bsp, 1);
                bsp.put(bsp.nprocs(), &x, 0, &[1])?;
            }
            bsp.sync()?;
            Ok(())
        });
        assert!(r.is_err(), "{} p={p}: {r:?}", engine.name());
        // Process 1: 2 syncs and the end; the others also the failed sync.
        let rows = |pid: usize| if pid == 1 { 3 } else { 4 };
        check_and_clean(engine, &dir, &hosts, &rows, "a failed run");
    }
}

/// A profile directory that process 0 cannot make (a file is in the way):
/// every process's start fails with the same error naming it, none runs
/// on (on `mpi` only process 0's directory counts; the others waited for
/// it in their first sync for ever when its start failed alone).
#[test]
fn a_directory_process_0_cannot_make_fails_every_process_s_start() {
    for (engine, p) in configurations() {
        let file = agreed_dir(engine, p, "in-the-way");
        std::fs::write(&file, b"not a directory\n").unwrap();
        let dir = file.join("profile");
        let r = run(engine, p, Some(&dir), |bsp| {
            bsp.sync()?;
            Ok(())
        });
        let _ = std::fs::remove_file(&file);
        let e = r.expect_err("a run whose profile directory cannot be made");
        assert!(
            matches!(e.kind(), bsplib::ErrorKind::Startup { .. }),
            "{} p={p}: {e}",
            engine.name()
        );
        let text = e.to_string();
        assert!(
            text.contains("bsp_begin (process 0")
                && text.contains(&format!("the profile directory {}", dir.display()))
                && text.contains("cannot be created"),
            "{} p={p}: {text}",
            engine.name()
        );
    }
}
