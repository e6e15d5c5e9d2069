//! The live progress view (`BSPLIB_PROGRESS`, `bsprun --progress`): forced
//! on into a pipe, it draws `\r`-led lines naming the superstep, the rate
//! and the slowest process, and its last output erases the line.
//!
//! The test runs this binary again as a child (`child_run`, which does
//! nothing unless `BSPLIB_PROGRESS_CHILD` is set), with standard error
//! piped.

use std::process::Command;

/// The child: 2 processes, one slower, about a second of supersteps.
#[test]
fn child_run() {
    let Ok(engine) = std::env::var("BSPLIB_PROGRESS_CHILD") else {
        return;
    };
    let runtime = bsplib::Runtime::from_env(2).engine(match engine.as_str() {
        "processes" => bsplib::Engine::Processes,
        _ => bsplib::Engine::Threads,
    });
    // SAFETY: the child test runs alone in its process (`--exact`), beside
    // libtest's main thread, which takes no lock a process needs.
    let runtime = unsafe { runtime.fork_with_threads() };
    let r = runtime.run(|bsp| {
        for _ in 0..120 {
            if bsp.pid() == 1 {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            bsp.sync()?;
        }
        Ok(bsp.pid() as u32)
    });
    assert_eq!(r.unwrap(), vec![0, 1]);
}

fn progress_output(engine: &str, value: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_run", "--nocapture", "--test-threads=1"])
        .env("BSPLIB_PROGRESS_CHILD", engine)
        .env("BSPLIB_PROGRESS", value)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn forced_progress_draws_in_place_and_ends_cleared() {
    for engine in ["threads", "processes"] {
        let err = progress_output(engine, "force");
        assert!(err.starts_with("\rbsplib: superstep "), "{engine}: {err:?}");
        assert!(err.ends_with("\r\x1b[K"), "{engine}: {err:?}");
        let draws: Vec<&str> = err
            .split('\r')
            .filter(|d| !d.is_empty() && *d != "\x1b[K")
            .collect();
        assert!(!draws.is_empty(), "{engine}: {err:?}");
        for d in &draws {
            // `bsplib: superstep S | R supersteps/s | slowest: process P (...)`
            let d = d.strip_suffix("\x1b[K").expect("each line erases its tail");
            let fields: Vec<&str> = d.split(" | ").collect();
            assert_eq!(fields.len(), 3, "{engine}: {d:?}");
            let s: u64 = fields[0]
                .strip_prefix("bsplib: superstep ")
                .unwrap()
                .parse()
                .unwrap();
            assert!(s <= 120, "{d:?}");
            let rate: f64 = fields[1]
                .strip_suffix(" supersteps/s")
                .unwrap()
                .parse()
                .unwrap();
            assert!((0.0..1e6).contains(&rate), "{d:?}");
            assert!(fields[2].starts_with("slowest: process "), "{d:?}");
        }
        // Process 1 sleeps every superstep: the others wait for it.
        assert!(
            draws
                .iter()
                .any(|d| d.contains("slowest: process 1 (computing)")),
            "{engine}: {err:?}"
        );
    }
}

#[test]
fn progress_is_silent_when_stderr_is_not_a_terminal() {
    // `1` (what `bsprun --progress` sets) into a pipe: nothing.
    assert_eq!(progress_output("threads", "1"), "");
}
