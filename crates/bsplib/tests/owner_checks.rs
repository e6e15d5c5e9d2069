//! The owner of memory checks every record that names it: a put or get
//! record naming a registration slot the owner does not have, a range
//! beyond the owner's area, or a slot where the owner registered `NULL`
//! is refused by the owner at the sync with `ErrorKind::InvalidRecord`,
//! on every engine, whatever the sender claims. The records are forged
//! with the hidden test hooks `Raw::forge_put` / `Raw::forge_get`, which
//! skip the sender's own checks (a real sender reports such mistakes at
//! the call).

mod common;

use bsplib::{Area, Bsp, Error, ErrorKind};
use common::{expect_error, scenario};

/// Registers an area of 4 `u32`s (16 bytes) on every process, except
/// `NULL` on process `null_on` (if any): slot 0. Then syncs.
fn setup(bsp: &mut Bsp, null_on: Option<usize>) -> Result<Area<u32>, Error> {
    let x = Area::<u32>::new(bsp, 4);
    if Some(bsp.pid()) == null_on {
        bsp.push_reg_null()?;
    } else {
        bsp.push_reg(&x)?;
    }
    bsp.sync()?;
    Ok(x)
}

/// The process that receives the forged record: the last one.
fn owner(bsp: &Bsp) -> usize {
    bsp.nprocs() - 1
}

/// Checks that the run's error is an `InvalidRecord` of kind `what` from
/// process 0, refused by the owner (the last process) in `bsp_sync` of
/// superstep 1, mentioning `needle`.
fn refused(what: &'static str, needle: &'static str) -> impl Fn(usize, &Error) + Clone {
    move |n, e| {
        match e.kind() {
            ErrorKind::InvalidRecord {
                what: w,
                sender,
                detail,
            } => {
                assert_eq!((*w, *sender), (what, 0), "{e}");
                assert!(detail.contains(needle), "{e}");
            }
            k => panic!("expected InvalidRecord, got {k:?}: {e}"),
        }
        assert_eq!(
            (e.pid(), e.superstep(), e.call()),
            (n - 1, 1, "bsp_sync"),
            "{e}"
        );
        let text = e.to_string();
        assert!(
            text.contains("refused by the process that owns the memory"),
            "{text}"
        );
    }
}

#[test]
fn a_put_naming_a_slot_the_owner_does_not_have_is_refused_there() {
    expect_error(
        1,
        |bsp| {
            setup(bsp, None)?;
            if bsp.pid() == 0 {
                // SAFETY: a test of the owner's checks: the forged put names
                // a slot the owner does not have, which it must refuse.
                unsafe { bsp.raw().forge_put(owner(bsp) as i64, 7, 0, &[1, 2, 3, 4]) }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused(
            "put",
            "registration slot 7, which this process does not have",
        ),
    );
}

#[test]
fn a_put_beyond_the_owners_area_is_refused_there() {
    expect_error(
        1,
        |bsp| {
            setup(bsp, None)?;
            if bsp.pid() == 0 {
                // 16 bytes registered: bytes 12..20 run 4 past the end.
                // SAFETY: a test of the owner's checks: the forged put runs
                // past the owner's area, which it must refuse.
                unsafe { bsp.raw().forge_put(owner(bsp) as i64, 0, 12, &[9; 8]) }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused("put", "bytes 12..20 of registration slot 0"),
    );
}

#[test]
fn an_offset_that_overflows_is_refused() {
    expect_error(
        1,
        |bsp| {
            setup(bsp, None)?;
            if bsp.pid() == 0 {
                // SAFETY: a test of the owner's checks: the forged put's
                // range overflows, which the owner must refuse.
                unsafe {
                    bsp.raw()
                        .forge_put(owner(bsp) as i64, 0, usize::MAX - 2, &[9; 8])
                }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused("put", "of registration slot 0"),
    );
}

#[test]
fn a_put_into_a_null_registration_is_refused() {
    expect_error(
        2,
        |bsp| {
            let last = owner(bsp);
            setup(bsp, Some(last))?;
            if bsp.pid() == 0 {
                // SAFETY: a test of the owner's checks: the forged put names
                // a NULL registration, which the owner must refuse.
                unsafe { bsp.raw().forge_put(last as i64, 0, 0, &[1; 4]) }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused("put", "registered NULL"),
    );
}

#[test]
fn a_get_naming_a_slot_the_owner_does_not_have_is_refused_there() {
    expect_error(
        1,
        |bsp| {
            setup(bsp, None)?;
            if bsp.pid() == 0 {
                // SAFETY: a test of the owner's checks: the forged get names
                // a slot the owner does not have, which it must refuse.
                unsafe { bsp.raw().forge_get(owner(bsp) as i64, 3, 0, 4) }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused(
            "get",
            "registration slot 3, which this process does not have",
        ),
    );
}

#[test]
fn a_get_beyond_the_owners_area_is_refused_there() {
    expect_error(
        1,
        |bsp| {
            setup(bsp, None)?;
            if bsp.pid() == 0 {
                // SAFETY: a test of the owner's checks: the forged get runs
                // past the owner's area, which it must refuse.
                unsafe { bsp.raw().forge_get(owner(bsp) as i64, 0, 8, 1 << 20) }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused("get", "bytes 8..1048584 of registration slot 0"),
    );
}

/// The other side of the check: records naming real slots and ranges are
/// resolved by their owner to its own memory (slot numbers are the same on
/// every process, addresses are not), including a slot popped in the
/// superstep of the record.
#[test]
fn records_naming_real_slots_land_in_the_owners_memory() {
    scenario(|bsp| {
        let x = setup(bsp, None)?; // slot 0
        let y = Area::<u32>::new(bsp, 2);
        bsp.push_reg(&y)?; // slot 1
        bsp.sync()?;
        let last = owner(bsp);
        if bsp.pid() == 0 {
            let word = 0xabcd_0123u32.to_ne_bytes();
            // SAFETY: a test of the owner's checks: the forged puts name
            // real slots and ranges, which the owner must accept.
            unsafe {
                bsp.raw().forge_put(last as i64, 1, 4, &word)?;
                bsp.raw().forge_put(last as i64, 0, 8, &[7, 0, 0, 0])?;
            }
        }
        // Popped in the same superstep as the records that name it.
        bsp.pop_reg(&y)?;
        bsp.sync()?;
        if bsp.pid() == last {
            check_eq!(bsp, y.as_slice(bsp)[1], 0xabcd_0123);
            check_eq!(bsp, x.as_slice(bsp)[2], u32::from_ne_bytes([7, 0, 0, 0]));
        }
        Ok(())
    });
}

#[test]
fn a_message_whose_tag_is_not_the_tag_size_is_refused() {
    expect_error(
        1,
        |bsp| {
            bsp.set_tagsize(4)?;
            bsp.sync()?;
            if bsp.pid() == 0 {
                // `bsp_get_tag` would copy 64 bytes into a 4-byte tag.
                // SAFETY: a test of the receiver's checks: the forged
                // message's tag is not the tag size, which it must refuse.
                unsafe { bsp.raw().forge_send(owner(bsp) as i64, &[7; 64], &[1, 2]) }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused("message", "tag is not the 4 bytes"),
    );
}

#[test]
fn a_large_put_naming_bytes_outside_the_senders_channel_is_refused() {
    // On `processes` the record's range is checked against the sender's
    // channel; elsewhere no engine has such channels: refused either way.
    expect_error(
        1,
        |bsp| {
            setup(bsp, None)?;
            if bsp.pid() == 0 {
                // SAFETY: a test of the owner's checks: the forged record
                // names bytes outside the sender's channel, which the owner
                // must refuse.
                unsafe {
                    bsp.raw().forge_put_elsewhere(
                        owner(bsp) as i64,
                        0,
                        0,
                        16,
                        usize::MAX - 8,
                        false,
                    )
                }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused("put", "of its channel, which are not in it"),
    );
}

#[test]
fn an_hpput_naming_memory_its_sender_does_not_have_is_refused() {
    // On `processes` with cross-memory attach the kernel refuses to read
    // an unmapped address of the sender; elsewhere no engine reads another
    // process's memory from a record: refused either way.
    expect_error(
        1,
        |bsp| {
            setup(bsp, None)?;
            if bsp.pid() == 0 {
                // SAFETY: a test of the owner's checks: the forged record
                // names memory the sender does not have, which the owner
                // must refuse.
                unsafe {
                    bsp.raw()
                        .forge_put_elsewhere(owner(bsp) as i64, 0, 0, 16, 8, true)
                }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused("put", "bytes at address 0x8 of its memory"),
    );
}

#[test]
fn an_hpput_naming_another_process_area_memory_is_refused() {
    // On `processes` large areas live in memory every process maps (at the
    // same address in all): a receiver reads an hpput's source there only
    // inside its sender's own region. A record naming the receiver's own
    // area (another region) is refused, not copied; on the other engines
    // no record is read from another process's memory at all.
    expect_error(
        2,
        |bsp| {
            let big = Area::<u64>::new(bsp, 1024);
            if bsp.pid() == owner(bsp) {
                let at = big.as_slice(bsp).as_ptr() as u64;
                bsp.send(0, &[], &at.to_le_bytes())?;
            }
            setup(bsp, None)?;
            if bsp.pid() == 0 {
                let mut at = [0u8; 8];
                bsp.move_payload(&mut at)?;
                let at = u64::from_le_bytes(at) as usize;
                // SAFETY: a test of the receiver's checks: the forged record
                // names the receiver's own area memory, which it must refuse.
                unsafe {
                    bsp.raw()
                        .forge_put_elsewhere(owner(bsp) as i64, 0, 0, 16, at, true)
                }?;
            }
            bsp.sync()?;
            drop(big);
            Ok(())
        },
        refused("put", "cannot read them"),
    );
}

// ----- large payloads (by rendezvous on mpi: a descriptor in the stream,
// the payload point to point into the range the owner resolved) ---------

/// Bytes of a forged large payload: above the rendezvous threshold.
const LARGE: usize = 256 << 10;

#[test]
fn a_large_put_naming_a_slot_the_owner_does_not_have_is_refused_there() {
    expect_error(
        1,
        |bsp| {
            setup(bsp, None)?;
            if bsp.pid() == 0 {
                // SAFETY: a test of the owner's checks: the forged large put
                // names a slot the owner does not have, which it must refuse.
                unsafe {
                    bsp.raw()
                        .forge_put(owner(bsp) as i64, 7, 0, &vec![5u8; LARGE])
                }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused(
            "put",
            "registration slot 7, which this process does not have",
        ),
    );
}

#[test]
fn a_large_put_beyond_the_owners_area_is_refused_there() {
    expect_error(
        1,
        |bsp| {
            setup(bsp, None)?;
            if bsp.pid() == 0 {
                // 16 bytes registered, 256 KiB named: nothing is received.
                // SAFETY: a test of the owner's checks: the forged large put
                // runs past the owner's area, which it must refuse.
                unsafe {
                    bsp.raw()
                        .forge_put(owner(bsp) as i64, 0, 8, &vec![5u8; LARGE])
                }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused("put", "bytes 8..262152 of registration slot 0"),
    );
}

#[test]
fn a_large_put_refused_while_others_move_large_payloads_ends_the_run() {
    // Every process sends every other a valid large put in the same sync
    // as the forged one: the owner refuses the forged record, the others
    // must not wait for it forever.
    expect_error(
        2,
        |bsp| {
            let (pid, p) = (bsp.pid(), bsp.nprocs());
            let x = Area::<u8>::new(bsp, LARGE);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            let mine = vec![pid as u8; LARGE];
            for t in 0..p {
                bsp.put(t, &x, 0, &mine)?;
            }
            if pid == 0 {
                // SAFETY: a test of the owner's checks: the forged large put
                // runs past the owner's area; the owner must refuse it and
                // the run must end rather than hang.
                unsafe {
                    bsp.raw()
                        .forge_put(owner(bsp) as i64, 0, 1, &vec![5u8; LARGE])
                }?;
            }
            bsp.sync()?;
            Ok(())
        },
        refused("put", "bytes 1..262145 of registration slot 0"),
    );
}
