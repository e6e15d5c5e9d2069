//! Section k: accumulate (sum) of 1 Mi doubles into the other process's
//! registered area, p = 2, against a put of the same bytes, on threads
//! and processes.

use std::hint::black_box;
use std::time::Instant;

use bsplib::{Area, Engine, Error, Runtime};

use super::report::{stats, Row, Stats, Target};
use super::timing::first;
use super::Config;

// ----- k. accumulate ------------------------------------------------------------

/// Seconds per superstep in which each of 2 processes accumulates (sum,
/// `acc`) or puts 1 Mi doubles into the other's registered area, then
/// syncs; one per repetition.
fn bench_accumulate(engine: Engine, acc: bool, cfg: &Config) -> Result<Vec<f64>, Error> {
    const N: usize = 1 << 20;
    let steps = if cfg.quick { 2 } else { 8 };
    let results = Runtime::new(2).engine(engine).run(move |bsp| {
        let other = 1 - bsp.pid();
        let x = Area::from_vec(bsp, vec![0.5f64; N]);
        let src: Vec<f64> = (0..N).map(|i| i as f64 * 1e-3).collect();
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let mut out = Vec::new();
        for round in 0..=1 {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..if round == 0 { 2 } else { steps } {
                if acc {
                    bsp.accumulate(other, &x, 0, &src, bsplib::Op::Sum)?;
                } else {
                    bsp.put(other, &x, 0, &src)?;
                }
                bsp.sync()?;
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / steps as f64);
            }
        }
        black_box(x.as_slice(bsp)[N - 1]);
        bsp.pop_reg(&x)?;
        bsp.sync()?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Section k: accumulate against put, threads and processes.
pub(super) fn section(cfg: &Config, rows: &mut Vec<Row>) -> Result<(), Box<dyn std::error::Error>> {
    // k. accumulate of 1 Mi doubles against a put of the same bytes.
    for engine in [Engine::Threads, Engine::Processes] {
        eprintln!("[bench] {}: accumulate 1 Mi doubles", engine.name());
        let (mut acc, mut put) = (vec![], vec![]);
        for _ in 0..cfg.reps {
            acc.extend(bench_accumulate(engine, true, cfg)?);
            put.extend(bench_accumulate(engine, false, cfg)?);
        }
        let ms = |v: &[f64]| {
            let s = stats(v);
            Stats {
                min: s.min * 1e3,
                median: s.median * 1e3,
            }
        };
        let name = engine.name();
        rows.push(Row {
            name: format!("{name} accumulate 8 MiB (sum), p=2"),
            unit: "ms/sstep",
            value: ms(&acc),
            baseline: Some((format!("put of 8 MiB, {name}"), ms(&put))),
            target: Target::Info("(no target: the issue asks for the numbers)"),
        });
    }
    Ok(())
}
