//! What one exec run was asked for — prompt (argument or stdin), output schema, images, working
//! directory, sandbox mode — read and checked before the server starts, so a bad option fails
//! with an error naming it and nothing is sent.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::protocol::common::{AskForApproval, SandboxMode};

use super::args::ExecArgs;
use super::error::ExecError;

/// What the command line asked for, read and checked before the server starts.
pub struct Inputs {
    pub prompt: String,
    pub output_schema: Option<Value>,
    pub images: Vec<PathBuf>,
    pub cwd: PathBuf,
    pub sandbox: Option<SandboxMode>,
    /// `never` under `--dangerously-bypass-approvals-and-sandbox`; the configuration's
    /// otherwise.
    pub approval_policy: Option<AskForApproval>,
}

impl Inputs {
    /// Reads and checks every input; nothing has started yet when this fails.
    pub fn read(args: &ExecArgs) -> Result<Inputs, ExecError> {
        let current = std::env::current_dir().map_err(|source| ExecError::BadDirectory {
            path: PathBuf::from("."),
            source,
        })?;
        let cwd = match &args.cd {
            Some(dir) => {
                current
                    .join(dir)
                    .canonicalize()
                    .map_err(|source| ExecError::BadDirectory {
                        path: dir.clone(),
                        source,
                    })?
            }
            None => current.clone(),
        };
        if !cwd.is_dir() {
            return Err(ExecError::BadDirectory {
                path: cwd,
                source: std::io::Error::other("not a directory"),
            });
        }
        let sandbox = args
            .sandbox
            .as_deref()
            .map(|mode| {
                serde_json::from_value(json!(mode)).map_err(|_| ExecError::BadSandbox(mode.into()))
            })
            .transpose()?;
        let (sandbox, approval_policy) = if args.dangerously_bypass_approvals_and_sandbox {
            (
                Some(SandboxMode::DangerFullAccess),
                Some(AskForApproval::Never),
            )
        } else if args.full_auto {
            (Some(SandboxMode::WorkspaceWrite), None)
        } else {
            (sandbox, None)
        };
        let output_schema = args
            .output_schema
            .as_deref()
            .map(read_output_schema)
            .transpose()?;
        let prompt = match args.prompt_argument() {
            Some(prompt) => prompt.to_string(),
            None => read_stdin_prompt()?,
        };
        if prompt.trim().is_empty() {
            return Err(ExecError::NoPrompt);
        }
        Ok(Inputs {
            prompt,
            output_schema,
            // Relative image paths are the caller's, so they resolve against where exec was run.
            images: args.image.iter().map(|path| current.join(path)).collect(),
            cwd,
            sandbox,
            approval_policy,
        })
    }
}

fn read_stdin_prompt() -> Result<String, ExecError> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(ExecError::NoPrompt);
    }
    let mut prompt = String::new();
    stdin
        .read_to_string(&mut prompt)
        .map_err(ExecError::ReadStdin)?;
    Ok(prompt)
}

fn read_output_schema(path: &Path) -> Result<Value, ExecError> {
    let error = |reason: String| ExecError::OutputSchema {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
    let schema: Value =
        serde_json::from_str(&text).map_err(|e| error(format!("not JSON ({e})")))?;
    if !schema.is_object() {
        return Err(error("a JSON Schema must be an object".to_string()));
    }
    Ok(schema)
}
