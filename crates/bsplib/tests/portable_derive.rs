//! `#[derive(Portable)]` and the std containers' impls through `run` on
//! every engine the harness offers: a derived struct (with a unit struct,
//! a tuple struct and an array in it), a derived generic enum of every
//! kind of variant, a derived generic struct, and nested std containers
//! come back exactly; on `serial` and `threads` nothing is encoded or
//! decoded, on `processes` and `mpi` what crosses address spaces is.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};

use bsplib::{Bsp, Engine, Error, Portable};
use common::{configurations, for_each_engine, run_on};

/// A unit struct.
#[derive(Portable, Clone, Debug, PartialEq)]
struct Marker;

/// A tuple struct.
#[derive(Portable, Clone, Debug, PartialEq)]
struct Pair(i16, Option<char>);

/// A struct with named fields of many kinds, derived ones among them.
#[derive(Portable, Clone, Debug, PartialEq)]
struct Summary {
    pid: usize,
    nprocs: usize,
    name: String,
    squares: [u32; 3],
    ratio: f64,
    marker: Marker,
    pair: Pair,
    supersteps: Vec<u64>,
}

/// A generic enum with a unit, tuple and struct variant each.
#[derive(Portable, Clone, Debug, PartialEq)]
enum Shape<T, U> {
    Empty,
    One(T),
    Two(T, U),
    Named { first: T, rest: Vec<U> },
}

/// A generic struct holding the generic enum.
#[derive(Portable, Clone, Debug, PartialEq)]
struct Tagged<T> {
    tag: u8,
    value: T,
}

/// Nested std containers.
type Nested = (
    BTreeMap<String, Vec<(u8, Option<Box<i64>>)>>,
    HashMap<u32, HashSet<String>>,
    VecDeque<BTreeSet<i32>>,
    [Option<Vec<u16>>; 2],
);

/// What process `pid` of `nprocs` returns.
type Outcome = (Summary, Tagged<Shape<u64, String>>, Nested);

fn summary(pid: usize, nprocs: usize) -> Summary {
    let p = pid as u32;
    Summary {
        pid,
        nprocs,
        name: format!("process {pid} of {nprocs} ✓"),
        squares: [p * p, (p + 1) * (p + 1), (p + 2) * (p + 2)],
        ratio: pid as f64 / nprocs as f64 - 0.25,
        marker: Marker,
        pair: Pair(-(pid as i16) * 300, char::from_u32('a' as u32 + p)),
        supersteps: vec![0, 1, 2],
    }
}

fn shape(pid: usize) -> Tagged<Shape<u64, String>> {
    let value = match pid % 4 {
        0 => Shape::Empty,
        1 => Shape::One(pid as u64 * 1_000_000_007),
        2 => Shape::Two(u64::MAX - pid as u64, "two".repeat(pid)),
        _ => Shape::Named {
            first: pid as u64,
            rest: (0..pid).map(|i| format!("rest {i}")).collect(),
        },
    };
    Tagged {
        tag: (pid % 4) as u8,
        value,
    }
}

fn nested(pid: usize) -> Nested {
    let map = (0..=pid)
        .map(|i| {
            let entries = (0..i as u8)
                .map(|j| (j, (j % 2 == 0).then(|| Box::new(-(i as i64) * j as i64))))
                .collect();
            (format!("key {i}"), entries)
        })
        .collect();
    let hash = (0..pid as u32 + 2)
        .map(|k| (k * 11, (0..k).map(|s| format!("{pid}/{s}")).collect()))
        .collect();
    let deque = (0..3)
        .map(|i| (-(pid as i32)..=i).collect::<BTreeSet<_>>())
        .collect();
    let arrays = [None, Some(vec![pid as u16; pid % 3])];
    (map, hash, deque, arrays)
}

fn expected(pid: usize, nprocs: usize) -> Outcome {
    (summary(pid, nprocs), shape(pid), nested(pid))
}

/// Builds the results over three supersteps, each process its own.
fn spmd(bsp: &mut Bsp) -> Result<Outcome, Error> {
    let (pid, nprocs) = (bsp.pid(), bsp.nprocs());
    let mut s = summary(pid, nprocs);
    s.supersteps.clear();
    for _ in 0..3 {
        s.supersteps.push(bsp.superstep());
        bsp.sync()?;
    }
    check_eq!(bsp, bsp.superstep(), 3);
    Ok((s, shape(pid), nested(pid)))
}

#[test]
fn derived_and_std_results_come_back_exactly_on_every_engine() {
    for_each_engine(spmd, |n, got| {
        let want: Vec<Outcome> = (0..n).map(|pid| expected(pid, n)).collect();
        assert_eq!(got, want.as_slice());
    });
}

/// Every variant of the generic enum, from every process, in one result.
#[test]
fn every_variant_of_a_generic_enum_comes_back() {
    for_each_engine(
        |bsp| {
            let pid = bsp.pid() as u64;
            bsp.sync()?;
            Ok(vec![
                Shape::Empty,
                Shape::One(pid),
                Shape::Two(pid, Some('x')),
                Shape::Named {
                    first: pid,
                    rest: vec![None, Some('y')],
                },
            ])
        },
        |n, got| {
            for (pid, shapes) in got.iter().enumerate().take(n) {
                let pid = pid as u64;
                assert_eq!(
                    shapes,
                    &[
                        Shape::Empty,
                        Shape::One(pid),
                        Shape::Two(pid, Some('x')),
                        Shape::Named {
                            first: pid,
                            rest: vec![None, Some('y')]
                        },
                    ]
                );
            }
        },
    );
}

#[test]
fn derived_encodings_are_compact_and_checked() {
    // Fields in order, nothing between them.
    let mut out = Vec::new();
    Pair(-2, None).encode(&mut out);
    assert_eq!(out, [0xfe, 0xff, 0]);
    let mut out = Vec::new();
    Marker.encode(&mut out);
    assert!(out.is_empty());
    // The variant's index is one byte.
    let mut out = Vec::new();
    Shape::<u8, u8>::Two(5, 6).encode(&mut out);
    assert_eq!(out, [2, 5, 6]);
    // An index the enum does not have, or short input: None, no panic.
    assert_eq!(Shape::<u8, u8>::decode(&mut &[4u8][..]), None);
    assert_eq!(Shape::<u8, u8>::decode(&mut &[2u8, 5][..]), None);
    assert_eq!(Shape::<u8, u8>::decode(&mut &[][..]), None);
    let mut input = &[1u8, 9, 0xaa][..];
    assert_eq!(Shape::<u8, u8>::decode(&mut input), Some(Shape::One(9)));
    assert_eq!(input, [0xaa]);
}

/// A result type that counts its decodes.
#[derive(Debug, PartialEq)]
struct Counted(u32);

static DECODES: AtomicUsize = AtomicUsize::new(0);

impl Portable for Counted {
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out)
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        DECODES.fetch_add(1, Ordering::SeqCst);
        u32::decode(input).map(Counted)
    }
}

#[test]
fn results_are_encoded_only_across_address_spaces() {
    for (engine, p) in configurations() {
        let before = DECODES.load(Ordering::SeqCst);
        let got = run_on(engine, p, |bsp| {
            bsp.sync()?;
            Ok(Counted(bsp.pid() as u32 * 3))
        })
        .unwrap_or_else(|e| panic!("run on {} with p={p} failed: {e}", engine.name()));
        let n = got.len();
        let want: Vec<Counted> = (0..n as u32).map(|i| Counted(i * 3)).collect();
        assert_eq!(got, want);
        let decoded = DECODES.load(Ordering::SeqCst) - before;
        let expected = match engine {
            // Process 0's result is the caller's own; the others' decoded.
            Engine::Processes => n - 1,
            // Every rank decodes every rank's result (its own included).
            Engine::Mpi => n,
            // They move: no encoding at all.
            _ => 0,
        };
        assert_eq!(decoded, expected, "{} p={p}", engine.name());
    }
}

/// Fields named like the generated code's parameters, a where clause, a
/// const generic, a defaulted type parameter and a type with no value.
#[derive(Portable, Debug, PartialEq)]
struct Awkward<T, const N: usize, U = u8>
where
    T: Clone,
{
    out: T,
    input: [U; N],
    __bsplib_f0: Option<T>,
}

#[derive(Portable, Debug, PartialEq)]
enum Never {}

#[test]
fn awkward_types_derive() {
    let v: Awkward<String, 2> = Awkward {
        out: "o".into(),
        input: [1, 2],
        __bsplib_f0: Some("f".into()),
    };
    let mut bytes = Vec::new();
    v.encode(&mut bytes);
    let mut input = bytes.as_slice();
    assert_eq!(Awkward::decode(&mut input), Some(v));
    assert!(input.is_empty());
    assert_eq!(Never::decode(&mut &[0u8][..]), None);
}
