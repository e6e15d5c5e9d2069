//! `bspcc`: compiles and links C (or C++) programs against bsplib.
//!
//! ```text
//! bspcc hello.c -o hello            # compile and link with libbsp.so
//! bspcc -O2 -c a.c                  # compile only
//! bspcc --bsp-static a.o -o prog    # link libbsp.a
//! bspcc --showme:compile            # the flags, for another build system
//! BSPCC_CC=c++ bspcc prog.cpp -o prog
//! ```
//!
//! The compiler is `$BSPCC_CC`, else `$CC`, else `cc`, split on whitespace
//! ([`choose_compiler`]). A `CC` that names `bspcc` itself is skipped
//! silently: `make CC=bspcc` exports `CC=bspcc` into the environment of
//! every recipe (GNU make passes command-line variables on to the commands
//! it runs), so bspcc meets its own name there on every compile and would
//! otherwise run itself forever. A `BSPCC_CC` naming bspcc is the user's
//! own mistake and is skipped with a message. `BSPCC_DEPTH`, counted up
//! for every compiler bspcc runs, stops a loop through a wrapper script
//! ([`MAX_DEPTH`]).
//!
//! `bspcc` runs `<compiler> -I<incdir> <arguments...> <link flags>`; where
//! `incdir` and the libraries are found, and the rpath programs get, is
//! decided in `wrapper/mod.rs` (installed layout `<exe>/../include` and
//! `<exe>/../lib` first, then the build tree). A `libbsp.a` built with the
//! `mpi` feature needs Open MPI's libraries too. There are no link flags
//! when the arguments ask only to preprocess, compile or assemble.
//! `bspcc`'s own options (see [`USAGE`]) are removed from the arguments,
//! Oxford BSPlib's `-fcheck-syncs` and `-flibrary-level=N` among them; all
//! others go to the compiler unchanged. Without an input file (and without
//! a query such as `-v` or `-dumpversion`) it says so with a line of usage
//! and exits with 2. It exits with the compiler's status, 2 if the library
//! to link is missing or on a loop, or 127 if the compiler cannot be run.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[path = "wrapper/mod.rs"]
mod wrapper;
use wrapper::{Options, Tool};

/// The one line of usage printed after a usage error.
const SYNOPSIS: &str = "Usage: bspcc [--bsp-static] [--showme[:compile|:link|...]] \
[-fcheck-syncs] [compiler arguments...] file...  (bspcc --help for more)";

/// The usage text printed by `--help`, `-h` and `--bsp-help`.
const USAGE: &str = "\
Usage: bspcc [--bsp-static] [--showme[:what]] [-fcheck-syncs]
             [compiler arguments...] file...

Compiles and links BSPlib programs: runs the C compiler with bsp.h on the
include path and, unless only compiling (-c, -E, -S, -M, -MM,
-fsyntax-only), links against libbsp (libbsp.so with an rpath to its
directory, so the program runs from any directory).

Options (all other arguments go to the compiler unchanged):
  --bsp-static    link libbsp.a instead of libbsp.so (a self-contained
                  binary; adds Open MPI's libraries if libbsp.a has the
                  mpi engine)
  --showme        print the compiler command instead of running it
                  (--bsp-show is the same)
  --showme:compile, --showme:link
                  print only the flags for compiling, or for linking
                  (with --bsp-static: the static link), as mpicc does
  --showme:command, --showme:incdirs, --showme:libdirs, --showme:libs,
  --showme:version
                  print the compiler, the include or library directory,
                  the libraries, or bspcc's version line
  -fcheck-syncs   (Oxford BSPlib) link the program so that it runs in
                  bsplib's checking mode (as bsprun --check,
                  BSPLIB_CHECK=1; BSPLIB_CHECK=0 at run time turns it off)
  -flibrary-level=N
                  (Oxford BSPlib, N = 0, 1, 2) accepted and ignored:
                  bsplib has one library for every level
  -h, --help, --bsp-help
                  print this help and exit
  --version       print the compiler's version, then bspcc's, and exit

Where bspcc looks: bsp.h in ../include beside its own directory (an
installed bspcc), else in the source tree; libbsp in $BSPLIB_LIBDIR, else
../lib, else bspcc's own directory (the build tree).

Environment:
  BSPCC_CC        the compiler, e.g. BSPCC_CC=c++ for C++ (may hold options)
  CC              the compiler if BSPCC_CC is unset (default: cc); skipped
                  if it names bspcc itself (make CC=bspcc)
  BSPLIB_LIBDIR   the directory of libbsp.so and libbsp.a
  BSPCC_MPI_LIBS  Open MPI's link flags for --bsp-static (default: from
                  mpicc --showme:link, else pkg-config ompi-c)
  BSPCC_DEPTH     set by bspcc for the compiler it runs: bspcc refuses to
                  run nested more than once (a compiler that runs bspcc)

Run the program with bsprun, e.g. bsprun -np 4 ./prog.
";

/// How deep bspcc may run inside compilers it started (`BSPCC_DEPTH`): one
/// level is a compiler wrapper around another bspcc; deeper is a loop.
const MAX_DEPTH: u32 = 1;

/// The compiler's words, and a message for each `BSPCC_CC` skipped: the
/// first non-blank of `bspcc_cc` (`$BSPCC_CC`) and `cc` (`$CC`), split on
/// whitespace, whose program is not bspcc itself (`is_self`), else `cc`.
/// A `CC` naming bspcc is skipped without a message (`make CC=bspcc`).
///
/// # Errors
///
/// Even `cc` is bspcc.
fn choose_compiler(
    bspcc_cc: Option<String>,
    cc: Option<String>,
    is_self: impl Fn(&str) -> bool,
) -> Result<(Vec<String>, Vec<String>), String> {
    let mut skipped = Vec::new();
    for (name, value) in [("BSPCC_CC", bspcc_cc), ("CC", cc)] {
        let Some(value) = value else { continue };
        let words: Vec<String> = value.split_whitespace().map(str::to_owned).collect();
        match words.first() {
            None => continue,
            // make CC=bspcc: expected, and silent (see the module's doc).
            Some(program) if is_self(program) && name == "CC" => {}
            Some(program) if is_self(program) => skipped.push(format!("{name}={}", value.trim())),
            Some(program) => {
                let notes = notes(&skipped, program);
                return Ok((words, notes));
            }
        }
    }
    if is_self("cc") {
        return Err("cc is bspcc itself: set BSPCC_CC to the C compiler".to_owned());
    }
    Ok((vec!["cc".to_owned()], notes(&skipped, "cc")))
}

/// The messages for the compiler choices skipped, naming the one used.
fn notes(skipped: &[String], used: &str) -> Vec<String> {
    skipped
        .iter()
        .map(|choice| {
            format!(
                "bspcc: ignoring {choice}: it names bspcc itself; compiling with {used} \
                 (BSPCC_CC is the compiler bspcc runs)"
            )
        })
        .collect()
}

/// The file `program` runs: a path if it has a `/`, else the first
/// executable file of that name in `path` (`$PATH`).
fn resolve(program: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `program` runs bspcc: the file it resolves to is this
/// executable (`/proc/self/exe`, through links), or is named `bspcc` (a
/// copy, which would in turn find `CC=bspcc`).
fn runs_bspcc(program: &str, path: Option<&OsStr>, me: Option<&Path>) -> bool {
    let Some(file) = resolve(program, path) else {
        return false;
    };
    let file = file.canonicalize().unwrap_or(file);
    if file.file_name().is_some_and(|name| name == "bspcc") {
        return true;
    }
    let Some(me) = me else { return false };
    use std::os::unix::fs::MetadataExt;
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    file == me || id(&file).is_some_and(|f| Some(f) == id(me))
}

fn main() -> ExitCode {
    wrapper::quiet_on_closed_pipe();
    let options = Options::parse(std::env::args_os().skip(1));
    let mut tool = Tool {
        name: "bspcc",
        usage: USAGE,
        synopsis: SYNOPSIS,
        header: "bsp.h",
        extra_flags: &[],
        compiler: vec!["cc".to_owned()],
        env: Vec::new(),
    };
    if options.help || !options.errors.is_empty() {
        return tool.run(&options);
    }
    let depth = std::env::var("BSPCC_DEPTH")
        .ok()
        .and_then(|d| d.trim().parse::<u32>().ok())
        .unwrap_or(0);
    if depth > MAX_DEPTH {
        eprintln!(
            "bspcc: refusing to run: bspcc was started by the compiler it runs {depth} times over \
             (BSPCC_DEPTH={depth}): BSPCC_CC or CC leads back to bspcc"
        );
        return ExitCode::from(2);
    }
    let me = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .ok();
    let path = std::env::var_os("PATH");
    let is_self = |program: &str| runs_bspcc(program, path.as_deref(), me.as_deref());
    let (compiler, notes) = match choose_compiler(
        std::env::var("BSPCC_CC").ok(),
        std::env::var("CC").ok(),
        is_self,
    ) {
        Ok(choice) => choice,
        Err(message) => {
            eprintln!("bspcc: {message}");
            return ExitCode::from(2);
        }
    };
    for note in notes {
        eprintln!("{note}");
    }
    tool.compiler = compiler;
    tool.env.push(("BSPCC_DEPTH", (depth + 1).to_string()));
    tool.run(&options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wrapper::{
        command_line, mpi_link_flags, shell_line, shell_quote, Linking, Paths, Showme, COMPILE_ONLY,
    };
    use std::ffi::OsString;

    /// The options of a command line split on spaces.
    fn options(args: &str) -> Options {
        Options::parse(args.split_whitespace().map(OsString::from))
    }

    /// Made-up paths, with `mpi_libs` for a static libbsp with the mpi engine.
    fn paths(mpi_libs: &[&str]) -> Paths {
        Paths {
            incdir: "/inc".into(),
            libdir: "/lib dir".into(),
            check_object: "/c.o".into(),
            mpi_libs: mpi_libs.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The command for `args` with `CC="gcc -std=c99"` and made-up paths.
    fn line(args: &str) -> String {
        let cc = ["gcc".to_owned(), "-std=c99".to_owned()];
        shell_line(&command_line(&cc, &paths(&[]), &[], &options(args)))
    }

    #[test]
    fn own_options_are_consumed() {
        let o = options("--bsp-show a.c --bsp-static -o a --bsp-help");
        assert!(o.showme == Some(Showme::All) && o.static_link && o.help);
        assert_eq!(o.compiler_args, ["a.c", "-o", "a"]);
        assert!(options("-h").help && options("x.c --help").help);
        assert!(options("--version").version);
        assert_eq!(options("a.c").linking(), Linking::Shared);
    }

    #[test]
    fn compile_only_does_not_link() {
        for flag in COMPILE_ONLY {
            let o = options(&format!("--bsp-static -O2 {flag} a.c"));
            assert_eq!(o.linking(), Linking::None, "{flag}");
        }
        assert_eq!(options("-MD a.c -o a").linking(), Linking::Shared);
        assert_eq!(line("-O2 -c a.c"), "gcc -std=c99 -I/inc -O2 -c a.c");
    }

    #[test]
    fn shared_and_static_link_lines() {
        assert_eq!(
            line("hello.c -o hello"),
            "gcc -std=c99 -I/inc hello.c -o hello '-L/lib dir' -Wl,--disable-new-dtags '-Wl,-rpath,/lib dir' \
             -lbsp -lpthread -ldl -lm"
        );
        assert_eq!(
            line("--bsp-static a.o -o a"),
            "gcc -std=c99 -I/inc a.o -o a '/lib dir/libbsp.a' \
             -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
        );
    }

    #[test]
    fn compiler_choice() {
        let some = |s: &str| Some(s.to_owned());
        let choose = |b: Option<String>, c: Option<String>| {
            choose_compiler(b, c, |p| p.ends_with("bspcc")).unwrap()
        };
        assert_eq!(choose(some("c++"), some("gcc")).0, ["c++"]);
        assert_eq!(choose(None, some(" gcc  -std=c99 ")).0, ["gcc", "-std=c99"]);
        assert_eq!(choose(some(" "), some("clang")).0, ["clang"]);
        assert_eq!(choose(None, None), (vec!["cc".to_owned()], vec![]));
        // make CC=bspcc: never bspcc itself, and silently.
        let (words, notes) = choose(None, some("bspcc"));
        assert_eq!(words, ["cc"]);
        assert!(notes.is_empty(), "{notes:?}");
        // BSPCC_CC=bspcc: the user's mistake, said once.
        let (words, notes) = choose(some("/x/bspcc -O2"), some("gcc"));
        assert_eq!((words, notes.len()), (vec!["gcc".to_owned()], 1));
        assert!(
            notes[0].contains("ignoring BSPCC_CC=/x/bspcc -O2") && notes[0].contains("with gcc")
        );
        assert!(choose_compiler(None, None, |_| true).is_err());
    }

    #[test]
    fn bspcc_is_recognised_by_path_and_name() {
        let me = std::env::current_exe().unwrap().canonicalize().unwrap();
        let dir = me.parent().unwrap().as_os_str().to_owned();
        let name = me.file_name().unwrap().to_str().unwrap();
        assert!(runs_bspcc(name, Some(&dir), Some(&me)));
        assert!(runs_bspcc(me.to_str().unwrap(), None, Some(&me)));
        assert!(!runs_bspcc(
            "sh",
            Some(OsStr::new("/bin:/usr/bin")),
            Some(&me)
        ));
        assert!(!runs_bspcc("no-such-compiler", Some(&dir), Some(&me)));
    }

    #[test]
    fn input_files() {
        for args in [
            "a.c",
            "-O2 -c a.c",
            "-x c -",
            "-o a a.o",
            "-v",
            "-dumpversion",
            "@rsp",
        ] {
            assert!(options(args).has_input(), "{args}");
        }
        for args in [
            "",
            "-O2 -Wall",
            "-o a",
            "-I inc -L lib -l m",
            "--bsp-static",
        ] {
            assert!(!options(args).has_input(), "{args}");
        }
    }

    #[test]
    fn static_link_line_with_mpi() {
        let o = options("--bsp-static a.o -o a");
        let line = shell_line(&command_line(
            &["cc".into()],
            &paths(&["-L/ompi", "-lmpi"]),
            &[],
            &o,
        ));
        assert!(
            line.contains("/lib dir/libbsp.a' -L/ompi -lmpi -lgcc_s"),
            "{line}"
        );
        assert_eq!(
            mpi_link_flags(Some(" -la  -lb ".into())).unwrap(),
            ["-la", "-lb"]
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote(OsStr::new("-I/a/b")), "-I/a/b");
        assert_eq!(shell_quote(OsStr::new("")), "''");
        assert_eq!(shell_quote(OsStr::new("it's")), r"'it'\''s'");
    }
}
