//! The profiler's cost: a loop of supersteps, each with a few puts and a
//! message, run with the profiler off and on, alternately (threads).
//!
//! ```text
//! cargo run --release --example profile_overhead                 # 20000 supersteps, p = 2, 7 rounds
//! cargo run --release --example profile_overhead -- 50000 4 9     # supersteps, p, rounds
//! ```
//!
//! Prints, for off and on, the time per superstep (min and median over
//! the rounds, each the slowest process's loop time) and their ratio. The
//! profile files are written after the timed loop (at the end of each
//! process) into a temporary directory, removed at the end.

#[path = "support/overhead.rs"]
mod overhead;

fn main() {
    let dir = std::env::temp_dir().join(format!("bsplib-profile-overhead-{}", std::process::id()));
    let d = dir.clone();
    overhead::compare("profiler", &move |r| r.profile(Some(d.clone())));
    let _ = std::fs::remove_dir_all(&dir);
}
