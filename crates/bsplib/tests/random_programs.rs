//! Randomized BSPlib programs, run on every engine and compared bit for bit
//! with a sequential reference model.
//!
//! # The generator (`random_programs/program.rs`)
//!
//! A program has `p` processes, one to four areas (`u8` or `u32` elements,
//! 0 to 12 of them, or one area in eight 4096 to 4160, initial contents
//! differing per process) and one to six
//! supersteps. A superstep has up to three collective calls, the same on
//! every process and placed at random among its other operations:
//! `push_reg` / `push_reg_prefix` of any area or `push_reg_null`, per
//! process (so one slot may hold different areas, extents or NULL on
//! different processes, and pushing an area again shadows its slot);
//! `pop_reg` / `pop_reg_null` of any live slot every process can name (out
//! of order); `set_tagsize`. Each process then makes up to six operations:
//! local writes and reads of its areas, `put` and `hpput` (from literal
//! data or from a local area), `get` and `hpget`, `send` and `send_pod`,
//! and the receives `qsize`, `get_tag`, `move_payload`, `hpmove` and
//! "`hpmove` until empty". Every program is valid: transfers go through
//! live slots and stay inside the registered extents, tags have the tag
//! size in force, `move_payload` only meets a non-empty queue.
//!
//! Overlaps are **avoided** rather than modelled as "some arbitrary order":
//! no byte is written by two puts (from any processes, `hpput` included)
//! or by two gets in one superstep. A put and a get into one byte *are*
//! generated (the put must win), as are gets reading bytes that are
//! written in the same superstep by the owner or by puts (the get must see
//! the value at the end of the superstep, before the sync's writes). The
//! unbuffered operations keep their Safety contracts: the destination of an
//! `hpput` / `hpget` is touched by nothing else in the superstep, and the
//! source of an `hpget` (or of an `hpput` from an area) is written by
//! nothing.
//!
//! # The model (`random_programs/model.rs`)
//!
//! A direct sequential simulation of the semantics of the BSPlib paper and
//! of the README's "Semantics, briefly", independent of the library; the
//! library's queue order is unspecified, so receives must be explained by
//! *some* order of the superstep's messages. What is compared: everything
//! each process observes (`set_tagsize` results, local reads, every receive
//! with its whole buffer) and every area of every process after every sync.
//!
//! # Running
//!
//! Each engine has its own test; `BSPLIB_TEST_ENGINES` (as for the other
//! scenario files) keeps only some. Defaults per test, release (debug runs
//! a tenth): `serial` 4 000 programs (p = 1), `threads` 16 000 (p = 1..=5),
//! `processes` 3 000 (p = 1..=4), `mpi` 300.
//!
//! - `BSPLIB_RANDOM_CASES=N`: N programs per engine test instead. CI's
//!   valgrind step (`.ci/valgrind`) sets `BSPLIB_RANDOM_CASES=300`: about
//!   10 s for its `serial,threads` pass and 20 s for its `processes` pass
//!   here.
//! - `BSPLIB_RANDOM_SEED=S`: the base seed (a `u64`; default
//!   [`DEFAULT_SEED`]). Every run with the same seed runs the same programs;
//!   a failure prints the seed and the shrunk program.
//!
//! ```sh
//! cargo test -p bsplib --release --test random_programs -- --nocapture
//! # long mode: a million programs per engine (here about 25 min on
//! # threads, 1 h on processes); pick engines with BSPLIB_TEST_ENGINES and
//! # a fresh seed with BSPLIB_RANDOM_SEED
//! BSPLIB_RANDOM_CASES=1000000 cargo test -p bsplib --release --test random_programs -- --nocapture
//! # mpi: every rank generates the same programs
//! cargo test --release --features mpi -p bsplib --test random_programs --no-run
//! mpirun -np 3 --oversubscribe --bind-to none -x BSPLIB_ENGINE=mpi \
//!     target/release/deps/random_programs-<hash> --test-threads=1 -q
//! ```

mod common;
#[path = "random_programs/execute.rs"]
mod execute;
#[path = "random_programs/model.rs"]
mod model;
#[path = "random_programs/program.rs"]
mod program;

use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Instant;

use bsplib::{Engine, Runtime};
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestCaseError, TestError, TestRunner};

use model::Observed;
use program::Program;

/// The base seed unless `BSPLIB_RANDOM_SEED` says otherwise.
pub const DEFAULT_SEED: u64 = 0x6273_706c_6962_0001;

fn base_seed() -> u64 {
    match std::env::var("BSPLIB_RANDOM_SEED") {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("BSPLIB_RANDOM_SEED={s} is not a u64")),
        Err(_) => DEFAULT_SEED,
    }
}

/// Programs to run for an engine whose release default is `release`.
fn cases(release: u32) -> u32 {
    match std::env::var("BSPLIB_RANDOM_CASES") {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("BSPLIB_RANDOM_CASES={s} is not a number")),
        Err(_) if cfg!(debug_assertions) => release.div_ceil(10),
        Err(_) => release,
    }
}

/// Runs `prog` on `engine` and compares with the model.
fn check(engine: Engine, prog: &Program) -> Result<(), String> {
    let expected = model::simulate(prog);
    let shared = Arc::new(prog.clone());
    let got = common::run_on(engine, prog.p, move |bsp| execute::execute(bsp, &shared))
        .map_err(|e| format!("the run failed: {e}"))?;
    let got: Vec<Vec<Observed>> = got.into_iter().map(execute::decode).collect();
    model::compare(&expected, &got)
}

/// Runs `cases(release)` random programs with `procs` processes on `engine`.
fn random_programs_on(engine: Engine, procs: RangeInclusive<usize>, release: u32) {
    if !common::configurations().iter().any(|(e, _)| *e == engine) {
        eprintln!("random_programs: {} not selected, skipped", engine.name());
        return;
    }
    let cases = cases(release);
    let seed = base_seed();
    let salt = Engine::ALL
        .iter()
        .position(|e| *e == engine)
        .expect("an engine") as u64;
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 4096,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        ..Config::default()
    };
    let start = Instant::now();
    let mut runner = TestRunner::new(config);
    let result = runner.run(&program::programs(procs.clone()), |prog| {
        check(engine, &prog).map_err(TestCaseError::fail)
    });
    match result {
        Ok(()) => eprintln!(
            "random_programs: {cases} programs on {}, p in {procs:?} (BSPLIB_RANDOM_SEED={seed}) in {:.1?}",
            engine.name(),
            start.elapsed()
        ),
        Err(TestError::Fail(why, prog)) => panic!(
            "a random program failed on {} (BSPLIB_RANDOM_SEED={seed}): {why}\nshrunk program:\n{prog:?}",
            engine.name()
        ),
        Err(TestError::Abort(why)) => panic!(
            "random programs on {} aborted (BSPLIB_RANDOM_SEED={seed}): {why}",
            engine.name()
        ),
    }
}

#[test]
fn random_programs_serial() {
    random_programs_on(Engine::Serial, 1..=1, 4000);
}

#[test]
fn random_programs_threads() {
    random_programs_on(Engine::Threads, 1..=5, 16000);
}

#[test]
fn random_programs_processes() {
    random_programs_on(Engine::Processes, 1..=4, 3000);
}

/// Under `mpirun` with `BSPLIB_ENGINE=mpi` only: every rank generates the
/// same programs (same seed) for p = the number of ranks.
#[test]
fn random_programs_mpi() {
    let p = Runtime::new(usize::MAX).engine(Engine::Mpi).nprocs();
    random_programs_on(Engine::Mpi, p..=p, 300);
}

/// The model itself, on a hand-made program whose outcome follows from the
/// README's "Semantics, briefly" (and the queue check on a hand-made
/// queue), so that a wrong model cannot agree with a wrong library.
#[test]
fn model_agrees_with_hand_computed_semantics() {
    use model::{queue_consistent, Obs};
    use program::{AreaSpec, Collective::*, Op::*, PutSource, Step};
    let area = AreaSpec {
        word: false,
        len: 4,
    };
    let init = |pid| {
        (0..4)
            .map(|i| program::initial_byte(pid, 0, i))
            .collect::<Vec<u8>>()
    };
    let prog = Program {
        p: 2,
        areas: vec![area],
        steps: vec![
            Step {
                collectives: vec![Push(vec![Some((0, 4)), Some((0, 2))]), SetTagsize(2)],
                ops: vec![vec![Collective(0), Collective(1)]; 2],
            },
            Step {
                collectives: vec![],
                ops: vec![
                    vec![
                        // Process 1 registered 2 bytes: byte 1 is the last.
                        Put {
                            hp: false,
                            pid: 1,
                            src: PutSource::Bytes(vec![0xAA]),
                            area: 0,
                            off: 1,
                        },
                        // A self-put lands at the sync, after the get.
                        Put {
                            hp: false,
                            pid: 0,
                            src: PutSource::Bytes(vec![0xBB]),
                            area: 0,
                            off: 3,
                        },
                        Get {
                            hp: false,
                            pid: 1,
                            area: 0,
                            off: 0,
                            dst: 0,
                            dst_off: 2,
                            len: 2,
                        },
                        Peek {
                            area: 0,
                            off: 0,
                            len: 4,
                        },
                    ],
                    vec![Poke {
                        area: 0,
                        off: 0,
                        bytes: vec![0x11],
                    }],
                ],
            },
        ],
    };
    let e = model::simulate(&prog);
    let (i0, i1) = (init(0), init(1));
    // Process 0 peeks its memory unchanged, then gets [0x11, i1[1]] at
    // bytes 2..4, byte 3 overwritten by its own put.
    assert_eq!(e[0][1].exact, vec![Obs::Peek(i0.clone())]);
    assert_eq!(e[0][1].memory, vec![vec![i0[0], i0[1], 0x11, 0xBB]]);
    assert_eq!(e[1][1].memory, vec![vec![0x11, 0xAA, i1[2], i1[3]]]);
    assert_eq!(e[1][0].exact, vec![Obs::Tagsize(0)]);
    // Queue order is free, but a get_tag pins the first message.
    let (a, b): (model::Msg, model::Msg) = ((vec![1], vec![5, 6]), (vec![2], vec![7]));
    let obs = [
        Obs::GetTag(Some(1), vec![2, program::FILL]),
        Obs::Qsize(2, 3),
        Obs::Move(1, vec![7, program::FILL]),
        Obs::HpMove(Some(a.clone())),
        Obs::HpMove(None),
    ];
    let refs: Vec<&Obs> = obs.iter().collect();
    assert!(queue_consistent(
        &refs,
        &mut vec![a.clone(), b.clone()],
        None
    ));
    let wrong = [
        Obs::GetTag(Some(1), vec![2, 0]),
        Obs::HpMove(Some(a.clone())),
    ];
    let refs: Vec<&Obs> = wrong.iter().collect();
    assert!(!queue_consistent(&refs, &mut vec![a, b], None));
}
