//! Section g: whole programs on processes at p = 1024 (quick: 64), the
//! empty one and one of 3 supersteps, from `run`'s call to its
//! return.

use std::time::Instant;

use bsplib::{Area, Engine, Error, Runtime};

use super::report::{stats, Row, Target};
use super::Config;

// ----- g. whole programs at p = 1024 on processes -----------------------------------

/// Seconds for a whole `processes` run of `p` processes: the empty
/// program (`supersteps == 0`), or 3 supersteps as in the `hello` example
/// (register, one put to the right neighbour, pop).
fn bench_program(p: usize, supersteps: usize) -> Result<f64, Error> {
    let t0 = Instant::now();
    Runtime::new(p).engine(Engine::Processes).run(move |bsp| {
        if supersteps == 0 {
            return Ok(());
        }
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        let inbox = Area::<u64>::new(bsp, 1);
        bsp.push_reg(&inbox)?;
        bsp.sync()?;
        bsp.put((pid + 1) % p, &inbox, 0, &[pid as u64])?;
        bsp.sync()?;
        let got = inbox.as_slice(bsp)[0];
        if got != ((pid + p - 1) % p) as u64 {
            bsp.abort(format!("process {pid} received {got}"));
        }
        bsp.pop_reg(&inbox)?;
        bsp.sync()?;
        Ok(())
    })?;
    Ok(t0.elapsed().as_secs_f64())
}

/// Section g: whole programs on processes.
pub(super) fn section(cfg: &Config, rows: &mut Vec<Row>) -> Result<(), Box<dyn std::error::Error>> {
    // g. whole programs on processes: an empty one, and 3 supersteps.
    let p = if cfg.quick { 64 } else { 1024 };
    for supersteps in [0usize, 3] {
        eprintln!("[bench] processes, p = {p}: a whole program of {supersteps} supersteps");
        let runs = if cfg.quick { 2 } else { 3 };
        let mut t = Vec::new();
        for _ in 0..runs {
            t.push(bench_program(p, supersteps)?);
        }
        rows.push(Row {
            name: format!("proc program, p={p}, {supersteps} ssteps"),
            unit: "s",
            value: stats(&t),
            baseline: None,
            target: if p == 1024 {
                Target::Under(if supersteps == 0 { 5.0 } else { 10.0 })
            } else {
                Target::Info("(the trend; target at p = 1024)")
            },
        });
    }
    Ok(())
}
