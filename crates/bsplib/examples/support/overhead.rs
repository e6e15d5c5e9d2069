//! The loop both `profile_overhead` and `check_overhead` time: supersteps
//! of a few puts and a message on threads, with an optional layer off and
//! on, alternately. Arguments: supersteps, p, rounds.

use std::time::Instant;

use bsplib::{Area, Runtime};

/// One round: seconds per superstep of the slowest process, on the
/// runtime `setup` gives.
fn round(p: usize, steps: usize, setup: &dyn Fn(Runtime) -> Runtime) -> f64 {
    let times = setup(Runtime::new(p))
        .run(move |bsp| {
            let n = bsp.nprocs();
            let right = (bsp.pid() + 1) % n;
            let x = Area::<u64>::new(bsp, 8);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            let start = Instant::now();
            for s in 0..steps as u64 {
                bsp.put(right, &x, 0, &[s, s + 1])?;
                bsp.put(right, &x, 4, &[s])?;
                bsp.put(bsp.pid(), &x, 6, &[s])?;
                bsp.send(right, &[], &s.to_le_bytes())?;
                bsp.sync()?;
            }
            let t = start.elapsed().as_secs_f64();
            bsp.pop_reg(&x)?;
            bsp.sync()?;
            Ok(t)
        })
        .expect("the run");
    times.into_iter().fold(0.0, f64::max) / steps as f64
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}

/// Times the loop with `what` off (`Runtime::new`) and on (`on`), and
/// prints min and median of each and their ratio.
pub fn compare(what: &str, on: &dyn Fn(Runtime) -> Runtime) {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: supersteps p rounds"))
        .collect();
    let steps = args.first().copied().unwrap_or(20_000);
    let p = args.get(1).copied().unwrap_or(2);
    let rounds = args.get(2).copied().unwrap_or(7);
    let off = |r: Runtime| r;
    let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
    round(p, steps / 10, &off); // warm-up
    for _ in 0..rounds {
        t_off.push(round(p, steps, &off));
        t_on.push(round(p, steps, on));
    }
    let (off_min, off_med) = stats(t_off);
    let (on_min, on_med) = stats(t_on);
    println!(
        "threads, p = {p}, {steps} supersteps of 3 puts and a message, {rounds} rounds (off and on alternately)"
    );
    let label = |s: &str| format!("{what} {s}:");
    println!(
        "{:<15}{:8.1} ns/superstep min, {:8.1} median",
        label("off"),
        off_min * 1e9,
        off_med * 1e9
    );
    println!(
        "{:<15}{:8.1} ns/superstep min, {:8.1} median",
        label("on"),
        on_min * 1e9,
        on_med * 1e9
    );
    println!(
        "{:<15}{:8.3}x min, {:8.3}x median",
        "on / off:",
        on_min / off_min,
        on_med / off_med
    );
}
