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

#[path = "support/overhead.rs"]
mod overhead;

fn main() {
    overhead::compare("checking", &|r| r.check(true));
}
