//! `permissionProfile/list`: a small read-only answer editor bridges ask for while opening a
//! session.

use crate::protocol::permission_profile::{
    PermissionProfileListParams, PermissionProfileListResponse, PermissionProfileSummary,
};

use super::super::errors::HandlerError;

/// openturn's profiles are its three sandbox modes, under the ids the reference gives its
/// built-in profiles. Every one is allowed: nothing in openturn's configuration restricts them.
const PROFILES: &[(&str, &str)] = &[
    (":read-only", "sandbox_mode = \"read-only\""),
    (":workspace", "sandbox_mode = \"workspace-write\""),
    (
        ":danger-full-access",
        "sandbox_mode = \"danger-full-access\"",
    ),
];

pub(crate) fn permission_profile_list(
    params: PermissionProfileListParams,
) -> Result<PermissionProfileListResponse, HandlerError> {
    let start = match params.cursor.as_deref() {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|start| *start <= PROFILES.len())
            .ok_or_else(|| {
                HandlerError::InvalidParams(format!("`cursor`: invalid cursor `{cursor}`"))
            })?,
    };
    let limit = match params.limit {
        Some(0) => {
            return Err(HandlerError::InvalidParams(
                "`limit` must be at least 1".to_string(),
            ))
        }
        Some(limit) => limit as usize,
        None => PROFILES.len(),
    };
    let end = (start + limit).min(PROFILES.len());
    let data = PROFILES[start..end]
        .iter()
        .map(|(id, description)| PermissionProfileSummary {
            id: id.to_string(),
            description: Some(description.to_string()),
            allowed: true,
        })
        .collect();
    Ok(PermissionProfileListResponse {
        data,
        next_cursor: (end < PROFILES.len()).then(|| end.to_string()),
    })
}

handler!(PermissionProfileList, |_context, params| {
    permission_profile_list(params)
});
