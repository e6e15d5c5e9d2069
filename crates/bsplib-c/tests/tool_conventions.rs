//! The conventions of `bsprun`, `bspprof` and `bspprobe` (issue 27):
//! `--help` (stdout, exit 0), `--version` (`bsprun`'s with the engines of
//! the build), a short usage on a usage error (stderr, exit 2), silence
//! on a closed pipe (ended by `SIGPIPE`, nothing on stderr), the progress
//! line erased before the program's output and at the end (on a
//! pseudo-terminal, as a user sees it, and forced into a pipe), the
//! warning when the machine is too busy for a measurement
//! (`BSPLIB_LOADAVG` stands for the load average), and the `-np` /
//! `BSPLIB_NPROCS` recipe for programs that compare `bsp_nprocs()` before
//! `bsp_begin` with the P they were asked for (BSPedupack). The runs are
//! on every engine of `BSPLIB_TEST_ENGINES` (threads and processes by
//! default; CI's MPI step runs this file with `mpi`).

mod harness;

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use harness::{engines, lib_copy, out_dir, run_command, BSPCC, BSPRUN};

const BSPPROF: &str = env!("CARGO_BIN_EXE_bspprof");
const BSPPROBE: &str = env!("CARGO_BIN_EXE_bspprobe");
const TOOLS: [(&str, &str); 3] = [
    ("bsprun", BSPRUN),
    ("bspprof", BSPPROF),
    ("bspprobe", BSPPROBE),
];
const TIMEOUT: Duration = Duration::from_secs(120);

/// About 1.2 s of supersteps (40 of 30 ms), a line of process 0 after the
/// 30th superstep and one at the end: the progress view (quiet for the
/// first 0.5 s) has drawn before either.
const PROGRESS: &str = r#"#include <stdio.h>
#include "bsp.h"
int main(void) {
    bsp_begin(bsp_nprocs());
    for (int i = 0; i < 40; i++) {
        double t0 = bsp_time();
        while (bsp_time() - t0 < 0.03) {}
        bsp_sync();
        if (bsp_pid() == 0 && i == 30) { printf("middle line\n"); fflush(stdout); }
    }
    if (bsp_pid() == 0) printf("last line\n");
    bsp_end();
    return 0;
}
"#;

/// BSPedupack's start (bspinprod.c, bspbench.c ...): P read from the
/// input, compared with `bsp_nprocs()` before `bsp_begin`.
const ASKS_FOR_P: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include "bsp.h"
static long P;
static void spmd(void) {
    bsp_begin(P);
    if (bsp_pid() == 0) printf("ran on %d processes\n", bsp_nprocs());
    bsp_end();
}
int main(int argc, char **argv) {
    bsp_init(spmd, argc, argv);
    printf("How many processors do you want to use?\n");
    fflush(stdout);
    if (scanf("%ld", &P) != 1) return 3;
    if (P > bsp_nprocs()) {
        printf("Sorry, only %u processors available.\n", bsp_nprocs());
        fflush(stdout);
        exit(EXIT_FAILURE);
    }
    spmd();
    exit(EXIT_SUCCESS);
}
"#;

/// A few supersteps (for a profile).
/// Says it runs, then waits (up to 5 s) until its terminal is 123
/// columns wide, then says how wide it is.
const WIDTH: &str = r#"#define _DEFAULT_SOURCE
#include <stdio.h>
#include <sys/ioctl.h>
#include "bsp.h"
int main(void) {
    bsp_begin(1);
    printf("running\n");
    fflush(stdout);
    struct winsize w = {0};
    double t0 = bsp_time();
    while (bsp_time() - t0 < 5.0)
        if (ioctl(2, TIOCGWINSZ, &w) == 0 && w.ws_col == 123) break;
    printf("columns %d\n", (int)w.ws_col);
    bsp_end();
    return 0;
}
"#;

const SHORT: &str = r#"#include "bsp.h"
int main(void) {
    bsp_begin(bsp_nprocs());
    for (int i = 0; i < 3; i++) bsp_sync();
    bsp_end();
    return 0;
}
"#;

/// `source` built by `bspcc` as `<tmp>/tool_conventions/<name>`.
fn build(name: &str, source: &str) -> PathBuf {
    let dir = out_dir("tool_conventions");
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).expect("writing the C source");
    let exe = dir.join(name);
    let out = Command::new(BSPCC)
        .env(
            "BSPLIB_LIBDIR",
            lib_copy("tool_conventions", &["libbsp.so"]),
        )
        .env_remove("CC")
        .env_remove("BSPCC_CC")
        .args(["-std=c99", "-Wall", "-Werror"])
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("running bspcc");
    assert!(out.status.success(), "bspcc {name}.c: {out:?}");
    exe
}

/// `cmd` (stdin `stdin`, or /dev/null) run to its end under the
/// harness's time limit: status, stdout, stderr.
fn run(cmd: &mut Command, stdin: Option<&str>) -> (ExitStatus, String, String) {
    let what = format!("{cmd:?}");
    let out = run_command(cmd.env_remove("LD_LIBRARY_PATH"), stdin, TIMEOUT, |_, _| {
        None
    });
    match (out.status, out.problem()) {
        (Some(status), None) => (status, out.stdout, out.stderr),
        (_, problem) => panic!("{what}: {problem:?}"),
    }
}

/// `bsprun --engine <engine> <args>`, in the environment
/// `harness::bsprun` gives a run (on mpi, a session directory of its own).
fn bsprun(engine: &str, args: &[&str]) -> Command {
    let template = harness::bsprun(Path::new("-"), engine, 1, &[], &[]);
    let mut cmd = Command::new(BSPRUN);
    for (k, v) in template.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.args(["--engine", engine]).args(args);
    cmd
}

#[test]
fn help_is_on_stdout_with_exit_0() {
    for (name, exe) in TOOLS {
        for flag in ["--help", "-h"] {
            let (status, out, err) = run(Command::new(exe).arg(flag), None);
            assert_eq!(status.code(), Some(0), "{name} {flag}: {err}");
            assert!(
                out.starts_with(&format!("Usage: {name} ")) && out.contains("--version"),
                "{name} {flag}: {out}"
            );
            assert!(
                out.contains("Exit status"),
                "{name} {flag} names its exit codes: {out}"
            );
            assert_eq!(err, "", "{name} {flag}");
        }
    }
    let (_, out, _) = run(Command::new(BSPRUN).arg("--help"), None);
    for needed in [
        "BSPLIB_NPROCS=4 ./runtests",
        "bsp_nprocs()",
        "BSPLIB_LOADAVG",
    ] {
        assert!(out.contains(needed), "bsprun --help names {needed}: {out}");
    }
}

#[test]
fn version_names_the_tool_and_bsprun_the_engines() {
    let version = env!("CARGO_PKG_VERSION");
    for (name, exe) in TOOLS {
        let (status, out, err) = run(Command::new(exe).arg("--version"), None);
        assert_eq!(status.code(), Some(0), "{name}: {err}");
        assert_eq!(
            out.lines().next(),
            Some(format!("{name} (bsplib) {version}").as_str()),
            "{name}"
        );
        assert_eq!(err, "", "{name}");
    }
    let (_, out, _) = run(Command::new(BSPRUN).arg("--version"), None);
    let engines = out.lines().nth(1).unwrap_or_default();
    if cfg!(feature = "mpi") {
        // The MPI library named: "mpi (Open MPI v4.1.2)".
        assert!(
            engines.starts_with("engines: threads, processes, mpi (") && engines.ends_with(')'),
            "{out}"
        );
    } else {
        assert_eq!(engines, "engines: threads, processes", "{out}");
    }
}

#[test]
fn a_usage_error_is_three_lines_on_stderr_with_exit_2() {
    let cases: [(&str, &[&str]); 8] = [
        ("bsprun", &[]),
        ("bsprun", &["--bogus", "prog"]),
        ("bsprun", &["-np", "0", "prog"]),
        ("bsprun", &["--engine", "gpu", "prog"]),
        ("bspprof", &[]),
        ("bspprof", &["--bogus", "dir"]),
        ("bspprobe", &["--bogus"]),
        ("bspprobe", &["-p", "x"]),
    ];
    for (name, args) in cases {
        let exe = TOOLS.iter().find(|(n, _)| *n == name).expect("a tool").1;
        let (status, out, err) = run(Command::new(exe).args(args), None);
        assert_eq!(status.code(), Some(2), "{name} {args:?}: {err}");
        assert_eq!(out, "", "{name} {args:?}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 3, "{name} {args:?}: {err}");
        assert!(lines[0].starts_with(&format!("{name}: ")), "{err}");
        assert!(lines[1].starts_with(&format!("Usage: {name} ")), "{err}");
        assert_eq!(
            lines[2],
            format!("Try '{name} --help' for more information.")
        );
    }
}

/// A pipe whose reading end is closed: writing to it fails at once.
fn closed_pipe() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the live array.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both were just made; the reading end is closed at once.
    unsafe {
        drop(OwnedFd::from_raw_fd(fds[0]));
        OwnedFd::from_raw_fd(fds[1])
    }
}

/// `cmd` with its standard output a closed pipe: the status and stderr.
fn into_closed_pipe(cmd: &mut Command) -> (ExitStatus, String) {
    let out = cmd
        .env_remove("LD_LIBRARY_PATH")
        .stdin(Stdio::null())
        .stdout(Stdio::from(closed_pipe()))
        .stderr(Stdio::piped())
        .output()
        .expect("running the tool");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_pipe_ends_the_tools_by_sigpipe_silently() {
    let prof = out_dir("tool_conventions").join("pipe_profile");
    let _ = std::fs::remove_dir_all(&prof);
    let short = build("short_pipe", SHORT);
    let (status, _, err) = run(
        Command::new(BSPRUN)
            .args(["-np", "2", "--profile"])
            .arg(&prof)
            .arg(&short)
            .env("BSPLIB_LOADAVG", "0"),
        None,
    );
    assert!(status.success(), "{err}");
    let summary: [&std::ffi::OsStr; 2] = ["--summary".as_ref(), prof.as_os_str()];
    let cases: [(&str, &str, Vec<&std::ffi::OsStr>); 6] = [
        ("bsprun", BSPRUN, vec!["--help".as_ref()]),
        ("bsprun", BSPRUN, vec!["--version".as_ref()]),
        ("bspprof", BSPPROF, vec!["--help".as_ref()]),
        ("bspprof", BSPPROF, summary.to_vec()),
        ("bspprobe", BSPPROBE, vec!["--help".as_ref()]),
        ("bspprobe", BSPPROBE, vec!["--version".as_ref()]),
    ];
    for (name, exe, args) in cases {
        let (status, err) = into_closed_pipe(Command::new(exe).args(&args));
        assert_eq!(
            status.signal(),
            Some(libc::SIGPIPE),
            "{name} {args:?}: {status}, stderr {err}"
        );
        assert_eq!(err, "", "{name} {args:?}: nothing on stderr");
    }
}

/// The bytes `bsprun --progress -np 2` of [`PROGRESS`] writes, its
/// standard output and error both on a pseudo-terminal (`tty`: as a user
/// sees it) or on one pipe (`BSPLIB_PROGRESS=force`); `None` if the
/// system has no pseudo-terminal.
fn progress_bytes(engine: &str, tty: bool) -> Option<String> {
    let prog = build("progress", PROGRESS);
    let mut cmd = bsprun(engine, &["--progress", "-np", "2", prog.to_str().unwrap()]);
    cmd.env_remove("LD_LIBRARY_PATH").stdin(Stdio::null());
    let (reader, writer) = if tty {
        cmd.env_remove("BSPLIB_PROGRESS");
        pty()?
    } else {
        // Forced: drawn into a pipe, which is standard output too.
        cmd.env("BSPLIB_PROGRESS", "force");
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the live array.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both were just made, and are owned here only.
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
    };
    cmd.stdout(Stdio::from(writer.try_clone().unwrap()))
        .stderr(Stdio::from(writer));
    let mut child = cmd.spawn().expect("running bsprun");
    drop(cmd); // its copies of the writing end
    let reading = read_all(reader, |_| {});
    let status = child.wait().expect("waiting for bsprun");
    let bytes = reading.join().expect("the reader");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    assert!(status.success(), "{engine}: {status}: {text:?}");
    Some(text)
}

/// Reads `reader` on a thread of its own until its other side is closed
/// (a pseudo-terminal ends with EIO once nothing holds its other side),
/// showing `seen` all that came so far after each read; the thread
/// returns it all.
fn read_all(
    reader: OwnedFd,
    mut seen: impl FnMut(&[u8]) + Send + 'static,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut file = std::fs::File::from(reader);
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = file.read(&mut buf) {
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n]);
            seen(&bytes);
        }
        bytes
    })
}

/// A pseudo-terminal: (its master side, its slave side); `None` where
/// the system has none to give (a container without `/dev/pts`).
fn pty() -> Option<(OwnedFd, OwnedFd)> {
    // SAFETY: the calls of posix_openpt(3) on a new descriptor; ptsname_r
    // writes at most the buffer's length.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if m < 0 {
            return None;
        }
        let master = OwnedFd::from_raw_fd(m);
        let mut name = [0 as libc::c_char; 128];
        if libc::grantpt(m) != 0
            || libc::unlockpt(m) != 0
            || libc::ptsname_r(m, name.as_mut_ptr(), name.len()) != 0
        {
            return None;
        }
        let s = libc::open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        (s >= 0).then(|| (master, OwnedFd::from_raw_fd(s)))
    }
}

/// Checks that in `text` every line of the program starts a line (after
/// `\n`, or after the erase `\r\x1b[K` of a progress line), that a
/// progress line was drawn before the first, and that none is left at
/// the end.
fn check_erased(text: &str, what: &str) {
    let draw = "\rbsplib: superstep ";
    let first_draw = text.find(draw);
    let middle = text.find("middle line").expect("the program's middle line");
    assert!(
        first_draw.is_some_and(|d| d < middle),
        "{what}: a progress line drawn before the program's line: {text:?}"
    );
    for line in ["middle line", "last line"] {
        let at = text
            .find(line)
            .unwrap_or_else(|| panic!("{what}: no {line}: {text:?}"));
        let before = &text[..at];
        assert!(
            before.ends_with('\n') || before.ends_with("\r\x1b[K"),
            "{what}: '{line}' glued onto the progress line: {text:?}"
        );
    }
    // After the last line drawn, its erase.
    let last_draw = text.rfind(draw).expect("a progress line");
    let tail = &text[last_draw + 1..];
    let drawn_end = tail
        .find("\x1b[K")
        .expect("a drawn line ends erasing its tail")
        + 3;
    assert!(
        tail[drawn_end..].contains("\r\x1b[K"),
        "{what}: the progress line is left at the end: {tail:?}"
    );
}

#[test]
fn the_progress_line_is_erased_before_the_programs_output_and_at_the_end() {
    for engine in engines() {
        for tty in [true, false] {
            let Some(text) = progress_bytes(&engine, tty) else {
                eprintln!("skipping the terminal case: no pseudo-terminal on this system");
                continue;
            };
            let what = format!(
                "{engine}, {}",
                if tty {
                    "terminal"
                } else {
                    "forced into a pipe"
                }
            );
            check_erased(&text, &what);
        }
    }
}

/// Sets the size of the terminal whose master side is `master`.
fn set_columns(master: &OwnedFd, cols: u16) {
    let size = libc::winsize {
        ws_row: 24,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads the live struct it is given.
    unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) };
}

#[test]
fn under_bsprun_progress_the_program_sees_its_terminal_resized() {
    let prog = build("width", WIDTH);
    // On mpi the program writes into mpirun's pipes: no terminal to size.
    for engine in engines().into_iter().filter(|e| e != "mpi") {
        let Some((master, slave)) = pty() else {
            eprintln!("skipping: no pseudo-terminal on this system");
            return;
        };
        set_columns(&master, 80);
        let mut cmd = bsprun(&engine, &["--progress", prog.to_str().unwrap()]);
        cmd.env_remove("LD_LIBRARY_PATH")
            .env_remove("BSPLIB_PROGRESS")
            .stdin(Stdio::null())
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        let mut child = cmd.spawn().expect("running bsprun");
        drop(cmd); // its copies of the terminal
        let reader = master.try_clone().unwrap();
        let (running, started) = std::sync::mpsc::channel();
        let reading = read_all(reader, move |bytes| {
            if String::from_utf8_lossy(bytes).contains("running") {
                let _ = running.send(());
            }
        });
        // Once the program runs (its terminal sized as bsprun's at the
        // start: 80 columns), the terminal grows, and says so to bsprun,
        // until the program ends.
        let _ = started.recv_timeout(Duration::from_secs(30));
        let pid = i32::try_from(child.id()).unwrap();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            set_columns(&master, 123);
            // SAFETY: kill(2) on our own child.
            unsafe { libc::kill(pid, libc::SIGWINCH) };
            std::thread::sleep(Duration::from_millis(50));
        };
        drop(master);
        let text = String::from_utf8_lossy(&reading.join().unwrap()).into_owned();
        assert!(status.success(), "{engine}: {status}: {text:?}");
        assert!(
            text.contains("columns 123"),
            "{engine}: the program did not see the new width: {text:?}"
        );
    }
}

#[test]
fn bsprun_profile_warns_when_the_machine_is_busy_and_bspprof_from_the_profile() {
    let short = build("short", SHORT);
    for engine in engines() {
        let dir = out_dir("tool_conventions").join(format!("profile-{engine}"));
        for (load, busy) in [("99", true), ("0", false)] {
            let _ = std::fs::remove_dir_all(&dir);
            let (status, _, err) = run(
                bsprun(
                    &engine,
                    &[
                        "-np",
                        "1",
                        "--profile",
                        dir.to_str().unwrap(),
                        short.to_str().unwrap(),
                    ],
                )
                .env("BSPLIB_LOADAVG", load),
                None,
            );
            assert!(status.success(), "{engine}: {err}");
            let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
            if busy {
                assert_eq!(warnings.len(), 1, "{engine}, load {load}: one line: {err}");
                assert!(
                    warnings[0].starts_with("bsprun: warning: the load average is 99.00 and ")
                        && warnings[0].ends_with("include waiting for other programs"),
                    "{engine}: {err}"
                );
            } else {
                assert!(warnings.is_empty(), "{engine}, load {load}: {err}");
            }
            // bspprof reads the load from the profile, whatever the load now.
            let (status, _, err) = run(
                Command::new(BSPPROF)
                    .arg("--summary")
                    .arg(&dir)
                    .env("BSPLIB_LOADAVG", "0"),
                None,
            );
            assert!(status.success(), "{engine}: {err}");
            assert_eq!(
                err.contains("bspprof: warning: the machine was busy as the run started"),
                busy,
                "{engine}, load {load}: {err}"
            );
            let (status, _, err) = run(Command::new(BSPPROF).arg(&dir), None);
            assert!(status.success(), "{engine}: {err}");
            let report = std::fs::read_to_string(dir.join("report.html")).expect("the report");
            assert_eq!(
                report.contains("<p id=\"busy\">"),
                busy,
                "{engine}, load {load}"
            );
        }
        // More processes than cores: said whatever the load.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let _ = std::fs::remove_dir_all(&dir);
        let np = (cores + 1).to_string();
        let (status, _, err) = run(
            bsprun(
                &engine,
                &[
                    "-np",
                    &np,
                    "--profile",
                    dir.to_str().unwrap(),
                    short.to_str().unwrap(),
                ],
            )
            .env("BSPLIB_LOADAVG", "0"),
            None,
        );
        assert!(status.success(), "{engine}: {err}");
        assert!(
            err.contains(&format!("bsprun: warning: {np} processes on {cores} cores")),
            "{engine}: {err}"
        );
    }
}

#[test]
fn bspprobe_warns_before_measuring_on_a_busy_machine() {
    for (load, busy) in [("99", true), ("0", false)] {
        let (status, out, err) = run(
            Command::new(BSPPROBE)
                .args([
                    "--engine",
                    "serial",
                    "-p",
                    "1",
                    "--quick",
                    "--reps",
                    "3",
                    "--no-store",
                ])
                .env("BSPLIB_LOADAVG", load),
            None,
        );
        assert!(status.success(), "load {load}: {err}");
        assert!(out.contains("serial"), "a row was measured: {out}");
        let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), usize::from(busy), "load {load}: {err}");
        if busy {
            assert!(
                warnings[0].starts_with("bspprobe: warning: the load average is 99.00 and "),
                "{err}"
            );
        }
    }
}

#[test]
fn np_or_bsplib_nprocs_is_what_bsp_nprocs_reports_before_bsp_begin() {
    let prog = build("asks_for_p", ASKS_FOR_P);
    let path = prog.to_str().unwrap();
    for engine in engines() {
        // bsprun -np 4 ./prog, and BSPLIB_NPROCS=4 with bsprun alone (a
        // script such as BSPedupack's runtests).
        let mut with_np = bsprun(&engine, &["-np", "4", path]);
        let mut with_env = bsprun(&engine, &[path]);
        with_env.env("BSPLIB_NPROCS", "4");
        for (how, cmd) in [("-np 4", &mut with_np), ("BSPLIB_NPROCS=4", &mut with_env)] {
            let (status, out, err) = run(cmd, Some("4\n"));
            assert!(status.success(), "{engine}, {how}: {status}: {out}{err}");
            assert_eq!(
                out, "How many processors do you want to use?\nran on 4 processes\n",
                "{engine}, {how}: {err}"
            );
        }
        // Asking for more than -np gives: the program's own refusal.
        let (status, out, _) = run(&mut bsprun(&engine, &["-np", "2", path]), Some("4\n"));
        assert_eq!(status.code(), Some(1), "{engine}: {out}");
        assert!(
            out.ends_with("Sorry, only 2 processors available.\n"),
            "{engine}: {out}"
        );
    }
}
