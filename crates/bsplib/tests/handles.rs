//! One handle per process and run: the hidden front-door plumbing
//! (`bsplib::launch`, used by the C interface) cannot make a second handle
//! for a process, which would give its outgoing state two owners (two
//! handles sending from two threads corrupted memory). A regression test
//! of the one-protocol issue's first defect.

use bsplib::launch::Launch;
use bsplib::{Engine, ErrorKind};

#[test]
fn a_second_handle_for_a_process_is_refused() {
    let launch = Launch::new(Engine::Threads, 2, None).expect("a run of 2");
    let mut first = launch.attach(0).expect("the first handle of process 0");
    let second = launch.attach(0).err().expect("a second handle is refused");
    assert!(
        matches!(second.kind(), ErrorKind::Startup { detail } if detail.contains("process 0 has a handle already")),
        "{second}"
    );
    // From another thread too, while process 1 is attached once there.
    let launch2 = std::sync::Arc::clone(&launch);
    std::thread::spawn(move || {
        let mut one = launch2.attach(1).expect("the first handle of process 1");
        assert_eq!(one.bsp().pid(), 1);
        assert!(launch2.attach(0).is_err());
        assert!(launch2.attach(1).is_err());
    })
    .join()
    .expect("the other thread");
    assert!(launch.attach(1).is_err(), "process 1 was attached once");
    let missing = launch.attach(2).err().expect("no process 2");
    assert!(missing.to_string().contains("does not exist"), "{missing}");
    // The one handle still works.
    assert_eq!((first.bsp().pid(), first.bsp().nprocs()), (0, 2));
}

#[test]
fn the_serial_engine_has_one_handle_too() {
    let launch = Launch::new(Engine::Serial, 1, None).expect("a run of 1");
    let _one = launch.attach(0).expect("the handle");
    assert!(launch.attach(0).is_err());
}
