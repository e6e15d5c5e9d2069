//! Windows (`bsplib::Window`, design in `src/ONE_SIDED.md` section 9):
//! passive-target locks straight into another process's memory, with no
//! call of its owner; local views that take the same lock; every engine
//! and process count.

mod common;

use bsplib::Op;
use bsplib::{ErrorKind, LockKind, Window};
use common::{expect_error, lcg, scenario};

#[test]
fn counters_incremented_under_exclusive_locks_by_everyone_are_exact() {
    const ROUNDS: u64 = 200;
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let w = Window::<u64>::new(bsp, p)?;
        // Every process increments counter `me` of every process.
        for round in 0..ROUNDS {
            for k in 0..p {
                let t = (me + k + round as usize) % p;
                let mut l = w.lock(bsp, t, LockKind::Exclusive)?;
                let mut v = [0u64; 1];
                l.get(me, &mut v)?;
                l.put(me, &[v[0] + 1])?;
                // A counter every process bumps: read-modify-write must
                // not lose updates.
                let mut all = [0u64; 1];
                l.get(0, &mut all)?;
                if me != 0 {
                    l.put(0, &[all[0] + 1])?;
                }
            }
        }
        bsp.sync()?;
        {
            let v = w.local(bsp)?;
            let want_0 = ROUNDS + ROUNDS * (p as u64 - 1);
            check_eq!(bsp, v[0], want_0);
            for (q, &x) in v.iter().enumerate().skip(1) {
                check_eq!(bsp, (q, x), (q, ROUNDS));
            }
        }
        w.free(bsp)
    });
}

#[test]
fn the_target_makes_no_call_while_others_lock_and_write_its_memory() {
    // Process 0 only looks at its own memory (local views) until every
    // other process has written its flag there: no sync, no library call
    // that could serve anything. A lock that needed the target's help
    // would hang here.
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let w = Window::<u32>::new(bsp, p)?;
        if me == 0 {
            loop {
                let v = w.local(bsp)?;
                if v[1..].iter().all(|&f| f == 7) {
                    break;
                }
                drop(v);
                std::thread::yield_now();
            }
        } else {
            let mut l = w.lock(bsp, 0, LockKind::Exclusive)?;
            l.put(me, &[7])?;
        }
        bsp.sync()?;
        if me == 0 {
            let v = w.local(bsp)?.to_vec();
            check_eq!(bsp, v[1..].to_vec(), vec![7u32; p - 1]);
        }
        w.free(bsp)
    });
}

#[test]
fn a_lock_put_unlock_completes_while_the_owner_computes_without_any_call() {
    // Process 0 computes for 1 s without any library call (not even a
    // view of its memory); the others lock its memory, put and unlock,
    // timing it. Windows need no call of their owner, so each finishes
    // long before the owner's next call (across nodes on mpi, that is the
    // progress thread's work: 1 s without it).
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let w = Window::<u64>::new(bsp, p)?;
        bsp.sync()?;
        let mut took = std::time::Duration::ZERO;
        if me == 0 {
            let t = std::time::Instant::now();
            let mut x = 1u64;
            while t.elapsed() < std::time::Duration::from_secs(1) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        } else {
            let t = std::time::Instant::now();
            let mut l = w.lock(bsp, 0, LockKind::Exclusive)?;
            l.put(me, &[me as u64 + 40])?;
            l.unlock()?;
            took = t.elapsed();
        }
        check!(
            bsp,
            took < std::time::Duration::from_millis(500),
            "process {me}: lock + put + unlock at process 0 took {took:?} while it computed"
        );
        bsp.sync()?;
        if me == 0 {
            let v = w.local(bsp)?.to_vec();
            let want: Vec<u64> = (1..p as u64).map(|q| q + 40).collect();
            check_eq!(bsp, v[1..].to_vec(), want);
        }
        let _ = p;
        w.free(bsp)
    });
}

#[test]
fn billboard_of_random_shared_reads_and_exclusive_writes_never_tears() {
    // Each process's billboard holds records of 16 words, each written
    // whole with one value under an exclusive lock; readers under shared
    // locks must never see a record with two values; at the end every
    // record holds the value of its last writer, and the owner counts.
    const WORDS: usize = 16;
    const RECORDS: usize = 8;
    const OPS: usize = 300;
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let mut w = Window::<u64>::new(bsp, RECORDS * WORDS + p)?;
        let mut next = lcg(0x5eed + me as u64);
        let mut writes = vec![0u64; p];
        for _ in 0..OPS {
            let t = (next() % p as u64) as usize;
            let r = (next() % RECORDS as u64) as usize;
            if next() % 3 == 0 {
                let mut l = w.lock(bsp, t, LockKind::Exclusive)?;
                let v = (me as u64) << 32 | next() & 0xffff_ffff;
                l.put(r * WORDS, &[v; WORDS])?;
                // This writer's count, at the end of the billboard.
                let mut c = [0u64];
                l.get(RECORDS * WORDS + me, &mut c)?;
                l.put(RECORDS * WORDS + me, &[c[0] + 1])?;
                writes[t] += 1;
            } else {
                let mut l = w.lock(bsp, t, LockKind::Shared)?;
                let mut rec = [0u64; WORDS];
                l.get(r * WORDS, &mut rec)?;
                drop(l);
                check!(bsp, rec.iter().all(|&x| x == rec[0]), "torn record {rec:?}");
            }
            if next() % 8 == 0 {
                // The owner rewrites a record of its own too.
                let mut v = w.local_mut(bsp)?;
                let r = (next() % RECORDS as u64) as usize;
                let x = (me as u64) << 32 | 0xffff;
                v[r * WORDS..(r + 1) * WORDS].fill(x);
            }
        }
        // Everyone's per-target counts, gathered to check the counters.
        let all = bsp.collectives().all_gather(&writes)?;
        let v = w.local(bsp)?.to_vec();
        for q in 0..p {
            check_eq!(bsp, (q, v[RECORDS * WORDS + q]), (q, all[q * p + me]));
        }
        for r in 0..RECORDS {
            let rec = &v[r * WORDS..(r + 1) * WORDS];
            check!(bsp, rec.iter().all(|&x| x == rec[0]), "torn record {rec:?}");
            check!(bsp, (rec[0] >> 32) < p as u64 || rec[0] == 0);
        }
        w.free(bsp)
    });
}

#[test]
fn histogram_of_lock_accumulates_is_exact() {
    const BINS: usize = 10;
    const SAMPLES: usize = 500;
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let w = Window::<u64>::new(bsp, BINS)?;
        let mut mine = vec![0u64; p * BINS];
        let mut next = lcg(77 + me as u64);
        for _ in 0..SAMPLES {
            let x = next() % (p * BINS) as u64;
            let (t, b) = (x as usize / BINS, x as usize % BINS);
            w.lock(bsp, t, LockKind::Exclusive)?
                .accumulate(b, &[1], Op::Sum)?;
            mine[x as usize] += 1;
        }
        let all = bsp.collectives().all_gather(&mine)?;
        let got = w.local(bsp)?.to_vec();
        for (b, &count) in got.iter().enumerate() {
            let want: u64 = (0..p).map(|q| all[q * p * BINS + me * BINS + b]).sum();
            check_eq!(bsp, (b, count), (b, want));
        }
        let total: u64 = bsp
            .collectives()
            .all_gather(&[got.iter().sum::<u64>()])?
            .iter()
            .sum();
        check_eq!(bsp, total as usize, p * SAMPLES);
        w.free(bsp)
    });
}

#[test]
fn windows_of_different_lengths_made_and_freed_again_start_zeroed() {
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        for round in 0..30usize {
            let len = 1 + (round * 37 + me * 11) % 5000;
            let mut w = Window::<u32>::new(bsp, len)?;
            for q in 0..p {
                check_eq!(bsp, w.len_of(q), 1 + (round * 37 + q * 11) % 5000);
            }
            check!(bsp, w.local(bsp)?.iter().all(|&x| x == 0), "not zeroed");
            w.local_mut(bsp)?.fill(round as u32 + 1);
            // A second window alive at once, so the regions interleave.
            let w2 = Window::<u8>::new(bsp, 100 + round)?;
            let t = (me + 1) % p;
            let mut got = vec![0u32; w.len_of(t)];
            w.lock(bsp, t, LockKind::Shared)?.get(0, &mut got)?;
            check!(bsp, got.iter().all(|&x| x == round as u32 + 1));
            bsp.sync()?;
            w.free(bsp)?;
            if round % 2 == 0 {
                w2.free(bsp)?;
            } // else: dropped, its memory kept until the run ends
        }
        Ok(())
    });
}

#[test]
fn a_window_of_floats_takes_min_max_and_products_like_accumulate() {
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let mut w = Window::<f64>::new(bsp, 3)?;
        w.local_mut(bsp)?
            .copy_from_slice(&[1.0, f64::INFINITY, f64::NEG_INFINITY]);
        bsp.sync()?;
        for t in 0..p {
            let x = (me + 2) as f64;
            let mut l = w.lock(bsp, t, LockKind::Exclusive)?;
            l.accumulate(0, &[x], Op::Product)?;
            l.accumulate(1, &[x], Op::Min)?;
            l.accumulate(2, &[x], Op::Max)?;
        }
        bsp.sync()?;
        let prod: f64 = (0..p).map(|q| (q + 2) as f64).product();
        let v = w.local(bsp)?.to_vec();
        check_eq!(bsp, v, vec![prod, 2.0, (p + 1) as f64]);
        w.free(bsp)
    });
}

#[test]
fn a_write_under_a_shared_lock_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let w = Window::<u64>::new(bsp, 4)?;
            let mut l = w.lock(bsp, 0, LockKind::Shared)?;
            l.put(0, &[1])?;
            Ok(())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::NoEpoch { .. }), "{e}");
            assert_eq!(e.call(), "WinLock::put", "{e}");
            assert!(e.to_string().contains("shared lock"), "{e}");
            assert!(e
                .location()
                .is_some_and(|l| l.file().ends_with("windows.rs")));
        },
    );
}

#[test]
fn a_transfer_beyond_the_targets_memory_is_an_error() {
    expect_error(
        2,
        |bsp| {
            // Process 1 has fewer elements than the others.
            let len = if bsp.pid() == 1 { 3 } else { 10 };
            let w = Window::<u32>::new(bsp, len)?;
            if bsp.pid() == 0 {
                let mut l = w.lock(bsp, 1, LockKind::Exclusive)?;
                l.put(2, &[1, 2])?;
            }
            bsp.sync()
        },
        |_, e| {
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::OutOfBounds {
                        remote: 1,
                        offset: 8,
                        nbytes: 8,
                        extent: 12,
                        elem: 4
                    }
                ),
                "{e}"
            );
            assert_eq!(e.pid(), 0);
            assert_eq!(e.call(), "WinLock::put");
        },
    );
}

#[test]
fn an_operator_undefined_on_the_type_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let w = Window::<f32>::new(bsp, 1)?;
            w.lock(bsp, 0, LockKind::Exclusive)?
                .accumulate(0, &[1.0], Op::BitXor)?;
            Ok(())
        },
        |_, e| {
            assert!(
                matches!(e.kind(), ErrorKind::AccumulateOperator { .. }),
                "{e}"
            );
            assert_eq!(e.call(), "WinLock::accumulate");
        },
    );
}

#[test]
fn a_lock_of_a_process_that_does_not_exist_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let w = Window::<u8>::new(bsp, 1)?;
            let p = bsp.nprocs();
            w.lock(bsp, p, LockKind::Shared)?;
            Ok(())
        },
        |n, e| {
            assert!(
                matches!(e.kind(), ErrorKind::PidOutOfRange { pid, nprocs } if *pid == n as i64 && *nprocs == n),
                "{e}"
            );
            assert_eq!(e.call(), "Window::lock");
        },
    );
}

#[test]
fn a_window_made_by_some_processes_only_fails_the_run_naming_both_calls() {
    expect_error(
        2,
        |bsp| {
            if bsp.pid() == 1 {
                bsp.sync()?;
            } else {
                Window::<u8>::new(bsp, 1)?.free(bsp)?;
            }
            Ok(())
        },
        |_, e| {
            assert!(
                matches!(e.kind(), ErrorKind::CollectiveMismatch { .. }),
                "{e}"
            );
            let s = e.to_string();
            assert!(s.contains("Window::new"), "{e}");
        },
    );
}

#[test]
fn a_window_too_large_for_the_region_is_an_error_not_a_crash() {
    // 2^40 bytes: more than any process's region of window memory.
    expect_error(
        1,
        |bsp| {
            Window::<u64>::new(bsp, 1 << 37)?;
            Ok(())
        },
        |_, e| {
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::OutOfMemory { .. } | ErrorKind::Startup { .. }
                ),
                "{e}"
            );
            assert_eq!(e.call(), "Window::new");
        },
    );
}

#[test]
fn the_readme_example_of_windows() {
    // README, "Windows": a histogram of hits in every process's bins.
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let hits = Window::<u64>::new(bsp, 8)?;
        for i in 0..100u64 {
            let (t, bin) = ((i % p as u64) as usize, (i % 8) as usize);
            hits.lock(bsp, t, LockKind::Exclusive)?
                .accumulate(bin, &[1], Op::Sum)?;
        }
        bsp.sync()?;
        let mine: u64 = hits.local(bsp)?.iter().sum();
        hits.free(bsp)?;
        let per_origin = (0..100u64).filter(|i| i % p as u64 == me as u64).count();
        check_eq!(bsp, mine as usize, p * per_origin);
        Ok(())
    });
}

#[test]
fn readers_and_writers_hammering_one_lock_leave_it_free() {
    // Everyone on process 0's lock at once, half shared, half exclusive:
    // a reader's passing increment while a writer holds must survive the
    // writer's release (an early version wiped it and locked the word for
    // ever). Afterwards the owner can still take it exclusively.
    const OPS: usize = 3000;
    scenario(|bsp| {
        let me = bsp.pid();
        let mut w = Window::<u64>::new(bsp, 2)?;
        let mut next = lcg(99 + me as u64);
        for _ in 0..OPS {
            if next() % 2 == 0 {
                let mut l = w.lock(bsp, 0, LockKind::Exclusive)?;
                l.put(0, &[me as u64, me as u64])?;
            } else {
                let mut v = [0u64; 2];
                w.lock(bsp, 0, LockKind::Shared)?.get(0, &mut v)?;
                check_eq!(bsp, v[0], v[1]);
            }
        }
        bsp.sync()?;
        let v = w.local_mut(bsp)?.to_vec();
        check_eq!(bsp, v[0], v[1]);
        w.free(bsp)
    });
}

#[test]
fn ring_exchange_with_window_epochs_over_many_rounds() {
    // Each round: every process puts a block into its right neighbour and
    // gets one from it, synchronising with its neighbours only; no
    // superstep counted.
    const N: usize = 5000;
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let (l, r) = (common::left(bsp), common::right(bsp));
        let mut w = Window::<u64>::new(bsp, 2 * N)?;
        let s0 = bsp.superstep();
        for round in 0..20u64 {
            let block: Vec<u64> = (0..N as u64)
                .map(|i| i ^ (me as u64) << 40 ^ round)
                .collect();
            let mut back = vec![0u64; N];
            {
                let mut e = w.epoch(bsp, &[l], &[r])?;
                e.put(r, 0, &block)?;
                e.wait()?;
            }
            {
                let v = w.local(bsp)?;
                let want = |i: u64| i ^ (l as u64) << 40 ^ round;
                check!(
                    bsp,
                    v[..N].iter().zip(0..).all(|(&x, i)| x == want(i)),
                    "round {round}"
                );
            }
            // Read the right neighbour's block back (the one I put).
            {
                let mut e = w.epoch(bsp, &[l], &[r])?;
                e.get(r, 0, &mut back)?;
                e.wait()?;
            }
            check!(bsp, back == block, "round {round}: get");
        }
        check_eq!(bsp, bsp.superstep(), s0);
        let _ = p;
        w.free(bsp)
    });
}

#[test]
fn epochs_with_groups_of_several_and_test_polling() {
    // Everyone exposes to everyone and writes its slot everywhere; the
    // exposure is polled with test; then a dropped guard completes and
    // waits by itself.
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let all: Vec<usize> = (0..p).collect();
        let mut w = Window::<u32>::new(bsp, p)?;
        for round in 1..=5u32 {
            let mut e = w.epoch(bsp, &all, &all)?;
            for t in 0..p {
                e.put(t, me, &[round * 100 + me as u32])?;
            }
            e.complete()?;
            while !e.test()? {
                std::thread::yield_now();
            }
            let again = e.test()?;
            drop(e);
            check!(bsp, again, "test stays true");
            let v = w.local(bsp)?.to_vec();
            let want: Vec<u32> = (0..p as u32).map(|q| round * 100 + q).collect();
            check_eq!(bsp, v, want);
            // A guard dropped without wait: completes and waits.
            let mut e = w.epoch(bsp, &all, &all)?;
            e.put((me + 1) % p, me, &[0])?;
        }
        w.free(bsp)
    });
}

#[test]
fn a_put_to_a_process_outside_the_started_group_is_an_error() {
    expect_error(
        2,
        |bsp| {
            let mut w = Window::<u8>::new(bsp, 4)?;
            let me = bsp.pid();
            let mut e = w.epoch(bsp, &[me], &[me])?;
            let other = (me + 1) % e.bsp().nprocs();
            e.put(other, 0, &[1])?;
            Ok(())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::NoEpoch { .. }), "{e}");
            assert!(e.to_string().contains("not a target"), "{e}");
            assert_eq!(e.call(), "WinEpoch::put");
        },
    );
}

#[test]
fn a_start_to_oneself_without_a_post_to_oneself_is_an_error_not_a_hang() {
    expect_error(
        1,
        |bsp| {
            let mut w = Window::<u8>::new(bsp, 4)?;
            let me = bsp.pid();
            w.epoch(bsp, &[], &[me])?;
            Ok(())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::EpochUnmatched { .. }), "{e}");
            assert!(e.to_string().contains("without posting to itself"), "{e}");
        },
    );
}

#[test]
fn a_put_after_complete_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let mut w = Window::<u8>::new(bsp, 4)?;
            let me = bsp.pid();
            let mut e = w.epoch(bsp, &[me], &[me])?;
            e.complete()?;
            e.put(me, 0, &[1])?;
            Ok(())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::NoEpoch { .. }), "{e}");
            assert!(e.to_string().contains("after this epoch's complete"), "{e}");
        },
    );
}

#[test]
fn a_start_to_a_process_that_never_posts_is_found_not_a_hang() {
    // Every engine: on mpi the status board of the run's windows shows
    // the target in its sync.
    expect_error(
        2,
        |bsp| {
            let mut w = Window::<u8>::new(bsp, 4)?;
            if bsp.pid() == 0 {
                let e = w.epoch(bsp, &[], &[1])?;
                drop(e);
            }
            bsp.sync()
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::EpochUnmatched { .. }), "{e}");
            assert!(
                e.to_string()
                    .contains("process 1 entered its sync without posting"),
                "{e}"
            );
            assert_eq!(e.pid(), 0);
            assert_eq!(e.call(), "Window::epoch");
        },
    );
}

#[test]
fn an_exclusive_lock_excludes_the_puts_of_another_origins_epoch() {
    // Process 0 reads process 1's memory twice under one exclusive lock,
    // while processes 1.. put whole blocks of one value into it in access
    // epochs: both reads agree and every block is uniform (issue 23: on
    // mpi the two reads differed and blocks tore, since MPI's
    // post/start/complete/wait ignores MPI's locks).
    const WORDS: usize = 64 << 10; // 512 KiB
    const ROUNDS: u64 = 12;
    scenario(|bsp| {
        let (me, p) = (bsp.pid(), bsp.nprocs());
        if p < 2 {
            return Ok(());
        }
        let mut w = Window::<u64>::new(bsp, if me == 1 { 2 * WORDS } else { 0 })?;
        if me == 0 {
            let (mut a, mut b) = (vec![0u64; 2 * WORDS], vec![0u64; 2 * WORDS]);
            for _ in 0..ROUNDS {
                let mut l = w.lock(bsp, 1, LockKind::Exclusive)?;
                l.get(0, &mut a)?;
                std::thread::yield_now();
                l.get(0, &mut b)?;
                drop(l);
                check!(bsp, a == b, "two reads under one exclusive lock differ");
                for block in a.chunks(WORDS) {
                    check!(
                        bsp,
                        block.iter().all(|&x| x == block[0]),
                        "a torn block under an exclusive lock"
                    );
                }
            }
        } else {
            let origins: Vec<usize> = if me == 1 { (1..p).collect() } else { vec![] };
            let mut src = vec![0u64; WORDS];
            for r in 0..ROUNDS {
                let mut e = w.epoch(bsp, &origins, &[1])?;
                src.fill(me as u64 * 1000 + r);
                e.put(1, (me % 2) * WORDS, &src)?;
                e.wait()?;
            }
        }
        bsp.sync()?;
        w.free(bsp)
    });
}

#[test]
fn window_epoch_accumulates_are_combined_in_pid_order_bit_for_bit() {
    // Every process adds 50 values of very different magnitudes into one
    // element of process 0's window, and puts a word into its own slot
    // there, in one epoch; the sum is the left fold in (pid, issue)
    // order on every engine and run, as an area's epoch gives. Twice, so
    // that the second epoch's records meet a clean state.
    common::for_each_engine(
        |bsp| {
            let (p, s) = (bsp.nprocs(), bsp.pid());
            bsp.rma().init()?;
            let mut w = Window::<f64>::new(bsp, 1 + p)?;
            let origins: Vec<usize> = if s == 0 { (0..p).collect() } else { vec![] };
            let mut out = Vec::new();
            for round in 0..2u64 {
                let mut e = w.epoch(bsp, &origins, &[0])?;
                let mut r = lcg(s as u64 + 5 + round);
                for _ in 0..50 {
                    let v = (r() as f64) * 10f64.powi((r() % 30) as i32 - 15);
                    e.accumulate(0, 0, &[v], Op::Sum)?;
                }
                e.put(0, 1 + s, &[s as f64 + 0.5])?;
                e.wait()?;
                if s == 0 {
                    let v = w.local(bsp)?.to_vec();
                    out.push(v[0].to_bits());
                    out.extend(v[1..].iter().map(|x| x.to_bits()));
                    w.local_mut(bsp)?[0] = 0.0;
                }
            }
            w.free(bsp)?;
            bsp.rma().term()?;
            Ok(out)
        },
        |p, results| {
            let mut want = Vec::new();
            for round in 0..2u64 {
                let mut sum = 0.0f64;
                for s in 0..p {
                    let mut r = lcg(s as u64 + 5 + round);
                    for _ in 0..50 {
                        sum += (r() as f64) * 10f64.powi((r() % 30) as i32 - 15);
                    }
                }
                want.push(sum.to_bits());
                want.extend((0..p).map(|s| (s as f64 + 0.5).to_bits()));
            }
            assert_eq!(results[0], want, "p={p}");
        },
    );
}

#[test]
fn window_epoch_accumulate_outside_one_sided_mode_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let mut w = Window::<u32>::new(bsp, 1)?;
            let me = bsp.pid();
            let mut e = w.epoch(bsp, &[me], &[me])?;
            e.accumulate(me, 0, &[1], Op::Sum)?;
            e.wait()
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::NoEpoch { .. }), "{e}");
            assert_eq!(e.call(), "WinEpoch::accumulate");
            assert!(e.to_string().contains("one-sided mode"), "{e}");
        },
    );
}

#[test]
fn two_operators_into_one_window_in_one_epoch_are_an_error() {
    expect_error(
        2,
        |bsp| {
            bsp.rma().init()?;
            let mut w = Window::<u32>::new(bsp, 1)?;
            let (me, p) = (bsp.pid(), bsp.nprocs());
            let origins: Vec<usize> = if me == 0 { (0..p).collect() } else { vec![] };
            let mut e = w.epoch(bsp, &origins, &[0])?;
            let op = if me == 1 { Op::Max } else { Op::Sum };
            e.accumulate(0, 0, &[1], op)?;
            e.wait()?;
            w.free(bsp)
        },
        |_, e| {
            assert!(
                matches!(e.kind(), ErrorKind::AccumulateMismatch { .. }),
                "{e}"
            );
            assert_eq!((e.call(), e.pid()), ("WinEpoch::wait", 0), "{e}");
        },
    );
}

#[test]
fn checking_mode_finds_overlapping_writes_in_a_window_epoch() {
    // Processes 1 and 2 put into element 0 of process 0's window in one
    // exposure epoch (their order is undefined): the checking mode
    // reports the overlap at process 0's wait; without it the run is
    // silent.
    let spmd = |bsp: &mut bsplib::Bsp| -> Result<u64, bsplib::Error> {
        bsp.rma().init()?;
        let mut w = Window::<u64>::new(bsp, 4)?;
        let (me, p) = (bsp.pid(), bsp.nprocs());
        let origins: Vec<usize> = if me == 0 { (0..p).collect() } else { vec![] };
        let mut e = w.epoch(bsp, &origins, &[0])?;
        if me == 1 || me == 2 {
            e.put(0, 0, &[5])?;
        }
        if me == 1 {
            e.put(0, 3, &[7])?; // no conflict: nobody else writes element 3
        }
        e.wait()?;
        bsp.sync()?;
        let v = if me == 0 { w.local(bsp)?[3] } else { 0 };
        w.free(bsp)?;
        bsp.rma().term()?;
        Ok(v)
    };
    if common::mpi_mode() {
        return;
    }
    for (engine, p, _) in common::configurations_with(3) {
        let got = common::run_checking(engine, p, false, spmd).expect("silent without checking");
        assert_eq!(got[0], 7, "{} p={p}", engine.name());
        let err =
            common::run_checking(engine, p, true, spmd).expect_err("the checking mode finds it");
        assert!(
            matches!(err.kind(), ErrorKind::OverlappingPuts { .. }),
            "{err}"
        );
        assert_eq!((err.call(), err.pid()), ("WinEpoch::wait", 0), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("process 1's window put (line")
                && text.contains("process 2's window put (line")
                && text.contains("bytes 0..8 of its memory of a window"),
            "{text}"
        );
    }
}
