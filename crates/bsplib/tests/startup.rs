//! The start's refusals (`ARCHITECTURE.md`, "No quiet surprises"): a run
//! on an engine other than `mpi` in a program an MPI launcher started as
//! one rank of several, and a `serial` run of more than one process. Each
//! is an [`ErrorKind::Startup`] that says why, on every start path, where
//! the run used to go on quietly (a whole run in every rank; one process).
//!
//! The launcher's variables are set in a child, this binary run again
//! (`child`, which does nothing unless `BSPLIB_STARTUP_CHILD` names a start
//! path), never in the test process's own environment.

use std::process::Command;

use bsplib::launch::Launch;
use bsplib::{Engine, Error, ErrorKind, Runtime};

/// The variables the child's start reads, removed from what it inherits.
const READ: [&str; 4] = [
    "BSPLIB_ENGINE",
    "BSPLIB_DEADLINE",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
];

/// The start paths the child can take, and the engine each runs on when
/// nothing in the environment chooses one.
const PATHS: [(&str, &str); 6] = [
    ("run", "threads"),
    ("runtime_new", "threads"),
    ("from_env", "threads"),
    ("processes", "processes"),
    ("serial", "serial"),
    ("launch", "threads"),
];

/// A `threads` run of one process through the front doors' protocol
/// (`bsplib::launch`), as C's `bsp_begin` starts one; its process count.
fn launched(engine: Engine, nprocs: usize) -> Result<usize, Error> {
    // SAFETY: this thread runs the run's one process, attached once below
    // and ended with `end`; nothing forks (`threads` or `serial`, p = 1).
    let launch = unsafe { Launch::new(engine, nprocs, None) }?;
    assert_eq!(launch.nprocs(), 1, "one process: this thread runs it");
    // SAFETY: process 0, on this thread only, attached once.
    let mut me = unsafe { launch.attach(0) }?;
    me.bsp().sync()?;
    // SAFETY: the handle of this launch, ended once.
    unsafe { launch.end(me) }?;
    // SAFETY: process 0 ended: no process waits for it.
    unsafe { launch.join() };
    Ok(launch.nprocs())
}

/// Starts a run by `path`; the number of processes it had.
fn start(path: &str) -> Result<usize, Error> {
    let n = |r: Result<Vec<usize>, Error>| r.map(|r| r.len());
    match path {
        "run" => n(bsplib::run(2, |bsp| Ok(bsp.pid()))),
        "runtime_new" => n(Runtime::new(2).run(|bsp| Ok(bsp.pid()))),
        "from_env" => n(Runtime::from_env(2).run(|bsp| Ok(bsp.pid()))),
        // Refused before anything forks (this test never gets that far).
        "processes" => n(Runtime::new(2)
            .engine(Engine::Processes)
            .run(|bsp| Ok(bsp.pid()))),
        "serial" => n(Runtime::new(1)
            .engine(Engine::Serial)
            .run(|bsp| Ok(bsp.pid()))),
        "launch" => launched(Engine::Threads, 1),
        _ => panic!("no start path {path}"),
    }
}

/// The child: starts a run by the path `BSPLIB_STARTUP_CHILD` names and
/// prints its outcome on one line (`outcome: ok <p>`, `outcome: startup
/// <detail>`, `outcome: other <error>`).
#[test]
fn child() {
    let Ok(path) = std::env::var("BSPLIB_STARTUP_CHILD") else {
        return;
    };
    match start(&path) {
        Ok(n) => println!("outcome: ok {n}"),
        Err(e) => match e.kind() {
            ErrorKind::Startup { detail } => {
                assert_eq!(e.call(), "bsp_begin");
                println!("outcome: startup {detail}")
            }
            _ => println!("outcome: other {e}"),
        },
    }
}

/// Runs the child on `path` with `env`; its outcome line, without
/// `outcome: `.
fn outcome(path: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env("BSPLIB_STARTUP_CHILD", path);
    for var in READ {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{path} {env:?}: {out:?}");
    stdout
        .lines()
        // libtest writes `test child ... ` before the child's own output.
        .find_map(|l| l.split_once("outcome: ").map(|(_, o)| o))
        .unwrap_or_else(|| panic!("{path} {env:?}: no outcome in {stdout:?}"))
        .to_owned()
}

#[test]
fn every_start_path_refuses_another_engine_in_a_job_of_several_ranks() {
    for (var, ranks) in [("OMPI_COMM_WORLD_SIZE", "2"), ("PMI_SIZE", "3")] {
        for (path, engine) in PATHS {
            let got = outcome(path, &[(var, ranks)]);
            let what = format!("{path} under {var}={ranks}: {got}");
            let detail = got
                .strip_prefix("startup ")
                .unwrap_or_else(|| panic!("{what}: not a start-up error"));
            for part in [
                format!("{var}={ranks}:"),
                format!("as one of {ranks} processes"),
                format!("the {engine} engine"),
                "pass -x BSPLIB_ENGINE=mpi to mpirun".to_owned(),
            ] {
                assert!(detail.contains(&part), "{what}: wants {part:?}");
            }
            assert_eq!(
                detail.contains("this library was built without the mpi engine"),
                !cfg!(feature = "mpi"),
                "{what}"
            );
        }
    }
}

#[test]
fn a_job_of_one_rank_runs_any_engine() {
    let one = [("OMPI_COMM_WORLD_SIZE", "1"), ("PMI_SIZE", "1")];
    for (path, engine) in PATHS {
        let n = if engine == "threads" && path != "launch" {
            2
        } else {
            1
        };
        let got = outcome(path, &one);
        assert!(!got.contains("MPI launcher"), "{path}: {got}");
        // `processes` is started here through `Runtime::run`, which may
        // refuse it for a reason of its own (results in other address
        // spaces): only the launcher's refusal is looked for.
        if engine != "processes" {
            assert_eq!(got, format!("ok {n}"), "{path}");
        }
    }
    // Not numbers: no launcher's word.
    let got = outcome("run", &[("OMPI_COMM_WORLD_SIZE", "many")]);
    assert_eq!(got, "ok 2");
}

#[test]
fn a_program_that_chooses_its_engine_is_told_that_bsplib_engine_is_not_read() {
    for path in ["run", "runtime_new"] {
        let got = outcome(
            path,
            &[("OMPI_COMM_WORLD_SIZE", "2"), ("BSPLIB_ENGINE", "mpi")],
        );
        for part in [
            "the threads engine",
            "BSPLIB_ENGINE=mpi is set, but this program chooses its engine itself",
            "start the run with Runtime::from_env, or choose Engine::Mpi",
        ] {
            assert!(got.contains(part), "{path}: {got}: wants {part:?}");
        }
    }
}

#[test]
fn serial_refuses_more_than_one_process_naming_the_engine_and_p() {
    let refused = |err: Error, p: usize| {
        let ErrorKind::Startup { detail } = err.kind() else {
            panic!("not a start-up error: {err}");
        };
        let want = format!("the serial engine runs one process; {p} were asked for: use threads");
        assert!(detail.contains(&want), "{detail}");
        assert_eq!(err.call(), "bsp_begin");
    };
    for p in [2, 4, usize::MAX - 1] {
        let serial = Runtime::new(p).engine(Engine::Serial);
        refused(serial.run(|bsp| Ok(bsp.pid())).unwrap_err(), p);
        refused(launched(Engine::Serial, p).unwrap_err(), p);
    }
    // `BSPLIB_ENGINE=serial` asks the same.
    let got = outcome("from_env", &[("BSPLIB_ENGINE", "serial")]);
    assert_eq!(
        got,
        "startup the serial engine runs one process; 2 were asked for: use threads"
    );
}

#[test]
fn serial_gives_one_process_for_one_or_for_every_process_there_is() {
    for p in [1, usize::MAX] {
        let serial = Runtime::new(p).engine(Engine::Serial);
        assert_eq!(serial.run(|bsp| Ok(bsp.nprocs())).unwrap(), vec![1], "{p}");
        assert_eq!(launched(Engine::Serial, p).unwrap(), 1, "{p}");
    }
}

/// `usize::MAX` asks for every process there is: the hardware threads on
/// `threads` and `processes` (not 2^64 processes' bookkeeping).
#[test]
fn usize_max_is_every_process_there_is() {
    if std::env::var("BSPLIB_ENGINE").as_deref() == Ok("mpi") {
        return; // the job's ranks, the harness's mpi mode checks that
    }
    let n = bsplib::available_processes();
    let r = bsplib::Runtime::new(usize::MAX)
        .run(|bsp| Ok(bsp.nprocs()))
        .unwrap();
    assert_eq!(r, vec![n; n]);
    // (A run on processes would fork this multi-threaded test binary.)
    let processes = bsplib::Runtime::new(usize::MAX).engine(bsplib::Engine::Processes);
    assert_eq!(processes.nprocs(), n);
}
