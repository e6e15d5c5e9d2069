//! Section d: popping many registrations oldest first against newest
//! first, p = 2.

use std::time::Instant;

use bsplib::{Engine, Error, Runtime};

use super::report::{stats, Row, Stats, Target};
use super::timing::first;
use super::Config;

/// Seconds for one superstep in which each of 2 processes pops `n`
/// registrations (pushed in an earlier superstep), oldest first or newest
/// first, with the sync that applies the pops.
fn bench_pops(n: usize, oldest_first: bool) -> Result<f64, Error> {
    let results = Runtime::new(2).engine(Engine::Threads).run(|bsp| {
        let area = vec![0u8; n];
        let at = |i: usize| area.as_ptr().wrapping_add(i).cast::<std::ffi::c_void>();
        // SAFETY: every registered byte is inside `area`, which outlives the
        // registrations (all popped below), and nothing transfers into it.
        unsafe {
            for i in 0..n {
                bsp.raw().push_reg(at(i), 1)?;
            }
        }
        bsp.sync()?;
        let t0 = Instant::now();
        for k in 0..n {
            let i = if oldest_first { k } else { n - 1 - k };
            // SAFETY: as above.
            unsafe { bsp.raw().pop_reg(at(i))? };
        }
        bsp.sync()?;
        Ok(t0.elapsed().as_secs_f64())
    })?;
    Ok(first(results))
}

/// Section d: popping registrations oldest first against newest first.
pub(super) fn section(cfg: &Config, rows: &mut Vec<Row>) -> Result<(), Box<dyn std::error::Error>> {
    // d. popping registrations out of order.
    let n = if cfg.quick { 10_000 } else { 100_000 };
    eprintln!("[bench] popping {n} registrations, newest and oldest first");
    let (mut lifo, mut fifo) = (Vec::new(), Vec::new());
    for _ in 0..cfg.reps.min(3) {
        lifo.push(bench_pops(n, false)?);
        fifo.push(bench_pops(n, true)?);
    }
    let ms = |s: Stats| Stats {
        min: s.min * 1e3,
        median: s.median * 1e3,
    };
    rows.push(Row {
        name: format!("pop {n} regs, oldest first"),
        unit: "ms",
        value: ms(stats(&fifo)),
        baseline: Some((format!("pop {n} regs, newest first"), ms(stats(&lifo)))),
        target: Target::AtMost(2.0, "newest first"),
    });
    Ok(())
}
