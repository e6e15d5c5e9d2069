//! The clocked loops of the benchmark: a loop of barriers that every thread
//! leaves after the same iteration, once enough were timed or the time
//! budget ran out; and process 0's result of a run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A bounded loop looks at the clock every `CHECK` iterations (at least 2:
/// see [`bounded_loop`]).
const CHECK: u64 = 16;

// ----- the bounded loop ------------------------------------------------------

/// Runs `step` (which contains a barrier every thread passes) until `max`
/// iterations are done or the leader saw `budget` elapse; returns the number
/// of iterations and the leader's elapsed time.
///
/// Every thread must leave after the same iteration. The leader decides:
/// every `CHECK` iterations it stores `round + 1` into `stop` *before* the
/// barrier of that iteration, and everyone reads `stop` *after* it, so the
/// barrier orders the store before all the reads of that iteration. Reads of
/// earlier checks happened before the barrier of the iteration preceding the
/// store (that is why `CHECK >= 2`), so no one sees the store early. `round`
/// numbers the loops of one run; the stored value only grows.
pub(super) fn bounded_loop<E>(
    leader: bool,
    stop: &AtomicUsize,
    round: usize,
    max: u64,
    budget: Duration,
    mut step: impl FnMut() -> Result<(), E>,
) -> Result<(u64, Duration), E> {
    let t0 = Instant::now();
    let mut i = 0u64;
    loop {
        let check = i % CHECK == CHECK - 1;
        if leader && check && t0.elapsed() > budget {
            stop.store(round + 1, Ordering::Relaxed);
        }
        step()?;
        i += 1;
        if i >= max || (check && stop.load(Ordering::Relaxed) > round) {
            return Ok((i, t0.elapsed()));
        }
    }
}

/// Process 0's result.
pub(super) fn first<R>(results: Vec<R>) -> R {
    results.into_iter().next().expect("a run has process 0")
}
