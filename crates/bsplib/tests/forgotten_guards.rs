//! Soundness by state (`src/ONE_SIDED.md`, section 10): every window
//! lock, view and epoch is counted in the process when it opens, so a
//! guard forgotten with `mem::forget` (safe Rust) cannot open a race or a
//! hang: the calls that would race with it or wait for it refuse, naming
//! the call and line that opened it. Each guard kind is forgotten, then
//! each call that must refuse is made, on every engine.

mod common;

use bsplib::{Bsp, Error, ErrorKind, LockKind, Window};
use common::expect_error;

/// The guards a program can forget.
#[derive(Clone, Copy, Debug)]
enum Guard {
    /// An exclusive lock of the next process's memory.
    RemoteExclusive,
    /// A shared lock of the next process's memory.
    RemoteShared,
    /// An exclusive lock of one's own memory.
    OwnExclusive,
    /// A read view of one's own memory.
    Local,
    /// A read-write view of one's own memory.
    LocalMut,
    /// An epoch exposing one's memory to the previous process.
    Exposure,
    /// An epoch accessing the next process's memory (which posts to us).
    Access,
}

/// What is done after the guard is forgotten.
#[derive(Clone, Copy, Debug)]
enum Then {
    Sync,
    End,
    Free,
    Local,
    LocalMut,
    LockNext,
    LockOwn,
    Epoch,
}

/// The opening call of each guard, as errors name it.
fn opener(g: Guard) -> &'static str {
    match g {
        Guard::RemoteExclusive | Guard::RemoteShared | Guard::OwnExclusive => "Window::lock",
        Guard::Local => "Window::local",
        Guard::LocalMut => "Window::local_mut",
        Guard::Exposure | Guard::Access => "Window::epoch",
    }
}

/// Process 0 forgets a guard `g` of a window, then does `then`; process 1
/// posts what process 0's access epoch needs; the others sync. The
/// run must fail at process 0 with `EpochOpen` from `call`, naming the
/// opener and its line in this file.
fn forget_then(g: Guard, then: Then, call: &'static str) {
    expect_error(
        2,
        move |bsp: &mut Bsp| {
            let (me, p) = (bsp.pid(), bsp.nprocs());
            let next = (me + 1) % p;
            let mut w = Window::<u64>::new(bsp, 4)?;
            if me != 0 {
                if matches!(g, Guard::Access) && me == 1 {
                    // Process 0's access epoch needs this post; the wait
                    // ends when the run stops (process 0 never completes).
                    w.epoch(bsp, &[0], &[])?.wait()?;
                }
                return bsp.sync();
            }
            match g {
                Guard::RemoteExclusive => {
                    std::mem::forget(w.lock(bsp, next, LockKind::Exclusive)?)
                }
                Guard::RemoteShared => std::mem::forget(w.lock(bsp, next, LockKind::Shared)?),
                Guard::OwnExclusive => std::mem::forget(w.lock(bsp, me, LockKind::Exclusive)?),
                Guard::Local => std::mem::forget(w.local(bsp)?),
                Guard::LocalMut => std::mem::forget(w.local_mut(bsp)?),
                Guard::Exposure => std::mem::forget(w.epoch(bsp, &[next], &[])?),
                Guard::Access => std::mem::forget(w.epoch(bsp, &[], &[next])?),
            }
            act(bsp, w, then, next)
        },
        move |_, e: &Error| {
            assert!(
                matches!(e.kind(), ErrorKind::EpochOpen { .. }),
                "{g:?} then {then:?}: {e}"
            );
            assert_eq!(e.pid(), 0, "{g:?} then {then:?}: {e}");
            assert_eq!(e.call(), call, "{g:?} then {then:?}: {e}");
            let text = e.to_string();
            assert!(
                text.contains(opener(g)) && text.contains("forgotten_guards.rs"),
                "{g:?} then {then:?}: the error names the opener and its line: {e}"
            );
        },
    );
}

/// Does `then` with window `w`.
fn act(bsp: &mut Bsp, mut w: Window<u64>, then: Then, next: usize) -> Result<(), Error> {
    let me = bsp.pid();
    match then {
        Then::Sync => bsp.sync(),
        Then::End => Ok(()),
        Then::Free => w.free(bsp),
        Then::Local => w.local(bsp).map(drop),
        Then::LocalMut => w.local_mut(bsp).map(drop),
        Then::LockNext => w.lock(bsp, next, LockKind::Exclusive).map(drop),
        Then::LockOwn => w.lock(bsp, me, LockKind::Shared).map(drop),
        Then::Epoch => {
            let e = w.epoch(bsp, &[next], &[next])?;
            drop(e);
            Ok(())
        }
    }
}

const ALL: [Guard; 7] = [
    Guard::RemoteExclusive,
    Guard::RemoteShared,
    Guard::OwnExclusive,
    Guard::Local,
    Guard::LocalMut,
    Guard::Exposure,
    Guard::Access,
];

#[test]
fn every_forgotten_guard_fails_the_sync_naming_its_opener() {
    for g in ALL {
        forget_then(g, Then::Sync, "bsp_sync");
    }
}

#[test]
fn every_forgotten_guard_fails_the_end_of_the_process() {
    for g in ALL {
        forget_then(g, Then::End, "the end of the SPMD function");
    }
}

#[test]
fn every_forgotten_guard_fails_the_windows_release() {
    for g in ALL {
        forget_then(g, Then::Free, "Window::free");
    }
}

#[test]
fn a_second_lock_after_a_forgotten_lock_or_view_is_refused_not_a_hang() {
    for g in [
        Guard::RemoteExclusive,
        Guard::RemoteShared,
        Guard::OwnExclusive,
        Guard::Local,
        Guard::LocalMut,
    ] {
        forget_then(g, Then::LockNext, "Window::lock");
        forget_then(g, Then::LockOwn, "Window::lock");
    }
}

#[test]
fn a_lock_inside_an_access_epoch_to_the_same_target_is_an_error() {
    forget_then(Guard::Access, Then::LockNext, "Window::lock");
}

#[test]
fn a_view_of_exposed_or_locked_memory_is_refused_not_a_race() {
    // Exposed to an origin: the origin may be writing it.
    forget_then(Guard::Exposure, Then::Local, "Window::local");
    forget_then(Guard::Exposure, Then::LocalMut, "Window::local_mut");
    // Locked by this process itself (exclusive): a view would wait for
    // ever on its own lock.
    forget_then(Guard::OwnExclusive, Then::Local, "Window::local");
    forget_then(Guard::OwnExclusive, Then::LocalMut, "Window::local_mut");
    // A read view held: a read-write view would race with it.
    forget_then(Guard::Local, Then::LocalMut, "Window::local_mut");
    // A read-write view held: any other view would race with it.
    forget_then(Guard::LocalMut, Then::Local, "Window::local");
    forget_then(Guard::LocalMut, Then::LocalMut, "Window::local_mut");
}

#[test]
fn a_new_epoch_after_a_forgotten_one_or_a_forgotten_lock_is_refused() {
    for g in ALL {
        forget_then(g, Then::Epoch, "Window::epoch");
    }
}

#[test]
fn two_read_views_at_once_share_one_lock_on_every_engine() {
    common::scenario(|bsp| {
        let me = bsp.pid();
        let mut w = Window::<u32>::new(bsp, 2)?;
        w.local_mut(bsp)?.copy_from_slice(&[me as u32, 5]);
        {
            let a = w.local(bsp)?;
            let b = w.local(bsp)?;
            check_eq!(bsp, (a[0], b[1]), (me as u32, 5));
        }
        // Both released: a read-write view is possible again, and remote
        // writers are not held back.
        w.local_mut(bsp)?[1] = 6;
        bsp.sync()?;
        let next = (me + 1) % bsp.nprocs();
        let mut got = [0u32; 2];
        w.lock(bsp, next, LockKind::Shared)?.get(0, &mut got)?;
        check_eq!(bsp, got, [next as u32, 6]);
        bsp.sync()?;
        w.free(bsp)
    });
}

#[test]
fn a_forgotten_read_view_still_admits_a_second_read_view() {
    // Reading twice is never a race: the second view shares the lock the
    // forgotten one holds; the sync then reports the forgotten view.
    expect_error(
        1,
        |bsp| {
            let w = Window::<u32>::new(bsp, 1)?;
            std::mem::forget(w.local(bsp)?);
            let v = w.local(bsp)?[0];
            assert_eq!(v, 0);
            bsp.sync()
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::EpochOpen { .. }), "{e}");
            assert!(e.to_string().contains("1 read view(s)"), "{e}");
            assert_eq!(e.call(), "bsp_sync");
        },
    );
}
