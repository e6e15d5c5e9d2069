//! `bsprun` watches the program it runs through the run's status board:
//! on Ctrl-C it prints where every process is, and when process 0 is
//! killed by a signal no handler can catch it names it with its superstep.
//! Both on `threads` and `processes` (mpi runs under `mpirun`, whose own
//! signal handling applies).

mod harness;

use std::time::{Duration, Instant};

use harness::*;

const P: usize = 3;
/// Time for every process to reach its place (process 1 computing in
/// superstep 1, the others waiting in its sync).
const SETTLE: Duration = Duration::from_millis(800);

/// Runs `spin_forever` on `engine` and calls `act(bsprun_pid, group)` once,
/// after [`SETTLE`]; returns stderr, after checking the run ended (with a
/// non-zero status) within 5 s of the action.
fn run_and(engine: &str, act: impl Fn(i32, i32)) -> String {
    // Built once for both tests: a test rebuilding the program while the
    // other starts it would run a half-written file.
    static EXE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let exe = EXE.get_or_init(|| build("spin_forever.c", "bsprun_watch", false));
    let start = Instant::now();
    let mut acted: Option<Instant> = None;
    let out = run(
        exe,
        engine,
        P,
        &[],
        &[],
        Duration::from_secs(30),
        |child, group| {
            if acted.is_none() && start.elapsed() >= SETTLE {
                act(child.id() as i32, group);
                acted = Some(Instant::now());
            }
            None
        },
    );
    assert!(
        out.problems.is_empty(),
        "{engine}: {:?}\n{}",
        out.problems,
        out.stderr
    );
    assert!(
        out.status.is_some_and(|s| !s.success()),
        "{engine}: expected a failed run, got {}",
        describe(out.status)
    );
    let took = acted.map(|a| a.elapsed());
    assert!(
        took.is_some_and(|t| t < Duration::from_secs(5)),
        "{engine}: the run ended {took:?} after the signal ({}):\n{}",
        describe(out.status),
        out.stderr
    );
    out.stderr
}

fn watched_engines() -> Vec<String> {
    engines().into_iter().filter(|e| e != "mpi").collect()
}

#[test]
fn ctrl_c_prints_where_every_process_is() {
    for engine in watched_engines() {
        let stderr = run_and(&engine, |bsprun, _| {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(bsprun, libc::SIGINT) };
        });
        let want = [
            "bsplib: interrupted by signal 2",
            "process 0: waiting in bsp_sync of superstep 1",
            "process 1: computing in superstep 1",
            "process 2: waiting in bsp_sync of superstep 1",
        ];
        assert!(
            stderr.lines().any(|l| want.iter().all(|w| l.contains(w))),
            "{engine}: expected a line with {want:?}, got:\n{stderr}"
        );
    }
}

#[test]
fn a_sigkill_of_process_0_is_named_by_bsprun() {
    for engine in watched_engines() {
        let stderr = run_and(&engine, |bsprun, group| {
            // Process 0 is bsprun's child: the program itself.
            let program = group_members(group)
                .into_iter()
                .find(|m| m.ppid == bsprun)
                .expect("bsprun's child");
            kill_process(program.pid);
        });
        let want: &[&str] = if engine == "processes" {
            &[
                "bsplib: the SPMD function (process 0, superstep 1)",
                "process 0 was killed by signal 9",
                "process 1: computing in superstep 1",
            ]
        } else {
            &[
                "was killed by signal 9",
                "which ended all its processes",
                "process 1: computing in superstep 1",
            ]
        };
        assert!(
            stderr.lines().any(|l| want.iter().all(|w| l.contains(w))),
            "{engine}: expected a line with {want:?}, got:\n{stderr}"
        );
    }
}
