//! The transport's point-to-point notifications (`World::notify` /
//! `World::wait_notified`, reached here through the hidden test hooks
//! `Raw::notify` / `Raw::wait_notified`), on every engine: counts are
//! exact per channel, a wait ends when the run fails elsewhere, and (where
//! there is one) at the run's deadline. The one-sided synchronisation of
//! the MPI-2 layer is built on them; the loom model of `engine/barrier.rs`
//! checks their memory ordering and wake-ups.

mod common;

use std::time::{Duration, Instant};

use bsplib::{Error, ErrorKind, Runtime};
use common::{configurations_with, expect_error, left, mpi_mode, right, scenario};

/// `Raw::wait_notified`, an `unsafe` test hook.
fn wait_notified(bsp: &bsplib::Bsp, ch: usize, target: u64) -> Result<(), Error> {
    // SAFETY: every wait of these tests is for notifications other
    // processes send, or ends with the run's failure or its deadline.
    unsafe { bsp.raw().wait_notified(ch, target) }
}

#[test]
fn notifications_are_counted_per_channel_and_process() {
    scenario(|bsp| {
        let (me, l) = (bsp.pid() as u64, left(bsp) as u64);
        for round in 1..=3u64 {
            // `pid + 1` notifications to the right on channel 1, one on
            // channel 3; the counts are cumulative over the run.
            for _ in 0..=me {
                bsp.raw().notify(right(bsp) as i64, 1)?;
            }
            bsp.raw().notify(right(bsp) as i64, 3)?;
            wait_notified(bsp, 1, round * (l + 1))?;
            wait_notified(bsp, 3, round)?;
            bsp.sync()?;
        }
        Ok(())
    });
}

#[test]
fn a_wait_ends_when_another_process_fails() {
    expect_error(
        2,
        |bsp| {
            if bsp.pid() == bsp.nprocs() - 1 {
                std::thread::sleep(Duration::from_millis(50));
                bsp.send(bsp.nprocs() + 1, &[], &[1])?;
            }
            // Nobody notifies channel 2.
            wait_notified(bsp, 2, 1)?;
            Ok(())
        },
        |n, e| {
            assert!(matches!(e.kind(), ErrorKind::PidOutOfRange { .. }), "{e}");
            assert_eq!((e.pid(), e.call()), (n - 1, "bsp_send"), "{e}");
        },
    );
}

#[test]
fn a_wait_for_a_notification_that_never_comes_ends_at_the_deadline() {
    if mpi_mode() {
        return; // on mpi a deadline ends the job: tests/deadline.rs
    }
    for (engine, p, _) in configurations_with(1) {
        let start = Instant::now();
        // SAFETY: as in `common::run_on`: the threads of the test harness
        // hold no lock a forked process takes.
        let r = unsafe {
            Runtime::new(p)
                .engine(engine)
                .deadline(Some(Duration::from_millis(300)))
                .fork_with_threads()
        }
        .run(|bsp| {
            wait_notified(bsp, 0, 1)?;
            Ok(())
        });
        let e: Error = r.expect_err("nobody notifies");
        assert!(
            matches!(e.kind(), ErrorKind::Deadline { .. }),
            "{} p={p}: {e}",
            engine.name()
        );
        assert_eq!(e.call(), "bsp_wait");
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{}",
            engine.name()
        );
    }
}

#[test]
fn a_channel_out_of_range_is_an_error() {
    expect_error(
        1,
        |bsp| {
            bsp.raw().notify(0, 4)?;
            Ok(())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::Overflow { .. }), "{e}");
            assert_eq!(e.call(), "bsp_notify");
        },
    );
}
