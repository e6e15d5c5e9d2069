//! The checking mode (`Runtime::check`, `BSPLIB_CHECK=1`): each seeded
//! defect is found on every engine of the harness (serial where it
//! applies, threads, processes; mpi under `mpirun`), naming the processes,
//! the superstep and the lines; correct programs, collectives called at
//! different lines among them, pass silently.

// The same call on two lines is what check-syncs tells apart.
#![allow(clippy::if_same_then_else)]

mod common;

use bsplib::{Area, Bsp, Error, ErrorKind, Strided};
use common::*;

/// Runs `spmd` with checking on every configuration with at least `min_p`
/// processes, expecting an error; `verify` checks it.
fn expect_finding<F, V>(min_p: usize, spmd: F, verify: V)
where
    F: Fn(&mut Bsp) -> Result<(), Error> + Sync + Send + Clone + 'static,
    V: Fn(usize, &Error),
{
    if mpi_mode()
        && bsplib::Runtime::new(usize::MAX)
            .engine(bsplib::Engine::Mpi)
            .nprocs()
            < min_p
    {
        return;
    }
    for (engine, p, n) in configurations_with(min_p) {
        let err = match run_checking(engine, p, true, spmd.clone()) {
            Ok(_) => panic!("{} p={p}: the check found nothing", engine.name()),
            Err(e) => e,
        };
        assert!(!err.is_stopped(), "{} p={p}: {err}", engine.name());
        verify(n, &err);
    }
}

/// Runs `spmd` with checking on every configuration: it must pass.
fn silent<F>(spmd: F)
where
    F: Fn(&mut Bsp) -> Result<(), Error> + Sync + Send + Clone + 'static,
{
    for (engine, p) in configurations() {
        run_checking(engine, p, true, spmd.clone())
            .unwrap_or_else(|e| panic!("{} p={p}: checking found {e}", engine.name()));
    }
}

fn here(line: u32) -> String {
    format!("{}:{line}", file!())
}

// ----- check-syncs --------------------------------------------------------------

#[test]
fn syncs_at_different_lines_are_reported() {
    expect_finding(
        2,
        |bsp| {
            bsp.sync()?; // a superstep everyone ends alike
            if bsp.pid() == bsp.nprocs() - 1 {
                bsp.sync()?; // LAST
            } else {
                bsp.sync()?; // OTHERS
            }
            bsp.sync()
        },
        |n, err| match err.kind() {
            ErrorKind::SyncMismatch { syncs } => {
                let src = include_str!("checking.rs");
                let line = |tag: &str| {
                    1 + src
                        .lines()
                        .position(|l| l.contains(tag) && l.contains("bsp.sync()?;"))
                        .unwrap() as u32
                };
                assert_eq!(err.superstep(), 1, "{err}");
                assert_eq!(err.call(), "bsp_sync");
                let others = here(line("// OTHERS"));
                let last = here(line("// LAST"));
                // Every process compares; the names agree whoever reports.
                for (pid, at) in syncs.iter() {
                    let want = if *pid == n - 1 { &last } else { &others };
                    assert_eq!(at, want, "{err}");
                }
                assert_ne!(syncs[0].0, syncs[1].0);
                assert!(syncs.iter().any(|s| s.0 == n - 1), "{err}");
            }
            k => panic!("expected SyncMismatch, got {k:?}: {err}"),
        },
    );
}

#[test]
fn syncs_in_a_helper_and_collectives_at_different_lines_are_silent() {
    fn step(bsp: &mut Bsp) -> Result<(), Error> {
        bsp.sync() // one line, whoever calls
    }
    silent(|bsp| {
        let x = Area::<u64>::new(bsp, 4);
        bsp.push_reg(&x)?;
        step(bsp)?;
        // Collectives end supersteps at their own call sites, which may
        // differ: they are checked by their descriptors, not their lines.
        let mut v = [bsp.pid() as u64; 3];
        if bsp.pid() == 0 {
            v = [7; 3];
            bsp.collectives().broadcast(0, &mut v)?;
        } else {
            bsp.collectives().broadcast(0, &mut v)?;
        }
        check_eq!(bsp, v, [7; 3]);
        let me = bsp.pid() as u32;
        let all = if me % 2 == 0 {
            bsp.collectives().all_gather(&[me; 5000])?
        } else {
            bsp.collectives().all_gather(&[me; 5000])?
        };
        check_eq!(bsp, all.len(), 5000 * bsp.nprocs());
        let got = if bsp.pid() == 0 {
            bsp.collectives().gather(0, &[1u8; 70000])?
        } else {
            bsp.collectives().gather(0, &[1u8; 70000])?
        };
        check_eq!(bsp, got.is_some(), bsp.pid() == 0);
        step(bsp)
    });
}

#[test]
fn puts_that_do_not_overlap_are_silent() {
    silent(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        // Every process writes its own element of every process's area;
        // column `me` of a p x p matrix by strided blocks; and twice the
        // same bytes itself (one process's puts land in call order).
        let x = Area::<u64>::new(bsp, p);
        let m = Area::<u32>::new(bsp, p * p);
        bsp.push_reg(&x)?;
        bsp.push_reg(&m)?;
        bsp.sync()?;
        let col = vec![me as u32; p];
        for t in 0..p {
            bsp.put(t, &x, me, &[me as u64])?;
            bsp.put_strided(
                t,
                &m,
                Strided::column(me, p, p),
                &col,
                Strided::contiguous(0, p),
            )?;
        }
        bsp.put(me, &x, me, &[me as u64])?;
        bsp.sync()?;
        check_eq!(bsp, x.as_slice(bsp)[me], me as u64);
        for r in 0..p {
            for c in 0..p {
                check_eq!(bsp, m.as_slice(bsp)[r * p + c], c as u32);
            }
        }
        Ok(())
    });
}

// ----- overlapping puts ---------------------------------------------------------

/// The line of the first line of this file holding `tag`.
fn line_of(tag: &str) -> String {
    let src = include_str!("checking.rs");
    let line = 1 + src
        .lines()
        .position(|l| l.contains(tag) && !l.contains("line_of"))
        .unwrap();
    here(line as u32)
}

#[test]
fn overlapping_puts_are_reported_with_both_sources() {
    expect_finding(
        2,
        |bsp| {
            let x = Area::<u32>::new(bsp, 8);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            let last = bsp.nprocs() - 1;
            if bsp.pid() == 0 {
                bsp.put(last, &x, 2, &[1, 2, 3])?; // PUT A
            } else if bsp.pid() == last {
                bsp.put(last, &x, 4, &[9, 9])?; // PUT B
            }
            bsp.sync()
        },
        |n, err| match err.kind() {
            ErrorKind::OverlappingPuts {
                owner,
                slot,
                bytes,
                puts,
            } => {
                assert_eq!(*owner, n - 1, "{err}");
                assert_eq!(err.pid(), n - 1, "{err}");
                assert_eq!(err.superstep(), 1, "{err}");
                assert_eq!(*slot, 0);
                assert_eq!(*bytes, 16..20, "{err}");
                let at = |tag| format!("bsp_put at {}", line_of(tag));
                assert_eq!(puts[0], (0, at("// PUT A")), "{err}");
                assert_eq!(puts[1], (n - 1, at("// PUT B")), "{err}");
            }
            k => panic!("expected OverlappingPuts, got {k:?}: {err}"),
        },
    );
}

#[test]
fn a_strided_put_crossing_another_is_reported() {
    expect_finding(
        2,
        |bsp| {
            let p = bsp.nprocs();
            let m = Area::<u32>::new(bsp, 4 * 4);
            bsp.push_reg(&m)?;
            bsp.sync()?;
            if bsp.pid() == 0 {
                // Column 1 of a 4 x 4 matrix on process 0.
                let (from, to) = (Strided::contiguous(0, 4), Strided::column(1, 4, 4));
                bsp.put_strided(0, &m, to, &[1; 4], from)?; // COLUMN
            } else if bsp.pid() == p - 1 {
                // SAFETY: the source is a constant, alive until the sync.
                unsafe { bsp.hpput(0, &m, 8, &[2u32; 4])? }; // ROW
            }
            bsp.sync()
        },
        |n, err| match err.kind() {
            ErrorKind::OverlappingPuts {
                owner, bytes, puts, ..
            } => {
                assert_eq!(*owner, 0, "{err}");
                // Row 2 is bytes 32..48; column 1 crosses it at 36..40.
                assert_eq!(*bytes, 36..40, "{err}");
                let col = (0, format!("bsp_put_strided at {}", line_of("// COLUMN")));
                let row = (n - 1, format!("bsp_hpput at {}", line_of("// ROW")));
                for put in puts.iter() {
                    let want = if put.0 == 0 { &col } else { &row };
                    assert_eq!(put, want, "{err}");
                }
            }
            k => panic!("expected OverlappingPuts, got {k:?}: {err}"),
        },
    );
}

// ----- hp regions -----------------------------------------------------------------

#[test]
fn an_hpput_source_written_before_the_sync_is_reported() {
    expect_finding(
        1,
        |bsp| {
            let x = Area::<u64>::new(bsp, 4);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            let mut src = vec![5u64; 4];
            let to = bsp.nprocs() - 1 - bsp.pid();
            // SAFETY: `src` outlives the sync (the defect is the write).
            unsafe { bsp.hpput(to, &x, 0, &src)? }; // HPPUT
            src[2] = 6; // the defect: BSPlib reads it at the sync
            std::hint::black_box(&mut src);
            bsp.sync()
        },
        |_, err| match err.kind() {
            ErrorKind::HpRegionChanged {
                call,
                what,
                len,
                places,
            } => {
                assert_eq!((*call, *what, *len), ("bsp_hpput", "source", 32), "{err}");
                assert_eq!(places[0], line_of("// HPPUT"), "{err}");
                assert_eq!(err.call(), "bsp_hpput");
                assert_eq!(err.superstep(), 1);
            }
            k => panic!("expected HpRegionChanged, got {k:?}: {err}"),
        },
    );
}

#[test]
fn an_hpget_destination_written_before_the_sync_is_reported() {
    expect_finding(
        1,
        |bsp| {
            let x = Area::<u64>::new(bsp, 4);
            let mut y = Area::<u64>::new(bsp, 4);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            let from = bsp.nprocs() - 1 - bsp.pid();
            // SAFETY: `y` is not accessed by anyone else until the sync.
            unsafe { bsp.hpget(from, &x, 0, y.range(..4))? }; // HPGET
            y.as_mut_slice(bsp)[0] = 1; // the defect
            bsp.sync()
        },
        |_, err| match err.kind() {
            ErrorKind::HpRegionChanged {
                call, what, places, ..
            } => {
                assert_eq!((*call, *what), ("bsp_hpget", "destination"), "{err}");
                assert_eq!(places[0], line_of("// HPGET"), "{err}");
            }
            k => panic!("expected HpRegionChanged, got {k:?}: {err}"),
        },
    );
}

#[test]
fn hp_regions_left_alone_are_silent() {
    silent(|bsp| {
        let x = Area::<u64>::new(bsp, 4);
        let y = Area::<u64>::new(bsp, 4);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let src = vec![bsp.pid() as u64; 3];
        let other = bsp.nprocs() - 1 - bsp.pid();
        // SAFETY: `src` and `y` are left alone until the sync.
        unsafe {
            bsp.hpput(other, &x, 0, &src)?;
            bsp.hpget(other, &x, 0, y.range(..4))?;
        }
        bsp.put_owned(bsp.pid(), &x, 3, vec![1u64])?;
        bsp.sync()?;
        check_eq!(bsp, x.as_slice(bsp)[0], other as u64);
        Ok(())
    });
}

#[test]
fn checking_is_off_by_default() {
    // The defect of `syncs_at_different_lines_are_reported`, unchecked:
    // the run succeeds.
    for (engine, p) in configurations() {
        run_checking(engine, p, false, |bsp| {
            if bsp.pid() == 0 {
                bsp.sync()
            } else {
                bsp.sync()
            }
        })
        .unwrap();
    }
}
