//! What the compiler wrappers (`bspcc`, `bspf90` and `bspf77`) share:
//! where the library and the headers are, and how a command line is shown.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// `prefix` immediately followed by `path`, as one argument.
pub fn prefixed(prefix: &str, path: &Path) -> OsString {
    let mut arg = OsString::from(prefix);
    arg.push(path);
    arg
}

/// The directory of the running executable, where Cargo puts the libraries.
pub fn exe_dir() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?.canonicalize()?;
    Ok(exe
        .parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf))
}

/// The directory of the library to link: `$BSPLIB_LIBDIR` if set; else
/// `exe_dir` or its `deps/`, whichever holds the newer `library` (Cargo's
/// test builds leave the library in `deps/` without copying it up, so a
/// copy beside the wrapper may be stale).
pub fn lib_dir(exe_dir: &Path, library: &str, over: Option<OsString>) -> PathBuf {
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

/// The directory holding `header` (`bsp.h`, `fbsp.h`): next to the
/// libraries in `dir` if installed there, else the source tree's.
pub fn include_dir(dir: &Path, header: &str) -> PathBuf {
    let installed = dir.join("include");
    if installed.join(header).is_file() {
        installed
    } else {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
    }
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
