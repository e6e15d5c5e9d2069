//! `bspf90` (and its alias `bspf77`): compiles and links Fortran programs
//! against bsplib, as `bspcc` does C programs.
//!
//! ```text
//! bspf90 hello.f90 -o hello           # compile and link with libbsp.so
//! bspf90 -O2 -c a.f90                 # compile only
//! bspf90 main.f90 helper.c -o prog    # Fortran and C in one program
//! bspf90 --bsp-static a.o -o prog     # link libbsp.a
//! ```
//!
//! The compiler is `$BSPF90_FC`, else `$FC`, else `gfortran`, split on
//! whitespace. `bspf90` runs `<compiler> -I<incdir>
//! -fallow-argument-mismatch <arguments...> <link flags>`: `incdir` holds
//! `fbsp.h` and `bsp.h` (for C files of a mixed program);
//! `-fallow-argument-mismatch` lets the programs of the paper pass a `REAL*8`
//! array to `bspput` in one call and an `INTEGER` in the next, as its
//! synopses' `<TYPE>` arguments allow (gfortran then warns of each
//! mismatch; `-w` silences it). Options, search order and link flags are
//! `bspcc`'s (`wrapper/mod.rs`): `libbsp.so` with an rpath to its
//! directory, or `libbsp.a` with `--bsp-static`; `../include` and `../lib`
//! beside this executable first (installed), then the build tree;
//! `--showme[:compile|:link|...]` prints instead of compiling; Oxford's
//! `-fcheck-syncs` and `-flibrary-level=N` are understood. It exits with
//! the compiler's status, 2 on a usage error or a missing library, 127 if
//! the compiler cannot be run.

use std::path::Path;
use std::process::ExitCode;

#[path = "wrapper/mod.rs"]
mod wrapper;
use wrapper::{Options, Tool};

#[allow(dead_code)] // `bspf77` has its own `main`, which calls this one
fn main() -> ExitCode {
    run()
}

/// The usage text printed by `--help`, `-h` and `--bsp-help`.
const USAGE: &str = "\
Usage: bspf90 [--bsp-static] [--showme[:what]] [-fcheck-syncs]
              [compiler arguments...] file...
       (bspf77 is the same program)

Compiles and links BSPlib programs in Fortran: runs gfortran with fbsp.h
on the include path, -fallow-argument-mismatch (BSPlib's <TYPE> arguments
take any type) and -fno-tree-pta (bspsync may change registered
variables and get destinations) and, unless only compiling (-c, -E, -S,
-M, -MM, -fsyntax-only), links against libbsp (libbsp.so with an rpath to
its directory). C files of a mixed program may be given too (bsp.h is on
the path).

Options (all other arguments go to the compiler unchanged):
  --bsp-static    link libbsp.a instead of libbsp.so
  --showme        print the compiler command instead of running it
                  (--bsp-show is the same)
  --showme:compile, --showme:link
                  print only the flags for compiling, or for linking
  --showme:command, --showme:incdirs, --showme:libdirs, --showme:libs,
  --showme:version
                  print the compiler, a directory, the libraries, or the
                  version line
  -fcheck-syncs   (Oxford BSPlib) run the program in bsplib's checking
                  mode (as bsprun --check)
  -flibrary-level=N
                  (Oxford BSPlib, N = 0, 1, 2) accepted and ignored
  -h, --help, --bsp-help
                  print this help and exit
  --version       print the compiler's version, then bspf90's, and exit

Where bspf90 looks: fbsp.h in ../include beside its own directory (an
installed bspf90), else in the source tree; libbsp in $BSPLIB_LIBDIR, else
../lib, else bspf90's own directory (the build tree).

Environment:
  BSPF90_FC       the compiler (may hold options); default: $FC, else gfortran
  BSPLIB_LIBDIR   the directory of libbsp.so and libbsp.a

Run the program with bsprun, e.g. bsprun -np 4 ./prog.
";

/// What every compilation needs: the paper's `<TYPE>` arguments take any
/// type (a `REAL*8` array in one call, an `INTEGER` in the next), and
/// registered variables and get destinations live in memory across
/// `bspsync`. gfortran tells the optimiser that a procedure never keeps
/// the address of an argument (the Fortran rule for dummies without
/// `TARGET`), so at `-O2` it assumes that `bspsync` cannot change a
/// variable that was only passed to `bsppushreg` or `bspget`, and reuses
/// its value from before the sync; `-fno-tree-pta` turns that escape
/// reasoning off.
const FORTRAN_FLAGS: [&str; 2] = ["-fallow-argument-mismatch", "-fno-tree-pta"];

/// The compiler's words: the first non-blank of `BSPF90_FC` and `FC`,
/// else `gfortran`.
fn compiler(bspf90_fc: Option<String>, fc: Option<String>) -> Vec<String> {
    [bspf90_fc, fc]
        .into_iter()
        .flatten()
        .map(|v| v.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .find(|words| !words.is_empty())
        .unwrap_or_else(|| vec!["gfortran".to_owned()])
}

/// `bspf90`'s (and `bspf77`'s) work.
pub(crate) fn run() -> ExitCode {
    wrapper::quiet_on_closed_pipe();
    let name = std::env::args()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .filter(|n| n == "bspf77")
        .unwrap_or_else(|| "bspf90".to_owned());
    let synopsis = format!(
        "Usage: {name} [--bsp-static] [--showme[:compile|:link|...]] [-fcheck-syncs] \
         [compiler arguments...] file...  ({name} --help for more)"
    );
    let tool = Tool {
        name: &name,
        usage: USAGE,
        synopsis: &synopsis,
        header: "fbsp.h",
        extra_flags: &FORTRAN_FLAGS,
        compiler: compiler(std::env::var("BSPF90_FC").ok(), std::env::var("FC").ok()),
        env: Vec::new(),
    };
    tool.run(&Options::parse(std::env::args_os().skip(1)))
}

#[cfg(test)]
mod tests {
    use super::wrapper::{command_line, shell_line, Paths, Showme};
    use super::*;
    use std::ffi::OsString;

    fn options(args: &str) -> Options {
        Options::parse(args.split_whitespace().map(OsString::from))
    }

    fn line(args: &str) -> String {
        let fc = ["gfortran".to_owned()];
        let paths = Paths {
            incdir: "/inc".into(),
            libdir: "/lib".into(),
            check_object: "/c.o".into(),
            mpi_libs: Vec::new(),
        };
        shell_line(&command_line(&fc, &paths, &FORTRAN_FLAGS, &options(args)))
    }

    #[test]
    fn links_libbsp_and_allows_argument_mismatch() {
        assert_eq!(
            line("hello.f90 -o hello"),
            "gfortran -I/inc -fallow-argument-mismatch -fno-tree-pta hello.f90 -o hello -L/lib \
             -Wl,--disable-new-dtags -Wl,-rpath,/lib -lbsp -lpthread -ldl -lm"
        );
        assert_eq!(
            line("--bsp-static a.o -o a"),
            "gfortran -I/inc -fallow-argument-mismatch -fno-tree-pta a.o -o a /lib/libbsp.a \
             -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
        );
        assert_eq!(
            line("-O2 -c a.f90"),
            "gfortran -I/inc -fallow-argument-mismatch -fno-tree-pta -O2 -c a.f90"
        );
    }

    #[test]
    fn own_options_and_compiler_choice() {
        let o = options("--bsp-show a.f --bsp-static --help");
        assert!(o.showme == Some(Showme::All) && o.static_link && o.help);
        assert_eq!(o.compiler_args, ["a.f"]);
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(compiler(None, None), ["gfortran"]);
        assert_eq!(
            compiler(some(" "), some("gfortran-12 -g")),
            ["gfortran-12", "-g"]
        );
        assert_eq!(compiler(some("f95"), some("gfortran")), ["f95"]);
    }
}
