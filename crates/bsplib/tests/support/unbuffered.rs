//! Scenarios of large unbuffered transfers that several test binaries run
//! (`large_puts.rs` as the engines choose, `cross_memory.rs` with
//! cross-memory attach asked for, `two_copies.rs` without it).

#![allow(dead_code)] // `large_puts.rs` runs only `unbuffered`.

use std::cell::RefCell;
use std::rc::Rc;

use bsplib::am::{Counters, Handlers, Landing};
use bsplib::{Area, Bsp, Error};

use crate::common::{configurations, left, right, run_on};
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

/// A large get of a registered area into an unregistered one (read from
/// the owner's memory by the requester), then a put into the source in the
/// next superstep: the get saw the old values.
pub fn gets(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, l) = (bsp.pid(), left(bsp));
    let n = 100_000usize;
    let values: Vec<u32> = (0..n as u32).map(|i| i * 5 + me as u32).collect();
    let src = Area::from_vec(bsp, values);
    let local = Area::<u32>::new(bsp, n);
    bsp.push_reg(&src)?;
    bsp.sync()?;
    bsp.get(l, &src, 10, local.range(..n - 10))?;
    bsp.sync()?;
    let got = local.as_slice(bsp);
    let bad = (0..n - 10).find(|&i| got[i] != (i as u32 + 10) * 5 + l as u32);
    check!(bsp, bad.is_none(), "get: first wrong element at {bad:?}");
    check!(
        bsp,
        got[n - 10..].iter().all(|&x| x == 0),
        "get wrote past its range"
    );
    let sum = got.iter().map(|&x| x as u64).sum();
    bsp.pop_reg(&src)?;
    bsp.sync()?;
    Ok(sum)
}

/// Active messages with 1 MiB of data into a buffer.
pub fn messages(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, r, l) = (bsp.pid(), right(bsp), left(bsp));
    let n = 1 << 17; // u64s: 1 MiB
    let got = Rc::new(RefCell::new(Vec::new()));
    let g = got.clone();
    let mut hs = Handlers::new();
    let h = hs.add::<u8, u64>("large", move |_| {
        let g = g.clone();
        Landing::buffer().then(move |d| *g.borrow_mut() = d.take_data())
    });
    bsp.am().init(hs)?;
    let data: Vec<u64> = (0..n as u64).map(|i| (i * 3) ^ me as u64).collect();
    bsp.am().send(r, h, &[0u8], &data, Counters::none())?;
    bsp.sync()?;
    let want: Vec<u64> = (0..n as u64).map(|i| (i * 3) ^ l as u64).collect();
    check!(bsp, *got.borrow() == want, "the message's data differ");
    bsp.am().term()?;
    Ok(want.iter().sum())
}

/// [`unbuffered`], [`gets`] and [`messages`] on every engine of the
/// configuration, with the settings the caller made.
pub fn on_every_engine() {
    for (engine, p) in configurations() {
        let name = engine.name();
        run_on(engine, p, unbuffered).unwrap_or_else(|e| panic!("{name} p={p} hpput: {e}"));
        run_on(engine, p, gets).unwrap_or_else(|e| panic!("{name} p={p} get: {e}"));
        run_on(engine, p, messages).unwrap_or_else(|e| panic!("{name} p={p} messages: {e}"));
    }
}
