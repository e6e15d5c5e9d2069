//! A scenario two test binaries run (`large_puts.rs` as the engines choose,
//! `cross_memory.rs` with cross-memory attach asked for).

use bsplib::{Area, Bsp, Error};

use crate::{check, check_eq};

/// Large hpputs and `put_owned` from heap memory (on `processes` two
/// copies, or read across address spaces by cross-memory attach where it
/// is asked for and the kernel allows it): whole, at odd offsets, with a
/// small put overlapping in the same superstep landing in call order
/// (puts before hpputs from one sender: the order every engine uses is
/// not promised for overlaps, so the ranges here do not overlap).
pub fn unbuffered(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let n = 200_000usize;
    let dst = Area::<u8>::new(bsp, 3 * n);
    bsp.push_reg(&dst)?;
    bsp.sync()?;
    let right = (me + 1) % p;
    let left = (me + p - 1) % p;
    let src: Vec<u8> = (0..n + 8).map(|i| (i * 7 + me) as u8).collect();
    // SAFETY: `src` lives, unchanged, until after the sync; nobody else
    // touches the range of `dst` it goes to.
    unsafe { bsp.hpput(right, &dst, 1, &src[5..5 + n])? };
    let owned: Vec<u8> = (0..n).map(|i| (i * 3 + me) as u8).collect();
    bsp.put_owned(right, &dst, n + 3, owned)?;
    bsp.put(right, &dst, 2 * n + 10, &[0xAB; 10])?;
    bsp.sync()?;
    let got = dst.as_slice(bsp);
    let bad = (0..n).find(|&i| got[1 + i] != ((i + 5) * 7 + left) as u8);
    check!(bsp, bad.is_none(), "hpput: first wrong byte at {bad:?}");
    let bad = (0..n).find(|&i| got[n + 3 + i] != (i * 3 + left) as u8);
    check!(bsp, bad.is_none(), "put_owned: first wrong byte at {bad:?}");
    check_eq!(bsp, &got[2 * n + 10..2 * n + 20], &[0xAB; 10][..]);
    let sum = got.iter().map(|&b| b as u64).sum();
    drop(src);
    bsp.pop_reg(&dst)?;
    bsp.sync()?;
    Ok(sum)
}
