//! Starting a command (the model's shell tool, `command/exec`) and ending everything it
//! started: [`spawn_command`] and the [`CommandTree`] it returns.
//!
//! A command's leader is started in its own process group, with a marker unique to the command
//! in its environment (inherited by everything it starts), in a cgroup of its own where the
//! daemon may create one, and as a child subreaper: while it runs, the orphans of everything
//! below it are re-parented to it, not to the daemon. When it has exited, [`CommandTree::end`]
//! sweeps until none of the command's processes is left ([`super::sweep`]).

use std::io;
use std::sync::Arc;

use tokio::process::{Child, Command};

use super::cgroup::CommandCgroup;
use super::proc_table::read_entry;
use super::registry::MARKER;
use super::registry::{registry, ChildKind, CommandRecord};
use super::sweep::Sweep;

/// Starts `command` as a command leader. `confine` adds the caller's own child hooks (the
/// sandbox); they run in the child after the supervisor's, which must join the command's
/// cgroup before a sandbox forbids the write.
#[allow(
    dead_code,
    reason = "the plain entry for a caller that wires the child's stdio itself; the daemon's own \
              commands go through `spawn_terminal`"
)]
pub(crate) fn spawn_command(
    command: &mut Command,
    confine: impl FnOnce(&mut Command),
) -> io::Result<(Child, CommandTree)> {
    spawn_leader(command, Leads::Group, confine)
}

/// What a command's leader leads: a process group of its own, or a session of its own whose
/// controlling terminal is its stdin (a PTY's slave). A session leader also leads its group,
/// so the sweep finds both the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Leads {
    Group,
    TerminalSession,
}

pub(super) fn spawn_leader(
    command: &mut Command,
    leads: Leads,
    confine: impl FnOnce(&mut Command),
) -> io::Result<(Child, CommandTree)> {
    super::registry::start();
    let id = uuid::Uuid::new_v4().simple().to_string();
    // A daemon that itself runs inside a command keeps that command's marker too, so the outer
    // daemon still finds what this one's commands start.
    let marker = match std::env::var(MARKER) {
        Ok(outer) if !outer.is_empty() => format!("{outer}:{id}"),
        _ => id.clone(),
    };
    command.env(MARKER, marker);
    if leads == Leads::Group {
        command.process_group(0);
    }
    let cgroup = CommandCgroup::create(&id).map(Arc::new);
    let in_child = cgroup.clone();
    // SAFETY: the closure runs in the child between fork and exec; it only makes
    // async-signal-safe system calls on data built before the fork.
    unsafe {
        command.pre_exec(move || {
            if let Some(cgroup) = &in_child {
                cgroup.join_in_child();
            }
            if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // A new session (never set up by `process_group`, since a group leader cannot
            // start one) whose controlling terminal is the PTY on stdin: job control, `^C`
            // and `isatty` then work as in a terminal.
            if leads == Leads::TerminalSession
                && (libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) != 0)
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    confine(command);
    let mut registry = registry();
    let child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            drop(registry);
            if let Some(cgroup) = &cgroup {
                cgroup.remove();
            }
            return Err(error);
        }
    };
    let leader = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .unwrap_or(0);
    // The child is not reaped before its `wait` is polled, so its /proc entry exists now.
    let leader_start = read_entry(leader).map(|entry| entry.start_time);
    let cgroup = cgroup.filter(|cgroup| {
        let held = cgroup.holds(leader);
        if !held {
            cgroup.remove();
        }
        held
    });
    registry.add_child(leader, leader_start, ChildKind::CommandLeader);
    let record = CommandRecord {
        id,
        leader,
        leader_start,
        cgroup,
    };
    let sweep = Sweep::of(std::slice::from_ref(&record));
    let key = registry.add_command(record);
    drop(registry);
    Ok((
        child,
        CommandTree {
            key,
            leader,
            leader_start,
            sweep,
            ended: false,
        },
    ))
}

/// One command's processes. Call [`CommandTree::end`] once its leader has been waited for;
/// dropped without that, it kills them on a blocking thread.
#[derive(Debug)]
pub(crate) struct CommandTree {
    key: u64,
    leader: i32,
    leader_start: Option<u64>,
    sweep: Sweep,
    ended: bool,
}

impl CommandTree {
    /// Kills the leader and everything of the command (a timeout, an interrupt). What a dying
    /// process forks meanwhile is found by [`Self::end`].
    pub(crate) async fn kill(&self) {
        let sweep = self.sweep.clone();
        if let Err(error) = tokio::task::spawn_blocking(move || sweep.round()).await {
            tracing::warn!(%error, "killing a command's processes failed");
        }
    }

    /// After the leader has exited and been waited for: kills and reaps everything the command
    /// left. Only the first call does anything.
    pub(crate) async fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        registry().remove_child(self.leader, self.leader_start);
        let sweep = self.sweep.clone();
        let key = self.key;
        let finished = tokio::task::spawn_blocking(move || finish(&sweep, key)).await;
        if let Err(error) = finished {
            tracing::warn!(%error, "sweeping a command's processes failed");
        }
    }
}

/// Sweeps until the command has no process left; then it is forgotten and its cgroup removed.
/// A command some process of which survived stays known, so shutdown tries again.
fn finish(sweep: &Sweep, key: u64) {
    if sweep.run() {
        sweep.remove_cgroups();
        registry().remove_command(key);
    } else {
        tracing::warn!("processes left by a command survived the sweep");
    }
}

impl Drop for CommandTree {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // The command's future went away before its end (its task was dropped): its leader is
        // killed by tokio (`kill_on_drop`) and reaped in the background, everything else here.
        registry().remove_child(self.leader, self.leader_start);
        let sweep = self.sweep.clone();
        let key = self.key;
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                // Ends by itself: the sweep is bounded.
                runtime.spawn_blocking(move || finish(&sweep, key));
            }
            Err(_) => finish(&sweep, key),
        }
    }
}
