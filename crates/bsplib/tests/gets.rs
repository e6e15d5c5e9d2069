//! Gets on every engine, around the one-copy path of the engines sharing
//! one address space: a get whose destination lies outside the
//! requester's registered memory is copied by the requester itself during
//! the sync; as soon as one get of the superstep writes registered
//! memory, every get of that superstep goes to its owner as a request.
//! Either way a get sees the source's value at the end of the superstep,
//! before any put of that superstep lands, and gets into overlapping
//! destinations land in call order.

mod common;

use bsplib::{Area, Bsp, Error};
use common::{configurations, run_on};

/// Every process gets its left neighbour's words into a local (never
/// registered) buffer, large and small, while the neighbour puts into the
/// very words being read: the get sees the values before the puts.
fn unregistered_destinations(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let n = 100_000usize; // 800 KB: the large-copy path too
    let mut src = Area::<u64>::new(bsp, n);
    src.as_mut_slice(bsp)
        .iter_mut()
        .enumerate()
        .for_each(|(i, x)| *x = (me * n + i) as u64);
    bsp.push_reg(&src)?;
    bsp.sync()?;

    let left = (me + p - 1) % p;
    let right = (me + 1) % p;
    let big = Area::<u64>::new(bsp, n);
    let small = Area::<u64>::new(bsp, 3);

    // A superstep of large gets only (read across address spaces on
    // `processes` where the kernel allows it), the source overwritten by
    // a put in the same superstep.
    bsp.get(left, &src, 0, big.range(..n / 2))?;
    bsp.get(left, &src, n / 2, big.range(n / 2..))?;
    bsp.put(right, &src, 0, &vec![7u64; n])?;
    bsp.sync()?;
    let want: Vec<u64> = (0..n).map(|i| (left * n + i) as u64).collect();
    check_eq!(bsp, big.as_slice(bsp), &want[..]);
    check!(bsp, src.as_slice(bsp).iter().all(|&x| x == 7));
    src.as_mut_slice(bsp)
        .iter_mut()
        .enumerate()
        .for_each(|(i, x)| *x = (me * n + i) as u64);
    bsp.sync()?;

    // Large and small gets in one superstep.
    bsp.get(left, &src, 0, big.range(..n))?;
    bsp.get(left, &src, 7, small.range(..3))?;
    // Overwrite the right neighbour's words in the same superstep: its
    // gets from us must still see the old values.
    bsp.put(right, &src, 0, &vec![u64::MAX; n])?;
    bsp.sync()?;

    check_eq!(bsp, big.as_slice(bsp), &want[..]);
    check_eq!(bsp, small.as_slice(bsp), &want[7..10]);
    check!(bsp, src.as_slice(bsp).iter().all(|&x| x == u64::MAX));
    bsp.pop_reg(&src)?;
    bsp.sync()?;
    Ok(big.as_slice(bsp)[n - 1])
}

#[test]
fn gets_into_local_memory_see_the_end_of_the_superstep() {
    for (engine, p) in configurations() {
        run_on(engine, p, unregistered_destinations)
            .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
    }
}

/// Process i gets into its own registered area `a` from its left
/// neighbour while its right neighbour gets from that same area `a`: the
/// right neighbour must see `a` as it was at the end of the superstep, not
/// what the get writes into it. Earlier in the same superstep, gets into
/// a local buffer (which would have been copied directly) overlap a later
/// get of the same words: the later one must win (call order).
fn registered_destinations(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let mut a = Area::<u64>::new(bsp, 4);
    a.as_mut_slice(bsp).copy_from_slice(&[me as u64 * 10; 4]);
    let mut b = Area::<u64>::new(bsp, 4);
    b.as_mut_slice(bsp)
        .copy_from_slice(&[me as u64 * 10 + 1; 4]);
    bsp.push_reg(&a)?;
    bsp.push_reg(&b)?;
    bsp.sync()?;

    let left = (me + p - 1) % p;
    let local = Area::<u64>::new(bsp, 4);
    // First a get into local memory (alone it would be copied directly),
    // then one into registered memory, then one overlapping the first.
    bsp.get(left, &a, 0, local.range(..4))?;
    bsp.get(left, &a, 0, a.range(..4))?;
    bsp.get(left, &b, 0, local.range(2..4))?;
    bsp.sync()?;

    let l = left as u64;
    check_eq!(bsp, a.as_slice(bsp), &[l * 10; 4][..]);
    check_eq!(
        bsp,
        local.as_slice(bsp),
        &[l * 10, l * 10, l * 10 + 1, l * 10 + 1][..]
    );
    bsp.pop_reg(&b)?;
    bsp.pop_reg(&a)?;
    bsp.sync()?;
    Ok(a.as_slice(bsp)[0])
}

#[test]
fn gets_into_registered_memory_do_not_disturb_other_gets() {
    for (engine, p) in configurations() {
        run_on(engine, p, registered_destinations)
            .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
    }
}

/// Even processes get into their registered `buf` (a request, written
/// after every process has read what it gets) while their right
/// neighbours, odd, get that same `buf` into local memory (which they copy
/// themselves): the odd ones must see `buf` as it was at the end of the
/// superstep.
fn a_destination_read_by_another_get(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let mut buf = Area::<u64>::new(bsp, 8);
    buf.as_mut_slice(bsp).copy_from_slice(&[me as u64 + 100; 8]);
    let mut src = Area::<u64>::new(bsp, 8);
    src.as_mut_slice(bsp).copy_from_slice(&[me as u64; 8]);
    bsp.push_reg(&buf)?;
    bsp.push_reg(&src)?;
    bsp.sync()?;
    let left = (me + p - 1) % p;
    let seen = Area::<u64>::new(bsp, 8);
    let writes = me % 2 == 0;
    if writes {
        bsp.get(left, &src, 0, buf.range(..8))?;
    } else {
        bsp.get(left, &buf, 0, seen.range(..8))?;
    }
    bsp.sync()?;
    if writes {
        check_eq!(bsp, buf.as_slice(bsp), &[left as u64; 8][..]);
    } else {
        check_eq!(bsp, seen.as_slice(bsp), &[left as u64 + 100; 8][..]);
    }
    bsp.pop_reg(&src)?;
    bsp.pop_reg(&buf)?;
    bsp.sync()?;
    Ok(0)
}

#[test]
fn a_get_and_a_get_of_its_destination_in_one_superstep() {
    for (engine, p) in configurations() {
        run_on(engine, p, a_destination_read_by_another_get)
            .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
    }
}
