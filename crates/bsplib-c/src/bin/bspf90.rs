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
//! mismatch; `-w` silences it). The link flags are `bspcc`'s: `libbsp.so`
//! by its absolute path (an rpath), or `libbsp.a` with `--bsp-static`, from
//! the directory of this executable (or its `deps/`, or `$BSPLIB_LIBDIR`).
//! `--bsp-show` prints the command instead of running it; there are no
//! link flags when only compiling (`-c`, `-E`, `-S`, `-M`, `-MM`,
//! `-fsyntax-only`). It exits with the compiler's status, 2 if the library
//! is missing, 127 if the compiler cannot be run.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, ExitCode};

#[path = "wrapper/mod.rs"]
mod wrapper;
use wrapper::{exe_dir, include_dir, lib_dir, prefixed, shell_line};

#[allow(dead_code)] // `bspf77` has its own `main`, which calls this one
fn main() -> ExitCode {
    run()
}

/// The usage text printed by `--help`, `-h` and `--bsp-help`.
const USAGE: &str = "\
Usage: bspf90 [--bsp-static] [--bsp-show] [compiler arguments...] file...
       (bspf77 is the same program)

Compiles and links BSPlib programs in Fortran: runs gfortran with fbsp.h
on the include path, -fallow-argument-mismatch (BSPlib's <TYPE> arguments
take any type) and -fno-tree-pta (bspsync may change registered
variables and get destinations) and, unless only compiling (-c, -E, -S, -M, -MM,
-fsyntax-only), links against libbsp (libbsp.so by its absolute path).
C files of a mixed program may be given too (bsp.h is on the path).

Options (all other arguments go to the compiler unchanged):
  --bsp-static    link libbsp.a instead of libbsp.so
  --bsp-show      print the compiler command instead of running it
  -h, --help, --bsp-help
                  print this help and exit

Environment:
  BSPF90_FC       the compiler (may hold options); default: $FC, else gfortran
  BSPLIB_LIBDIR   the directory of libbsp.so and libbsp.a (default: bspf90's)

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

/// Arguments after which the compiler does not link.
const COMPILE_ONLY: [&str; 6] = ["-c", "-E", "-S", "-M", "-MM", "-fsyntax-only"];

/// What libbsp.so needs of the system (as for `bspcc`).
const SHARED_SYSTEM_LIBS: [&str; 3] = ["-lpthread", "-ldl", "-lm"];

/// What a Rust static library needs of the system (as for `bspcc`).
const STATIC_SYSTEM_LIBS: [&str; 7] = [
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

/// The command line split into `bspf90`'s options and the compiler's.
#[derive(Debug, Default, PartialEq, Eq)]
struct Options {
    static_link: bool,
    show: bool,
    help: bool,
    compiler_args: Vec<OsString>,
}

impl Options {
    fn parse(args: impl IntoIterator<Item = OsString>) -> Options {
        let mut options = Options::default();
        for arg in args {
            match arg.to_str() {
                Some("--bsp-static") => options.static_link = true,
                Some("--bsp-show") => options.show = true,
                Some("--bsp-help" | "--help" | "-h") => options.help = true,
                _ => options.compiler_args.push(arg),
            }
        }
        options
    }

    /// The library to link (`None`: the compiler does not link).
    fn library(&self) -> Option<&'static str> {
        let compile_only = |arg: &OsString| COMPILE_ONLY.iter().any(|c| arg == c);
        if self.compiler_args.iter().any(compile_only) {
            None
        } else if self.static_link {
            Some("libbsp.a")
        } else {
            Some("libbsp.so")
        }
    }
}

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

/// The full command line.
fn command_line(
    compiler: &[String],
    incdir: &Path,
    libdir: &Path,
    options: &Options,
) -> Vec<OsString> {
    let mut line: Vec<OsString> = compiler.iter().map(OsString::from).collect();
    line.push(prefixed("-I", incdir));
    line.extend(FORTRAN_FLAGS.map(OsString::from));
    line.extend(options.compiler_args.iter().cloned());
    match options.library() {
        None => {}
        Some("libbsp.a") => {
            line.push(libdir.join("libbsp.a").into());
            line.extend(STATIC_SYSTEM_LIBS.map(OsString::from));
        }
        Some(_) => {
            line.push(prefixed("-L", libdir));
            line.push("-Wl,--disable-new-dtags".into());
            line.push(prefixed("-Wl,-rpath,", libdir));
            line.push("-lbsp".into());
            line.extend(SHARED_SYSTEM_LIBS.map(OsString::from));
        }
    }
    line
}

/// `bspf90`'s (and `bspf77`'s) work.
pub(crate) fn run() -> ExitCode {
    let name = std::env::args()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "bspf90".to_owned());
    let options = Options::parse(std::env::args_os().skip(1));
    if options.help {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if options.compiler_args.is_empty() {
        eprintln!("{name}: no input files ({name} --help for usage)");
        return ExitCode::from(2);
    }
    let exe_dir = match exe_dir() {
        Ok(dir) => dir,
        Err(error) => {
            eprintln!("{name}: cannot locate the {name} executable: {error}");
            return ExitCode::from(2);
        }
    };
    let compiler = compiler(std::env::var("BSPF90_FC").ok(), std::env::var("FC").ok());
    let library = options.library();
    let libdir = lib_dir(
        &exe_dir,
        library.unwrap_or("libbsp.so"),
        std::env::var_os("BSPLIB_LIBDIR"),
    );
    if let Some(library) = library {
        if !libdir.join(library).is_file() && !options.show {
            eprintln!(
                "{name}: {library} not found in {}: build it with cargo build (--release)",
                libdir.display()
            );
            return ExitCode::from(2);
        }
    }
    let line = command_line(
        &compiler,
        &include_dir(&exe_dir, "fbsp.h"),
        &libdir,
        &options,
    );
    if options.show {
        println!("{}", shell_line(&line));
        return ExitCode::SUCCESS;
    }
    match Command::new(&line[0]).args(&line[1..]).status() {
        Ok(status) => ExitCode::from(
            status
                .code()
                .and_then(|c| u8::try_from(c).ok())
                .unwrap_or(1),
        ),
        Err(error) => {
            eprintln!("{name}: cannot run {}: {error}", compiler[0]);
            ExitCode::from(127)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(args: &str) -> Options {
        Options::parse(args.split_whitespace().map(OsString::from))
    }

    fn line(args: &str) -> String {
        let fc = ["gfortran".to_owned()];
        shell_line(&command_line(
            &fc,
            Path::new("/inc"),
            Path::new("/lib"),
            &options(args),
        ))
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
        assert!(o.show && o.static_link && o.help);
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
