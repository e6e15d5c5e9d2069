//! One test per semantic rule of BSPlib (the README's semantics and the BSPlib paper), each
//! named after its rule, each run on every engine and process count.
//! Registration rules are in `semantics_registration.rs`, BSMP rules in
//! `semantics_bsmp.rs`.
//! (Errors are covered by `errors.rs` and `errors_collective.rs`; the
//! errors here are the ones that show a rule: registration timing, half
//! duplex, out-of-order pops.)

mod common;
use common::*;

use std::ffi::c_void;

use bsplib::{Area, Bsp, Error};

// ----- superstep order ------------------------------------------------------

#[test]
fn put_copies_source_at_call() {
    scenario(|bsp| {
        let (me, l, _) = ids(bsp);
        let mut x = Area::from_vec(bsp, vec![me * 10 + 1, me * 10 + 2]);
        let y = Area::<u64>::new(bsp, 3);
        bsp.push_reg(&x)?;
        bsp.push_reg(&y)?;
        bsp.sync()?;
        // Source: the registered area itself, overwritten right after.
        bsp.put(right(bsp), &x, 0, x.as_slice(bsp))?;
        x.as_mut_slice(bsp).fill(999);
        // Source: a local vector, changed and freed right after.
        let mut v = vec![me + 100; 3];
        bsp.put(right(bsp), &y, 0, &v)?;
        v.fill(7);
        drop(v);
        bsp.sync()?;
        check_eq!(bsp, x.to_vec(bsp), vec![l * 10 + 1, l * 10 + 2]);
        check_eq!(bsp, y.to_vec(bsp), vec![l + 100; 3]);
        Ok(())
    });
}

#[test]
fn get_reads_value_at_end_of_remote_superstep() {
    scenario(|bsp| {
        let (me, _, r) = ids(bsp);
        let mut x = Area::from_vec(bsp, vec![1000 + me, 1]);
        let y = Area::<u64>::new(bsp, 2);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        bsp.get(right(bsp), &x, 0, y.range(..2))?;
        x.as_mut_slice(bsp)[0] = 2000 + me;
        check_eq!(bsp, y.to_vec(bsp), vec![0, 0]);
        // The owners change the source well after the gets were issued.
        std::thread::sleep(std::time::Duration::from_millis(5));
        x.as_mut_slice(bsp).copy_from_slice(&[3000 + me, 4000 + me]);
        bsp.sync()?;
        check_eq!(bsp, y.to_vec(bsp), vec![3000 + r, 4000 + r]);
        Ok(())
    });
}

#[test]
fn get_data_written_before_put_data() {
    scenario(|bsp| {
        let (me, l, r) = ids(bsp);
        let mut z = Area::<u64>::new(bsp, 1);
        let src = Area::from_vec(bsp, vec![1000 + me]);
        let w = Area::<u64>::new(bsp, 1);
        bsp.push_reg(&z)?;
        bsp.push_reg(&src)?;
        bsp.sync()?;
        z.as_mut_slice(bsp)[0] = 500 + me;
        // Into z: a get (of the right's src) and a put (from the right).
        bsp.get(right(bsp), &src, 0, z.range(..1))?;
        bsp.put(left(bsp), &z, 0, &[2000 + me])?;
        // z as a get source: read before any write lands.
        bsp.get(left(bsp), &z, 0, w.range(..1))?;
        bsp.sync()?;
        check_eq!(bsp, z.as_slice(bsp)[0], 2000 + r);
        check_eq!(bsp, w.as_slice(bsp)[0], 500 + l);
        Ok(())
    });
}

#[test]
fn self_put_lands_at_sync() {
    scenario(|bsp| {
        let o: Vec<u64> = (0..4).map(|k| bsp.pid() as u64 * 10 + k).collect();
        let x = Area::from_slice(bsp, &o);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        bsp.put(bsp.pid(), &x, 0, &[77])?;
        // Overlapping source and destination: the source is copied now.
        bsp.put(bsp.pid(), &x, 1, &x.as_slice(bsp)[0..3])?;
        check_eq!(bsp, x.to_vec(bsp), o);
        bsp.sync()?;
        check_eq!(bsp, x.to_vec(bsp), vec![77, o[0], o[1], o[2]]);
        Ok(())
    });
}

#[test]
fn self_get_lands_at_sync() {
    scenario(|bsp| {
        let o: Vec<u64> = (0..4).map(|k| bsp.pid() as u64 * 10 + k).collect();
        let mut x = Area::from_slice(bsp, &o);
        let y = Area::<u64>::new(bsp, 4);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        bsp.get(bsp.pid(), &x, 0, y.range(..4))?;
        bsp.get(bsp.pid(), &x, 0, x.range(1..4))?;
        check_eq!(bsp, y.to_vec(bsp), vec![0; 4]);
        check_eq!(bsp, x.to_vec(bsp), o);
        // Read at the end of the superstep: this change is seen.
        x.as_mut_slice(bsp)[0] = 50;
        bsp.sync()?;
        check_eq!(bsp, y.to_vec(bsp), vec![50, o[1], o[2], o[3]]);
        check_eq!(bsp, x.to_vec(bsp), vec![50, 50, o[1], o[2]]);
        Ok(())
    });
}

// ----- unbuffered DRMA --------------------------------------------------------

#[test]
fn hpput_lands_by_end_of_sync() {
    scenario(|bsp| {
        let (me, l, _) = ids(bsp);
        let x = Area::<u64>::new(bsp, 6);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let to_right: Vec<u64> = (0..4).map(|k| me * 10 + k).collect();
        let to_self = [me + 500, me + 600];
        // SAFETY: both sources live unchanged until after the sync; each
        // destination range has a single writer and nobody reads it.
        unsafe {
            bsp.hpput(right(bsp), &x, 0, &to_right)?;
            bsp.hpput(bsp.pid(), &x, 4, &to_self)?;
        }
        bsp.sync()?;
        let mut want: Vec<u64> = (0..4).map(|k| l * 10 + k).collect();
        want.extend(to_self);
        check_eq!(bsp, x.to_vec(bsp), want);
        Ok(())
    });
}

#[test]
fn hpget_lands_by_end_of_sync() {
    scenario(|bsp| {
        let (me, l, _) = ids(bsp);
        let x = Area::from_vec(bsp, vec![me + 1, me + 2, me + 3]);
        let y = Area::<u64>::new(bsp, 5);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        // SAFETY: no one writes `x` this superstep; each range of `y` is
        // written by one hpget only.
        unsafe {
            bsp.hpget(left(bsp), &x, 0, y.range(..3))?;
            bsp.hpget(bsp.pid(), &x, 1, y.range(3..5))?;
        }
        bsp.sync()?;
        check_eq!(
            bsp,
            y.to_vec(bsp),
            vec![l + 1, l + 2, l + 3, me + 2, me + 3]
        );
        Ok(())
    });
}

// ----- concurrency, repetition, enquiry ---------------------------------------

#[test]
fn overlapping_puts_from_different_processes_land_whole() {
    if checking_from_env() {
        // Overlapping puts are what the checking mode reports
        // (`tests/checking.rs`): this scenario is a defect there.
        return;
    }
    scenario(|bsp| {
        const W: usize = 512;
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        // Writer s's word for index i differs from every other writer's in
        // every byte, so a torn word matches no writer.
        let word = |s: usize, round: u64, i: usize| {
            ((s as u64 + 1) * 0x0101_0101_0101_0101) ^ (round << 40) ^ i as u64
        };
        let mut a = Area::<u64>::new(bsp, W + p);
        bsp.push_reg(&a)?;
        bsp.sync()?;
        for round in 0..4 {
            a.as_mut_slice(bsp).fill(0);
            // Every process writes W words at offset pid on every process.
            let mine: Vec<u64> = (pid..pid + W).map(|i| word(pid, round, i)).collect();
            for t in 0..p {
                bsp.put(t, &a, pid, &mine)?;
            }
            bsp.sync()?;
            for (i, &v) in a.as_slice(bsp).iter().enumerate() {
                let mut writers = (0..p).filter(|&s| s <= i && i < s + W);
                let whole = match i {
                    _ if i == W + p - 1 => v == 0, // nobody writes the last word
                    _ => writers.any(|s| v == word(s, round, i)),
                };
                check!(bsp, whole, "round {round}: word {i} is {v:#x}, no writer's");
            }
        }
        Ok(())
    });
}

#[test]
fn large_puts_land_whole_and_in_order() {
    // Payloads above the rendezvous threshold (on mpi a descriptor in the
    // stream, the payload point to point into the range the receiver
    // resolved): they land whole, a put's source may change right after
    // the call, and overlapping puts land in order (senders by pid, each
    // sender's in call order), small ones and large ones alike.
    scenario(|bsp| {
        const N: usize = 40_000; // u64s: 320 KB
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        let right = (pid + 1) % p;
        let left = (pid + p - 1) % p;
        let val = |s: usize, k: u64, i: usize| ((s as u64) << 48) ^ (k << 40) ^ i as u64;
        let a = Area::<u64>::new(bsp, N);
        let all = Area::<u64>::new(bsp, N);
        let b = Area::<u64>::new(bsp, 3 * N / 4);
        bsp.push_reg(&a)?;
        bsp.push_reg(&all)?;
        bsp.push_reg(&b)?;
        bsp.sync()?;
        for round in 0..3u64 {
            // To the right neighbour: large 0..N, small into its middle,
            // large over its second half, small at its very end.
            let mut src: Vec<u64> = (0..N).map(|i| val(pid, round, i)).collect();
            bsp.put(right, &a, 0, &src)?;
            // Buffered: the change below must not reach anyone.
            src.fill(u64::MAX);
            let small: Vec<u64> = (0..16).map(|i| val(pid, 100 + round, i)).collect();
            bsp.put(right, &a, N / 2 - 8, &small)?;
            let second: Vec<u64> = (0..3 * N / 4).map(|i| val(pid, 200 + round, i)).collect();
            bsp.put(right, &a, N / 2, &second[N / 4..])?;
            // An hpput (unordered with puts, so into an area of its own).
            // SAFETY: `second` lives, unchanged, until after the sync, and
            // nothing else touches `b` on `right` meanwhile.
            unsafe { bsp.hpput(right, &b, 0, &second)? };
            bsp.put(right, &a, N - 4, &small[..4])?;
            // To process 0 from everyone, the same range: the last pid wins.
            // (Under BSPLIB_CHECK only process p - 1 writes it: puts of
            // several processes to the same bytes are what checking
            // reports, `tests/checking.rs`.)
            let mine: Vec<u64> = (0..N).map(|i| val(pid, 300 + round, i)).collect();
            if !checking_from_env() || pid == p - 1 {
                bsp.put(0, &all, 0, &mine)?;
            }
            bsp.sync()?;
            drop(second);
            let got = a.to_vec(bsp);
            for (i, &v) in got.iter().enumerate() {
                let want = if i >= N - 4 {
                    val(left, 100 + round, i - (N - 4))
                } else if i >= N / 2 {
                    val(left, 200 + round, N / 4 + i - N / 2)
                } else if i >= N / 2 - 8 {
                    val(left, 100 + round, i - (N / 2 - 8))
                } else {
                    val(left, round, i)
                };
                check!(
                    bsp,
                    v == want,
                    "round {round}: word {i} is {v:#x}, not {want:#x}"
                );
            }
            let hp = b.to_vec(bsp);
            let ok = hp
                .iter()
                .enumerate()
                .all(|(i, &v)| v == val(left, 200 + round, i));
            check!(bsp, ok, "round {round}: the hpput did not land whole");
            if pid == 0 {
                let got = all.to_vec(bsp);
                let ok = got
                    .iter()
                    .enumerate()
                    .all(|(i, &v)| v == val(p - 1, 300 + round, i));
                check!(
                    bsp,
                    ok,
                    "round {round}: process {} did not land last",
                    p - 1
                );
            }
        }
        Ok(())
    });
}

#[test]
fn many_supersteps_reuse_buffers() {
    scenario(|bsp| {
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        // Superstep s: process q puts h(s, q) into slot q of process q + s,
        // publishes g(s, q, 0..4) for a get by process q - 2s - 1, and
        // sends nmsg(s, q) messages of varying length to process q + 3s.
        let h = |s: usize, q: usize| (s * 1_000_003 + q * 7919 + 1) as u64;
        let g = |s: usize, q: usize| (0..4).map(move |k| (s << 32 | q << 8 | k) as u64);
        let nmsg = |s: usize, q: usize| (s + q) % 4;
        let body = |s: usize, q: usize, j: usize| {
            let len = (s * 13 + q * 7 + j * 5) % 40;
            (0..len)
                .map(|i| (s + q * 31 + j * 7 + i) as u8)
                .collect::<Vec<u8>>()
        };
        let mut inbox = Area::<u64>::new(bsp, p);
        let mut published = Area::<u64>::new(bsp, 4);
        let got = Area::<u64>::new(bsp, 4);
        let mut temp: Option<Area<u64>> = None;
        bsp.push_reg(&inbox)?;
        bsp.push_reg(&published)?;
        bsp.set_tagsize(12)?;
        bsp.sync()?;
        for s in 0..200 {
            inbox.as_mut_slice(bsp).fill(0);
            for (v, w) in published.as_mut_slice(bsp).iter_mut().zip(g(s, pid)) {
                *v = w;
            }
            bsp.put((pid + s) % p, &inbox, pid, &[h(s, pid)])?;
            let from = (pid + 2 * s + 1) % p;
            bsp.get(from, &published, 0, got.range(..4))?;
            for j in 0..nmsg(s, pid) {
                let tag = [s as u32, pid as u32, j as u32];
                bsp.send_pod((pid + 3 * s) % p, &tag, &body(s, pid, j))?;
            }
            // Registration churn: a new area every 20 supersteps.
            match s % 20 {
                0 => {
                    let t = Area::<u64>::new(bsp, p);
                    bsp.push_reg(&t)?;
                    temp = Some(t);
                }
                1..=4 => bsp.put(right(bsp), temp.as_ref().unwrap(), pid, &[s as u64])?,
                5 => bsp.pop_reg(&temp.take().unwrap())?,
                _ => {}
            }
            bsp.sync()?;
            for (q, &v) in inbox.as_slice(bsp).iter().enumerate() {
                let want = if (q + s) % p == pid { h(s, q) } else { 0 };
                check_eq!(bsp, v, want);
            }
            check_eq!(bsp, got.to_vec(bsp), g(s, from).collect::<Vec<_>>());
            if let (1..=4, Some(t)) = (s % 20, &temp) {
                check_eq!(bsp, t.as_slice(bsp)[left(bsp)], s as u64);
            }
            let senders = (0..p).filter(|&q| (q + 3 * s) % p == pid);
            let mut want: Vec<[u32; 3]> = senders
                .flat_map(|q| (0..nmsg(s, q)).map(move |j| [s as u32, q as u32, j as u32]))
                .collect();
            let mut seen = vec![];
            while let Some(m) = bsp.hpmove() {
                let [ms, q, j] = m.tag_as::<[u32; 3]>().expect("12-byte tag");
                check_eq!(
                    bsp,
                    m.payload(),
                    &body(ms as usize, q as usize, j as usize)[..]
                );
                seen.push([ms, q, j]);
            }
            seen.sort();
            want.sort();
            check_eq!(bsp, seen, want);
        }
        Ok(())
    });
}

#[test]
fn time_is_monotonic_and_starts_near_zero() {
    scenario(|bsp| {
        let t0 = bsp.time();
        check!(
            bsp,
            (0.0..10.0).contains(&t0),
            "bsp_time at the start: {t0}"
        );
        let mut last = t0;
        for _ in 0..5 {
            let t = bsp.time();
            let forward = t >= last;
            check!(bsp, forward, "time went back: {last} then {t}");
            last = t;
            bsp.sync()?;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        let t = bsp.time();
        let slept = t - last >= 0.019;
        check!(bsp, slept, "20 ms measured as {}", t - last);
        Ok(())
    });
}

#[test]
fn nprocs_and_pid() {
    assert!(bsplib::available_processes() >= 1);
    for_each_engine(
        |bsp| {
            let (pid, p) = (bsp.pid(), bsp.nprocs());
            check!(bsp, pid < p);
            check_eq!(bsp, bsp.superstep(), 0);
            for s in 1..=3 {
                bsp.sync()?;
                check_eq!(bsp, (bsp.pid(), bsp.nprocs(), bsp.superstep()), (pid, p, s));
            }
            Ok((pid, p))
        },
        |n, got| {
            let want: Vec<(usize, usize)> = (0..n).map(|i| (i, n)).collect();
            assert_eq!(got, want.as_slice());
        },
    );
}

// ----- the raw layer --------------------------------------------------------------

/// What the program below observes: `x` and `y` afterwards, the hpget's
/// value, and the messages (tag, payload), sorted.
type Outcome = (Vec<u64>, Vec<u64>, u64, Vec<(u32, Vec<u8>)>);

/// The program through the safe API: register `x`; put to the right,
/// hpput to the left, get and hpget from the neighbours, two messages to
/// the right, received with get_tag/move and with hpmove.
fn safe_program(bsp: &mut Bsp) -> Result<Outcome, Error> {
    let (me, pid) = (bsp.pid() as u64, bsp.pid());
    let x = Area::<u64>::from_vec(bsp, (0..4).map(|k| me * 10 + k).collect());
    let (y, z) = (Area::<u64>::new(bsp, 2), Area::<u64>::new(bsp, 1));
    bsp.push_reg(&x)?;
    bsp.set_tagsize(4)?;
    bsp.sync()?;
    let hp_src = [me + 500];
    bsp.put(right(bsp), &x, 1, &[me + 100, me + 200])?;
    // SAFETY: `hp_src` outlives the sync; x[3] and z are written by these
    // calls only, and nobody writes x[0].
    unsafe {
        bsp.hpput(left(bsp), &x, 3, &hp_src)?;
        bsp.hpget(right(bsp), &x, 0, z.range(..1))?;
    }
    bsp.get(left(bsp), &x, 0, y.range(..2))?;
    bsp.send(
        right(bsp),
        &(pid as u32).to_ne_bytes(),
        &vec![pid as u8; pid + 1],
    )?;
    bsp.send(right(bsp), &(pid as u32 + 1000).to_ne_bytes(), b"raw")?;
    bsp.sync()?;
    let mut msgs = vec![];
    let mut tag = [0u8; 4];
    if let Some(n) = bsp.get_tag(&mut tag)? {
        let mut buf = vec![0; n];
        bsp.move_payload(&mut buf)?;
        msgs.push((u32::from_ne_bytes(tag), buf));
    }
    while let Some(m) = bsp.hpmove() {
        msgs.push((m.tag_as::<u32>().unwrap(), m.payload().to_vec()));
    }
    msgs.sort();
    bsp.pop_reg(&x)?;
    bsp.set_tagsize(0)?;
    bsp.sync()?;
    Ok((x.to_vec(bsp), y.to_vec(bsp), z.as_slice(bsp)[0], msgs))
}

/// The same program through `bsp.raw()`, on a local `Vec`, array and
/// variable.
fn raw_program(bsp: &mut Bsp) -> Result<Outcome, Error> {
    let (me, pid) = (bsp.pid() as u64, bsp.pid());
    let (r, l) = (right(bsp) as i64, left(bsp) as i64);
    let mut x: Vec<u64> = (0..4).map(|k| me * 10 + k).collect();
    let mut y = [0u64; 2];
    let mut z = 0u64;
    // From here on `x`, `y` and `z` are only accessed through these.
    let px = x.as_mut_ptr() as *mut c_void;
    let py = y.as_mut_ptr() as *mut c_void;
    let pz = &mut z as *mut u64 as *mut c_void;
    let (put_src, hp_src) = ([me + 100, me + 200], [me + 500]);
    let payload = vec![pid as u8; pid + 1];
    let tags = [pid as u32, pid as u32 + 1000].map(u32::to_ne_bytes);
    // SAFETY: `x`, `y`, `z` live until the end of this function, are
    // registered (x) or get destinations (y, z) only meanwhile, and are not
    // accessed by Rust code while a sync runs; every pointer is valid for
    // the byte counts given; `hp_src` outlives the sync.
    unsafe {
        bsp.raw().push_reg(px, 32)?;
        bsp.raw().set_tagsize(4)?;
        bsp.sync()?;
        bsp.raw().put(r, put_src.as_ptr().cast(), px, 8, 16)?;
        bsp.raw().hpput(l, hp_src.as_ptr().cast(), px, 24, 8)?;
        bsp.raw().hpget(r, px, 0, pz, 8)?;
        bsp.raw().get(l, px, 0, py, 16)?;
        let n = payload.len() as i64;
        bsp.raw()
            .send(r, tags[0].as_ptr().cast(), payload.as_ptr().cast(), n)?;
        bsp.raw()
            .send(r, tags[1].as_ptr().cast(), b"raw".as_ptr().cast(), 3)?;
        bsp.sync()?;
        let mut msgs = vec![];
        check_eq!(bsp, bsp.raw().qsize().0, 2);
        let mut tag = [0u8; 4];
        if let Some(n) = bsp.raw().get_tag(tag.as_mut_ptr().cast())? {
            let mut buf = vec![0u8; n];
            check_eq!(
                bsp,
                bsp.raw().move_payload(buf.as_mut_ptr().cast(), n as i64)?,
                n
            );
            msgs.push((u32::from_ne_bytes(tag), buf));
        }
        while let Some((t, p, n)) = bsp.raw().hpmove() {
            let tag = std::ptr::read_unaligned(t as *const u32);
            msgs.push((tag, std::slice::from_raw_parts(p as *const u8, n).to_vec()));
        }
        msgs.sort();
        bsp.raw().pop_reg(px)?;
        bsp.raw().set_tagsize(0)?;
        bsp.sync()?;
        let xs = std::slice::from_raw_parts(px as *const u64, 4).to_vec();
        let ys = std::slice::from_raw_parts(py as *const u64, 2).to_vec();
        Ok((xs, ys, std::ptr::read(pz as *const u64), msgs))
    }
}

#[test]
fn raw_layer_matches_safe_layer() {
    scenario(|bsp| {
        let safe = safe_program(bsp)?;
        let raw = raw_program(bsp)?;
        let (me, l, r) = ids(bsp);
        let ln = left(bsp);
        let want: Outcome = (
            vec![me * 10, l + 100, l + 200, r + 500],
            vec![l * 10, l * 10 + 1],
            r * 10,
            vec![
                (ln as u32, vec![ln as u8; ln + 1]),
                (ln as u32 + 1000, b"raw".to_vec()),
            ],
        );
        check_eq!(bsp, safe, want);
        check_eq!(bsp, raw, want);
        Ok(())
    });
}
