//! `skills/list` and `skills/extraRoots/set`: the skills on disk, as `core::skills` finds them.

use std::path::PathBuf;

use crate::core::skills::{is_enabled, list_skills, SkillListing, SkillToggle};
use crate::protocol::skills::{
    SkillErrorInfo, SkillMetadata, SkillsExtraRootsSetParams, SkillsListEntry, SkillsListParams,
    SkillsListResponse,
};
use crate::protocol::turn::EmptyResponse;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;

/// The user skill folders for this connection: `$OPENTURN_HOME/skills`, then any extra roots
/// the client set.
pub(crate) fn user_skill_roots(context: &ServerContext) -> Vec<PathBuf> {
    let mut roots = vec![context.config.home.join("skills")];
    roots.extend(context.connection().skill_extra_roots.iter().cloned());
    roots
}

pub(crate) async fn skills_list(
    context: &ServerContext,
    params: SkillsListParams,
) -> Result<SkillsListResponse, HandlerError> {
    let mut cwds: Vec<PathBuf> = params
        .cwds
        .unwrap_or_default()
        .into_iter()
        .map(PathBuf::from)
        .collect();
    if let Some(relative) = cwds.iter().find(|cwd| !cwd.is_absolute()) {
        return Err(HandlerError::InvalidParams(format!(
            "`cwds`: `{}` is not an absolute path",
            relative.display()
        )));
    }
    if cwds.is_empty() {
        cwds.push(std::env::current_dir().map_err(|e| HandlerError::Internal(e.to_string()))?);
    }
    let roots = user_skill_roots(context);
    // Read again: `skills/config/write` may have changed the toggles since start-up.
    let toggles = context.config.reloaded()?.skill_toggles();
    let data = tokio::task::spawn_blocking(move || {
        cwds.into_iter()
            .map(|cwd| {
                let listing = list_skills(&roots, &cwd);
                entry(cwd.display().to_string(), listing, &toggles)
            })
            .collect()
    })
    .await
    .map_err(|error| HandlerError::Internal(error.to_string()))?;
    Ok(SkillsListResponse { data })
}

fn entry(cwd: String, listing: SkillListing, toggles: &[SkillToggle]) -> SkillsListEntry {
    SkillsListEntry {
        cwd,
        skills: listing
            .skills
            .into_iter()
            .map(|skill| SkillMetadata {
                enabled: is_enabled(&skill, toggles),
                name: skill.name,
                description: skill.description,
                short_description: skill.short_description,
                path: skill.path.display().to_string(),
                scope: skill.scope.as_str().to_string(),
                plugin_id: None,
            })
            .collect(),
        errors: listing
            .errors
            .into_iter()
            .map(|error| SkillErrorInfo {
                path: error.path.display().to_string(),
                message: error.message,
            })
            .collect(),
    }
}

/// Replaces this connection's extra user skill folders. They must be absolute; they need not
/// exist yet (a missing folder simply holds no skills).
pub(crate) fn skills_extra_roots_set(
    context: &ServerContext,
    params: SkillsExtraRootsSetParams,
) -> Result<EmptyResponse, HandlerError> {
    let roots: Vec<PathBuf> = params.extra_roots.iter().map(PathBuf::from).collect();
    if let Some(relative) = roots.iter().find(|root| !root.is_absolute()) {
        return Err(HandlerError::InvalidParams(format!(
            "`extraRoots`: `{}` is not an absolute path",
            relative.display()
        )));
    }
    context.connection().skill_extra_roots = roots;
    Ok(EmptyResponse {})
}

handler!(SkillsList, |context, params| skills_list(context, params)
    .await);
handler!(SkillsExtraRootsSet, |context, params| {
    skills_extra_roots_set(context, params)
});
