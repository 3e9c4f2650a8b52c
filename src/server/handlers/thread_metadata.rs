//! `thread/metadata/update`: patches the Git metadata and the Daybreak choice a client stores on
//! a persisted thread (loaded or not), answering the updated thread. openturn has no projects,
//! so a project id can only be cleared. Checks and texts follow the reference's.

use crate::core::{CoreError, ThreadId};
use crate::protocol::thread::ThreadResponse;
use crate::protocol::thread_history::ThreadMetadataUpdateParams;
use crate::rollout::StoredThreadMetadata;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::thread_object::{thread_from_entry, thread_object};
use super::thread_read::find_entry;

pub(crate) async fn thread_metadata_update(
    context: &ServerContext,
    params: ThreadMetadataUpdateParams,
) -> Result<ThreadResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    check(&params)?;
    let loaded = context.threads.get(&thread_id).ok();
    if loaded.as_ref().is_some_and(|thread| thread.ephemeral) {
        return Err(CoreError::NoRollout(thread_id.to_string()).into());
    }
    let Some(mut entry) = find_entry(context, thread_id.as_str()).await? else {
        return Err(CoreError::NoRollout(thread_id.to_string()).into());
    };
    let metadata = patched(entry.metadata.clone().unwrap_or_default(), &params);
    context
        .threads
        .record_thread_metadata(&thread_id, metadata.clone())
        .await?;
    entry.metadata = Some(metadata);
    let status = context.status_of(&thread_id);
    let thread = match &loaded {
        Some(thread) => thread_object(thread, status, Some(&entry)),
        None => thread_from_entry(&entry, status),
    };
    Ok(ThreadResponse { thread })
}

fn check(params: &ThreadMetadataUpdateParams) -> Result<(), HandlerError> {
    if params.git_info.is_none() && params.project_id.is_none() && params.daybreak_enabled.is_none()
    {
        return Err(HandlerError::InvalidRequest(
            "thread metadata update must include at least one field".to_string(),
        ));
    }
    if let Some(git) = &params.git_info {
        for (name, value) in [
            ("branch", &git.branch),
            ("originUrl", &git.origin_url),
            ("sha", &git.sha),
        ] {
            if matches!(value, Some(Some(text)) if text.trim().is_empty()) {
                return Err(HandlerError::InvalidRequest(format!(
                    "gitInfo.{name} must not be empty"
                )));
            }
        }
    }
    match params.project_id.as_deref() {
        Some(project) if !project.is_empty() => Err(HandlerError::InvalidRequest(format!(
            "project not found: {project}"
        ))),
        _ => Ok(()),
    }
}

/// The stored metadata with the params' patch applied (absent leaves, `null` clears).
fn patched(
    mut metadata: StoredThreadMetadata,
    params: &ThreadMetadataUpdateParams,
) -> StoredThreadMetadata {
    if let Some(git) = &params.git_info {
        for (stored, change) in [
            (&mut metadata.git_branch, &git.branch),
            (&mut metadata.git_origin_url, &git.origin_url),
            (&mut metadata.git_sha, &git.sha),
        ] {
            if let Some(change) = change {
                stored.clone_from(change);
            }
        }
    }
    if let Some(enabled) = params.daybreak_enabled {
        metadata.daybreak_enabled = Some(enabled);
    }
    metadata
}

handler!(ThreadMetadataUpdate, |context, params| {
    thread_metadata_update(context, params).await
});
