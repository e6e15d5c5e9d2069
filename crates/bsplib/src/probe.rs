//! The machine probe (issue 15): measures the BSP parameters g, l, n½ and
//! s of an engine at p processes the way Bisseling's `bspbench` does,
//! stores them per machine, and gives them to programs
//! ([`Bsp::machine`](crate::Bsp::machine), C's `bsp_g()`, `bsp_l()`, `bsp_s()`,
//! `bsp_nhalf()`).
//!
//! # The parameters and their units
//!
//! All times are in **seconds**, all lengths in **bytes** (`bspbench`
//! gives g and l in flops; divide by [`Machine::s`] to compare):
//!
//! - **l** (seconds): the cost of a superstep, the intercept of the
//!   least-squares fit `T(h) = l + g_word·h` over h-relations of single
//!   8-byte words (`bspbench`'s: every process puts `h` words, one `put`
//!   each, spread cyclically over the others, then syncs).
//! - **g** (seconds per byte): the *asymptotic* cost of a byte, the slope
//!   of the same fit over h-relations of large puts (every process puts
//!   `h` bytes as one put to each other process, 16 KiB to 1 MiB each, 4
//!   MiB in the full probe: beyond the caches, as large collectives are).
//! - **n½** (bytes, Oxford's `bsp_nhalf`): the message length at which
//!   half the asymptotic bandwidth is reached. In the model a put of `n`
//!   bytes costs `g·(n + n½)`, so `n½ = 8·(g_word/g − 1)` with `g_word`
//!   the slope per byte of the single-word fit. An h-relation of `h`
//!   bytes in `k` puts costs `g·(h + k·n½) + l`.
//! - **s** (flop/s): the rate of a DAXPY (`y += a·x`, 1024 doubles, in
//!   cache) on process 0 while every process runs one: a stand-in for
//!   Oxford's `bsp_s`, which they gave in Mflop/s.
//!
//! # Where they are kept
//!
//! [`store_path`]: the file named by `$BSPLIB_MACHINE` if set, else
//! `$XDG_CACHE_HOME/bsplib/machine.json`, else
//! `$HOME/.cache/bsplib/machine.json`. One entry per (host name, bsplib
//! version, engine, p); saving a measurement replaces the entry of the
//! same key. A program reads the entry of its own host, version, engine
//! and p ([`Machine::for_run`]); without one, [`Machine::defaults`].
//!
//! # Examples
//!
//! ```
//! use bsplib::probe::{self, Options};
//! use bsplib::{Engine, Runtime};
//! let m = probe::measure(&Runtime::new(2).engine(Engine::Threads), &Options::quick())?;
//! assert!(m.machine.g > 0.0 && m.machine.l > 0.0 && m.machine.l < 1.0);
//! # Ok::<(), bsplib::Error>(())
//! ```

mod measurement;

pub use crate::machine::{
    hostname, load, load_from, save, save_to, store_path, Machine, Measurement, Source,
};
pub use measurement::{measure, measure_in, Options};

/// The machine's 1-minute load average (the first field of
/// `/proc/loadavg`; `BSPLIB_LOADAVG` replaces it, for tests), `None` if
/// it cannot be read. A measurement is the run's own only when the load
/// leaves its processes cores to themselves: `bspprobe` and `bsprun
/// --profile` warn by it, and every profile records it.
///
/// # Examples
///
/// ```
/// if let Some(load) = bsplib::probe::load_average() {
///     assert!(load >= 0.0);
/// }
/// ```
pub fn load_average() -> Option<f64> {
    crate::engine::load_average()
}
