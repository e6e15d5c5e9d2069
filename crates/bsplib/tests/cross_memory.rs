//! The `processes` engine's paths for large unbuffered transfers when
//! cross-memory attach is asked for (`BSPLIB_CMA=1`; off by default, as it
//! measured slower than two copies) and area memory is off
//! (`BSPLIB_AREA_MEMORY=0`): hpputs, owned puts, gets and large
//! active-message data then read other processes' heap memory through the
//! kernel (`process_vm_readv`). Where the kernel refuses it (a seccomp
//! filter, Yama's scope 2 or 3), the library keeps its two-copy paths,
//! which must give the same results. The other engines ignore both
//! settings and run the same scenarios.
//!
//! One test in this binary: the settings are read once per process, and
//! are set before its first run.

mod common;
#[path = "support/unbuffered.rs"]
mod unbuffered;

use std::cell::RefCell;
use std::rc::Rc;

use bsplib::am::{Counters, Handlers, Landing};
use bsplib::{Area, Bsp, Error};
use common::{configurations, left, right, run_on};
use unbuffered::unbuffered;

/// A large get of a registered area into an unregistered one (read from
/// the owner's memory by the requester), then a put into the source in the
/// next superstep: the get saw the old values.
fn gets(bsp: &mut Bsp) -> Result<u64, Error> {
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
fn messages(bsp: &mut Bsp) -> Result<u64, Error> {
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

#[test]
fn large_transfers_by_cross_memory_attach_land_whole() {
    std::env::set_var("BSPLIB_CMA", "1");
    std::env::set_var("BSPLIB_AREA_MEMORY", "0");
    for (engine, p) in configurations() {
        let name = engine.name();
        run_on(engine, p, unbuffered).unwrap_or_else(|e| panic!("{name} p={p} hpput: {e}"));
        run_on(engine, p, gets).unwrap_or_else(|e| panic!("{name} p={p} get: {e}"));
        run_on(engine, p, messages).unwrap_or_else(|e| panic!("{name} p={p} messages: {e}"));
    }
}
