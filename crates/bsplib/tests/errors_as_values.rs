//! Errors are values on every engine: a failing run returns the same
//! `Err` (the original error: kind, process, superstep, call) on `serial`,
//! `threads`, `processes` and, under `mpirun` (CI's mpi step), on every
//! rank of `mpi`, where an error used to end the job from inside the call.
//!
//! The detailed error paths (`errors.rs`, `errors_collective.rs`) log
//! what each process saw in memory shared by forked processes, which MPI
//! ranks do not have; this file checks each kind of ending on every engine
//! from the run's returned error alone.

mod common;

use bsplib::{Area, Bsp, Error, ErrorKind};
use common::expect_error;

/// The last process: the one that misbehaves, so the pid is not just 0.
fn last(bsp: &Bsp) -> usize {
    bsp.nprocs() - 1
}

/// Checks the run's error: `kind` matches, and it names the last process,
/// `superstep` and `call`.
fn names(
    superstep: u64,
    call: &'static str,
    kind: fn(&ErrorKind) -> bool,
) -> impl Fn(usize, &Error) + Clone {
    move |n, e| {
        assert!(kind(e.kind()), "unexpected kind: {e}");
        assert_eq!(
            (e.pid(), e.superstep(), e.call()),
            (n - 1, superstep, call),
            "{e}"
        );
    }
}

#[test]
fn a_pid_out_of_range_is_returned_everywhere() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.put(bsp.nprocs() + 3, &x, 0, &[1])?;
            }
            bsp.sync()?;
            bsp.sync()?;
            Ok(())
        },
        names(1, "bsp_put", |k| {
            matches!(k, ErrorKind::PidOutOfRange { .. })
        }),
    );
}

#[test]
fn a_get_beyond_the_remote_area_is_returned_everywhere() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 2);
            let y = Area::<u32>::new(bsp, 8);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.get(0, &x, 1, y.range(..4))?;
            }
            bsp.sync()?;
            Ok(())
        },
        // A typed call speaks in elements, with the bytes in parentheses.
        names(1, "bsp_get", |k| {
            matches!(k, ErrorKind::OutOfBounds { elem: 4, .. })
                && k.to_string()
                    == "offset 1 + 4 elements = 5 exceeds the 2 elements registered on \
                        process 0 (bytes: 4 + 16 = 20 > 8)"
        }),
    );
}

#[test]
fn an_error_ignored_by_its_process_still_fails_the_run() {
    expect_error(
        1,
        |bsp| {
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                let ignored = bsp.send(bsp.nprocs(), &[], &[1, 2]);
                assert!(ignored.is_err());
                // The process carries on; its next sync fails at once.
                let next = bsp.sync();
                assert!(next.as_ref().is_err_and(Error::is_stopped), "{next:?}");
                return Ok(());
            }
            bsp.sync()?;
            bsp.sync()?;
            Ok(())
        },
        names(1, "bsp_send", |k| {
            matches!(k, ErrorKind::PidOutOfRange { .. })
        }),
    );
}

#[test]
fn a_panic_is_returned_everywhere() {
    expect_error(
        1,
        |bsp| {
            bsp.sync()?;
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                panic!("lost in superstep 2");
            }
            bsp.sync()?;
            Ok(())
        },
        names(
            2,
            "the SPMD function",
            |k| matches!(k, ErrorKind::Panicked { message } if message == "lost in superstep 2"),
        ),
    );
}

#[test]
fn an_abort_is_returned_everywhere() {
    expect_error(
        1,
        |bsp| {
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.abort("giving up");
            }
            bsp.sync()?;
            bsp.sync()?;
            Ok(())
        },
        names(
            1,
            "bsp_abort",
            |k| matches!(k, ErrorKind::Aborted { message } if message == "giving up"),
        ),
    );
}

#[test]
fn a_registration_mismatch_is_returned_everywhere() {
    expect_error(
        2,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            let y = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            if bsp.pid() == last(bsp) {
                bsp.push_reg(&y)?;
            }
            bsp.sync()?;
            Ok(())
        },
        move |n, e| {
            assert!(
                matches!(e.kind(), ErrorKind::RegistrationMismatch { .. }),
                "{e}"
            );
            assert_eq!((e.pid(), e.superstep()), (n - 1, 0), "{e}");
        },
    );
}

#[test]
fn a_tag_size_mismatch_is_returned_everywhere() {
    expect_error(
        2,
        |bsp| {
            bsp.set_tagsize(if bsp.pid() == last(bsp) { 8 } else { 4 })?;
            bsp.sync()?;
            Ok(())
        },
        move |n, e| {
            assert!(matches!(e.kind(), ErrorKind::TagSizeMismatch { .. }), "{e}");
            assert_eq!(
                (e.pid(), e.superstep(), e.call()),
                (n - 1, 0, "bsp_set_tagsize"),
                "{e}"
            );
        },
    );
}

#[test]
fn a_process_that_ends_while_others_sync_is_returned_everywhere() {
    expect_error(
        2,
        |bsp| {
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                return Ok(());
            }
            bsp.sync()?;
            Ok(())
        },
        move |n, e| {
            assert!(
                matches!(e.kind(), ErrorKind::ProcessEnded { ended } if *ended == n - 1),
                "{e}"
            );
            assert!(e.pid() < n - 1, "a waiting process reports it: {e}");
            assert_eq!((e.superstep(), e.call()), (1, "bsp_sync"), "{e}");
        },
    );
}

/// The same with data on its way to the process that ended: on `mpi` the
/// streams sent with barrier A (here 64 KiB of messages from each other
/// process, more than MPI sends eagerly) are taken and dropped by the
/// ended process, so that no sender waits for them (`engine/mpi/nbx.rs`).
#[test]
fn a_process_that_ends_while_others_send_it_data_is_returned_everywhere() {
    expect_error(
        2,
        |bsp| {
            bsp.sync()?;
            let to = last(bsp);
            if bsp.pid() == to {
                return Ok(());
            }
            for i in 0..4096u64 {
                bsp.send(to, &[], &i.to_ne_bytes())?;
            }
            bsp.sync()?;
            Ok(())
        },
        move |n, e| {
            assert!(
                matches!(e.kind(), ErrorKind::ProcessEnded { ended } if *ended == n - 1),
                "{e}"
            );
            assert_eq!((e.superstep(), e.call()), (1, "bsp_sync"), "{e}");
        },
    );
}
