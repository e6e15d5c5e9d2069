//! The machine probe (`src/probe.rs`): a quick probe gives sane g, l,
//! n½ and s on every engine (threads and processes at p = 2 and 3, mpi
//! under `mpirun` at the job's size); measurements round-trip through
//! the store; `Bsp::machine` reads the store `BSPLIB_MACHINE` names (and
//! the defaults without one); and the collectives choose their form with
//! the stored figures.
//!
//! The store is never the real one: this binary points `BSPLIB_MACHINE`
//! at a file of its own in the temporary directory before any run.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bsplib::probe::{self, Machine, Measurement, Options, Source};
use bsplib::{Engine, Runtime};
use common::{mpi_mode, run_on};

/// This process's store, named in `BSPLIB_MACHINE` once (tests run on
/// threads of one process: they all see the same variable).
fn store() -> &'static Path {
    static STORE: OnceLock<PathBuf> = OnceLock::new();
    STORE.get_or_init(|| {
        // In Cargo's scratch directory for integration tests (inside
        // `target/`), not the system's temporary one, where one directory
        // per run used to stay behind.
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "bsplib-test-machine-{}/machine.json",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        std::env::set_var("BSPLIB_MACHINE", &path);
        path
    })
}

/// Held by the tests that write [`store`] (each rewrites the whole file).
static WRITERS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A measurement with chosen figures.
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
        residual: 0.01,
        reps: 3,
        word_points: Vec::new(),
        bulk_points: Vec::new(),
    }
}

/// The engines and p the probe is checked on.
fn configurations() -> Vec<(Engine, usize)> {
    if mpi_mode() {
        return vec![(Engine::Mpi, usize::MAX)];
    }
    let mut v = vec![
        (Engine::Serial, 1),
        (Engine::Threads, 2),
        (Engine::Threads, 3),
        (Engine::Processes, 2),
        (Engine::Processes, 3),
    ];
    v.retain(|(e, _)| listed(*e));
    v
}

/// Whether `BSPLIB_TEST_ENGINES` (comma-separated; CI's valgrind step
/// sets `serial,threads`) lets tests run on `engine` (all without it).
fn listed(engine: Engine) -> bool {
    std::env::var("BSPLIB_TEST_ENGINES").map_or(true, |only| {
        only.split(',').any(|e| e.trim() == engine.name())
    })
}

#[test]
fn a_quick_probe_gives_sane_figures_on_every_engine() {
    store();
    for (engine, p) in configurations() {
        let t0 = std::time::Instant::now();
        let results = run_on(engine, p, |bsp| {
            let m = probe::measure_in(bsp, &Options::quick())?;
            let mm = m.machine;
            Ok(vec![
                mm.g,
                mm.l,
                mm.nhalf,
                mm.s,
                m.g_range.0,
                m.g_range.1,
                m.l_range.0,
                m.l_range.1,
                m.residual,
                m.reps as f64,
                m.nprocs as f64,
            ])
        })
        .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        let first = &results[0];
        for r in &results {
            assert_eq!(r, first, "every process returns the same measurement");
        }
        let [g, l, nhalf, s, g0, g1, l0, l1, residual, reps, n] = first[..] else {
            unreachable!()
        };
        let name = engine.name();
        eprintln!(
            "{name} p={n}: g {:.3} ns/byte [{:.3}-{:.3}], l {:.2} us [{:.2}-{:.2}], nhalf {nhalf:.0} B, \
             s {:.2} Gflop/s, residual {:.1}%, {reps} reps, {:.2} s",
            g * 1e9,
            g0 * 1e9,
            g1 * 1e9,
            l * 1e6,
            l0 * 1e6,
            l1 * 1e6,
            s * 1e-9,
            residual * 100.0,
            t0.elapsed().as_secs_f64()
        );
        assert!(g > 0.0 && g < 1e-6, "{name}: g = {g} s/byte");
        assert!(l > 0.0 && l < 1.0, "{name}: l = {l} s");
        assert!(nhalf >= 0.0 && nhalf.is_finite(), "{name}: nhalf = {nhalf}");
        assert!(s > 1e6, "{name}: s = {s} flop/s");
        assert!(g0 <= g1 && l0 <= l1, "{name}: ranges");
        assert!(
            residual.is_finite() && residual < 1.0,
            "{name}: the fit's residual {residual}"
        );
        assert!(reps >= 3.0, "{name}: {reps} repetitions");
        if engine != Engine::Mpi {
            assert_eq!(n, Runtime::new(p).engine(engine).nprocs() as f64);
        }
    }
}

#[test]
fn measurements_round_trip_through_the_store() {
    let path = std::env::temp_dir().join(format!(
        "bsplib-test-store-{}/sub/machine.json",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap());
    assert_eq!(probe::load_from(&path, Engine::Threads, 3).unwrap(), None);
    let a = fake(Engine::Threads, 3, 1.25e-10, 3.5e-6, 200.0, 2e9);
    let b = fake(Engine::Processes, 3, 2.5e-10, 4.5e-6, 100.0, 3e9);
    probe::save_to(&path, &a).unwrap();
    probe::save_to(&path, &b).unwrap();
    let got = probe::load_from(&path, Engine::Threads, 3)
        .unwrap()
        .unwrap();
    assert_eq!(
        got,
        Machine {
            source: Source::Stored,
            ..a.machine
        }
    );
    assert_eq!(
        probe::load_from(&path, Engine::Processes, 3)
            .unwrap()
            .unwrap()
            .g,
        2.5e-10
    );
    assert_eq!(probe::load_from(&path, Engine::Threads, 2).unwrap(), None);
    // The same key again replaces its entry and keeps the other.
    let a2 = fake(Engine::Threads, 3, 9.0e-10, 1.0e-6, 0.0, 1e9);
    probe::save_to(&path, &a2).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("\"engine\":\"threads\"").count(), 1, "{text}");
    assert_eq!(
        text.matches("\"engine\":\"processes\"").count(),
        1,
        "{text}"
    );
    assert!(text.contains(&format!("\"host\":\"{}\"", probe::hostname())));
    assert_eq!(
        probe::load_from(&path, Engine::Threads, 3)
            .unwrap()
            .unwrap()
            .g,
        9.0e-10
    );
    // Another host's or version's entries are not ours.
    let other = text
        .replace(
            &format!("\"host\":\"{}\"", probe::hostname()),
            "\"host\":\"elsewhere\"",
        )
        .replace("\"version\":\"", "\"version\":\"0.0.0-");
    std::fs::write(&path, other).unwrap();
    assert_eq!(probe::load_from(&path, Engine::Threads, 3).unwrap(), None);
    // A malformed entry is an error naming the file and the line, and the
    // store is not overwritten.
    std::fs::write(
        &path,
        "{\"entries\":[\n{\"host\":\"x\",\"p\":\"two\"}\n]}\n",
    )
    .unwrap();
    let err = probe::load_from(&path, Engine::Threads, 3).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains(&path.display().to_string()) && msg.contains("line 2"),
        "{msg}"
    );
    assert!(probe::save_to(&path, &a).is_err());
    assert!(std::fs::read_to_string(&path).unwrap().contains("\"two\""));
    std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap()).unwrap();
}

#[test]
fn bsp_machine_gives_the_stored_figures_else_the_defaults() {
    let _writing = WRITERS.lock().unwrap_or_else(|e| e.into_inner());
    let path = store();
    let (engine, p) = if mpi_mode() {
        (Engine::Mpi, usize::MAX)
    } else {
        (Engine::Threads, 2)
    };
    // What the run will report as its p (the job's size on mpi).
    let n = run_on(engine, p, |bsp| Ok(bsp.nprocs() as u64)).unwrap()[0] as usize;
    let m = fake(engine, n, 3.0e-10, 7.0e-6, 123.0, 4e9);
    probe::save_to(path, &m).unwrap();
    let stored = vec![3.0e-10, 7.0e-6, 123.0, 4e9, 1.0];
    let figures = |bsp: &mut bsplib::Bsp| {
        let m = bsp.machine();
        Ok(vec![
            m.g,
            m.l,
            m.nhalf,
            m.s,
            f64::from(u8::from(m.source == Source::Stored)),
        ])
    };
    for r in run_on(engine, p, figures).unwrap() {
        assert_eq!(r, stored);
    }
    if !mpi_mode() && listed(Engine::Processes) {
        for r in run_on(Engine::Processes, 2, figures).unwrap() {
            assert_eq!(r[4], 0.0, "nothing stored for processes, p = 2: {r:?}");
            let d = Machine::defaults();
            assert_eq!(r[..4], [d.g, d.l, d.nhalf, d.s]);
        }
    }
}

#[test]
fn the_collectives_choose_their_form_with_the_stored_figures() {
    if mpi_mode() {
        return; // mpi's collectives are MPI's own
    }
    let _writing = WRITERS.lock().unwrap_or_else(|e| e.into_inner());
    let path = store();
    // p = 4: l tiny against g, so two phases pay; p = 3: l huge, so one.
    probe::save_to(path, &fake(Engine::Threads, 4, 1e-9, 1e-9, 0.0, 1e9)).unwrap();
    probe::save_to(path, &fake(Engine::Threads, 3, 1e-12, 0.5, 0.0, 1e9)).unwrap();
    for (p, supersteps) in [(4, 2), (3, 1)] {
        let r = run_on(Engine::Threads, p, |bsp| {
            let mut x = vec![bsp.pid() as f64; 1 << 14];
            let before = bsp.superstep();
            bsp.collectives().all_reduce(&mut x, bsplib::Op::Sum)?;
            Ok(bsp.superstep() - before)
        })
        .unwrap();
        assert_eq!(r, vec![supersteps; p], "p = {p}");
    }
}

#[test]
fn degenerate_options_fall_back_to_the_quick_lists() {
    if mpi_mode() {
        return;
    }
    let r = run_on(Engine::Threads, 2, |bsp| {
        let opts = Options {
            reps: 0,
            word_hs: vec![5],
            bulk_sizes: vec![0, 0],
            budget: None,
            ..Options::quick()
        };
        let m = probe::measure_in(bsp, &opts)?;
        Ok(vec![
            m.machine.g,
            m.machine.l,
            m.reps as f64,
            m.word_points.len() as f64,
            m.bulk_points.len() as f64,
            m.word_points[1].0 as f64,
        ])
    })
    .unwrap();
    assert_eq!(r[0], r[1], "every process returns the same measurement");
    let [g, l, reps, nw, nb, h1] = r[0][..] else {
        unreachable!()
    };
    let quick = Options::quick();
    assert_eq!(
        (nw, nb),
        (quick.word_hs.len() as f64, quick.bulk_sizes.len() as f64)
    );
    assert_eq!(
        h1, quick.word_hs[1] as f64,
        "the points are the quick probe's h"
    );
    assert!(g > 0.0 && g.is_finite() && l > 0.0 && l < 1.0, "{r:?}");
    assert_eq!(reps, 1.0, "reps 0 counts one repetition");
}
