//! The `mpi` engine against raw MPI, measured in one run on the same ranks:
//!
//! - an empty `sync` against `MPI_Barrier`;
//! - a `put` of 1 MiB and of 16 MiB to the next rank, then `sync`, against
//!   the same bytes moved by `MPI_Alltoallv` (two-sided, what the engine
//!   does) and by `MPI_Put` between two `MPI_Win_fence`s (one-sided, on a
//!   window from `MPI_Win_allocate`);
//! - the same with 8 bytes, for the choice between the two;
//! - an `hpput` of 1 MiB and of 16 MiB then `sync` (no copy at the call),
//!   and, for information, a `get` of 16 MiB then `sync`;
//! - an active-message round trip between ranks 0 and 1 (a question whose
//!   completion handler answers with a message that moves a counter rank
//!   0 waits on) against an 8-byte `MPI_Send` / `MPI_Recv` ping-pong, and
//!   against the MPI calls of the engine's active messages alone (a
//!   64-byte `MPI_Isend` into a receive posted ahead, `MPI_Test`);
//! - the collectives: `broadcast` of 8 bytes and 16 MiB against
//!   `MPI_Bcast`, `all_reduce` (sum) of one and of 1 Mi doubles against
//!   `MPI_Allreduce`, and each MPI call followed by an `MPI_Barrier` (a
//!   collective ends a superstep: it includes a sync);
//! - `lock`: a lock / put of 8 bytes / unlock of rank 1's area by rank 0
//!   (`bsplib::Bsp::lock`) against `MPI_Win_lock` + `MPI_Put` +
//!   `MPI_Win_unlock`.
//!
//! Each figure and its baselines are measured alternately, 7 rounds; rank
//! 0 prints min and median per operation and the ratio of minima.
//!
//! ```text
//! cargo build --release --features mpi --example mpi_bench
//! OMPI_MCA_osc=^ucx mpirun -np 2 --oversubscribe --bind-to none \
//!     -x BSPLIB_ENGINE=mpi target/release/examples/mpi_bench [--quick] [coll | lock | am]
//! ```

use std::time::Instant;

use bsplib::{Area, Bsp, Engine, Error, Runtime};
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

const ROUNDS: usize = 7;

/// One-sided MPI, which rsmpi does not wrap: the raw calls in one place.
mod rma {
    use mpi::ffi;
    use std::ffi::c_void;

    /// A window of `len` bytes allocated by MPI on every rank of the world.
    pub struct Window {
        win: ffi::MPI_Win,
    }

    impl Window {
        pub fn allocate(len: usize) -> Self {
            let mut base: *mut c_void = std::ptr::null_mut();
            let mut win = std::mem::MaybeUninit::<ffi::MPI_Win>::uninit();
            // SAFETY: MPI is initialised (by the bsplib run around this
            // code); `base` and `win` are live out-parameters; the world
            // communicator and the null info are valid handles.
            let rc = unsafe {
                ffi::MPI_Win_allocate(
                    len as ffi::MPI_Aint,
                    1,
                    ffi::RSMPI_INFO_NULL,
                    ffi::RSMPI_COMM_WORLD,
                    (&mut base as *mut *mut c_void).cast(),
                    win.as_mut_ptr(),
                )
            };
            assert_eq!(rc, 0, "MPI_Win_allocate");
            // SAFETY: MPI_Win_allocate succeeded, so it wrote the handle.
            let win = unsafe { win.assume_init() };
            Window { win }
        }

        /// An access epoch boundary on every rank.
        pub fn fence(&self) {
            // SAFETY: `win` is a live window of the world communicator;
            // every rank calls this collectively.
            unsafe { ffi::MPI_Win_fence(0, self.win) };
        }

        /// Puts `src` at offset 0 of `target`'s window (within an epoch).
        pub fn put(&self, src: &[u8], target: i32) {
            // SAFETY: `src` is live until the next fence, which the caller
            // calls before touching it; the window holds `src.len()` bytes
            // on every rank (allocated with that length or more).
            unsafe {
                ffi::MPI_Put(
                    src.as_ptr().cast(),
                    src.len() as i32,
                    ffi::RSMPI_UINT8_T,
                    target,
                    0,
                    src.len() as i32,
                    ffi::RSMPI_UINT8_T,
                    self.win,
                )
            };
        }
    }

    impl Window {
        /// `MPI_Win_lock` (exclusive) of `target`'s window, `MPI_Put` of
        /// `src` at offset 0, `MPI_Win_unlock`: a passive-target epoch.
        pub fn locked_put(&self, src: &[u8], target: i32) {
            // SAFETY: a live window; the lock type constant and target rank
            // are valid; the epoch is closed before returning.
            unsafe { ffi::MPI_Win_lock(ffi::MPI_LOCK_EXCLUSIVE as i32, target, 0, self.win) };
            self.put(src, target);
            // SAFETY: as above; closes the epoch this function opened.
            unsafe { ffi::MPI_Win_unlock(target, self.win) };
        }
    }

    impl Drop for Window {
        fn drop(&mut self) {
            // SAFETY: collective free of a live window; no epoch is open.
            unsafe { ffi::MPI_Win_free(&mut self.win) };
        }
    }
}

/// Seconds per repetition of `f`, `reps` times.
fn time(reps: usize, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    t.elapsed().as_secs_f64() / reps as f64
}

/// `len` bytes to the next rank with `MPI_Alltoallv`.
struct Alltoallv {
    send: Vec<u8>,
    recv: Vec<u8>,
    scounts: Vec<Count>,
    rcounts: Vec<Count>,
    sdispls: Vec<Count>,
    rdispls: Vec<Count>,
}

impl Alltoallv {
    fn new(me: usize, p: usize, len: usize) -> Self {
        let mut scounts = vec![0; p];
        let mut rcounts = vec![0; p];
        scounts[(me + 1) % p] = len as Count;
        rcounts[(me + p - 1) % p] = len as Count;
        Alltoallv {
            send: vec![me as u8; len],
            recv: vec![0; len],
            scounts,
            rcounts,
            sdispls: vec![0; p],
            rdispls: vec![0; p],
        }
    }

    fn exchange(&mut self, world: &SimpleCommunicator) {
        let send = Partition::new(&self.send[..], &self.scounts[..], &self.sdispls[..]);
        let mut recv = PartitionMut::new(&mut self.recv[..], &self.rcounts[..], &self.rdispls[..]);
        world.all_to_all_varcount_into(&send, &mut recv);
    }
}

/// The rounds of one measurement on this rank: `(name, seconds per op)`.
type Rounds = Vec<(String, Vec<f64>)>;

fn record(rounds: &mut Rounds, name: &str, t: f64) {
    match rounds.iter_mut().find(|(n, _)| n == name) {
        Some((_, v)) => v.push(t),
        None => rounds.push((name.to_owned(), vec![t])),
    }
}

fn bench(bsp: &mut Bsp, quick: bool, only_coll: bool, only_lock: bool) -> Result<Rounds, Error> {
    if only_coll {
        let mut rounds = Rounds::new();
        collectives(bsp, quick, &mut rounds)?;
        return Ok(rounds);
    }
    if only_lock {
        let mut rounds = Rounds::new();
        locks(bsp, quick, &mut rounds)?;
        return Ok(rounds);
    }
    if std::env::args().any(|a| a == "am") {
        let mut rounds = Rounds::new();
        round_trips(bsp, &SimpleCommunicator::world(), quick, &mut rounds)?;
        return Ok(rounds);
    }
    let world = SimpleCommunicator::world();
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let right = (me + 1) % p;
    let mut rounds = Rounds::new();
    let sizes: [(usize, usize); 3] = if quick {
        [(8, 100), (1 << 20, 10), (16 << 20, 2)]
    } else {
        [(8, 10_000), (1 << 20, 200), (16 << 20, 20)]
    };
    let barrier_reps = if quick { 1_000 } else { 50_000 };
    let window = rma::Window::allocate(16 << 20);
    let dst = Area::<u8>::new(bsp, 16 << 20);
    let got = Area::<u8>::new(bsp, 16 << 20);
    bsp.push_reg(&dst)?;
    bsp.sync()?;
    for _ in 0..ROUNDS {
        world.barrier();
        record(
            &mut rounds,
            "MPI_Barrier",
            time(barrier_reps, || world.barrier()),
        );
        world.barrier();
        let mut sync_err = Ok(());
        let t = time(barrier_reps, || {
            if sync_err.is_ok() {
                sync_err = bsp.sync();
            }
        });
        sync_err?;
        record(&mut rounds, "empty sync", t);
        for &(len, reps) in &sizes {
            let src = vec![me as u8; len];
            let label = |what: &str| format!("{what} {}", human(len));
            let mut a2a = Alltoallv::new(me, p, len);
            world.barrier();
            record(
                &mut rounds,
                &label("MPI_Alltoallv"),
                time(reps, || a2a.exchange(&world)),
            );
            window.fence();
            let t = time(reps, || {
                window.put(&src, right as i32);
                window.fence();
            });
            record(&mut rounds, &label("MPI_Put+fence"), t);
            world.barrier();
            let mut err = Ok(());
            let t = time(reps, || {
                if err.is_ok() {
                    err = bsp.put(right, &dst, 0, &src).and_then(|()| bsp.sync());
                }
            });
            std::mem::replace(&mut err, Ok(()))?;
            record(&mut rounds, &label("bsp put+sync"), t);
            if len > 8 {
                world.barrier();
                let t = time(reps, || {
                    if err.is_ok() {
                        // SAFETY: `src` lives, unchanged, until after the
                        // sync; nothing else touches `dst` meanwhile.
                        err = unsafe { bsp.hpput(right, &dst, 0, &src) }.and_then(|()| bsp.sync());
                    }
                });
                std::mem::replace(&mut err, Ok(()))?;
                record(&mut rounds, &label("bsp hpput+sync"), t);
            }
            if len == 16 << 20 {
                world.barrier();
                let t = time(reps, || {
                    if err.is_ok() {
                        err = bsp
                            .get(right, &dst, 0, got.range(..len))
                            .and_then(|()| bsp.sync());
                    }
                });
                err?;
                record(&mut rounds, &label("bsp get+sync"), t);
            }
        }
    }
    round_trips(bsp, &world, quick, &mut rounds)?;
    collectives(bsp, quick, &mut rounds)?;
    bsp.pop_reg(&dst)?;
    bsp.sync()?;
    drop(window);
    Ok(rounds)
}

/// The active-message round trip against an MPI ping-pong, ranks 0 and 1.
fn round_trips(
    bsp: &mut Bsp,
    world: &SimpleCommunicator,
    quick: bool,
    rounds: &mut Rounds,
) -> Result<(), Error> {
    use bsplib::am::{CounterId, Counters, Handler, Handlers, Landing};
    use std::cell::Cell;
    use std::rc::Rc;
    let me = bsp.pid();
    let trips = if quick { 100 } else { 5_000 };
    let answer: Rc<Cell<Option<Handler<u64, u8>>>> = Rc::new(Cell::new(None));
    let a2 = answer.clone();
    let mut hs = Handlers::new();
    let ask = hs.add::<CounterId, u8>("ask", move |a| {
        let id = a.header()[0];
        let (src, h) = (a.src(), a2.get().expect("registered"));
        Landing::none().then(move |d| {
            d.send(src, h, &[0u64], &[], Counters::none().tgt(id))
                .expect("an answer can be sent");
        })
    });
    answer.set(Some(hs.add::<u64, u8>("answer", |_| Landing::none())));
    bsp.am().init(hs)?;
    let (answered, asked) = (bsp.am().counter()?, bsp.am().counter()?);
    let ids = Area::<CounterId>::new(bsp, 1);
    bsp.push_reg(&ids)?;
    bsp.sync()?;
    if me == 1 {
        bsp.put(0, &ids, 0, &[asked.id()])?;
    }
    bsp.sync()?;
    let theirs = ids.as_slice(bsp)[0];
    for _ in 0..ROUNDS {
        world.barrier();
        let t0 = Instant::now();
        for _ in 0..trips {
            let x = 7u64;
            match me {
                0 => {
                    world.process_at_rank(1).send(&x);
                    let _: (u64, _) = world.process_at_rank(1).receive();
                }
                1 => {
                    let (y, _): (u64, _) = world.process_at_rank(0).receive();
                    world.process_at_rank(0).send(&y);
                }
                _ => {}
            }
        }
        record(
            rounds,
            "MPI ping-pong 8 B",
            t0.elapsed().as_secs_f64() / trips as f64,
        );
        world.barrier();
        let t0 = Instant::now();
        for _ in 0..trips {
            match me {
                0 => {
                    let c = Counters::none().tgt(theirs);
                    bsp.am().send(1, ask, &[answered.id()], &[], c)?;
                    bsp.am().wait_counter(&answered, 1)?;
                }
                1 => bsp.am().wait_counter(&asked, 1)?,
                _ => {}
            }
        }
        record(
            rounds,
            "AM round trip",
            t0.elapsed().as_secs_f64() / trips as f64,
        );
        world.barrier();
        record(
            rounds,
            "MPI posted ping-pong 64 B",
            posted_ping_pong(me, trips),
        );
    }
    bsp.pop_reg(&ids)?;
    bsp.am().term()
}

/// The MPI calls of the engine's active messages alone, between ranks 0
/// and 1 (seconds per round trip): a 64-byte message `MPI_Isend` into a
/// receive posted ahead from any process (`MPI_Irecv`, posted again as
/// soon as its message is taken), both completed by polling `MPI_Test`.
fn posted_ping_pong(me: usize, trips: usize) -> f64 {
    use mpi::ffi;
    if me > 1 {
        return 0.0;
    }
    let other = (1 - me) as i32;
    let msg = [7u8; 64];
    let mut buf = [0u8; 1024];
    let post = |buf: &mut [u8; 1024]| {
        let mut req = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: `buf` outlives the receive (completed below before it is
        // posted again or the function returns); `req` is an out-parameter.
        unsafe {
            ffi::MPI_Irecv(
                buf.as_mut_ptr().cast(),
                1024,
                ffi::RSMPI_UINT8_T,
                ffi::RSMPI_ANY_SOURCE,
                77,
                ffi::RSMPI_COMM_WORLD,
                req.as_mut_ptr(),
            );
            req.assume_init()
        }
    };
    let complete = |req: &mut ffi::MPI_Request| {
        let mut flag = 0;
        while flag == 0 {
            // SAFETY: `req` is an active request of this rank.
            unsafe { ffi::MPI_Test(req, &mut flag, ffi::RSMPI_STATUS_IGNORE) };
        }
    };
    let send = || {
        let mut req = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: `msg` outlives the send (completed before returning).
        unsafe {
            ffi::MPI_Isend(
                msg.as_ptr().cast(),
                64,
                ffi::RSMPI_UINT8_T,
                other,
                77,
                ffi::RSMPI_COMM_WORLD,
                req.as_mut_ptr(),
            );
            req.assume_init()
        }
    };
    let mut recv = post(&mut buf);
    SimpleCommunicator::world().barrier();
    let t0 = Instant::now();
    for _ in 0..trips {
        if me == 0 {
            let mut s = send();
            complete(&mut recv);
            recv = post(&mut buf);
            complete(&mut s);
        } else {
            complete(&mut recv);
            recv = post(&mut buf);
            let mut s = send();
            complete(&mut s);
        }
    }
    let t = t0.elapsed().as_secs_f64() / trips as f64;
    // The last receive, posted ahead: matched by one more message.
    let mut s = send();
    complete(&mut recv);
    complete(&mut s);
    t
}

/// Broadcast and all-reduce against MPI's own, alone and followed by a
/// barrier.
fn collectives(bsp: &mut Bsp, quick: bool, rounds: &mut Rounds) -> Result<(), Error> {
    use bsplib::Op;
    use mpi::collective::SystemOperation;
    let world = SimpleCommunicator::world();
    let cases: [(&str, usize, usize); 4] = if quick {
        [
            ("bcast", 8, 100),
            ("bcast", 16 << 20, 2),
            ("allreduce", 1, 100),
            ("allreduce", 1 << 20, 2),
        ]
    } else {
        [
            ("bcast", 8, 5_000),
            ("bcast", 16 << 20, 20),
            ("allreduce", 1, 5_000),
            ("allreduce", 1 << 20, 20),
        ]
    };
    // Case by case (the streams shrink some syncs after a large case: that
    // belongs to no small one).
    for &(what, n, reps) in &cases {
        for _ in 0..ROUNDS {
            let root = world.process_at_rank(0);
            if what == "bcast" {
                let label = human(n);
                let mut buf = vec![bsp.pid() as u8; n];
                world.barrier();
                let t = time(reps, || root.broadcast_into(&mut buf[..]));
                record(rounds, &format!("MPI_Bcast {label}"), t);
                world.barrier();
                let t = time(reps, || {
                    root.broadcast_into(&mut buf[..]);
                    world.barrier();
                });
                record(rounds, &format!("MPI_Bcast+Barrier {label}"), t);
                world.barrier();
                let mut err = Ok(());
                let t = time(reps, || {
                    if err.is_ok() {
                        err = bsp.collectives().broadcast(0, &mut buf);
                    }
                });
                err?;
                record(rounds, &format!("broadcast {label}"), t);
            } else {
                let label = human(8 * n);
                let mine = vec![bsp.pid() as f64 + 0.5; n];
                let mut out = vec![0.0f64; n];
                world.barrier();
                let t = time(reps, || {
                    world.all_reduce_into(&mine[..], &mut out[..], SystemOperation::sum())
                });
                record(rounds, &format!("MPI_Allreduce {label}"), t);
                world.barrier();
                let t = time(reps, || {
                    world.all_reduce_into(&mine[..], &mut out[..], SystemOperation::sum());
                    world.barrier();
                });
                record(rounds, &format!("MPI_Allreduce+Barrier {label}"), t);
                world.barrier();
                let mut err = Ok(());
                let mut x = mine.clone();
                let t = time(reps, || {
                    if err.is_ok() {
                        x.copy_from_slice(&mine);
                        err = bsp.collectives().all_reduce(&mut x, Op::Sum);
                    }
                });
                err?;
                record(rounds, &format!("all_reduce {label}"), t);
            }
        }
    }
    Ok(())
}

fn human(len: usize) -> String {
    match len {
        n if n >= 1 << 20 => format!("{} MiB", n >> 20),
        n => format!("{n} B"),
    }
}

fn stats(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}

/// Rank 0 locks rank 1's area (exclusive), puts 8 bytes, unlocks, while
/// the others wait in a barrier (bsplib: in a sync, where rank 1 serves the
/// lock); against `MPI_Win_lock` + `MPI_Put` + `MPI_Win_unlock` on an
/// `MPI_Win_allocate` window; and the same through a `bsplib::Window`
/// (MPI's window underneath).
fn locks(bsp: &mut Bsp, quick: bool, rounds: &mut Rounds) -> Result<(), Error> {
    let world = SimpleCommunicator::world();
    let me = bsp.pid();
    let reps = if quick { 200 } else { 5_000 };
    let window = rma::Window::allocate(8);
    let x = Area::<u64>::new(bsp, 1);
    let win = bsplib::Window::<u64>::new(bsp, 1)?;
    bsp.push_reg(&x)?;
    bsp.rma().init()?;
    for _ in 0..ROUNDS {
        world.barrier();
        if me == 0 {
            let t = time(reps, || window.locked_put(&[7u8; 8], 1));
            record(rounds, "MPI_Win_lock+Put+unlock 8 B", t);
        }
        world.barrier();
        bsp.sync()?;
        if me == 0 {
            let t0 = Instant::now();
            for i in 0..reps {
                let l = bsp.rma().lock(1, &x, bsplib::LockKind::Exclusive)?;
                l.put(0, &[i as u64])?;
                l.unlock()?;
            }
            record(
                rounds,
                "bsp lock+put+unlock 8 B",
                t0.elapsed().as_secs_f64() / reps as f64,
            );
        }
        bsp.sync()?; // rank 1 serves the locks in here
        if me == 0 {
            let t0 = Instant::now();
            for i in 0..reps {
                let mut l = win.lock(bsp, 1, bsplib::LockKind::Exclusive)?;
                l.put(0, &[i as u64])?;
            }
            record(
                rounds,
                "Window lock+put+unlock 8 B",
                t0.elapsed().as_secs_f64() / reps as f64,
            );
        }
        bsp.sync()?;
    }
    win.free(bsp)?;
    bsp.rma().term()?;
    bsp.pop_reg(&x)?;
    bsp.sync()
}

fn main() -> Result<(), Error> {
    let quick = std::env::args().any(|a| a == "--quick");
    let only_coll = std::env::args().any(|a| a == "coll");
    let only_lock = std::env::args().any(|a| a == "lock");
    let results = Runtime::new(usize::MAX)
        .engine(Engine::Mpi)
        .run(move |bsp| bench(bsp, quick, only_coll, only_lock))?;
    // Only process 0 returns (the others end with their BSP process).
    let p = results.len();
    let rounds = &results[0];
    let get = |name: &str| {
        rounds
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| stats(v))
    };
    println!("mpi engine, np = {p}, {ROUNDS} rounds (process 0's times; min / median)");
    for (name, v) in rounds {
        let (min, med) = stats(v);
        println!("  {name:<24} {:>12.2} us {:>12.2} us", min * 1e6, med * 1e6);
    }
    let ratio = |a: &str, b: &str| {
        if let (Some((x, _)), Some((y, _))) = (get(a), get(b)) {
            println!("  {a} / {b}: {:.2}x", x / y);
        }
    };
    println!("ratios of minima:");
    ratio("empty sync", "MPI_Barrier");
    for size in ["8 B", "1 MiB", "16 MiB"] {
        ratio(
            &format!("bsp put+sync {size}"),
            &format!("MPI_Alltoallv {size}"),
        );
        ratio(
            &format!("bsp put+sync {size}"),
            &format!("MPI_Put+fence {size}"),
        );
        ratio(
            &format!("MPI_Alltoallv {size}"),
            &format!("MPI_Put+fence {size}"),
        );
        ratio(
            &format!("bsp hpput+sync {size}"),
            &format!("MPI_Alltoallv {size}"),
        );
    }
    ratio("bsp get+sync 16 MiB", "MPI_Alltoallv 16 MiB");
    ratio("AM round trip", "MPI ping-pong 8 B");
    ratio("AM round trip", "MPI posted ping-pong 64 B");
    ratio("MPI posted ping-pong 64 B", "MPI ping-pong 8 B");
    ratio("bsp lock+put+unlock 8 B", "MPI_Win_lock+Put+unlock 8 B");
    ratio("Window lock+put+unlock 8 B", "MPI_Win_lock+Put+unlock 8 B");
    for size in ["8 B", "16 MiB"] {
        ratio(&format!("broadcast {size}"), &format!("MPI_Bcast {size}"));
        ratio(
            &format!("broadcast {size}"),
            &format!("MPI_Bcast+Barrier {size}"),
        );
    }
    for size in ["8 B", "8 MiB"] {
        ratio(
            &format!("all_reduce {size}"),
            &format!("MPI_Allreduce {size}"),
        );
        ratio(
            &format!("all_reduce {size}"),
            &format!("MPI_Allreduce+Barrier {size}"),
        );
    }
    Ok(())
}
