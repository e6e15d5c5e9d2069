//! `bspcc`: compiles and links C (or C++) programs against bsplib.
//!
//! ```text
//! bspcc hello.c -o hello            # compile and link with libbsp.so
//! bspcc -O2 -c a.c                  # compile only
//! bspcc --bsp-static a.o -o prog    # link libbsp.a
//! BSPCC_CC=c++ bspcc prog.cpp -o prog
//! ```
//!
//! The compiler is `$BSPCC_CC`, else `$CC`, else `cc`, split on whitespace.
//! `bspcc` runs `<compiler> -I<incdir> <arguments...> <link flags>`, where
//! `incdir` holds `bsp.h` ([`include_dir`]) and the link flags
//! ([`command_line`]) point at the libraries in `libdir`, the directory of
//! the `bspcc` executable (or its `deps/`, or `$BSPLIB_LIBDIR`: [`lib_dir`]):
//! Cargo builds `libbsp.so` and `libbsp.a` there.
//! There are no link flags when the arguments ask only to preprocess,
//! compile or assemble ([`COMPILE_ONLY`]). `bspcc`'s own options
//! (`--bsp-static`, `--bsp-show`, `--bsp-help`; see [`USAGE`]) are removed
//! from the arguments; all others go to the compiler unchanged. It exits
//! with the compiler's status, 2 if the library to link is missing, or 127
//! if the compiler cannot be run.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The usage text printed by `--bsp-help`.
const USAGE: &str = "\
Usage: bspcc [--bsp-static] [--bsp-show] [compiler arguments...]

Runs the C compiler with bsp.h on the include path and, unless only
compiling (-c, -E, -S, -M, -MM, -fsyntax-only), linking against libbsp.

Options (all other arguments go to the compiler unchanged):
  --bsp-static    link libbsp.a statically instead of libbsp.so
  --bsp-show      print the compiler command instead of running it
  --bsp-help      print this help and exit

Environment:
  BSPCC_CC        the compiler, e.g. BSPCC_CC=c++ for C++ (may hold options)
  CC              the compiler if BSPCC_CC is unset (default: cc)
";

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
    /// `--bsp-help` was given.
    help: bool,
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
                Some("--bsp-help") => options.help = true,
                _ => options.compiler_args.push(arg),
            }
        }
        options
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

/// The compiler's words: the first non-blank of `bspcc_cc` and `cc`, split
/// on whitespace, else `cc`.
fn compiler_words(bspcc_cc: Option<String>, cc: Option<String>) -> Vec<String> {
    [bspcc_cc, cc]
        .into_iter()
        .flatten()
        .map(|s| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .find(|words| !words.is_empty())
        .unwrap_or_else(|| vec!["cc".to_owned()])
}

/// The full command line: compiler words, then the include directory, the
/// user's arguments and the link flags.
fn command_line(
    compiler: &[String],
    incdir: &Path,
    libdir: &Path,
    options: &Options,
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
            line.extend(STATIC_SYSTEM_LIBS.map(OsString::from));
        }
    }
    line
}

/// `prefix` immediately followed by `path`, as one argument.
fn prefixed(prefix: &str, path: &Path) -> OsString {
    let mut arg = OsString::from(prefix);
    arg.push(path);
    arg
}

/// The directory of the running executable, where Cargo puts the libraries.
fn exe_dir() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?.canonicalize()?;
    Ok(exe
        .parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf))
}

/// The directory of the library to link: `$BSPLIB_LIBDIR` if set; else
/// `exe_dir` or its `deps/`, whichever holds the newer `library` (Cargo's
/// test builds leave the library in `deps/` without copying it up, so a
/// copy beside `bspcc` may be stale).
fn lib_dir(exe_dir: &Path, library: &str, over: Option<OsString>) -> PathBuf {
    if let Some(dir) = over {
        return PathBuf::from(dir);
    }
    let modified = |dir: &Path| {
        std::fs::metadata(dir.join(library))
            .and_then(|m| m.modified())
            .ok()
    };
    let deps = exe_dir.join("deps");
    match (modified(exe_dir), modified(&deps)) {
        (Some(up), Some(down)) if down > up => deps,
        (None, Some(_)) => deps,
        _ => exe_dir.to_path_buf(),
    }
}

/// The directory holding `bsp.h`: next to the libraries if installed there,
/// else the source tree's.
fn include_dir(libdir: &Path) -> PathBuf {
    let installed = libdir.join("include");
    if installed.join("bsp.h").is_file() {
        installed
    } else {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
    }
}

/// `line` as a shell command line.
fn shell_line(line: &[OsString]) -> String {
    let words: Vec<String> = line.iter().map(|arg| shell_quote(arg)).collect();
    words.join(" ")
}

/// `arg` as a shell word: quoted only if it needs to be.
fn shell_quote(arg: &OsStr) -> String {
    let text = arg.to_string_lossy();
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
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
    let exe_dir = match exe_dir() {
        Ok(dir) => dir,
        Err(error) => {
            eprintln!("bspcc: cannot locate the bspcc executable: {error}");
            return ExitCode::from(2);
        }
    };
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
    let compiler = compiler_words(std::env::var("BSPCC_CC").ok(), std::env::var("CC").ok());
    let line = command_line(&compiler, &include_dir(&exe_dir), &libdir, &options);
    if options.show {
        println!("{}", shell_line(&line));
        return ExitCode::SUCCESS;
    }
    match Command::new(&line[0]).args(&line[1..]).status() {
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

    /// The options of a command line split on spaces.
    fn options(args: &str) -> Options {
        Options::parse(args.split_whitespace().map(OsString::from))
    }

    /// The command for `args` with `CC="gcc -std=c99"` and made-up paths.
    fn line(args: &str) -> String {
        let cc = ["gcc".to_owned(), "-std=c99".to_owned()];
        let (incdir, libdir) = (Path::new("/inc"), Path::new("/lib dir"));
        shell_line(&command_line(&cc, incdir, libdir, &options(args)))
    }

    #[test]
    fn own_options_are_consumed() {
        let o = options("--bsp-show a.c --bsp-static -o a --bsp-help");
        assert!(o.show && o.static_link && o.help);
        assert_eq!(o.compiler_args, ["a.c", "-o", "a"]);
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
        assert_eq!(compiler_words(some("c++"), some("gcc")), ["c++"]);
        assert_eq!(
            compiler_words(None, some(" gcc  -std=c99 ")),
            ["gcc", "-std=c99"]
        );
        assert_eq!(compiler_words(some(" "), some("clang")), ["clang"]);
        assert_eq!(compiler_words(None, None), ["cc"]);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote(OsStr::new("-I/a/b")), "-I/a/b");
        assert_eq!(shell_quote(OsStr::new("")), "''");
        assert_eq!(shell_quote(OsStr::new("it's")), r"'it'\''s'");
    }
}
