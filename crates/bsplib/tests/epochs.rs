//! One-sided synchronisation after MPI-2 (`bsplib::epoch`, design in
//! `src/ONE_SIDED.md`): post/start/complete/wait on a ring, the seed's
//! accumulate example in an exposure epoch, deterministic floating-point
//! sums, a "billboard" of random reads and updates under locks by every
//! process at random times, a histogram of lock-epoch accumulates, and
//! every error path; every engine and process count.

mod common;

use bsplib::raw::Raw;
use bsplib::Op;
use bsplib::{Area, ErrorKind, LockKind};
use common::{expect_error, for_each_engine, lcg, left, right, scenario};

#[test]
fn ring_exchange_with_post_start_complete_wait() {
    // Each round: expose to the left neighbour, put into the right one and
    // get from it; only neighbours synchronise; no superstep is counted.
    const N: usize = 3000; // more than one piece per put at 8 bytes each
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let (l, r) = (left(bsp), right(bsp));
        let x = Area::<u64>::new(bsp, N);
        let got = Area::<u64>::new(bsp, N);
        bsp.push_reg(&x)?;
        bsp.rma().init()?;
        let s0 = bsp.superstep();
        for round in 0..4u64 {
            let mine: Vec<u64> = (0..N as u64)
                .map(|i| i + 1000 * me as u64 + round)
                .collect();
            let e = bsp.rma().epoch(&x, &[l], &[r])?;
            e.put(r, 0, &mine)?;
            e.wait()?;
            let want: Vec<u64> = (0..N as u64).map(|i| i + 1000 * l as u64 + round).collect();
            check_eq!(bsp, x.as_slice(bsp).to_vec(), want);
            // A second round reads the right neighbour's area back.
            let mut e = bsp.rma().epoch(&x, &[l], &[r])?;
            e.get(r, 0, got.range(..N))?;
            e.complete()?;
            while !e.test()? {} // polls until the left neighbour completed
            drop(e);
            let want_r: Vec<u64> = (0..N as u64)
                .map(|i| i + 1000 * me as u64 + round)
                .collect();
            check_eq!(bsp, got.as_slice(bsp).to_vec(), want_r);
        }
        check_eq!(bsp, bsp.superstep(), s0);
        let _ = p;
        bsp.rma().term()
    });
}

#[test]
fn accumulate_example_in_an_exposure_epoch_is_deterministic() {
    // B(map(i)) += A(i) with every process both origin and target of all:
    // the sums are combined origins in pid order, each origin's in issue
    // order: bit-identical to the sequential model.
    const M: usize = 6;
    fn map(i: usize, n: usize) -> usize {
        (i * 7 + 3) % n
    }
    fn a(i: usize) -> f64 {
        1.0 / (i as f64 + 3.0)
    }
    for_each_engine(
        |bsp| {
            let (p, s) = (bsp.nprocs(), bsp.pid());
            let n = p * M;
            let b = Area::from_vec(bsp, vec![0.1f64; M]);
            bsp.push_reg(&b)?;
            bsp.rma().init()?;
            let all: Vec<usize> = (0..p).collect();
            let e = bsp.rma().epoch(&b, &all, &all)?;
            for i in s * M..(s + 1) * M {
                let j = map(i, n);
                e.accumulate(j / M, j % M, &[a(i)], Op::Sum)?;
            }
            e.wait()?;
            let out: Vec<u64> = b.as_slice(bsp).iter().map(|v| v.to_bits()).collect();
            bsp.rma().term()?;
            Ok(out)
        },
        |p, results| {
            let n = p * M;
            let mut want = vec![0.1f64; n];
            for i in 0..n {
                want[map(i, n)] += a(i);
            }
            let want: Vec<u64> = want.iter().map(|v| v.to_bits()).collect();
            assert_eq!(results.concat(), want, "p={p}");
        },
    );
}

#[test]
fn float_sums_in_epochs_match_the_documented_order_bit_for_bit() {
    // Every process adds 50 values of very different magnitudes into one
    // element of process 0; the result is the left fold in (pid, issue)
    // order, on every engine and every run.
    for_each_engine(
        |bsp| {
            let (p, s) = (bsp.nprocs(), bsp.pid());
            let x = Area::from_vec(bsp, vec![0.0f64; 1]);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            let origins: Vec<usize> = if s == 0 { (0..p).collect() } else { vec![] };
            let e = bsp.rma().epoch(&x, &origins, &[0])?;
            let mut r = lcg(s as u64 + 5);
            for _ in 0..50 {
                let v = (r() as f64) * 10f64.powi((r() % 30) as i32 - 15);
                e.accumulate(0, 0, &[v], Op::Sum)?;
            }
            e.wait()?;
            let out = x.as_slice(bsp)[0].to_bits();
            bsp.rma().term()?;
            Ok(out)
        },
        |p, results| {
            let mut want = 0.0f64;
            for s in 0..p {
                let mut r = lcg(s as u64 + 5);
                for _ in 0..50 {
                    want += (r() as f64) * 10f64.powi((r() % 30) as i32 - 15);
                }
            }
            assert_eq!(results[0], want.to_bits(), "p={p}");
        },
    );
}

#[test]
fn billboard_of_random_reads_and_updates_under_locks() {
    // Each process owns a board of W words. At random, every process locks
    // a random board exclusively and writes one value into all W words
    // (after reading a counter word), or locks it shared and checks that
    // all W words agree (a torn write would show). Counts are checked at
    // the end: every increment under an exclusive lock is there.
    const W: usize = 8;
    const OPS: usize = 40;
    for_each_engine(
        |bsp| {
            let (p, s) = (bsp.nprocs(), bsp.pid());
            let board = Area::<u64>::new(bsp, W + 1);
            bsp.push_reg(&board)?;
            bsp.rma().init()?;
            let mut r = lcg(s as u64 * 31 + 7);
            let mut mine = vec![0u64; p];
            for _ in 0..OPS {
                let t = r() as usize % p;
                if r() % 3 == 0 {
                    let mut l = bsp.rma().lock(t, &board, LockKind::Shared)?;
                    let words = l.read(0, W)?;
                    assert!(words.iter().all(|&w| w == words[0]), "torn board {words:?}");
                    l.unlock()?;
                } else {
                    let mut l = bsp.rma().lock(t, &board, LockKind::Exclusive)?;
                    let count = l.read(W, 1)?[0];
                    let stamp = (s as u64) << 32 | count;
                    l.put(0, &[stamp; W])?;
                    l.put(W, &[count + 1])?;
                    l.unlock()?;
                    mine[t] += 1;
                }
                if r() % 4 == 0 {
                    bsp.am().poll()?; // a progress point of its own
                }
            }
            // Everyone's increments are done when everyone synced.
            bsp.sync()?;
            let count = board.as_slice(bsp)[W];
            bsp.rma().term()?;
            Ok((count, mine))
        },
        |p, results| {
            for t in 0..p {
                let want: u64 = results.iter().map(|(_, m)| m[t]).sum();
                assert_eq!(results[t].0, want, "p={p}: board {t}");
            }
        },
    );
}

#[test]
fn histogram_with_lock_accumulates_is_exact() {
    const BINS: usize = 5;
    const N: usize = 60;
    for_each_engine(
        |bsp| {
            let (p, s) = (bsp.nprocs(), bsp.pid());
            let bins = Area::<u32>::new(bsp, BINS);
            bsp.push_reg(&bins)?;
            bsp.rma().init()?;
            let mut r = lcg(s as u64 + 99);
            for _ in 0..N {
                let b = r() as usize % (BINS * p);
                let kind = if r() % 2 == 0 {
                    LockKind::Shared
                } else {
                    LockKind::Exclusive
                };
                let l = bsp.rma().lock(b % p, &bins, kind)?;
                l.accumulate(b / p, &[1], Op::Sum)?;
                l.unlock()?;
            }
            bsp.sync()?;
            let out = bins.as_slice(bsp).to_vec();
            bsp.rma().term()?;
            Ok(out)
        },
        |p, results| {
            let mut want = vec![0u32; BINS * p];
            for s in 0..p {
                let mut r = lcg(s as u64 + 99);
                for _ in 0..N {
                    let b = r() as usize % (BINS * p);
                    let _ = r();
                    want[b] += 1;
                }
            }
            for (q, got) in results.iter().enumerate() {
                for (i, &v) in got.iter().enumerate() {
                    assert_eq!(v, want[i * p + q], "p={p}: bin {} on {q}", i * p + q);
                }
            }
        },
    );
}

#[test]
fn areas_popped_and_pushed_in_one_sided_mode_reuse_control_lines_soundly() {
    // Each round pops the area of the last round and pushes a new one: the
    // new slot takes the control line (lock word, post counters) the old
    // one gave back, while a long-lived area keeps its own. Every process
    // increments a counter on process 0 under an exclusive lock (a lost
    // update would show a broken exclusion) and runs a ring epoch on the
    // new area (a stale post would let a start run ahead of its target's
    // exposure: the owner refuses such a record).
    const ROUNDS: u64 = 4;
    for_each_engine(
        |bsp| {
            let (me, p) = (bsp.pid(), bsp.nprocs());
            let (l, r) = ((me + p - 1) % p, (me + 1) % p);
            let keep = Area::<u64>::new(bsp, 1);
            bsp.push_reg(&keep)?;
            bsp.rma().init()?;
            let mut old: Option<Area<u64>> = None;
            let mut seen = Vec::new();
            for round in 0..ROUNDS {
                let x = Area::<u64>::new(bsp, 2);
                if let Some(o) = old.take() {
                    bsp.pop_reg(&o)?;
                }
                bsp.push_reg(&x)?;
                bsp.sync()?;
                for area in [&keep, &x] {
                    let mut g = bsp.rma().lock(0, area, LockKind::Exclusive)?;
                    let v = g.read(0, 1)?[0];
                    g.put(0, &[v + 1])?;
                    g.unlock()?;
                }
                let e = bsp.rma().epoch(&x, &[l], &[r])?;
                e.put(r, 1, &[round * 100 + me as u64])?;
                e.wait()?;
                seen.push(x.as_slice(bsp)[1]);
                bsp.sync()?;
                if me == 0 {
                    seen.push(x.as_slice(bsp)[0]);
                }
                old = Some(x);
            }
            bsp.sync()?;
            let total = keep.as_slice(bsp)[0];
            bsp.rma().term()?;
            Ok((total, seen))
        },
        |p, results| {
            for (q, (total, seen)) in results.iter().enumerate() {
                let l = (q + p - 1) % p;
                let mut want = Vec::new();
                for round in 0..ROUNDS {
                    want.push(round * 100 + l as u64);
                    if q == 0 {
                        want.push(p as u64);
                    }
                }
                assert_eq!(seen, &want, "p={p}: process {q}");
                if q == 0 {
                    assert_eq!(*total, ROUNDS * p as u64, "p={p}: the long-lived counter");
                }
            }
        },
    );
}

#[test]
fn an_area_unlock_is_answered_by_a_target_waiting_in_a_window_epoch() {
    // Process 1 waits in a window's exposure epoch for process 0, which
    // first ends a lock epoch on process 1's area: its unlock waits for
    // process 1's answer, which process 1 gives from inside the window
    // wait (the window's waits serve in one-sided mode). Without that,
    // both would wait for ever.
    for_each_engine(
        |bsp| {
            let me = bsp.pid();
            let x = Area::<u64>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            let mut w = bsplib::Window::<u64>::new(bsp, 1)?;
            let mut got = (0, 0);
            if me == 1 {
                let e = w.epoch(bsp, &[0], &[])?;
                e.wait()?;
                got = (x.as_slice(bsp)[0], w.local(bsp)?[0]);
            } else if me == 0 && bsp.nprocs() > 1 {
                let l = bsp.rma().lock(1, &x, LockKind::Exclusive)?;
                l.put(0, &[5])?;
                l.unlock()?;
                let mut e = w.epoch(bsp, &[], &[1])?;
                e.put(1, 0, &[6])?;
                e.wait()?;
            }
            bsp.sync()?;
            w.free(bsp)?;
            bsp.rma().term()?;
            Ok(got)
        },
        |p, results| {
            if p > 1 {
                assert_eq!(results[1], (5, 6), "p={p}");
            }
        },
    );
}

#[test]
fn one_lock_at_a_time_across_windows_and_areas() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            let w = bsplib::Window::<u32>::new(bsp, 1)?;
            std::mem::forget(bsp.rma().lock(0, &x, LockKind::Shared)?);
            let _second = w.lock(bsp, 0, LockKind::Shared)?;
            Ok(())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::EpochOpen { .. }), "{e}");
            assert_eq!(e.call(), "Window::lock");
            assert!(e.to_string().contains("area of registration slot 0"), "{e}");
        },
    );
}

#[test]
fn lock_guard_dropped_releases_and_gets_land_by_unlock() {
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let x = Area::from_vec(bsp, vec![me as u32 + 1; 4]);
        let got = Area::<u32>::new(bsp, 4);
        bsp.push_reg(&x)?;
        bsp.rma().init()?;
        let t = (me + 1) % p;
        {
            let l = bsp.rma().lock(t, &x, LockKind::Shared)?;
            l.get(0, got.range(..4))?;
            // dropped: unlocked, the get landed
        }
        check_eq!(bsp, got.as_slice(bsp).to_vec(), vec![t as u32 + 1; 4]);
        bsp.rma().term()
    });
}

// ----- errors ---------------------------------------------------------------------

#[test]
fn sync_with_a_lock_held_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            std::mem::forget(bsp.rma().lock(0, &x, LockKind::Exclusive)?);
            bsp.sync()
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::EpochOpen { .. }), "{e}");
            assert_eq!(e.call(), "bsp_sync");
            assert!(
                e.to_string()
                    .contains("lock of process 0's area of registration slot"),
                "{e}"
            );
        },
    );
}

#[test]
fn a_second_lock_of_one_area_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            std::mem::forget(bsp.rma().lock(0, &x, LockKind::Shared)?);
            let _second = bsp.rma().lock(0, &x, LockKind::Shared)?;
            Ok(())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::EpochOpen { .. }), "{e}");
            assert_eq!(e.call(), "bsp_lock");
            assert!(e.to_string().contains("a second lock"), "{e}");
        },
    );
}

#[test]
fn unlock_without_lock_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            let at = x.as_slice(bsp).as_ptr().cast();
            Raw::unlock(bsp, None, 0, at)
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::NoEpoch { .. }), "{e}");
            assert_eq!(e.call(), "bsp_unlock");
            assert!(e.to_string().contains("without a lock"), "{e}");
        },
    );
}

#[test]
fn complete_without_start_and_wait_without_post_are_errors() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            let at = x.as_slice(bsp).as_ptr().cast();
            Raw::win_complete(bsp, None, at)
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::NoEpoch { .. }), "{e}");
            assert_eq!(e.call(), "bsp_win_complete");
        },
    );
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            let at = x.as_slice(bsp).as_ptr().cast();
            Raw::win_wait(bsp, None, at, true).map(|_| ())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::NoEpoch { .. }), "{e}");
            assert_eq!(e.call(), "bsp_win_wait");
        },
    );
}

#[test]
fn epochs_outside_one_sided_mode_are_an_error() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            let _l = bsp.rma().lock(0, &x, LockKind::Exclusive)?;
            Ok(())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::NoEpoch { .. }), "{e}");
            assert!(e.to_string().contains("one-sided mode"), "{e}");
        },
    );
}

#[test]
fn a_transfer_outside_the_started_group_is_an_error() {
    expect_error(
        2,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            let (me, p) = (bsp.pid(), bsp.nprocs());
            let all: Vec<usize> = (0..p).collect();
            // Everyone exposes to all and accesses only itself.
            let e = bsp.rma().epoch(&x, &all, &[me])?;
            e.put((me + 1) % p, 0, &[1])?;
            e.wait()
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::NoEpoch { .. }), "{e}");
            assert_eq!(e.call(), "bsp_put");
            assert!(e.to_string().contains("in the access epoch"), "{e}");
        },
    );
}

#[test]
fn start_to_a_process_that_never_posts_is_detected() {
    // Process 0 starts an access epoch to process 1, which syncs instead:
    // an error naming process 1, not a hang, on every engine (on mpi from
    // the status board of one-sided mode).
    expect_error(
        2,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            if bsp.pid() == 0 {
                let e = bsp.rma().epoch(&x, &[], &[1])?;
                e.wait()?;
            }
            bsp.sync()
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::EpochUnmatched { .. }), "{e}");
            assert_eq!(e.call(), "bsp_win_start");
            assert_eq!(e.pid(), 0);
            assert!(
                e.to_string()
                    .contains("process 1 entered its sync without posting"),
                "{e}"
            );
        },
    );
}

#[test]
fn accumulate_mismatch_within_an_epoch_is_an_error() {
    // One origin, two operators into one target area: at the second call.
    expect_error(
        1,
        |bsp| {
            let x = Area::<f64>::new(bsp, 2);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            let l = bsp.rma().lock(0, &x, LockKind::Exclusive)?;
            l.accumulate(0, &[1.0], Op::Sum)?;
            l.accumulate(1, &[1.0], Op::Max)?;
            l.unlock()
        },
        |_, e| {
            assert!(
                matches!(e.kind(), ErrorKind::AccumulateMismatch { .. }),
                "{e}"
            );
            assert_eq!(e.call(), "bsp_accumulate");
        },
    );
    // Two origins into one exposure epoch: found by the target.
    expect_error(
        2,
        |bsp| {
            let x = Area::<f64>::new(bsp, 2);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            let me = bsp.pid();
            let origins: Vec<usize> = if me == 0 { vec![0, 1] } else { vec![] };
            let e = bsp.rma().epoch(&x, &origins, &[0])?;
            let op = if me == 0 { Op::Sum } else { Op::Min };
            e.accumulate(0, 0, &[1.0], op)?;
            e.wait()?;
            bsp.sync()
        },
        |_, e| {
            assert!(
                matches!(e.kind(), ErrorKind::AccumulateMismatch { .. }),
                "{e}"
            );
            assert_eq!(e.pid(), 0);
            assert!(e.to_string().contains("same exposure epoch"), "{e}");
        },
    );
}

#[test]
fn the_readme_example_of_the_three_modes() {
    // README, "One-sided synchronisation: three modes": the same ring
    // exchange by fence, post/start/complete/wait, and lock/unlock.
    for_each_engine(
        |bsp| {
            let (me, p) = (bsp.pid(), bsp.nprocs());
            let (left, right) = ((me + p - 1) % p, (me + 1) % p);
            let x = Area::<u64>::new(bsp, 3);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            bsp.put(right, &x, 0, &[me as u64])?;
            bsp.sync()?;
            let fence = x.as_slice(bsp)[0];
            let e = bsp.rma().epoch(&x, &[left], &[right])?;
            e.put(right, 1, &[10 + me as u64])?;
            e.wait()?;
            let pscw = x.as_slice(bsp)[1];
            let l = bsp.rma().lock(right, &x, LockKind::Exclusive)?;
            l.put(2, &[20 + me as u64])?;
            l.unlock()?;
            bsp.sync()?;
            let locked = x.as_slice(bsp)[2];
            bsp.rma().term()?;
            Ok((fence, pscw, locked))
        },
        |p, results| {
            for (s, &(fence, pscw, locked)) in results.iter().enumerate() {
                let left = ((s + p - 1) % p) as u64;
                assert_eq!(
                    (fence, pscw, locked),
                    (left, 10 + left, 20 + left),
                    "p={p} pid {s}"
                );
            }
        },
    );
}

#[test]
fn checking_mode_finds_a_put_and_an_accumulate_of_one_byte_in_one_epoch() {
    // Process 1 puts into element 0 of process 0's area, process 0
    // accumulates into it, in one exposure epoch of process 0: the
    // checking mode reports both; without it the result is defined (the
    // put first) and the run is silent.
    let spmd = |bsp: &mut bsplib::Bsp| -> Result<u64, bsplib::Error> {
        let x = Area::<u64>::new(bsp, 4);
        bsp.push_reg(&x)?;
        bsp.rma().init()?;
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let origins: Vec<usize> = if me == 0 { (0..p).collect() } else { vec![] };
        let e = bsp.rma().epoch(&x, &origins, &[0])?;
        if me == 1 {
            e.put(0, 0, &[5])?;
            e.put(0, 3, &[7])?; // no conflict: nobody else writes element 3
        } else if me == 0 {
            e.accumulate(0, 0, &[1], Op::Sum)?;
        }
        e.wait()?;
        bsp.sync()?;
        let v = x.as_slice(bsp)[0];
        bsp.rma().term()?;
        Ok(v)
    };
    if common::mpi_mode() {
        return;
    }
    for (engine, p, _) in common::configurations_with(2) {
        let got = common::run_checking(engine, p, false, spmd).expect("silent without checking");
        assert_eq!(
            got[0],
            6,
            "{} p={p}: the put, then the accumulate",
            engine.name()
        );
        let err =
            common::run_checking(engine, p, true, spmd).expect_err("the checking mode finds it");
        assert!(
            matches!(err.kind(), ErrorKind::OverlappingPuts { .. }),
            "{err}"
        );
        assert_eq!(err.call(), "bsp_win_wait", "{err}");
        let text = err.to_string();
        assert!(
            text.contains("bsp_put (line") && text.contains("bsp_accumulate (line"),
            "{text}"
        );
        assert!(text.contains("bytes 0..8"), "{text}");
    }
}

#[test]
fn a_lock_of_an_area_inside_an_access_epoch_to_the_same_process_is_an_error() {
    // MPI: distinct access epochs of one window at one process are
    // disjoint. The epoch's guard is forgotten to reach the lock from safe
    // code; the lock refuses (before, it was accepted).
    expect_error(
        1,
        |bsp| {
            let me = bsp.pid();
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.rma().init()?;
            std::mem::forget(bsp.rma().epoch(&x, &[me], &[me])?);
            let _l = bsp.rma().lock(me, &x, LockKind::Shared)?;
            Ok(())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::EpochOpen { .. }), "{e}");
            assert_eq!(e.call(), "bsp_lock");
            assert!(e.to_string().contains("inside the access epoch"), "{e}");
        },
    );
}
