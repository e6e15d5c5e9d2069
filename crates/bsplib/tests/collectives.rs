//! The collectives (`Bsp::broadcast` ... `Bsp::exscan_with`) on every
//! engine, p = 1, 2, 3, 4, 7: each against a sequential computation, for
//! several element types, empty inputs and sizes that do not divide by p;
//! a non-commutative operator (2 × 2 integer matrices: the product in pid
//! order); floating-point sums bit for bit in pid order; the superstep
//! rules (puts before a collective land by it, messages sent before it are
//! in the queue after it); and every mismatch and argument error.

mod common;

use bsplib::{Algorithm, Area, Bsp, Error, ErrorKind, Op};
use common::{expect_error, scenario};

/// The value process `q` contributes at index `i`.
fn val(q: usize, i: usize) -> u64 {
    (q as u64 + 1) * 1000 + i as u64
}

/// The algorithms every scenario runs with, in turn.
const ALGORITHMS: [Algorithm; 3] = [Algorithm::Auto, Algorithm::OnePhase, Algorithm::TwoPhase];

fn everything(bsp: &mut Bsp) -> Result<(), Error> {
    for algorithm in ALGORITHMS {
        bsp.collectives().set_algorithm(algorithm);
        everything_with(bsp)?;
    }
    Ok(())
}

fn everything_with(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    // 5000 elements: above the size where the `mpi` engine hands
    // broadcasts and reductions to MPI's own collectives.
    for n in [0usize, 1, 5, 1000, 5000] {
        let mine: Vec<u64> = (0..n).map(|i| val(me, i)).collect();
        let of = |q: usize| -> Vec<u64> { (0..n).map(|i| val(q, i)).collect() };
        // Broadcast from every root.
        for root in 0..p {
            let mut x = mine.clone();
            bsp.collectives().broadcast(root, &mut x)?;
            check_eq!(bsp, x, of(root));
        }
        // Gather and all-gather.
        let root = p - 1;
        let all: Vec<u64> = (0..p).flat_map(of).collect();
        let g = bsp.collectives().gather(root, &mine)?;
        check_eq!(bsp, g, (me == root).then(|| all.clone()));
        check_eq!(bsp, bsp.collectives().all_gather(&mine)?, all.clone());
        // Scatter and all-to-all: blocks of n.
        let src = (me == 0).then_some(&all[..]);
        let mut got = vec![0u64; n];
        bsp.collectives().scatter(0, src, &mut got)?;
        check_eq!(bsp, got, of(me));
        let blocks: Vec<u64> = (0..p * n).map(|i| val(me, i)).collect();
        let mut dst = vec![0u64; p * n];
        bsp.collectives().all_to_all(&blocks, &mut dst)?;
        let want: Vec<u64> = (0..p)
            .flat_map(|q| (me * n..(me + 1) * n).map(move |i| val(q, i)))
            .collect();
        check_eq!(bsp, dst, want);
        // Reductions and scans (wrapping sums: exact).
        let sum_upto = |k: usize| -> Vec<u64> {
            (0..n)
                .map(|i| (0..k).map(|q| val(q, i)).fold(0, u64::wrapping_add))
                .collect()
        };
        let mut x = mine.clone();
        bsp.collectives().all_reduce(&mut x, Op::Sum)?;
        check_eq!(bsp, x, sum_upto(p));
        let r = bsp.collectives().reduce(root, &mine, Op::Max)?;
        check_eq!(bsp, r, (me == root).then(|| of(p - 1)));
        let mut x = mine.clone();
        bsp.collectives().scan(&mut x, Op::Sum)?;
        check_eq!(bsp, x, sum_upto(me + 1));
        let e = bsp
            .collectives()
            .exscan_with(&mine, |a, b| a.wrapping_add(*b))?;
        check_eq!(bsp, e, (me > 0).then(|| sum_upto(me)));
    }
    Ok(())
}

#[test]
fn every_collective_matches_the_sequential_computation() {
    scenario(everything);
}

/// 2 × 2 matrices of wrapping integers: associative, not commutative.
fn mul(a: &[u32; 4], b: &[u32; 4]) -> [u32; 4] {
    let m = |x: u32, y: u32| x.wrapping_mul(y);
    [
        m(a[0], b[0]).wrapping_add(m(a[1], b[2])),
        m(a[0], b[1]).wrapping_add(m(a[1], b[3])),
        m(a[2], b[0]).wrapping_add(m(a[3], b[2])),
        m(a[2], b[1]).wrapping_add(m(a[3], b[3])),
    ]
}

fn matrix(q: usize) -> [u32; 4] {
    let q = q as u32;
    [q + 1, 2, q * 3, 1 + q * q]
}

/// Products in pid order (a non-commutative operator), and float sums bit
/// for bit in pid order, with every algorithm.
fn ordered(bsp: &mut Bsp) -> Result<(), Error> {
    for algorithm in ALGORITHMS {
        bsp.collectives().set_algorithm(algorithm);
        ordered_with(bsp)?;
        ordered_large(bsp)?;
    }
    Ok(())
}

/// The same on 5000 elements (split into blocks by the two-phase forms,
/// handed to MPI on `mpi`): element `i` of process `q` is `matrix(q + i)`
/// and `0.1 * (q + 1)^3 + i`.
fn ordered_large(bsp: &mut Bsp) -> Result<(), Error> {
    const N: usize = 5000;
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let mut x: Vec<[u32; 4]> = (0..N).map(|i| matrix(me + i)).collect();
    bsp.collectives().all_reduce_with(&mut x, mul)?;
    for (i, got) in x.iter().enumerate().step_by(97) {
        let want = (1..p).fold(matrix(i), |acc, q| mul(&acc, &matrix(q + i)));
        check_eq!(bsp, *got, want);
    }
    let f = |q: usize, i: usize| 0.1f64 * ((q + 1) as f64).powi(3) + i as f64 * 1e-3;
    let mine: Vec<f64> = (0..N).map(|i| f(me, i)).collect();
    let r = bsp.collectives().reduce(p - 1, &mine, Op::Sum)?;
    if me == p - 1 {
        let r = r.unwrap_or_default();
        check_eq!(bsp, r.len(), N);
        for (i, got) in r.iter().enumerate() {
            let want = (1..p).fold(f(0, i), |a, q| a + f(q, i));
            check_eq!(bsp, got.to_bits(), want.to_bits());
        }
    } else {
        check_eq!(bsp, r, None);
    }
    let mut y = mine.clone();
    bsp.collectives().broadcast(p / 2, &mut y)?;
    check_eq!(bsp, y, (0..N).map(|i| f(p / 2, i)).collect::<Vec<_>>());
    Ok(())
}

fn ordered_with(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let product = |k: usize| (1..k).fold(matrix(0), |acc, q| mul(&acc, &matrix(q)));
    let mut x = [matrix(me)];
    bsp.collectives().all_reduce_with(&mut x, mul)?;
    check_eq!(bsp, x[0], product(p));
    let mut x = [matrix(me)];
    bsp.collectives().scan_with(&mut x, mul)?;
    check_eq!(bsp, x[0], product(me + 1));
    // Floats: 0.1 * (q + 1)^3 summed left to right.
    let f = |q: usize| 0.1f64 * ((q + 1) as f64).powi(3);
    let mut s = [f(me)];
    bsp.collectives().all_reduce(&mut s, Op::Sum)?;
    let want = (1..p).fold(f(0), |a, q| a + f(q));
    check_eq!(bsp, s[0].to_bits(), want.to_bits());
    Ok(())
}

#[test]
fn reductions_combine_in_pid_order() {
    scenario(ordered);
}

/// A collective ends the superstep like `sync`: puts issued before it
/// land, and messages sent before it are in the queue after it (also
/// after the two supersteps of a two-phase one, and with their tags).
fn like_sync(bsp: &mut Bsp) -> Result<(), Error> {
    for algorithm in ALGORITHMS {
        bsp.collectives().set_algorithm(algorithm);
        like_sync_with(bsp)?;
        queue_kept(bsp)?;
    }
    Ok(())
}

fn queue_kept(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let right = (me + 1) % p;
    let left = (me + p - 1) % p;
    bsp.set_tagsize(4)?;
    bsp.sync()?;
    for k in 0..3u32 {
        let payload = vec![me as u8; k as usize * 3 + 1];
        bsp.send(right, &(100 * me as u32 + k).to_ne_bytes(), &payload)?;
    }
    let mut x: Vec<u64> = (0..5000).map(|i| (me * i) as u64).collect();
    bsp.collectives().all_reduce(&mut x, Op::Sum)?;
    check_eq!(bsp, x[7], (0..p).map(|q| (q * 7) as u64).sum::<u64>());
    check_eq!(bsp, bsp.qsize(), (3, 1 + 4 + 7));
    let mut seen = Vec::new();
    while let Some(m) = bsp.hpmove() {
        let tag: u32 = m.tag_as().unwrap_or_default();
        check_eq!(
            bsp,
            m.payload(),
            &vec![left as u8; (tag % 100) as usize * 3 + 1][..]
        );
        seen.push(tag);
    }
    seen.sort_unstable();
    check_eq!(
        bsp,
        seen,
        (0..3).map(|k| 100 * left as u32 + k).collect::<Vec<_>>()
    );
    bsp.set_tagsize(0)?;
    bsp.sync()?;
    Ok(())
}

fn like_sync_with(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let right = (me + 1) % p;
    let left = (me + p - 1) % p;
    let x = Area::<u32>::new(bsp, 1);
    bsp.push_reg(&x)?;
    bsp.sync()?;
    bsp.put(right, &x, 0, &[me as u32 + 7])?;
    bsp.send(right, &[], &[me as u8])?;
    let mut b = [me as u16];
    bsp.collectives().broadcast(0, &mut b)?;
    check_eq!(bsp, b, [0]);
    check_eq!(bsp, x.as_slice(bsp), &[left as u32 + 7][..]);
    check_eq!(bsp, bsp.qsize().0, 1);
    let m = bsp
        .hpmove()
        .expect("the message sent before the collective");
    check_eq!(bsp, m.payload(), &[left as u8][..]);
    Ok(())
}

#[test]
fn a_collective_ends_the_superstep_like_sync() {
    scenario(like_sync);
}

fn mismatch(needle: &'static str) -> impl Fn(usize, &Error) + Clone {
    move |_, e| match e.kind() {
        ErrorKind::CollectiveMismatch { detail } => assert!(detail.contains(needle), "{e}"),
        k => panic!("expected CollectiveMismatch, got {k:?}: {e}"),
    }
}

#[test]
fn a_collective_on_some_processes_only_is_an_error() {
    expect_error(
        2,
        |bsp| {
            if bsp.pid() == 0 {
                bsp.sync()
            } else {
                bsp.collectives().broadcast(1, &mut [0u8; 4])
            }
        },
        mismatch("broadcast"),
    );
}

#[test]
fn another_root_is_an_error() {
    expect_error(
        2,
        |bsp| {
            let root = usize::from(bsp.pid() == 1);
            bsp.collectives().broadcast(root, &mut [0u8; 4])
        },
        mismatch("root"),
    );
}

/// Large enough for MPI's own broadcast on `mpi`: process 1 agrees with
/// its left neighbour and must not wait in MPI for the others.
#[test]
fn another_root_is_an_error_for_large_data() {
    expect_error(
        3,
        |bsp| {
            let root = usize::from(bsp.pid() == 2);
            bsp.collectives().broadcast(root, &mut vec![0u8; 64 << 10])
        },
        mismatch("root"),
    );
}

#[test]
fn another_size_is_an_error() {
    expect_error(
        2,
        |bsp| {
            let n = if bsp.pid() == 1 { 3 } else { 2 };
            bsp.collectives().all_gather(&vec![0u32; n]).map(drop)
        },
        mismatch("bytes"),
    );
}

#[test]
fn another_algorithm_is_an_error() {
    expect_error(
        2,
        |bsp| {
            if bsp.pid() == 1 {
                bsp.collectives().set_algorithm(Algorithm::TwoPhase);
            } else {
                bsp.collectives().set_algorithm(Algorithm::OnePhase);
            }
            bsp.collectives().broadcast(0, &mut [0u8; 64])
        },
        mismatch("algorithm"),
    );
}

/// The same bytes in elements of another size: the reductions split the
/// data in blocks of whole elements, which would not line up (on `mpi`
/// the large form's `MPI_Alltoallv` aborted the job with
/// `MPI_ERR_TRUNCATE`; elsewhere each folded the other's bytes as its own
/// type, silently).
#[test]
fn another_element_size_is_an_error() {
    for large in [false, true] {
        expect_error(
            2,
            move |bsp| {
                let n = if large { 8192 } else { 4 };
                if bsp.pid() == 0 {
                    bsp.collectives().all_reduce(&mut vec![1u32; n], Op::Sum)
                } else {
                    bsp.collectives()
                        .all_reduce(&mut vec![1u64; n / 2], Op::Sum)
                }
            },
            // The neighbours' check names the sizes; a process whose left
            // neighbour agrees may first find a block of another length
            // (the two-phase form).
            |_, e| match e.kind() {
                ErrorKind::CollectiveMismatch { detail } => assert!(
                    detail.contains("elements have 4 bytes")
                        || detail.contains("elements have 8 bytes")
                        || detail.contains("did not come with the bytes"),
                    "{e}"
                ),
                k => panic!("expected CollectiveMismatch, got {k:?}: {e}"),
            },
        );
    }
}

#[test]
fn another_named_operator_is_an_error() {
    expect_error(
        2,
        |bsp| {
            let op = if bsp.pid() == 1 { Op::Max } else { Op::Sum };
            bsp.collectives().all_reduce(&mut [1i64], op)
        },
        mismatch("operator"),
    );
}

#[test]
fn another_collective_is_an_error() {
    expect_error(
        2,
        |bsp| {
            if bsp.pid() == 1 {
                bsp.collectives().all_gather(&[0u8]).map(drop)
            } else {
                bsp.collectives().broadcast(0, &mut [0u8])
            }
        },
        mismatch("all_gather"),
    );
}

#[test]
fn a_root_out_of_range_is_an_error_at_the_call() {
    expect_error(
        1,
        |bsp| {
            let p = bsp.nprocs();
            bsp.collectives().broadcast(p, &mut [0u8])
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::PidOutOfRange { .. }), "{e}");
            assert_eq!(e.call(), "broadcast", "{e}");
            assert!(
                e.location()
                    .is_some_and(|l| l.file().ends_with("collectives.rs")),
                "{e}"
            );
        },
    );
}

#[test]
fn a_scatter_source_of_the_wrong_length_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let src = [0u8; 3];
            let root_src = (bsp.pid() == 0).then_some(&src[..]);
            bsp.collectives().scatter(0, root_src, &mut [0u8; 2])
        },
        |_, e| {
            assert!(matches!(e.kind(), ErrorKind::LocalBounds { .. }), "{e}");
            assert_eq!((e.pid(), e.call()), (0, "scatter"), "{e}");
        },
    );
}

#[test]
fn one_op_serves_reductions_and_accumulate_logical_and_replace_included() {
    // `bsplib::Op` is `bsplib::Op`: the logical operators and
    // `Replace` reduce too; an operator not defined on the type is an
    // error at the call, not a panic.
    common::scenario(|bsp| {
        let (me, p) = (bsp.pid() as u32, bsp.nprocs() as u32);
        let mut any = [u32::from(me == p - 1), u32::from(me == 0)];
        bsp.collectives()
            .all_reduce(&mut any, bsplib::Op::LogicalOr)?;
        check_eq!(bsp, any, [1, 1]);
        let mut last = [me];
        bsp.collectives()
            .all_reduce(&mut last, bsplib::Op::Replace)?;
        check_eq!(bsp, last, [p - 1]);
        Ok(())
    });
    common::expect_error(
        1,
        |bsp| {
            let mut x = [1.5f64];
            bsp.collectives().all_reduce(&mut x, bsplib::Op::BitXor)
        },
        |_, e| {
            assert!(
                matches!(
                    e.kind(),
                    bsplib::ErrorKind::AccumulateOperator {
                        op: "bitwise xor",
                        ty: "f64"
                    }
                ),
                "{e}"
            );
            assert_eq!(e.call(), "all_reduce", "{e}");
        },
    );
}
