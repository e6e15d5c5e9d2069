//! Model checks of the barrier and stop protocol:
//! `RUSTFLAGS="--cfg loom" cargo test -p bsplib --lib --release loom`.
use super::*;
use loom::sync::Arc;
use loom::thread;

/// Data written before a barrier is seen after it, flags are reduced,
/// and the barrier can be reused (two episodes).
#[test]
fn loom_barrier_publishes_and_reduces() {
    loom::model(|| {
        let mut k = 0;
        let b = Arc::new(Barrier::new(2));
        let data = Arc::new(AtomicUsize::new(0));
        let (b2, d2) = (b.clone(), data.clone());
        let t = thread::spawn(move || {
            let mut k = 0;
            d2.store(7, Ordering::Relaxed);
            let all = b2.wait(&mut k, 1).unwrap();
            assert_eq!(all, 3);
            b2.wait(&mut k, 0).unwrap();
        });
        let all = b.wait(&mut k, 2).unwrap();
        assert_eq!(all, 3);
        assert_eq!(data.load(Ordering::Relaxed), 7);
        assert_eq!(b.wait(&mut k, 0).unwrap(), 0);
        t.join().unwrap();
    });
}

/// Three processes: every one leaves with the OR of all flags, and the
/// parked ones are woken.
#[test]
fn loom_three_processes_reduce() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let mut k = 0;
        let b = Arc::new(Barrier::new(3));
        let ts: Vec<_> = [1u32, 2]
            .into_iter()
            .map(|f| {
                let b = b.clone();
                thread::spawn(move || b.wait(&mut 0, f).unwrap())
            })
            .collect();
        assert_eq!(b.wait(&mut k, 4).unwrap(), 7);
        for t in ts {
            assert_eq!(t.join().unwrap(), 7);
        }
    });
}

/// Flags of one episode never leak into another, across the reuse of
/// the three accumulators.
#[test]
fn loom_flags_stay_in_their_episode() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(|| {
        let mut k = 0;
        let b = Arc::new(Barrier::new(2));
        let b2 = b.clone();
        let t = thread::spawn(move || {
            let mut k = 0;
            let got: Vec<u32> = [1, 0, 0, 2]
                .into_iter()
                .map(|f| b2.wait(&mut k, f).unwrap())
                .collect();
            assert_eq!(got, [1, 0, 4, 2]);
        });
        let got: Vec<u32> = [0, 0, 4, 0]
            .into_iter()
            .map(|f| b.wait(&mut k, f).unwrap())
            .collect();
        assert_eq!(got, [1, 0, 4, 2]);
        t.join().unwrap();
    });
}

/// A stop while another process waits ends the wait: no hang.
#[test]
fn loom_stop_interrupts_waiter() {
    loom::model(|| {
        let b = Arc::new(Barrier::new(2));
        let b2 = b.clone();
        let t = thread::spawn(move || b2.wait(&mut 0, 0));
        b.stop();
        assert_eq!(t.join().unwrap(), Err(Interrupt::Stopped));
    });
}

/// A stop right after a barrier completes does not fail a slower
/// waiter of that barrier; its next wait fails.
#[test]
fn loom_stop_after_barrier_is_seen_at_the_next() {
    loom::model(|| {
        let mut k = 0;
        let b = Arc::new(Barrier::new(2));
        let b2 = b.clone();
        let t = thread::spawn(move || {
            let mut k = 0;
            b2.wait(&mut k, 0).unwrap();
            b2.stop();
        });
        assert_eq!(b.wait(&mut k, 0), Ok(0));
        assert_eq!(b.wait(&mut k, 0), Err(Interrupt::Stopped));
        t.join().unwrap();
    });
}

/// A process that ends right after a barrier does not make a slower
/// waiter of that barrier fail; one that ends before arriving does.
#[test]
fn loom_end_after_barrier_is_not_an_error() {
    loom::model(|| {
        let mut k = 0;
        let b = Arc::new(Barrier::new(2));
        let b2 = b.clone();
        let t = thread::spawn(move || {
            let mut k = 0;
            b2.wait(&mut k, 0).unwrap();
            b2.ended(1);
        });
        assert_eq!(b.wait(&mut k, 0), Ok(0));
        assert_eq!(b.wait(&mut k, 0), Err(Interrupt::Ended(1)));
        t.join().unwrap();
    });
}

/// A stop racing with the last arrival: every waiter either completes
/// or is stopped, none hangs.
#[test]
fn loom_stop_racing_the_last_arrival_never_hangs() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let b = Arc::new(Barrier::new(2));
        let b2 = b.clone();
        let t = thread::spawn(move || b2.wait(&mut 0, 0));
        let b3 = b.clone();
        let s = thread::spawn(move || b3.stop());
        let mine = b.wait(&mut 0, 0);
        let theirs = t.join().unwrap();
        s.join().unwrap();
        for r in [mine, theirs] {
            assert!(matches!(r, Ok(0) | Err(Interrupt::Stopped)), "{r:?}");
        }
    });
}

/// A notification publishes what was written before it, and wakes a
/// waiter however the two interleave (spinning, or parked).
#[test]
fn loom_bell_publishes_and_wakes() {
    loom::model(|| {
        let b = Arc::new(Barrier::new(2));
        let bell = Arc::new(AtomicU64::new(0));
        let data = Arc::new(AtomicUsize::new(0));
        let (b2, bell2, d2) = (b.clone(), bell.clone(), data.clone());
        let t = thread::spawn(move || {
            d2.store(7, Ordering::Relaxed);
            b2.ring(&bell2);
            b2.ring(&bell2);
        });
        b.await_bell(&bell, 2).unwrap();
        assert_eq!(data.load(Ordering::Relaxed), 7);
        t.join().unwrap();
    });
}

/// A stop ends a wait for a notification that never comes.
#[test]
fn loom_stop_interrupts_a_bell_wait() {
    loom::model(|| {
        let b = Arc::new(Barrier::new(2));
        let bell = Arc::new(AtomicU64::new(0));
        let b2 = b.clone();
        let t = thread::spawn(move || b2.stop());
        assert_eq!(b.await_bell(&bell, 1), Err(Interrupt::Stopped));
        t.join().unwrap();
    });
}

/// The dispatching barrier: a waiter in `wait_polling` sees a record
/// posted (data, then a ring) by a process that waits for the answer
/// before it arrives; it answers from inside its poll, and both leave.
/// However the ring and the waiter's parking interleave, no wake-up is
/// lost (the waiter sets the bell's sleep bit as well as the
/// barrier's).
#[test]
fn loom_polling_barrier_answers_and_wakes() {
    loom::model(|| {
        let b = Arc::new(Barrier::new(2));
        // The waiter's bell and the asker's (for the answer).
        let bells = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let question = Arc::new(AtomicUsize::new(0));
        let (b2, bells2, q2) = (b.clone(), bells.clone(), question.clone());
        let t = thread::spawn(move || {
            q2.store(7, Ordering::Relaxed);
            b2.ring(&bells2[0]);
            // Wait for the answer, then arrive.
            b2.await_bell(&bells2[1], 1).unwrap();
            b2.wait(&mut 0, 0).unwrap();
        });
        let mut answered = false;
        let mut k = 0;
        b.wait_polling(&mut k, 0, &bells[0], &mut || {
            if !answered && question.load(Ordering::Relaxed) == 7 {
                answered = true;
                b.ring(&bells[1]);
            }
            false
        })
        .unwrap();
        assert!(answered);
        t.join().unwrap();
    });
}
