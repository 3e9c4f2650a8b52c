//! How a thread serves as the environment of its turns' tools: settings, session approvals,
//! sandbox warnings, MCP servers and the goal, read and recorded on the thread's state.
//!
//! Kept apart from `thread.rs` because the MCP servers are the thread's MCP glue's, which itself
//! builds on the thread; nothing imports this file (it only implements).

use std::sync::Arc;

use crate::mcp::McpServers;

use super::clock::now_unix_seconds;
use super::goal::model::{Goal, GoalError, GoalRuntime};
use super::settings::ThreadSettings;
use super::thread::Thread;
use super::tools::handle::{ApprovalKey, ToolEnvironment};

impl ToolEnvironment for Thread {
    fn settings(&self) -> ThreadSettings {
        Thread::settings(self)
    }

    fn approved_for_session(&self, key: &ApprovalKey) -> bool {
        self.state().approved_commands.contains(key)
    }

    fn approve_for_session(&self, key: ApprovalKey) {
        self.state().approved_commands.insert(key);
    }

    fn first_sandbox_warning(&self, sandbox: &'static str) -> bool {
        self.state().sandbox_warnings.insert(sandbox)
    }

    fn mcp_servers(&self) -> Option<Arc<McpServers>> {
        Thread::mcp_servers(self).cloned()
    }

    fn terminals(&self) -> Arc<dyn std::any::Any + Send + Sync> {
        self.terminals.clone()
    }

    fn thread_id(&self) -> String {
        self.id.to_string()
    }

    fn agents(&self) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        let control = super::agents::control_of(self)?;
        let thread: Arc<dyn std::any::Any + Send + Sync> = control.thread(&self.id)?;
        Some(thread)
    }

    fn with_goal(
        &self,
        change: &mut dyn FnMut(&mut GoalRuntime, i64, i64) -> Result<Goal, GoalError>,
    ) -> Result<Goal, GoalError> {
        let mut state = self.state();
        let total = state.total_usage.total_tokens;
        change(&mut state.goal, now_unix_seconds(), total)
    }
}
