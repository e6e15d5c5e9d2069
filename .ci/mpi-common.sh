# shellcheck shell=bash
# What .ci/mpi and .ci/cluster share (sourced, from the repository's root):
# the Rust scenario files run under mpirun, how their test binaries are
# found, and how the C programs and error paths run under mpirun.

# The Rust scenario files, error paths included: on mpi a Rust run's error
# is a value, and every rank checks the Err it returns (errors_as_values,
# owner_checks). errors.rs and errors_collective.rs stay off mpi: they log
# what each process saw in memory shared by forked processes, which ranks
# do not have (errors_as_values covers each kind of ending on mpi).
mpi_tests=(smoke seed_examples semantics semantics_bsmp semantics_registration steady_state random_programs errors_as_values owner_checks notify sparse gets owned large_puts strided collectives am_transport am profile probe checking)

# Issue 12, deterministic accumulate (tests/accumulate.rs).
mpi_tests+=(accumulate)
# Issue 12, post/start/complete/wait and locks (tests/epochs.rs).
mpi_tests+=(epochs)
# Windows: passive target straight into memory (tests/windows.rs).
mpi_tests+=(windows)
# Issue 23: one-sided state by count: every guard forgotten (tests/forgotten_guards.rs).
mpi_tests+=(forgotten_guards)
# Fence hints, every false hint found in the checking mode (tests/hints.rs).
mpi_tests+=(hints)
# One run on every engine: derived and std results gathered from the ranks
# (tests/portable_derive.rs).
mpi_tests+=(portable_derive)
# Typed active messages behind bsp.am() (tests/am_typed.rs).
mpi_tests+=(am_typed)
# Issue 26: user code that panics (closures, handlers, encode) fails the
# run on every rank, and nobody hangs (tests/callback_panics.rs).
mpi_tests+=(callback_panics)
# Issue 26: every process's profile in process 0's directory, gathered
# there on mpi (tests/profile_gathered.rs).
mpi_tests+=(profile_gathered)
# Issue 26: children the program forks from a rank (fork + exit, Command)
# leave the run alone; usize::MAX processes is the job's ranks
# (tests/child_processes.rs).
mpi_tests+=(child_processes)
# Issue 26: a counter wait that can never complete fails the run at once
# (tests/deadline.rs; its deadline runs start their own mpirun: mpi_c_tests).
mpi_tests+=(deadline)

# mpi_test_binaries NAME...: builds the tests of bsplib with the mpi
# feature (release) and sets the array `bins` to the executables of the
# test targets NAME..., failing unless each was found.
mpi_test_binaries() {
  mapfile -t bins < <(cargo test --release --features mpi -p bsplib --no-run --message-format=json 2>/dev/null \
    | python3 -c '
import json, sys
want = set(sys.argv[1:])
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in want:
        print(m["executable"])
' "$@")
  [ ${#bins[@]} -eq $# ] || { echo "expected $# test binaries, found ${#bins[@]}" >&2; return 1; }
}

# mpi_c_tests [HARNESS-ARGS...]: the C programs, the profiler from C, the
# Fortran programs, the error endings, fault injection and the tools, each
# with `bsprun --engine mpi` (which runs mpirun with $BSPLIB_MPIRUN_FLAGS).
# HARNESS-ARGS go to every test binary (after `--`); each cargo command
# runs under the command prefix in the array `mpi_c_wrap` if set (say,
# `timeout 1200`).
mpi_c_tests() {
  local wrap=()
  [ -z "${mpi_c_wrap+x}" ] || wrap=("${mpi_c_wrap[@]}")
  # The C programs (tests/c_programs.rs) with `bsprun --engine mpi`, p = 1..4.
  "${wrap[@]}" env BSPLIB_TEST_ENGINES=mpi cargo test --release --features mpi -p bsplib-c --test c_programs -- "$@"
  # The profiler from C: inprod under bsprun --profile, then bspprof.
  "${wrap[@]}" env BSPLIB_TEST_ENGINES=mpi cargo test --release --features mpi -p bsplib-c --test profile -- "$@"
  # Output in whole lines (tests/output_lines.rs): C and Rust programs
  # printing thousands of lines per rank, every line whole and labelled
  # right (bsprun puts each rank's lines back together from mpirun's tags).
  "${wrap[@]}" env BSPLIB_TEST_ENGINES=mpi cargo test --release --features mpi -p bsplib-c --test output_lines -- "$@"
  # The Fortran programs (tests/fortran.rs) the same way.
  "${wrap[@]}" env BSPLIB_TEST_ENGINES=mpi cargo test --release --features mpi -p bsplib-c --test fortran -- "$@"
  # The user guide's C and Fortran programs (tests/guide.rs) the same way.
  "${wrap[@]}" env BSPLIB_TEST_ENGINES=mpi cargo test --release --features mpi -p bsplib-c --test guide -- "$@"
  # How failed jobs end (20 runs per program): a call after bsp_end, an error
  # two ranks find, ordinary errors, a bsp_init SPMD function returning
  # without bsp_end: non-zero status, the bsplib: line once
  # and last (no MPI_ABORT banner after it), no hang.
  "${wrap[@]}" env BSPLIB_TEST_ENGINES=mpi cargo test --release --features mpi -p bsplib-c --test error_endings -- "$@"
  # Fault injection on mpi: a rank raising a signal, exiting, aborting or
  # returning at a random superstep; the job ends naming it, nothing left.
  "${wrap[@]}" env BSPLIB_FAULT_TRIALS="${BSPLIB_FAULT_TRIALS:-100}" BSPLIB_TEST_ENGINES=mpi \
    cargo test --release --features mpi -p bsplib-c --test faults -- --nocapture "$@" 2>&1 \
    | grep -oE 'faults: .*|test result: .*'
  # Issue 26: the deadline on mpi: a rank in an endless loop or stopped
  # (SIGSTOP) is named and the job ends; counter waits that wait for each
  # other end by the deadline (tests/deadline.rs, each run its own mpirun
  # with $BSPLIB_MPIRUN_FLAGS).
  "${wrap[@]}" env BSPLIB_TEST_ENGINES=mpi cargo test --release --features mpi -p bsplib --test deadline -- "$@"
  # bspcc, including --bsp-static with Open MPI's libraries, run on mpi.
  "${wrap[@]}" cargo test --release --features mpi -p bsplib-c --test tools -- "$@"
  # The installed layout's wrappers; bspcc -fcheck-syncs' checking mode on mpi.
  "${wrap[@]}" env BSPLIB_TEST_ENGINES=mpi cargo test --release --features mpi -p bsplib-c --test install -- "$@"
  # Issue 27: bsprun --version naming Open MPI, the progress line erased
  # around the ranks' output, the load warning, -np / BSPLIB_NPROCS on mpi.
  "${wrap[@]}" env BSPLIB_TEST_ENGINES=mpi cargo test --release --features mpi -p bsplib-c --test tool_conventions -- "$@"
}
