//! The checking mode's cost (`Runtime::check`): a loop of supersteps, each
//! with a few puts and a message, run with checking off and on,
//! alternately (threads).
//!
//! ```text
//! cargo run --release --example check_overhead                 # 20000 supersteps, p = 2, 7 rounds
//! cargo run --release --example check_overhead -- 50000 4 9     # supersteps, p, rounds
//! ```
//!
//! Prints, for off and on, the time per superstep (min and median over
//! the rounds, each the slowest process's loop time) and their ratio.

use std::time::Instant;

use bsplib::{Area, Runtime};

/// One round: seconds per superstep of the slowest process.
fn round(p: usize, steps: usize, check: bool) -> f64 {
    let times = Runtime::new(p)
        .check(check)
        .run(move |bsp| {
            let n = bsp.nprocs();
            let right = (bsp.pid() + 1) % n;
            let x = Area::<u64>::new(bsp, 8);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            let start = Instant::now();
            for s in 0..steps as u64 {
                bsp.put(right, &[s, s + 1], &x, 0)?;
                bsp.put(right, &[s], &x, 4)?;
                bsp.put(bsp.pid(), &[s], &x, 6)?;
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

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: supersteps p rounds"))
        .collect();
    let steps = args.first().copied().unwrap_or(20_000);
    let p = args.get(1).copied().unwrap_or(2);
    let rounds = args.get(2).copied().unwrap_or(7);
    let (mut off, mut on) = (Vec::new(), Vec::new());
    round(p, steps / 10, false); // warm-up
    for _ in 0..rounds {
        off.push(round(p, steps, false));
        on.push(round(p, steps, true));
    }
    let (off_min, off_med) = stats(off);
    let (on_min, on_med) = stats(on);
    println!(
        "threads, p = {p}, {steps} supersteps of 3 puts and a message, {rounds} rounds (off and on alternately)"
    );
    println!(
        "checking off: {:8.1} ns/superstep min, {:8.1} median",
        off_min * 1e9,
        off_med * 1e9
    );
    println!(
        "checking on:  {:8.1} ns/superstep min, {:8.1} median",
        on_min * 1e9,
        on_med * 1e9
    );
    println!(
        "on / off:     {:8.3}x min, {:8.3}x median",
        on_min / off_min,
        on_med / off_med
    );
}
