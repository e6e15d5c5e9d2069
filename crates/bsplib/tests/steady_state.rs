//! Hot paths allocate nothing in steady state, and oversubscription (many
//! more processes than cores) still runs.
//!
//! The counting allocator counts per thread, so each BSP process counts its
//! own allocations, whatever other tests do meanwhile.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use bsplib::{Area, Engine};
use common::*;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

fn count() {
    // `try_with`: the allocator may run while the thread-local is gone.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One superstep of every kind of traffic: puts, gets, an hpput, messages.
fn traffic(
    bsp: &mut bsplib::Bsp,
    a: &Area<u64>,
    b: &Area<u64>,
    step: u64,
) -> Result<(), bsplib::Error> {
    let (pid, p) = (bsp.pid(), bsp.nprocs());
    let right = (pid + 1) % p;
    let words = [step, pid as u64, 7, 9];
    for k in 0..4 {
        bsp.put(right, a, k, &words[k..k + 1])?;
    }
    bsp.get(right, a, 0, b.range(..4))?;
    bsp.send_pod(right, &step, &words[..2])?;
    // SAFETY: `words` lives until after the sync below and is not modified;
    // nothing else touches slot 4..8 of `a` on `right` in this superstep.
    unsafe { bsp.hpput(right, a, 4, &words)? };
    bsp.sync()?;
    while bsp.hpmove().is_some() {}
    Ok(())
}

#[test]
fn supersteps_allocate_nothing_in_steady_state() {
    for (engine, p) in configurations() {
        let steady = run_on(engine, p, |bsp| {
            bsp.set_tagsize(8)?;
            let a = Area::<u64>::new(bsp, 8);
            let b = Area::<u64>::new(bsp, 8);
            bsp.push_reg(&a)?;
            bsp.sync()?;
            for step in 0..50 {
                traffic(bsp, &a, &b, step)?;
            }
            bsp.sync()?;
            let before = allocations();
            for step in 50..250 {
                traffic(bsp, &a, &b, step)?;
            }
            bsp.sync()?;
            let after = allocations();
            bsp.sync()?;
            Ok(after - before)
        })
        .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        // Every process counted its own allocations over 200 supersteps
        // of steady traffic.
        assert!(
            steady.iter().all(|&n| n == 0),
            "{} p={p}: allocations in 200 steady supersteps, per process: {steady:?}",
            engine.name()
        );
    }
}

#[test]
fn sixty_four_processes_on_two_cores() {
    if mpi_mode() {
        // Under mpirun (`.ci/mpi`) a threads run in each rank is refused
        // (`ErrorKind::Startup`): the job has as many processes as ranks.
        return;
    }
    let p = 64;
    let got = run_on(Engine::Threads, p, |bsp| {
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        let x = Area::<u64>::new(bsp, p);
        bsp.push_reg(&x)?;
        bsp.sync()?;
        for step in 0..100u64 {
            bsp.put((pid + 1) % p, &x, pid, &[step * 1000 + pid as u64])?;
            bsp.sync()?;
            let left = (pid + p - 1) % p;
            let v = x.as_slice(bsp)[left];
            check_eq!(bsp, v, step * 1000 + left as u64);
        }
        Ok(bsp.superstep())
    })
    .unwrap();
    assert_eq!(got, vec![101; p]);
}

/// `rounds` active messages around the ring: each process sends one to
/// its right (moving the target counter `theirs` there) and waits for the
/// one from its left (`mine`).
fn ring_messages(
    bsp: &mut bsplib::Bsp,
    ping: bsplib::am::Handler<u32, u8>,
    mine: &bsplib::am::Counter,
    theirs: bsplib::am::CounterId,
    rounds: std::ops::Range<u32>,
) -> Result<(), bsplib::Error> {
    let right = (bsp.pid() + 1) % bsp.nprocs();
    for k in rounds {
        let to = bsplib::am::Counters::none().tgt(theirs);
        bsp.am().send(right, ping, &[k], &[], to)?;
        bsp.am().wait_counter(mine, 1)?;
    }
    Ok(())
}

#[test]
fn active_messages_allocate_nothing_in_steady_state() {
    use bsplib::am::{CounterId, Handlers, Landing};
    for (engine, p) in configurations() {
        let steady = run_on(engine, p, |bsp| {
            let (pid, p) = (bsp.pid(), bsp.nprocs());
            let mut hs = Handlers::new();
            // No data and no completion handler: nothing of the user's
            // to allocate.
            let ping = hs.add::<u32, u8>("ping", |_| Landing::none());
            bsp.am().init(hs)?;
            let mine = bsp.am().counter()?;
            let ids = Area::<CounterId>::new(bsp, 1);
            bsp.push_reg(&ids)?;
            bsp.sync()?;
            bsp.put((pid + p - 1) % p, &ids, 0, &[mine.id()])?;
            bsp.sync()?;
            let theirs = ids.as_slice(bsp)[0];
            ring_messages(bsp, ping, &mine, theirs, 0..50)?;
            let before = allocations();
            ring_messages(bsp, ping, &mine, theirs, 50..250)?;
            let after = allocations();
            bsp.am().fence()?;
            bsp.pop_reg(&ids)?;
            bsp.am().term()?;
            Ok(after - before)
        })
        .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        // Sending (the record's buffer comes back from its posting),
        // taking (the inbox's buffer is reused), handling (one block's
        // list is on the stack) and acknowledging (riding, or alone from
        // the stack) allocate nothing per message (three each before).
        // A buffer may still grow when timing piles up more than ever
        // before (more records in one take, more messages in flight
        // awaiting their acknowledgement): a few times at most.
        assert!(
            steady.iter().all(|&n| n <= 4),
            "{} p={p}: allocations in 200 steady active messages, per process: {steady:?}",
            engine.name()
        );
    }
}
