//! Active messages (`bsplib::am`) on every engine: the LAPI seed's vector
//! examples with every target byte checked, the three counters, progress
//! (a target waiting on a counter while its origins compute; an origin
//! waiting on a counter while its target already syncs), completion
//! handlers that answer across a sync, mixing with puts and gets in one
//! superstep, two applications against a sequential computation, and
//! every error at the send and on the target.

#![allow(clippy::single_range_in_vec_init)] // one-block vectors are what the tests send

mod common;

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;
use std::time::Duration;

use bsplib::am::{CounterId, Counters, Handler, Handlers, Kind, Landing, Source, Target};
use bsplib::{Area, Bsp, Error, ErrorKind, Strided};
use common::{expect_error, left, right, scenario};

/// The seed's examples: process `p - 1` sends to process 0 (to itself at
/// p = 1) one message of each kind; the handler lands it in an area as
/// the seed's target vector says, and the area is checked byte by byte.
fn seed_examples(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let mut target = Area::from_vec(bsp, vec![0xeeu8; 64]);
    let t = target.am_ref();
    let mut hs = Handlers::new();
    // The header says which example; the handler returns its target vector.
    let land = hs.add::<u8, u8>("land", move |a| {
        let example = a.header()[0];
        let to = match example {
            // IOVECTOR, three blocks of 4, 2 and 3 bytes.
            0 => Target::Io(vec![0..4, 10..12, 20..23]),
            // GENERIC {5,10,5} -> {12,2,4,2}.
            1 => Target::Generic(vec![0..12, 16..18, 24..28, 32..34]),
            // GENERIC {20} -> {5,10}: the last 5 bytes are not copied.
            2 => Target::Generic(vec![0..5, 8..18]),
            // STRIDED: 3 blocks of 5 at stride 8 on both sides.
            _ => Target::Strided(Strided::new(1, 5, 8, 3)),
        };
        let kind = a.kind();
        assert_eq!(
            kind,
            [Kind::Io, Kind::Generic, Kind::Generic, Kind::Strided][example as usize]
        );
        Landing::into(&t, to)
    });
    bsp.am().init(hs)?;
    let data: Vec<u8> = (100..164).collect();
    let d = |r: Range<usize>| data[r].to_vec();
    let expected: [Vec<(usize, Vec<u8>)>; 4] = [
        vec![(0, d(0..4)), (10, d(4..6)), (20, d(6..9))],
        vec![
            (0, d(0..5)),
            (5, d(8..15)),
            (16, d(15..17)),
            (24, d(17..18)),
            (25, d(24..27)),
            (32, d(27..29)),
        ],
        vec![(0, d(0..5)), (8, d(5..15))],
        vec![(1, d(0..5)), (9, d(8..13)), (17, d(16..21))],
    ];
    let sources: [Source<'_, u8>; 4] = [
        Source::Io(&data[..9], &[0..4, 4..6, 6..9]),
        // Origin blocks of 5, 10 and 5 bytes: 0..5, 8..18, 24..29.
        Source::Generic(&data, &[0..5, 8..18, 24..29]),
        Source::Generic(&data, &[0..20]),
        Source::Strided(&data, Strided::new(0, 5, 8, 3)),
    ];
    for (example, (src, want)) in sources.into_iter().zip(&expected).enumerate() {
        let sender = p - 1;
        if me == sender {
            bsp.am()
                .send(0, land, &[example as u8], src, Counters::none())?;
        }
        bsp.sync()?;
        if me == 0 {
            let mut full = [0xeeu8; 64];
            for (at, bytes) in want {
                full[*at..*at + bytes.len()].copy_from_slice(bytes);
            }
            check_eq!(bsp, target.as_slice(bsp), &full[..]);
        }
        bsp.sync()?;
        target.as_mut_slice(bsp).fill(0xee);
    }
    bsp.am().term()
}

#[test]
fn the_seed_examples_land_byte_for_byte() {
    scenario(seed_examples);
}

/// Every process's counter ids, exchanged by puts (ids are plain data).
fn exchange_ids(bsp: &mut Bsp, mine: CounterId) -> Result<Vec<CounterId>, Error> {
    let p = bsp.nprocs();
    let ids = Area::<CounterId>::new(bsp, p);
    bsp.push_reg(&ids)?;
    bsp.sync()?;
    for q in 0..p {
        bsp.put(q, &ids, bsp.pid(), &[mine])?;
    }
    bsp.sync()?;
    let out = ids.as_slice(bsp).to_vec();
    bsp.pop_reg(&ids)?;
    bsp.sync()?;
    Ok(out)
}

/// A handler that lands 4 words at element 0 of `area`, counting its
/// completions in `done`.
fn store(hs: &mut Handlers, area: &Area<u64>, done: Rc<RefCell<u64>>) -> Handler<u8, u64> {
    let a = area.am_ref();
    hs.add::<u8, u64>("store", move |_| {
        let done = done.clone();
        Landing::into(&a, Target::At(0)).then(move |_| *done.borrow_mut() += 1)
    })
}

/// The three counters: `org` before the send returns, `tgt` once the
/// data is visible, `cmpl` once the target handled it; `wait` subtracts.
fn counters(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, l, r) = (bsp.pid(), left(bsp), right(bsp));
    let got = Area::<u64>::new(bsp, 4);
    let done = Rc::new(RefCell::new(0u64));
    let mut hs = Handlers::new();
    let h = store(&mut hs, &got, done.clone());
    bsp.am().init(hs)?;
    let tgt = bsp.am().counter()?;
    let ids = exchange_ids(bsp, tgt.id())?;
    let (org, cmpl) = (bsp.am().counter()?, bsp.am().counter()?);
    for round in 1..=3u64 {
        let data = [me as u64 * 10 + round; 4];
        let c = Counters::none().tgt(ids[r]).org(&org).cmpl(&cmpl);
        bsp.am().send(r, h, &[0u8; 0], &data, c)?;
        check_eq!(bsp, org.get(), round); // copied at the call
        bsp.am().wait_counter(&tgt, 1)?;
        // The target counter moved after the data landed and the
        // completion handler ran.
        check_eq!(bsp, got.as_slice(bsp), &[l as u64 * 10 + round; 4][..]);
        check_eq!(bsp, *done.borrow(), round);
        check_eq!(bsp, tgt.get(), 0); // `wait` subtracted 1
        bsp.am().wait_counter(&cmpl, 1)?;
        check_eq!(bsp, cmpl.get(), 0);
        bsp.sync()?;
    }
    bsp.am().term()
}

#[test]
fn counters_move_when_their_events_happen() {
    scenario(counters);
}

/// A target waits on its counter while its origins compute first; then an
/// origin waits on its completion counter while its target already waits
/// in `sync` (which dispatches).
fn progress(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let got = Area::<u64>::new(bsp, 4);
    let done = Rc::new(RefCell::new(0u64));
    let mut hs = Handlers::new();
    let h = store(&mut hs, &got, done.clone());
    bsp.am().init(hs)?;
    let tgt = bsp.am().counter()?;
    let ids = exchange_ids(bsp, tgt.id())?;
    if me == 0 {
        bsp.am().wait_counter(&tgt, (p - 1) as u64)?;
        check_eq!(bsp, *done.borrow(), (p - 1) as u64);
    } else {
        std::thread::sleep(Duration::from_millis(20));
        bsp.am()
            .send(0, h, &[1u8], &[7u64; 4], Counters::none().tgt(ids[0]))?;
    }
    bsp.sync()?;
    let cmpl = bsp.am().counter()?;
    if me == 0 {
        bsp.sync()?;
    } else {
        bsp.am()
            .send(0, h, &[2u8], &[8u64; 4], Counters::none().cmpl(&cmpl))?;
        bsp.am().wait_counter(&cmpl, 1)?;
        bsp.sync()?;
    }
    check_eq!(
        bsp,
        *done.borrow(),
        if me == 0 { 2 * (p - 1) as u64 } else { 0 }
    );
    bsp.am().term()
}

#[test]
fn a_waiting_target_and_an_origin_waiting_on_a_syncing_target_make_progress() {
    scenario(progress);
}

/// Completion handlers that answer: every process pings its right
/// neighbour, whose completion handler pongs back. A pong sent while its
/// process waits in a sync is held until the sync returns, and is handled
/// by the next sync at the latest.
fn ping_pong(bsp: &mut Bsp) -> Result<(), Error> {
    let pongs = Rc::new(RefCell::new(Vec::new()));
    let mut hs = Handlers::new();
    let pong_handler = Rc::new(RefCell::new(None::<Handler<u64, u8>>));
    let ph = pong_handler.clone();
    let ping = hs.add::<u64, u8>("ping", move |a| {
        let n = a.header()[0];
        let pong = ph.borrow().expect("registered");
        let src = a.src();
        Landing::none().then(move |d| {
            d.send(src, pong, &[n + 1], &[], Counters::none())
                .expect("a pong can be sent");
        })
    });
    let seen = pongs.clone();
    let pong = hs.add::<u64, u8>("pong", move |a| {
        seen.borrow_mut().push((a.src(), a.header()[0]));
        Landing::none()
    });
    *pong_handler.borrow_mut() = Some(pong);
    bsp.am().init(hs)?;
    let r = right(bsp);
    for round in 0..4u64 {
        bsp.am()
            .send(r, ping, &[round * 10], &[], Counters::none())?;
        bsp.sync()?;
        bsp.sync()?;
        let got = pongs.borrow_mut().drain(..).collect::<Vec<_>>();
        check_eq!(bsp, got, vec![(right(bsp), round * 10 + 1)]);
    }
    bsp.am().term()
}

#[test]
fn completion_handlers_answer_across_syncs() {
    scenario(ping_pong);
}

/// In one superstep: an active message lands a word that a put from
/// another process also writes (the put's value stays: puts are applied
/// after every active message of the superstep), and a word that a get
/// reads (the get sees it: active messages land before gets are served).
fn mixing(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, l, r) = (bsp.pid(), left(bsp), right(bsp));
    let x = Area::<u64>::new(bsp, 2);
    let seen = Area::<u64>::new(bsp, 1);
    let xr = x.am_ref();
    let mut hs = Handlers::new();
    let h = hs.add::<u8, u64>("x", move |_| Landing::into(&xr, Target::At(0)));
    bsp.push_reg(&x)?;
    bsp.am().init(hs)?;
    // To our right: an active message writing both words.
    bsp.am()
        .send(r, h, &[0u8; 0], &[100 + me as u64; 2], Counters::none())?;
    // To our left: a put of word 0. From our right: a get of word 1.
    bsp.put(l, &x, 0, &[200 + me as u64])?;
    bsp.get(l, &x, 1, seen.range(..1))?;
    bsp.sync()?;
    // Word 0: the put from our right neighbour; word 1: the active message
    // from our left one.
    check_eq!(bsp, x.as_slice(bsp), &[200 + r as u64, 100 + l as u64][..]);
    // What we got from our left neighbour's word 1: the active message
    // from its left neighbour.
    let ll = (l + bsp.nprocs() - 1) % bsp.nprocs();
    check_eq!(bsp, seen.as_slice(bsp), &[100 + ll as u64][..]);
    bsp.am().term()
}

#[test]
fn active_messages_land_before_gets_and_puts() {
    scenario(mixing);
}

/// A pseudo-random key stream.
fn keys(seed: u64, n: usize) -> Vec<u32> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as u32
        })
        .collect()
}

/// A distributed histogram of 1000 bins, dealt cyclically: each process
/// sends its keys to the bins' owners in messages of up to 512 keys (in
/// the user header), whose handler picks the bin per key.
fn histogram(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let nbins = 1000usize;
    let mine = (nbins - me).div_ceil(p);
    let bins = Area::<u64>::new(bsp, mine);
    let b = bins.am_ref();
    let mut hs = Handlers::new();
    let add = hs.add::<u32, u8>("add", move |a| {
        let ks = a.header().to_vec();
        let b = b.clone();
        Landing::none().then(move |d| {
            let bins = d.area_mut(&b);
            for k in ks {
                bins[k as usize / p] += 1;
            }
        })
    });
    bsp.am().init(hs)?;
    let my_keys = keys(me as u64 + 1, 5000);
    let mut by_owner = vec![Vec::new(); p];
    for &k in &my_keys {
        by_owner[k as usize % p].push(k);
    }
    for (owner, ks) in by_owner.iter().enumerate() {
        for chunk in ks.chunks(512) {
            bsp.am().send(owner, add, chunk, &[], Counters::none())?;
        }
    }
    bsp.sync()?;
    let mut want = vec![0u64; mine];
    for q in 0..p {
        for k in keys(q as u64 + 1, 5000) {
            if k as usize % p == me {
                want[k as usize / p] += 1;
            }
        }
    }
    check_eq!(bsp, bins.as_slice(bsp), &want[..]);
    bsp.am().term()
}

#[test]
fn a_distributed_histogram_matches_the_sequential_one() {
    scenario(histogram);
}

/// Sparse matrix assembly: every process holds COO triplets `(row, col,
/// value)` of a 60 × 60 matrix; each batch goes to the owner of its rows
/// (row % p) in one message of data, landing in a buffer; the completion
/// handler adds the values into the owner's dense rows. Integer values:
/// the sums are exact whatever the order of arrival.
fn assembly(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let n = 60usize;
    let rows = Rc::new(RefCell::new(vec![0i64; n * n]));
    let r2 = rows.clone();
    let mut hs = Handlers::new();
    // The header: the number of triplets the data holds.
    let add = hs.add::<u64, [i64; 3]>("coo", move |a| {
        assert_eq!(a.data_len() as u64, a.header()[0]);
        assert!(a.block_lens().eq([a.data_len()]));
        let rows = r2.clone();
        Landing::<[i64; 3]>::buffer().then(move |d| {
            for t in d.data() {
                rows.borrow_mut()[t[0] as usize * n + t[1] as usize] += t[2];
            }
        })
    });
    bsp.am().init(hs)?;
    let triplets = |q: usize| -> Vec<[i64; 3]> {
        keys(q as u64 + 77, 3 * 400)
            .chunks(3)
            .map(|c| [(c[0] % 60) as i64, (c[1] % 60) as i64, c[2] as i64 - 500])
            .collect()
    };
    let mut by_owner = vec![Vec::new(); p];
    for t in triplets(me) {
        by_owner[t[0] as usize % p].push(t);
    }
    for (owner, ts) in by_owner.iter().enumerate() {
        bsp.am()
            .send(owner, add, &[ts.len() as u64], ts, Counters::none())?;
    }
    bsp.sync()?;
    let mut want = vec![0i64; n * n];
    for q in 0..p {
        for t in triplets(q) {
            if t[0] as usize % p == me {
                want[t[0] as usize * n + t[1] as usize] += t[2];
            }
        }
    }
    check_eq!(bsp, *rows.borrow(), want);
    bsp.am().term()
}

#[test]
fn a_sparse_matrix_assembly_matches_the_sequential_one() {
    scenario(assembly);
}

// ----- errors --------------------------------------------------------------------

/// The handler of [`faulty`]: a header of one byte, data of words.
type Land = Handler<u8, u64>;

/// A run in active-message mode with one handler landing 8 bytes into an
/// area of 2 words; process `p - 1` then runs `fault`.
fn faulty(
    fault: fn(&mut Bsp, Land, &[CounterId]) -> Result<(), Error>,
) -> impl Fn(&mut Bsp) -> Result<(), Error> + Clone {
    move |bsp| {
        let x = Area::<u64>::new(bsp, 2);
        let xr = x.am_ref();
        let mut hs = Handlers::new();
        let h = hs.add::<u8, u64>("land", move |a| match a.header()[0] {
            0 => Landing::into(&xr, Target::At(0)),
            1 => Landing::into(&xr, Target::At(1)), // 16 bytes at word 1: past the end
            2 => Landing::into(&xr, Target::Io(vec![0..1])),
            3 => Landing::into(&xr, Target::Strided(Strided::new(0, 1, 1, 1))),
            4 => Landing::into(&xr, Target::Generic(vec![0..1, 1..2, 1..3])),
            _ => Landing::none(),
        });
        bsp.am().init(hs)?;
        let c = bsp.am().counter()?;
        let ids = exchange_ids(bsp, c.id())?;
        if bsp.pid() == bsp.nprocs() - 1 {
            fault(bsp, h, &ids)?;
        }
        bsp.sync()?;
        bsp.sync()
    }
}

/// The error is the given kind, raised by the last process in `call`.
fn at_send(code: &'static str) -> impl Fn(usize, &Error) + Clone {
    move |n, e| {
        match e.kind() {
            ErrorKind::AmArgument { code: c, .. } => assert_eq!(*c, code, "{e}"),
            k => panic!("expected AmArgument, got {k:?}: {e}"),
        }
        assert_eq!((e.pid(), e.call()), (n - 1, "am_send"), "{e}");
        assert!(
            e.location().is_some_and(|l| l.file().ends_with("am.rs")),
            "{e}"
        );
    }
}

#[test]
fn sending_to_a_pid_out_of_range_is_lapi_err_tgt() {
    expect_error(
        1,
        faulty(|bsp, h, _| {
            let p = bsp.nprocs();
            bsp.am().send(p, h, &[0u8], &[1u64], Counters::none())
        }),
        at_send("LAPI_ERR_TGT"),
    );
}

#[test]
fn a_header_over_4096_bytes_is_lapi_err_uhdr_len() {
    expect_error(
        1,
        faulty(|bsp, h, _| bsp.am().send(0, h, &[0u8; 4097], &[1u64], Counters::none())),
        at_send("LAPI_ERR_UHDR_LEN"),
    );
}

#[test]
fn a_handler_of_another_table_is_lapi_err_hdr_hndlr_null() {
    expect_error(
        1,
        faulty(|bsp, _, _| {
            let mut other = Handlers::new();
            other.add::<u8, u8>("a", |_| Landing::none());
            let h = other.add::<u8, u8>("b", |_| Landing::none());
            bsp.am().send(0, h, &[0u8], &[], Counters::none())
        }),
        at_send("LAPI_ERR_HDR_HNDLR_NULL"),
    );
}

#[test]
fn a_stride_below_the_block_is_lapi_err_org_stride() {
    expect_error(
        1,
        faulty(|bsp, h, _| {
            let data = [0u64; 8];
            let src = Source::Strided(&data, Strided::new(0, 2, 1, 3));
            bsp.am().send(0, h, &[3u8], src, Counters::none())
        }),
        at_send("LAPI_ERR_ORG_STRIDE"),
    );
}

#[test]
fn a_range_outside_the_source_is_lapi_err_org_vec_addr() {
    expect_error(
        1,
        faulty(|bsp, h, _| {
            let data = [0u64; 4];
            bsp.am()
                .send(0, h, &[2u8], Source::Io(&data, &[2..5]), Counters::none())
        }),
        at_send("LAPI_ERR_ORG_VEC_ADDR"),
    );
}

#[test]
fn more_data_than_a_message_carries_is_lapi_err_data_len() {
    expect_error(
        1,
        faulty(|bsp, h, _| {
            // 2^18 + 1 pieces of the same 8 KiB (1024 words): 2 GiB and
            // 8 KiB, refused before anything is copied.
            let data = vec![0u64; 1024];
            let pieces = vec![0..1024; (1 << 18) + 1];
            bsp.am().send(
                0,
                h,
                &[4u8],
                Source::Generic(&data, &pieces),
                Counters::none(),
            )
        }),
        at_send("LAPI_ERR_DATA_LEN"),
    );
}

/// Large messages (data in pieces after the record): 3 MiB into an area
/// through a strided landing, 5 MiB into a buffer, and a GENERIC landing
/// that holds less than the message (the rest is dropped), each checked
/// byte for byte, with the counters.
fn large(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, l, r) = (bsp.pid(), left(bsp), right(bsp));
    let n = 3 << 17; // u64s: 3 MiB
    let area = Area::<u64>::new(bsp, 2 * n);
    let a = area.am_ref();
    let got = Rc::new(RefCell::new(Vec::new()));
    let g = got.clone();
    let mut hs = Handlers::new();
    let h = hs.add::<u8, u64>("large", move |arr| match arr.header()[0] {
        // Every other element of the area.
        0 => Landing::into(&a, Target::Strided(Strided::new(0, 1, 2, n))),
        1 => {
            let g = g.clone();
            Landing::buffer().then(move |d| *g.borrow_mut() = d.take_data())
        }
        // GENERIC into 1000 elements at 10 and 5 at 2 * n - 5.
        _ => Landing::into(&a, Target::Generic(vec![10..1010, 2 * n - 5..2 * n])),
    });
    bsp.am().init(hs)?;
    let tgt = bsp.am().counter()?;
    let ids = exchange_ids(bsp, tgt.id())?;
    let cmpl = bsp.am().counter()?;
    let mine: Vec<u64> = (0..n as u64).map(|i| i * 7 + me as u64).collect();
    let theirs: Vec<u64> = (0..n as u64).map(|i| i * 7 + l as u64).collect();
    let packed = Source::Strided(&mine, Strided::new(0, 1, 1, n));
    bsp.am().send(
        r,
        h,
        &[0u8],
        packed,
        Counters::none().tgt(ids[r]).cmpl(&cmpl),
    )?;
    bsp.am().wait_counter(&tgt, 1)?;
    let s = area.as_slice(bsp);
    check!(bsp, s.iter().step_by(2).eq(theirs.iter()));
    check!(bsp, s.iter().skip(1).step_by(2).all(|&x| x == 0));
    bsp.am().wait_counter(&cmpl, 1)?;
    bsp.sync()?;
    let five: Vec<u64> = (0..(5 << 17) as u64).map(|i| i ^ me as u64).collect();
    bsp.am().send(r, h, &[1u8], &five, Counters::none())?;
    bsp.sync()?;
    let want: Vec<u64> = (0..(5 << 17) as u64).map(|i| i ^ l as u64).collect();
    check!(bsp, *got.borrow() == want);
    bsp.am().send(
        r,
        h,
        &[2u8],
        Source::Generic(&mine, &[0..n]),
        Counters::none(),
    )?;
    bsp.sync()?;
    let s = area.as_slice(bsp);
    check!(bsp, s[10..1010] == theirs[..1000]);
    check!(bsp, s[2 * n - 5..] == theirs[1000..1005]);
    bsp.am().term()
}

#[test]
fn large_messages_land_in_pieces() {
    scenario(large);
}

/// The error is an `AmTarget` on process 0 (the target) about a message
/// from the last process, mentioning `needle`.
fn on_target(needle: &'static str) -> impl Fn(usize, &Error) + Clone {
    move |n, e| {
        match e.kind() {
            ErrorKind::AmTarget { origin, reason, .. } => {
                assert_eq!(*origin, n - 1, "{e}");
                assert!(reason.contains(needle), "{e}");
            }
            k => panic!("expected AmTarget, got {k:?}: {e}"),
        }
        assert_eq!(e.pid(), 0, "{e}");
    }
}

#[test]
fn a_landing_past_the_end_of_its_area_fails_on_the_target() {
    expect_error(
        1,
        faulty(|bsp, h, _| bsp.am().send(0, h, &[1u8], &[1u64, 2], Counters::none())),
        on_target("lands 16 bytes at element 1 of an area of 2 elements"),
    );
}

#[test]
fn a_landing_of_another_kind_fails_on_the_target() {
    expect_error(
        1,
        faulty(|bsp, h, _| bsp.am().send(0, h, &[2u8], &[1u64], Counters::none())),
        on_target("io-vector target for Contiguous data"),
    );
}

#[test]
fn an_io_vector_landing_of_other_lengths_fails_on_the_target() {
    expect_error(
        1,
        faulty(|bsp, h, _| {
            let data = [1u64, 2];
            bsp.am()
                .send(0, h, &[2u8], Source::Io(&data, &[0..2]), Counters::none())
        }),
        on_target("block 0 has 8 bytes on the target and 16 on the origin"),
    );
}

#[test]
fn a_strided_landing_of_other_blocks_fails_on_the_target() {
    expect_error(
        1,
        faulty(|bsp, h, _| {
            let data = [1u64, 2, 3, 4];
            bsp.am().send(
                0,
                h,
                &[3u8],
                Source::Strided(&data, Strided::new(0, 1, 2, 2)),
                Counters::none(),
            )
        }),
        on_target("strided target has 1 blocks of 1 elements of 8 bytes, the origin 2 of 8 bytes"),
    );
}

#[test]
fn data_without_a_landing_fails_on_the_target() {
    expect_error(
        1,
        faulty(|bsp, h, _| bsp.am().send(0, h, &[9u8], &[1u64], Counters::none())),
        on_target("gave no landing"),
    );
}

#[test]
fn a_target_counter_that_is_not_one_fails_on_the_target() {
    expect_error(
        1,
        faulty(|bsp, h, ids| {
            // Process 0's id, with another generation.
            let mut forged = ids[0];
            let bytes = bytemuck::bytes_of_mut(&mut forged);
            bytes[4] ^= 1;
            bsp.am()
                .send(0, h, &[0u8], &[1u64], Counters::none().tgt(forged))
        }),
        on_target("not a counter of this process"),
    );
}

#[test]
fn handlers_registered_in_another_order_fail_on_the_target() {
    expect_error(
        2,
        |bsp| {
            let mut hs = Handlers::new();
            let names = if bsp.pid() == 0 {
                ["a", "b"]
            } else {
                ["b", "a"]
            };
            let first = hs.add::<u8, u8>(names[0], |_| Landing::none());
            hs.add::<u8, u8>(names[1], |_| Landing::none());
            bsp.am().init(hs)?;
            if bsp.pid() == bsp.nprocs() - 1 {
                bsp.am().send(0, first, &[0u8], &[], Counters::none())?;
            }
            bsp.sync()
        },
        on_target("another name"),
    );
}

#[test]
fn am_init_on_some_processes_only_is_an_error() {
    expect_error(
        2,
        |bsp| {
            if bsp.pid() == 0 {
                bsp.am().init(Handlers::new())
            } else {
                bsp.sync()
            }
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::AmMismatch { .. }), "{e}");
        },
    );
}

#[test]
fn sending_outside_active_message_mode_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let mut hs = Handlers::new();
            let h = hs.add::<u8, u8>("h", |_| Landing::none());
            drop(hs);
            bsp.am().send(0, h, &[0u8], &[], Counters::none())
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::AmMismatch { .. }), "{e}");
            assert_eq!(e.call(), "am_send", "{e}");
        },
    );
}

#[test]
fn am_term_on_some_processes_only_is_an_error() {
    expect_error(
        2,
        |bsp| {
            bsp.am().init(Handlers::new())?;
            if bsp.pid() == 0 {
                bsp.am().term()
            } else {
                bsp.sync()
            }
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::AmMismatch { .. }), "{e}");
        },
    );
}

#[test]
fn a_target_counter_dropped_by_its_process_fails_on_the_target() {
    expect_error(
        1,
        |bsp| {
            let mut hs = Handlers::new();
            let h = hs.add::<u8, u8>("h", |_| Landing::none());
            bsp.am().init(hs)?;
            let c = bsp.am().counter()?;
            let ids = exchange_ids(bsp, c.id())?;
            drop(c);
            bsp.sync()?;
            if bsp.pid() == bsp.nprocs() - 1 {
                let to = Counters::none().tgt(ids[0]);
                bsp.am().send(0, h, &[0u8], &[], to)?;
            }
            bsp.sync()
        },
        on_target("which was dropped"),
    );
}

/// Every process floods its right neighbour with messages of 8 KiB, far
/// more than an inbox holds, without waiting: the backlog keeps them in
/// order, the fence of the sync waits for all, and every one lands.
fn flood(bsp: &mut Bsp) -> Result<(), Error> {
    let n = 600u64;
    let got = Rc::new(RefCell::new(Vec::new()));
    let g = got.clone();
    let mut hs = Handlers::new();
    let h = hs.add::<u64, u64>("flood", move |a| {
        let seq = a.header()[0];
        let g = g.clone();
        Landing::buffer().then(move |d| {
            let data = d.data();
            assert!(data.len() == 1024 && data.iter().all(|&x| x == seq));
            g.borrow_mut().push(seq);
        })
    });
    bsp.am().init(hs)?;
    let sent = bsp.am().counter()?;
    let r = right(bsp);
    for seq in 0..n {
        let data = [seq; 1024];
        let c = Counters::none().org(&sent);
        bsp.am().send(r, h, &[seq], &data, c)?;
    }
    check_eq!(bsp, sent.get(), n);
    bsp.sync()?;
    check_eq!(bsp, *got.borrow(), (0..n).collect::<Vec<_>>());
    bsp.am().term()
}

#[test]
fn a_flood_of_messages_lands_in_order_after_the_sync() {
    scenario(flood);
}

#[test]
fn counters_of_an_earlier_session_are_refused() {
    expect_error(
        1,
        |bsp| {
            bsp.am().init(Handlers::new())?;
            let old = bsp.am().counter()?;
            bsp.am().term()?;
            bsp.am().init(Handlers::new())?;
            let new = bsp.am().counter()?;
            // The first counter of each session would get the same id
            // without sessions.
            check!(bsp, new.id() != old.id());
            bsp.am().wait_counter(&old, 1)
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::AmMismatch { .. }), "{e}");
            assert_eq!(e.call(), "am_wait_counter", "{e}");
        },
    );
}

#[test]
fn a_fence_towards_a_process_that_ended_fails_instead_of_waiting() {
    if common::mpi_mode() {
        return; // the ranks' states are not shared on mpi
    }
    expect_error(
        2,
        |bsp| {
            let mut hs = Handlers::new();
            let h = hs.add::<u8, u8>("h", |_| Landing::none());
            bsp.am().init(hs)?;
            if bsp.pid() != 1 {
                return Ok(()); // ends without handling anything
            }
            bsp.am().send(0, h, &[0u8], &[], Counters::none())?;
            bsp.am().fence()
        },
        |_, e| match e.kind() {
            ErrorKind::AmMismatch { detail } => assert!(detail.contains("process 0 ended"), "{e}"),
            k => panic!("expected AmMismatch, got {k:?}: {e}"),
        },
    );
}

#[test]
fn a_wait_for_messages_that_cannot_come_fails_instead_of_waiting() {
    if common::mpi_mode() {
        return; // the ranks' states are not shared on mpi
    }
    expect_error(
        1,
        |bsp| {
            bsp.am().init(Handlers::new())?;
            if bsp.pid() != bsp.nprocs() - 1 {
                return Ok(());
            }
            let c = bsp.am().counter()?;
            bsp.am().wait_counter(&c, 1)
        },
        |_, e| match e.kind() {
            ErrorKind::AmMismatch { detail } => assert!(detail.contains("cannot come"), "{e}"),
            k => panic!("expected AmMismatch, got {k:?}: {e}"),
        },
    );
}

#[test]
fn a_fence_with_a_full_inbox_ends_when_the_run_is_stopped() {
    expect_error(
        2,
        |bsp| {
            let mut hs = Handlers::new();
            let h = hs.add::<u8, u8>("h", |_| Landing::buffer());
            bsp.am().init(hs)?;
            if bsp.pid() == 0 {
                std::thread::sleep(Duration::from_millis(100));
                bsp.abort("stop here");
            }
            if bsp.pid() == 1 {
                // 4 MiB for process 0, which never takes them.
                let data = vec![7u8; 64 << 10];
                for _ in 0..64 {
                    bsp.am().send(0, h, &[0u8], &data, Counters::none())?;
                }
                bsp.am().fence()?;
            }
            bsp.sync()
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::Aborted { .. }), "{e}");
        },
    );
}
