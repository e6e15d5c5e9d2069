//! The lock word of a window block (shared memory engines): bit 63 a
//! writer, the bits below the readers. No queue.

use std::sync::atomic::{AtomicU64, Ordering};

use super::WRITER;

/// One attempt at the lock; true if taken.
pub(super) fn try_lock(word: &AtomicU64, exclusive: bool) -> bool {
    if exclusive {
        return word
            .compare_exchange_weak(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
    }
    if word.load(Ordering::Relaxed) & WRITER != 0 {
        return false;
    }
    enter(word) || {
        back_out(word);
        false
    }
}

/// A reader's increment; true if no writer held the lock.
pub(super) fn enter(word: &AtomicU64) -> bool {
    word.fetch_add(1, Ordering::Acquire) & WRITER == 0
}

/// A reader that found a writer takes its increment back.
pub(super) fn back_out(word: &AtomicU64) {
    word.fetch_sub(1, Ordering::Relaxed);
}

/// Releases what [`try_lock`] took. A subtraction, not a store of 0,
/// for the writer too: a reader that found the writer bit may have
/// added its 1 meanwhile, and takes it back itself ([`back_out`]).
pub(super) fn unlock(word: &AtomicU64, exclusive: bool) {
    word.fetch_sub(if exclusive { WRITER } else { 1 }, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_readers_passing_increment_survives_the_writers_release() {
        let w = AtomicU64::new(0);
        assert!(try_lock(&w, true));
        // A reader saw the word free just before the writer took it,
        // and adds its 1 now.
        assert!(!enter(&w));
        unlock(&w, true);
        back_out(&w);
        assert_eq!(w.load(Ordering::Relaxed), 0, "the word is free again");
        assert!(try_lock(&w, false) && try_lock(&w, false));
        assert!(!try_lock(&w, true), "readers hold it");
        unlock(&w, false);
        unlock(&w, false);
        assert!(try_lock(&w, true));
        assert!(!try_lock(&w, false) && !try_lock(&w, true));
    }
}
