//! Large puts on every engine: payloads from 64 KiB up take other paths
//! (on `processes` they are written into the sender's channel at the call
//! and read there by the receiver; on every engine they are placed at
//! their source's offset within a cache line). What lands must not
//! depend on that: sources at every alignment, several large puts per
//! destination, small puts overlapping large ones in call order, over
//! supersteps of both parities. Large `Area`s (in memory every process
//! maps on `processes`): hpputs from them and gets of them, and their
//! memory reused.

mod common;
#[path = "support/unbuffered.rs"]
mod unbuffered;

use bsplib::{Area, Bsp, Error};
use common::for_each_engine;
use unbuffered::unbuffered;

fn scenario(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let n = 300_000usize;
    let mut dst = Area::<u8>::new(bsp, 2 * n + 64);
    bsp.push_reg(&dst)?;
    bsp.sync()?;
    let right = (me + 1) % p;
    let left = (me + p - 1) % p;
    let byte = |who: usize, s: usize, i: usize| (who * 31 + s * 7 + i * 13 % 251) as u8;
    let mut total = 0u64;
    for s in 0..4usize {
        dst.as_mut_slice(bsp).fill(0);
        // A source buffer read at offset `s` (every alignment over the
        // supersteps): two large puts, then a small one overlapping the
        // first, then a large one overlapping the small one in part.
        let src: Vec<u8> = (0..2 * n + 64).map(|i| byte(me, s, i)).collect();
        let a = 65_536 + s * 1000;
        bsp.put(right, &dst, 0, &src[s..s + a])?;
        bsp.put(right, &dst, n, &src[s + 1..s + 1 + n])?;
        bsp.put(right, &dst, 10, &[0xEE; 100])?;
        bsp.put(right, &dst, 50, &src[3..3 + 70_000])?;
        bsp.sync()?;

        let got = dst.as_slice(bsp);
        let want = |i: usize| -> u8 {
            if (50..50 + 70_000).contains(&i) {
                byte(left, s, 3 + i - 50)
            } else if (10..110).contains(&i) {
                0xEE
            } else if i < a {
                byte(left, s, s + i)
            } else if (n..2 * n).contains(&i) {
                byte(left, s, s + 1 + i - n)
            } else {
                0
            }
        };
        let bad = (0..got.len()).find(|&i| got[i] != want(i));
        check!(
            bsp,
            bad.is_none(),
            "superstep {s}: first wrong byte at {bad:?}"
        );
        total += got.iter().map(|&b| b as u64).sum::<u64>();
    }
    bsp.pop_reg(&dst)?;
    bsp.sync()?;
    Ok(total)
}

#[test]
fn large_puts_land_whole_and_in_call_order() {
    for_each_engine(scenario, |_, _| {});
}

#[test]
fn large_hpputs_and_owned_puts_land_whole() {
    for_each_engine(unbuffered, |_, _| {});
}

/// Areas of 4 KiB and more, which live in memory every process maps on
/// `processes` (one `memcpy` by the receiver of an hpput from one, or by
/// the requester of a get of one): hpputs from an area at odd offsets
/// beside one from ordinary memory, a get of a registered area into an
/// unregistered one, and the memory of dropped areas reused (a new area
/// reads as zeros, `from_vec` and `from_slice` hold their values).
fn areas(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let right = (me + 1) % p;
    let left = (me + p - 1) % p;
    let n = 50_000usize;
    let mut total = 0u64;
    for round in 0..3usize {
        let byte = |who: usize, i: usize| (who * 17 + round * 5 + i * 11 % 253) as u8;
        // A dirty area dropped first: its memory comes back to the next.
        let mut dirty = Area::<u8>::new(bsp, 3 * n);
        dirty.as_mut_slice(bsp).fill(0xFF);
        drop(dirty);
        let dst = Area::<u8>::new(bsp, 3 * n);
        check!(
            bsp,
            dst.as_slice(bsp).iter().all(|&b| b == 0),
            "a new area is not zero"
        );
        let values: Vec<u8> = (0..n + 64).map(|i| byte(me, i)).collect();
        let src = Area::from_vec(bsp, values.clone());
        check_eq!(bsp, src.as_slice(bsp), &values[..]);
        let copy = Area::from_slice(bsp, &values[..n]);
        check_eq!(bsp, copy.as_slice(bsp), &values[..n]);
        let plain: Vec<u8> = (0..5000).map(|i| byte(me, i + 7)).collect();
        bsp.push_reg(&dst)?;
        bsp.push_reg(&src)?;
        bsp.sync()?;
        // SAFETY: `src`, `copy` and `plain` live, unchanged, until after the
        // sync; the ranges of `dst` they go to are disjoint and nobody else
        // touches them.
        unsafe {
            bsp.hpput(right, &dst, 1, &src.as_slice(bsp)[round..round + n])?;
            bsp.hpput(right, &dst, n + 3, &copy.as_slice(bsp)[5..5000])?;
            bsp.hpput(right, &dst, 2 * n + 1, &plain)?;
        }
        let local = Area::<u8>::new(bsp, n);
        bsp.get(left, &src, 3, local.range(..n - 3))?;
        bsp.sync()?;
        let got = dst.as_slice(bsp);
        let bad = (0..n).find(|&i| got[1 + i] != byte(left, round + i));
        check!(
            bsp,
            bad.is_none(),
            "hpput from an area: first wrong byte at {bad:?}"
        );
        let bad = (0..4995).find(|&i| got[n + 3 + i] != byte(left, 5 + i));
        check!(
            bsp,
            bad.is_none(),
            "hpput from a copied area: first wrong byte at {bad:?}"
        );
        let bad = (0..5000).find(|&i| got[2 * n + 1 + i] != byte(left, i + 7));
        check!(
            bsp,
            bad.is_none(),
            "hpput from a vector: first wrong byte at {bad:?}"
        );
        let got = local.as_slice(bsp);
        let bad = (0..n - 3).find(|&i| got[i] != byte(left, 3 + i));
        check!(
            bsp,
            bad.is_none(),
            "get of an area: first wrong byte at {bad:?}"
        );
        check!(
            bsp,
            got[n - 3..].iter().all(|&b| b == 0),
            "get wrote past its range"
        );
        total += dst.as_slice(bsp).iter().map(|&b| b as u64).sum::<u64>();
        bsp.pop_reg(&src)?;
        bsp.pop_reg(&dst)?;
        bsp.sync()?;
    }
    Ok(total)
}

#[test]
fn hpputs_from_areas_and_gets_of_areas_land_whole() {
    for_each_engine(areas, |_, _| {});
}

/// More large puts in one superstep than the first staging memory holds
/// (on `mpi` it grows in the middle of the superstep, keeping the payloads
/// staged before), then ten supersteps of one (its memory beyond what they
/// need is given back), then many again, each superstep with an hpput
/// between the puts: every byte lands, in every superstep.
fn growing(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let (n, k) = (400_000usize, 6usize);
    let mut dst = Area::<u8>::new(bsp, (k + 1) * n);
    bsp.push_reg(&dst)?;
    bsp.sync()?;
    let right = (me + 1) % p;
    let left = (me + p - 1) % p;
    let byte =
        |who: usize, s: usize, j: usize, i: usize| (who * 31 + s * 7 + j * 5 + i % 253) as u8;
    let mut total = 0u64;
    for s in 0..14usize {
        let count = if (2..12).contains(&s) { 1 } else { k };
        dst.as_mut_slice(bsp).fill(0);
        let unbuffered: Vec<u8> = (0..n).map(|i| byte(me, s, k, i)).collect();
        for j in 0..count {
            let src: Vec<u8> = (0..n).map(|i| byte(me, s, j, i)).collect();
            bsp.put(right, &dst, j * n, &src)?;
            if j == 0 {
                // SAFETY: `unbuffered` lives, unchanged, until after the
                // sync; nobody else writes its range of `dst`.
                unsafe { bsp.hpput(right, &dst, k * n, &unbuffered)? };
            }
        }
        bsp.sync()?;
        let got = dst.as_slice(bsp);
        let want = |i: usize| -> u8 {
            let j = i / n;
            if j < count || j == k {
                byte(left, s, j, i % n)
            } else {
                0
            }
        };
        let bad = (0..got.len()).find(|&i| got[i] != want(i));
        check!(
            bsp,
            bad.is_none(),
            "superstep {s}: first wrong byte at {bad:?}"
        );
        total += got.iter().map(|&b| b as u64).sum::<u64>();
        drop(unbuffered);
    }
    bsp.pop_reg(&dst)?;
    bsp.sync()?;
    Ok(total)
}

#[test]
fn staging_grows_and_shrinks_between_supersteps() {
    for_each_engine(growing, |_, _| {});
}
