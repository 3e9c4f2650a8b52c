//! Starting a stdio MCP server and stopping it: [`spawn_server`] and the [`ServerProcess`] it
//! returns. A server is not a command: it carries no command's marker, joins no command's
//! cgroup, and no command's sweep ever kills it. It runs in a process group of its own, so
//! stopping it also stops the helpers it started (`npx` → `node`).

use std::io;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::proc_table::read_entry;
use super::registry::{registry, ChildKind};
use super::sweep::sigkill;

/// How long a killed server may take to be reaped before it is left to tokio.
const REAP_LIMIT: Duration = Duration::from_secs(5);

/// Starts MCP server `name`: stdin and stdout piped (the protocol), stderr the daemon's.
pub(crate) fn spawn_server(name: &str, command: &mut Command) -> io::Result<ServerProcess> {
    super::registry::start();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        // Whatever else happens, a dropped handle must not leave the server behind.
        .kill_on_drop(true);
    let mut registry = registry();
    let child = command.spawn()?;
    let pid = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .unwrap_or(0);
    let start_time = read_entry(pid).map(|entry| entry.start_time);
    registry.add_child(
        pid,
        start_time,
        ChildKind::McpServer {
            name: name.to_string(),
        },
    );
    drop(registry);
    Ok(ServerProcess {
        child,
        pid,
        start_time,
        reaped: false,
    })
}

/// A running MCP server. Stop it with [`Self::stop`]; dropped, it is killed with its process
/// group.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    child: Child,
    pid: i32,
    start_time: Option<u64>,
    reaped: bool,
}

impl ServerProcess {
    /// The server's end of the protocol: (its stdout, its stdin). `None` once taken.
    pub(crate) fn take_stdio(&mut self) -> Option<(ChildStdout, ChildStdin)> {
        Some((self.child.stdout.take()?, self.child.stdin.take()?))
    }

    /// Waits up to `grace` for the server to exit by itself (its stdin closed), then kills it
    /// and its process group, and reaps it.
    pub(crate) async fn stop(mut self, grace: Duration) {
        if tokio::time::timeout(grace, self.child.wait())
            .await
            .is_err()
        {
            self.kill_group();
            let _ = tokio::time::timeout(REAP_LIMIT, self.child.wait()).await;
        }
        self.reaped = true;
        registry().remove_child(self.pid, self.start_time);
    }

    /// SIGKILL to the server's process group. Only while it is not reaped: until then its pid,
    /// and so its group, cannot be anyone else's.
    fn kill_group(&self) {
        if self.reaped || self.pid <= 0 {
            return;
        }
        kill_group(self.pid);
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        // tokio kills the server itself (`kill_on_drop`) and reaps it in the background.
        self.kill_group();
        registry().remove_child(self.pid, self.start_time);
    }
}

/// At shutdown: kills every MCP server still registered, with its process group. A server is
/// registered until it has been reaped, so its pid is still its own; the start time guards
/// the moment between tokio's reaping and its removal.
pub(super) fn kill_servers() {
    let servers = registry().servers();
    for (pid, start_time, name) in servers {
        let same = read_entry(pid).is_some_and(|entry| Some(entry.start_time) == start_time);
        if same {
            tracing::debug!(server = %name, "killing an MCP server at shutdown");
            kill_group(pid);
            sigkill(pid);
        }
    }
}

fn kill_group(pgid: i32) {
    // SAFETY: killpg only sends a signal, to a group a server of ours leads; a group already
    // gone yields ESRCH, ignored.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}
