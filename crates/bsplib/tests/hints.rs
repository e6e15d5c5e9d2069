//! Fence hints (`Bsp::sync_with`, `ONE_SIDED.md` section 5) on every
//! engine: true hints give the results of plain syncs, checking or not;
//! each false hint is found in the checking mode, naming the hinted sync,
//! the hint, the process, the superstep and the line (and, for `NO_PUT`,
//! the origin); a transfer after `NO_SUCCEED` is an error at the call,
//! always.

mod common;

use bsplib::raw::Raw;
use bsplib::Op;
use bsplib::{Area, Bsp, Error, ErrorKind, Hints};
use common::{configurations, configurations_with, mpi_mode, run_checking};

/// The line of this file that ends with `// HERE {tag}`.
fn marked(tag: &str) -> u32 {
    let text = include_str!("hints.rs");
    let needle = format!("// HERE {tag}");
    let at = text
        .lines()
        .position(|l| l.trim_end().ends_with(&needle))
        .unwrap_or_else(|| panic!("no line marked {needle}"));
    at as u32 + 1
}

/// A sync with `hints` if `hinted`, else a plain one: one line for both,
/// so check-syncs sees the same location either way.
fn sync(bsp: &mut Bsp, hinted: bool, hints: Hints) -> Result<(), Error> {
    if hinted {
        bsp.sync_with(hints)
    } else {
        bsp.sync()
    }
}

/// Supersteps of every kind, each sync with hints that are true.
fn true_hints(bsp: &mut Bsp, hinted: bool) -> Result<Vec<u64>, Error> {
    let (p, s) = (bsp.nprocs(), bsp.pid());
    let x = Area::<u64>::new(bsp, 4);
    let acc = Area::<u64>::new(bsp, 1);
    bsp.push_reg(&x)?;
    bsp.push_reg(&acc)?;
    bsp.set_tagsize(4)?;
    // Registrations and tag sizes are not transfers.
    sync(
        bsp,
        hinted,
        Hints::NO_PRECEDE | Hints::NO_PUT | Hints::NO_STORE,
    )?;
    let (next, prev) = ((s + 1) % p, (s + p - 1) % p);
    bsp.put(next, &x, 0, &[10 + s as u64])?;
    let got = Area::<u64>::new(bsp, 1);
    bsp.get(prev, &x, 0, got.range(..1))?;
    bsp.send_pod(next, &(s as u32), &[s as u64 * 3])?;
    bsp.put_owned(next, &x, 1, vec![20 + s as u64])?;
    sync(bsp, hinted, Hints::NO_SUCCEED)?;
    let mut out = x.to_vec(bsp);
    out.push(got.to_vec(bsp)[0]);
    out.push(bsp.qsize().0 as u64);
    // No transfer in this superstep (it reads the queue).
    while let Some(m) = bsp.hpmove() {
        let tag = m.tag_as::<u32>().unwrap_or(999);
        out.push(u64::from(tag) * 100 + m.payload_as::<u64>().unwrap_or(&[0])[0]);
    }
    sync(bsp, hinted, Hints::NO_PRECEDE | Hints::NO_PUT)?;
    bsp.accumulate(0, &acc, 0, &[s as u64 + 1], Op::Sum)?;
    let nothing_in = if s == 0 { Hints::NONE } else { Hints::NO_PUT };
    sync(bsp, hinted, nothing_in | Hints::NO_STORE)?;
    out.push(acc.to_vec(bsp)[0]);
    bsp.pop_reg(&acc)?;
    bsp.pop_reg(&x)?;
    sync(bsp, hinted, Hints::NO_PRECEDE | Hints::NO_SUCCEED)?;
    bsp.sync()?;
    Ok(out)
}

#[test]
fn true_hints_give_the_results_of_plain_syncs_checking_or_not() {
    for (engine, p) in configurations() {
        let plain = run_checking(engine, p, false, |bsp| true_hints(bsp, false))
            .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        for check in [false, true] {
            let hinted = run_checking(engine, p, check, |bsp| true_hints(bsp, true))
                .unwrap_or_else(|e| panic!("{} p={p} check={check}: {e}", engine.name()));
            assert_eq!(hinted, plain, "{} p={p} check={check}", engine.name());
        }
        let n = plain.len();
        for (s, got) in plain.iter().enumerate() {
            let prev = ((s + n - 1) % n) as u64;
            assert_eq!(got[0], 10 + prev);
            assert_eq!(got[1], 20 + prev);
            assert_eq!(got[4], 0, "the get read before the put wrote");
            assert_eq!(got[5], 1);
            assert_eq!(got[6], prev * 100 + prev * 3);
            let sum = (1..=n as u64).sum::<u64>();
            assert_eq!(got[7], if s == 0 { sum } else { 0 });
        }
    }
}

/// Runs `spmd` with the checking mode on or off on every configuration
/// of at least `min_p` processes; it must fail with an original error.
fn expect_error<F, V>(min_p: usize, check: bool, spmd: F, verify: V)
where
    F: Fn(&mut Bsp) -> Result<(), Error> + Sync + Send + Clone + 'static,
    V: Fn(usize, &Error),
{
    if mpi_mode() && configurations_with(1)[0].2 < min_p {
        return;
    }
    for (engine, p, n) in configurations_with(min_p) {
        match run_checking(engine, p, check, spmd.clone()) {
            Ok(_) => panic!("{} p={p}: the run succeeded", engine.name()),
            Err(e) => {
                assert!(!e.is_stopped(), "{} p={p}: {e}", engine.name());
                verify(n, &e);
            }
        }
    }
}

/// Checks a `HintViolated` error: the hint, the call, the process, the
/// superstep, the marked line, and words of the detail.
fn violated(
    hint: &'static str,
    call: &'static str,
    pid: fn(usize) -> usize,
    superstep: u64,
    tag: &'static str,
    has: &[&str],
) -> impl Fn(usize, &Error) + Clone {
    let has: Vec<String> = has.iter().map(|w| w.to_string()).collect();
    move |n, e| {
        let ErrorKind::HintViolated { hint: h, detail } = e.kind() else {
            panic!("unexpected kind: {e}");
        };
        assert_eq!(*h, hint, "{e}");
        assert_eq!(
            (e.call(), e.pid(), e.superstep()),
            (call, pid(n), superstep),
            "{e}"
        );
        let loc = e.location().expect("a location");
        assert!(loc.file().ends_with("hints.rs"), "{e}");
        assert_eq!(loc.line(), marked(tag), "{e}");
        for word in &has {
            assert!(detail.contains(word.as_str()), "{word:?} not in: {e}");
        }
        assert!(
            e.to_string().contains(&format!("the fence hint {hint}")),
            "{e}"
        );
    }
}

fn first(_: usize) -> usize {
    0
}

fn last(n: usize) -> usize {
    n - 1
}

#[test]
fn a_transfer_after_no_succeed_is_an_error_at_the_call_checking_or_not() {
    for check in [false, true] {
        expect_error(
            1,
            check,
            |bsp| {
                let x = Area::<u32>::new(bsp, 2);
                bsp.push_reg(&x)?;
                bsp.sync_with(Hints::NO_SUCCEED)?; // HERE put-sync
                if bsp.pid() == bsp.nprocs() - 1 {
                    bsp.put(0, &x, 0, &[1])?; // HERE put
                }
                bsp.sync()
            },
            violated(
                "NO_SUCCEED",
                "bsp_put",
                last,
                1,
                "put",
                &["superstep 0", "bsp_put"],
            ),
        );
        // Registrations are allowed, and the promise lasts one superstep;
        // a get, a send and an accumulate break it as a put does.
        expect_error(
            1,
            check,
            |bsp| {
                let x = Area::<u32>::new(bsp, 2);
                bsp.push_reg(&x)?;
                bsp.sync_with(Hints::NO_SUCCEED)?;
                let y = Area::<u32>::new(bsp, 1);
                bsp.push_reg(&y)?;
                bsp.sync_with(Hints::NO_SUCCEED)?;
                bsp.sync()?;
                bsp.put(bsp.pid(), &x, 0, &[1])?;
                bsp.sync_with(Hints::NO_SUCCEED)?;
                let to = Area::<u32>::new(bsp, 1);
                if bsp.pid() == 0 {
                    bsp.get(0, &x, 0, to.range(..1))?; // HERE get
                }
                bsp.sync()
            },
            violated("NO_SUCCEED", "bsp_get", first, 4, "get", &["superstep 3"]),
        );
        expect_error(
            1,
            check,
            |bsp| {
                bsp.sync_with(Hints::NO_SUCCEED)?;
                if bsp.pid() == 0 {
                    bsp.send(0, &[], &[1u8])?; // HERE send
                }
                bsp.sync()
            },
            violated("NO_SUCCEED", "bsp_send", first, 1, "send", &[]),
        );
        expect_error(
            1,
            check,
            |bsp| {
                let x = Area::<u32>::new(bsp, 1);
                bsp.push_reg(&x)?;
                bsp.sync_with(Hints::NO_SUCCEED | Hints::NO_PRECEDE)?;
                if bsp.pid() == 0 {
                    bsp.accumulate(0, &x, 0, &[1], Op::Sum)?; // HERE acc
                }
                bsp.sync()
            },
            violated("NO_SUCCEED", "bsp_accumulate", first, 1, "acc", &[]),
        );
    }
}

/// The last process puts into process 0 and hints `hints` at its sync.
fn false_hint(bsp: &mut Bsp, hints: Hints) -> Result<(), Error> {
    let x = Area::<u32>::new(bsp, 2);
    bsp.push_reg(&x)?;
    bsp.sync()?;
    let last = bsp.nprocs() - 1;
    if bsp.pid() == last {
        bsp.put(0, &x, 1, &[7])?; // HERE false-put
    }
    bsp.sync_with(hints)?; // HERE false-sync
    let got = x.to_vec(bsp)[1];
    assert!(bsp.pid() != 0 || got == 7, "the put did not land: {got}");
    bsp.sync()
}

#[test]
fn a_false_no_precede_is_found_in_the_checking_mode() {
    let at = format!("bsp_put at {}:{}", file!(), marked("false-put"));
    expect_error(
        1,
        true,
        |bsp| false_hint(bsp, Hints::NO_PRECEDE),
        violated("NO_PRECEDE", "bsp_sync_hint", last, 1, "false-sync", &[&at]),
    );
}

#[test]
fn a_false_no_put_is_found_in_the_checking_mode_naming_the_origin() {
    let at = format!("bsp_put at {}:{}", file!(), marked("false-put"));
    expect_error(
        1,
        true,
        |bsp| false_hint(bsp, Hints::NO_PUT | Hints::NO_STORE),
        violated("NO_PUT", "bsp_sync_hint", first, 1, "false-sync", &[&at]),
    );
    // The origin is named too.
    expect_error(
        2,
        true,
        |bsp| false_hint(bsp, Hints::NO_PUT),
        |n, e| {
            assert!(
                e.to_string()
                    .contains(&format!("process {}'s bsp_put", n - 1)),
                "{e}"
            )
        },
    );
    // An accumulate is a put for NO_PUT.
    expect_error(
        1,
        true,
        |bsp| {
            let x = Area::<u32>::new(bsp, 1);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            bsp.accumulate(0, &x, 0, &[1], Op::Max)?;
            bsp.sync_with(Hints::NO_PUT) // HERE acc-sync
        },
        violated(
            "NO_PUT",
            "bsp_sync_hint",
            first,
            1,
            "acc-sync",
            &["bsp_accumulate at"],
        ),
    );
}

#[test]
fn a_false_no_store_is_found_in_the_checking_mode_naming_the_area() {
    // Remote puts and a one-sided lock epoch's put into an area are not
    // local stores: the first hinted sync is true. Then process 0 stores
    // into its second area with its own code, and says it did not.
    expect_error(
        1,
        true,
        |bsp| {
            let x = Area::<u32>::new(bsp, 2);
            let mut y = Area::<u32>::new(bsp, 2);
            bsp.push_reg(&x)?;
            bsp.push_reg(&y)?;
            bsp.rma().init()?;
            let last = bsp.nprocs() - 1;
            if bsp.pid() == last {
                bsp.put(0, &x, 1, &[7])?;
                let l = bsp.rma().lock(0, &y, bsplib::LockKind::Exclusive)?;
                l.put(0, &[3])?;
                l.unlock()?;
            }
            bsp.sync_with(Hints::NO_STORE)?;
            let (a, b) = (x.to_vec(bsp), y.to_vec(bsp));
            assert!(bsp.pid() != 0 || (a[1] == 7 && b[0] == 3), "{a:?} {b:?}");
            if bsp.pid() == 0 {
                y.as_mut_slice(bsp)[1] = 5;
            }
            bsp.sync_with(Hints::NO_STORE) // HERE store-sync
        },
        violated(
            "NO_STORE",
            "bsp_sync_hint",
            first,
            2,
            "store-sync",
            &["registration slot 1", "8 bytes"],
        ),
    );
}

#[test]
fn false_hints_outside_the_checking_mode_give_the_results_of_plain_syncs() {
    // "Undefined" by the interface; today the library skips nothing a
    // hint says, so the put lands (the scenario checks it on process 0).
    for (engine, p) in configurations() {
        for hints in [Hints::NO_PRECEDE, Hints::NO_PUT, Hints::NO_STORE] {
            run_checking(engine, p, false, move |bsp| false_hint(bsp, hints))
                .unwrap_or_else(|e| panic!("{} p={p} {hints:?}: {e}", engine.name()));
        }
    }
}

#[test]
fn unknown_flag_bits_are_an_error_naming_the_call() {
    expect_error(
        1,
        false,
        |bsp| {
            bsp.sync()?;
            let flags = if bsp.pid() == 0 { 0x48 } else { 0 };
            Raw::sync_hint(bsp, flags, None)
        },
        |_, e| {
            assert!(
                matches!(e.kind(), ErrorKind::HintViolated { hint: "flags", detail }
                    if detail.contains("0x40")),
                "{e}"
            );
            assert_eq!((e.call(), e.pid(), e.superstep()), ("bsp_sync_hint", 0, 1));
        },
    );
}

#[test]
fn hints_combine_and_print() {
    let h = Hints::NO_PRECEDE | Hints::NO_PUT;
    assert!(h.contains(Hints::NO_PUT) && !h.contains(Hints::NO_SUCCEED));
    assert_eq!(h.bits(), 9);
    assert_eq!(format!("{h:?}"), "NO_PRECEDE | NO_PUT");
    assert_eq!(format!("{:?}", Hints::NONE), "NONE");
    assert_eq!(Hints::from_bits(15).map(Hints::bits), Some(15));
    assert_eq!(Hints::from_bits(16), None);
    let mut all = Hints::NONE;
    all |= Hints::NO_STORE;
    assert!(!all.is_empty() && Hints::NONE.is_empty());
}
