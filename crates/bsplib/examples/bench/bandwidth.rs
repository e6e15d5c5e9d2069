//! Section b: 16 MiB `put`, `hpput` (from a vector and from an area),
//! `get` and `put_owned` between two processes on threads and processes,
//! and 1 MiB hpputs and gets on processes, against single-thread `memcpy`
//! of the same bytes (and, for information, two threads copying at once).

use std::hint::black_box;
use std::time::Instant;

use bsplib::{Area, Engine, Error, Runtime};

use super::report::{stats, Row, Stats, Target};
use super::sync::SpinBarrier;
use super::timing::first;
use super::Config;

/// Bytes moved by the bandwidth measurements.
const BIG: usize = 16 << 20;

// ----- b. bandwidth ------------------------------------------------------------

/// Seconds per copy of `BIG` bytes by thread 0 while `threads` threads
/// each copy their own `BIG` bytes at the same time; one per repetition.
/// With one thread this is the `memcpy` baseline; with two it shows what
/// the memory system gives each of two processes copying at once.
fn bench_memcpy(threads: usize, bytes: usize, reps: usize, cfg: &Config) -> Vec<f64> {
    let start = SpinBarrier::new(threads);
    let worker = || -> Vec<f64> {
        let src = vec![1u8; bytes];
        let mut dst = vec![0u8; bytes];
        let mut sense = false;
        let mut out = Vec::with_capacity(reps);
        // Round 0 warms up (page faults), with as many copies as `bench_put`.
        for round in 0..=reps {
            let copies = cfg.copies_in(round) * (BIG / bytes).max(1);
            start.wait(&mut sense);
            let t0 = Instant::now();
            for _ in 0..copies {
                black_box(&mut dst).copy_from_slice(black_box(&src));
            }
            let elapsed = t0.elapsed();
            black_box(&dst);
            if round > 0 {
                out.push(elapsed.as_secs_f64() / copies as f64);
            }
        }
        out
    };
    std::thread::scope(|s| {
        let others: Vec<_> = (1..threads).map(|_| s.spawn(worker)).collect();
        let mine = worker();
        for h in others {
            h.join().expect("a memcpy thread panicked");
        }
        mine
    })
}

/// The transfer of a bandwidth measurement.
#[derive(Clone, Copy, PartialEq)]
enum Transfer {
    Put,
    HpPut,
    /// `hpput` whose source is an `Area` (on `processes`, in memory every
    /// process maps: one copy by the receiver).
    HpPutArea,
    Get,
    /// `put_owned` of an `Arc<[u8]>` (a clone each time: no copy).
    Owned,
}

impl Transfer {
    fn name(self) -> &'static str {
        match self {
            Transfer::Put => "put",
            Transfer::HpPut => "hpput",
            Transfer::HpPutArea => "hpput from an area",
            Transfer::Get => "get",
            Transfer::Owned => "put_owned",
        }
    }
}

/// Seconds per transfer of `BIG` bytes plus the sync, with both processes
/// of a p = 2 run of `engine` sending to each other (a get: fetching from
/// each other, into memory that is not registered); one per repetition.
fn bench_transfer(
    engine: Engine,
    kind: Transfer,
    bytes: usize,
    reps: usize,
    cfg: &Config,
) -> Result<Vec<f64>, Error> {
    let results = Runtime::new(2).engine(engine).run(|bsp| {
        let pid = bsp.pid();
        let other = 1 - pid;
        let src = vec![pid as u8 + 1; bytes];
        let owned: std::sync::Arc<[u8]> = std::sync::Arc::from(&src[..]);
        let src_area = Area::from_slice(bsp, &src);
        let mut dst = Area::<u8>::new(bsp, bytes);
        let local = Area::<u8>::new(bsp, bytes);
        dst.as_mut_slice(bsp).fill(pid as u8 + 1);
        bsp.push_reg(&dst)?;
        bsp.sync()?;
        let mut out = Vec::with_capacity(reps);
        // Round 0 warms up (page faults, buffer growth; see
        // `Config::warmup`). It makes at least two transfers: supersteps
        // alternate between two outgoing buffers.
        for round in 0..=reps {
            let copies = cfg.copies_in(round) * (BIG / bytes).max(1);
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..copies {
                match kind {
                    // SAFETY: `src` is neither dropped nor modified before
                    // the sync below returns, and no process touches `dst`
                    // during the superstep except through this transfer.
                    Transfer::HpPut => unsafe { bsp.hpput(other, &dst, 0, &src)? },
                    // SAFETY: as above, for `src_area`.
                    Transfer::HpPutArea => unsafe {
                        bsp.hpput(other, &dst, 0, src_area.as_slice(bsp))?
                    },
                    Transfer::Put => bsp.put(other, &dst, 0, &src)?,
                    Transfer::Get => bsp.get(other, &dst, 0, local.range(..bytes))?,
                    Transfer::Owned => bsp.put_owned(other, &dst, 0, owned.clone())?,
                }
                bsp.sync()?;
            }
            let elapsed = t0.elapsed();
            if round > 0 {
                out.push(elapsed.as_secs_f64() / copies as f64);
            }
        }
        let got = if kind == Transfer::Get {
            local.as_slice(bsp)
        } else {
            dst.as_slice(bsp)
        };
        let want = other as u8 + 1;
        if got[0] != want || got[bytes / 2] != want || got[bytes - 1] != want {
            bsp.abort(format!(
                "process {pid}: wrong data after the 16 MiB {}",
                kind.name()
            ));
        }
        bsp.pop_reg(&dst)?;
        bsp.sync()?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Bandwidth in GiB/s from seconds per `bytes` bytes: "min" is the best.
fn gibs(s: Stats, bytes: usize) -> Stats {
    let bw = |t: f64| bytes as f64 / t / (1u64 << 30) as f64;
    Stats {
        min: bw(s.min),
        median: bw(s.median),
    }
}

/// Section b: 16 MiB transfers against `memcpy`, threads and processes;
/// then 1 MiB hpputs and gets on processes (the program's memory, an
/// area's, and a get of an area).
pub(super) fn section(cfg: &Config, rows: &mut Vec<Row>) -> Result<(), Box<dyn std::error::Error>> {
    let all = [
        Transfer::Put,
        Transfer::HpPut,
        Transfer::HpPutArea,
        Transfer::Get,
        Transfer::Owned,
    ];
    let both: &[Engine] = &[Engine::Threads, Engine::Processes];
    sized(cfg, rows, BIG, both, &all)?;
    let unbuffered = [Transfer::HpPut, Transfer::HpPutArea, Transfer::Get];
    sized(cfg, rows, 1 << 20, &[Engine::Processes], &unbuffered)
}

/// The transfers `kinds` of `bytes` on `engines`, each against `memcpy`
/// of the same bytes, interleaved over the repetitions.
fn sized(
    cfg: &Config,
    rows: &mut Vec<Row>,
    bytes: usize,
    engines: &[Engine],
    kinds: &[Transfer],
) -> Result<(), Box<dyn std::error::Error>> {
    let size = format!("{} MiB", bytes >> 20);
    eprintln!(
        "[bench] {size} memcpy; transfers on {} engine(s)",
        engines.len()
    );
    let (mut memcpy, mut memcpy2) = (vec![], vec![]);
    let mut bw: Vec<Vec<f64>> = vec![Vec::new(); engines.len() * kinds.len()];
    for _ in 0..cfg.reps {
        memcpy.extend(bench_memcpy(1, bytes, 1, cfg));
        memcpy2.extend(bench_memcpy(2, bytes, 1, cfg));
        for (e, &engine) in engines.iter().enumerate() {
            for (k, &kind) in kinds.iter().enumerate() {
                bw[e * kinds.len() + k].extend(bench_transfer(engine, kind, bytes, 1, cfg)?);
            }
        }
    }
    let memcpy = gibs(stats(&memcpy), bytes);
    let memcpy2 = gibs(stats(&memcpy2), bytes);
    let base = format!("memcpy {size}, 1 thread");
    rows.push(Row {
        name: format!("memcpy {size}, 2 threads at once"),
        unit: "GiB/s",
        value: memcpy2,
        baseline: Some((base.clone(), memcpy)),
        target: Target::Info("(info: each thread's share when both copy)"),
    });
    for (e, &engine) in engines.iter().enumerate() {
        for (k, &kind) in kinds.iter().enumerate() {
            let threads = engine == Engine::Threads;
            let target = match kind {
                Transfer::Put => Target::AtLeast(0.5, "memcpy"),
                Transfer::HpPut if threads => Target::AtLeast(0.9, "memcpy"),
                // Between address spaces from the program's own memory:
                // two copies at full speed.
                Transfer::HpPut => Target::AtLeast(0.5, "memcpy (two copies)"),
                // From memory the library allocated (area memory on
                // `processes`): one copy, and so for a get of an area.
                Transfer::HpPutArea | Transfer::Get => Target::AtLeast(0.9, "memcpy (one copy)"),
                Transfer::Owned if threads => Target::AtLeast(0.9, "memcpy (one copy)"),
                Transfer::Owned => Target::Info("(info: a put between address spaces)"),
            };
            rows.push(Row {
                name: format!(
                    "{}{} {size}, p=2",
                    if threads { "" } else { "proc " },
                    kind.name()
                ),
                unit: "GiB/s",
                value: gibs(stats(&bw[e * kinds.len() + k]), bytes),
                baseline: Some((base.clone(), memcpy)),
                target,
            });
        }
    }
    Ok(())
}
