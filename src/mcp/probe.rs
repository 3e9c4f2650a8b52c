//! Looking at configured servers that no thread runs: each is started as a thread would start
//! it, given its start-up timeout to answer the handshake and list its tools, read, and stopped
//! again before the probe returns. Editors draw their MCP settings this way before any thread
//! exists; what a server offers (or why it could not start) is the answer, and no process
//! outlives the question.

use std::path::Path;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::config::McpServerConfig;
use super::manager::McpServers;
use super::status::McpServerSnapshot;

/// Starts every enabled server of `configs` (in `cwd` unless a server names its own), waits
/// until none is still starting (each at most its start-up timeout, never past `cancel`), and
/// returns each server's state, in the order of `configs`, after stopping them all.
pub async fn probe_servers(
    configs: &[McpServerConfig],
    cwd: &Path,
    cancel: &CancellationToken,
) -> Vec<McpServerSnapshot> {
    // Room for every report a start-up makes (starting, then ready or failed) so that `start`,
    // which sends the first ones before anyone reads, never waits on the channel.
    let (events_tx, mut events_rx) = mpsc::channel(configs.len() * 2 + 1);
    let servers = McpServers::start(configs, cwd, events_tx, cancel.child_token()).await;
    {
        let settled = servers.wait_started(cancel);
        tokio::pin!(settled);
        // Reports are read only to keep the channel moving. A question a server asks while
        // starting is dropped with its event, which declines it: nobody is there to answer.
        loop {
            tokio::select! {
                _ = &mut settled => break,
                event = events_rx.recv() => if event.is_none() { break },
            }
        }
    }
    // From here a report has nowhere to go: sending fails at once instead of waiting.
    drop(events_rx);
    let snapshots = servers.snapshots();
    servers.shutdown().await;
    snapshots
}
