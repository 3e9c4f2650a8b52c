//! Every process a command starts, found and killed when the command ends — including those
//! that left its process group (`setsid`, `nohup … &`, double forks).
//!
//! A process group is not a fence: any descendant can leave it. What cannot be left is the
//! daemon's part of the process tree, once two flags are set:
//!
//! - The daemon is a child subreaper (`PR_SET_CHILD_SUBREAPER`, set before its first command
//!   starts): a process whose parent dies is re-parented to the daemon, never to init.
//! - Every command's leader (the shell, or `command/exec`'s program) is a subreaper too, set
//!   between fork and exec (the flag survives exec): while the leader runs, the orphans of
//!   everything below it are re-parented to the leader, so its /proc descendants are exactly
//!   what the command started.
//!
//! So while a leader runs, its processes are its descendants; once it has exited, they are the
//! daemon's direct children that are not a registered leader, with their descendants. Every
//! such orphan comes from a command whose leader exited, and must go: [`ProcessTree::end`]
//! kills them all and reaps them (the daemon is their parent now; nobody else would).
//!
//! Leaders are registered under one lock that is held across the spawn, so a sweep never takes a
//! leader just forked for an orphan, and sweeps never reap a leader (tokio waits for those).
//! A process is known by pid *and* start time, so a reused pid is never mistaken for another.
//! Every child the daemon starts must go through [`spawn`]: an unregistered child is an orphan.
//!
//! A leader that is not a shell (`command/exec` runs any program) and never waits for children
//! it did not start keeps adopted orphans as zombies until it exits; they are reaped then.
//!
//! Not covered: a daemon killed with SIGKILL cannot clean up, and what its commands left goes to
//! init. cgroups would survive that, but are rarely writable where the daemon runs (containers,
//! cgroup v1 hosts), so they are not used.

use std::collections::{HashMap, HashSet};
use std::sync::{LazyLock, Mutex, MutexGuard, Once};
use std::time::Duration;

use tokio::process::{Child, Command};

/// How many sweep rounds [`ProcessTree::end`] and [`kill_all`] run at most: a round kills what
/// it finds and reaps what has died; a process forked while a round ran is found by the next.
const MAX_SWEEP_ROUNDS: usize = 200;
/// Pause between rounds, so killed processes can die before the next round reaps them.
const SWEEP_PAUSE: Duration = Duration::from_millis(5);

/// The leaders currently running: pid → start time (`None` when /proc could not tell it; the pid
/// alone then names the leader). Held across a spawn (see the module doc).
static LEADERS: LazyLock<Mutex<HashMap<i32, Option<u64>>>> = LazyLock::new(Mutex::default);

fn leaders() -> MutexGuard<'static, HashMap<i32, Option<u64>>> {
    // A poisoned lock only means a panic elsewhere while it was held; the map is still sound.
    LEADERS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Marks the daemon a child subreaper, once, before its first child starts.
fn become_subreaper() {
    static SUBREAPER: Once = Once::new();
    SUBREAPER.call_once(|| {
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only sets a flag on this process.
        let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if rc != 0 {
            tracing::warn!(
                error = %std::io::Error::last_os_error(),
                "cannot become a child subreaper; a process that leaves its command's \
                 process tree may outlive it"
            );
        }
    });
}

/// Starts `command` as a command leader: its own process group, a subreaper, registered.
pub(crate) fn spawn(command: &mut Command) -> std::io::Result<(Child, ProcessTree)> {
    command.process_group(0);
    // SAFETY: the closure runs in the child between fork and exec and only makes one
    // async-signal-safe system call.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut leaders = leaders();
    become_subreaper();
    let child = command.spawn()?;
    let leader = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .unwrap_or(0);
    // The child is not reaped before its `wait` is polled, so its /proc entry exists now.
    let start_time = read_entry(leader).map(|entry| entry.start_time);
    leaders.insert(leader, start_time);
    drop(leaders);
    Ok((
        child,
        ProcessTree {
            leader,
            start_time,
            ended: false,
        },
    ))
}

/// One command's processes. Call [`ProcessTree::end`] once its leader has been waited for;
/// dropped without that, it kills what it can at once.
#[derive(Debug)]
pub(crate) struct ProcessTree {
    leader: i32,
    start_time: Option<u64>,
    ended: bool,
}

impl ProcessTree {
    /// Kills the leader, everything below it and its process group (a timeout, an interrupt).
    /// What a dying process forks meanwhile becomes an orphan, which [`Self::end`] kills.
    pub(crate) fn kill(&self) {
        if self.leader <= 0 {
            return;
        }
        let table = read_table();
        let alive = table
            .iter()
            .any(|entry| entry.pid == self.leader && names(self.start_time, entry));
        if alive {
            for pid in with_descendants(&table, &[self.leader]) {
                sigkill(pid);
            }
        }
        self.kill_group();
    }

    fn kill_group(&self) {
        if self.leader <= 0 {
            return;
        }
        // SAFETY: killpg only sends a signal, to the group the leader created (`process_group(0)`);
        // a group already gone yields ESRCH, ignored.
        unsafe {
            libc::killpg(self.leader, libc::SIGKILL);
        }
    }

    /// After the leader has exited and been waited for: kills and reaps everything it left —
    /// now orphans of the daemon. Only the first call does anything.
    pub(crate) async fn end(&mut self) {
        if self.ended {
            return;
        }
        self.unregister();
        self.kill_group();
        for _ in 0..MAX_SWEEP_ROUNDS {
            if sweep_round(false) == 0 {
                return;
            }
            tokio::time::sleep(SWEEP_PAUSE).await;
        }
        tracing::warn!(
            leader = self.leader,
            "processes left by a command survived the sweep"
        );
    }

    fn unregister(&mut self) {
        self.ended = true;
        let mut leaders = leaders();
        if leaders.get(&self.leader) == Some(&self.start_time) {
            leaders.remove(&self.leader);
        }
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // The command's future went away before its end (its task was dropped). The leader
        // stays registered until it is gone (tokio reaps it, not a sweep); everything below it
        // is killed now, and whatever escapes this moment is an orphan the next sweep kills.
        self.kill();
        sweep_round(false);
    }
}

/// At shutdown: kills every process below the daemon, leaders included, and reaps the orphans.
pub(crate) async fn kill_all() {
    for round in 0..MAX_SWEEP_ROUNDS {
        // Leaders die in the first round; later rounds reap what they left.
        if sweep_round(round == 0) == 0 {
            return;
        }
        tokio::time::sleep(SWEEP_PAUSE).await;
    }
    tracing::warn!("command processes survived the shutdown sweep");
}

/// One sweep: kills every orphan (a child of the daemon that is not a registered leader) with
/// its descendants, reaps orphans that have died, and with `with_leaders` kills the leaders and
/// their descendants too. Returns how many orphans it saw, dead or alive: 0 means none is left.
fn sweep_round(with_leaders: bool) -> usize {
    let mut leaders = leaders();
    let table = read_table();
    leaders.retain(|pid, start| {
        table
            .iter()
            .any(|entry| entry.pid == *pid && names(*start, entry))
    });
    let daemon = i32::try_from(std::process::id()).unwrap_or(0);
    let mut roots = Vec::new();
    let mut orphans = 0;
    for entry in table.iter().filter(|entry| entry.ppid == daemon) {
        let leader = leaders
            .get(&entry.pid)
            .is_some_and(|start| names(*start, entry));
        if leader {
            if with_leaders && !entry.zombie {
                roots.push(entry.pid);
            }
            continue;
        }
        orphans += 1;
        if entry.zombie {
            reap(entry.pid);
        } else {
            roots.push(entry.pid);
        }
    }
    drop(leaders);
    for pid in with_descendants(&table, &roots) {
        sigkill(pid);
    }
    orphans
}

/// Whether a leader's recorded start time names the process `entry` (same pid assumed).
fn names(start_time: Option<u64>, entry: &ProcEntry) -> bool {
    start_time.is_none_or(|start| start == entry.start_time)
}

fn sigkill(pid: i32) {
    // SAFETY: kill only sends a signal; a process already gone yields ESRCH, ignored.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Reaps a dead orphan: the daemon became its parent, so nobody else will.
fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: waitpid on one pid that is a child of this process and not one tokio waits for
    // (registered leaders are never passed here); WNOHANG never blocks.
    unsafe {
        libc::waitpid(pid, &mut status, libc::WNOHANG);
    }
}

/// `roots` and every process below them.
fn with_descendants(table: &[ProcEntry], roots: &[i32]) -> Vec<i32> {
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
    seen.into_iter().collect()
}

/// A process as `/proc/<pid>/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ProcEntry {
    pid: i32,
    ppid: i32,
    zombie: bool,
    /// Clock ticks after boot; with the pid, names one process for its whole life.
    start_time: u64,
}

/// Every process in /proc (those that vanish while it is read are skipped).
fn read_table() -> Vec<ProcEntry> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read_entry)
        .collect()
}

fn read_entry(pid: i32) -> Option<ProcEntry> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// Fields after the command name, which is in parentheses and may itself hold `)` or spaces:
/// state, ppid, … and the start time, the 22nd field of the line.
fn parse_stat(pid: i32, text: &str) -> Option<ProcEntry> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcEntry {
        pid,
        zombie: matches!(*fields.first()?, "Z" | "X"),
        ppid: fields.get(1)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
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
                zombie: false,
                start_time: 987654
            })
        );
        let zombie = "7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55";
        assert_eq!(parse_stat(7, zombie).map(|e| e.zombie), Some(true));
        assert_eq!(parse_stat(7, "7 (sh) S 1"), None);
    }

    #[test]
    fn descendants_follow_parent_links_and_include_the_roots() {
        let entry = |pid, ppid| ProcEntry {
            pid,
            ppid,
            zombie: false,
            start_time: 0,
        };
        let table = [entry(10, 1), entry(11, 10), entry(12, 11), entry(20, 1)];
        let mut found = with_descendants(&table, &[10]);
        found.sort_unstable();
        assert_eq!(found, vec![10, 11, 12]);
    }
}
