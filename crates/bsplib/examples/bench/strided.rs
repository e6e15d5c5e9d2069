//! Section h: a column of a row-major matrix put into the other process's
//! matrix, one `put_strided` against single-element puts and one
//! contiguous put, and against the same gather and scatter done locally.

use std::hint::black_box;
use std::time::Instant;

use bsplib::{Area, Engine, Error, Runtime};

use super::report::{stats, Row, Stats, Target};
use super::timing::first;
use super::Config;

// ----- h. strided puts ------------------------------------------------------------

/// Rows of the matrices of section h.
const COL_ROWS: usize = 4096;

/// How section h moves a column.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Column {
    /// One `put_strided`.
    Strided,
    /// One `put` per element.
    Singles,
    /// One `put` of the same bytes, contiguous on both sides.
    Contiguous,
}

/// Seconds per superstep in which each of the 2 processes of a run of
/// `engine` moves a column to the other the `how` way; one per repetition.
fn bench_column(
    engine: Engine,
    how: Column,
    cols: usize,
    reps: usize,
    cfg: &Config,
) -> Result<Vec<f64>, Error> {
    use bsplib::Strided;
    let steps = if cfg.quick { 20 } else { 200 };
    let results = Runtime::new(2).engine(engine).run(move |bsp| {
        let pid = bsp.pid();
        let other = 1 - pid;
        let n = COL_ROWS * cols;
        let local: Vec<f64> = (0..n).map(|i| (pid * n + i) as f64).collect();
        let m = Area::<f64>::new(bsp, n);
        bsp.push_reg(&m)?;
        bsp.sync()?;
        let c = 5;
        let col = Strided::column(c, COL_ROWS, cols);
        let mut out = Vec::with_capacity(reps);
        for round in 0..=reps {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..steps {
                match how {
                    Column::Strided => bsp.put_strided(other, &m, col, &local, col)?,
                    Column::Singles => {
                        for r in 0..COL_ROWS {
                            let at = r * cols + c;
                            bsp.put(other, &m, at, &local[at..at + 1])?;
                        }
                    }
                    Column::Contiguous => bsp.put(other, &m, 0, &local[..COL_ROWS])?,
                }
                bsp.sync()?;
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / steps as f64);
            }
        }
        let got = m.as_slice(bsp);
        let (at, want) = match how {
            Column::Contiguous => (COL_ROWS - 1, (other * n + COL_ROWS - 1) as f64),
            _ => {
                let at = (COL_ROWS - 1) * cols + c;
                (at, (other * n + at) as f64)
            }
        };
        if got[at] != want {
            bsp.abort(format!(
                "process {pid}: wrong data after the column transfers"
            ));
        }
        bsp.pop_reg(&m)?;
        bsp.sync()?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Seconds per local column move of section h without the library: the
/// column gathered from one matrix into a packed buffer and scattered
/// into another matrix, as a strided put does on its two sides (here
/// both on one thread); one per repetition.
fn bench_column_local(cols: usize, reps: usize, cfg: &Config) -> Vec<f64> {
    let steps = if cfg.quick { 20 } else { 200 };
    let n = COL_ROWS * cols;
    let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let mut b = vec![0f64; n];
    let mut packed = vec![0f64; COL_ROWS];
    let c = 5;
    let mut out = Vec::with_capacity(reps);
    for round in 0..=reps {
        let t0 = Instant::now();
        for _ in 0..steps {
            let a = black_box(&a);
            for (r, x) in packed.iter_mut().enumerate() {
                *x = a[r * cols + c];
            }
            let packed = black_box(&packed);
            for (r, x) in packed.iter().enumerate() {
                b[r * cols + c] = *x;
            }
            black_box(&mut b);
        }
        if round > 0 {
            out.push(t0.elapsed().as_secs_f64() / steps as f64);
        }
    }
    out
}

/// Section h: a matrix column, strided against single and contiguous puts.
pub(super) fn section(cfg: &Config, rows: &mut Vec<Row>) -> Result<(), Box<dyn std::error::Error>> {
    // h. a matrix column: one strided put, single puts, a contiguous put.
    for (engine, cols) in [
        (Engine::Threads, 8),
        (Engine::Threads, 64),
        (Engine::Processes, 8),
        (Engine::Processes, 64),
    ] {
        eprintln!(
            "[bench] {}: a 4096-double column of 4096 x {cols}, strided, single puts, contiguous",
            engine.name()
        );
        let (mut strided, mut singles, mut contiguous) = (vec![], vec![], vec![]);
        let mut local = vec![];
        for _ in 0..cfg.reps {
            local.extend(bench_column_local(cols, 1, cfg));
            strided.extend(bench_column(engine, Column::Strided, cols, 1, cfg)?);
            singles.extend(bench_column(engine, Column::Singles, cols, 1, cfg)?);
            contiguous.extend(bench_column(engine, Column::Contiguous, cols, 1, cfg)?);
        }
        let us = |v: &[f64]| {
            let s = stats(v);
            Stats {
                min: s.min * 1e6,
                median: s.median * 1e6,
            }
        };
        let name = engine.name();
        rows.push(Row {
            name: format!("{name} 4096x{cols} column, strided"),
            unit: "us/sstep",
            value: us(&strided),
            baseline: Some((format!("4096 single puts, {name}"), us(&singles))),
            target: Target::AtMost(0.2, "single puts"),
        });
        rows.push(Row {
            name: format!("{name} 4096x{cols} column, strided"),
            unit: "us/sstep",
            value: us(&strided),
            baseline: Some((format!("contiguous 32 KiB put, {name}"), us(&contiguous))),
            target: Target::AtMost(1.5, "contiguous put"),
        });
        rows.push(Row {
            name: format!("{name} 4096x{cols} column, strided"),
            unit: "us/sstep",
            value: us(&strided),
            baseline: Some(("column gathered + scattered locally".into(), us(&local))),
            target: Target::Info("(the floor: the same two strided passes, no library)"),
        });
    }
    Ok(())
}
