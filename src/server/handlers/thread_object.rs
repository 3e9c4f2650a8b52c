//! `Thread` protocol objects, from a loaded thread or a persisted thread's index entry: what
//! the thread methods that hand out a thread and the ones that only read it share. A sub-agent's
//! thread also reads as a child: `parentThreadId`, `agentNickname`, `threadSource: "subagent"`
//! and a `source` of `{"subAgent": {"thread_spawn": …}}`.

use std::io::{BufRead, BufReader};
use std::path::Path;

use serde_json::json;

use crate::core::agents::{origin_in, AgentOrigin, SUBAGENT_SOURCE_KIND};
use crate::core::Thread;
use crate::protocol::thread::{self as proto, ThreadStatus};
use crate::rollout::{IndexEntry, RolloutItem, RolloutLine, StoredThreadMetadata};

/// A persisted thread as a protocol object (turns empty).
pub(crate) fn thread_from_entry(entry: &IndexEntry, status: ThreadStatus) -> proto::Thread {
    let mut object = entry_object(entry, status);
    describe_persisted_child(&mut object, entry);
    object
}

fn entry_object(entry: &IndexEntry, status: ThreadStatus) -> proto::Thread {
    proto::Thread {
        id: entry.id.clone(),
        session_id: entry.id.clone(),
        preview: entry.preview.clone(),
        ephemeral: false,
        model_provider: entry.model_provider.clone(),
        model: entry.model.clone(),
        reasoning_effort: None,
        created_at: entry.created_at,
        updated_at: entry.updated_at,
        recency_at: Some(entry.updated_at),
        status,
        path: Some(entry.path.display().to_string()),
        cwd: entry.cwd.clone(),
        cli_version: entry.cli_version.clone(),
        source: serde_json::json!(source_kind(entry)),
        originator: entry.originator.clone(),
        name: entry.name.clone(),
        forked_from_id: entry.forked_from_id.clone(),
        parent_thread_id: None,
        agent_nickname: None,
        agent_role: None,
        git_info: entry.metadata.as_ref().and_then(git_info),
        project_id: None,
        section: None,
        section_entered_at: None,
        thread_source: None,
        history_mode: "paginated".to_string(),
        turns: Vec::new(),
        environments: vec![local_environment(&entry.cwd)],
        can_accept_direct_input: true,
        extra: None,
        attached_to_thread_id: None,
        daybreak_enabled: entry.metadata.as_ref().and_then(|m| m.daybreak_enabled),
    }
}

/// The stored Git metadata as the protocol's `gitInfo`; none when nothing is stored.
fn git_info(metadata: &StoredThreadMetadata) -> Option<serde_json::Value> {
    let StoredThreadMetadata {
        git_branch,
        git_origin_url,
        git_sha,
        ..
    } = metadata;
    if git_branch.is_none() && git_origin_url.is_none() && git_sha.is_none() {
        return None;
    }
    Some(serde_json::json!({"branch": git_branch, "originUrl": git_origin_url, "sha": git_sha}))
}

/// The one environment an openturn thread runs in: this machine, at the thread's cwd.
pub(crate) fn local_environment(cwd: &str) -> proto::ThreadEnvironment {
    proto::ThreadEnvironment {
        environment_id: "local".to_string(),
        cwd: cwd.to_string(),
        runtime_workspace_roots: vec![cwd.to_string()],
    }
}

/// The protocol's source kind; app-server threads read as `vscode`, as the reference reports.
pub(super) fn source_kind(entry: &IndexEntry) -> &str {
    match entry.source.as_deref() {
        None | Some("appServer") => "vscode",
        Some(other) => other,
    }
}

/// A loaded thread as a protocol object; the persisted entry, when known, supplies the fields
/// that live state does not keep (preview, last update).
pub(crate) fn thread_object(
    thread: &Thread,
    status: ThreadStatus,
    entry: Option<&IndexEntry>,
) -> proto::Thread {
    let settings = thread.settings();
    let mut object = match entry {
        Some(entry) => thread_from_entry(entry, status),
        None => proto::Thread {
            id: thread.id.to_string(),
            session_id: thread.id.to_string(),
            preview: String::new(),
            ephemeral: thread.ephemeral,
            model_provider: String::new(),
            model: None,
            reasoning_effort: None,
            created_at: thread.created_at,
            updated_at: thread.created_at,
            recency_at: Some(thread.created_at),
            status,
            path: None,
            cwd: String::new(),
            cli_version: env!("CARGO_PKG_VERSION").to_string(),
            source: serde_json::json!("vscode"),
            originator: Some(settings.originator.clone()).filter(|o| !o.is_empty()),
            name: None,
            forked_from_id: thread.forked_from_id.clone(),
            parent_thread_id: None,
            agent_nickname: None,
            agent_role: None,
            git_info: None,
            project_id: None,
            section: None,
            section_entered_at: None,
            thread_source: None,
            history_mode: "paginated".to_string(),
            turns: Vec::new(),
            environments: Vec::new(),
            can_accept_direct_input: true,
            extra: None,
            attached_to_thread_id: None,
            daybreak_enabled: None,
        },
    };
    object.ephemeral = thread.ephemeral;
    object.model_provider = settings.provider.id.clone();
    object.model = Some(settings.model.clone());
    object.reasoning_effort = settings.reasoning_effort.clone();
    object.cwd = settings.cwd.display().to_string();
    object.environments = vec![local_environment(&object.cwd)];
    object.path = thread.rollout_path().map(|p| p.display().to_string());
    object.name = thread.name();
    if let Some(origin) = thread.origin() {
        describe_child(&mut object, origin);
    }
    object
}

/// Fills a child's fields of its `Thread` object.
fn describe_child(object: &mut proto::Thread, origin: &AgentOrigin) {
    object.parent_thread_id = Some(origin.parent_thread_id.to_string());
    object.agent_nickname.clone_from(&origin.nickname);
    object.thread_source = Some(json!("subagent"));
    object.source = json!({"subAgent": {"thread_spawn": {
        "parent_thread_id": origin.parent_thread_id.to_string(),
        "depth": origin.depth,
        "agent_nickname": origin.nickname,
        "agent_path": null,
        "agent_role": null,
    }}});
}

/// Fills a persisted child's fields from the head of its rollout (the origin is its second
/// line; the index keeps only the source kind). A rollout that cannot say reads as `unknown`.
fn describe_persisted_child(object: &mut proto::Thread, entry: &IndexEntry) {
    if entry.source.as_deref() != Some(SUBAGENT_SOURCE_KIND) {
        return;
    }
    match origin_in_head(&entry.path) {
        Some(origin) => describe_child(object, &origin),
        None => object.source = json!("unknown"),
    }
}

/// How many lines of a rollout's head are read for a child's origin.
const HEAD_LINES: usize = 4;

fn origin_in_head(path: &Path) -> Option<AgentOrigin> {
    let file = std::fs::File::open(path).ok()?;
    let items: Vec<RolloutItem> = BufReader::new(file)
        .lines()
        .take(HEAD_LINES)
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<RolloutLine>(&line).ok())
        .map(|line| line.item)
        .collect();
    origin_in(&items)
}
