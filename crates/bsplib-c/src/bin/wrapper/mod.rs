//! What the compiler wrappers (`bspcc`, `bspf90` and `bspf77`) share: their
//! options, where the headers and the library are, the command they run
//! and how they show it.
//!
//! # Where the wrappers look (design note, issue 27)
//!
//! A wrapper finds the headers and the library **relative to its own
//! executable first**, then in the build tree, so that one binary works
//! installed (`make install PREFIX=DIR`), moved with its prefix, and in
//! `target/release/`:
//!
//! | what | in this order |
//! |---|---|
//! | `libbsp.so`, `libbsp.a` ([`lib_dir`]) | `$BSPLIB_LIBDIR`; `<exe>/../lib` (installed); `<exe>/` or `<exe>/deps/`, whichever holds the newer library (Cargo's layout; a test build leaves a newer one in `deps/`) |
//! | `bsp.h`, `fbsp.h` ([`include_dir`]) | `<exe>/../include` (installed); the source tree's `crates/bsplib-c/include` (compiled in, used only if it still exists) |
//! | the `-fcheck-syncs` object ([`check_syncs_object`]) | `<libdir>/bsplib/check_syncs.o` (installed); the build script's output directory |
//!
//! `<exe>` is the executable with symbolic links resolved, so a link
//! `/usr/bin/bspcc -> /opt/bsplib/bin/bspcc` uses `/opt/bsplib`. The
//! installed places come first: an installed wrapper never picks up a
//! build tree that happens to still exist, and a build-tree wrapper has no
//! `../lib` (`target/lib` is not Cargo's).
//!
//! Programs linked against `libbsp.so` get an **absolute rpath to the
//! library directory the wrapper used** (`PREFIX/lib` once installed),
//! as a `DT_RPATH` (`--disable-new-dtags`: the library the program was
//! built against wins over another `libbsp.so` on `LD_LIBRARY_PATH`). An
//! `$ORIGIN`-relative rpath would be relative to the *program*, which
//! lives wherever its author builds it, not beside the library; the
//! absolute path is what `mpicc` does too. A program built by an installed
//! wrapper therefore keeps running when the source clone is deleted or
//! `cargo clean`ed; moving the prefix afterwards needs a relink (or
//! `LD_LIBRARY_PATH`, which the DT_RPATH then does not override: the old
//! path simply no longer exists).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus};

/// Options whose value is the next argument (not an input file).
const VALUE_OPTIONS: [&str; 27] = [
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
    "-J",
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
pub const COMPILE_ONLY: [&str; 6] = ["-c", "-E", "-S", "-M", "-MM", "-fsyntax-only"];

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
pub enum Linking {
    /// The compiler does not link.
    None,
    /// Against `libbsp.so`, found at run time through the rpath.
    Shared,
    /// Against `libbsp.a`.
    Static,
}

impl Linking {
    /// The library file this linking needs in `libdir`.
    pub fn library(self) -> Option<&'static str> {
        match self {
            Linking::None => None,
            Linking::Shared => Some("libbsp.so"),
            Linking::Static => Some("libbsp.a"),
        }
    }
}

/// What `--showme` (Open MPI's `mpicc` option; `--bsp-show` is the same)
/// prints instead of compiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Showme {
    /// `--showme`: the whole command line.
    All,
    /// `--showme:command`: the compiler.
    Command,
    /// `--showme:compile`: the flags for compiling.
    Compile,
    /// `--showme:link`: the flags for linking.
    Link,
    /// `--showme:incdirs`: the include directory.
    Incdirs,
    /// `--showme:libdirs`: the library directory.
    Libdirs,
    /// `--showme:libs`: the libraries, without `-l`.
    Libs,
    /// `--showme:version`: the wrapper's version line.
    Version,
}

impl Showme {
    /// The `--showme` form `arg`, if it is one.
    fn parse(arg: &str) -> Option<Result<Showme, String>> {
        let what = match arg {
            "--showme" | "--bsp-show" => return Some(Ok(Showme::All)),
            _ => arg.strip_prefix("--showme:")?,
        };
        Some(match what {
            "command" => Ok(Showme::Command),
            "compile" => Ok(Showme::Compile),
            "link" => Ok(Showme::Link),
            "incdirs" => Ok(Showme::Incdirs),
            "libdirs" => Ok(Showme::Libdirs),
            "libs" => Ok(Showme::Libs),
            "version" => Ok(Showme::Version),
            _ => Err(format!(
                "unknown option {arg} (--showme takes :command, :compile, :link, :incdirs, \
                 :libdirs, :libs or :version)"
            )),
        })
    }
}

/// The command line split into the wrapper's options and the compiler's.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `--bsp-static` was given.
    pub static_link: bool,
    /// `--showme[:...]` or `--bsp-show` was given (the last one counts).
    pub showme: Option<Showme>,
    /// `--bsp-help`, `--help` or `-h` was given.
    pub help: bool,
    /// `--version` was given.
    pub version: bool,
    /// Oxford BSPlib's `-fcheck-syncs`: the program runs in the checking
    /// mode ([`check_syncs_object`]).
    pub check_syncs: bool,
    /// Oxford BSPlib's `-flibrary-level=N` (or `-flibrary-level N`):
    /// accepted and not passed on; bsplib has one library for all levels.
    pub library_level: Option<u32>,
    /// Misused options of the wrapper's own, each a message.
    pub errors: Vec<String>,
    /// Every other argument, in order.
    pub compiler_args: Vec<OsString>,
}

impl Options {
    /// Separates the wrapper's options (anywhere on the line) from the
    /// rest.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Options {
        let mut options = Options::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let Some(text) = arg.to_str() else {
                options.compiler_args.push(arg);
                continue;
            };
            if let Some(showme) = Showme::parse(text) {
                match showme {
                    Ok(showme) => options.showme = Some(showme),
                    Err(message) => options.errors.push(message),
                }
                continue;
            }
            match text {
                "--bsp-static" => options.static_link = true,
                "--bsp-help" | "--help" | "-h" => options.help = true,
                "--version" => options.version = true,
                "-fcheck-syncs" => options.check_syncs = true,
                "-flibrary-level" => {
                    let value = args.next().map(|v| v.to_string_lossy().into_owned());
                    options.library_level(value.as_deref().unwrap_or(""));
                }
                _ => match text.strip_prefix("-flibrary-level=") {
                    Some(value) => options.library_level(value),
                    None => options.compiler_args.push(arg),
                },
            }
        }
        options
    }

    /// Records `-flibrary-level`'s value, or an error if it is no level.
    fn library_level(&mut self, value: &str) {
        match value.parse::<u32>() {
            Ok(level) if level <= 2 => self.library_level = Some(level),
            _ => self.errors.push(format!(
                "-flibrary-level takes 0, 1 or 2 (Oxford BSPlib's levels), not '{value}'"
            )),
        }
    }

    /// Whether the compiler arguments name an input file (a word that is
    /// not an option nor an option's value, or `-` for standard input), or
    /// ask the compiler something that needs none (`-v`, `-dumpversion`).
    pub fn has_input(&self) -> bool {
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
    pub fn linking(&self) -> Linking {
        let compile_only = |arg: &OsString| COMPILE_ONLY.iter().any(|c| arg == c);
        if self.compiler_args.iter().any(compile_only) {
            Linking::None
        } else {
            self.library_linking()
        }
    }

    /// How a link would link (for `--showme:link`, whatever else is asked).
    pub fn library_linking(&self) -> Linking {
        if self.static_link {
            Linking::Static
        } else {
            Linking::Shared
        }
    }
}

/// `prefix` immediately followed by `path`, as one argument.
pub fn prefixed(prefix: &str, path: &Path) -> OsString {
    let mut arg = OsString::from(prefix);
    arg.push(path);
    arg
}

/// The directory of the running executable, links resolved.
pub fn exe_dir() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?.canonicalize()?;
    Ok(exe
        .parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf))
}

/// `exe_dir`'s sibling `name` (`<exe>/../name` without the `..`).
fn sibling(exe_dir: &Path, name: &str) -> PathBuf {
    exe_dir.parent().unwrap_or(exe_dir).join(name)
}

/// The directory of the library to link: `$BSPLIB_LIBDIR` if set; else
/// `<exe>/../lib` if it holds `library` (installed); else `exe_dir` or its
/// `deps/`, whichever holds the newer `library` (Cargo's test builds leave
/// the library in `deps/` without copying it up, so a copy beside the
/// wrapper may be stale).
pub fn lib_dir(exe_dir: &Path, library: &str, over: Option<OsString>) -> PathBuf {
    if let Some(dir) = over.filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let installed = sibling(exe_dir, "lib");
    if installed.join(library).is_file() {
        return installed;
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

/// The directory holding `header` (`bsp.h`, `fbsp.h`): `<exe>/../include`
/// (installed), else the source tree's.
///
/// # Errors
///
/// Neither holds it; the message names both.
pub fn include_dir(exe_dir: &Path, header: &str) -> Result<PathBuf, String> {
    let candidates = [
        sibling(exe_dir, "include"),
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/include")),
    ];
    candidates
        .iter()
        .find(|dir| dir.join(header).is_file())
        .cloned()
        .ok_or_else(|| {
            format!(
                "{header} not found in {} nor in the source tree's {}: install bsplib \
                 (make install) or run the wrapper from the build tree",
                candidates[0].display(),
                candidates[1].display()
            )
        })
}

/// The object `-fcheck-syncs` links in: `<libdir>/bsplib/check_syncs.o`
/// (installed), else the build script's.
pub fn check_syncs_object(libdir: &Path) -> PathBuf {
    let installed = libdir.join("bsplib").join("check_syncs.o");
    if installed.is_file() {
        installed
    } else {
        PathBuf::from(concat!(env!("OUT_DIR"), "/check_syncs.o"))
    }
}

/// Whether the static library `lib` contains the mpi engine (it then
/// refers to `MPI_Init_thread`, which the library does not define).
pub fn needs_mpi(lib: &Path) -> bool {
    const SYMBOL: &[u8] = b"MPI_Init_thread\0";
    std::fs::read(lib).is_ok_and(|bytes| bytes.windows(SYMBOL.len()).any(|w| w == SYMBOL))
}

/// Open MPI's link flags: `$BSPCC_MPI_LIBS`, else what `mpicc
/// --showme:link` prints, else `pkg-config --libs ompi-c`.
///
/// # Errors
///
/// None of them gives any.
pub fn mpi_link_flags(over: Option<String>) -> Result<Vec<String>, String> {
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

/// Where the pieces of a command line come from.
#[derive(Clone, Debug)]
pub struct Paths {
    /// The directory of the headers.
    pub incdir: PathBuf,
    /// The directory of the libraries.
    pub libdir: PathBuf,
    /// The `-fcheck-syncs` object.
    pub check_object: PathBuf,
    /// Open MPI's link flags, for a `libbsp.a` with the mpi engine.
    pub mpi_libs: Vec<String>,
}

/// The flags for compiling: the include directory, then `extra`.
pub fn compile_flags(paths: &Paths, extra: &[&str]) -> Vec<OsString> {
    let mut flags = vec![prefixed("-I", &paths.incdir)];
    flags.extend(extra.iter().map(OsString::from));
    flags
}

/// The flags for linking as `linking` says (none for [`Linking::None`]),
/// with the `-fcheck-syncs` object first if `check_syncs`.
pub fn link_flags(linking: Linking, paths: &Paths, check_syncs: bool) -> Vec<OsString> {
    let mut flags: Vec<OsString> = Vec::new();
    if linking == Linking::None {
        return flags;
    }
    if check_syncs {
        flags.push(paths.check_object.clone().into());
    }
    let libdir = &paths.libdir;
    if linking == Linking::Shared {
        flags.push(prefixed("-L", libdir));
        // DT_RPATH, not DT_RUNPATH: the library the program was built
        // against wins over any libbsp.so on LD_LIBRARY_PATH.
        flags.push("-Wl,--disable-new-dtags".into());
        flags.push(prefixed("-Wl,-rpath,", libdir));
        flags.push("-lbsp".into());
        flags.extend(SHARED_SYSTEM_LIBS.map(OsString::from));
    } else {
        flags.push(libdir.join("libbsp.a").into());
        flags.extend(paths.mpi_libs.iter().map(OsString::from));
        flags.extend(STATIC_SYSTEM_LIBS.map(OsString::from));
    }
    flags
}

/// The full command line: compiler words, compile flags, the user's
/// arguments, link flags.
pub fn command_line(
    compiler: &[String],
    paths: &Paths,
    extra: &[&str],
    options: &Options,
) -> Vec<OsString> {
    let mut line: Vec<OsString> = compiler.iter().map(OsString::from).collect();
    line.extend(compile_flags(paths, extra));
    line.extend(options.compiler_args.iter().cloned());
    line.extend(link_flags(options.linking(), paths, options.check_syncs));
    line
}

/// `line` as a shell command line.
pub fn shell_line(line: &[OsString]) -> String {
    let words: Vec<String> = line.iter().map(|arg| shell_quote(arg)).collect();
    words.join(" ")
}

/// `arg` as a shell word: quoted only if it needs to be.
pub fn shell_quote(arg: &OsStr) -> String {
    let text = arg.to_string_lossy();
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Restores the default action of `SIGPIPE` (Rust's runtime ignores it,
/// and `println!` then panics on a closed pipe): `bspcc --version | head
/// -1` ends quietly, as `cc` does.
pub fn quiet_on_closed_pipe() {
    // SAFETY: called first thing in `main`, before any thread exists;
    // setting a signal's disposition to SIG_DFL has no other effect.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The exit code reporting `status` (128 + signal if killed).
pub fn exit_code(status: ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// What a wrapper is.
pub struct Tool<'a> {
    /// Its name as called (`bspcc`, `bspf90`, `bspf77`).
    pub name: &'a str,
    /// Its `--help` text.
    pub usage: &'a str,
    /// The one line of usage printed after an error.
    pub synopsis: &'a str,
    /// The header that marks the include directory.
    pub header: &'a str,
    /// Flags every compilation gets after `-I`.
    pub extra_flags: &'a [&'a str],
    /// The compiler's words.
    pub compiler: Vec<String>,
    /// Environment for the compiler.
    pub env: Vec<(&'a str, String)>,
}

impl Tool<'_> {
    /// Prints `message` and the short usage; exit status 2.
    pub fn usage_error(&self, message: &str) -> ExitCode {
        eprintln!("{}: {message}", self.name);
        eprintln!("{}", self.synopsis);
        ExitCode::from(2)
    }

    /// The version line: `<name> (bsplib) <version>: ...`.
    fn version_line(&self, paths: Option<&Paths>) -> String {
        let mut line = format!(
            "{} (bsplib) {}: {} with {}",
            self.name,
            env!("CARGO_PKG_VERSION"),
            self.compiler.join(" "),
            self.header
        );
        if let Some(paths) = paths {
            line.push_str(&format!(
                " from {} and libbsp from {}",
                paths.incdir.display(),
                paths.libdir.display()
            ));
        } else {
            line.push_str(" and libbsp");
        }
        line
    }

    /// The wrapper's work once the options are parsed and the compiler
    /// chosen: `--help`, `--version`, `--showme`, or the compiler run.
    pub fn run(&self, options: &Options) -> ExitCode {
        if let Some(first) = options.errors.first() {
            return self.usage_error(first);
        }
        if options.help {
            print!("{}", self.usage);
            return ExitCode::SUCCESS;
        }
        if options.showme.is_none() && !options.version && !options.has_input() {
            return self.usage_error("no input files");
        }
        let paths = match self.paths(options) {
            Ok(paths) => paths,
            Err(message) => {
                // --version and --showme:version still answer.
                if options.version || options.showme == Some(Showme::Version) {
                    return self.version(options, None);
                }
                eprintln!("{}: {message}", self.name);
                return ExitCode::from(2);
            }
        };
        if options.version {
            return self.version(options, Some(&paths));
        }
        if let Some(showme) = options.showme {
            println!("{}", self.show(showme, options, &paths));
            return ExitCode::SUCCESS;
        }
        let line = command_line(&self.compiler, &paths, self.extra_flags, options);
        match self.command(&line).status() {
            Ok(status) => exit_code(status),
            Err(error) => {
                eprintln!("{}: cannot run {}: {error}", self.name, self.compiler[0]);
                ExitCode::from(127)
            }
        }
    }

    /// `--version`: the compiler's first (for tools that read it from the
    /// first lines), then the wrapper's; `--showme:version`: the wrapper's.
    fn version(&self, options: &Options, paths: Option<&Paths>) -> ExitCode {
        if options.version {
            let mut line: Vec<OsString> = self.compiler.iter().map(OsString::from).collect();
            line.push("--version".into());
            // A compiler that cannot be run still leaves the wrapper's line.
            let _ = self.command(&line).status();
        }
        println!("{}", self.version_line(paths));
        ExitCode::SUCCESS
    }

    /// The command running `line` with the wrapper's environment.
    fn command(&self, line: &[OsString]) -> Command {
        let mut command = Command::new(&line[0]);
        command.args(&line[1..]);
        for (name, value) in &self.env {
            command.env(name, value);
        }
        command
    }

    /// What `--showme[:what]` prints.
    fn show(&self, showme: Showme, options: &Options, paths: &Paths) -> String {
        let link = || link_flags(options.library_linking(), paths, options.check_syncs);
        match showme {
            Showme::All => shell_line(&command_line(
                &self.compiler,
                paths,
                self.extra_flags,
                options,
            )),
            Showme::Command => {
                shell_line(&self.compiler.iter().map(OsString::from).collect::<Vec<_>>())
            }
            Showme::Compile => shell_line(&compile_flags(paths, self.extra_flags)),
            Showme::Link => shell_line(&link()),
            Showme::Incdirs => shell_quote(paths.incdir.as_os_str()),
            Showme::Libdirs => shell_quote(paths.libdir.as_os_str()),
            Showme::Libs => {
                let flags = link();
                let libs: Vec<&str> = flags
                    .iter()
                    .filter_map(|f| f.to_str()?.strip_prefix("-l"))
                    .collect();
                libs.join(" ")
            }
            Showme::Version => self.version_line(Some(paths)),
        }
    }

    /// Finds the headers and the library (and Open MPI's libraries for a
    /// static link of a libbsp with the mpi engine).
    ///
    /// # Errors
    ///
    /// A header or the library to link is missing, or Open MPI's flags
    /// cannot be found.
    fn paths(&self, options: &Options) -> Result<Paths, String> {
        let exe_dir = exe_dir().map_err(|e| format!("cannot locate the executable: {e}"))?;
        let incdir = include_dir(&exe_dir, self.header)?;
        // --showme:link shows the link flags even for `-c`.
        let linking = if options.showme.is_some() {
            options.library_linking()
        } else {
            options.linking()
        };
        let library = linking.library().unwrap_or("libbsp.so");
        let libdir = lib_dir(&exe_dir, library, std::env::var_os("BSPLIB_LIBDIR"));
        if linking != Linking::None && !libdir.join(library).is_file() {
            return Err(format!(
                "{library} not found in {} (looked in $BSPLIB_LIBDIR, {}, then {} and its deps/): \
                 install bsplib (make install) or build it (make, or cargo build --release)",
                libdir.display(),
                sibling(&exe_dir, "lib").display(),
                exe_dir.display()
            ));
        }
        let mut mpi_libs = Vec::new();
        if linking == Linking::Static && needs_mpi(&libdir.join("libbsp.a")) {
            mpi_libs = mpi_link_flags(std::env::var("BSPCC_MPI_LIBS").ok())?;
        }
        Ok(Paths {
            check_object: check_syncs_object(&libdir),
            incdir,
            libdir,
            mpi_libs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(args: &str) -> Options {
        Options::parse(args.split_whitespace().map(OsString::from))
    }

    fn paths() -> Paths {
        Paths {
            incdir: "/inc".into(),
            libdir: "/lib dir".into(),
            check_object: "/lib dir/bsplib/check_syncs.o".into(),
            mpi_libs: vec![],
        }
    }

    #[test]
    fn showme_forms() {
        assert_eq!(options("--showme").showme, Some(Showme::All));
        assert_eq!(options("--bsp-show a.c").showme, Some(Showme::All));
        assert_eq!(options("--showme:compile").showme, Some(Showme::Compile));
        assert_eq!(options("--showme:link").showme, Some(Showme::Link));
        let bad = options("--showme:nonsense");
        assert!(bad.showme.is_none() && bad.errors[0].contains("--showme:nonsense"));
    }

    #[test]
    fn oxford_options_never_reach_the_compiler() {
        let o = options("-fcheck-syncs -flibrary-level=1 -O2 a.c -flibrary-level 2");
        assert!(o.check_syncs && o.errors.is_empty());
        assert_eq!(o.library_level, Some(2));
        assert_eq!(o.compiler_args, ["-O2", "a.c"]);
        for bad in ["-flibrary-level=x", "-flibrary-level=3", "-flibrary-level"] {
            let o = options(bad);
            assert!(o.errors[0].contains("-flibrary-level"), "{bad}");
            assert!(o.compiler_args.is_empty(), "{bad}");
        }
        let line = shell_line(&command_line(
            &["cc".into()],
            &paths(),
            &[],
            &options("-fcheck-syncs a.c -o a"),
        ));
        assert!(
            line.starts_with("cc -I/inc a.c -o a '/lib dir/bsplib/check_syncs.o' '-L/lib dir'"),
            "{line}"
        );
        let compile = options("-fcheck-syncs -c a.c");
        let line = shell_line(&command_line(&["cc".into()], &paths(), &[], &compile));
        assert_eq!(line, "cc -I/inc -c a.c");
    }

    #[test]
    fn installed_layout_comes_first() {
        let root = std::env::temp_dir().join(format!(
            "bsplib-wrapper-layout-{}-{}",
            env!("CARGO_BIN_NAME"),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        let (bin, lib) = (root.join("bin"), root.join("lib"));
        std::fs::create_dir_all(bin.join("deps")).unwrap();
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(bin.join("libbsp.so"), "").unwrap();
        assert_eq!(lib_dir(&bin, "libbsp.so", None), bin);
        std::fs::write(lib.join("libbsp.so"), "").unwrap();
        assert_eq!(lib_dir(&bin, "libbsp.so", None), lib);
        assert_eq!(
            lib_dir(&bin, "libbsp.so", Some("/over".into())),
            Path::new("/over")
        );
        // Headers: the installed ones, else the source tree's.
        assert_eq!(
            include_dir(&bin, "bsp.h").unwrap(),
            Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
        );
        std::fs::create_dir_all(root.join("include")).unwrap();
        std::fs::write(root.join("include/bsp.h"), "").unwrap();
        assert_eq!(include_dir(&bin, "bsp.h").unwrap(), root.join("include"));
        let missing = include_dir(&bin, "nothing.h").unwrap_err();
        assert!(missing.contains("nothing.h not found"), "{missing}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
