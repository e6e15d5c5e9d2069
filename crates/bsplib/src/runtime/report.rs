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
            crate::error::eprint_line(&line);
            state.done();
            true
        }
        _ => {
            state.wait(std::time::Duration::from_secs(1));
            false
        }
    }
}
