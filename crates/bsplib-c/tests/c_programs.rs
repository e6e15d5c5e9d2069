//! The C test programs of `tests/c/`, built with `bspcc` and run with
//! `bsprun` on both engines (`threads`, `processes`) and P = 1..4.
//!
//! Every program is self-checking (`tests/c/check.h`): a failed check calls
//! `bsp_abort`. The tables below say what each run must produce: exit status
//! 0 and an exact stdout for the normal programs; for the error programs a
//! non-zero status and a stderr line naming the call, `process <pid>`,
//! `superstep <s>` and `<file>:<line>`, the line being the one marked
//! `/* ERROR */` in the program. Every run has a time limit: a hang is
//! killed (with its whole process group) and reported as a failure.
//!
//! A test collects every failing run (program, engine, P, status, stdout,
//! stderr) and reports them all at once.

mod harness;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use harness::{
    bsprun, c_dir, describe, has_number, indent_tail, lib_dir, listed_engines, marker_line,
    out_dir, par_map, run_command, try_build, Outcome, ASAN_FLAGS, C_FLAGS,
};

// The engines: `listed_engines()`, those of `BSPLIB_TEST_ENGINES`
// (comma-separated; CI's MPI step sets `mpi`), else threads and processes.
const NPROCS: [usize; 4] = [1, 2, 3, 4];
/// Process counts of the AddressSanitizer runs.
const ASAN_NPROCS: [usize; 2] = [2, 4];
/// A run taking longer than this is a hang.
const TIMEOUT: Duration = Duration::from_secs(60);
/// Failure reports show this much of a run's stdout and stderr (the tail).
const SHOWN: usize = 4000;

/// How the programs are compiled: `bspcc <flags> prog.c -o prog`.
struct Variant {
    name: &'static str,
    /// `BSPCC_CC`, the compiler `bspcc` drives.
    cc: Option<&'static str>,
    flags: &'static [&'static str],
    /// An AddressSanitizer build: `flags` and [`ASAN_FLAGS`].
    asan: bool,
}

#[rustfmt::skip]
const C99: Variant = Variant { name: "c99", cc: None, flags: C_FLAGS, asan: false };
/// The C99 build again, in its own directory: the checking-mode test runs
/// the programs other tests build at the same time (sharing a directory,
/// one test could run a binary another is rewriting).
#[rustfmt::skip]
const C99_CHECK: Variant = Variant { name: "c99-check", cc: None, flags: C_FLAGS, asan: false };
#[rustfmt::skip]
const ASAN: Variant = Variant { name: "asan", cc: None, flags: C_FLAGS, asan: true };
#[rustfmt::skip]
const CXX: Variant = Variant { name: "cxx", cc: Some("g++"), flags: &["-std=c++11", "-Wall", "-Werror", "-g"], asan: false };

/// What a run must produce.
#[derive(Clone, Copy)]
enum Expect {
    /// Exit status 0 and stdout exactly `ok\n` (printed by process 0).
    Ok,
    /// Exit status 0 and exactly this stdout, given P.
    Stdout(fn(usize) -> String),
    /// Exit status 0 and these stdout lines in any order, given P.
    Lines(fn(usize) -> String),
    /// An error found by the library: non-zero status and a stderr line
    /// naming `call`, `process <pid>`, `superstep <superstep>` and the
    /// `file:line` of the `/* ERROR */` marker. Skipped below `min_p`.
    Error {
        call: &'static str,
        pid: usize,
        superstep: usize,
        min_p: usize,
    },
    /// Processes that disagree about a collective: non-zero status and a
    /// stderr line naming one of `calls`, some process, `superstep
    /// <superstep>` and the `file:line` of the `/* ERROR */` marker (the
    /// processes on either side of a disagreement both find it, and
    /// whichever is first is reported: the program makes its diverging
    /// calls on the marked line). Skipped below `min_p`.
    Mismatch {
        calls: &'static [&'static str],
        superstep: usize,
        min_p: usize,
    },
    /// A failure the program asks for (`bsp_abort`, `exit(1)`): non-zero
    /// status, `stderr_has` in stderr, exactly `stdout` on stdout.
    Fails {
        stderr_has: &'static str,
        stdout: fn(usize) -> String,
        min_p: usize,
    },
    /// A failure that names where it happened though not through a
    /// located call (an `exit`, a deadline): non-zero status and a stderr
    /// line containing every one of `all`. With `lines`, stdout holds
    /// exactly those lines in any order (output is not lost).
    Names {
        all: &'static [&'static str],
        lines: Option<fn(usize) -> String>,
        min_p: usize,
    },
    /// Process 1 dies from a signal while the others wait in `bsp_sync`:
    /// non-zero status, no hang, and a message naming process 1: from the
    /// library's handler for signals it can catch, else (`SIGKILL`) from
    /// `bsprun` (on `mpi`, from what the surviving ranks say when `mpirun`
    /// ends the job).
    Crash,
}

/// One C program of `tests/c/`, its standard input (none: `/dev/null`) and
/// its expected outcome.
struct Prog {
    file: &'static str,
    input: Option<fn(usize) -> String>,
    expect: Expect,
    /// Environment variables of the run.
    env: &'static [(&'static str, &'static str)],
    /// The engines the program runs on (all if empty).
    only: &'static [&'static str],
    /// Not run under AddressSanitizer (a program that reads out of bounds
    /// on purpose, which ASan reports before the library's crash handler
    /// can, or one whose forked child LeakSanitizer would check).
    no_asan: bool,
}

const fn prog(file: &'static str, expect: Expect) -> Prog {
    Prog {
        file,
        input: None,
        expect,
        env: &[],
        only: &[],
        no_asan: false,
    }
}

const fn fed(file: &'static str, input: fn(usize) -> String, expect: Expect) -> Prog {
    Prog {
        file,
        input: Some(input),
        expect,
        env: &[],
        only: &[],
        no_asan: false,
    }
}

const fn names(file: &'static str, all: &'static [&'static str], min_p: usize) -> Prog {
    prog(
        file,
        Expect::Names {
            all,
            lines: None,
            min_p,
        },
    )
}

/// A run with a deadline of one second (`BSPLIB_DEADLINE`), on every
/// engine (on mpi through `bsprun --engine mpi`, which forwards it).
const fn deadline(prog: Prog) -> Prog {
    Prog {
        env: &[("BSPLIB_DEADLINE", "1")],
        ..prog
    }
}

const fn ok(file: &'static str) -> Prog {
    prog(file, Expect::Ok)
}

const fn err(
    file: &'static str,
    call: &'static str,
    pid: usize,
    superstep: usize,
    min_p: usize,
) -> Prog {
    prog(
        file,
        Expect::Error {
            call,
            pid,
            superstep,
            min_p,
        },
    )
}

const fn fails(file: &'static str, stderr_has: &'static str, min_p: usize) -> Prog {
    prog(
        file,
        Expect::Fails {
            stderr_has,
            stdout: nothing,
            min_p,
        },
    )
}

/// One program per primitive, covering its semantics.
#[rustfmt::skip]
const PRIMITIVES: &[Prog] = &[
    ok("begin_end_spmd.c"),
    prog("begin_fewer.c", Expect::Stdout(begin_fewer_out)),
    prog("init_mode.c", Expect::Stdout(|_| "before\nok\nafter\n".into())),
    ok("time.c"),
    ok("sync.c"),
    ok("push_pop_reg.c"),
    ok("put.c"),
    ok("get.c"),
    ok("strided.c"),
    ok("hpput.c"),
    ok("hpget.c"),
    ok("set_tagsize.c"),
    ok("bsmp.c"),
    ok("hpmove.c"),
    fails("abort.c", "bsp_abort test: 42 forty-two", 1),
    ok("all_calls.c"),
];

/// The C examples of the paper and the manual pages, results checked.
#[rustfmt::skip]
const PAPER_EXAMPLES: &[Prog] = &[
    prog("hello.c", Expect::Lines(hello_out)),
    fed("hello_init.c", |p| format!("{p}\n"), Expect::Lines(hello_out)),
    prog("hello_sync.c", Expect::Stdout(hello_out)),
    ok("reverse.c"),
    ok("put_array.c"),
    ok("get_array.c"),
    ok("bsp_sum.c"),
    ok("cyclic_shift.c"),
    prog("allsums.c", Expect::Lines(allsums_out)),
    ok("sparse_vec.c"),
];

/// `inprod.c` reads "P n" on process 0: all of P; fewer than P, with n
/// smaller than the number of processes; more than P (refused).
#[rustfmt::skip]
const INPROD: &[Prog] = &[
    fed("inprod.c", |p| format!("{p} 1000\n"), Expect::Stdout(|_| inprod_out(1000))),
    fed(
        "inprod.c",
        |p| format!("{}\n2\n", p.max(2) - 1),
        Expect::Stdout(|_| inprod_out(2)),
    ),
    fed(
        "inprod.c",
        |p| format!("{}\n10\n", p + 1),
        Expect::Fails {
            stderr_has: "Sorry, only",
            stdout: |_| "How many processes do you want to use?\n".into(),
            min_p: 1,
        },
    ),
];

/// BSPedupack's LU decomposition (`lu.c`, 2D cyclic over an M x N
/// grid, partial pivoting), n = 64: it checks P·A = L·U itself.
#[rustfmt::skip]
const LU: &[Prog] = &[
    prog("lu.c", Expect::Stdout(lu_out)),
];

/// One program per misuse; each marks its faulty call `/* ERROR */`.
/// `err(file, call, pid, superstep, min_p)`.
#[rustfmt::skip]
const ERRORS: &[Prog] = &[
    err("err_put_out_of_bounds.c", "bsp_put", 1, 1, 2),
    err("err_get_out_of_bounds.c", "bsp_get", 0, 1, 1),
    err("err_hpput_out_of_bounds.c", "bsp_hpput", 1, 2, 2),
    err("err_hpget_out_of_bounds.c", "bsp_hpget", 0, 1, 1),
    err("err_put_unregistered.c", "bsp_put", 0, 1, 1),
    err("err_get_unregistered.c", "bsp_get", 1, 0, 2),
    err("err_hpput_unregistered.c", "bsp_hpput", 0, 2, 1),
    err("err_hpget_unregistered.c", "bsp_hpget", 1, 0, 2),
    err("err_put_pid_out_of_range.c", "bsp_put", 0, 1, 1),
    err("err_put_negative_pid.c", "bsp_put", 1, 1, 2),
    err("err_get_pid_out_of_range.c", "bsp_get", 0, 1, 1),
    err("err_get_negative_pid.c", "bsp_get", 0, 1, 1),
    err("err_hpput_pid_out_of_range.c", "bsp_hpput", 0, 1, 1),
    err("err_hpget_negative_pid.c", "bsp_hpget", 1, 1, 2),
    err("err_put_negative_offset.c", "bsp_put", 0, 1, 1),
    err("err_get_negative_offset.c", "bsp_get", 1, 1, 2),
    err("err_put_negative_nbytes.c", "bsp_put", 0, 1, 1),
    err("err_hpget_negative_nbytes.c", "bsp_hpget", 0, 2, 1),
    err("err_put_null_registration.c", "bsp_put", 0, 1, 2),
    err("err_push_reg_negative_size.c", "bsp_push_reg", 0, 0, 1),
    err("err_push_reg_mismatch.c", "bsp_push_reg", 1, 1, 2),
    err("err_pop_reg_mismatch.c", "bsp_pop_reg", 1, 1, 2),
    err("err_set_tagsize_mismatch.c", "bsp_set_tagsize", 1, 0, 2),
    err("err_move_empty_queue.c", "bsp_move", 0, 1, 1),
    err("err_sync_after_end.c", "bsp_sync", 0, 1, 2),
    fails("err_abort_in_loop.c", "process 1 aborts while the others compute", 2),
    fails("err_abort_in_sync.c", "process 1 aborts while the others wait in bsp_sync", 2),
    prog("err_crash_segv.c", Expect::Crash),
    prog("err_crash_abort.c", Expect::Crash),
    prog("err_killed.c", Expect::Crash),
];

/// Bad pointers, exits, threads and processes of the program's own,
/// deadlines: the defects of the reliability issue, each a clean error (or
/// a run undisturbed); and a start under an MPI launcher on another engine.
#[rustfmt::skip]
const RELIABILITY: &[Prog] = &[
    err("err_get_null_dst.c", "bsp_get", 0, 1, 1),
    err("err_hpget_null_dst.c", "bsp_hpget", 0, 1, 1),
    err("err_put_null_src.c", "bsp_put", 0, 1, 1),
    err("err_hpput_null_src.c", "bsp_hpput", 0, 1, 1),
    err("err_send_null_tag.c", "bsp_send", 0, 1, 1),
    err("err_send_null_payload.c", "bsp_send", 0, 0, 1),
    err("err_move_null.c", "bsp_move", 0, 1, 1),
    err("err_get_tag_null.c", "bsp_get_tag", 0, 2, 1),
    Prog { no_asan: true, ..err("err_send_huge_tagsize.c", "bsp_send", 0, 1, 1) },
    err("err_put_to_null.c", "bsp_put", 0, 1, 1),
    err("err_put_strided_overlap.c", "bsp_put_strided", 0, 1, 1),
    err("err_get_strided_out_of_bounds.c", "bsp_get_strided", 0, 2, 1),
    err("err_put_vec_null.c", "bsp_put_vec", 0, 1, 1),
    err("err_pid_outside.c", "bsp_pid", 0, 0, 1),
    err("err_init_after_begin.c", "bsp_init", 0, 1, 1),
    err("err_call_from_thread.c", "bsp_pid", 0, 1, 1),
    err("err_begin_from_thread.c", "bsp_begin", 0, 1, 1),
    names("err_exit_mid_run.c", &["process 1, superstep 1", "process 1 exited (status 3) without calling bsp_end"], 2),
    names("err_main_returns.c", &["superstep 2", "without calling bsp_end"], 1),
    names("err_init_spmd_returns.c", &["process 1, superstep 1", "process 1", "without calling bsp_end"], 2),
    // Under ASan, LeakSanitizer calls the memory the forked child inherits
    // from the other threads leaked, and changes the child's exit status.
    // On mpi the child of a rank used to finalise MPI in its exit handlers
    // (waiting for the whole job: a hang); in bsp_init mode, a child of rank
    // 0 exiting before bsp_begin ended the job.
    Prog { no_asan: true, ..ok("user_fork.c") },
    Prog { no_asan: true, ..ok("user_fork_init.c") },
    prog("err_output_kept.c", Expect::Names {
        all: &["process 0 gives up"],
        lines: Some(|p| (0..p).map(|i| format!("line from process {i}\n")).collect()),
        min_p: 1,
    }),
    deadline(names("err_deadline.c", &["bsp_sync", "superstep 1", "never arrived: process 1 (computing in superstep 1)"], 2)),
    // On mpi across hosts the start's wait reads the target's status word
    // with MPI_Fetch_and_op (osc/pt2pt over TCP), which completes because
    // the target's progress thread answers for it (issue 26, row 7).
    deadline(names("err_rma_start_to_looping.c", &["bsp_win_start", "superstep 1", "err_rma_start_to_looping.c:14", "the run's deadline", "never arrived: process 1 (computing in superstep 1)"], 2)),
    deadline(names("err_deadline_loop.c", &["bsp_sync", "superstep 1", "err_deadline_loop.c:15", "the run's deadline", "never arrived: process 1 (computing in superstep 1)"], 2)),
    Prog { no_asan: true, ..names("err_crash_p0.c", &["process 0", "superstep 1", "signal 11"], 1) },
    // SIGKILL: bsprun names it (on mpi from what the other ranks say: at
    // least one other is needed to tell the superstep).
    names("err_killed_p0.c", &["process 0", "superstep 1", "signal 9"], 2),
    Prog { only: &["processes", "mpi"], ..deadline(names("err_stopped.c", &["bsp_sync", "never arrived: process 1 (computing in superstep 1)"], 2)) },
    // A program an MPI launcher started as one rank of several, on another
    // engine than mpi: refused at bsp_begin, saying how to choose mpi.
    Prog { env: &[("OMPI_COMM_WORLD_SIZE", "2")], only: &["threads", "processes"], ..names("hello.c", &["bsplib: bsp_begin", "OMPI_COMM_WORLD_SIZE=2: an MPI launcher", "pass -x BSPLIB_ENGINE=mpi"], 1) },
    Prog { env: &[("PMI_SIZE", "3")], only: &["threads", "processes"], ..names("hello.c", &["bsplib: bsp_begin", "PMI_SIZE=3: an MPI launcher", "pass -x BSPLIB_ENGINE=mpi"], 1) },
];

/// `lapi.h` (active messages, design in
/// `crates/bsplib/src/engine/ACTIVE_MESSAGES.md`): the seed's examples,
/// every return code, counters and progress, mixing with BSPlib, and the
/// errors found on targets, in handlers and in collective calls.
#[rustfmt::skip]
const LAPI: &[Prog] = &[
    ok("lapi_seed.c"),
    ok("lapi_codes.c"),
    ok("lapi_counters.c"),
    err("err_lapi_tgt_cntr_unset.c", "LAPI_Gfence", 0, 2, 1),
    err("err_lapi_unknown_handler.c", "LAPI_Gfence", 0, 2, 1),
    err("err_lapi_kind_mismatch.c", "LAPI_Gfence", 0, 2, 1),
    err("err_lapi_null_target.c", "LAPI_Gfence", 0, 2, 1),
    err("err_lapi_call_in_handler.c", "LAPI_Probe", 0, 2, 1),
    err("err_lapi_init_some.c", "bsp_sync", 1, 0, 2),
    // A counter wait that can never complete: found at once (the others
    // wait in their sync); every process waiting: by the deadline.
    err("err_lapi_waitcntr_never.c", "LAPI_Waitcntr", 0, 1, 1),
    deadline(names("err_lapi_waitcntr_all.c", &["LAPI_Waitcntr", "superstep 1", "err_lapi_waitcntr_all.c:15", "the run's deadline"], 2)),
];

const fn mismatch(file: &'static str, calls: &'static [&'static str], min_p: usize) -> Prog {
    prog(
        file,
        // The superstep of the calls (the first one of these programs).
        Expect::Mismatch {
            calls,
            superstep: 0,
            min_p,
        },
    )
}

/// `bsp_rma.h` (design in `crates/bsplib/src/ONE_SIDED.md`): deterministic
/// accumulate, fence hints (`bsp_sync_hint`), post/start/complete/wait and
/// locks, and the misuse that stops the run (false hints: `NOSUCCEED`
/// always, the others in checking mode).
#[rustfmt::skip]
const RMA: &[Prog] = &[
    ok("accumulate.c"),
    err("err_accumulate_operator.c", "bsp_accumulate", 0, 1, 1),
    err("err_accumulate_mismatch.c", "bsp_accumulate", 0, 1, 1),
    err("err_accumulate_two_origins.c", "bsp_sync", 0, 1, 2),
    err("err_accumulate_out_of_bounds.c", "bsp_accumulate", 0, 1, 1),
    err("err_accumulate_unregistered.c", "bsp_accumulate", 0, 1, 1),
    err("err_accumulate_unknown_type.c", "bsp_accumulate", 0, 1, 1),
    ok("sync_hint.c"),
    checked(ok("sync_hint.c")),
    err("err_sync_hint_nosucceed.c", "bsp_put", 0, 2, 1),
    err("err_sync_hint_unknown.c", "bsp_sync_hint", 0, 1, 1),
    checked(err("err_sync_hint_noprecede.c", "bsp_sync_hint", 0, 1, 1)),
    checked(err("err_sync_hint_noput.c", "bsp_sync_hint", 0, 1, 1)),
    checked(err("err_sync_hint_nostore.c", "bsp_sync_hint", 0, 2, 1)),
    ok("epochs.c"),
    err("err_rma_sync_in_epoch.c", "bsp_sync", 0, 1, 1),
    err("err_rma_unlock_without_lock.c", "bsp_unlock", 0, 1, 1),
    err("err_rma_lock_kind.c", "bsp_lock", 0, 1, 1),
    err("err_rma_outside_group.c", "bsp_put", 0, 1, 2),
    // Every engine: on mpi from the status board of one-sided mode.
    err("err_rma_never_posted.c", "bsp_win_start", 0, 1, 2),
    ok("windows.c"),
    ok("window_epoch_accumulate.c"),
    err("err_window_put_without_lock.c", "bsp_window_put", 0, 1, 1),
    err("err_window_write_under_shared_lock.c", "bsp_window_put", 0, 1, 1),
    err("err_window_unlock_without_lock.c", "bsp_window_unlock", 0, 1, 1),
    err("err_window_sync_while_locked.c", "bsp_sync", 0, 1, 1),
    err("err_window_out_of_bounds.c", "bsp_window_get", 0, 1, 1),
    err("err_window_complete_without_start.c", "bsp_window_complete", 0, 1, 1),
    err("err_window_sync_in_epoch.c", "bsp_sync", 0, 1, 1),
    err("err_window_lock_in_epoch.c", "bsp_window_lock", 0, 1, 1),
    err("err_window_accumulate_under_shared_lock.c", "bsp_window_accumulate", 0, 1, 1),
];

/// `bsp_level1.h` (the Oxford level-1 collectives, design in
/// `crates/bsplib/src/COLLECTIVES.md`): every function, and the
/// disagreements and bad arguments that stop the run.
#[rustfmt::skip]
const LEVEL1: &[Prog] = &[
    ok("level1.c"),
    ok("level1_enquiries.c"),
    mismatch("err_level1_some.c", &["bsp_sumI", "bsp_sync"], 2),
    mismatch("err_level1_root.c", &["bsp_bcast"], 2),
    mismatch("err_level1_size.c", &["bsp_gather"], 2),
    mismatch("err_level1_operator.c", &["bsp_sumD", "bsp_maxD"], 2),
    err("err_level1_negative_nbytes.c", "bsp_scatter", 0, 0, 1),
    err("err_level1_root_out_of_range.c", "bsp_bcast", 0, 0, 1),
];

/// A run in checking mode (`BSPLIB_CHECK=1`, what `bsprun --check` sets).
const fn checked(prog: Prog) -> Prog {
    Prog {
        env: &[("BSPLIB_CHECK", "1")],
        ..prog
    }
}

/// The checking mode (`crates/bsplib/src/CHECKING.md`): each seeded defect
/// stops the run with a line naming the call, a process, the superstep
/// and the line marked `/* ERROR */` (check-syncs and overlapping puts
/// name two processes and two lines: the marked line is one of them).
#[rustfmt::skip]
const CHECKING: &[Prog] = &[
    checked(prog("err_check_sync.c", Expect::Mismatch { calls: &["check-syncs"], superstep: 1, min_p: 2 })),
    checked(prog("err_check_overlap.c", Expect::Mismatch { calls: &["overlapping puts"], superstep: 1, min_p: 2 })),
    checked(err("err_check_hpput.c", "bsp_hpput", 0, 1, 1)),
];

fn nothing(_: usize) -> String {
    String::new()
}

fn begin_fewer_out(p: usize) -> String {
    format!("p={}\nok\n", p.max(2) - 1)
}

fn hello_out(p: usize) -> String {
    (0..p)
        .map(|i| format!("Hello BSP Worldwide from process {i} of {p}\n"))
        .collect()
}

fn allsums_out(p: usize) -> String {
    (1..=p)
        .map(|y| format!("y={y} sums={}\n", y * (y + 1) / 2))
        .collect()
}

fn inprod_out(n: u64) -> String {
    let e = n * (n + 1) * (2 * n + 1) / 6;
    format!(
        "How many processes do you want to use?\nPlease enter n:\n\
         Proc 0: inner product of x with itself for n = {n} is {e} (expected {e})\ninprod: done\n"
    )
}

/// `lu.c`'s line: its grid is M x N, M the largest divisor of p with
/// M·M <= p.
fn lu_out(p: usize) -> String {
    let m = (1..=p)
        .filter(|m| m * m <= p && p.is_multiple_of(*m))
        .max()
        .unwrap_or(1);
    format!(
        "lu: n = 64 on {m} x {} processes: P*A = L*U, every entry within 1e-10\n",
        p / m
    )
}

#[test]
fn each_primitive_program_passes_on_both_engines_with_1_to_4_processes() {
    run_table(PRIMITIVES, &C99, &NPROCS);
}

#[test]
fn paper_examples_give_the_documented_results() {
    run_table(PAPER_EXAMPLES, &C99, &NPROCS);
}

#[test]
fn every_misuse_stops_the_run_naming_call_process_superstep_and_line() {
    run_table(ERRORS, &C99, &NPROCS);
}

#[test]
fn bad_pointers_exits_foreign_threads_and_deadlines_end_in_one_clean_error() {
    run_table(RELIABILITY, &C99, &NPROCS);
}

#[test]
fn lapi_programs_pass_and_lapi_misuse_stops_the_run_naming_call_process_superstep_and_line() {
    run_table(LAPI, &C99, &NPROCS);
}

#[test]
fn rma_programs_pass_and_accumulate_misuse_stops_the_run_naming_the_call_and_line() {
    run_table(RMA, &C99, &NPROCS);
}

#[test]
fn level1_programs_pass_and_level1_misuse_stops_the_run_naming_the_call_and_line() {
    run_table(LEVEL1, &C99, &NPROCS);
}

#[test]
fn checking_mode_finds_each_seeded_defect_naming_calls_processes_superstep_and_lines() {
    run_table(CHECKING, &C99, &NPROCS);
}

#[test]
fn correct_programs_pass_silently_with_checking_on() {
    let correct: Vec<&Prog> = [PRIMITIVES, PAPER_EXAMPLES, LEVEL1, LU]
        .iter()
        .flat_map(|t| t.iter())
        .filter(|p| matches!(p.expect, Expect::Ok | Expect::Stdout(_) | Expect::Lines(_)))
        .collect();
    run_progs_env(&correct, &C99_CHECK, &NPROCS, &[("BSPLIB_CHECK", "1")]);
}

#[test]
fn inprod_reads_p_and_n_from_stdin_on_process_0_in_bsp_init_mode() {
    run_table(INPROD, &C99, &NPROCS);
}

#[test]
fn lu_decomposition_factors_its_matrix_on_every_grid() {
    run_table(LU, &C99, &NPROCS);
}

#[test]
fn header_compiles_as_c99_and_cpp_and_a_cpp_program_using_all_20_calls_runs() {
    let obj_dir = out_dir("c_programs/header");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let compilers: [(&str, &[&str]); 2] = [
        (
            "gcc",
            &["-std=c99", "-Wall", "-Werror", "-Wextra", "-pedantic"],
        ),
        ("g++", &["-x", "c++", "-std=c++11", "-Wall", "-Werror"]),
    ];
    for ((cc, flags), file) in compilers.iter().flat_map(|c| {
        [
            (c, "header_only.c"),
            (c, "lapi_header_only.c"),
            (c, "level1_header_only.c"),
            (c, "rma_header_only.c"),
        ]
    }) {
        let output = Command::new(cc)
            .current_dir(c_dir())
            .args(*flags)
            .arg("-I")
            .arg(&include)
            .args(["-c", file, "-o"])
            .arg(obj_dir.join(format!("{file}.{cc}.o")))
            .output()
            .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
        assert!(
            output.status.success(),
            "{file} with {cc} {flags:?}: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    run_table(&[ok("all_calls.c")], &CXX, &NPROCS);
}

#[test]
fn address_sanitizer_finds_nothing_and_outcomes_are_unchanged() {
    // Open MPI's own allocations are not ours to check.
    if listed_engines().iter().any(|e| e == "mpi") {
        return;
    }
    let all: Vec<&Prog> = [
        PRIMITIVES,
        PAPER_EXAMPLES,
        INPROD,
        LU,
        ERRORS,
        RELIABILITY,
        LAPI,
        LEVEL1,
    ]
    .iter()
    .flat_map(|t| t.iter())
    .filter(|p| !p.no_asan)
    .collect();
    run_progs(&all, &ASAN, &ASAN_NPROCS);
}

fn run_table(progs: &[Prog], variant: &Variant, nprocs: &[usize]) {
    run_progs(&progs.iter().collect::<Vec<_>>(), variant, nprocs);
}

/// Builds every program once, runs each on both engines at each process
/// count it applies to, and fails with the list of failing runs.
fn run_progs(progs: &[&Prog], variant: &Variant, nprocs: &[usize]) {
    run_progs_env(progs, variant, nprocs, &[]);
}

/// [`run_progs`] with `extra` environment variables for every run.
fn run_progs_env(
    progs: &[&Prog],
    variant: &Variant,
    nprocs: &[usize],
    extra: &[(&'static str, &'static str)],
) {
    let mut files: Vec<&str> = progs.iter().map(|p| p.file).collect();
    files.sort_unstable();
    files.dedup();
    let built = par_map(&files, |file| build(file, variant));
    let exe = |file: &str| &built[files.binary_search(&file).unwrap()];

    let mut failures: Vec<String> = built
        .iter()
        .filter_map(|b| b.as_ref().err().cloned())
        .collect();
    let mut jobs = Vec::new();
    let engines = harness::engines();
    for prog in progs {
        let Ok(path) = exe(prog.file) else { continue };
        for engine in engines
            .iter()
            .map(String::as_str)
            .filter(|e| prog.only.is_empty() || prog.only.contains(e))
        {
            for &p in nprocs.iter().filter(|&&p| p >= min_p(&prog.expect)) {
                jobs.push((*prog, path.as_path(), engine, p));
            }
        }
    }
    let results = par_map(&jobs, |&(prog, path, engine, p)| {
        let mut env: Vec<(&str, String)> =
            prog.env.iter().map(|&(k, v)| (k, v.to_owned())).collect();
        env.extend(extra.iter().map(|&(k, v)| (k, v.to_owned())));
        env.extend(asan_options(variant, prog).map(|o| ("ASAN_OPTIONS", o)));
        let outcome = run_command(
            &mut bsprun(path, engine, p, &[p.to_string()], &env),
            prog.input.map(|f| f(p)).as_deref(),
            TIMEOUT,
            |_, _| None,
        );
        check(prog, engine, p, &outcome, variant.asan).map_err(|why| {
            format!(
                "{} [{} build, engine {engine}, P = {p}]: {why}\n  status: {}\n  stdout:\n{}\n  stderr:\n{}",
                prog.file,
                variant.name,
                describe(outcome.status),
                indent_tail(&outcome.stdout, SHOWN),
                indent_tail(&outcome.stderr, SHOWN)
            )
        })
    });
    let passed = results.iter().filter(|r| r.is_ok()).count();
    failures.extend(results.into_iter().filter_map(Result::err));
    eprintln!(
        "{} build: {passed} of {} runs passed",
        variant.name,
        jobs.len()
    );
    assert!(
        failures.is_empty(),
        "{} failure(s) in the {} build ({passed} of {} runs passed):\n\n{}",
        failures.len(),
        variant.name,
        jobs.len(),
        failures.join("\n\n")
    );
}

fn min_p(expect: &Expect) -> usize {
    match *expect {
        Expect::Error { min_p, .. }
        | Expect::Fails { min_p, .. }
        | Expect::Names { min_p, .. }
        | Expect::Mismatch { min_p, .. } => min_p,
        Expect::Crash => 2,
        Expect::Ok | Expect::Stdout(_) | Expect::Lines(_) => 1,
    }
}

fn asan_options(variant: &Variant, prog: &Prog) -> Option<String> {
    // The crash programs raise SIGSEGV / SIGABRT on purpose: let the signal
    // kill the process as it does without ASan instead of a SEGV report.
    let crash = matches!(prog.expect, Expect::Crash).then_some(":handle_segv=0:handle_abort=0");
    variant
        .asan
        .then(|| format!("detect_leaks=1{}", crash.unwrap_or("")))
}

/// Checks one run's outcome against the expectation.
fn check(prog: &Prog, engine: &str, p: usize, out: &Outcome, asan: bool) -> Result<(), String> {
    if let Some(problem) = out.problem() {
        return Err(problem);
    }
    let expect = prog.expect;
    let want_success = matches!(expect, Expect::Ok | Expect::Stdout(_) | Expect::Lines(_));
    if out.status.is_none_or(|s| s.success() != want_success) {
        return Err(format!(
            "expected {}",
            if want_success {
                "exit status 0"
            } else {
                "a non-zero exit status"
            }
        ));
    }
    // A run that succeeds reports nothing: no error of ours, and on mpi no
    // job abort (an abort with status 0 still exits 0).
    if want_success {
        if let Some(line) = out
            .stderr
            .lines()
            .find(|l| l.starts_with("bsplib:") || l.contains("MPI_ABORT"))
        {
            return Err(format!("a successful run reported {line:?}"));
        }
    }
    let stdout = match expect {
        Expect::Ok => Some("ok\n".to_owned()),
        Expect::Stdout(f) | Expect::Fails { stdout: f, .. } => Some(f(p)),
        _ => None,
    };
    let sorted = |s: &str| {
        let mut v: Vec<&str> = s.lines().collect();
        v.sort_unstable();
        v.join("\n")
    };
    // Under `mpirun` each rank's output reaches the terminal through a
    // pipe of its own, which `mpirun` drains in no set order: lines that
    // ranks printed in order, a sync apart, may arrive in another. There,
    // the same lines in any order.
    let differs = |want: &str| {
        if engine == "mpi" {
            sorted(want) != sorted(&out.stdout)
        } else {
            *want != out.stdout
        }
    };
    if let Some(want) = stdout.filter(|want| differs(want)) {
        return Err(format!("expected stdout:\n{}", indent_tail(&want, SHOWN)));
    }
    match expect {
        Expect::Names { all, lines, .. } => {
            if !out
                .stderr
                .lines()
                .any(|l| all.iter().all(|w| has_number(l, w)))
            {
                return Err(format!("expected a stderr line containing all of {all:?}"));
            }
            if let Some(f) = lines.filter(|f| sorted(&f(p)) != sorted(&out.stdout)) {
                return Err(format!(
                    "expected these stdout lines in any order:\n{}",
                    indent_tail(&f(p), SHOWN)
                ));
            }
        }
        Expect::Lines(f) if sorted(&f(p)) != sorted(&out.stdout) => {
            return Err(format!(
                "expected these stdout lines in any order:\n{}",
                indent_tail(&f(p), SHOWN)
            ));
        }
        Expect::Error {
            call,
            pid,
            superstep,
            ..
        } => {
            let location = format!("{}:{}", prog.file, marker_line(prog.file)?);
            let want = [
                format!("process {pid}"),
                format!("superstep {superstep}"),
                location,
            ];
            let named = |l: &str| l.contains(call) && want.iter().all(|w| has_number(l, w));
            if !out.stderr.lines().any(named) {
                return Err(format!(
                    "expected a stderr line naming {call}, {}",
                    want.join(", ")
                ));
            }
        }
        Expect::Mismatch {
            calls, superstep, ..
        } => {
            let location = format!("{}:{}", prog.file, marker_line(prog.file)?);
            let want = [format!("superstep {superstep}"), location];
            let named = |l: &str| {
                calls.iter().any(|c| l.contains(c))
                    && l.contains("process ")
                    && want.iter().all(|w| has_number(l, w))
            };
            if !out.stderr.lines().any(named) {
                return Err(format!(
                    "expected a stderr line naming one of {calls:?}, {}",
                    want.join(", ")
                ));
            }
        }
        Expect::Fails { stderr_has, .. } if !out.stderr.contains(stderr_has) => {
            return Err(format!("expected {stderr_has:?} on stderr"));
        }
        Expect::Crash if !out.stderr.lines().any(|l| has_number(l, "process 1")) => {
            return Err("expected a stderr line naming process 1".into());
        }
        _ => {}
    }
    if asan
        && ["AddressSanitizer", "LeakSanitizer"]
            .iter()
            .any(|s| out.stderr.contains(s))
    {
        return Err("AddressSanitizer reported a problem".into());
    }
    Ok(())
}

/// `bspcc <flags> file -o <tmpdir>/c_programs/<variant>/<stem>`, run in
/// `tests/c` so that `__FILE__` is the bare file name.
fn build(file: &str, variant: &Variant) -> Result<PathBuf, String> {
    let flags = [variant.flags, if variant.asan { ASAN_FLAGS } else { &[] }].concat();
    let env = variant.cc.map(|cc| ("BSPCC_CC", cc));
    let out = format!("c_programs/{}", variant.name);
    try_build(file, &out, &flags, env.as_slice(), &lib_dir())
        .map_err(|e| format!("{file} [{} build]: {e}", variant.name))
}
