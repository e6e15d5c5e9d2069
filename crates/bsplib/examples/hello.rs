//! Hello BSP Worldwide: every process greets, then the processes pass their
//! pids one step round a ring with `put` in a single superstep.
//!
//! ```text
//! cargo run --release --example hello        # p = 4
//! cargo run --release --example hello -- 8   # p = 8
//! ```

use std::process::ExitCode;

use bsplib::{Area, Bsp, Error};

/// What one process reports back to the caller of the run.
struct Report {
    pid: usize,
    received: u64,
}

fn spmd(bsp: &mut Bsp) -> Result<Report, Error> {
    let (pid, p) = (bsp.pid(), bsp.nprocs());
    println!("Hello BSP Worldwide from process {pid} of {p}");

    // Superstep 0: register the one-word inbox.
    let inbox = Area::<u64>::new(bsp, 1);
    bsp.push_reg(&inbox)?;
    bsp.sync()?;

    // Superstep 1: send our pid to the right neighbour.
    let right = (pid + 1) % p;
    bsp.put(right, &[pid as u64], &inbox, 0)?;
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
    Ok(Report { pid, received })
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
    match bsplib::run(p, spmd) {
        Ok(reports) => {
            // Every process must have heard from its left neighbour.
            for r in &reports {
                let left = (r.pid + p - 1) % p;
                if r.received != left as u64 {
                    eprintln!(
                        "hello: process {} received {} instead of {left}",
                        r.pid, r.received
                    );
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hello: {e}");
            ExitCode::FAILURE
        }
    }
}
