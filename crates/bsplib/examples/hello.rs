//! Hello BSP Worldwide: every process greets, then the processes pass their
//! pids one step round a ring with `put` in a single superstep.
//!
//! ```text
//! cargo run --release --example hello        # p = 4
//! cargo run --release --example hello -- 8   # p = 8
//! BSPLIB_ENGINE=processes cargo run --release --example hello
//! mpirun -np 4 -x BSPLIB_ENGINE=mpi target/release/examples/hello   # --features mpi
//! ```
//!
//! The engine is `BSPLIB_ENGINE`'s (threads by default); `run`
//! brings the results back from every engine, forked processes and MPI
//! ranks included.

use std::process::ExitCode;

use bsplib::{Area, Bsp, Error, Runtime};

/// What one process reports back to the caller of the run: its pid and
/// what it received.
type Report = (usize, u64);

fn spmd(bsp: &mut Bsp) -> Result<Report, Error> {
    let (pid, p) = (bsp.pid(), bsp.nprocs());
    println!("Hello BSP Worldwide from process {pid} of {p}");

    // Superstep 0: register the one-word inbox.
    let inbox = Area::<u64>::new(bsp, 1);
    bsp.push_reg(&inbox)?;
    bsp.sync()?;

    // Superstep 1: send our pid to the right neighbour.
    let right = (pid + 1) % p;
    bsp.put(right, &inbox, 0, &[pid as u64])?;
    bsp.sync()?;

    let received = inbox.as_slice(bsp)[0];
    println!("process {pid} received {received} from its left neighbour");
    bsp.pop_reg(&inbox)?;
    bsp.sync()?;

    if pid == 0 {
        println!(
            "process 0: {p} processes, {} supersteps, ring exchange done",
            bsp.superstep()
        );
    }
    Ok((pid, received))
}

fn main() -> ExitCode {
    let p = match std::env::args().nth(1) {
        None => 4,
        Some(arg) => match arg.parse::<usize>() {
            Ok(p) if p > 0 => p,
            _ => {
                eprintln!("usage: hello [p]   (p: a positive number of processes, default 4)");
                return ExitCode::from(2);
            }
        },
    };
    match Runtime::from_env(p).run(spmd) {
        Ok(reports) => {
            // Every process must have heard from its left neighbour (the
            // engine may give fewer processes than asked: MPI has as many
            // as the job's ranks).
            let p = reports.len();
            for &(pid, received) in &reports {
                let left = (pid + p - 1) % p;
                if received != left as u64 {
                    eprintln!("hello: process {pid} received {received} instead of {left}");
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            // One write: under a plain `mpirun` the lines of several ranks then
            // never break into each other.
            let line = format!("hello: {e}\n");
            eprint!("{line}");
            ExitCode::FAILURE
        }
    }
}
