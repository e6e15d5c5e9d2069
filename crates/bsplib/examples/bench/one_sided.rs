//! Section l: one-sided synchronisation. A ring exchange with
//! post/start/complete/wait and with a `Window` epoch against a `sync`;
//! the latency of lock / put / unlock of an area and of a `Window`
//! against an uncontended `std::sync::Mutex`.

use std::hint::black_box;
use std::time::Instant;

use bsplib::{Area, Engine, Error, Runtime};

use super::report::{stats, Row, Stats, Target};
use super::timing::first;
use super::Config;

// ----- l. one-sided synchronisation -------------------------------------------------

/// Microseconds from seconds.
fn us_stats(v: &[f64]) -> Stats {
    let s = stats(v);
    Stats {
        min: s.min * 1e6,
        median: s.median * 1e6,
    }
}

/// Seconds per round of a ring exchange on threads: every process puts one
/// word into its right neighbour's area, with post/start/complete/wait
/// (`pscw`) or with a sync; one per repetition.
fn bench_ring(p: usize, pscw: bool, cfg: &Config) -> Result<Vec<f64>, Error> {
    let rounds: usize = match (cfg.quick, p > 16) {
        (true, _) => 300,
        (false, false) => 3000,
        (false, true) => 600,
    };
    let results = Runtime::new(p).engine(Engine::Threads).run(move |bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let (left, right) = ((me + p - 1) % p, (me + 1) % p);
        let x = Area::<u64>::new(bsp, 1);
        bsp.push_reg(&x)?;
        if pscw {
            bsp.rma().init()?;
        } else {
            bsp.sync()?;
        }
        let mut out = Vec::new();
        for round in 0..=1 {
            bsp.sync()?;
            let n = if round == 0 { rounds / 10 } else { rounds };
            let t0 = Instant::now();
            for i in 0..n {
                if pscw {
                    let e = bsp.rma().epoch(&x, &[left], &[right])?;
                    e.put(right, 0, &[i as u64])?;
                    e.wait()?;
                } else {
                    bsp.put(right, &x, 0, &[i as u64])?;
                    bsp.sync()?;
                }
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / n as f64);
            }
        }
        black_box(x.as_slice(bsp)[0]);
        if pscw {
            bsp.rma().term()?;
        }
        Ok(out)
    })?;
    Ok(first(results))
}

/// Seconds per round of the ring exchange of [`bench_ring`] with a
/// [`bsplib::Window`] epoch (counters in shared memory) on `engine`.
fn bench_ring_window(engine: Engine, p: usize, cfg: &Config) -> Result<Vec<f64>, Error> {
    let rounds: usize = match (cfg.quick, p > 16) {
        (true, _) => 300,
        (false, false) => 3000,
        (false, true) => 600,
    };
    let results = Runtime::new(p).engine(engine).run(move |bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let (left, right) = ((me + p - 1) % p, (me + 1) % p);
        let mut w = bsplib::Window::<u64>::new(bsp, 1)?;
        let mut out = Vec::new();
        for round in 0..=1 {
            bsp.sync()?;
            let n = if round == 0 { rounds / 10 } else { rounds };
            let t0 = Instant::now();
            for i in 0..n {
                let mut e = w.epoch(bsp, &[left], &[right])?;
                e.put(right, 0, &[i as u64])?;
                e.wait()?;
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / n as f64);
            }
        }
        black_box(w.local(bsp)?[0]);
        w.free(bsp)?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Seconds per lock / put of 8 bytes / unlock by process 0 of p = 2, on
/// process 1's area (which waits in its sync meanwhile) or on its own.
fn bench_lock(own: bool, cfg: &Config) -> Result<Vec<f64>, Error> {
    let n: usize = if cfg.quick { 500 } else { 5000 };
    let results = Runtime::new(2).engine(Engine::Threads).run(move |bsp| {
        let x = Area::<u64>::new(bsp, 1);
        bsp.push_reg(&x)?;
        bsp.rma().init()?;
        let mut out = Vec::new();
        if bsp.pid() == 0 {
            let t = if own { 0 } else { 1 };
            for round in 0..=1 {
                let m = if round == 0 { n / 10 } else { n };
                let t0 = Instant::now();
                for i in 0..m {
                    let l = bsp.rma().lock(t, &x, bsplib::LockKind::Exclusive)?;
                    l.put(0, &[i as u64])?;
                    l.unlock()?;
                }
                if round > 0 {
                    out.push(t0.elapsed().as_secs_f64() / m as f64);
                }
            }
        }
        bsp.sync()?; // process 1 serves the locks in here
        black_box(x.as_slice(bsp)[0]);
        bsp.rma().term()?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Seconds per lock / put of 8 bytes / unlock of a [`bsplib::Window`] by
/// process 0 of p = 2, of process 1's memory (which waits in its sync
/// meanwhile, making no call for it) or of its own.
fn bench_window_lock(engine: Engine, own: bool, cfg: &Config) -> Result<Vec<f64>, Error> {
    let n: usize = if cfg.quick { 5_000 } else { 100_000 };
    let results = Runtime::new(2).engine(engine).run(move |bsp| {
        let w = bsplib::Window::<u64>::new(bsp, 1)?;
        let mut out = Vec::new();
        if bsp.pid() == 0 {
            let t = if own { 0 } else { 1 };
            for round in 0..=1 {
                let m = if round == 0 { n / 10 } else { n };
                let t0 = Instant::now();
                for i in 0..m {
                    let mut l = w.lock(bsp, t, bsplib::LockKind::Exclusive)?;
                    l.put(0, &[i as u64])?;
                }
                if round > 0 {
                    out.push(t0.elapsed().as_secs_f64() / m as f64);
                }
            }
        }
        bsp.sync()?;
        black_box(w.local(bsp)?[0]);
        w.free(bsp)?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Seconds per uncontended `Mutex` lock, 8-byte store and unlock.
fn bench_mutex(cfg: &Config) -> Vec<f64> {
    let n: usize = if cfg.quick { 100_000 } else { 1_000_000 };
    let m = std::sync::Mutex::new(0u64);
    let t0 = Instant::now();
    for i in 0..n {
        *black_box(&m).lock().unwrap_or_else(|e| e.into_inner()) = i as u64;
    }
    vec![t0.elapsed().as_secs_f64() / n as f64]
}

/// Section l: one-sided synchronisation against `sync` and a mutex.
pub(super) fn section(cfg: &Config, rows: &mut Vec<Row>) -> Result<(), Box<dyn std::error::Error>> {
    // l. post/start/complete/wait against sync on a ring; lock latency.
    let ps: &[usize] = if cfg.quick { &[8] } else { &[2, 8, 64] };
    for &p in ps {
        eprintln!("[bench] threads: ring exchange, post/start/complete/wait and sync, p = {p}");
        let (mut pscw, mut sync, mut win) = (vec![], vec![], vec![]);
        for _ in 0..cfg.reps {
            pscw.extend(bench_ring(p, true, cfg)?);
            sync.extend(bench_ring(p, false, cfg)?);
            win.extend(bench_ring_window(Engine::Threads, p, cfg)?);
        }
        let sync = us_stats(&sync);
        rows.push(Row {
            name: format!("ring exchange, post/start/complete/wait, p={p}"),
            unit: "us/round",
            value: us_stats(&pscw),
            baseline: Some((format!("the same with sync, p={p}"), sync)),
            target: Target::AtMost(1.0, "sync (faster, more so as p grows)"),
        });
        rows.push(Row {
            name: format!("ring exchange, Window epoch, p={p}"),
            unit: "us/round",
            value: us_stats(&win),
            baseline: Some((format!("the same with sync, p={p}"), sync)),
            target: Target::AtMost(1.0, "sync (faster, more so as p grows)"),
        });
    }
    eprintln!("[bench] threads: lock / put 8 bytes / unlock against a mutex");
    let (mut other, mut own, mut mutex) = (vec![], vec![], vec![]);
    for _ in 0..cfg.reps {
        other.extend(bench_lock(false, cfg)?);
        own.extend(bench_lock(true, cfg)?);
        mutex.extend(bench_mutex(cfg));
    }
    let mutex = us_stats(&mutex);
    rows.push(Row {
        name: "lock/put 8 B/unlock, other process, p=2".into(),
        unit: "us/epoch",
        value: us_stats(&other),
        baseline: Some(("uncontended Mutex lock/store/unlock".into(), mutex)),
        target: Target::Info("(one round trip to the target's progress point)"),
    });
    rows.push(Row {
        name: "lock/put 8 B/unlock, own area, p=2".into(),
        unit: "us/epoch",
        value: us_stats(&own),
        baseline: Some(("uncontended Mutex lock/store/unlock".into(), mutex)),
        target: Target::Info("(through this process's own inbox)"),
    });
    for engine in [Engine::Threads, Engine::Processes] {
        eprintln!(
            "[bench] {}: window lock / put 8 bytes / unlock against a mutex",
            engine.name()
        );
        let (mut other, mut own, mut mutex) = (vec![], vec![], vec![]);
        for _ in 0..cfg.reps {
            other.extend(bench_window_lock(engine, false, cfg)?);
            own.extend(bench_window_lock(engine, true, cfg)?);
            mutex.extend(bench_mutex(cfg));
        }
        let mutex = us_stats(&mutex);
        for (what, v) in [("other process", other), ("own memory", own)] {
            rows.push(Row {
                name: format!("Window lock/put 8 B/unlock, {what}, {} p=2", engine.name()),
                unit: "us/epoch",
                value: us_stats(&v),
                baseline: Some(("uncontended Mutex lock/store/unlock".into(), mutex)),
                target: Target::Info("(straight into shared memory; the target makes no call)"),
            });
        }
    }
    Ok(())
}
