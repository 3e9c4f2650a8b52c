//! `fs/*`: a client's file operations, held to the client's roots ([`super::super::file_roots`])
//! and done by the confined writer, off the async threads. Paths must be absolute; contents are
//! base64 both ways. Refusals (outside the roots, through a link, not a file) are `-32600`
//! naming the path; file system failures are `-32603` naming it.

use base64::Engine;

use crate::protocol::fs::{
    FsCopyParams, FsCreateDirectoryParams, FsGetMetadataParams, FsGetMetadataResponse,
    FsReadDirectoryEntry, FsReadDirectoryParams, FsReadDirectoryResponse, FsReadFileParams,
    FsReadFileResponse, FsRemoveParams, FsUnwatchParams, FsWatchParams, FsWatchResponse,
    FsWriteFileParams,
};
use crate::protocol::turn::EmptyResponse;
use crate::sandbox::{EntryKind, TreeError, WriteDenied, WriteError};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::super::file_roots::{absolute_param, client_writer};
use super::super::fs_watch::WatchTarget;
use super::thread_read::blocking;

/// A refusal the client can act on (`-32600`), or a file system failure (`-32603`).
pub(super) fn write_error(error: WriteError) -> HandlerError {
    match error {
        WriteError::Denied(WriteDenied::Outside { path, roots }) => {
            HandlerError::InvalidRequest(format!(
                "`{}` is outside the roots this client may use ({})",
                path.display(),
                roots
                    .iter()
                    .map(|root| root.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
        WriteError::Io { .. } => HandlerError::Internal(error.to_string()),
        WriteError::Denied(_)
        | WriteError::ThroughLink { .. }
        | WriteError::NotAFile { .. }
        | WriteError::BadPath { .. } => HandlerError::InvalidRequest(error.to_string()),
    }
}

fn tree_error(error: TreeError) -> HandlerError {
    match error {
        TreeError::Write(inner) => write_error(inner),
        other => HandlerError::InvalidRequest(other.to_string()),
    }
}

async fn fs_read_file(
    context: &ServerContext,
    params: FsReadFileParams,
) -> Result<FsReadFileResponse, HandlerError> {
    let path = absolute_param("path", &params.path)?;
    let writer = client_writer(context);
    let content = blocking(move || writer.read_file(&path))
        .await?
        .map_err(write_error)?;
    Ok(FsReadFileResponse {
        data_base64: base64::engine::general_purpose::STANDARD.encode(content),
    })
}

async fn fs_write_file(
    context: &ServerContext,
    params: FsWriteFileParams,
) -> Result<EmptyResponse, HandlerError> {
    let path = absolute_param("path", &params.path)?;
    let content = base64::engine::general_purpose::STANDARD
        .decode(params.data_base64.as_bytes())
        .map_err(|error| {
            HandlerError::InvalidParams(format!("`dataBase64` is not valid base64: {error}"))
        })?;
    let writer = client_writer(context);
    blocking(move || writer.write_file(&path, &content))
        .await?
        .map_err(tree_error)?;
    Ok(EmptyResponse {})
}

async fn fs_get_metadata(
    context: &ServerContext,
    params: FsGetMetadataParams,
) -> Result<FsGetMetadataResponse, HandlerError> {
    let path = absolute_param("path", &params.path)?;
    let writer = client_writer(context);
    let metadata = blocking(move || writer.metadata(&path))
        .await?
        .map_err(write_error)?;
    Ok(FsGetMetadataResponse {
        is_directory: metadata.kind == EntryKind::Directory,
        is_file: metadata.kind == EntryKind::File,
        is_symlink: metadata.kind == EntryKind::Symlink,
        created_at_ms: metadata.created_ms,
        modified_at_ms: metadata.modified_ms,
    })
}

async fn fs_read_directory(
    context: &ServerContext,
    params: FsReadDirectoryParams,
) -> Result<FsReadDirectoryResponse, HandlerError> {
    let path = absolute_param("path", &params.path)?;
    let writer = client_writer(context);
    let entries = blocking(move || writer.read_directory(&path))
        .await?
        .map_err(write_error)?;
    Ok(FsReadDirectoryResponse {
        entries: entries
            .into_iter()
            .map(|(file_name, kind)| FsReadDirectoryEntry {
                file_name,
                is_directory: kind == EntryKind::Directory,
                is_file: kind == EntryKind::File,
            })
            .collect(),
    })
}

async fn fs_create_directory(
    context: &ServerContext,
    params: FsCreateDirectoryParams,
) -> Result<EmptyResponse, HandlerError> {
    let path = absolute_param("path", &params.path)?;
    let recursive = params.recursive.unwrap_or(true);
    let writer = client_writer(context);
    blocking(move || writer.create_directory(&path, recursive))
        .await?
        .map_err(write_error)?;
    Ok(EmptyResponse {})
}

async fn fs_remove(
    context: &ServerContext,
    params: FsRemoveParams,
) -> Result<EmptyResponse, HandlerError> {
    let path = absolute_param("path", &params.path)?;
    let (recursive, force) = (
        params.recursive.unwrap_or(true),
        params.force.unwrap_or(true),
    );
    let writer = client_writer(context);
    blocking(move || writer.remove_path(&path, recursive, force))
        .await?
        .map_err(tree_error)?;
    Ok(EmptyResponse {})
}

async fn fs_copy(
    context: &ServerContext,
    params: FsCopyParams,
) -> Result<EmptyResponse, HandlerError> {
    let source = absolute_param("sourcePath", &params.source_path)?;
    let destination = absolute_param("destinationPath", &params.destination_path)?;
    let writer = client_writer(context);
    blocking(move || writer.copy_path(&source, &destination, params.recursive))
        .await?
        .map_err(tree_error)?;
    Ok(EmptyResponse {})
}

/// Watches an existing file or directory inside the roots (reached without links), or, for a
/// path that does not exist yet, its parent narrowed to it, as the reference accepts those.
async fn fs_watch(
    context: &ServerContext,
    params: FsWatchParams,
) -> Result<FsWatchResponse, HandlerError> {
    let path = absolute_param("path", &params.path)?;
    let writer = client_writer(context);
    let checked = path.clone();
    let target = blocking(move || -> Result<WatchTarget, HandlerError> {
        match writer.metadata(&checked) {
            Ok(metadata) if metadata.kind == EntryKind::Symlink => {
                Err(write_error(WriteError::ThroughLink { path: checked }))
            }
            Ok(_) => Ok(WatchTarget {
                watched: checked.canonicalize().unwrap_or(checked),
                only: None,
            }),
            Err(WriteError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                let parent = checked.parent().map(std::path::Path::to_path_buf);
                let parent = parent.ok_or_else(|| {
                    write_error(WriteError::BadPath {
                        path: checked.clone(),
                    })
                })?;
                let kind = writer.metadata(&parent).map_err(write_error)?.kind;
                if kind != EntryKind::Directory {
                    return Err(write_error(WriteError::NotAFile { path: parent }));
                }
                let parent = parent.canonicalize().unwrap_or(parent);
                let name = checked.file_name().unwrap_or_default();
                Ok(WatchTarget {
                    only: Some(parent.join(name)),
                    watched: parent,
                })
            }
            Err(error) => Err(write_error(error)),
        }
    })
    .await??;
    let reported = target
        .only
        .clone()
        .unwrap_or_else(|| target.watched.clone());
    context
        .fs_watches
        .start(&params.watch_id, target, context.outgoing.clone())
        .map_err(|error| HandlerError::InvalidRequest(error.to_string()))?;
    Ok(FsWatchResponse {
        path: reported.to_string_lossy().into_owned(),
    })
}

handler!(FsReadFile, |context, params| fs_read_file(context, params)
    .await);
handler!(FsWriteFile, |context, params| fs_write_file(
    context, params
)
.await);
handler!(FsGetMetadata, |context, params| fs_get_metadata(
    context, params
)
.await);
handler!(FsReadDirectory, |context, params| fs_read_directory(
    context, params
)
.await);
handler!(FsCreateDirectory, |context, params| fs_create_directory(
    context, params
)
.await);
handler!(FsRemove, |context, params| fs_remove(context, params).await);
handler!(FsCopy, |context, params| fs_copy(context, params).await);
handler!(FsWatch, |context, params| fs_watch(context, params).await);
handler!(FsUnwatch, |context, params| {
    let FsUnwatchParams { watch_id } = params;
    context.fs_watches.stop(&watch_id);
    Ok::<_, HandlerError>(EmptyResponse {})
});
