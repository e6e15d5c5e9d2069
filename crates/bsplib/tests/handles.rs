//! One handle per process and run: the hidden front-door plumbing
//! (`bsplib::launch`, used by the C interface) cannot make a second handle
//! for a process, which would give its outgoing state two owners (two
//! handles sending from two threads corrupted memory). A regression test
//! of the one-protocol issue's first defect. The plumbing is `unsafe` to
//! call (its compile-fail doctests in `launch.rs` show safe code cannot);
//! these tests call it to see the check it makes itself.

use bsplib::launch::Launch;
use bsplib::{Engine, ErrorKind};

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
