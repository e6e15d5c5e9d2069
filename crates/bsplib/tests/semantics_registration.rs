//! One test per registration rule of BSPlib (`bsp_push_reg` /
//! `bsp_pop_reg`: DRMA section of the paper, the `bsp_push_reg` manual
//! page), each run on every engine and process count.

mod common;
use common::*;

use std::ffi::c_void;

use bsplib::{Area, Error, ErrorKind};

/// Asserts that `e` is of the kind matched by `pat`, made by `call`.
macro_rules! assert_error {
    ($e:expr, $pat:pat, $call:expr) => {{
        let e: &Error = $e;
        assert!(matches!(e.kind(), $pat), "unexpected error kind: {e}");
        assert_eq!(e.call(), $call, "{e}");
    }};
}

#[test]
fn registration_takes_effect_at_next_sync() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u64>::new(bsp, 2);
            bsp.sync()?;
            bsp.push_reg(&x)?;
            bsp.put(right(bsp), &x, 0, &[1])?;
            bsp.sync()?;
            Ok(())
        },
        |_, e| {
            assert_error!(e, ErrorKind::NotRegistered { .. }, "bsp_put");
            assert_eq!(e.superstep(), 1, "{e}");
        },
    );
    // A second registration of an area does not shadow the first until
    // the sync: the older, larger extent applies meanwhile.
    scenario(|bsp| {
        let x = Area::<u64>::new(bsp, 2);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        bsp.push_reg_prefix(&x, 1)?;
        bsp.put(right(bsp), &x, 0, &[5, 6])?;
        bsp.sync()?;
        check_eq!(bsp, x.to_vec(bsp), vec![5, 6]);
        Ok(())
    });
}

#[test]
fn newer_registration_shadows_older() {
    // The extent of the newer slot is the one checked.
    expect_error(
        1,
        |bsp| {
            let a = Area::<u64>::new(bsp, 4);
            bsp.push_reg(&a)?;
            bsp.sync()?;
            bsp.push_reg_prefix(&a, 2)?;
            bsp.sync()?;
            bsp.put(right(bsp), &a, 2, &[1])?;
            bsp.sync()?;
            Ok(())
        },
        |_, e| {
            let extent = matches!(e.kind(), ErrorKind::OutOfBounds { extent: 16, .. });
            assert!(extent, "{e}");
        },
    );
    scenario(|bsp| {
        let (me, l, _) = ids(bsp);
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        // Within the newer extent transfers work; popping the newer slot
        // uncovers the older extent.
        let a = Area::<u64>::new(bsp, 4);
        bsp.push_reg(&a)?;
        bsp.sync()?;
        bsp.push_reg_prefix(&a, 2)?;
        bsp.sync()?;
        bsp.put(right(bsp), &a, 0, &[me, me + 1])?;
        bsp.sync()?;
        check_eq!(bsp, a.to_vec(bsp), vec![l, l + 1, 0, 0]);
        bsp.pop_reg(&a)?;
        bsp.sync()?;
        bsp.put(right(bsp), &a, 2, &[me + 7; 2])?;
        bsp.sync()?;
        check_eq!(bsp, a.to_vec(bsp), vec![l, l + 1, l + 7, l + 7]);
        // The slot gives the remote address: in a new slot, even processes
        // register `c` again, odd ones `d`. Even processes naming `c` reach
        // `c` on even and `d` on odd processes; odd ones naming `c` still
        // use the older slot (`c` everywhere).
        let c = Area::<u64>::new(bsp, p);
        let d = Area::<u64>::new(bsp, p);
        bsp.push_reg(&c)?;
        bsp.sync()?;
        bsp.push_reg(if pid % 2 == 0 { &c } else { &d })?;
        bsp.sync()?;
        for t in 0..p {
            bsp.put(t, &c, pid, &[me + 1])?;
        }
        bsp.sync()?;
        let (c, d) = (c.to_vec(bsp), d.to_vec(bsp));
        for s in 0..p {
            let v = s as u64 + 1;
            let want = if s % 2 == 0 && pid % 2 == 1 {
                (0, v)
            } else {
                (v, 0)
            };
            check_eq!(bsp, (c[s], d[s]), want);
        }
        Ok(())
    });
}

#[test]
fn pop_out_of_order() {
    scenario(|bsp| {
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        let [a, b, c] = [(); 3].map(|_| Area::<u64>::new(bsp, p));
        bsp.push_reg(&a)?;
        bsp.push_reg(&b)?;
        bsp.push_reg(&c)?;
        bsp.sync()?;
        // Pop the oldest slot while two newer ones are live.
        bsp.pop_reg(&a)?;
        bsp.sync()?;
        for t in 0..p {
            bsp.put(t, &b, pid, &[pid as u64 + 10])?;
            bsp.put(t, &c, pid, &[pid as u64 + 20])?;
        }
        bsp.sync()?;
        let want = |k: u64| (0..p as u64).map(|s| s + k).collect::<Vec<_>>();
        check_eq!(bsp, b.to_vec(bsp), want(10));
        check_eq!(bsp, c.to_vec(bsp), want(20));
        check_eq!(bsp, a.to_vec(bsp), vec![0; p]);
        // Now the newest; the middle one still works.
        bsp.pop_reg(&c)?;
        bsp.sync()?;
        for t in 0..p {
            bsp.put(t, &b, pid, &[pid as u64 + 30])?;
        }
        bsp.sync()?;
        check_eq!(bsp, b.to_vec(bsp), want(30));
        // Processes may name one slot by different local areas.
        let (d, e) = (Area::<u64>::new(bsp, 1), Area::<u64>::new(bsp, 1));
        bsp.push_reg(if pid % 2 == 0 { &d } else { &e })?;
        bsp.sync()?;
        bsp.pop_reg(if pid % 2 == 0 { &d } else { &e })?;
        bsp.pop_reg(&b)?;
        bsp.sync()?;
        Ok(())
    });
    // The popped slot is gone, the newer one stays.
    expect_error(
        1,
        |bsp| {
            let (a, b) = (Area::<u64>::new(bsp, 1), Area::<u64>::new(bsp, 1));
            bsp.push_reg(&a)?;
            bsp.push_reg(&b)?;
            bsp.sync()?;
            bsp.pop_reg(&a)?;
            bsp.sync()?;
            bsp.put(right(bsp), &b, 0, &[1])?;
            bsp.put(right(bsp), &a, 0, &[1])?;
            bsp.sync()?;
            Ok(())
        },
        |_, e| {
            assert_error!(e, ErrorKind::NotRegistered { .. }, "bsp_put");
            assert_eq!(e.superstep(), 2, "{e}");
        },
    );
}

#[test]
fn pop_takes_effect_at_next_sync() {
    // (That the slot is gone after the sync is checked by `errors.rs` and
    // by `pop_out_of_order`.)
    scenario(|bsp| {
        let (me, l, _) = ids(bsp);
        let x = Area::from_vec(bsp, vec![me, me + 50]);
        let y = Area::<u64>::new(bsp, 1);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        bsp.pop_reg(&x)?;
        bsp.put(right(bsp), &x, 0, &[me + 100])?;
        bsp.get(left(bsp), &x, 1, y.range(..1))?;
        bsp.sync()?;
        check_eq!(bsp, x.to_vec(bsp), vec![l + 100, me + 50]);
        check_eq!(bsp, y.as_slice(bsp)[0], l + 50);
        Ok(())
    });
}

#[test]
fn null_registration() {
    // Process 0 registers NULL; the others communicate through the slot
    // among themselves. (Transfers into process 0 through it are errors:
    // `errors.rs`.)
    scenario(|bsp| {
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        let x = Area::<u64>::new(bsp, p);
        if pid == 0 {
            bsp.push_reg_null()?;
        } else {
            bsp.push_reg(&x)?;
        }
        bsp.sync()?;
        if pid != 0 {
            for t in 1..p {
                bsp.put(t, &x, pid, &[pid as u64 * 3])?;
            }
        }
        bsp.sync()?;
        let want: Vec<u64> = (0..p as u64)
            .map(|s| if s == 0 || pid == 0 { 0 } else { s * 3 })
            .collect();
        check_eq!(bsp, x.to_vec(bsp), want);
        // Popping NULL here and x elsewhere names the same slot.
        if pid == 0 {
            bsp.pop_reg_null()?;
        } else {
            bsp.pop_reg(&x)?;
        }
        bsp.sync()?;
        // The tables still agree: a full registration works.
        bsp.push_reg(&x)?;
        bsp.sync()?;
        bsp.put(right(bsp), &x, 0, &[9])?;
        bsp.sync()?;
        check_eq!(bsp, x.as_slice(bsp)[0], 9);
        Ok(())
    });
}

#[test]
fn null_registrations_pop_out_of_order() {
    // Two modules register on process 0 only (NULL elsewhere); the older
    // registration is popped first. Each NULL pop takes part in the slot
    // process 0 names.
    scenario(|bsp| {
        let pid = bsp.pid();
        let a = Area::<u64>::new(bsp, 2);
        let b = Area::<u64>::new(bsp, 2);
        for area in [&a, &b] {
            if pid == 0 {
                bsp.push_reg(area)?;
            } else {
                bsp.push_reg_null()?;
            }
        }
        bsp.sync()?;
        if pid == 0 {
            bsp.pop_reg(&a)?;
        } else {
            bsp.pop_reg_null()?;
        }
        bsp.sync()?;
        // The slot of `b` is still live: a self-put through it lands. (A
        // put through `a` would now be an error, which stops the run.)
        if pid == 0 {
            bsp.put(0, &b, 1, &[5])?;
        }
        bsp.sync()?;
        check_eq!(
            bsp,
            b.to_vec(bsp),
            if pid == 0 { vec![0, 5] } else { vec![0, 0] }
        );
        // Pop the remaining slot alike.
        if pid == 0 {
            bsp.pop_reg(&b)?;
        } else {
            bsp.pop_reg_null()?;
        }
        bsp.sync()?;
        Ok(())
    });
}

#[test]
fn zero_size_registration() {
    // Half duplex: process 0 registers its areas with size 0 (a prefix of
    // `x`, and an empty area); it still puts and gets through the slots.
    scenario(|bsp| {
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        let x = Area::<u64>::from_vec(bsp, vec![pid as u64 + 40; 2]);
        let empty = Area::<u64>::new(bsp, 0);
        let got = Area::<u64>::new(bsp, p);
        if pid == 0 {
            bsp.push_reg_prefix(&x, 0)?;
            bsp.push_reg(&empty)?;
        } else {
            bsp.push_reg(&x)?;
            bsp.push_reg(&x)?;
        }
        bsp.sync()?;
        for t in (1..p).filter(|_| pid == 0) {
            bsp.put(t, &x, 0, &[555])?;
            bsp.put(t, &empty, 1, &[666])?;
            bsp.get(t, &x, 1, got.range(t..t + 1))?;
        }
        bsp.sync()?;
        if pid == 0 {
            let want: Vec<u64> = (0..p as u64)
                .map(|t| if t == 0 { 0 } else { t + 40 })
                .collect();
            check_eq!(bsp, got.to_vec(bsp), want);
            check_eq!(bsp, x.to_vec(bsp), vec![40, 40]);
        } else {
            check_eq!(bsp, x.to_vec(bsp), vec![555, 666]);
        }
        Ok(())
    });
    // ... but nothing can be put into it.
    expect_error(
        2,
        |bsp| {
            let x = Area::<u64>::new(bsp, 1);
            bsp.push_reg_prefix(&x, (bsp.pid() != 0) as usize)?;
            bsp.sync()?;
            if bsp.pid() == 1 {
                bsp.put(0, &x, 0, &[])?; // zero bytes: fine
                bsp.put(0, &x, 0, &[1])?;
            }
            bsp.sync()?;
            Ok(())
        },
        |_, e| {
            use ErrorKind::{OutOfBounds, RemoteNull};
            let refused = matches!(e.kind(), OutOfBounds { extent: 0, .. } | RemoteNull { .. });
            assert!(refused, "{e}");
            assert_eq!((e.pid(), e.call()), (1, "bsp_put"));
        },
    );
}

#[test]
fn empty_areas_are_distinct_registrations() {
    // Two different (empty) areas on process 0 are registered in two slots
    // against two different areas elsewhere: each names its own slot.
    scenario(|bsp| {
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        let (e1, e2) = (Area::<u64>::new(bsp, 0), Area::<u64>::new(bsp, 0));
        let (a1, a2) = (Area::<u64>::new(bsp, 1), Area::<u64>::new(bsp, 1));
        bsp.push_reg(if pid == 0 { &e1 } else { &a1 })?;
        bsp.push_reg(if pid == 0 { &e2 } else { &a2 })?;
        bsp.sync()?;
        for t in (1..p).filter(|_| pid == 0) {
            bsp.put(t, &e1, 0, &[7])?;
            bsp.put(t, &e2, 0, &[9])?;
        }
        bsp.sync()?;
        if pid != 0 {
            let got = (a1.as_slice(bsp)[0], a2.as_slice(bsp)[0]);
            check!(bsp, got == (7, 9), "(slot of e1, slot of e2) = {got:?}");
        }
        Ok(())
    });
}

#[test]
fn zero_byte_transfers_do_nothing() {
    scenario(|bsp| {
        let x = Area::<u64>::from_vec(bsp, vec![1, 2, 3]);
        let y = Area::<u64>::from_vec(bsp, vec![8, 9]);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let (r, none): (usize, &[u64]) = (right(bsp), &[]);
        bsp.put(r, &x, 0, none)?;
        bsp.put(r, &x, 3, none)?; // at the end of the extent
        bsp.get(r, &x, 0, y.range(..0))?;
        bsp.get(r, &x, 3, y.range(2..2))?;
        let px = x.as_slice(bsp).as_ptr() as *mut c_void;
        let py = y.as_slice(bsp).as_ptr() as *mut c_void;
        let r = r as i64;
        // SAFETY: zero-byte transfers read and write nothing.
        unsafe {
            bsp.hpput(r as usize, &x, 1, none)?;
            bsp.hpget(r as usize, &x, 1, y.range(1..1))?;
            bsp.raw().put(r, px, px, 0, 0)?;
            bsp.raw().hpput(r, px, px, 3, 0)?;
            bsp.raw().get(r, px, 0, py, 0)?;
            bsp.raw().hpget(r, px, 2, py, 0)?;
        }
        bsp.sync()?;
        check_eq!(bsp, x.to_vec(bsp), vec![1, 2, 3]);
        check_eq!(bsp, y.to_vec(bsp), vec![8, 9]);
        check_eq!(bsp, bsp.qsize(), (0, 0));
        Ok(())
    });
}
