//! What `bsprun --profile`, `bspprof` and `bspprobe` share (issue 27):
//! whether the machine was free enough for a measurement to be trusted.
//!
//! A BSP measurement (a superstep's time, g, l) is the run's own only when
//! its processes have cores to themselves: the barrier spins before it
//! parks, so a process that waits for a core shows as a slow superstep of
//! everyone. The check compares the 1-minute load average before the run
//! (the work of other programs, in cores) with the cores the run leaves
//! free; the soak example judges its throughput the same way.

/// "1 process", "4 processes".
fn processes(n: usize) -> String {
    format!("{n} process{}", if n == 1 { "" } else { "es" })
}

/// Why a run of `procs` processes on a machine of `cores` cores whose
/// load average was `load` just before cannot be trusted, and what its
/// times then include ("waiting for ..."); `None` if it can.
///
/// Untrusted when the run has more processes than cores, or when the
/// load, rounded to whole cores, exceeds the cores the run leaves free
/// (`cores - procs`): with 2 cores and 2 processes, a load of 0.4 passes
/// and 0.6 does not.
pub fn untrusted(load: Option<f64>, cores: usize, procs: usize) -> Option<(String, &'static str)> {
    if procs > cores {
        return Some((
            format!("{} on {cores} cores", processes(procs)),
            "waiting for a core",
        ));
    }
    let load = load?;
    let free = cores - procs;
    (load.round() > free as f64).then(|| {
        (
            format!(
                "the load average is {load:.2} and {free} of the {cores} cores are free beside the run's {}",
                processes(procs)
            ),
            "waiting for other programs",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::untrusted;

    #[test]
    fn the_load_on_whole_cores_against_the_free_cores() {
        assert_eq!(untrusted(Some(0.4), 2, 2), None);
        assert_eq!(untrusted(Some(1.4), 2, 1), None);
        assert_eq!(untrusted(None, 2, 2), None);
        let (why, cause) = untrusted(Some(0.6), 2, 2).expect("busy");
        assert_eq!(
            why,
            "the load average is 0.60 and 0 of the 2 cores are free beside the run's 2 processes"
        );
        assert_eq!(cause, "waiting for other programs");
        let (why, _) = untrusted(Some(1.5), 2, 1).expect("busy");
        assert!(why.contains("1 of the 2 cores are free beside the run's 1 process"));
        let (why, cause) = untrusted(Some(0.0), 2, 4).expect("oversubscribed");
        assert_eq!(
            (why.as_str(), cause),
            ("4 processes on 2 cores", "waiting for a core")
        );
    }
}
