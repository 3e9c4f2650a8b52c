//! The command line of `openturn exec`, shaped like the reference's `codex exec` so the official
//! TypeScript SDK (which spawns `exec --experimental-json … [resume ID] [--image FILE]…`) drives
//! it unchanged. Options are `global` so they are also accepted after `resume ID`, where the SDK
//! puts `--image`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `openturn exec [OPTIONS] [PROMPT]` and `openturn exec [OPTIONS] resume THREAD_ID [PROMPT]`.
#[derive(Debug, Clone, Args)]
#[command(
    args_conflicts_with_subcommands = false,
    subcommand_negates_reqs = true
)]
pub struct ExecArgs {
    /// Print one JSON event per line on stdout instead of text for a person.
    #[arg(long = "json", alias = "experimental-json", global = true)]
    pub json: bool,
    /// With `--json`, also emit `item.updated` with the text so far while an agent message or
    /// reasoning streams.
    #[arg(long, global = true)]
    pub stream: bool,
    /// Model for the thread.
    #[arg(long, short = 'm', global = true)]
    pub model: Option<String>,
    /// `read-only`, `workspace-write` or `danger-full-access` (enforced by the command sandbox).
    #[arg(long, short = 's', global = true, value_name = "MODE")]
    pub sandbox: Option<String>,
    /// Sandbox `workspace-write` (approvals as configured, `on-request` by default): the model
    /// edits and runs commands inside the workspace without asking. Older Codex releases' flag.
    #[arg(long, global = true, conflicts_with = "sandbox")]
    pub full_auto: bool,
    /// No sandbox and no approvals (`danger-full-access`, approval `never`): every command and
    /// patch runs with your full access. Only for a machine or container that is itself the
    /// sandbox.
    #[arg(
        long,
        global = true,
        conflicts_with_all = ["sandbox", "full_auto"]
    )]
    pub dangerously_bypass_approvals_and_sandbox: bool,
    /// Working directory of the thread (default: the current directory).
    #[arg(long = "cd", short = 'C', global = true, value_name = "DIR")]
    pub cd: Option<PathBuf>,
    /// Extra writable directories. Accepted for compatibility; not passed on to the sandbox yet.
    #[arg(long = "add-dir", global = true, value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
    /// Accepted for compatibility: openturn never requires a git repository.
    #[arg(long, global = true)]
    pub skip_git_repo_check: bool,
    /// A JSON Schema file the final answer must follow (sent as the request's `text.format`).
    #[arg(long, global = true, value_name = "FILE")]
    pub output_schema: Option<PathBuf>,
    /// Write the last agent message into this file when the turn completes.
    #[arg(long, short = 'o', global = true, value_name = "FILE")]
    pub output_last_message: Option<PathBuf>,
    /// Do not store the thread (no rollout file).
    #[arg(long, global = true)]
    pub ephemeral: bool,
    /// Run the turn on a running daemon instead of in this process: `ws://HOST:PORT` or
    /// `unix://PATH` (docs/REMOTE.md).
    #[arg(long, global = true, value_name = "ADDR")]
    pub remote: Option<String>,
    /// The environment variable holding the bearer token for `--remote`.
    #[arg(long, global = true, value_name = "VAR", requires = "remote")]
    pub remote_auth_token_env: Option<String>,
    /// Attach an image to the prompt (repeatable).
    #[arg(long, short = 'i', global = true, value_name = "FILE")]
    pub image: Vec<PathBuf>,
    /// Accepted for compatibility with the TypeScript SDK; ignored.
    #[arg(long, global = true, hide = true)]
    pub thread_source: Option<String>,
    /// Accepted for compatibility with the TypeScript SDK; ignored.
    #[arg(long, global = true, hide = true)]
    pub cyber_access_program: Option<String>,
    /// The prompt; read from stdin when absent or `-`.
    pub prompt: Option<String>,
    #[command(subcommand)]
    pub command: Option<ExecCommand>,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ExecCommand {
    /// Continue a stored thread with a new turn.
    Resume {
        /// The id printed by `thread.started`.
        thread_id: String,
        /// The prompt; read from stdin when absent or `-`.
        prompt: Option<String>,
    },
}

impl ExecArgs {
    /// Config overrides exec adds before the configuration is loaded. The API key the
    /// TypeScript SDK passes arrives as `CODEX_API_KEY`; it authenticates the default (OpenAI)
    /// provider, taking precedence over `OPENAI_API_KEY`, as with the reference's exec.
    pub fn config_overrides(&self) -> Vec<String> {
        let mut overrides = Vec::new();
        if std::env::var_os(CODEX_API_KEY_ENV).is_some_and(|key| !key.is_empty()) {
            overrides.push(format!(
                "model_providers.openai.env_key=\"{CODEX_API_KEY_ENV}\""
            ));
        }
        overrides
    }

    /// The thread to resume, if any.
    pub fn resume_thread_id(&self) -> Option<&str> {
        match &self.command {
            Some(ExecCommand::Resume { thread_id, .. }) => Some(thread_id),
            None => None,
        }
    }

    /// The prompt given on the command line; `None` (or `-`) means read stdin.
    pub fn prompt_argument(&self) -> Option<&str> {
        let prompt = match &self.command {
            Some(ExecCommand::Resume { prompt, .. }) => {
                prompt.as_deref().or(self.prompt.as_deref())
            }
            None => self.prompt.as_deref(),
        };
        prompt.filter(|p| *p != "-")
    }
}

/// The environment variable the TypeScript SDK sets to its `apiKey` option.
pub const CODEX_API_KEY_ENV: &str = "CODEX_API_KEY";
