//! Soak test: many supersteps of mixed traffic, checking the data every
//! superstep, resident memory after a warm-up and at the end, and
//! throughput per interval.
//!
//! Every superstep each process puts `[pid, step]` to its right neighbour,
//! gets the left neighbour's stamp `[left, step]`, and sends it a message
//! (tag `step`, payload its pid); every 1024 supersteps it registers a
//! fresh area, receives a put into it 256 supersteps later, and pops it at
//! 512. All of it is checked after each sync (a mismatch stops the run).
//!
//! Resident memory is `VmRSS` of `/proc/self/status`: process 0's on
//! `threads` (one address space), the sum over the processes on
//! `processes`. It is taken at the end of the first interval (the
//! warm-up) and at the end. The run fails (exit status 1) if it grows by
//! more than 1 MiB after the warm-up, or if the throughput of the last
//! interval is below half of the first's. The barrier spins before it
//! parks: on a machine whose other load exceeds its cores, throughput
//! drops by an order of magnitude for as long as the load lasts, so the
//! throughput rule applies only when the load average stayed within the
//! cores (the table shows it).
//!
//! ```sh
//! cargo run --release --example soak -- 1000000          # both engines, p = 2
//! cargo run --release --example soak -- --quick          # 20 000 supersteps (CI)
//! cargo run --release --example soak -- 200000 --engine processes --procs 4 --intervals 20
//! ```

use std::time::Instant;

use bsplib::{Area, Bsp, Engine, Error, Runtime};

const USAGE: &str = "usage: soak [SUPERSTEPS] [--quick] [--engine threads|processes|both] [--procs P] [--intervals K]";

/// Allowed growth of resident memory after the warm-up.
const MAX_GROWTH_KIB: u64 = 1024;

struct Options {
    steps: u64,
    engines: Vec<Engine>,
    procs: usize,
    intervals: u64,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        steps: 1_000_000,
        engines: vec![Engine::Threads, Engine::Processes],
        procs: 2,
        intervals: 10,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--quick" => o.steps = 20_000,
            "--engine" => {
                o.engines = match value("--engine")?.as_str() {
                    "both" => vec![Engine::Threads, Engine::Processes],
                    name => vec![Engine::from_name(name).ok_or(format!("no engine {name}"))?],
                }
            }
            "--procs" => o.procs = value("--procs")?.parse().map_err(|e| format!("{e}"))?,
            "--intervals" => {
                o.intervals = value("--intervals")?.parse().map_err(|e| format!("{e}"))?
            }
            "-h" | "--help" => return Err(USAGE.into()),
            n => {
                o.steps = n
                    .parse()
                    .map_err(|_| format!("bad argument {n}\n{USAGE}"))?
            }
        }
    }
    if o.intervals < 2 || o.steps < o.intervals || o.procs == 0 {
        return Err(format!(
            "need SUPERSTEPS >= intervals >= 2, P >= 1\n{USAGE}"
        ));
    }
    Ok(o)
}

/// The machine's 1-minute load average (`/proc/loadavg`): throughput on a
/// shared machine drops when the load exceeds the cores.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// This OS process's resident memory, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// What a process returns: its RSS (KiB) after the warm-up and at the end,
/// then (process 0) for each interval the nanoseconds it took, the RSS at
/// its end and the machine's load average then (times 100).
type Report = (u64, u64, Vec<u64>);

fn check(bsp: &Bsp, ok: bool, what: &str, step: u64) {
    if !ok {
        bsp.abort(format!(
            "soak: wrong {what} on process {} after superstep {step}",
            bsp.pid()
        ));
    }
}

fn soak(bsp: &mut Bsp, steps: u64, intervals: u64) -> Result<Report, Error> {
    let (p, s) = (bsp.nprocs(), bsp.pid());
    let (right, left) = ((s + 1) % p, (s + p - 1) % p);
    let boxed = Area::<u64>::new(bsp, 2);
    let mut stamp = Area::<u64>::new(bsp, 2);
    let got = Area::<u64>::new(bsp, 2);
    bsp.push_reg(&boxed)?;
    bsp.push_reg(&stamp)?;
    bsp.set_tagsize(8)?;
    bsp.sync()?;
    let per = steps / intervals;
    let (mut warm, mut marks) = (0, Vec::new());
    let mut extra: Option<Area<u64>> = None;
    let mut t0 = Instant::now();
    for step in 1..=steps {
        let stamp_now = [s as u64, step];
        stamp.as_mut_slice(bsp).copy_from_slice(&stamp_now);
        bsp.put(right, &boxed, 0, &stamp_now)?;
        bsp.get(left, &stamp, 0, got.range(..2))?;
        bsp.send(left, &step.to_ne_bytes(), &(s as u64).to_ne_bytes())?;
        match step % 1024 {
            0 => {
                let a = Area::<u64>::new(bsp, 16);
                bsp.push_reg(&a)?;
                extra = Some(a);
            }
            256 => {
                if let Some(a) = &extra {
                    bsp.put(right, a, 3, &[step, s as u64])?;
                }
            }
            512 => {
                if let Some(a) = &extra {
                    bsp.pop_reg(a)?;
                }
            }
            513 => extra = None,
            _ => {}
        }
        bsp.sync()?;
        let want = [left as u64, step];
        check(bsp, boxed.as_slice(bsp) == want, "put data", step);
        check(bsp, got.as_slice(bsp) == want, "get data", step);
        check(bsp, bsp.qsize() == (1, 8), "queue size", step);
        let m = bsp.hpmove();
        let ok = m.is_some_and(|m| {
            m.tag_as::<u64>() == Some(step) && m.payload_as::<u64>() == Some(&[right as u64][..])
        });
        check(bsp, ok, "message", step);
        if step % 1024 == 257 && step > 1024 {
            let ok = extra
                .as_ref()
                .is_some_and(|a| a.as_slice(bsp)[3..5] == [step - 1, left as u64]);
            check(bsp, ok, "put into a new registration", step);
        }
        if step % per == 0 && step / per <= intervals {
            let rss = rss_kib();
            if step / per == 1 {
                warm = rss;
            }
            if s == 0 {
                marks.push(t0.elapsed().as_nanos() as u64);
                marks.push(rss);
                marks.push((load_average() * 100.0) as u64);
            }
            t0 = Instant::now();
        }
    }
    bsp.pop_reg(&stamp)?;
    bsp.pop_reg(&boxed)?;
    bsp.sync()?;
    Ok((warm, rss_kib(), marks))
}

/// Runs the soak on `engine`; prints the table; returns whether it passed.
fn run(o: &Options, engine: Engine) -> Result<bool, Error> {
    let (steps, intervals) = (o.steps, o.intervals);
    println!(
        "soak: {} engine, p = {}, {steps} supersteps in {intervals} intervals",
        engine.name(),
        o.procs
    );
    let start = Instant::now();
    let reports = Runtime::new(o.procs)
        .engine(engine)
        .run(move |bsp| soak(bsp, steps, intervals))?;
    let total = start.elapsed();
    let per = steps / intervals;
    let marks = &reports[0].2;
    println!(
        "{:>8} {:>12} {:>10} {:>14} {:>12} {:>8}",
        "interval", "supersteps", "seconds", "supersteps/s", "RSS p0 KiB", "load"
    );
    let rates: Vec<f64> = marks
        .chunks(3)
        .map(|c| per as f64 / (c[0] as f64 * 1e-9))
        .collect();
    for (i, c) in marks.chunks(3).enumerate() {
        println!(
            "{:>8} {:>12} {:>10.3} {:>14.0} {:>12} {:>8.2}",
            i + 1,
            per * (i as u64 + 1),
            c[0] as f64 * 1e-9,
            rates[i],
            c[1],
            c[2] as f64 / 100.0
        );
    }
    // One address space on threads: process 0's figure is everyone's.
    let (warm, end) = match engine {
        Engine::Processes => reports.iter().fold((0, 0), |(w, e), r| (w + r.0, e + r.1)),
        _ => (reports[0].0, reports[0].1),
    };
    let growth = end as i64 - warm as i64;
    let (first, last) = (rates[0], rates[rates.len() - 1]);
    println!(
        "soak: {} p = {}: {steps} supersteps in {:.2} s ({:.0}/s); RSS after warm-up {warm} KiB, at end {end} KiB (growth {growth} KiB, limit {MAX_GROWTH_KIB}); throughput first interval {first:.0}/s, last {last:.0}/s",
        engine.name(),
        o.procs,
        total.as_secs_f64(),
        steps as f64 / total.as_secs_f64()
    );
    let mut ok = true;
    if growth > MAX_GROWTH_KIB as i64 {
        println!("soak: FAIL: resident memory grew by {growth} KiB after the warm-up");
        ok = false;
    }
    // Throughput is judged only on a machine that is not loaded by others
    // during the first or the last interval: beyond its cores, a spinning
    // barrier measures the other load, not the library.
    let cores = bsplib::available_processes() as f64;
    let loads = [
        marks[2] as f64 / 100.0,
        marks[marks.len() - 1] as f64 / 100.0,
    ];
    if loads.iter().any(|&l| l > cores) {
        println!(
            "soak: throughput not judged: load average {:.2} / {:.2} over {cores} cores",
            loads[0], loads[1]
        );
    } else if last < first / 2.0 {
        println!("soak: FAIL: throughput of the last interval is below half of the first's");
        ok = false;
    }
    Ok(ok)
}

fn main() {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut ok = true;
    for &engine in &o.engines {
        match run(&o, engine) {
            Ok(passed) => ok &= passed,
            Err(e) => {
                // One write: under a plain `mpirun` the lines of several ranks then
                // never break into each other.
                let line = format!("bsplib: {e}\n");
                eprint!("{line}");
                ok = false;
            }
        }
    }
    std::process::exit(if ok { 0 } else { 1 });
}
