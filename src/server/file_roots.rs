//! Which directories a client's file methods (`fs/*`, `fuzzyFileSearch`) may reach, and the
//! confined writer they all go through.
//!
//! The roots are the workspace the daemon serves (its working directory and the configured
//! `[sandbox_workspace_write] writable_roots`) and, for each thread this connection is
//! subscribed to, that thread's cwd and writable roots. The reference lets these methods reach
//! the whole host; openturn holds them to the directories the client is already working in, so
//! a client (or a page it renders) cannot read keys from the home directory or write outside
//! the project. Reads are held to the same roots as writes. Inside the roots nothing is
//! protected: `.git` is the user's to edit through their own editor.

use std::path::{Path, PathBuf};

use crate::sandbox::{ConfinedWriter, WritableArea};

use super::context::ServerContext;
use super::errors::HandlerError;

/// The directories this connection's file methods may reach (absolute, possibly missing).
pub(crate) fn client_roots(context: &ServerContext) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.push(cwd);
    }
    roots.extend(context.config.sandbox_writable_roots.iter().cloned());
    let subscribed: Vec<_> = context.loaded().subscribed.iter().cloned().collect();
    for thread_id in subscribed {
        if let Ok(thread) = context.threads.get(&thread_id) {
            let settings = thread.settings();
            roots.push(settings.cwd);
            roots.extend(settings.sandbox_writable_roots);
        }
    }
    roots.retain(|root| root.is_absolute());
    roots.sort();
    roots.dedup();
    roots
}

/// A writer confined to [`client_roots`].
pub(crate) fn client_writer(context: &ServerContext) -> ConfinedWriter {
    ConfinedWriter::new(&WritableArea::of_roots(&client_roots(context)))
}

/// A path parameter: it must be absolute (the reference's `AbsolutePathBuf`); the error names
/// the field.
pub(crate) fn absolute_param(field: &str, value: &str) -> Result<PathBuf, HandlerError> {
    let path = Path::new(value);
    if value.is_empty() || !path.is_absolute() {
        return Err(HandlerError::InvalidParams(format!(
            "`{field}` must be an absolute path, got `{value}`"
        )));
    }
    Ok(path.to_path_buf())
}
