//! The run's error printed once, as one line on standard error, by
//! whichever process gets there first (every front door's report).

use crate::engine::World;

/// Prints the run's error to standard error as `bsplib: <error>`, once
/// per run whichever process calls it; true if this call printed
/// ([`Launch::report`](crate::launch::Launch::report)). A process that does not print waits (up to a
/// second) for the one printing, so that ending the program does not cut
/// the message short.
pub(crate) fn report(world: &World) -> bool {
    let state = world.reported();
    match world.failure() {
        Some(err) if state.claim() => {
            // One write, straight to the descriptor: a line is not
            // interleaved with, or cut by, others, and no lock of the
            // standard library is needed (this runs at exit too).
            // With the progress view on, its line is erased first.
            let erase = if crate::progress::draws(world) {
                "\r\x1b[K"
            } else {
                ""
            };
            let line = format!("{erase}bsplib: {err}\n");
            write_stderr(line.as_bytes());
            state.done();
            true
        }
        _ => {
            state.wait(std::time::Duration::from_secs(1));
            false
        }
    }
}

/// Writes `bytes` to file descriptor 2, retrying short writes.
fn write_stderr(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writes from a live buffer to a descriptor.
        let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}
