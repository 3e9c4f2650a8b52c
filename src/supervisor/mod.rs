//! The one owner of the daemon's OS children: it starts every command (the model's shell tool,
//! `command/exec`) and every stdio MCP server, knows which child is which, and kills only what
//! descends from a command.
//!
//! The daemon's children are of three kinds ([`registry`]): command leaders, MCP servers, and
//! the children it already had when it started (a wrapper that logs the daemon's stdio through
//! `tee`s makes them its children: `exec openturn "$@" < <(tee in.log) > >(tee out.log)`).
//! Only a command's processes are ever killed by a sweep, and they are found by what each of
//! them carries, never by being "some child nobody registered":
//!
//! - a marker in the environment, `OPENTURN_COMMAND_ID`, unique to the command and inherited by
//!   everything it starts, read from `/proc/<pid>/environ` — it survives `setsid`, `nohup` and
//!   double forks;
//! - a cgroup v2 of its own where the daemon may create one ([`cgroup`]), which also holds what
//!   clears its environment, and `cgroup.kill` ends at once;
//! - the process group its leader created.
//!
//! The daemon is a child subreaper (set by [`start`]), and so is every leader: what a command
//! leaves running is re-parented to its leader while it runs, then to the daemon, which reaps
//! it once killed. MCP servers and the children the daemon started with are never touched by
//! a command's sweep; an MCP server is stopped by its own handle ([`ServerProcess`]), and
//! [`kill_all`] at shutdown ends what is left of both commands and servers, never the children
//! the daemon started with.
//!
//! This layer imports nothing of the crate. Every read of `/proc` and of the cgroup files runs
//! on a blocking thread when the caller is async, except the two small reads a spawn makes of
//! its new child (its start time, its cgroup) beside the fork itself.
//!
//! Not covered: a daemon killed with SIGKILL cannot clean up; what its commands left runs on
//! (in their cgroups, where there are some). Without a cgroup, a process that both clears its
//! environment and leaves its process group is found only while its leader still runs.

mod cgroup;
mod command;
mod proc_table;
mod registry;
mod server;
mod sweep;
mod terminal;
mod usage;

#[allow(
    unused_imports,
    reason = "the plain spawn for callers that wire stdio themselves; today every command goes \
              through `spawn_terminal`"
)]
pub(crate) use command::{spawn_command, CommandTree};
pub use registry::start;
pub(crate) use server::{spawn_server, ServerProcess};
pub(crate) use terminal::{
    spawn_terminal, PtyHandle, Stream, Terminal, TerminalInput, TerminalMode, TerminalSize,
};
pub(crate) use usage::{usage_of, Usage};

/// At shutdown: kills every MCP server still running and everything of every command (leaders
/// included), with their process groups, and reaps what the daemon adopted. The children the
/// daemon started with are left alone.
pub(crate) async fn kill_all() {
    let swept = tokio::task::spawn_blocking(|| {
        server::kill_servers();
        let commands = registry::registry().commands();
        if commands.is_empty() {
            return;
        }
        let records: Vec<_> = commands.iter().map(|(_, record)| record.clone()).collect();
        let sweep = sweep::Sweep::of(&records);
        if sweep.run() {
            sweep.remove_cgroups();
            let mut registry = registry::registry();
            for (key, _) in &commands {
                registry.remove_command(*key);
            }
        } else {
            tracing::warn!("command processes survived the shutdown sweep");
        }
    })
    .await;
    if let Err(error) = swept {
        tracing::warn!(%error, "the shutdown sweep failed");
    }
}
