//! Round trips of the codec: portable values, errors of every kind, and
//! errors cut to fit their record.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use super::*;
use crate::error::{Error, ErrorKind};

fn round_trip<T: Portable + PartialEq + std::fmt::Debug>(v: T) {
    let mut out = Vec::new();
    v.encode(&mut out);
    let mut input = out.as_slice();
    assert_eq!(T::decode(&mut input), Some(v));
    assert!(input.is_empty());
}

#[test]
fn portable_values_round_trip() {
    round_trip(7u32);
    round_trip(-3i64);
    round_trip(usize::MAX);
    round_trip(2.5f64);
    round_trip((1u8, String::from("héllo"), vec![Some(1i32), None]));
    round_trip(vec![(); 3]);
    round_trip(Ok::<_, String>(vec![true, false]));
}

#[test]
fn tuples_of_up_to_twelve_round_trip() {
    round_trip((1u8, 2u16, 3u32, 4u64, 5i8));
    round_trip((1u8, 2u16, 3u32, 4u64, 5i8, String::from("six")));
    round_trip((1u8, 2u16, 3u32, 4u64, 5i8, 6i16, 7i32));
    round_trip((1u8, 2u16, 3u32, 4u64, 5i8, 6i16, 7i32, 8i64));
    round_trip((1u8, 2u16, 3u32, 4u64, 5i8, 6i16, 7i32, 8i64, 9.5f32));
    round_trip((1u8, 2u16, 3u32, 4u64, 5i8, 6i16, 7i32, 8i64, 9.5f32, 'x'));
    round_trip((
        1u8, 2u16, 3u32, 4u64, 5i8, 6i16, 7i32, 8i64, 9.5f32, 'x', true,
    ));
    round_trip((
        1u8,
        2u16,
        3u32,
        4u64,
        5i8,
        6i16,
        7i32,
        8i64,
        9.5f32,
        'x',
        true,
        vec![Some(12usize)],
    ));
}

#[test]
fn arrays_round_trip() {
    round_trip([1u32, 2, 3, 4]);
    round_trip([String::from("a"), String::from("bc")]);
    round_trip([[1i8, -2], [3, -4], [5, -6]]);
    round_trip::<[u64; 0]>([]);
    // The length is the type's: no length word.
    let mut out = Vec::new();
    [7u8; 3].encode(&mut out);
    assert_eq!(out, [7, 7, 7]);
    assert_eq!(<[u8; 4]>::decode(&mut out.as_slice()), None);
}

#[test]
fn boxes_and_deques_round_trip() {
    round_trip(Box::new(17i64));
    round_trip(Box::new(vec![Box::new(String::from("boxed"))]));
    round_trip(VecDeque::from(vec![3u16, 1, 4, 1, 5]));
    round_trip(VecDeque::<String>::new());
    // A deque encodes as a Vec of the same elements.
    let (mut deque, mut vec) = (Vec::new(), Vec::new());
    VecDeque::from(vec![1u8, 2]).encode(&mut deque);
    vec![1u8, 2].encode(&mut vec);
    assert_eq!(deque, vec);
}

#[test]
fn maps_round_trip() {
    let btree: BTreeMap<String, Vec<u32>> = [
        ("one".to_string(), vec![1]),
        ("none".to_string(), vec![]),
        ("three".to_string(), vec![1, 2, 3]),
    ]
    .into_iter()
    .collect();
    round_trip(btree);
    round_trip(BTreeMap::<u8, ()>::new());
    let hash: HashMap<u64, (bool, char)> = (0..50).map(|i| (i * 7, (i % 2 == 0, 'h'))).collect();
    round_trip(hash);
    round_trip(HashMap::<String, String>::new());
}

#[test]
fn sets_round_trip() {
    round_trip([5i32, -1, 3].into_iter().collect::<BTreeSet<_>>());
    round_trip(BTreeSet::<String>::new());
    round_trip((0..40u16).map(|i| i * 3).collect::<HashSet<_>>());
    round_trip(
        ["a", "b"]
            .map(String::from)
            .into_iter()
            .collect::<HashSet<_>>(),
    );
}

#[test]
fn collections_reject_a_key_twice() {
    // Two entries with the same key: no map, no set has that encoding.
    let mut out = Vec::new();
    vec![(1u8, 10u8), (1, 11)].encode(&mut out);
    assert_eq!(BTreeMap::<u8, u8>::decode(&mut out.as_slice()), None);
    assert_eq!(HashMap::<u8, u8>::decode(&mut out.as_slice()), None);
    let mut out = Vec::new();
    vec![4u32, 4].encode(&mut out);
    assert_eq!(BTreeSet::<u32>::decode(&mut out.as_slice()), None);
    assert_eq!(HashSet::<u32>::decode(&mut out.as_slice()), None);
    // Short input.
    let mut out = Vec::new();
    [(1u8, 2u64)]
        .into_iter()
        .collect::<BTreeMap<_, _>>()
        .encode(&mut out);
    out.pop();
    assert_eq!(BTreeMap::<u8, u64>::decode(&mut out.as_slice()), None);
}

#[test]
fn truncated_input_is_rejected() {
    let mut out = Vec::new();
    vec![1u64, 2, 3].encode(&mut out);
    out.pop();
    assert_eq!(Vec::<u64>::decode(&mut out.as_slice()), None);
}

#[test]
fn long_errors_are_cut_and_still_decode() {
    let e = Error::new(
        ErrorKind::Aborted {
            message: "é".repeat(50_000),
        },
        "bsp_abort",
        1,
        2,
        None,
    );
    let bytes = encode_error_within(&e, 1 << 16);
    assert!(bytes.len() <= 1 << 16);
    let d = decode_error(&bytes).expect("decodes");
    assert_eq!((d.call(), d.pid(), d.superstep()), ("bsp_abort", 1, 2));
    match d.kind() {
        ErrorKind::Aborted { message } => {
            assert!(message.ends_with("...") && message.starts_with("éé"))
        }
        k => panic!("{k:?}"),
    }
}

#[test]
fn errors_round_trip() {
    let loc = Some(SourceLocation::new("prog.c", 12, 0));
    for kind in [
        ErrorKind::OutOfBounds {
            remote: 1,
            offset: 2,
            nbytes: 3,
            extent: 4,
            elem: 8,
        },
        ErrorKind::Negative {
            what: "nbytes",
            value: -5,
        },
        ErrorKind::Aborted {
            message: "stop".into(),
        },
        ErrorKind::Died {
            detail: "killed".into(),
        },
        ErrorKind::Deadline {
            limit_ms: 1500,
            laggards: "never arrived: process 1 (computing in superstep 3)".into(),
        },
        ErrorKind::OutOfMemory { bytes: 1 << 40 },
        ErrorKind::NotABspProcess {
            what: "a thread the program created",
        },
        ErrorKind::InvalidRecord {
            what: "put",
            sender: 2,
            detail: "names registration slot 7, which this process does not have".into(),
        },
        ErrorKind::ThreadsAtFork { threads: 3 },
        ErrorKind::ForeignArea {
            created_run: 4,
            created_pid: 1,
            run: 5,
        },
        ErrorKind::OverlappingBlocks {
            block: 16,
            stride: 8,
        },
        ErrorKind::ShapeMismatch { src: 24, dst: 32 },
        ErrorKind::AccumulateOperator {
            op: "bitwise xor",
            ty: "f64",
        },
        ErrorKind::AccumulateMismatch {
            detail: "process 1 (line 3) accumulates with max over f64".into(),
        },
        ErrorKind::EpochOpen {
            detail: "lock of area slot 2 on process 1 (line 9)".into(),
        },
        ErrorKind::NoEpoch {
            detail: "unlock without lock".into(),
        },
        ErrorKind::EpochUnmatched {
            detail: "process 3 entered its sync without posting".into(),
        },
        ErrorKind::Transport {
            detail: "MPI_Win_unlock returned 47 (MPI_ERR_RMA_SYNC)".into(),
        },
        ErrorKind::AccumulateUnknown {
            what: "operator",
            value: -7,
        },
        ErrorKind::HintViolated {
            hint: "NO_PUT",
            detail: "is false: process 1's bsp_put at a.c:9 wrote".into(),
        },
        ErrorKind::AmArgument {
            code: "LAPI_ERR_UHDR_LEN",
            detail: "too long".into(),
        },
        ErrorKind::AmTarget {
            origin: 1,
            seq: 7,
            reason: "no such counter".into(),
        },
        ErrorKind::AmMismatch {
            detail: "some only".into(),
        },
        ErrorKind::CollectiveMismatch {
            detail: "another root".into(),
        },
        ErrorKind::SyncMismatch {
            syncs: Box::new([(0, "a.c:10".into()), (2, "a.c:12".into())]),
        },
        ErrorKind::OverlappingPuts {
            owner: 1,
            slot: 3,
            bytes: 8..16,
            puts: Box::new([
                (0, "bsp_put at a.c:20".into()),
                (2, "bsp_hpput at a.c:21".into()),
            ]),
        },
        ErrorKind::HpRegionChanged {
            call: "bsp_hpput",
            what: "source",
            len: 8,
            places: Box::new(["a.c:30".into(), "a.c:31".into()]),
        },
    ] {
        let e = Error::new(kind, "bsp_put", 3, 9, loc);
        assert_eq!(decode_error(&encode_error(&e)), Some(e));
    }
}
