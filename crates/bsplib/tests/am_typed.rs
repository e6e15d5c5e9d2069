//! The typed active messages (`bsp.am()`, `Handlers::add::<H, D>`) end to
//! end on every engine: a header struct derived `Pod` read as `&[H]`, data
//! of a `Pod` struct landing into an area of that struct (contiguous and
//! io-vector), a message without data, a header of `u128`s (aligned to 16,
//! more than a record's 8) with strided `u16` data into a buffer whose
//! completion handler answers with typed data; then the check that both
//! ends registered the same types, and errors that name the caller's line.

#![allow(clippy::single_range_in_vec_init)] // one-block vectors are what the tests send

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use bsplib::am::{Counters, Done, Handler, Handlers, Kind, Landing, Source, Target};
use bsplib::{Area, Bsp, Error, ErrorKind, Strided};
use bytemuck::{Pod, Zeroable};
use common::{expect_error, left, right, scenario};

/// A header: where the data goes, how many elements, and from whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
struct Slot {
    at: u32,
    n: u32,
    from: u64,
}

/// Data: a point and its id.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Particle {
    pos: [f32; 3],
    id: u32,
}

/// The four particles process `q` sends.
fn particles_of(q: usize) -> Vec<Particle> {
    (0..4)
        .map(|i| Particle {
            pos: [q as f32, i as f32, 0.5],
            id: (100 * q + i) as u32,
        })
        .collect()
}

/// The `u16`s process `q` sends strided, and their sum over the selection
/// `Strided::new(0, 2, 3, 4)` (elements 0, 1, 3, 4, 6, 7, 9, 10).
fn shorts_of(q: usize) -> (Vec<u16>, u64) {
    let v: Vec<u16> = (0..12).map(|i| (1000 * q + i) as u16).collect();
    let sum = [0, 1, 3, 4, 6, 7, 9, 10]
        .iter()
        .map(|&i| u64::from(v[i]))
        .sum();
    (v, sum)
}

fn typed(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p, l, r) = (bsp.pid(), bsp.nprocs(), left(bsp), right(bsp));
    // Slot `q` (4 particles from 4q) holds what process q sent; `mirror`
    // slot `q` (3 particles from 3q) what q sent block for block.
    let area = Area::<Particle>::new(bsp, 4 * p);
    let mirror = Area::<Particle>::new(bsp, 3 * p);
    let (to_area, to_mirror) = (area.am_ref(), mirror.am_ref());
    let hellos = Rc::new(RefCell::new(Vec::new()));
    let answers = Rc::new(RefCell::new(Vec::new()));
    let answer_handler = Rc::new(Cell::new(None::<Handler<u64, u64>>));
    let mut hs = Handlers::new();

    // A header struct, data of particles into an area of particles.
    let place = hs.add::<Slot, Particle>("place", move |a| {
        let s = a.header()[0];
        assert_eq!(a.header().len(), 1);
        assert_eq!((a.kind(), a.data_len()), (Kind::Contiguous, s.n as usize));
        assert_eq!(s.from, a.src() as u64);
        Landing::into(&to_area, Target::At(s.at as usize))
    });
    // The same types, io-vector blocks of the origin's to the target's.
    let scatter = hs.add::<Slot, Particle>("scatter", move |a| {
        let at = a.header()[0].at as usize;
        assert_eq!(a.kind(), Kind::Io);
        assert!(a.block_lens().eq([1, 2]));
        Landing::into(&to_mirror, Target::Io(vec![at..at + 1, at + 1..at + 3]))
    });
    // A message without data: a header only.
    let seen = hellos.clone();
    let hello = hs.add::<Slot, u8>("hello", move |a| {
        assert_eq!(a.data_len(), 0);
        let (src, slot) = (a.src(), a.header()[0]);
        let seen = seen.clone();
        Landing::none().then(move |_| seen.borrow_mut().push((src, slot)))
    });
    // A header of `u128` (aligned to 16), strided `u16`s into a buffer;
    // the completion handler answers with their sum.
    let reply = answer_handler.clone();
    let sum = hs.add::<u128, u16>("sum", move |a| {
        let key = a.header()[0];
        assert_eq!((a.kind(), a.data_len()), (Kind::Strided, 8));
        assert!(a.block_lens().eq([2; 4]));
        let answer = reply.get().expect("registered");
        Landing::buffer().then(move |d: &mut Done<'_, u16>| {
            let total: u64 = d.data().iter().map(|&x| u64::from(x)).sum();
            d.send(
                d.src(),
                answer,
                &[(key >> 64) as u64],
                &[total],
                Counters::none(),
            )
            .expect("an answer can be sent");
        })
    });
    let got = answers.clone();
    let answer = hs.add::<u64, u64>("answer", move |a| {
        let (src, who) = (a.src(), a.header()[0]);
        let got = got.clone();
        Landing::<u64>::buffer().then(move |d| got.borrow_mut().push((src, who, d.take_data())))
    });
    answer_handler.set(Some(answer));
    bsp.am().init(hs)?;

    let mine = particles_of(me);
    let slot = |at: usize, n: usize| Slot {
        at: at as u32,
        n: n as u32,
        from: me as u64,
    };
    let copied = bsp.am().counter()?;
    bsp.am().send(
        r,
        place,
        &[slot(4 * me, 4)],
        &mine,
        Counters::none().org(&copied),
    )?;
    check_eq!(bsp, copied.get(), 1); // the data was copied at the call
    let blocks = Source::Io(&mine, &[0..1, 2..4]);
    bsp.am()
        .send(r, scatter, &[slot(3 * me, 3)], blocks, Counters::none())?;
    for q in 0..p {
        bsp.am()
            .send(q, hello, &[slot(0, 0)], &[], Counters::none())?;
    }
    let (shorts, _) = shorts_of(me);
    let key = (me as u128) << 64 | 0xabc;
    let picked = Source::Strided(&shorts, Strided::new(0, 2, 3, 4));
    bsp.am().send(r, sum, &[key], picked, Counters::none())?;
    bsp.sync()?;

    // What our left neighbour sent, in its slots; the others untouched.
    let theirs = particles_of(l);
    let s = area.as_slice(bsp);
    check_eq!(bsp, &s[4 * l..4 * l + 4], &theirs[..]);
    check!(
        bsp,
        (0..4 * p).all(|i| i / 4 == l || s[i] == Particle::zeroed())
    );
    let m = mirror.as_slice(bsp);
    check_eq!(
        bsp,
        [m[3 * l], m[3 * l + 1], m[3 * l + 2]],
        [theirs[0], theirs[2], theirs[3]]
    );
    let mut got = hellos.borrow_mut().drain(..).collect::<Vec<_>>();
    got.sort_by_key(|&(src, _)| src);
    let want: Vec<_> = (0..p)
        .map(|q| {
            let s = Slot {
                at: 0,
                n: 0,
                from: q as u64,
            };
            (q, s)
        })
        .collect();
    check_eq!(bsp, got, want);

    // The answers, sent by completion handlers (held by a target that
    // handled the question in its sync), are all in after the next sync.
    bsp.sync()?;
    let got = answers.borrow_mut().drain(..).collect::<Vec<_>>();
    check_eq!(bsp, got, vec![(r, me as u64, vec![shorts_of(me).1])]);
    bsp.am().term()
}

#[test]
fn typed_headers_and_data_land_as_typed_values() {
    scenario(typed);
}

#[test]
fn handlers_of_other_types_on_the_two_ends_fail_on_the_target() {
    expect_error(
        2,
        |bsp| {
            let mut hs = Handlers::new();
            let h = hs.add::<u8, u8>("h", |_| Landing::none());
            if bsp.pid() == 0 {
                // Process 0 reads the header as `u64`s.
                hs = Handlers::new();
                hs.add::<u64, u8>("h", |_| Landing::none());
            }
            bsp.am().init(hs)?;
            if bsp.pid() == bsp.nprocs() - 1 {
                bsp.am().send(0, h, &[1, 2, 3], &[], Counters::none())?;
            }
            bsp.sync()
        },
        |n, e| match e.kind() {
            ErrorKind::AmTarget { origin, reason, .. } => {
                assert_eq!((e.pid(), *origin), (0, n - 1), "{e}");
                assert!(reason.contains("a header of 3 bytes"), "{e}");
                assert!(reason.contains("same types"), "{e}");
            }
            k => panic!("expected AmTarget, got {k:?}: {e}"),
        },
    );
}

// ----- errors name the caller's line ----------------------------------------------

/// A send to a process that does not exist, on line `SEND_LINE`.
const SEND_LINE: u32 = line!() + 2;
fn send_nowhere(bsp: &mut Bsp, h: Handler<u8, u8>) -> Result<(), Error> {
    bsp.am().send(usize::MAX, h, &[1], &[], Counters::none())
}

/// A poll outside active-message mode, on line `POLL_LINE`.
const POLL_LINE: u32 = line!() + 2;
fn poll_outside(bsp: &mut Bsp) -> Result<(), Error> {
    bsp.am().poll()
}

/// The error is `call`'s, at `line` of this file.
fn at_line(call: &'static str, line: u32) -> impl Fn(usize, &Error) + Clone {
    move |_, e| {
        assert_eq!(e.call(), call, "{e}");
        let loc = e.location().expect("a location");
        assert!(loc.file().ends_with("am_typed.rs"), "{e}");
        assert_eq!(loc.line(), line, "{e}");
    }
}

#[test]
fn an_error_of_send_names_the_callers_line() {
    expect_error(
        1,
        |bsp| {
            let mut hs = Handlers::new();
            let h = hs.add::<u8, u8>("h", |_| Landing::none());
            bsp.am().init(hs)?;
            send_nowhere(bsp, h)
        },
        at_line("am_send", SEND_LINE),
    );
}

#[test]
fn an_error_of_poll_names_the_callers_line() {
    expect_error(1, poll_outside, at_line("am_poll", POLL_LINE));
}
