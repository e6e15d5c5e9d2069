//! Sections c and f: the bspbench h-relation of single words, on threads
//! (g per h and the fitted T = l + g h, with its detail table) and on
//! processes as time per word moved at a larger p against p = 2.

use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use bsplib::{Area, Bsp, Engine, Error, Portable, Runtime};

use super::report::{fit_line, ns, stats, Row, Stats, Target};
use super::timing::{bounded_loop, first};
use super::Config;

// ----- c. h-relation -----------------------------------------------------------

/// Seconds per superstep of the h-relation, per h, and of the empty sync.
#[derive(Portable)]
struct HRelation {
    empty: Vec<f64>,
    per_h: Vec<(usize, Vec<f64>)>,
}

/// bspbench's destination of word `i` of process `s`: process
/// `(s + 1 + i mod (p-1)) mod p`, index `s + (i div (p-1)) p`.
#[inline]
fn destination(s: usize, p: usize, i: usize) -> (usize, usize) {
    ((s + 1 + i % (p - 1)) % p, s + (i / (p - 1)) * p)
}

fn bench_hrelation(p: usize, cfg: &Config) -> Result<HRelation, Error> {
    assert!(p >= 2, "the h-relation needs two processes");
    let hs = cfg.hs();
    let hmax = *hs.iter().max().expect("at least one h");
    let stop = AtomicUsize::new(0);
    let results = Runtime::new(p)
        .engine(Engine::Threads)
        .run(|bsp: &mut Bsp| {
            let (pid, leader) = (bsp.pid(), bsp.pid() == 0);
            let src: Vec<u64> = (0..hmax as u64).collect();
            let dest: Vec<(usize, usize)> = (0..hmax).map(|i| destination(pid, p, i)).collect();
            let dst = Area::<u64>::new(bsp, p * (hmax / (p - 1) + 1));
            bsp.push_reg(&dst)?;
            bsp.sync()?;

            let mut empty = Vec::with_capacity(cfg.reps);
            for round in 0..=cfg.reps {
                bsp.sync()?;
                let (iters, elapsed) = bounded_loop(
                    leader,
                    &stop,
                    round,
                    cfg.sync_iters() / 10,
                    cfg.sync_budget() / 4,
                    || bsp.sync(),
                )?;
                if round > 0 {
                    empty.push(elapsed.as_secs_f64() / iters as f64);
                }
            }

            let mut per_h = Vec::with_capacity(hs.len());
            for &h in hs {
                let steps = (cfg.words_per_rep() / h).max(3);
                let mut out = Vec::with_capacity(cfg.reps);
                for round in 0..=cfg.reps {
                    bsp.sync()?;
                    let t0 = Instant::now();
                    for _ in 0..steps {
                        for (i, &(to, at)) in dest[..h].iter().enumerate() {
                            bsp.put(to, &dst, at, &src[i..i + 1])?;
                        }
                        bsp.sync()?;
                    }
                    let elapsed = t0.elapsed();
                    if round > 0 {
                        out.push(elapsed.as_secs_f64() / steps as f64);
                    }
                }
                per_h.push((h, out));
            }

            // The last superstep delivered words 0..hmax of every other process.
            let got = dst.as_slice(bsp);
            for s in (0..p).filter(|&s| s != pid) {
                let c = (pid + p - s - 1) % p;
                for i in (c..hmax).step_by(p - 1) {
                    if got[destination(s, p, i).1] != i as u64 {
                        bsp.abort(format!("process {pid}: word {i} from {s} is wrong"));
                    }
                }
            }
            bsp.pop_reg(&dst)?;
            bsp.sync()?;
            Ok(HRelation { empty, per_h })
        })?;
    Ok(first(results))
}

// ----- f. one-word transfers on processes ----------------------------------------

/// Seconds per superstep at `p` processes of `engine`: empty, and with
/// every process putting `h` single words cyclically over the others
/// (bspbench's pattern); `(empty, h-relation)`, one per round.
fn bench_words(
    engine: Engine,
    p: usize,
    h: usize,
    steps: usize,
    rounds: usize,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let results = Runtime::new(p).engine(engine).run(move |bsp| {
        let pid = bsp.pid();
        let src: Vec<u64> = (0..h as u64).collect();
        let dest: Vec<(usize, usize)> = (0..h).map(|i| destination(pid, p, i)).collect();
        let dst = Area::<u64>::new(bsp, p * (h / (p - 1) + 1));
        bsp.push_reg(&dst)?;
        bsp.sync()?;
        let (mut empty, mut full) = (Vec::new(), Vec::new());
        for round in 0..=rounds {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..steps {
                bsp.sync()?;
            }
            let e = t0.elapsed().as_secs_f64() / steps as f64;
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..steps {
                for (i, &(to, at)) in dest.iter().enumerate() {
                    bsp.put(to, &dst, at, &src[i..i + 1])?;
                }
                bsp.sync()?;
            }
            let f = t0.elapsed().as_secs_f64() / steps as f64;
            if round > 0 {
                empty.push(e);
                full.push(f);
            }
        }
        Ok((empty, full))
    })?;
    Ok(first(results))
}

/// Section c: the h-relation on threads, p = 2 and 4; its rows, and the
/// lines of its detail table in `details`.
pub(super) fn section(
    cfg: &Config,
    rows: &mut Vec<Row>,
    details: &mut Vec<(usize, usize, Stats, Stats)>,
) -> Result<(), Box<dyn std::error::Error>> {
    // c. h-relation.
    for p in [2usize, 4] {
        eprintln!("[bench] h-relation of single words, p = {p}");
        let hr = bench_hrelation(p, cfg)?;
        let empty = stats(&hr.empty);
        let target = "<= 0.8x MulticoreBSP for C (bench/peers/run measures it)";
        let mut min_points = Vec::new();
        let mut med_points = Vec::new();
        let empty_row = details.len();
        for (h, sample) in &hr.per_h {
            let t = stats(sample);
            let hf = *h as f64;
            let g = Stats {
                min: (t.min - empty.min) / hf * 1e9,
                median: (t.median - empty.median) / hf * 1e9,
            };
            min_points.push((hf, t.min));
            med_points.push((hf, t.median));
            details.push((p, *h, ns(t), g));
            rows.push(Row {
                name: format!("g, p={p}, h={h}"),
                unit: "ns/word",
                value: g,
                baseline: None,
                target: Target::Info(target),
            });
        }
        let (l_min, g_min) = fit_line(&min_points);
        let (l_med, g_med) = fit_line(&med_points);
        rows.push(Row {
            name: format!("g fitted (T = l + g h), p={p}"),
            unit: "ns/word",
            value: Stats {
                min: g_min * 1e9,
                median: g_med * 1e9,
            },
            baseline: None,
            target: Target::Info(target),
        });
        let l = Stats {
            min: l_min * 1e9,
            median: l_med * 1e9,
        };
        details.insert(empty_row, (p, 0, ns(empty), l));
    }
    Ok(())
}

/// Section f: the h-relation's time per word moved on processes, a larger
/// p against p = 2.
pub(super) fn section_words(
    cfg: &Config,
    rows: &mut Vec<Row>,
) -> Result<(), Box<dyn std::error::Error>> {
    // f. one-word transfers on processes, per word moved, p = 32 vs 2.
    let (h, steps) = if cfg.quick { (256, 10) } else { (1024, 20) };
    let ps: &[usize] = if cfg.quick { &[2, 8] } else { &[2, 32] };
    let mut per_word = Vec::new();
    for &p in ps {
        eprintln!("[bench] processes, p = {p}: h = {h} single words per process");
        let (empty, full) = bench_words(Engine::Processes, p, h, steps, cfg.reps)?;
        let words = (h * p) as f64;
        let (e, f) = (stats(&empty), stats(&full));
        let w = Stats {
            min: (f.min - e.min) / words * 1e9,
            median: (f.median - e.median) / words * 1e9,
        };
        per_word.push((p, w));
    }
    let (p0, base) = per_word[0];
    for &(p, st) in &per_word[1..] {
        rows.push(Row {
            name: format!("proc ns per word moved, p={p}"),
            unit: "ns/word",
            value: st,
            baseline: Some((format!("the same, p={p0}"), base)),
            target: if p == 32 {
                Target::AtMost(3.0, "p = 2")
            } else {
                Target::Info("(the trend; target at p = 32)")
            },
        });
    }
    Ok(())
}

/// The h-relation's table: time per superstep and g for each p and h.
pub(super) fn print_details(details: &[(usize, usize, Stats, Stats)]) {
    println!();
    println!("h-relation detail (time per superstep; h = 0 is the empty sync, its g column is the fitted l)");
    println!(
        "{:>3} {:>7} | {:>12} {:>12} | {:>10} {:>10}",
        "p", "h", "T min (us)", "T med (us)", "g min", "g med"
    );
    for &(p, h, t, g) in details {
        let unit = if h == 0 { 1e-3 } else { 1.0 };
        println!(
            "{p:>3} {h:>7} | {:>12.2} {:>12.2} | {:>10.2} {:>10.2}{}",
            t.min / 1e3,
            t.median / 1e3,
            g.min * unit,
            g.median * unit,
            if h == 0 { "  (l, us)" } else { "  (ns/word)" }
        );
    }
}
