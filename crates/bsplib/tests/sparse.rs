//! Sparse traffic at many processes: each process puts, gets and sends to
//! a few others only, over several supersteps of both parities. At p >= 64
//! the shared-memory engines read only the mailboxes that noted themselves
//! as senders (`World::note_sender`), and `processes` (at every p) reads
//! only the channels its index lists; the results, and the order of the
//! message queue (by sender pid), must be those of every other engine.

mod common;

use bsplib::{Area, Bsp, Engine, Error};
use common::{configurations, run_on};

/// The destinations of process `i` in superstep `s` of a run of `p`.
fn targets(i: usize, s: usize, p: usize) -> [usize; 2] {
    [(i * 7 + s) % p, (i * 13 + 5 + 2 * s) % p]
}

fn scenario(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let mut area = Area::<u64>::new(bsp, p + 1);
    let got = Area::<u64>::new(bsp, 1);
    bsp.push_reg(&area)?;
    bsp.set_tagsize(8)?;
    bsp.sync()?;
    let mut sum = 0;
    for s in 1..=4usize {
        area.as_mut_slice(bsp).fill(0);
        area.as_mut_slice(bsp)[0] = (me * 10 + s) as u64;
        if s == 2 && me < p / 2 {
            // The higher pids note themselves as senders first: puts and
            // the queue must still come out in pid order.
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // Puts to two destinations (perhaps the same), a message to a
        // third, a get from a fourth.
        for t in targets(me, s, p) {
            bsp.put(t, &area, me + 1, &[me as u64 + 1])?;
        }
        // Four senders per receiver (pids 4k..4k+3), to see the order.
        let to = (me / 4 + s) % p;
        bsp.send(to, &(me as u64).to_ne_bytes(), &[s as u8])?;
        let from = (me + 11 + s) % p;
        bsp.get(from, &area, 0, got.range(..1))?;
        bsp.sync()?;

        // Every writer's put landed, and nothing else did.
        let values = area.as_slice(bsp)[1..].to_vec();
        for (j, &v) in values.iter().enumerate() {
            let wrote = targets(j, s, p).contains(&me);
            check_eq!(bsp, v, if wrote { j as u64 + 1 } else { 0 });
        }
        // The get saw the owner's value at the end of the superstep.
        check_eq!(bsp, got.as_slice(bsp)[0], (from * 10 + s) as u64);
        // Messages from every sender, in pid order.
        let mut senders = Vec::new();
        let mut tag = [0u8; 8];
        while let Some(len) = bsp.get_tag(&mut tag)? {
            let mut payload = vec![0u8; len];
            bsp.move_payload(&mut payload)?;
            check_eq!(bsp, payload, vec![s as u8]);
            senders.push(u64::from_ne_bytes(tag));
        }
        let want: Vec<u64> = (0..p)
            .filter(|&j| (j / 4 + s) % p == me)
            .map(|j| j as u64)
            .collect();
        check_eq!(bsp, senders, want);
        sum += values.iter().sum::<u64>();
    }
    Ok(sum)
}

#[test]
fn sparse_traffic_at_many_processes_is_delivered_exactly() {
    let mut runs: Vec<(Engine, usize)> = configurations();
    if !common::mpi_mode() {
        runs.extend([(Engine::Threads, 64), (Engine::Threads, 97)]);
        // Forked processes read the channels of the senders their index
        // lists only (`engine/processes/README.md`).
        // (Where the configurations run on `processes` at all.)
        if runs.iter().any(|&(e, _)| e == Engine::Processes) {
            runs.push((Engine::Processes, 64));
        }
    }
    for (engine, p) in runs {
        let sums =
            run_on(engine, p, scenario).unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        assert_eq!(sums.len(), bsplib::Runtime::new(p).engine(engine).nprocs());
    }
}

/// Registrations with data in the same superstep, many at once (on
/// `processes`, more calls than the common stream's cell holds: every
/// destination then gets a stream of its own) and a few (the common
/// stream), and supersteps of data only between them.
fn registrations_and_data(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let (right, far) = ((me + 1) % p, (me + 2) % p);
    // Superstep 0: 24 registrations, a tag size and a message.
    let areas: Vec<Area<u64>> = (0..24).map(|_| Area::new(bsp, 2)).collect();
    for a in &areas {
        bsp.push_reg(a)?;
    }
    bsp.set_tagsize(8)?;
    bsp.sync()?;
    // Superstep 1: a put to the right into the 6th area.
    bsp.put(right, &areas[5], 1, &[me as u64 + 100])?;
    bsp.sync()?;
    check_eq!(
        bsp,
        areas[5].as_slice(bsp)[1],
        ((me + p - 1) % p) as u64 + 100
    );
    // Superstep 2: one more registration, a put two to the right and a
    // message to the right.
    let last = Area::<u64>::new(bsp, 1);
    bsp.push_reg(&last)?;
    bsp.put(far, &areas[0], 0, &[me as u64 + 200])?;
    bsp.send(right, &(me as u64).to_ne_bytes(), &[7])?;
    bsp.sync()?;
    check_eq!(
        bsp,
        areas[0].as_slice(bsp)[0],
        ((me + 2 * p - 2) % p) as u64 + 200
    );
    let mut tag = [0u8; 8];
    check_eq!(bsp, bsp.get_tag(&mut tag)?, Some(1));
    check_eq!(bsp, u64::from_ne_bytes(tag), ((me + p - 1) % p) as u64);
    // Superstep 3: every registration popped, a put into the newest.
    bsp.put(right, &last, 0, &[me as u64 + 300])?;
    for a in &areas {
        bsp.pop_reg(a)?;
    }
    bsp.pop_reg(&last)?;
    bsp.sync()?;
    check_eq!(bsp, last.as_slice(bsp)[0], ((me + p - 1) % p) as u64 + 300);
    // Superstep 4: nothing; 5: a get from the right of nothing registered
    // is not possible, so a message only.
    bsp.sync()?;
    bsp.send(far, &(me as u64).to_ne_bytes(), &[])?;
    bsp.sync()?;
    check_eq!(bsp, bsp.get_tag(&mut tag)?, Some(0));
    check_eq!(bsp, u64::from_ne_bytes(tag), ((me + 2 * p - 2) % p) as u64);
    Ok(last.as_slice(bsp)[0])
}

#[test]
fn registrations_with_data_at_many_processes() {
    let mut runs: Vec<(Engine, usize)> = configurations();
    if !common::mpi_mode() && runs.iter().any(|&(e, _)| e == Engine::Processes) {
        runs.push((Engine::Processes, 64));
    }
    for (engine, p) in runs {
        let got = run_on(engine, p, registrations_and_data)
            .unwrap_or_else(|e| panic!("{} p={p}: {e}", engine.name()));
        assert_eq!(got.len(), bsplib::Runtime::new(p).engine(engine).nprocs());
    }
}
