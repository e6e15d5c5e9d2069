//! A BSP process may start child processes of its own (a helper program,
//! a shell command, a bare `fork` whose child calls `exit`): they are not
//! BSP processes, and the run must neither wait for them nor be ended by
//! them. Every engine, the `mpi` one included: there a forked child of a
//! rank used to run the library's exit handler (`MPI_Finalize`), which
//! waited for the whole job and hung it.
//!
//! Also here: `usize::MAX` processes ("as many as there are") gives the
//! job's ranks on `mpi`, through `Runtime::new(..).engine(Engine::Mpi)` and
//! `Runtime::from_env`, and the hardware threads elsewhere.
//!
//! Under `mpirun` with `BSPLIB_ENGINE=mpi` (`.ci/mpi`, `.ci/cluster`) every
//! scenario runs on `mpi` only.

mod common;

use bsplib::{Area, Bsp, Engine, Error, Runtime};
use common::{configurations, for_each_engine, mpi_mode};

/// Every process passes an 8-byte value round the ring: the run goes on,
/// and ends correctly, after the children.
fn ring(bsp: &mut Bsp) -> Result<usize, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let x = Area::from_vec(bsp, vec![me]);
    bsp.push_reg(&x)?;
    bsp.sync()?;
    bsp.put((me + 1) % p, &x, 0, &[me])?;
    bsp.sync()?;
    bsp.pop_reg(&x)?;
    Ok(x.as_slice(bsp)[0])
}

fn check_ring(p: usize, got: &[usize]) {
    let want: Vec<usize> = (0..p).map(|i| (i + p - 1) % p).collect();
    assert_eq!(got, want, "p = {p}: the ring after the children");
}

#[test]
fn every_process_runs_a_program_with_std_process_command() {
    for_each_engine(
        |bsp| {
            let status = std::process::Command::new("true")
                .status()
                .expect("running true");
            check!(bsp, status.success(), "true ended with {status}");
            let out = std::process::Command::new("sh")
                .args(["-c", "echo child of $0; exit 5", &bsp.pid().to_string()])
                .output()
                .expect("running sh");
            check!(bsp, out.status.code() == Some(5), "sh: {:?}", out.status);
            let line = format!("child of {}\n", bsp.pid());
            check!(bsp, out.stdout == line.as_bytes(), "{:?}", out.stdout);
            ring(bsp)
        },
        check_ring,
    );
}

#[test]
fn a_child_forked_by_one_process_that_calls_exit_leaves_the_run_alone() {
    for_each_engine(
        |bsp| {
            if bsp.pid() == bsp.nprocs() - 1 {
                // SAFETY: the child calls `exit` at once: the C library's
                // exit handlers (the library's among them: on `mpi` its
                // `MPI_Finalize`) run in a process that is no BSP process.
                let child = unsafe { libc::fork() };
                if child == 0 {
                    // SAFETY: ends the child, running its exit handlers.
                    unsafe { libc::exit(5) };
                }
                check!(bsp, child > 0, "fork failed");
                let mut status = 0;
                // SAFETY: waits for the child forked above.
                let waited = unsafe { libc::waitpid(child, &mut status, 0) };
                check!(bsp, waited == child, "waitpid");
                check!(
                    bsp,
                    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 5,
                    "the child's status {status:#x}"
                );
            }
            ring(bsp)
        },
        check_ring,
    );
}

/// `usize::MAX` asks for every process there is: the job's ranks on `mpi`
/// (`OMPI_COMM_WORLD_SIZE`), whichever way the run names its engine; the
/// hardware threads on `threads` and `processes`.
#[test]
fn usize_max_asks_for_every_process_there_is() {
    if mpi_mode() {
        let ranks: usize = std::env::var("OMPI_COMM_WORLD_SIZE")
            .or_else(|_| std::env::var("PMI_SIZE"))
            .expect("mpi mode runs under mpirun")
            .parse()
            .expect("a number of ranks");
        let runtimes = [
            Runtime::new(usize::MAX).engine(Engine::Mpi),
            Runtime::from_env(usize::MAX),
        ];
        for runtime in runtimes {
            assert_eq!(runtime.engine_used(), Engine::Mpi);
            assert_eq!(runtime.nprocs(), ranks);
            let got = runtime
                .return_everywhere(true)
                .run(|bsp| Ok((bsp.pid(), bsp.nprocs())))
                .unwrap_or_else(|e| panic!("usize::MAX processes on mpi: {e}"));
            let want: Vec<_> = (0..ranks).map(|pid| (pid, ranks)).collect();
            assert_eq!(got, want);
        }
        return;
    }
    let n = bsplib::available_processes();
    for (engine, _) in configurations() {
        let want = if engine == Engine::Serial { 1 } else { n };
        assert_eq!(
            Runtime::new(usize::MAX).engine(engine).nprocs(),
            want,
            "{}",
            engine.name()
        );
    }
    let got = Runtime::new(usize::MAX)
        .engine(Engine::Threads)
        .run(|bsp| Ok(bsp.nprocs()))
        .expect("usize::MAX processes on threads");
    assert_eq!(got, vec![n; n]);
}
