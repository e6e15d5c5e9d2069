//! Error paths of single calls: every misuse BSPlib calls an error gives an
//! `Error` naming the call, the process and the superstep (the README,
//! **Errors**), stops every process, writes nothing, and never hangs.
//! Errors between processes and of whole runs: `errors_collective.rs`.
//!
//! Every scenario runs on every configuration of the harness with enough
//! processes (`run_on` fails the test instead of hanging). The offending
//! call is made by the last process wherever possible, so that the pid an
//! error names is not just 0; the others wait in sync and must be stopped.

mod common;
#[macro_use]
mod errors_support;

use std::ffi::c_void;

use bsplib::{Area, ErrorKind};
use common::*;
use errors_support::*;

// ----- process ids ------------------------------------------------------------

#[test]
fn transfer_to_pid_out_of_range() {
    for op in OPS {
        for k in 0..3 {
            let bad = move |n: usize| [n, n + 5, usize::MAX][k];
            expect_failure(
                1,
                move |bsp, _| {
                    let x = Area::<u32>::new(bsp, LEN);
                    let local = Area::<u32>::new(bsp, LEN);
                    bsp.push_reg(&x)?;
                    bsp.sync()?;
                    if is_last(bsp) {
                        op.issue(bsp, bad(bsp.nprocs()), &x, 0, &local, 1)?;
                    }
                    bsp.sync()
                },
                |n, err, seen| {
                    // The kind's pid is the C int widened to i64: usize::MAX saturates.
                    let pid = i64::try_from(bad(n)).unwrap_or(i64::MAX);
                    assert_error(err, pid_out_of_range(pid, n), op.call(), n - 1, 1);
                    assert_others_stopped(n, &[n - 1], seen);
                },
            );
        }
    }
}

#[test]
fn send_to_pid_out_of_range() {
    expect_error(
        1,
        |bsp| bsp.send(bsp.nprocs() + 1, &[], b"lost"),
        |n, err| {
            // Every process errs alike; the first error is the run's.
            let kind = pid_out_of_range(n as i64 + 1, n);
            assert_error(err, kind, "bsp_send", err.pid(), 0);
        },
    );
}

// ----- extents ----------------------------------------------------------------

#[test]
fn transfer_beyond_remote_extent() {
    // Process i registers the first 2 + i elements of `x`: a check against
    // the caller's own extent would accept what is refused here, and refuse
    // what is accepted.
    for op in OPS {
        expect_failure(
            2,
            move |bsp, _| {
                let x = Area::<u32>::from_vec(bsp, vec![9; LEN]);
                let local = Area::<u32>::from_vec(bsp, (1..=LEN as u32).collect());
                bsp.push_reg_prefix(&x, 2 + bsp.pid())?;
                bsp.sync()?;
                // Superstep 1: 3 elements fit process 1's extent (not 0's).
                if bsp.pid() == 0 {
                    op.issue(bsp, 1, &x, 0, &local, 3)?;
                }
                bsp.sync()?;
                if bsp.pid() == 1 && op.is_put() {
                    check_eq!(bsp, x.to_vec(bsp)[..4], [1, 2, 3, 9]);
                }
                if bsp.pid() == 0 && !op.is_put() {
                    check_eq!(bsp, local.to_vec(bsp)[..4], [9, 9, 9, 4]);
                }
                // Superstep 2: elements 1..3 fit process 1's extent, not 0's.
                if bsp.pid() == 1 {
                    op.issue(bsp, 0, &x, 1, &local, 2)?;
                }
                bsp.sync()
            },
            |n, err, seen| {
                assert_error(err, out_of_bounds(0, 4, 8, 8, 4), op.call(), 1, 2);
                assert_others_stopped(n, &[1], seen);
            },
        );
    }
}

#[test]
fn transfer_offset_overflowing_the_address_space() {
    for op in OPS {
        expect_error(
            1,
            move |bsp| {
                let x = Area::<u32>::new(bsp, LEN);
                let local = Area::<u32>::new(bsp, LEN);
                bsp.push_reg(&x)?;
                bsp.sync()?;
                op.issue(bsp, 0, &x, usize::MAX / 2, &local, 1)
            },
            move |_, err| {
                let kind = ErrorKind::Overflow { what: "offset" };
                assert_error(err, kind, op.call(), err.pid(), 1);
            },
        );
    }
}

#[test]
fn push_reg_prefix_longer_than_area() {
    expect_failure(
        1,
        |bsp, _| {
            let x = Area::<u64>::new(bsp, 4);
            bsp.push_reg_prefix(&x, if is_last(bsp) { 5 } else { 4 })?;
            bsp.sync()
        },
        |n, err, seen| {
            let kind = local_bounds("area", 40, 32, 8);
            assert_error(err, kind, "bsp_push_reg", n - 1, 0);
            assert_others_stopped(n, &[n - 1], seen);
        },
    );
}

#[test]
fn get_into_too_short_destination() {
    for hp in [false, true] {
        expect_failure(
            1,
            move |bsp, _| {
                let x = Area::<u16>::new(bsp, LEN);
                let dst = Area::<u16>::new(bsp, 3);
                bsp.push_reg(&x)?;
                bsp.sync()?;
                if is_last(bsp) {
                    // Elements 2..4 of an area of 3.
                    if hp {
                        // SAFETY: refused before anything is queued.
                        unsafe { bsp.hpget(0, &x, 0, dst.range(2..4))? }
                    } else {
                        bsp.get(0, &x, 0, dst.range(2..4))?
                    }
                }
                bsp.sync()
            },
            |n, err, seen| {
                let call = if hp { "bsp_hpget" } else { "bsp_get" };
                let kind = local_bounds("destination area", 8, 6, 2);
                assert_error(err, kind, call, n - 1, 1);
                assert_others_stopped(n, &[n - 1], seen);
            },
        );
    }
}

// ----- registration state of the named area ---------------------------------

#[test]
fn transfer_into_never_registered_area() {
    for op in OPS {
        expect_failure(
            1,
            move |bsp, log| {
                let x = Area::<u32>::new(bsp, LEN);
                let y = Area::<u32>::new(bsp, LEN);
                let local = Area::<u32>::new(bsp, LEN);
                bsp.push_reg(&x)?;
                bsp.sync()?;
                if is_last(bsp) {
                    note(log, bsp, Seen::Addr(addr(bsp, &y)));
                    op.issue(bsp, 0, &y, 0, &local, 1)?;
                }
                bsp.sync()
            },
            |n, err, seen| {
                let kind = ErrorKind::NotRegistered {
                    addr: the_addr(seen),
                };
                assert_error(err, kind, op.call(), n - 1, 1);
                assert_others_stopped(n, &[n - 1], seen);
            },
        );
    }
}

#[test]
fn transfer_into_area_pushed_in_same_superstep() {
    for op in OPS {
        expect_failure(
            1,
            move |bsp, log| {
                let x = Area::<u32>::new(bsp, LEN);
                let local = Area::<u32>::new(bsp, LEN);
                bsp.push_reg(&x)?;
                // The registration takes effect at the sync, not before.
                if is_last(bsp) {
                    note(log, bsp, Seen::Addr(addr(bsp, &x)));
                    op.issue(bsp, 0, &x, 0, &local, 1)?;
                }
                bsp.sync()
            },
            |n, err, seen| {
                let kind = ErrorKind::NotRegistered {
                    addr: the_addr(seen),
                };
                assert_error(err, kind, op.call(), n - 1, 0);
                assert_others_stopped(n, &[n - 1], seen);
            },
        );
    }
}

#[test]
fn transfer_into_area_after_pop_took_effect() {
    for op in OPS {
        expect_failure(
            1,
            move |bsp, log| {
                let x = Area::<u32>::new(bsp, LEN);
                let local = Area::<u32>::new(bsp, LEN);
                bsp.push_reg(&x)?;
                bsp.sync()?;
                bsp.pop_reg(&x)?;
                // The pop takes effect at the sync: x is still usable.
                let right = (bsp.pid() + 1) % bsp.nprocs();
                op.issue(bsp, right, &x, 0, &local, 1)?;
                bsp.sync()?;
                if is_last(bsp) {
                    note(log, bsp, Seen::Addr(addr(bsp, &x)));
                    op.issue(bsp, 0, &x, 0, &local, 1)?;
                }
                bsp.sync()
            },
            |n, err, seen| {
                let kind = ErrorKind::NotRegistered {
                    addr: the_addr(seen),
                };
                assert_error(err, kind, op.call(), n - 1, 2);
                assert_others_stopped(n, &[n - 1], seen);
            },
        );
    }
}

#[test]
fn transfer_into_slot_where_remote_registered_null() {
    for op in OPS {
        expect_failure(
            2,
            move |bsp, _| {
                let x = Area::<u32>::new(bsp, LEN);
                let local = Area::<u32>::new(bsp, LEN);
                if bsp.pid() == 0 {
                    bsp.push_reg_null()?;
                } else {
                    bsp.push_reg(&x)?;
                }
                bsp.sync()?;
                if bsp.pid() == 1 {
                    op.issue(bsp, 0, &x, 0, &local, 1)?;
                }
                bsp.sync()
            },
            |n, err, seen| {
                let kind = ErrorKind::RemoteNull { remote: 0 };
                assert_error(err, kind, op.call(), 1, 1);
                assert_others_stopped(n, &[1], seen);
            },
        );
    }
}

// ----- safety: a refused transfer writes nothing -----------------------------

#[test]
fn refused_transfer_writes_nothing() {
    // Every process registers the first 4 of the 8 elements of `big`, which
    // lies between two neighbour areas. The last process makes a valid put
    // into process 0, then a transfer crossing the registered extent (into
    // `big`'s unregistered tail on process 0 for a put, into its own `local`
    // for a get). The run stops before any sync completes: no process's
    // memory may change, the valid put's target included.
    let initial = |pid: usize| -> Vec<u32> {
        let big = (0..8).map(|i| 100 * pid as u32 + i);
        [
            vec![0xAAAA; 4],
            big.collect(),
            vec![0xBBBB; 4],
            vec![7; LEN],
        ]
        .concat()
    };
    for op in OPS {
        expect_failure(
            2,
            move |bsp, log| {
                let init = initial(bsp.pid());
                let before = Area::from_slice(bsp, &init[..4]);
                let big = Area::from_slice(bsp, &init[4..12]);
                let after = Area::from_slice(bsp, &init[12..16]);
                let local = Area::from_slice(bsp, &init[16..]);
                bsp.push_reg_prefix(&big, 4)?;
                bsp.sync()?;
                let r = if is_last(bsp) {
                    bsp.put(0, &big, 0, &[1, 2])?;
                    op.issue(bsp, 0, &big, 2, &local, 4)
                } else {
                    bsp.sync()
                };
                let areas = [&before, &big, &after, &local];
                let mem = areas.iter().flat_map(|a| a.to_vec(bsp)).collect();
                note(log, bsp, Seen::Values(mem));
                r
            },
            |n, err, seen| {
                assert_error(err, out_of_bounds(0, 8, 16, 16, 4), op.call(), n - 1, 1);
                assert_others_stopped(n, &[n - 1], seen);
                for pid in 0..n {
                    let mem = seen.iter().find_map(|(p, s)| match s {
                        Seen::Values(v) if *p == pid => Some(v),
                        _ => None,
                    });
                    let mem = mem.unwrap_or_else(|| panic!("process {pid} noted no memory"));
                    assert_eq!(mem, &initial(pid), "memory of process {pid} after {op:?}");
                }
            },
        );
    }
}

// ----- the raw layer ----------------------------------------------------------

/// Runs the raw call `name` (C name) on the last process with arguments
/// `[pid, offset, nbytes]` (for `bsp_push_reg`, `bsp_set_tagsize` and
/// `bsp_move`: the size), after every process registered a 16-byte buffer
/// (the others wait in sync). The local and registered addresses are that
/// buffer's, or `ident` for the registered one if given. The run must fail
/// with `kind(nprocs)` from `name` in superstep 1.
fn raw_case(
    name: &'static str,
    kind: fn(usize) -> ErrorKind,
    args: [i64; 3],
    ident: Option<usize>,
) {
    let [pid, offset, nbytes] = args;
    expect_failure(
        1,
        move |bsp, _| {
            let mut buf = [0u8; 16];
            let p = buf.as_mut_ptr().cast::<c_void>();
            let reg = ident.map_or(p, |a| a as *mut c_void);
            let raw = bsp.raw();
            // SAFETY: `buf` outlives its registration's use (the run stops
            // before this function returns) and is not touched meanwhile;
            // the calls on the last process are refused before they touch
            // any memory (which is what is tested).
            unsafe {
                raw.push_reg(p, 16)?;
                bsp.sync()?;
                if is_last(bsp) {
                    let raw = bsp.raw();
                    match name {
                        "bsp_put" => raw.put(pid, p, reg, offset, nbytes),
                        "bsp_hpput" => raw.hpput(pid, p, reg, offset, nbytes),
                        "bsp_get" => raw.get(pid, reg, offset, p, nbytes),
                        "bsp_hpget" => raw.hpget(pid, reg, offset, p, nbytes),
                        "bsp_send" => raw.send(pid, p, p, nbytes),
                        "bsp_push_reg" => raw.push_reg(p, nbytes),
                        "bsp_set_tagsize" => raw.set_tagsize(nbytes).map(drop),
                        "bsp_move" => raw.move_payload(p, nbytes).map(drop),
                        _ => unreachable!("{name}"),
                    }?;
                }
            }
            bsp.sync()
        },
        move |n, err, seen| {
            assert_error(err, kind(n), name, n - 1, 1);
            assert_others_stopped(n, &[n - 1], seen);
        },
    );
}

const TRANSFERS: [&str; 4] = ["bsp_put", "bsp_hpput", "bsp_get", "bsp_hpget"];

fn negative(what: &'static str, value: i64) -> ErrorKind {
    ErrorKind::Negative { what, value }
}

#[test]
fn raw_negative_nbytes() {
    for name in TRANSFERS {
        raw_case(name, |_| negative("nbytes", -1), [0, 0, -1], None);
    }
    raw_case(
        "bsp_send",
        |_| negative("payload nbytes", -3),
        [0, 0, -3],
        None,
    );
}

#[test]
fn raw_negative_offset() {
    for name in TRANSFERS {
        raw_case(name, |_| negative("offset", -8), [0, -8, 4], None);
    }
}

#[test]
fn raw_negative_push_reg_size() {
    raw_case("bsp_push_reg", |_| negative("size", -4), [0, 0, -4], None);
}

#[test]
fn raw_negative_tag_size() {
    raw_case(
        "bsp_set_tagsize",
        |_| negative("tag size", -1),
        [0, 0, -1],
        None,
    );
}

#[test]
fn raw_negative_reception_size() {
    raw_case(
        "bsp_move",
        |_| negative("reception nbytes", -2),
        [0, 0, -2],
        None,
    );
}

#[test]
fn raw_negative_pid() {
    for name in TRANSFERS.into_iter().chain(["bsp_send"]) {
        raw_case(name, |n| pid_out_of_range(-1, n), [-1, 0, 4], None);
    }
}

#[test]
fn raw_huge_offset_is_out_of_bounds_not_wrapped() {
    for name in TRANSFERS {
        let k = |_| out_of_bounds(0, i64::MAX as usize, 4, 16, 1);
        raw_case(name, k, [0, i64::MAX, 4], None);
    }
}

#[test]
fn raw_transfer_into_unregistered_address() {
    for name in TRANSFERS {
        let k = |_| ErrorKind::NotRegistered { addr: 0x10 };
        raw_case(name, k, [0, 0, 4], Some(0x10));
    }
}

// ----- messages ---------------------------------------------------------------

#[test]
fn send_tag_length_differs_from_tag_size() {
    expect_failure(
        1,
        |bsp, _| {
            bsp.set_tagsize(4)?;
            bsp.sync()?;
            if is_last(bsp) {
                bsp.send(0, &[1, 2], b"payload")?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            let kind = ErrorKind::TagLength {
                given: 2,
                expected: 4,
            };
            assert_error(err, kind, "bsp_send", n - 1, 1);
            assert_others_stopped(n, &[n - 1], seen);
        },
    );
}

#[test]
fn send_with_tag_size_set_this_superstep() {
    // A new tag size applies to the messages sent after the next sync.
    expect_failure(
        1,
        |bsp, _| {
            bsp.set_tagsize(8)?;
            if is_last(bsp) {
                bsp.send_pod(0, &7u64, &[1u32])?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            let kind = ErrorKind::TagLength {
                given: 8,
                expected: 0,
            };
            assert_error(err, kind, "bsp_send", n - 1, 0);
            assert_others_stopped(n, &[n - 1], seen);
        },
    );
}

#[test]
fn move_on_empty_queue() {
    for raw in [false, true] {
        expect_failure(
            1,
            move |bsp, _| {
                bsp.send(bsp.pid(), &[], b"one")?;
                bsp.sync()?;
                let mut buf = [0u8; 8];
                check_eq!(bsp, bsp.move_payload(&mut buf)?, 3);
                if is_last(bsp) && raw {
                    // SAFETY: `buf` is writable for 8 bytes.
                    unsafe { bsp.raw().move_payload(buf.as_mut_ptr().cast(), 8)? };
                } else if is_last(bsp) {
                    bsp.move_payload(&mut buf)?;
                }
                bsp.sync()
            },
            |n, err, seen| {
                assert_error(err, ErrorKind::EmptyQueue, "bsp_move", n - 1, 1);
                assert_others_stopped(n, &[n - 1], seen);
            },
        );
    }
}

#[test]
fn move_before_any_message() {
    expect_error(
        1,
        |bsp| bsp.move_payload(&mut [0u8; 4]).map(drop),
        |_, err| assert_error(err, ErrorKind::EmptyQueue, "bsp_move", err.pid(), 0),
    );
}

#[test]
fn get_tag_into_too_short_buffer() {
    expect_failure(
        1,
        |bsp, _| {
            bsp.set_tagsize(8)?;
            bsp.sync()?;
            bsp.send_pod(bsp.pid(), &1u64, &[2u8])?;
            bsp.sync()?;
            if is_last(bsp) {
                bsp.get_tag(&mut [0u8; 4])?;
            }
            bsp.sync()
        },
        |n, err, seen| {
            let kind = local_bounds("tag buffer", 8, 4, 1);
            assert_error(err, kind, "bsp_get_tag", n - 1, 2);
            assert_others_stopped(n, &[n - 1], seen);
        },
    );
}

// ----- ignored errors -----------------------------------------------------------

#[test]
fn ignored_error_still_stops_the_run() {
    // Every process ignores every error and returns Ok: the run still fails
    // with the ignored error, and later calls on every process (including
    // the next sync) report that the run was stopped.
    expect_failure(
        1,
        |bsp, log| {
            let x = Area::<u32>::new(bsp, LEN);
            let _ = bsp.push_reg(&x);
            let _ = bsp.sync();
            if is_last(bsp) {
                let _ = bsp.put(bsp.nprocs(), &x, 0, &[1]);
            }
            let r = bsp.sync();
            note(log, bsp, Seen::Call(r));
            note(log, bsp, Seen::Call(bsp.put(0, &x, 0, &[1])));
            Ok(())
        },
        |n, err, seen| {
            let kind = pid_out_of_range(n as i64, n);
            assert_error(err, kind, "bsp_put", n - 1, 1);
            for pid in 0..n {
                let got = calls(seen, pid);
                assert_eq!(got.len(), 2, "process {pid}: {got:?}");
                for (r, call) in got.into_iter().zip(["bsp_sync", "bsp_put"]) {
                    let e = r.as_ref().expect_err("the run was stopped");
                    assert!(e.is_stopped(), "process {pid}: {e}");
                    assert_located(e, call, pid, 1);
                }
            }
        },
    );
}
