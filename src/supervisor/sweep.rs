//! Finding and killing the processes of some commands — and nothing else. Blocking: it reads
//! /proc and pauses between rounds, so async callers run it on a blocking thread.
//!
//! A process is a command's when it is in the command's cgroup, carries its marker in its
//! environment, is in the process group its leader created, or descends from such a process.
//! The three tests cover each other's gaps: the cgroup holds everything but exists only where
//! the daemon may create one; the marker survives `setsid` and double forks but not a cleared
//! environment (`env -i`); the group survives a cleared environment but not `setsid`. A pid in
//! a leader's group cannot be some other process's: the kernel hands a pid out again only once
//! no process uses it as its pid *or its group*.
//!
//! Never killed, whatever they carry: the daemon itself, its MCP servers and the children it
//! started with. Everything killed is recorded (pid and start time), so once it is a zombie
//! re-parented to the daemon (a subreaper) it is reaped; children tokio waits for never are.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::cgroup::CommandCgroup;
use super::proc_table::{carries_marker, read_table, with_descendants, ProcEntry};
use super::registry::MARKER;
use super::registry::{own_pid, registry, ChildKind, CommandRecord};

/// How many rounds [`Sweep::run`] runs at most: a round kills what it finds and reaps what has
/// died; a process forked while a round ran is found by the next.
const MAX_ROUNDS: usize = 200;
/// Pause between rounds, so killed processes can die before the next round reaps them.
const PAUSE: Duration = Duration::from_millis(5);

/// What one sweep looks for: the processes of some commands.
#[derive(Debug, Clone)]
pub(super) struct Sweep {
    ids: Arc<HashSet<String>>,
    cgroups: Vec<Arc<CommandCgroup>>,
    /// The leaders' pids, which are also their process groups.
    groups: Vec<i32>,
    /// None of these commands' processes started before this (clock ticks after boot): older
    /// processes' environments are not even read.
    since: u64,
    /// What was killed, by pid and start time, so its zombie is known to be the commands'.
    killed: Arc<Mutex<HashSet<(i32, u64)>>>,
}

impl Sweep {
    pub(super) fn of(records: &[CommandRecord]) -> Sweep {
        Sweep {
            ids: Arc::new(records.iter().map(|record| record.id.clone()).collect()),
            cgroups: records
                .iter()
                .filter_map(|record| record.cgroup.clone())
                .collect(),
            groups: records.iter().map(|record| record.leader).collect(),
            since: records
                .iter()
                .map(|record| record.leader_start.unwrap_or(0))
                .min()
                .unwrap_or(0),
            killed: Arc::default(),
        }
    }

    /// Rounds until a round finds nothing left, at most [`MAX_ROUNDS`]; whether it got there.
    pub(super) fn run(&self) -> bool {
        for _ in 0..MAX_ROUNDS {
            if self.round() == 0 {
                return true;
            }
            std::thread::sleep(PAUSE);
        }
        false
    }

    /// One round: kills every live process of the commands and reaps the dead ones re-parented
    /// to the daemon. Returns how many it saw, alive or dead: 0 means none is left.
    pub(super) fn round(&self) -> usize {
        let table = read_table();
        let spared = spared(&table);
        let found = self.find(&table, &spared);
        let mut alive = 0;
        {
            let mut killed = self.killed.lock().unwrap_or_else(|p| p.into_inner());
            for entry in table.iter().filter(|entry| found.contains(&entry.pid)) {
                if spared.contains(&entry.identity()) {
                    continue;
                }
                killed.insert(entry.identity());
                if !entry.zombie {
                    alive += 1;
                    sigkill(entry.pid);
                }
            }
        }
        if alive > 0 {
            for cgroup in &self.cgroups {
                cgroup.kill();
            }
        }
        alive + self.reap(&table)
    }

    /// The live processes of the commands and everything below them.
    fn find(&self, table: &[ProcEntry], spared: &HashSet<(i32, u64)>) -> HashSet<i32> {
        let in_cgroups: HashSet<i32> = self.cgroups.iter().flat_map(|c| c.pids()).collect();
        let daemon = own_pid();
        let roots: Vec<i32> = table
            .iter()
            .filter(|entry| !entry.zombie && entry.pid != daemon)
            .filter(|entry| entry.start_time >= self.since)
            .filter(|entry| !spared.contains(&entry.identity()))
            .filter(|entry| {
                in_cgroups.contains(&entry.pid)
                    || self.groups.contains(&entry.pgid)
                    || carries_marker(entry.pid, MARKER, &self.ids)
            })
            .map(|entry| entry.pid)
            .collect();
        let mut found = with_descendants(table, &roots);
        found.remove(&daemon);
        found
    }

    /// Reaps the commands' dead processes that are the daemon's children now; returns how many.
    fn reap(&self, table: &[ProcEntry]) -> usize {
        let daemon = own_pid();
        let killed = self.killed.lock().unwrap_or_else(|p| p.into_inner());
        // Held while reaping: no child is spawned meanwhile, and every child tokio waits for is
        // in the registry.
        let registry = registry();
        let mut reaped = 0;
        for entry in table.iter().filter(|e| e.zombie && e.ppid == daemon) {
            if registry.kind_of(entry).is_some() {
                continue;
            }
            if killed.contains(&entry.identity()) || self.groups.contains(&entry.pgid) {
                reap(entry.pid);
                reaped += 1;
            }
        }
        reaped
    }

    /// Removes the commands' cgroups (call once [`Self::run`] found nothing left).
    pub(super) fn remove_cgroups(&self) {
        for cgroup in &self.cgroups {
            if !cgroup.remove() {
                tracing::debug!("a command's cgroup could not be removed");
            }
        }
    }
}

/// The processes no sweep may touch: the daemon's MCP servers and the children it started
/// with, by pid and start time.
fn spared(table: &[ProcEntry]) -> HashSet<(i32, u64)> {
    let registry = registry();
    table
        .iter()
        .filter(|entry| {
            matches!(
                registry.kind_of(entry),
                Some(ChildKind::McpServer { .. } | ChildKind::StartedWith)
            )
        })
        .map(ProcEntry::identity)
        .collect()
}

pub(super) fn sigkill(pid: i32) {
    if pid <= 0 {
        return;
    }
    // SAFETY: kill only sends a signal; a process already gone yields ESRCH, ignored.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Reaps a dead process the daemon adopted: nobody else can.
fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: waitpid on one pid that is a child of this process and that no one else waits
    // for (the registry's children are never passed here); WNOHANG never blocks.
    unsafe {
        libc::waitpid(pid, &mut status, libc::WNOHANG);
    }
}
