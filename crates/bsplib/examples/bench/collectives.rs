//! Section j: broadcast and all-reduce on threads, p = 2 and 4, against
//! the same written with plain puts and a sync, and the one-phase against
//! the two-phase algorithm.

use std::time::Instant;

use bsplib::{Area, Engine, Error, Runtime};

use super::report::{stats, Row, Stats, Target};
use super::timing::first;
use super::Config;

// ----- j. collectives ---------------------------------------------------------------

/// Which operation section j times.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Coll {
    Broadcast,
    AllReduce,
}

/// Seconds per operation on `n` elements (bytes for a broadcast, doubles
/// for an all-reduce) at `p` threads: the collective with `algorithm`, or
/// (`None`) the same with puts and one sync; one per repetition.
fn bench_collective(
    p: usize,
    what: Coll,
    n: usize,
    algorithm: Option<bsplib::Algorithm>,
    cfg: &Config,
) -> Result<Vec<f64>, Error> {
    let plain = algorithm.is_none();
    let reps = match (cfg.quick, n > 1 << 16) {
        (true, _) => 3,
        (false, true) => 10,
        (false, false) => 2_000,
    };
    let results = Runtime::new(p).engine(Engine::Threads).run(move |bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let mut bytes = vec![me as u8; n];
        let mut x = vec![me as f64 + 0.5; n];
        // The plain versions' registered areas: the broadcast's buffer, and
        // every process's vector side by side.
        let dst = Area::<u8>::new(bsp, if what == Coll::Broadcast { n } else { 0 });
        let all = Area::<f64>::new(bsp, if what == Coll::AllReduce { n * p } else { 0 });
        bsp.push_reg(&dst)?;
        bsp.push_reg(&all)?;
        bsp.sync()?;
        let mut out = Vec::new();
        bsp.collectives()
            .set_algorithm(algorithm.unwrap_or_default());
        for round in 0..=1 {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..reps {
                match (what, plain) {
                    (Coll::Broadcast, false) => bsp.collectives().broadcast(0, &mut bytes)?,
                    (Coll::Broadcast, true) => {
                        if me == 0 {
                            for q in 1..p {
                                bsp.put(q, &dst, 0, &bytes)?;
                            }
                        }
                        bsp.sync()?;
                        if me != 0 {
                            bytes.copy_from_slice(dst.as_slice(bsp));
                        }
                    }
                    (Coll::AllReduce, false) => {
                        bsp.collectives().all_reduce(&mut x, bsplib::Op::Sum)?
                    }
                    (Coll::AllReduce, true) => {
                        for q in 0..p {
                            bsp.put(q, &all, me * n, &x)?;
                        }
                        bsp.sync()?;
                        let v = all.as_slice(bsp);
                        x.copy_from_slice(&v[..n]);
                        for q in 1..p {
                            for (a, b) in x.iter_mut().zip(&v[q * n..(q + 1) * n]) {
                                *a += b;
                            }
                        }
                    }
                }
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / reps as f64);
            }
        }
        bsp.pop_reg(&all)?;
        bsp.pop_reg(&dst)?;
        bsp.sync()?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Section j: collectives against plain puts and syncs, threads.
pub(super) fn section(cfg: &Config, rows: &mut Vec<Row>) -> Result<(), Box<dyn std::error::Error>> {
    // j. collectives against plain puts and syncs, threads.
    for p in [2usize, 4] {
        for (what, n, label) in [
            (Coll::Broadcast, 8, "broadcast 8 B"),
            (Coll::Broadcast, 16 << 20, "broadcast 16 MiB"),
            (Coll::AllReduce, 1, "all_reduce 1 double"),
            (Coll::AllReduce, 1 << 20, "all_reduce 1 Mi doubles"),
        ] {
            eprintln!("[bench] threads p = {p}: {label}");
            use bsplib::Algorithm;
            let (mut auto, mut one, mut two, mut plain) = (vec![], vec![], vec![], vec![]);
            for _ in 0..cfg.reps {
                auto.extend(bench_collective(p, what, n, Some(Algorithm::Auto), cfg)?);
                plain.extend(bench_collective(p, what, n, None, cfg)?);
                one.extend(bench_collective(
                    p,
                    what,
                    n,
                    Some(Algorithm::OnePhase),
                    cfg,
                )?);
                two.extend(bench_collective(
                    p,
                    what,
                    n,
                    Some(Algorithm::TwoPhase),
                    cfg,
                )?);
            }
            let us = |v: &[f64]| {
                let s = stats(v);
                Stats {
                    min: s.min * 1e6,
                    median: s.median * 1e6,
                }
            };
            rows.push(Row {
                name: format!("{label}, p={p}"),
                unit: "us/op",
                value: us(&auto),
                baseline: Some(("plain puts + sync".into(), us(&plain))),
                target: Target::Info("(the algorithm chosen by the cost)"),
            });
            rows.push(Row {
                name: format!("{label}, p={p}, two-phase"),
                unit: "us/op",
                value: us(&two),
                baseline: Some(("one-phase".into(), us(&one))),
                target: Target::Info("(both forms, forced)"),
            });
        }
    }
    Ok(())
}
