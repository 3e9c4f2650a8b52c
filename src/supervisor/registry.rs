//! The daemon's own children, each with its kind, and the commands whose processes may still
//! be running. One lock guards both; it is held across every spawn, so a sweep never mistakes
//! a child being started for an orphan, and while a sweep reaps, so it never reaps a child
//! that tokio waits for.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use super::cgroup::CommandCgroup;
use super::proc_table::{read_table, ProcEntry};

/// What a child of the daemon is. Only a command's processes are ever killed by a sweep; an
/// MCP server is killed by its own handle (or at shutdown), a child the daemon started with
/// never.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ChildKind {
    /// A command's leader (the shell, or `command/exec`'s program); tokio waits for it.
    CommandLeader,
    /// A stdio MCP server; tokio waits for it.
    McpServer { name: String },
    /// A child the daemon already had when it started: a wrapper's `tee` of its stdio, say.
    StartedWith,
}

#[derive(Debug)]
struct OwnedChild {
    /// `None` when /proc could not tell it; the pid alone then names the child.
    start_time: Option<u64>,
    kind: ChildKind,
}

/// A command whose processes may still run: until its sweep found none left.
#[derive(Debug, Clone)]
pub(super) struct CommandRecord {
    /// The marker value only this command's processes carry.
    pub(super) id: String,
    pub(super) leader: i32,
    pub(super) leader_start: Option<u64>,
    pub(super) cgroup: Option<Arc<CommandCgroup>>,
}

#[derive(Debug)]
pub(super) struct Registry {
    children: HashMap<i32, OwnedChild>,
    commands: HashMap<u64, CommandRecord>,
    next_key: u64,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::at_start()));

/// The registry, locked. The first call records the children the daemon started with.
pub(super) fn registry() -> MutexGuard<'static, Registry> {
    // A poisoned lock only means a panic elsewhere while it was held; the maps are still sound.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Registry {
    /// The daemon's children as it starts: none of them is the daemon's to kill.
    fn at_start() -> Registry {
        let daemon = own_pid();
        let children = read_table()
            .into_iter()
            .filter(|entry| entry.ppid == daemon)
            .map(|entry| {
                let child = OwnedChild {
                    start_time: Some(entry.start_time),
                    kind: ChildKind::StartedWith,
                };
                (entry.pid, child)
            })
            .collect();
        Registry {
            children,
            commands: HashMap::new(),
            next_key: 0,
        }
    }

    /// The kind of `entry`, when it is a child the registry knows (same pid and start time).
    pub(super) fn kind_of(&self, entry: &ProcEntry) -> Option<&ChildKind> {
        let child = self.children.get(&entry.pid)?;
        child
            .start_time
            .is_none_or(|start| start == entry.start_time)
            .then_some(&child.kind)
    }

    pub(super) fn add_child(&mut self, pid: i32, start_time: Option<u64>, kind: ChildKind) {
        self.children.insert(pid, OwnedChild { start_time, kind });
    }

    /// Forgets a child once it has been reaped (or will be, by tokio, after a kill).
    pub(super) fn remove_child(&mut self, pid: i32, start_time: Option<u64>) {
        if self
            .children
            .get(&pid)
            .is_some_and(|child| child.start_time == start_time)
        {
            self.children.remove(&pid);
        }
    }

    /// The MCP servers running now: (pid, start time, name).
    pub(super) fn servers(&self) -> Vec<(i32, Option<u64>, String)> {
        self.children
            .iter()
            .filter_map(|(pid, child)| match &child.kind {
                ChildKind::McpServer { name } => Some((*pid, child.start_time, name.clone())),
                _ => None,
            })
            .collect()
    }

    pub(super) fn add_command(&mut self, record: CommandRecord) -> u64 {
        self.next_key += 1;
        self.commands.insert(self.next_key, record);
        self.next_key
    }

    pub(super) fn remove_command(&mut self, key: u64) {
        self.commands.remove(&key);
    }

    pub(super) fn commands(&self) -> Vec<(u64, CommandRecord)> {
        self.commands
            .iter()
            .map(|(key, record)| (*key, record.clone()))
            .collect()
    }
}

pub(super) fn own_pid() -> i32 {
    i32::try_from(std::process::id()).unwrap_or(0)
}

/// The environment variable that marks a command's processes: a `:`-separated list of command
/// ids (a daemon run by another daemon's command keeps the outer id and adds its own).
pub(super) const MARKER: &str = "OPENTURN_COMMAND_ID";

/// Records the children the daemon started with and makes it a child subreaper. Call it first
/// thing, before any child is started; spawning calls it too, for embedders that do not.
pub fn start() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        drop(registry());
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only sets a flag on this process.
        let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if rc != 0 {
            tracing::warn!(
                error = %std::io::Error::last_os_error(),
                "cannot become a child subreaper; what a command leaves running is killed but \
                 may be reaped by init instead"
            );
        }
    });
}
