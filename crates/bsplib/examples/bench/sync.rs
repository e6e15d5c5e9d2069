//! Section a: the empty `sync` at p = 2 and 4 on threads against a bare
//! sense-reversing spin barrier of as many threads (also the start line of
//! section b's copying threads).

use std::convert::Infallible;
use std::hint::spin_loop;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bsplib::{Engine, Error, Runtime};

use super::report::{ns, stats, Row, Target};
use super::timing::{bounded_loop, first};
use super::Config;

// ----- a. barriers -----------------------------------------------------------

/// A bare sense-reversing spin barrier: the baseline of `sync`.
///
/// The classic centralised barrier: a counter and a sense flag. Both live on
/// one cache line (the struct is aligned to 128 bytes, so nothing else
/// shares it): with two threads that is measurably faster on this VM than
/// padding them onto separate lines (~150 vs ~200 ns), and the baseline
/// should be the best simple barrier, not a strawman.
#[repr(align(128))]
pub(super) struct SpinBarrier {
    count: AtomicUsize,
    sense: AtomicBool,
    n: usize,
}

impl SpinBarrier {
    pub(super) fn new(n: usize) -> Self {
        SpinBarrier {
            count: AtomicUsize::new(0),
            sense: AtomicBool::new(false),
            n,
        }
    }

    /// `local` is the caller's sense, flipped at every episode.
    #[inline]
    pub(super) fn wait(&self, local: &mut bool) {
        let s = !*local;
        *local = s;
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // Everyone else sees the reset after seeing the new sense.
            self.count.store(0, Ordering::Relaxed);
            self.sense.store(s, Ordering::Release);
        } else {
            while self.sense.load(Ordering::Acquire) != s {
                spin_loop();
            }
        }
    }
}

/// Seconds per spin-barrier episode with `n` threads, one per repetition.
fn bench_spin(n: usize, reps: usize, cfg: &Config) -> Vec<f64> {
    let barrier = SpinBarrier::new(n);
    let stop = AtomicUsize::new(0);
    let worker = |leader: bool| -> Vec<f64> {
        let mut sense = false;
        let mut out = Vec::with_capacity(reps);
        // Round 0 warms up.
        for round in 0..=reps {
            barrier.wait(&mut sense);
            let budget = cfg.sync_budget_in(round);
            let step = || {
                barrier.wait(&mut sense);
                Ok::<(), Infallible>(())
            };
            let (iters, elapsed) =
                match bounded_loop(leader, &stop, round, cfg.sync_iters(), budget, step) {
                    Ok(done) => done,
                    Err(never) => match never {},
                };
            if round > 0 {
                out.push(elapsed.as_secs_f64() / iters as f64);
            }
        }
        out
    };
    std::thread::scope(|s| {
        let others: Vec<_> = (1..n).map(|_| s.spawn(|| worker(false))).collect();
        let mine = worker(true);
        for h in others {
            h.join().expect("a spin-barrier thread panicked");
        }
        mine
    })
}

/// Seconds per empty `sync` at `p` processes, one per repetition.
fn bench_sync(p: usize, reps: usize, cfg: &Config) -> Result<Vec<f64>, Error> {
    let stop = AtomicUsize::new(0);
    let results = Runtime::new(p).engine(Engine::Threads).run(|bsp| {
        let leader = bsp.pid() == 0;
        let mut out = Vec::with_capacity(reps);
        for round in 0..=reps {
            bsp.sync()?;
            let budget = cfg.sync_budget_in(round);
            let (iters, elapsed) =
                bounded_loop(leader, &stop, round, cfg.sync_iters(), budget, || {
                    bsp.sync()
                })?;
            if round > 0 {
                out.push(elapsed.as_secs_f64() / iters as f64);
            }
        }
        Ok(out)
    })?;
    Ok(first(results))
}

/// Section a: an empty sync against a spin barrier, p = 2 and 4.
pub(super) fn section(cfg: &Config, rows: &mut Vec<Row>) -> Result<(), Box<dyn std::error::Error>> {
    // a. empty sync vs spin barrier.
    for p in [2usize, 4] {
        eprintln!("[bench] empty sync and spin barrier, p = {p}");
        let (mut sync, mut spin) = (Vec::new(), Vec::new());
        for _ in 0..cfg.reps {
            sync.extend(bench_sync(p, 1, cfg)?);
            spin.extend(bench_spin(p, 1, cfg));
        }
        let (sync, spin) = (ns(stats(&sync)), ns(stats(&spin)));
        rows.push(Row {
            name: format!("empty sync, p={p}"),
            unit: "ns/sync",
            value: sync,
            baseline: Some((format!("spin barrier, {p} threads"), spin)),
            target: if p == 2 {
                Target::AtMost(1.3, "spin barrier")
            } else {
                Target::Info("(p > cores: must not collapse)")
            },
        });
    }
    Ok(())
}
