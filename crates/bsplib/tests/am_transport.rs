//! The transport's active-message path (`World::am_post` / `am_take` /
//! `am_mark` / `am_wait` / `barrier_polling`, reached here through the
//! hidden test hooks `Raw::am_transport_*`), on every engine: records
//! arrive whole, each sender's in its order, with nothing lost when an
//! inbox fills up; a wait ends when a record comes or the run fails; a
//! process waiting in the dispatching barrier answers the records that
//! arrive meanwhile (its senders may wait for the answer before they
//! arrive). The active messages are built on this path
//! (`engine/ACTIVE_MESSAGES.md`, section 6).

mod common;

use std::collections::VecDeque;
use std::time::Duration;

use bsplib::{Bsp, Error, ErrorKind};
use common::{expect_error, scenario};

/// `Raw::am_transport_take`, an `unsafe` test hook.
fn take(bsp: &Bsp) -> Result<Vec<u8>, Error> {
    // SAFETY: no run of these tests enters active-message mode, so no
    // record is taken from the library's own dispatch.
    unsafe { bsp.raw().am_transport_take() }
}

/// `Raw::am_transport_wait`, an `unsafe` test hook.
fn wait(bsp: &Bsp, mark: u64) -> Result<(), Error> {
    // SAFETY: every wait of these tests is for a record another process
    // posts, or ends with the run's failure or its deadline.
    unsafe { bsp.raw().am_transport_wait(mark) }
}

/// A record `[len][from][seq][seq-derived words...]` of `words` words.
fn record(from: usize, seq: u64, words: usize) -> Vec<u8> {
    let words = words.max(3);
    let mut r = Vec::with_capacity(words * 8);
    r.extend_from_slice(&((words * 8) as u64).to_ne_bytes());
    r.extend_from_slice(&(from as u64).to_ne_bytes());
    r.extend_from_slice(&seq.to_ne_bytes());
    for i in 3..words {
        r.extend_from_slice(&(seq * 1000 + i as u64).to_ne_bytes());
    }
    r
}

/// Splits concatenated records, checking each one's form and content;
/// `(from, seq)` of each.
fn parse(bsp: &Bsp, bytes: &[u8]) -> Result<Vec<(usize, u64)>, Error> {
    let word = |at: usize| u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap());
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len = word(at) as u32 as usize;
        check!(
            bsp,
            len >= 24 && len % 8 == 0 && at + len <= bytes.len(),
            "record length {len}"
        );
        let (from, seq) = (word(at + 8) as usize, word(at + 16));
        for i in 3..len / 8 {
            check_eq!(bsp, word(at + 8 * i), seq * 1000 + i as u64);
        }
        out.push((from, seq));
        at += len;
    }
    Ok(out)
}

/// Sizes of the records of sequence number `seq`: small ones, and every
/// seventh a large one (64 KiB).
fn words_of(seq: u64) -> usize {
    if seq % 7 == 3 {
        8192
    } else {
        3 + (seq % 5) as usize
    }
}

/// Every process sends `n` records to every process (itself included),
/// keeping a backlog per destination when an inbox is full, and receives
/// until it has all of them; per sender, sequence numbers come in order.
fn all_to_all(bsp: &mut Bsp, n: u64) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let all: VecDeque<Vec<u8>> = (0..n).map(|seq| record(me, seq, words_of(seq))).collect();
    let mut backlog: Vec<VecDeque<Vec<u8>>> = vec![all; p];
    let mut next = vec![0u64; p];
    let mut received = 0u64;
    let mut full = false;
    while received < n * p as u64 || backlog.iter().any(|b| !b.is_empty()) {
        for (to, queue) in backlog.iter_mut().enumerate() {
            while let Some(r) = queue.front() {
                // SAFETY: no process enters active-message mode in these runs.
                if !unsafe { bsp.raw().am_transport_post(to as i64, r) }? {
                    full = true;
                    break;
                }
                queue.pop_front();
            }
        }
        let mark = bsp.raw().am_transport_mark();
        let got = take(bsp)?;
        if got.is_empty() {
            if received == n * p as u64 {
                // Only the backlog is left: its receivers are draining.
                std::thread::yield_now();
                continue;
            }
            if backlog.iter().all(|b| b.is_empty()) {
                wait(bsp, mark)?;
            } else {
                std::thread::yield_now();
            }
            continue;
        }
        for (from, seq) in parse(bsp, &got)? {
            check_eq!(bsp, seq, next[from]);
            next[from] += 1;
            received += 1;
        }
    }
    check!(bsp, next.iter().all(|&k| k == n));
    // On the shared-memory engines a flood fills the inbox (1 MiB) at
    // least once; on mpi nothing is ever full.
    if n >= 2000 && !common::mpi_mode() {
        check!(bsp, full, "the inbox never filled up");
    }
    bsp.sync()
}

#[test]
fn records_arrive_whole_and_in_order_from_every_sender() {
    scenario(|bsp| all_to_all(bsp, 40));
}

#[test]
fn a_flooded_inbox_loses_nothing() {
    // 2 000 records per pair, a seventh of them 64 KiB: far more than an
    // inbox holds at once on the shared-memory engines.
    scenario(|bsp| all_to_all(bsp, 2000));
}

/// Process 0 waits in the dispatching barrier; every other process sends
/// it a record and waits for its answer before arriving. Process 0
/// answers from inside the barrier: without dispatching, nobody would
/// arrive.
fn answered_in_the_barrier(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    for round in 0..3u64 {
        if me == 0 {
            let mut answered = 0usize;
            let raw = bsp.raw();
            let mut failure = None;
            let mut poll = |bytes: &[u8]| {
                let word = |at: usize| u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap());
                let mut at = 0;
                while at < bytes.len() {
                    let len = word(at) as u32 as usize;
                    let from = word(at + 8) as i64;
                    let answer = record(0, word(at + 16) + 1, 3);
                    // SAFETY: no process enters active-message mode here.
                    if let Err(e) = unsafe { raw.am_transport_post(from, &answer) } {
                        failure = Some(e);
                    }
                    answered += 1;
                    at += len;
                }
            };
            // SAFETY: every process makes this call here, and no process
            // enters active-message mode.
            unsafe { raw.am_transport_barrier(&mut poll) }?;
            if let Some(e) = failure {
                return Err(e);
            }
            // Every question came while we waited (the askers arrive only
            // after their answer): none is left.
            check_eq!(bsp, answered, p - 1);
            check!(bsp, take(bsp)?.is_empty());
        } else {
            // SAFETY: no process enters active-message mode here.
            unsafe { bsp.raw().am_transport_post(0, &record(me, 10 * round, 3)) }?;
            let answer = loop {
                let mark = bsp.raw().am_transport_mark();
                let got = take(bsp)?;
                if !got.is_empty() {
                    break got;
                }
                wait(bsp, mark)?;
            };
            check_eq!(bsp, parse(bsp, &answer)?, vec![(0, 10 * round + 1)]);
            // SAFETY: every process makes this call here.
            unsafe { bsp.raw().am_transport_barrier(&mut |_| {}) }?;
        }
        bsp.sync()?;
    }
    Ok(())
}

#[test]
fn a_process_in_the_dispatching_barrier_answers_what_arrives() {
    scenario(answered_in_the_barrier);
}

#[test]
fn a_wait_for_a_record_ends_when_another_process_fails() {
    expect_error(
        2,
        |bsp| {
            if bsp.pid() == bsp.nprocs() - 1 {
                std::thread::sleep(Duration::from_millis(50));
                bsp.send(bsp.nprocs() + 1, &[], &[1])?;
            }
            // Nobody posts anything.
            let mark = bsp.raw().am_transport_mark();
            loop {
                wait(bsp, mark)?;
                if !take(bsp)?.is_empty() {
                    return Ok(());
                }
            }
        },
        |n, e| {
            assert!(matches!(e.kind(), ErrorKind::PidOutOfRange { .. }), "{e}");
            assert_eq!((e.pid(), e.call()), (n - 1, "bsp_send"), "{e}");
        },
    );
}

#[test]
fn the_dispatching_barrier_ends_when_another_process_fails() {
    expect_error(
        2,
        |bsp| {
            if bsp.pid() == bsp.nprocs() - 1 {
                std::thread::sleep(Duration::from_millis(50));
                bsp.send(bsp.nprocs() + 1, &[], &[1])?;
            }
            // The others wait in the dispatching barrier for it.
            // SAFETY: every process that gets here makes this call here.
            unsafe { bsp.raw().am_transport_barrier(&mut |_| {}) }
        },
        |n, e| {
            assert!(matches!(e.kind(), ErrorKind::PidOutOfRange { .. }), "{e}");
            assert_eq!((e.pid(), e.call()), (n - 1, "bsp_send"), "{e}");
        },
    );
}

#[test]
fn a_panic_in_the_dispatching_barrier_fails_the_run() {
    // Process 0 panics while answering from inside the barrier; the
    // others wait for an answer that never comes: their waits end.
    expect_error(
        2,
        |bsp| {
            // SAFETY (every unsafe block below): every process makes the
            // barrier call at this point, and no process enters
            // active-message mode.
            if bsp.pid() == 0 {
                let mut poll = |bytes: &[u8]| {
                    if !bytes.is_empty() {
                        panic!("handler lost");
                    }
                };
                // SAFETY: as above.
                unsafe { bsp.raw().am_transport_barrier(&mut poll) }?;
            } else {
                // SAFETY: as above.
                unsafe { bsp.raw().am_transport_post(0, &record(bsp.pid(), 0, 3)) }?;
                let mark = bsp.raw().am_transport_mark();
                loop {
                    if !take(bsp)?.is_empty() {
                        break;
                    }
                    wait(bsp, mark)?;
                }
                // SAFETY: as above.
                unsafe { bsp.raw().am_transport_barrier(&mut |_| {}) }?;
            }
            bsp.sync()
        },
        |_, e| {
            assert!(
                matches!(e.kind(), ErrorKind::Panicked { message } if message == "handler lost"),
                "{e}"
            );
            assert_eq!(e.pid(), 0, "{e}");
        },
    );
}
