//! `bsprun --progress` on a terminal (issue 27): the progress line and
//! the program's own output through one writer, so that the line is
//! erased before the program's output appears and at the end.
//!
//! The library draws the progress view (`crates/bsplib/src/progress.rs`)
//! on its standard error as it found it: `\rbsplib: superstep ...\x1b[K`
//! four times a second, `\r\x1b[K` at the end. The program's own output
//! went to the same terminal directly, and a line it printed was glued
//! onto the progress line. Here the program's standard error (and its
//! standard output, when that is the same terminal or file) is a
//! pseudo-terminal whose other side `bsprun` reads: the program still
//! sees a terminal (its C output stays line-buffered, its own `isatty`
//! checks hold), and [`Screen`] writes what it reads to `bsprun`'s
//! standard error, erasing a progress line on the screen before any of
//! the program's output, drawing a new one only at the start of a line
//! (never over a prompt the program left unfinished), and erasing it at
//! the end.
//!
//! When the terminal changes size (`SIGWINCH`), the pseudo-terminal takes
//! the new size ([`resized`]): the program's processes read their
//! terminal's size as the real one's.
//!
//! The screen is shared ([`share`], [`through`]): `bsprun`'s own message
//! on Ctrl-C goes through it too ([`say`]). On `mpi` the program's output
//! already passes through `bsprun` (`output.rs`, from `mpirun`'s pipes):
//! there that relay's writes go through the shared screen, standard
//! output and error as two streams of it.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Erase the line the cursor is on: carriage return, erase to its end.
const ERASE: &[u8] = b"\r\x1b[K";
/// How the library starts a progress line.
const DRAW: &[u8] = b"\rbsplib: superstep ";
/// A progress line longer than this is not one.
const LONGEST: usize = 512;
/// Bytes that may start a progress line are held back at most this long
/// for the rest of it: the library writes a line in three `write`s (`\r`,
/// the text, `\x1b[K`), which a loaded machine may spread out; on `mpi`
/// the text, which ends without a newline, comes as a prompt of rank 0
/// (`tags::PROMPT`, 250 ms) after the `\r` that ended the piece before.
/// A `\r` held back is in any case shown with what follows it.
const HOLD: Duration = Duration::from_secs(2);

/// What to write for what the program wrote: its bytes, with the progress
/// lines drawn and erased around them. The program's bytes come in one
/// stream or two (standard output and error to one terminal), each read
/// on its own, the screen shared.
#[derive(Debug)]
pub struct Screen {
    /// A progress line is on the screen (the cursor at its end).
    shown: bool,
    /// The program's last byte ended a line (or it wrote nothing yet).
    line_start: bool,
    /// Per stream, bytes that may be the start of a progress line.
    held: [Vec<u8>; 2],
}

impl Default for Screen {
    fn default() -> Self {
        Screen {
            shown: false,
            line_start: true,
            held: [Vec::new(), Vec::new()],
        }
    }
}

/// What the bytes at the start of `data` (which starts with `\r`) are.
enum Piece {
    /// The library's erase: `\r\x1b[K`, its length.
    Erase(usize),
    /// A progress line: its text (between `\r` and `\x1b[K`) and length.
    Draw(usize, usize),
    /// Too short to tell.
    Unknown,
    /// The program's.
    Program,
}

fn classify(data: &[u8]) -> Piece {
    let n = data.len().min(DRAW.len());
    if data.starts_with(ERASE) {
        return Piece::Erase(ERASE.len());
    }
    if data[..n] != DRAW[..n] && !(ERASE.starts_with(data) && data.len() < ERASE.len()) {
        return Piece::Program;
    }
    if n < DRAW.len() {
        return Piece::Unknown;
    }
    for (i, &b) in data.iter().enumerate().take(LONGEST) {
        if b == b'\n' || (b == b'\r' && i > 0) {
            return Piece::Program;
        }
        if data[i..].starts_with(b"\x1b[K") {
            return Piece::Draw(i, i + 3);
        }
    }
    if data.len() >= LONGEST {
        Piece::Program
    } else {
        Piece::Unknown
    }
}

impl Screen {
    /// The program wrote `bytes` on `stream` (0 or 1): appends to `out`
    /// what goes to the screen now, on that stream (some bytes may be held
    /// back: [`Screen::flush`]).
    pub fn feed(&mut self, stream: usize, bytes: &[u8], out: &mut Vec<u8>) {
        let mut data = std::mem::take(&mut self.held[stream]);
        data.extend_from_slice(bytes);
        let mut rest = &data[..];
        while !rest.is_empty() {
            let cr = rest.iter().position(|&b| b == b'\r').unwrap_or(rest.len());
            self.program(&rest[..cr], out);
            rest = &rest[cr..];
            if rest.is_empty() {
                break;
            }
            match classify(rest) {
                Piece::Erase(len) => {
                    if self.shown {
                        out.extend_from_slice(ERASE);
                        self.shown = false;
                    } else if !self.line_start {
                        // The program's own erase of its line.
                        self.program(ERASE, out);
                    }
                    // (Else an empty line: nothing to erase.)
                    rest = &rest[len..];
                }
                Piece::Draw(end, len) => {
                    self.draw(&rest[1..end], out);
                    rest = &rest[len..];
                }
                Piece::Unknown => {
                    self.held[stream] = rest.to_vec();
                    return;
                }
                Piece::Program => {
                    self.program(&rest[..1], out);
                    rest = &rest[1..];
                }
            }
        }
    }

    /// Nothing came on `stream` for a while: bytes held back are the
    /// program's.
    pub fn flush(&mut self, stream: usize, out: &mut Vec<u8>) {
        let held = std::mem::take(&mut self.held[stream]);
        self.program(&held, out);
    }

    /// Whether bytes of `stream` are held back.
    pub fn holding(&self, stream: usize) -> bool {
        !self.held[stream].is_empty()
    }

    /// The end of the program's output (of the last stream, `stream`,
    /// the others flushed): the progress line is erased.
    pub fn end(&mut self, stream: usize, out: &mut Vec<u8>) {
        self.flush(stream, out);
        if self.shown {
            out.extend_from_slice(ERASE);
            self.shown = false;
        }
    }

    fn program(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        let Some(&last) = bytes.last() else { return };
        if self.shown {
            out.extend_from_slice(ERASE);
            self.shown = false;
        }
        out.extend_from_slice(bytes);
        self.line_start = last == b'\n' || bytes.ends_with(ERASE);
    }

    fn draw(&mut self, text: &[u8], out: &mut Vec<u8>) {
        // Over an unfinished line of the program (a prompt), nothing.
        if self.line_start {
            out.push(b'\r');
            out.extend_from_slice(text);
            out.extend_from_slice(b"\x1b[K");
            self.shown = true;
        }
    }
}

/// The master side of the program's pseudo-terminal while there is one
/// (else -1), for [`resized`].
static MASTER: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// `SIGWINCH`: the terminal `bsprun` writes to changed size; the
/// program's pseudo-terminal takes the new size.
extern "C" fn resized(_: libc::c_int) {
    let m = MASTER.load(std::sync::atomic::Ordering::Relaxed);
    if m < 0 {
        return;
    }
    // SAFETY: ioctl(2) is async-signal-safe; `size` is a live local, and
    // errno is put back as the interrupted code left it.
    unsafe {
        let errno = *libc::__errno_location();
        let mut size: libc::winsize = std::mem::zeroed();
        if libc::ioctl(2, libc::TIOCGWINSZ, &mut size) == 0 {
            libc::ioctl(m, libc::TIOCSWINSZ, &size);
        }
        *libc::__errno_location() = errno;
    }
}

/// The program's output through a pseudo-terminal read by a thread of
/// `bsprun` ([`Relay::start`]), until [`Relay::finish`].
pub struct Relay {
    /// The other side, given to the program; dropped once it runs.
    slave: Option<OwnedFd>,
    master: OwnedFd,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// `fd`'s device and inode, to tell whether two descriptors write to one
/// place.
fn identity(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: fstat writes the live struct it is given.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut st) == 0).then_some((st.st_dev, st.st_ino))
    }
}

impl Relay {
    /// A pseudo-terminal for the program's standard error, and its
    /// standard output too when that is where standard error goes (a
    /// standard output elsewhere, a file, keeps it: no progress line is
    /// drawn there). `None` if no pseudo-terminal can be had (the program
    /// then writes directly, as before).
    pub fn new(command: &mut Command) -> Option<Relay> {
        // SAFETY: posix_openpt, grantpt, unlockpt and ptsname_r on the new
        // descriptor; ptsname_r writes at most the buffer's length.
        let (master, slave) = unsafe {
            let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
            if m < 0 {
                return None;
            }
            let master = OwnedFd::from_raw_fd(m);
            if libc::grantpt(m) != 0 || libc::unlockpt(m) != 0 {
                return None;
            }
            let mut name = [0 as libc::c_char; 128];
            if libc::ptsname_r(m, name.as_mut_ptr(), name.len()) != 0 {
                return None;
            }
            let s = libc::open(
                name.as_ptr(),
                libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
            );
            if s < 0 {
                return None;
            }
            let slave = OwnedFd::from_raw_fd(s);
            // Bytes pass unchanged (no `\n` to `\r\n`); the size is the
            // real terminal's, if there is one.
            let mut tio: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(s, &mut tio) == 0 {
                tio.c_oflag &= !libc::OPOST;
                libc::tcsetattr(s, libc::TCSANOW, &tio);
            }
            let mut size: libc::winsize = std::mem::zeroed();
            if libc::ioctl(2, libc::TIOCGWINSZ, &mut size) == 0 {
                libc::ioctl(m, libc::TIOCSWINSZ, &size);
            }
            (master, slave)
        };
        let err = slave.try_clone().ok()?;
        if identity(1).is_some() && identity(1) == identity(2) {
            command.stdout(Stdio::from(slave.try_clone().ok()?));
        }
        command.stderr(Stdio::from(err));
        // Every new size from now on (`SA_RESTART`: no call of `bsprun`
        // sees `EINTR` for it), until the relay is dropped.
        MASTER.store(master.as_raw_fd(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: installs a handler that makes only async-signal-safe
        // calls (`resized`); `action` is a live, zeroed then filled struct.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = resized as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGWINCH, &action, std::ptr::null_mut());
        }
        Some(Relay {
            slave: Some(slave),
            master,
            thread: None,
        })
    }

    /// The program was spawned (the command that held the other side
    /// dropped): reads its output on a thread of its own.
    pub fn start(&mut self) {
        self.slave = None;
        let Ok(master) = self.master.try_clone() else {
            return;
        };
        share();
        self.thread = std::thread::Builder::new()
            .name("bsprun-screen".into())
            .spawn(move || relay(&master))
            .ok();
    }

    /// The program ended: waits for the rest of its output (at most 2 s:
    /// a process it left behind may hold the terminal) and the last
    /// erase.
    pub fn finish(mut self) {
        let end = Instant::now() + Duration::from_secs(2);
        if let Some(thread) = self.thread.take() {
            while !thread.is_finished() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(5));
            }
            if thread.is_finished() {
                let _ = thread.join();
            } else {
                // Left running (a process of the program holds the
                // terminal): the rest passes unchanged, the line erased.
                let [_, err] = end_shared();
                write_all(2, &err);
            }
        }
    }
}

impl Drop for Relay {
    /// The master side closes: no resize goes to it any more.
    fn drop(&mut self) {
        MASTER.store(-1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Writes all of `bytes` to `fd`; gives up on an error (a closed pipe:
/// the output is dropped, the program runs on).
fn write_all(fd: RawFd, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: writes from a live buffer.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
        } else if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {
            continue;
        } else {
            return false;
        }
    }
    true
}

/// The reading thread: until the pseudo-terminal's other side is closed
/// by every process (`EIO`). Its bytes are standard error's, on the
/// shared screen ([`through`]), where `bsprun`'s own messages go too
/// ([`say`]).
fn relay(master: &OwnedFd) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let mut poll = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let wait = if holding() { 50 } else { -1 };
        // SAFETY: polls one live record.
        let ready = unsafe { libc::poll(&mut poll, 1, wait) };
        if ready > 0 {
            // SAFETY: reads into a live buffer of its length.
            let n = unsafe { libc::read(master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 {
                write_all(2, &through(2, &buf[..n as usize]));
            } else if n == 0
                || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                break; // EIO: the program and its processes are gone
            }
        } else if ready < 0
            && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            break;
        }
        let [_, err] = tick();
        write_all(2, &err);
    }
    let [_, err] = end_shared();
    write_all(2, &err);
}

/// A message of `bsprun` itself on standard error (the report of a
/// Ctrl-C), after the erase of a progress line on the screen.
pub fn say(text: &str) {
    write_all(2, &through(2, text.as_bytes()));
}

/// The screen the relays write through, once [`share`]d; and
/// whether standard output goes to it too, and since when each stream
/// holds bytes back.
struct Shared {
    screen: Screen,
    stdout_too: bool,
    held_since: [Option<Instant>; 2],
}

static SHARED: std::sync::Mutex<Option<Shared>> = std::sync::Mutex::new(None);

fn shared() -> std::sync::MutexGuard<'static, Option<Shared>> {
    SHARED.lock().unwrap_or_else(|p| p.into_inner())
}

/// From now on [`through`] draws through one screen (a relay with the
/// progress view on): standard error, and standard output when it goes to
/// the same place.
pub fn share() {
    let stdout_too = identity(1).is_some() && identity(1) == identity(2);
    *shared() = Some(Shared {
        screen: Screen::default(),
        stdout_too,
        held_since: [None, None],
    });
}

/// What to write to `fd` (1 or 2) for `bytes`: through the shared
/// screen if there is one and `fd` goes to it, else `bytes` as they are.
pub fn through(fd: RawFd, bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let mut guard = shared();
    let Some(s) = guard.as_mut().filter(|s| fd == 2 || s.stdout_too) else {
        return bytes.into();
    };
    let stream = usize::from(fd == 2);
    let mut out = Vec::with_capacity(bytes.len() + 8);
    s.screen.feed(stream, bytes, &mut out);
    if s.screen.holding(stream) {
        s.held_since[stream].get_or_insert_with(Instant::now);
    } else {
        s.held_since[stream] = None;
    }
    out.into()
}

/// Whether the shared screen holds bytes back.
fn holding() -> bool {
    shared()
        .as_ref()
        .is_some_and(|s| s.screen.holding(0) || s.screen.holding(1))
}

/// Bytes held back long enough are the program's: what to write to
/// standard output and error now (call it every few tens of
/// milliseconds).
pub fn tick() -> [Vec<u8>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    let mut guard = shared();
    let Some(s) = guard.as_mut() else { return out };
    for (stream, out) in out.iter_mut().enumerate() {
        if s.held_since[stream].is_some_and(|t| t.elapsed() >= HOLD) {
            s.screen.flush(stream, out);
            s.held_since[stream] = None;
        }
    }
    out
}

/// The end of the output: what to write to standard output and error
/// (everything held back, and the erase of the progress line).
pub fn end_shared() -> [Vec<u8>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    if let Some(mut s) = shared().take() {
        s.screen.flush(0, &mut out[0]);
        s.screen.end(1, &mut out[1]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Screen;

    /// What the screen writes for `chunks` fed one after the other, then
    /// the end.
    fn screen(chunks: &[&str]) -> String {
        let mut s = Screen::default();
        let mut out = Vec::new();
        for c in chunks {
            s.feed(0, c.as_bytes(), &mut out);
        }
        s.end(0, &mut out);
        String::from_utf8(out).expect("text")
    }

    const P1: &str = "\rbsplib: superstep 1 | 4.0 supersteps/s\x1b[K";
    const P2: &str = "\rbsplib: superstep 2 | 4.0 supersteps/s\x1b[K";

    #[test]
    fn the_line_is_erased_before_output_and_at_the_end() {
        assert_eq!(
            screen(&[P1, "middle line\n", P2, "last line\n", "\r\x1b[K"]),
            format!("{P1}\r\x1b[Kmiddle line\n{P2}\r\x1b[Klast line\n")
        );
        // The library's erase never came (its process was killed): erased
        // at the end all the same.
        assert_eq!(screen(&[P1]), format!("{P1}\r\x1b[K"));
        assert_eq!(screen(&["a\n", "b\n"]), "a\nb\n");
    }

    #[test]
    fn a_line_cut_anywhere_is_put_back_together() {
        let whole = format!("x\n{P1}y\n");
        for cut in 0..whole.len() {
            let (a, b) = whole.split_at(cut);
            assert_eq!(
                screen(&[a, b]),
                format!("x\n{P1}\r\x1b[Ky\n"),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn never_over_a_prompt_and_the_programs_own_carriage_returns_pass() {
        assert_eq!(screen(&["n? ", P1, "4\n"]), "n? 4\n");
        assert_eq!(screen(&["50%\r", "60%\r\n"]), "50%\r60%\r\n");
        assert_eq!(screen(&["ab\r\x1b[Kcd\n"]), "ab\r\x1b[Kcd\n");
        // A line erased by the program is a line start; an erase of an
        // empty line is left out.
        assert_eq!(
            screen(&["ab", "\r\x1b[K", P1, "\r\x1b[K", "\r\x1b[K"]),
            format!("ab\r\x1b[K{P1}\r\x1b[K")
        );
        // A lone `\r` held back, then let go.
        let mut s = Screen::default();
        let mut out = Vec::new();
        s.feed(0, b"50%\r", &mut out);
        s.feed(0, b"\rbsp", &mut out);
        assert!(s.holding(0));
        s.flush(0, &mut out);
        assert_eq!(out, b"50%\r\rbsp");
    }

    #[test]
    fn two_streams_share_the_screen() {
        // mpi: the progress view comes in pieces ending with `\r` on
        // standard error; the program's lines on standard output.
        let mut s = Screen::default();
        let mut out = Vec::new();
        s.feed(1, b"\r", &mut out);
        s.feed(1, b"bsplib: superstep 1\x1b[K\r", &mut out);
        s.feed(0, b"middle line\n", &mut out);
        s.feed(1, b"bsplib: superstep 2\x1b[K\r", &mut out);
        s.feed(1, b"\x1b[K", &mut out);
        s.end(1, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\rbsplib: superstep 1\x1b[K\r\x1b[Kmiddle line\n\rbsplib: superstep 2\x1b[K\r\x1b[K"
        );
    }
}
