//! Section e: scaling of a superstep with one put per process against an
//! empty one, and the peak memory, each configuration in a child process
//! of its own (`bench --child-scale`); at p = 1024 the empty superstep
//! against a futex barrier.

use std::sync::atomic::Ordering;
use std::time::Instant;

use bsplib::{Engine, Error, Runtime};

use super::report::{stats, Row, Stats, Target};
use super::timing::first;
use super::Config;

// ----- e. scaling: futex barrier baseline, child runs -------------------------

/// Seconds per superstep at `p` processes of `engine`: empty ones,
/// and ones in which every process puts one word to its right neighbour;
/// `(empty, one put)`, each the median of `rounds` rounds of `iters`.
fn bench_scale(
    engine: Engine,
    p: usize,
    iters: usize,
    rounds: usize,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let results = Runtime::new(p).engine(engine).run(|bsp| {
        let x = bsplib::Area::<u64>::new(bsp, 1);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let right = (bsp.pid() + 1) % bsp.nprocs();
        let (mut empty, mut put) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..iters {
                bsp.sync()?;
            }
            empty.push(t0.elapsed().as_secs_f64() / iters as f64);
            bsp.sync()?;
            let t0 = Instant::now();
            for i in 0..iters {
                bsp.put(right, &x, 0, &[i as u64])?;
                bsp.sync()?;
            }
            put.push(t0.elapsed().as_secs_f64() / iters as f64);
        }
        Ok((empty, put))
    })?;
    Ok(first(results))
}

/// The baseline of the empty superstep at p = 1024: a central barrier
/// whose waiters sleep on a futex (the kernel's wait queue), woken all at
/// once by the last arrival. Written for the benchmark, as simple as such
/// a barrier gets.
struct FutexBarrier {
    arrived: std::sync::atomic::AtomicU32,
    generation: std::sync::atomic::AtomicU32,
    n: u32,
}

impl FutexBarrier {
    fn new(n: usize) -> Self {
        FutexBarrier {
            arrived: std::sync::atomic::AtomicU32::new(0),
            generation: std::sync::atomic::AtomicU32::new(0),
            n: u32::try_from(n).expect("fewer than 2^32 threads"),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            // SAFETY: FUTEX_WAKE on a live, aligned u32.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.generation.as_ptr(),
                    libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                    i32::MAX,
                )
            };
        } else {
            while self.generation.load(Ordering::Acquire) == generation {
                // SAFETY: FUTEX_WAIT on a live, aligned u32; returns at
                // once if the generation moved on.
                unsafe {
                    libc::syscall(
                        libc::SYS_futex,
                        self.generation.as_ptr(),
                        libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                        generation,
                        std::ptr::null::<libc::timespec>(),
                    )
                };
            }
        }
    }
}

/// Seconds per futex-barrier episode with `n` threads, `rounds` rounds of
/// `iters` episodes.
fn bench_futex(n: usize, iters: usize, rounds: usize) -> Vec<f64> {
    let barrier = FutexBarrier::new(n);
    std::thread::scope(|s| {
        for _ in 1..n {
            s.spawn(|| {
                for _ in 0..rounds * (iters + 1) {
                    barrier.wait();
                }
            });
        }
        let mut out = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            barrier.wait();
            let t0 = Instant::now();
            for _ in 0..iters {
                barrier.wait();
            }
            out.push(t0.elapsed().as_secs_f64() / iters as f64);
        }
        out
    })
}

/// This process's peak resident memory (`VmHWM`: of its address space,
/// which `exec` replaced, unlike `getrusage`'s figure, which keeps the
/// parent's from before the `exec`) and that of its largest waited child
/// (forked, not exec'd: the `processes` engine's), in KiB.
fn peak_kib() -> (u64, u64) {
    let me = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0);
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    (me, u.ru_maxrss as u64)
}

/// Child mode (`bench --child-scale ENGINE P ITERS ROUNDS`): runs
/// [`bench_scale`] alone in this process and prints, on one line, the
/// empty and one-put timings and the peak memory, so that the parent
/// measures each configuration's memory apart from the others.
pub(super) fn child_scale(args: &[String]) -> Result<(), String> {
    let [engine, p, iters, rounds] = args else {
        return Err("--child-scale needs ENGINE P ITERS ROUNDS".into());
    };
    let engine = Engine::from_name(engine).ok_or("unknown engine")?;
    let num = |a: &String| a.parse::<usize>().map_err(|e| e.to_string());
    let (empty, put) =
        bench_scale(engine, num(p)?, num(iters)?, num(rounds)?).map_err(|e| e.to_string())?;
    let (me, children) = peak_kib();
    let list = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:e}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    println!("{} {} {me} {children}", list(&empty), list(&put));
    Ok(())
}

/// One configuration of the scaling sweep, run in a child process:
/// `(empty, one put, peak KiB)`; for `processes` the peak is that of one
/// process (the largest), for `threads` that of the whole run.
fn scale_in_child(
    engine: Engine,
    p: usize,
    iters: usize,
    rounds: usize,
) -> Result<(Vec<f64>, Vec<f64>, u64), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::process::Command::new(exe)
        .args(["--child-scale", engine.name()])
        .args([p, iters, rounds].map(|n| n.to_string()))
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("the child run of {} p = {p} failed", engine.name()));
    }
    let line = String::from_utf8_lossy(&out.stdout);
    let parts: Vec<&str> = line.split_whitespace().collect();
    let [empty, put, me, children] = parts[..] else {
        return Err(format!("unexpected child output {line:?}"));
    };
    let list = |s: &str| -> Result<Vec<f64>, String> {
        s.split(',')
            .map(|x| x.parse::<f64>().map_err(|e| e.to_string()))
            .collect()
    };
    let kib = |s: &str| s.parse::<u64>().map_err(|e| e.to_string());
    let peak = if engine == Engine::Threads {
        kib(me)?
    } else {
        kib(me)?.max(kib(children)?)
    };
    Ok((list(empty)?, list(put)?, peak))
}

/// Section e: the scaling sweep, each configuration in a child process.
pub(super) fn section(cfg: &Config, rows: &mut Vec<Row>) -> Result<(), Box<dyn std::error::Error>> {
    // e. scaling: a superstep of one put per process against an empty
    // one, each configuration in a child process (its peak memory);
    // at p = 1024 the empty superstep against a futex barrier.
    let sweep: &[(Engine, usize)] = if cfg.quick {
        &[
            (Engine::Threads, 2),
            (Engine::Threads, 64),
            (Engine::Processes, 8),
        ]
    } else {
        &[
            (Engine::Threads, 2),
            (Engine::Threads, 8),
            (Engine::Threads, 64),
            (Engine::Threads, 256),
            (Engine::Threads, 1024),
            (Engine::Processes, 2),
            (Engine::Processes, 8),
            (Engine::Processes, 32),
        ]
    };
    let us = |s: Stats| Stats {
        min: s.min * 1e6,
        median: s.median * 1e6,
    };
    for &(engine, p) in sweep {
        let name = engine.name();
        eprintln!("[bench] scaling, {name}, p = {p}: empty superstep and one put each");
        let iters = if p >= 256 { 20 } else { 200 };
        let (empty, put, kib) = scale_in_child(engine, p, iters, cfg.reps)?;
        let short = if engine == Engine::Threads {
            ""
        } else {
            "proc "
        };
        rows.push(Row {
            name: format!("{short}one put each + sync, p={p}"),
            unit: "us",
            value: us(stats(&put)),
            baseline: Some((format!("{short}empty sync, p={p}"), us(stats(&empty)))),
            target: if p == 1024 {
                Target::AtMost(1.5, "empty sync")
            } else {
                Target::Info("(the trend; target at p = 1024)")
            },
        });
        let mib = kib as f64 / 1024.0;
        rows.push(Row {
            name: format!(
                "{short}peak memory, p={p}{}",
                if engine == Engine::Threads {
                    ""
                } else {
                    " (1 proc)"
                }
            ),
            unit: "MiB",
            value: Stats {
                min: mib,
                median: mib,
            },
            baseline: None,
            target: if p == 1024 {
                Target::Under(64.0)
            } else {
                Target::Info("(the trend; target at p = 1024)")
            },
        });
        if engine == Engine::Threads && p == 1024 {
            eprintln!("[bench] futex barrier, 1024 threads");
            let futex = bench_futex(p, iters, cfg.reps);
            rows.push(Row {
                name: format!("empty sync, p={p}"),
                unit: "us",
                value: us(stats(&empty)),
                baseline: Some((format!("futex barrier, {p} thr"), us(stats(&futex)))),
                target: Target::AtMost(2.0, "futex barrier"),
            });
        }
    }
    Ok(())
}
