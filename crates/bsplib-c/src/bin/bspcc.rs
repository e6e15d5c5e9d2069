//! `bspcc`: compiles and links C (or C++) programs against bsplib.
//!
//! ```text
//! bspcc hello.c -o hello            # compile and link with libbsp.so
//! bspcc -O2 -c a.c                  # compile only
//! bspcc --bsp-static a.o -o prog    # link libbsp.a
//! BSPCC_CC=c++ bspcc prog.cpp -o prog
//! ```
//!
//! The compiler is `$BSPCC_CC`, else `$CC`, else `cc`, split on whitespace
//! ([`choose_compiler`]); a choice that is `bspcc` itself is skipped with a
//! message (`make CC=bspcc` exports `CC=bspcc` to the recipes, and bspcc
//! would run itself forever), and `BSPCC_DEPTH`, counted up for every
//! compiler bspcc runs, stops a loop through a wrapper script
//! ([`MAX_DEPTH`]).
//! `bspcc` runs `<compiler> -I<incdir> <arguments...> <link flags>`, where
//! `incdir` holds `bsp.h` ([`include_dir`]) and the link flags
//! ([`command_line`]) point at the libraries in `libdir`, the directory of
//! the `bspcc` executable (or its `deps/`, or `$BSPLIB_LIBDIR`: [`lib_dir`]):
//! Cargo builds `libbsp.so` and `libbsp.a` there. A `libbsp.a` built with
//! the `mpi` feature needs Open MPI's libraries too ([`mpi_link_flags`]).
//! There are no link flags when the arguments ask only to preprocess,
//! compile or assemble ([`COMPILE_ONLY`]). `bspcc`'s own options
//! (`--bsp-static`, `--bsp-show`, `--bsp-help`, `-h`, `--help`,
//! `--version`; see [`USAGE`]) are removed from the arguments; all others
//! go to the compiler unchanged. Without an input file (and without a
//! query such as `-v` or `-dumpversion`) it says so in one line and exits
//! with 2. It exits with the compiler's status, 2 if the library to link is
//! missing or on a loop, or 127 if the compiler cannot be run.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

#[path = "wrapper/mod.rs"]
mod wrapper;
use wrapper::{exe_dir, include_dir, lib_dir, prefixed, shell_line};

/// The usage text printed by `--help`, `-h` and `--bsp-help`.
const USAGE: &str = "\
Usage: bspcc [--bsp-static] [--bsp-show] [compiler arguments...] file...

Compiles and links BSPlib programs: runs the C compiler with bsp.h on the
include path and, unless only compiling (-c, -E, -S, -M, -MM,
-fsyntax-only), links against libbsp (libbsp.so by its absolute path, so
the program runs from any directory).

Options (all other arguments go to the compiler unchanged):
  --bsp-static    link libbsp.a instead of libbsp.so (a self-contained
                  binary; adds Open MPI's libraries if libbsp.a has the
                  mpi engine)
  --bsp-show      print the compiler command instead of running it
  -h, --help, --bsp-help
                  print this help and exit
  --version       print the compiler's version, then bspcc's, and exit

Environment:
  BSPCC_CC        the compiler, e.g. BSPCC_CC=c++ for C++ (may hold options)
  CC              the compiler if BSPCC_CC is unset (default: cc); ignored,
                  with a message, if it names bspcc itself (make CC=bspcc)
  BSPLIB_LIBDIR   the directory of libbsp.so and libbsp.a (default: bspcc's)
  BSPCC_MPI_LIBS  Open MPI's link flags for --bsp-static (default: from
                  mpicc --showme:link, else pkg-config ompi-c)
  BSPCC_DEPTH     set by bspcc for the compiler it runs: bspcc refuses to
                  run nested more than once (a compiler that runs bspcc)

Run the program with bsprun, e.g. bsprun -np 4 ./prog.
";

/// How deep bspcc may run inside compilers it started (`BSPCC_DEPTH`): one
/// level is a compiler wrapper around another bspcc; deeper is a loop.
const MAX_DEPTH: u32 = 1;

/// Options whose value is the next argument (not an input file).
const VALUE_OPTIONS: [&str; 26] = [
    "-o",
    "-I",
    "-L",
    "-D",
    "-U",
    "-l",
    "-x",
    "-u",
    "-T",
    "-e",
    "-MF",
    "-MT",
    "-MQ",
    "-include",
    "-imacros",
    "-isystem",
    "-idirafter",
    "-iquote",
    "-iprefix",
    "-iwithprefix",
    "-isysroot",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "--param",
    "-aux-info",
];

/// Arguments that ask the compiler something and need no input file.
const QUERIES: [&str; 3] = ["-v", "-###", "-V"];
/// Prefixes of such arguments (`-dumpversion`, `-print-search-dirs`, ...).
const QUERY_PREFIXES: [&str; 5] = ["-dump", "-print", "--print", "--help=", "--target-help"];

/// Arguments after which the compiler does not link.
const COMPILE_ONLY: [&str; 6] = ["-c", "-E", "-S", "-M", "-MM", "-fsyntax-only"];

/// The system libraries `libbsp.so` needs.
const SHARED_SYSTEM_LIBS: [&str; 3] = ["-lpthread", "-ldl", "-lm"];

/// The system libraries a Rust static library needs, as listed by
/// `rustc --print native-static-libs` for a Linux target.
const STATIC_SYSTEM_LIBS: [&str; 7] = [
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

/// How to link against bsplib.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Linking {
    /// The compiler does not link.
    None,
    /// Against `libbsp.so`, found at run time through the rpath.
    Shared,
    /// Against `libbsp.a`.
    Static,
}

impl Linking {
    /// The library file this linking needs in `libdir`.
    fn library(self) -> Option<&'static str> {
        match self {
            Linking::None => None,
            Linking::Shared => Some("libbsp.so"),
            Linking::Static => Some("libbsp.a"),
        }
    }
}

/// The command line split into `bspcc`'s options and the compiler's.
#[derive(Debug, Default, PartialEq, Eq)]
struct Options {
    /// `--bsp-static` was given.
    static_link: bool,
    /// `--bsp-show` was given.
    show: bool,
    /// `--bsp-help`, `--help` or `-h` was given.
    help: bool,
    /// `--version` was given.
    version: bool,
    /// Every other argument, in order.
    compiler_args: Vec<OsString>,
}

impl Options {
    /// Separates `bspcc`'s options (anywhere on the line) from the rest.
    fn parse(args: impl IntoIterator<Item = OsString>) -> Options {
        let mut options = Options::default();
        for arg in args {
            match arg.to_str() {
                Some("--bsp-static") => options.static_link = true,
                Some("--bsp-show") => options.show = true,
                Some("--bsp-help" | "--help" | "-h") => options.help = true,
                Some("--version") => options.version = true,
                _ => options.compiler_args.push(arg),
            }
        }
        options
    }

    /// Whether the compiler arguments name an input file (a word that is
    /// not an option nor an option's value, or `-` for standard input), or
    /// ask the compiler something that needs none (`-v`, `-dumpversion`).
    fn has_input(&self) -> bool {
        let mut args = self.compiler_args.iter().map(|a| a.to_string_lossy());
        while let Some(arg) = args.next() {
            if VALUE_OPTIONS.contains(&&*arg) {
                args.next();
            } else if arg == "-"
                || !arg.starts_with('-')
                || QUERIES.contains(&&*arg)
                || QUERY_PREFIXES.iter().any(|p| arg.starts_with(p))
            {
                return true;
            }
        }
        false
    }

    /// How the compiler run will link.
    fn linking(&self) -> Linking {
        let compile_only = |arg: &OsString| COMPILE_ONLY.iter().any(|c| arg == c);
        if self.compiler_args.iter().any(compile_only) {
            Linking::None
        } else if self.static_link {
            Linking::Static
        } else {
            Linking::Shared
        }
    }
}

/// The compiler's words, and a message for each choice skipped: the first
/// non-blank of `bspcc_cc` (`$BSPCC_CC`) and `cc` (`$CC`), split on
/// whitespace, whose program is not bspcc itself (`is_self`), else `cc`.
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
                "bspcc: ignoring {choice}: it names bspcc itself (make CC=bspcc passes CC on); \
                 compiling with {used} (set BSPCC_CC to choose the compiler)"
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

/// The full command line: compiler words, then the include directory, the
/// user's arguments and the link flags.
fn command_line(
    compiler: &[String],
    incdir: &Path,
    libdir: &Path,
    options: &Options,
    mpi_libs: &[String],
) -> Vec<OsString> {
    let mut line: Vec<OsString> = compiler.iter().map(OsString::from).collect();
    line.push(prefixed("-I", incdir));
    line.extend(options.compiler_args.iter().cloned());
    match options.linking() {
        Linking::None => {}
        Linking::Shared => {
            line.push(prefixed("-L", libdir));
            // DT_RPATH, not DT_RUNPATH: the library the program was built
            // against wins over any libbsp.so on LD_LIBRARY_PATH.
            line.push("-Wl,--disable-new-dtags".into());
            line.push(prefixed("-Wl,-rpath,", libdir));
            line.push("-lbsp".into());
            line.extend(SHARED_SYSTEM_LIBS.map(OsString::from));
        }
        Linking::Static => {
            line.push(libdir.join("libbsp.a").into());
            line.extend(mpi_libs.iter().map(OsString::from));
            line.extend(STATIC_SYSTEM_LIBS.map(OsString::from));
        }
    }
    line
}

/// Whether the static library `lib` contains the mpi engine (it then
/// refers to `MPI_Init_thread`, which the library does not define).
fn needs_mpi(lib: &Path) -> bool {
    const SYMBOL: &[u8] = b"MPI_Init_thread\0";
    std::fs::read(lib).is_ok_and(|bytes| bytes.windows(SYMBOL.len()).any(|w| w == SYMBOL))
}

/// Open MPI's link flags: `$BSPCC_MPI_LIBS`, else what `mpicc
/// --showme:link` prints, else `pkg-config --libs ompi-c`.
///
/// # Errors
///
/// None of them gives any.
fn mpi_link_flags(over: Option<String>) -> Result<Vec<String>, String> {
    if let Some(flags) = over {
        return Ok(flags.split_whitespace().map(str::to_owned).collect());
    }
    let ask = |program: &str, args: &[&str]| {
        let output = Command::new(program).args(args).output().ok()?;
        let text = String::from_utf8(output.stdout).ok()?;
        let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
        (output.status.success() && !words.is_empty()).then_some(words)
    };
    ask("mpicc", &["--showme:link"])
        .or_else(|| ask("pkg-config", &["--libs", "ompi-c"]))
        .ok_or_else(|| {
            "libbsp.a has the mpi engine and needs Open MPI's libraries, but neither \
             mpicc --showme:link nor pkg-config --libs ompi-c gives them: set BSPCC_MPI_LIBS \
             (e.g. \"-L/usr/lib/x86_64-linux-gnu/openmpi/lib -lmpi\")"
                .to_owned()
        })
}

/// The exit code reporting `status` (128 + signal if killed).
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn main() -> ExitCode {
    let options = Options::parse(std::env::args_os().skip(1));
    if options.help {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
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
    if !options.has_input() && !options.version {
        eprintln!("bspcc: no input files (bspcc --help for usage)");
        return ExitCode::from(2);
    }
    let exe_dir = match exe_dir() {
        Ok(dir) => dir,
        Err(error) => {
            eprintln!("bspcc: cannot locate the bspcc executable: {error}");
            return ExitCode::from(2);
        }
    };
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
    let run = |line: &[OsString]| {
        Command::new(&line[0])
            .args(&line[1..])
            .env("BSPCC_DEPTH", (depth + 1).to_string())
            .status()
    };
    if options.version {
        // The compiler's first, for tools that read the compiler's version
        // from the first lines; then bspcc's.
        let mut line: Vec<OsString> = compiler.iter().map(OsString::from).collect();
        line.push("--version".into());
        let status = run(&line);
        println!(
            "bspcc (bsplib) {}: {} with bsp.h and libbsp",
            env!("CARGO_PKG_VERSION"),
            compiler.join(" ")
        );
        return match status {
            Ok(status) => exit_code(status),
            Err(_) => ExitCode::SUCCESS,
        };
    }
    let libdir = lib_dir(
        &exe_dir,
        options.linking().library().unwrap_or("libbsp.so"),
        std::env::var_os("BSPLIB_LIBDIR"),
    );
    if let Some(library) = options.linking().library() {
        if !libdir.join(library).is_file() {
            eprintln!(
                "bspcc: {library} not found in {}: build it with cargo build (--release)",
                libdir.display()
            );
            if !options.show {
                return ExitCode::from(2);
            }
        }
    }
    let mut mpi_libs = Vec::new();
    if options.linking() == Linking::Static && needs_mpi(&libdir.join("libbsp.a")) {
        match mpi_link_flags(std::env::var("BSPCC_MPI_LIBS").ok()) {
            Ok(flags) => mpi_libs = flags,
            Err(message) => {
                eprintln!("bspcc: {message}");
                return ExitCode::from(2);
            }
        }
    }
    let line = command_line(
        &compiler,
        &include_dir(&exe_dir, "bsp.h"),
        &libdir,
        &options,
        &mpi_libs,
    );
    if options.show {
        println!("{}", shell_line(&line));
        return ExitCode::SUCCESS;
    }
    match run(&line) {
        Ok(status) => exit_code(status),
        Err(error) => {
            eprintln!("bspcc: cannot run {}: {error}", compiler[0]);
            ExitCode::from(127)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wrapper::shell_quote;

    /// The options of a command line split on spaces.
    fn options(args: &str) -> Options {
        Options::parse(args.split_whitespace().map(OsString::from))
    }

    /// The command for `args` with `CC="gcc -std=c99"` and made-up paths.
    fn line(args: &str) -> String {
        let cc = ["gcc".to_owned(), "-std=c99".to_owned()];
        let (incdir, libdir) = (Path::new("/inc"), Path::new("/lib dir"));
        shell_line(&command_line(&cc, incdir, libdir, &options(args), &[]))
    }

    #[test]
    fn own_options_are_consumed() {
        let o = options("--bsp-show a.c --bsp-static -o a --bsp-help");
        assert!(o.show && o.static_link && o.help);
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
        // make CC=bspcc: never bspcc itself; a message says why.
        let (words, notes) = choose(None, some("bspcc"));
        assert_eq!(words, ["cc"]);
        assert!(notes[0].contains("ignoring CC=bspcc") && notes[0].contains("with cc"));
        let (words, notes) = choose(some("/x/bspcc -O2"), some("gcc"));
        assert_eq!((words, notes.len()), (vec!["gcc".to_owned()], 1));
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
        let mpi = ["-L/ompi".to_owned(), "-lmpi".to_owned()];
        let line = shell_line(&command_line(
            &["cc".into()],
            Path::new("/i"),
            Path::new("/l"),
            &o,
            &mpi,
        ));
        assert!(line.contains("/l/libbsp.a -L/ompi -lmpi -lgcc_s"), "{line}");
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
