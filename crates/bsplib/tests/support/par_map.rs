//! `par_map`, shared by the test harnesses that run many child processes
//! at once (`bsplib`'s `faults.rs`, `bsplib-c`'s `tests/harness`), which
//! include this file with `#[path]`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;

/// Threads that run jobs at once: the machine's two cores.
pub const WORKERS: usize = 2;

/// `f` over `items` on [`WORKERS`] threads; results in the order of `items`.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                *results[i].lock().unwrap() = Some(f(item));
            });
        }
    });
    results
        .into_iter()
        .map(|m| m.into_inner().unwrap().expect("every item is done"))
        .collect()
}
