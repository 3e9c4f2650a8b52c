//! Reading `/proc`: the process table (pid, parent, group, state, start time) and whether a
//! process carries a command's marker in its environment. Blocking file reads: callers in async
//! code run them on a blocking thread.

use std::collections::{HashMap, HashSet};

/// A process as `/proc/<pid>/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ProcEntry {
    pub(super) pid: i32,
    pub(super) ppid: i32,
    /// The process group; a zombie keeps it, so a dead process can still be told by its group.
    pub(super) pgid: i32,
    pub(super) zombie: bool,
    /// Clock ticks after boot; with the pid, names one process for its whole life.
    pub(super) start_time: u64,
}

impl ProcEntry {
    pub(super) fn identity(&self) -> (i32, u64) {
        (self.pid, self.start_time)
    }
}

/// Every process in /proc (those that vanish while it is read are skipped).
pub(super) fn read_table() -> Vec<ProcEntry> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read_entry)
        .collect()
}

pub(super) fn read_entry(pid: i32) -> Option<ProcEntry> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// Fields after the command name, which is in parentheses and may itself hold `)` or spaces:
/// state, ppid, pgrp, … and the start time, the 22nd field of the line.
fn parse_stat(pid: i32, text: &str) -> Option<ProcEntry> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcEntry {
        pid,
        zombie: matches!(*fields.first()?, "Z" | "X"),
        ppid: fields.get(1)?.parse().ok()?,
        pgid: fields.get(2)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

/// Whether process `pid` started with `variable` set to a list (`:`-separated) holding one of
/// `ids`. An unreadable environment (another user's process, a zombie, a kernel thread) carries
/// no marker.
pub(super) fn carries_marker(pid: i32, variable: &str, ids: &HashSet<String>) -> bool {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    marked(&environ, variable, ids)
}

fn marked(environ: &[u8], variable: &str, ids: &HashSet<String>) -> bool {
    environ.split(|byte| *byte == 0).any(|entry| {
        let Some(value) = entry
            .strip_prefix(variable.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
        else {
            return false;
        };
        value
            .split(|byte| *byte == b':')
            .filter_map(|id| std::str::from_utf8(id).ok())
            .any(|id| ids.contains(id))
    })
}

/// `roots` and every process below them.
pub(super) fn with_descendants(table: &[ProcEntry], roots: &[i32]) -> HashSet<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for entry in table {
        children.entry(entry.ppid).or_default().push(entry.pid);
    }
    let mut seen: HashSet<i32> = HashSet::new();
    let mut queue: Vec<i32> = roots.to_vec();
    while let Some(pid) = queue.pop() {
        if pid > 0 && seen.insert(pid) {
            queue.extend(children.get(&pid).into_iter().flatten());
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse_even_with_odd_command_names() {
        let line = "4242 (a) b (c) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 \
                    1000 100 18446744073709551615";
        assert_eq!(
            parse_stat(4242, line),
            Some(ProcEntry {
                pid: 4242,
                ppid: 17,
                pgid: 4242,
                zombie: false,
                start_time: 987654
            })
        );
        let zombie = "7 (sh) Z 1 5 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55";
        assert_eq!(
            parse_stat(7, zombie).map(|e| (e.zombie, e.pgid)),
            Some((true, 5))
        );
        assert_eq!(parse_stat(7, "7 (sh) S 1"), None);
    }

    #[test]
    fn descendants_follow_parent_links_and_include_the_roots() {
        let entry = |pid, ppid| ProcEntry {
            pid,
            ppid,
            pgid: pid,
            zombie: false,
            start_time: 0,
        };
        let table = [entry(10, 1), entry(11, 10), entry(12, 11), entry(20, 1)];
        let found = with_descendants(&table, &[10]);
        assert_eq!(found, HashSet::from([10, 11, 12]));
    }

    #[test]
    fn a_marker_matches_one_of_the_ids_in_its_list_and_nothing_else() {
        let ids = HashSet::from(["b2".to_string()]);
        let environ = b"PATH=/bin\0OPENTURN_COMMAND_ID=a1:b2\0HOME=/root\0";
        assert!(marked(environ, "OPENTURN_COMMAND_ID", &ids));
        // Another daemon's id, a prefix of ours, or our id under another name: not ours.
        for other in [
            &b"OPENTURN_COMMAND_ID=a1\0"[..],
            b"OPENTURN_COMMAND_ID=b\0",
            b"OPENTURN_COMMAND_ID=b22\0",
            b"X_OPENTURN_COMMAND_ID=b2\0",
            b"OPENTURN_COMMAND_IDS=b2\0",
            b"",
        ] {
            assert!(
                !marked(other, "OPENTURN_COMMAND_ID", &ids),
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }
}
