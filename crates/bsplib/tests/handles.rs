//! One handle per process and run: the hidden front-door plumbing
//! (`bsplib::launch`, used by the C interface) cannot make a second handle
//! for a process, which would give its outgoing state two owners (two
//! handles sending from two threads corrupted memory). A regression test
//! of the one-protocol issue's first defect. The plumbing is `unsafe` to
//! call (its compile-fail doctests in `launch.rs` show safe code cannot);
//! these tests call it to see the check it makes itself.
//!
//! And one area per process and run: an `Area` kept from one run (in a
//! `thread_local`) and used with the handle of the next is an error of
//! every call that takes it, and a panic of its views.

use std::cell::RefCell;

use bsplib::launch::Launch;
use bsplib::{Area, Bsp, Engine, Error, ErrorKind, Runtime};

#[test]
fn a_second_handle_for_a_process_is_refused() {
    // SAFETY: the test breaks the one-attach rule on purpose (here and in
    // the next test), in the one case the library checks itself, a second
    // handle in one address space of a `threads` or `serial` run, to see it
    // refused: no handle is ever made twice, and nothing forks.
    let launch = unsafe { Launch::new(Engine::Threads, 2, None) }.expect("a run of 2");
    // SAFETY: as above.
    let mut first = unsafe { launch.attach(0) }.expect("the first handle of process 0");
    // SAFETY: as above.
    let second = unsafe { launch.attach(0) }
        .err()
        .expect("a second handle is refused");
    assert!(
        matches!(second.kind(), ErrorKind::Startup { detail } if detail.contains("process 0 has a handle already")),
        "{second}"
    );
    // From another thread too, while process 1 is attached once there.
    let launch2 = std::sync::Arc::clone(&launch);
    std::thread::spawn(move || {
        // SAFETY: as above.
        let mut one = unsafe { launch2.attach(1) }.expect("the first handle of process 1");
        assert_eq!(one.bsp().pid(), 1);
        // SAFETY: as above.
        assert!(unsafe { launch2.attach(0) }.is_err());
        // SAFETY: as above.
        assert!(unsafe { launch2.attach(1) }.is_err());
    })
    .join()
    .expect("the other thread");
    // SAFETY: as above.
    let again = unsafe { launch.attach(1) };
    assert!(again.is_err(), "process 1 was attached once");
    // SAFETY: as above.
    let missing = unsafe { launch.attach(2) }.err().expect("no process 2");
    assert!(missing.to_string().contains("does not exist"), "{missing}");
    // The one handle still works.
    assert_eq!((first.bsp().pid(), first.bsp().nprocs()), (0, 2));
}

#[test]
fn the_serial_engine_has_one_handle_too() {
    // SAFETY: as in the test above.
    let launch = unsafe { Launch::new(Engine::Serial, 1, None) }.expect("a run of 1");
    // SAFETY: as above.
    let _one = unsafe { launch.attach(0) }.expect("the handle");
    // SAFETY: as above.
    assert!(unsafe { launch.attach(0) }.is_err());
}

// ----- an `Area` and the handle of another run ------------------------------

thread_local! {
    /// An area kept from one run to the next: process 0 of `threads` and
    /// `serial` runs on the calling thread, so it finds it there.
    static STASH: RefCell<Option<Area<u64>>> = const { RefCell::new(None) };
}

/// Runs once to stash an area made by process 0, then again, giving that
/// area to `use_it` on process 0 of the second run (the others wait in a
/// sync); returns the second run's error.
fn use_in_next_run(
    engine: Engine,
    p: usize,
    use_it: impl Fn(&mut Bsp, Area<u64>) -> Result<(), Error> + Sync,
) -> Error {
    Runtime::new(p)
        .engine(engine)
        .run(|bsp| {
            let area = Area::from_vec(bsp, vec![7u64; 4]);
            // Registered in its own run: it was a real area there.
            bsp.push_reg(&area)?;
            bsp.sync()?;
            if bsp.pid() == 0 {
                STASH.with(|s| *s.borrow_mut() = Some(area));
            }
            Ok(())
        })
        .expect("the first run");
    Runtime::new(p)
        .engine(engine)
        .run(|bsp| {
            if bsp.pid() == 0 {
                let area = STASH
                    .with(|s| s.borrow_mut().take())
                    .expect("the stashed area");
                // An area of this run works beside it.
                let fresh = Area::<u64>::new(bsp, 4);
                bsp.push_reg(&fresh)?;
                use_it(bsp, area)?;
            } else {
                bsp.push_reg(&Area::<u64>::new(bsp, 4))?;
            }
            bsp.sync()
        })
        .expect_err("an area of another run is refused")
}

/// The run's error is `ForeignArea` from `call` on process 0, superstep 0.
fn assert_foreign(engine: Engine, err: &Error, call: &str) {
    match err.kind() {
        ErrorKind::ForeignArea {
            created_run,
            created_pid,
            run,
        } => {
            assert_eq!(*created_pid, 0, "{err}");
            assert!(created_run < run, "runs are numbered in order: {err}");
        }
        k => panic!(
            "{}: {call}: expected ForeignArea, got {k:?}: {err}",
            engine.name()
        ),
    }
    assert_eq!(
        (err.call(), err.pid(), err.superstep()),
        (call, 0, 0),
        "{}: {err}",
        engine.name()
    );
    assert!(
        err.to_string()
            .contains("an area belongs to the run that created it"),
        "{err}"
    );
    let loc = err.location().expect("the caller's location");
    assert!(loc.file().ends_with("handles.rs"), "{loc}");
}

/// The configurations: threads with two processes, and serial.
const ENGINES: [(Engine, usize); 2] = [(Engine::Threads, 2), (Engine::Serial, 1)];

#[test]
fn an_area_of_another_run_is_an_error_in_every_call_that_takes_one() {
    for (engine, p) in ENGINES {
        let e = use_in_next_run(engine, p, |bsp, a| bsp.push_reg(&a));
        assert_foreign(engine, &e, "bsp_push_reg");
        let e = use_in_next_run(engine, p, |bsp, a| bsp.push_reg_prefix(&a, 2));
        assert_foreign(engine, &e, "bsp_push_reg");
        let e = use_in_next_run(engine, p, |bsp, a| bsp.pop_reg(&a));
        assert_foreign(engine, &e, "bsp_pop_reg");
        // As the destination of a put, registered or not in this run.
        let e = use_in_next_run(engine, p, |bsp, a| bsp.put(0, &a, 0, &[1u64]));
        assert_foreign(engine, &e, "bsp_put");
        let e = use_in_next_run(engine, p, |bsp, a| {
            let src = [1u64];
            // SAFETY: refused before anything is queued; `src` outlives the
            // call anyway.
            unsafe { bsp.hpput(0, &a, 0, &src) }
        });
        assert_foreign(engine, &e, "bsp_hpput");
        // As the source or the destination of a get.
        let e = use_in_next_run(engine, p, |bsp, a| {
            let mine = Area::<u64>::new(bsp, 4);
            bsp.get(0, &a, 0, mine.range(..1))
        });
        assert_foreign(engine, &e, "bsp_get");
        let e = use_in_next_run(engine, p, |bsp, a| {
            let mine = Area::<u64>::new(bsp, 4);
            bsp.get(0, &mine, 0, a.range(..1))
        });
        assert_foreign(engine, &e, "bsp_get");
        let e = use_in_next_run(engine, p, |bsp, a| {
            let mine = Area::<u64>::new(bsp, 4);
            // SAFETY: refused before anything is queued.
            unsafe { bsp.hpget(0, &mine, 0, a.range(..1)) }
        });
        assert_foreign(engine, &e, "bsp_hpget");
    }
}

/// A use of an area's local view.
type View = fn(&Bsp, Area<u64>);

#[test]
fn the_views_of_an_area_of_another_run_panic_naming_both_runs() {
    for (engine, p) in ENGINES {
        let views: [(&str, View); 3] = [
            ("as_slice", |bsp, a| {
                let _ = a.as_slice(bsp)[0];
            }),
            ("as_mut_slice", |bsp, mut a| a.as_mut_slice(bsp)[0] = 1),
            ("to_vec", |bsp, a| drop(a.to_vec(bsp))),
        ];
        for (method, view) in views {
            let err = use_in_next_run(engine, p, |bsp, a| {
                view(bsp, a);
                Ok(())
            });
            let ErrorKind::Panicked { message } = err.kind() else {
                panic!("{}: {method}: expected a panic, got {err}", engine.name());
            };
            assert!(
                message.starts_with(&format!("Area::{method}: this area (4 elements at 0x"))
                    && message.contains("was created by process 0 of run ")
                    && message.contains("and is used with the handle of process 0 of run ")
                    && message.ends_with("an area belongs to the process and run that created it"),
                "{}: {message}",
                engine.name()
            );
            assert_eq!((err.pid(), err.superstep()), (0, 0), "{err}");
        }
    }
}

#[test]
fn an_area_of_this_run_still_works() {
    for (engine, p) in ENGINES {
        let got = Runtime::new(p)
            .engine(engine)
            .run(|bsp| {
                let mut a = Area::from_vec(bsp, vec![bsp.pid() as u64; 2]);
                bsp.push_reg(&a)?;
                bsp.sync()?;
                let right = (bsp.pid() + 1) % bsp.nprocs();
                bsp.put(right, &a, 1, &[10 + bsp.pid() as u64])?;
                bsp.sync()?;
                a.as_mut_slice(bsp)[0] += 100;
                bsp.pop_reg(&a)?;
                bsp.sync()?;
                Ok(a.to_vec(bsp))
            })
            .expect("an area used in its own run");
        let n = got.len() as u64;
        for (pid, v) in got.iter().enumerate() {
            let left = (pid as u64 + n - 1) % n;
            assert_eq!(v, &vec![100 + pid as u64, 10 + left], "{}", engine.name());
        }
    }
}
