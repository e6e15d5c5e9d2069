//! Which processes a profile directory covers, and where they ran: the
//! hosts line of the summary and the report, and the warning when
//! processes left no file (`bspprof --summary` on standard error, the
//! report's warning paragraph).
//!
//! Every profile names the host of its process (key `bsplib.host`; absent
//! in files of a bsplib before issue 26: then no host is named). On `mpi`
//! process 0 writes every process's file at the end of a run that ends
//! normally (`crates/bsplib/src/PROFILE.md`); a file is missing when its
//! process ended abnormally (killed, or a run that failed left each
//! process's file on its own host), or when the files were written by an
//! older bsplib, each on its process's host.

use std::path::Path;

/// The processes of one profile that left a file: `(pid, host)` in pid
/// order.
pub(crate) struct Coverage<'a> {
    pub(crate) nprocs: usize,
    pub(crate) present: Vec<(usize, Option<&'a str>)>,
}

impl Coverage<'_> {
    /// The pids `0..nprocs` without a file.
    pub(crate) fn missing(&self) -> Vec<usize> {
        let mut have = self.present.iter().map(|&(pid, _)| pid).peekable();
        (0..self.nprocs)
            .filter(|&pid| {
                while have.next_if(|&p| p < pid).is_some() {}
                have.next_if_eq(&pid).is_none()
            })
            .collect()
    }

    /// The hosts in order of their first process, each with its processes.
    fn hosts(&self) -> Vec<(&str, Vec<usize>)> {
        let mut hosts: Vec<(&str, Vec<usize>)> = Vec::new();
        for &(pid, host) in &self.present {
            let Some(host) = host else { continue };
            match hosts.iter_mut().find(|(h, _)| *h == host) {
                Some((_, pids)) => pids.push(pid),
                None => hosts.push((host, vec![pid])),
            }
        }
        hosts
    }

    /// `4 of 4 process profiles (bsp-h1: 0, 2; bsp-h2: 1, 3)`: how many
    /// processes left a file and where they ran (`all on HOST` for one
    /// host; more than [`MAX_HOSTS`] hosts are counted, not named).
    pub(crate) fn line(&self) -> String {
        let mut s = format!("{} of {} process profiles", self.present.len(), self.nprocs);
        let hosts = self.hosts();
        match hosts.len() {
            0 => {}
            1 => s.push_str(&format!(" (all on {})", hosts[0].0)),
            n if n > MAX_HOSTS => s.push_str(&format!(" (on {n} hosts)")),
            _ => {
                let parts: Vec<String> = hosts
                    .iter()
                    .map(|(h, pids)| format!("{h}: {}", pid_list(pids)))
                    .collect();
                s.push_str(&format!(" ({})", parts.join("; ")));
            }
        }
        s
    }

    /// The warning when processes left no file, naming them and where the
    /// others ran; `None` when every process left one.
    pub(crate) fn warning(&self, dir: &Path, engine: &str) -> Option<String> {
        let missing = self.missing();
        if missing.is_empty() {
            return None;
        }
        let mut s = format!(
            "{} of {} processes left a profile in {}: {} left none",
            self.present.len(),
            self.nprocs,
            dir.display(),
            processes(&missing),
        );
        let hosts = self.hosts();
        if !hosts.is_empty() && hosts.len() <= MAX_HOSTS {
            let parts: Vec<String> = hosts
                .iter()
                .enumerate()
                .map(|(i, (h, pids))| match i {
                    0 => format!("{} ran on {h}", processes(pids)),
                    _ => format!("{} on {h}", pid_list(pids)),
                })
                .collect();
            s.push_str(&format!(" ({})", parts.join(", ")));
        }
        s.push_str(". A process that ends abnormally (killed, or its run aborted) writes none");
        if engine == "mpi" {
            s.push_str(&format!(
                "; on mpi process 0 writes every process's file when the run ends normally, \
                 but a failed run, or an older bsplib, leaves each process's file on its own \
                 host: if {} is local to each node, look for the missing files there",
                dir.display()
            ));
        }
        s.push('.');
        Some(s)
    }
}

/// Hosts named at most (more are counted).
const MAX_HOSTS: usize = 8;

/// `process 3`, `processes 1 and 3`, `processes 1, 3 and 5-9`.
fn processes(pids: &[usize]) -> String {
    let list = pid_list(pids);
    if pids.len() == 1 {
        format!("process {list}")
    } else {
        format!("processes {list}")
    }
}

/// `3`, `1 and 3`, `1, 3 and 5-9`: ascending pids, runs of three or more
/// as ranges, at most [`MAX_PARTS`] parts (then `...` and the last, with
/// the count).
pub(crate) fn pid_list(pids: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < pids.len() {
        let mut j = i;
        while j + 1 < pids.len() && pids[j + 1] == pids[j] + 1 {
            j += 1;
        }
        if j >= i + 2 {
            parts.push(format!("{}-{}", pids[i], pids[j]));
        } else {
            parts.extend(pids[i..=j].iter().map(usize::to_string));
        }
        i = j + 1;
    }
    if parts.len() > MAX_PARTS {
        let last = parts.last().cloned().unwrap_or_default();
        parts.truncate(MAX_PARTS - 1);
        return format!("{}, ..., {last} ({} in all)", parts.join(", "), pids.len());
    }
    match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// Parts of a pid list shown at most.
const MAX_PARTS: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_lists_read_as_english() {
        assert_eq!(pid_list(&[3]), "3");
        assert_eq!(pid_list(&[1, 3]), "1 and 3");
        assert_eq!(pid_list(&[0, 1]), "0 and 1");
        assert_eq!(pid_list(&[1, 3, 5, 6, 7, 8, 9]), "1, 3 and 5-9");
        let odd: Vec<usize> = (0..40).map(|i| 2 * i + 1).collect();
        assert_eq!(pid_list(&odd), "1, 3, 5, 7, 9, 11, 13, ..., 79 (40 in all)");
        assert_eq!(processes(&[2]), "process 2");
        assert_eq!(processes(&[2, 4]), "processes 2 and 4");
    }

    #[test]
    fn a_complete_profile_warns_of_nothing_and_names_its_hosts() {
        let c = Coverage {
            nprocs: 4,
            present: vec![
                (0, Some("bsp-h1")),
                (1, Some("bsp-h2")),
                (2, Some("bsp-h1")),
                (3, Some("bsp-h2")),
            ],
        };
        assert!(c.missing().is_empty());
        assert_eq!(c.warning(Path::new("/tmp/prof"), "mpi"), None);
        assert_eq!(
            c.line(),
            "4 of 4 process profiles (bsp-h1: 0 and 2; bsp-h2: 1 and 3)"
        );
        let one = Coverage {
            nprocs: 2,
            present: vec![(0, Some("node")), (1, Some("node"))],
        };
        assert_eq!(one.line(), "2 of 2 process profiles (all on node)");
        let old = Coverage {
            nprocs: 1,
            present: vec![(0, None)],
        };
        assert_eq!(old.line(), "1 of 1 process profiles");
    }

    #[test]
    fn a_partial_profile_names_the_missing_and_where_the_others_ran() {
        let c = Coverage {
            nprocs: 4,
            present: vec![(0, Some("bsp-h1")), (2, Some("bsp-h1"))],
        };
        assert_eq!(c.missing(), vec![1, 3]);
        let w = c.warning(Path::new("/tmp/prof"), "mpi").unwrap();
        assert!(
            w.starts_with(
                "2 of 4 processes left a profile in /tmp/prof: processes 1 and 3 left none \
                 (processes 0 and 2 ran on bsp-h1). A process that ends abnormally"
            ),
            "{w}"
        );
        assert!(w.contains("local to each node"), "{w}");
        let t = Coverage {
            nprocs: 3,
            present: vec![(1, Some("a"))],
        };
        let w = t.warning(Path::new("d"), "threads").unwrap();
        assert!(
            w.starts_with(
                "1 of 3 processes left a profile in d: processes 0 and 2 left none \
                 (process 1 ran on a). A process"
            ),
            "{w}"
        );
        assert!(!w.contains("node"), "{w}");
        let spread = Coverage {
            nprocs: 6,
            present: vec![
                (0, Some("h1")),
                (1, Some("h2")),
                (2, Some("h1")),
                (4, Some("h1")),
            ],
        };
        let w = spread.warning(Path::new("d"), "mpi").unwrap();
        assert!(
            w.contains("processes 3 and 5 left none (processes 0, 2 and 4 ran on h1, 1 on h2)"),
            "{w}"
        );
        assert!(
            w.ends_with("if d is local to each node, look for the missing files there."),
            "{w}"
        );
    }
}
