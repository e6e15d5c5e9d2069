//! Deterministic accumulate (`Bsp::accumulate`, `bsplib::rma`; design in
//! `src/ONE_SIDED.md`) on every engine and process count: the MPI-2
//! seed's `B(map(i)) += A(i)`, a histogram, floating-point sums that are
//! bit-identical to a sequential fold in the documented order (origins in
//! pid order, each origin's accumulates in issue order, after the puts),
//! every operator on every element type against a sequential model,
//! mixing with puts and gets, and every error path.

mod common;

use std::fmt::Debug;

use bsplib::rma::{ElemType, Element, ValueIndex};
use bsplib::Op;
use bsplib::{Area, Bsp, Error, ErrorKind};
use common::{expect_error, for_each_engine, lcg, scenario};

#[test]
fn seed_example_b_of_map_i_plus_equals_a_i() {
    // The MPI-2 example: A and B distributed in blocks of m; every process
    // adds A(i) into B(map(i)), map not one-to-one (several i hit one j).
    const M: usize = 5;
    fn map(i: usize, n: usize) -> usize {
        (i * 7 + 3) % n / 2 * 2 % n
    }
    fn a(i: usize) -> f64 {
        (i as f64) * 0.25 + 1.0
    }
    for_each_engine(
        |bsp| {
            let (p, s) = (bsp.nprocs(), bsp.pid());
            let n = p * M;
            let b = Area::from_vec(bsp, vec![0.5f64; M]);
            bsp.push_reg(&b)?;
            bsp.sync()?;
            for i in s * M..(s + 1) * M {
                let j = map(i, n);
                bsp.accumulate(j / M, &b, j % M, &[a(i)], Op::Sum)?;
            }
            bsp.sync()?;
            Ok(b.as_slice(bsp)
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<u64>>())
        },
        |p, results| {
            let n = p * M;
            // Sequential model: origins in pid order, each in issue order.
            let mut want = vec![0.5f64; n];
            for i in 0..n {
                want[map(i, n)] += a(i);
            }
            let got: Vec<u64> = results.concat();
            let want: Vec<u64> = want.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "p={p}");
        },
    );
}

#[test]
fn histogram_with_concurrent_accumulates_is_exact() {
    // 4 bins per process, bin b on process b % p at index b / p; every
    // process drops 200 pseudo-random values into them, one accumulate
    // each, and adds its count of values into a total on process 0.
    const PER: usize = 4;
    const N: usize = 200;
    fn values(pid: usize, bins: usize) -> Vec<usize> {
        let mut r = lcg(pid as u64 + 11);
        (0..N).map(|_| r() as usize % bins).collect()
    }
    scenario(|bsp| {
        let p = bsp.nprocs();
        let bins = p * PER;
        let hist = Area::<u32>::new(bsp, PER);
        let total = Area::<u64>::new(bsp, 1);
        bsp.push_reg(&hist)?;
        bsp.push_reg(&total)?;
        bsp.sync()?;
        for b in values(bsp.pid(), bins) {
            bsp.accumulate(b % p, &hist, b / p, &[1u32], Op::Sum)?;
        }
        bsp.accumulate(0, &total, 0, &[N as u64], Op::Sum)?;
        bsp.sync()?;
        let mut want = vec![0u32; bins];
        for pid in 0..p {
            for b in values(pid, bins) {
                want[b] += 1;
            }
        }
        let mine: Vec<u32> = (0..PER).map(|k| want[k * p + bsp.pid()]).collect();
        check_eq!(bsp, hist.as_slice(bsp), &mine[..]);
        if bsp.pid() == 0 {
            check_eq!(bsp, total.as_slice(bsp)[0], (N * p) as u64);
        }
        Ok(())
    });
}

/// The contribution of origin `o`'s `k`-th accumulate to element `i`:
/// values of very different magnitudes, so that the order of the sum
/// shows in its bits.
fn float_term(o: usize, k: usize, i: usize) -> f64 {
    let mag = [1e16, 1.0, 1e-7, 3.5][(o + k + i) % 4];
    let sign = if (o * 3 + k) % 2 == 0 { 1.0 } else { -1.0 };
    sign * mag * (1.0 + (o * 31 + k * 7 + i) as f64 / 97.0)
}

#[test]
fn floating_point_sums_are_bit_identical_to_the_documented_order() {
    // Every process accumulates 3 times into each of 6 elements of every
    // process (itself included), targets in a rotated order; the owner's
    // result must be the fold of origins in pid order, each origin's in
    // issue order, bit for bit, on every engine and every run.
    const L: usize = 6;
    const K: usize = 3;
    for_each_engine(
        |bsp| {
            let (p, me) = (bsp.nprocs(), bsp.pid());
            let x = Area::from_vec(bsp, vec![0.1f64; L]);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            for round in 0..2 {
                for t in (0..p).map(|t| (t + me) % p) {
                    for k in 0..K {
                        let v: Vec<f64> =
                            (0..L).map(|i| float_term(me, k + round * K, i)).collect();
                        bsp.accumulate(t, &x, 0, &v, Op::Sum)?;
                    }
                }
                bsp.sync()?;
            }
            Ok(x.as_slice(bsp)
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<u64>>())
        },
        |p, results| {
            let mut want = [0.1f64; L];
            for round in 0..2 {
                for o in 0..p {
                    for k in 0..K {
                        for (i, w) in want.iter_mut().enumerate() {
                            *w += float_term(o, k + round * K, i);
                        }
                    }
                }
            }
            let want: Vec<u64> = want.iter().map(|v| v.to_bits()).collect();
            for (q, got) in results.iter().enumerate() {
                assert_eq!(got, &want, "p={p}, process {q}");
            }
        },
    );
}

#[test]
fn a_large_accumulate_combines_every_element() {
    // 1 MiB of f64 from every process into process 0 (exercises the
    // streams' large sizes on every engine; the values are exact).
    const N: usize = 1 << 17;
    scenario(|bsp| {
        let p = bsp.nprocs();
        let x = Area::from_vec(bsp, vec![1.0f64; N]);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let mine: Vec<f64> = (0..N)
            .map(|i| (i % 1000) as f64 + bsp.pid() as f64)
            .collect();
        bsp.accumulate(0, &x, 0, &mine, Op::Sum)?;
        bsp.sync()?;
        if bsp.pid() == 0 {
            let s = x.as_slice(bsp);
            let base = (p * (p - 1) / 2) as f64;
            for i in (0..N).step_by(997).chain([N - 1]) {
                check_eq!(bsp, s[i], 1.0 + (p * (i % 1000)) as f64 + base);
            }
        }
        Ok(())
    });
}

#[test]
fn puts_land_before_accumulates_and_gets_read_before_both() {
    // In one superstep, on process 0's area: every process accumulates
    // into element 0 BEFORE the last process puts 100 there; the last
    // process also hands over element 1 with put_owned and everyone
    // accumulates there; everyone gets element 0 first. The get sees the
    // old value; the put lands first, then every accumulate, whatever the
    // issue order.
    scenario(|bsp| {
        let p = bsp.nprocs();
        let last = p - 1;
        let x = Area::from_vec(bsp, vec![7i64, 8, 9]);
        let seen = Area::<i64>::new(bsp, 1);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let me = bsp.pid() as i64;
        bsp.get(0, &x, 0, seen.range(..1))?;
        bsp.accumulate(0, &x, 0, &[me + 1, 10 * (me + 1)], Op::Sum)?;
        if bsp.pid() == last {
            bsp.put(0, &x, 0, &[100i64])?;
            bsp.put_owned(0, &x, 1, vec![1000i64])?;
        }
        bsp.accumulate(0, &x, 2, &[1], Op::Sum)?;
        bsp.sync()?;
        check_eq!(bsp, seen.as_slice(bsp)[0], 7);
        if bsp.pid() == 0 {
            let n = p as i64;
            let tri = n * (n + 1) / 2;
            check_eq!(
                bsp,
                x.as_slice(bsp),
                &[100 + tri, 1000 + 10 * tri, 9 + n][..]
            );
        }
        // The next superstep starts afresh: another operator is fine.
        bsp.accumulate(0, &x, 0, &[me], Op::Max)?;
        bsp.sync()?;
        if bsp.pid() == 0 {
            let n = p as i64;
            check_eq!(bsp, x.as_slice(bsp)[0], 100 + n * (n + 1) / 2);
        }
        Ok(())
    });
}

#[test]
fn replace_lands_in_origin_pid_order_then_issue_order() {
    // Every process replaces element 0 of every process twice: the last
    // write is the highest origin's second one.
    scenario(|bsp| {
        let p = bsp.nprocs();
        let x = Area::<u16>::new(bsp, 2);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let me = bsp.pid() as u16;
        for t in (0..p).rev() {
            bsp.accumulate(t, &x, 0, &[me * 10, 5], Op::Replace)?;
            bsp.accumulate(t, &x, 0, &[me * 10 + 1], Op::Replace)?;
        }
        bsp.sync()?;
        check_eq!(bsp, x.as_slice(bsp), &[(p as u16 - 1) * 10 + 1, 5][..]);
        Ok(())
    });
}

// ----- every operator on every type, against a sequential model ------------

/// An element type with a sequential model of every operator on it.
trait Model: Element + Debug + Send + Sync + 'static {
    /// A test value from a small signed number (zeros and ties included).
    fn gen(x: i64, tag: i64) -> Self;
    /// `a op b`, written independently of the library.
    fn model(op: Op, a: Self, b: Self) -> Self;
    /// Bitwise equality (floats compared by bits).
    fn same(a: Self, b: Self) -> bool {
        bytemuck::bytes_of(&a) == bytemuck::bytes_of(&b)
    }
}

macro_rules! int_model {
    ($($t:ty),*) => {$(
        impl Model for $t {
            fn gen(x: i64, _: i64) -> Self {
                x as $t
            }
            fn model(op: Op, a: Self, b: Self) -> Self {
                let t = |x: bool| if x { 1 as $t } else { 0 as $t };
                match op {
                    Op::Sum => a.wrapping_add(b),
                    Op::Product => a.wrapping_mul(b),
                    Op::Min => if b < a { b } else { a },
                    Op::Max => if b > a { b } else { a },
                    Op::BitAnd => a & b,
                    Op::BitOr => a | b,
                    Op::BitXor => a ^ b,
                    Op::LogicalAnd => t(a != 0 && b != 0),
                    Op::LogicalOr => t(a != 0 || b != 0),
                    Op::LogicalXor => t((a != 0) ^ (b != 0)),
                    Op::Replace => b,
                    _ => unreachable!("{op:?} on an integer"),
                }
            }
        }
    )*};
}
int_model!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_model {
    ($($t:ty),*) => {$(
        impl Model for $t {
            fn gen(x: i64, _: i64) -> Self {
                x as $t * 0.375 + 0.1
            }
            fn model(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Sum => a + b,
                    Op::Product => a * b,
                    Op::Min => if b < a { b } else { a },
                    Op::Max => if b > a { b } else { a },
                    Op::Replace => b,
                    _ => unreachable!("{op:?} on a float"),
                }
            }
        }
    )*};
}
float_model!(f32, f64);

macro_rules! pair_model {
    ($($v:ty, $i:ty);*) => {$(
        impl Model for ValueIndex<$v, $i> {
            fn gen(x: i64, tag: i64) -> Self {
                // Values in a narrow range: ties are frequent.
                ValueIndex { value: (x % 3) as $v, index: tag as $i }
            }
            fn model(op: Op, a: Self, b: Self) -> Self {
                let wins = match op {
                    Op::MinLoc => b.value < a.value || (b.value == a.value && b.index < a.index),
                    Op::MaxLoc => b.value > a.value || (b.value == a.value && b.index < a.index),
                    Op::Replace => true,
                    _ => unreachable!("{op:?} on a pair"),
                };
                if wins { b } else { a }
            }
        }
    )*};
}
pair_model!(i32, i32; f32, i32; i64, i64; f64, i64);

/// Elements per area in the operator tests.
const OP_LEN: usize = 3;

/// The initial value of element `i` on process `q`.
fn init<T: Model>(q: usize, i: usize) -> T {
    T::gen((q * 5 + i * 3) as i64 % 9 - 4, (q * 100 + i) as i64)
}

/// Origin `o`'s contribution `k` (of 2) in its call `c` (of 2) to element `i`.
fn term<T: Model>(o: usize, c: usize, k: usize, i: usize) -> T {
    T::gen(
        ((o * 7 + c * 5 + k * 3 + i) % 11) as i64 - 5,
        (o * 10 + c * 3 + k) as i64,
    )
}

/// The targets of origin `o`, in its issue order.
fn targets(o: usize, p: usize) -> [usize; 2] {
    [(o + 1) % p, 0]
}

/// One superstep per operator defined on `T`: every process makes two
/// accumulates of `OP_LEN` elements into its right neighbour, then two
/// into process 0; each owner checks its area against the sequential fold
/// in (origin pid, issue) order.
fn every_op_on<T: Model>(bsp: &mut Bsp) -> Result<(), Error> {
    let (p, me) = (bsp.nprocs(), bsp.pid());
    let start: Vec<T> = (0..OP_LEN).map(|i| init(me, i)).collect();
    let mut x = Area::from_vec(bsp, start.clone());
    bsp.push_reg(&x)?;
    bsp.sync()?;
    for op in Op::ALL.into_iter().filter(|op| op.is_defined_on(T::TYPE)) {
        x.as_mut_slice(bsp).copy_from_slice(&start);
        for (c, t) in targets(me, p).into_iter().enumerate() {
            for k in 0..2 {
                let v: Vec<T> = (0..OP_LEN).map(|i| term(me, c, k, i)).collect();
                bsp.accumulate(t, &x, 0, &v, op)?;
            }
        }
        bsp.sync()?;
        let mut want = start.clone();
        for o in 0..p {
            for (c, t) in targets(o, p).into_iter().enumerate() {
                if t != me {
                    continue;
                }
                for k in 0..2 {
                    for (i, w) in want.iter_mut().enumerate() {
                        *w = T::model(op, *w, term(o, c, k, i));
                    }
                }
            }
        }
        let got = x.as_slice(bsp);
        check!(
            bsp,
            got.iter().zip(&want).all(|(g, w)| T::same(*g, *w)),
            "{op:?} on {:?}: got {got:?}, want {want:?}",
            T::TYPE
        );
    }
    bsp.pop_reg(&x)?;
    bsp.sync()?;
    Ok(())
}

#[test]
fn every_operator_on_every_type_matches_a_sequential_model() {
    scenario(|bsp| {
        every_op_on::<i8>(bsp)?;
        every_op_on::<i16>(bsp)?;
        every_op_on::<i32>(bsp)?;
        every_op_on::<i64>(bsp)?;
        every_op_on::<u8>(bsp)?;
        every_op_on::<u16>(bsp)?;
        every_op_on::<u32>(bsp)?;
        every_op_on::<u64>(bsp)?;
        every_op_on::<f32>(bsp)?;
        every_op_on::<f64>(bsp)?;
        every_op_on::<ValueIndex<i32, i32>>(bsp)?;
        every_op_on::<ValueIndex<f32, i32>>(bsp)?;
        every_op_on::<ValueIndex<i64, i64>>(bsp)?;
        every_op_on::<ValueIndex<f64, i64>>(bsp)?;
        Ok(())
    });
}

#[test]
fn every_type_and_operator_pair_is_covered() {
    let defined: usize = ElemType::ALL
        .iter()
        .map(|&t| Op::ALL.iter().filter(|op| op.is_defined_on(t)).count())
        .sum();
    // 8 integer types x 11, 2 float types x 5, 4 pair types x 3.
    assert_eq!(defined, 8 * 11 + 2 * 5 + 4 * 3);
    for t in ElemType::ALL {
        assert_eq!(ElemType::from_id(t as i64), Some(t));
    }
    for op in Op::ALL {
        assert_eq!(Op::from_id(op as i64), Some(op));
    }
    assert_eq!(Op::from_id(13), None);
    assert_eq!(ElemType::from_id(-1), None);
}

#[test]
fn raw_accumulate_with_byte_offsets() {
    scenario(|bsp| {
        let x = Area::from_vec(bsp, vec![1i32, 2, 3, 4]);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        let src = [10i32, 20];
        // SAFETY: `src` is readable for its 8 bytes; `x` is registered.
        unsafe {
            bsp.raw().accumulate(
                0,
                src.as_ptr().cast(),
                x.as_slice(bsp).as_ptr().cast_mut().cast(),
                8,
                2,
                ElemType::I32,
                Op::Product,
            )?;
        }
        bsp.sync()?;
        if bsp.pid() == 0 {
            let p = bsp.nprocs() as u32;
            // The product wraps, as the library's does (20^7 · 4 does).
            let want = [
                1,
                2,
                3i32.wrapping_mul(10i32.wrapping_pow(p)),
                4i32.wrapping_mul(20i32.wrapping_pow(p)),
            ];
            check_eq!(bsp, x.as_slice(bsp), &want[..]);
        }
        Ok(())
    });
}

// ----- errors ------------------------------------------------------------------

/// The line of this file holding `// ERROR <tag>`.
fn marked(tag: &str) -> u32 {
    let text = include_str!("accumulate.rs");
    let needle = format!("// ERROR {tag}");
    let at = text
        .lines()
        .position(|l| l.trim_end().ends_with(&needle))
        .unwrap_or_else(|| panic!("no line marked {needle}"));
    at as u32 + 1
}

/// Checks the run's error: `kind` matches; it names `call`, process `pid`
/// (`None`: the last), superstep 1, and (if `tag`) the marked line.
fn names(
    call: &'static str,
    pid: Option<usize>,
    tag: Option<&'static str>,
    kind: fn(&ErrorKind) -> bool,
) -> impl Fn(usize, &Error) + Clone {
    move |n, e| {
        assert!(kind(e.kind()), "unexpected kind: {e}");
        assert_eq!(
            (e.pid(), e.superstep(), e.call()),
            (pid.unwrap_or(n - 1), 1, call),
            "{e}"
        );
        if let Some(tag) = tag {
            let loc = e.location().expect("a location");
            assert!(loc.file().ends_with("accumulate.rs"), "{e}");
            assert_eq!(loc.line(), marked(tag), "{e}");
        }
    }
}

fn last(bsp: &Bsp) -> usize {
    bsp.nprocs() - 1
}

#[test]
fn an_operator_not_defined_on_the_type_stops_the_run() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<f64>::new(bsp, 2);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.accumulate(0, &x, 0, &[1.0], Op::BitXor)?; // ERROR bitxor-f64
            }
            bsp.sync()?;
            Ok(())
        },
        names("bsp_accumulate", None, Some("bitxor-f64"), |k| {
            matches!(
                k,
                ErrorKind::AccumulateOperator {
                    op: "bitwise xor",
                    ty: "f64"
                }
            )
        }),
    );
    expect_error(
        1,
        |bsp| {
            let x = Area::<i32>::new(bsp, 2);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.accumulate(0, &x, 0, &[1], Op::MinLoc)?; // ERROR minloc-i32
            }
            bsp.sync()?;
            Ok(())
        },
        names("bsp_accumulate", None, Some("minloc-i32"), |k| {
            matches!(k, ErrorKind::AccumulateOperator { .. })
        }),
    );
    expect_error(
        1,
        |bsp| {
            let x = Area::<ValueIndex<f64, i64>>::new(bsp, 2);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.accumulate(0, &x, 0, &[ValueIndex::default()], Op::Sum)?; // ERROR sum-pair
            }
            bsp.sync()?;
            Ok(())
        },
        names("bsp_accumulate", None, Some("sum-pair"), |k| {
            matches!(k, ErrorKind::AccumulateOperator { op: "sum", .. })
        }),
    );
}

#[test]
fn two_operators_into_one_area_from_one_process_stop_the_run_at_the_call() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<i64>::new(bsp, 4);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.accumulate(0, &x, 0, &[1], Op::Sum)?;
                bsp.accumulate(0, &x, 3, &[1], Op::Max)?; // ERROR one-origin
            }
            bsp.sync()?;
            Ok(())
        },
        names("bsp_accumulate", None, Some("one-origin"), |k| {
            matches!(k, ErrorKind::AccumulateMismatch { detail }
                if detail.contains("max over i64") && detail.contains("sum over i64"))
        }),
    );
}

#[test]
fn two_operators_into_one_area_from_two_processes_stop_the_run_at_the_owner() {
    expect_error(
        2,
        |bsp| {
            let x = Area::<i64>::new(bsp, 4);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            let op = if bsp.pid() == last(bsp) {
                Op::Max
            } else {
                Op::Sum
            };
            bsp.accumulate(0, &x, 1, &[1], op)?;
            bsp.sync()?;
            Ok(())
        },
        |n, e| {
            names("bsp_sync", Some(0), None, |k| {
                matches!(k, ErrorKind::AccumulateMismatch { .. })
            })(n, e);
            let ErrorKind::AccumulateMismatch { detail } = e.kind() else {
                unreachable!()
            };
            // The owner applies origins in pid order: the last process's
            // max meets process 0's sum.
            assert!(
                detail.contains(&format!("process {} (line", n - 1))
                    && detail.contains("max over i64")
                    && detail.contains("process 0 (line")
                    && detail.contains("sum over i64"),
                "{e}"
            );
        },
    );
}

#[test]
fn two_element_types_into_one_slot_from_two_processes_stop_the_run_at_the_owner() {
    // Process 0 registers f64s and the others u64s in the same slot: both
    // accumulate sums into process 0's area.
    expect_error(
        2,
        |bsp| {
            if bsp.pid() == 0 {
                let x = Area::<f64>::new(bsp, 2);
                bsp.push_reg(&x)?;
                bsp.sync()?;
                bsp.accumulate(0, &x, 0, &[1.0], Op::Sum)?;
            } else {
                let x = Area::<u64>::new(bsp, 2);
                bsp.push_reg(&x)?;
                bsp.sync()?;
                bsp.accumulate(0, &x, 1, &[1], Op::Sum)?;
            }
            bsp.sync()?;
            Ok(())
        },
        names("bsp_sync", Some(0), None, |k| {
            matches!(k, ErrorKind::AccumulateMismatch { detail }
                if detail.contains("sum over u64") && detail.contains("sum over f64"))
        }),
    );
}

#[test]
fn an_accumulate_beyond_the_remote_area_stops_the_run() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 4);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.accumulate(0, &x, 3, &[1, 2], Op::Sum)?; // ERROR beyond
            }
            bsp.sync()?;
            Ok(())
        },
        names("bsp_accumulate", None, Some("beyond"), |k| {
            matches!(
                k,
                ErrorKind::OutOfBounds {
                    remote: 0,
                    offset: 12,
                    nbytes: 8,
                    extent: 16,
                    elem: 4
                }
            )
        }),
    );
}

#[test]
fn an_accumulate_into_an_unregistered_area_stops_the_run() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 4);
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.accumulate(0, &x, 0, &[1], Op::Sum)?; // ERROR unregistered
            }
            bsp.sync()?;
            Ok(())
        },
        names("bsp_accumulate", None, Some("unregistered"), |k| {
            matches!(k, ErrorKind::NotRegistered { .. })
        }),
    );
}

#[test]
fn an_accumulate_into_a_null_registration_stops_the_run() {
    expect_error(
        2,
        |bsp| {
            let x = Area::<u32>::new(bsp, 4);
            if bsp.pid() == 0 {
                bsp.push_reg_null()?;
            } else {
                bsp.push_reg(&x)?;
            }
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.accumulate(0, &x, 0, &[1], Op::Sum)?; // ERROR null
            }
            bsp.sync()?;
            Ok(())
        },
        names("bsp_accumulate", None, Some("null"), |k| {
            matches!(k, ErrorKind::RemoteNull { remote: 0 })
        }),
    );
}

#[test]
fn an_accumulate_to_a_pid_out_of_range_stops_the_run() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 4);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                bsp.accumulate(bsp.nprocs(), &x, 0, &[1], Op::Sum)?; // ERROR pid
            }
            bsp.sync()?;
            Ok(())
        },
        names("bsp_accumulate", None, Some("pid"), |k| {
            matches!(k, ErrorKind::PidOutOfRange { .. })
        }),
    );
}

#[test]
fn raw_accumulate_with_a_negative_count_stops_the_run() {
    expect_error(
        1,
        |bsp| {
            let x = Area::<u32>::new(bsp, 4);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == last(bsp) {
                let dst = x.as_slice(bsp).as_ptr().cast_mut().cast();
                let (raw, u32s, sum) = (bsp.raw(), ElemType::U32, Op::Sum);
                // SAFETY: nothing is read: the count is refused.
                unsafe {
                    raw.accumulate(0, dst, dst, 0, -1, u32s, sum)?; // ERROR negative
                }
            }
            bsp.sync()?;
            Ok(())
        },
        names("bsp_accumulate", None, Some("negative"), |k| {
            matches!(
                k,
                ErrorKind::Negative {
                    what: "count",
                    value: -1
                }
            )
        }),
    );
}

/// A forged accumulate record (`Raw::forge_accumulate`, which skips the
/// sender's checks) from process 0 to the last process, refused by the
/// owner at the sync with `InvalidRecord` mentioning `needle`.
fn forged(slot: u64, offset: usize, desc: u64, len: usize, needle: &'static str) {
    expect_error(
        1,
        move |bsp| {
            let x = Area::<u64>::new(bsp, 2);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            if bsp.pid() == 0 {
                let owner = bsp.nprocs() as i64 - 1;
                let data = vec![0u8; len];
                // SAFETY: a test of the owner's checks: the forged
                // accumulate is one the owner must refuse.
                unsafe { bsp.raw().forge_accumulate(owner, slot, offset, desc, &data) }?;
            }
            bsp.sync()?;
            Ok(())
        },
        move |n, e| {
            match e.kind() {
                ErrorKind::InvalidRecord {
                    what,
                    sender,
                    detail,
                } => {
                    assert_eq!((*what, *sender), ("accumulate", 0), "{e}");
                    assert!(detail.contains(needle), "{e}");
                }
                k => panic!("expected InvalidRecord, got {k:?}: {e}"),
            }
            assert_eq!((e.pid(), e.superstep(), e.call()), (n - 1, 1, "bsp_sync"));
        },
    );
}

/// `type | op << 8`.
fn desc(ty: ElemType, op: Op) -> u64 {
    ty as u64 | (op as u64) << 8
}

#[test]
fn the_owner_refuses_forged_accumulate_records() {
    let sum = desc(ElemType::U64, Op::Sum);
    forged(0, 8, sum, 16, "names bytes 8..24 of registration slot 0");
    forged(
        3,
        0,
        sum,
        8,
        "names registration slot 3, which this process does not have",
    );
    forged(0, 0, sum, 12, "not a whole number of u64 elements");
    forged(0, 0, desc(ElemType::F64, Op::BitXor), 8, "not a valid pair");
    forged(0, 0, 14 | 1 << 8, 8, "not a valid pair");
    forged(0, 0, sum | 1 << 20, 8, "not a valid pair");
}

#[test]
fn an_unknown_type_or_operator_id_stops_the_run() {
    // The C interface's path (`bsp_accumulate` passes its ints through).
    for (ty, op, what, value) in [(42, 0, "element type", 42), (9, -1, "operator", -1)] {
        expect_error(
            1,
            move |bsp| {
                let x = Area::<f64>::new(bsp, 2);
                bsp.push_reg(&x)?;
                bsp.sync()?;
                if bsp.pid() == last(bsp) {
                    let src = [1.0f64];
                    let (s, d) = (src.as_ptr().cast(), x.as_slice(bsp).as_ptr().cast_mut());
                    let raw = bsp.raw();
                    // SAFETY: `src` is readable for one f64 (nothing is read).
                    unsafe {
                        raw.accumulate_ids(0, s, d.cast(), 0, 1, ty, op)?; // ERROR unknown
                    }
                }
                bsp.sync()?;
                Ok(())
            },
            move |n, e| {
                names("bsp_accumulate", None, Some("unknown"), |_| true)(n, e);
                assert_eq!(
                    e.kind(),
                    &ErrorKind::AccumulateUnknown { what, value },
                    "{e}"
                );
            },
        );
    }
}
