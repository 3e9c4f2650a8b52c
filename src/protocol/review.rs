//! `review/start`: a code review as a turn of a thread (or of a new thread, `detached`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::turn::Turn;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStartParams {
    pub thread_id: String,
    pub target: ReviewTarget,
    /// `inline` (the default) runs the review on `threadId`; `detached` runs it on a new
    /// thread started for it, which the response names.
    #[serde(default)]
    pub delivery: Option<ReviewDelivery>,
}

/// What to review, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ReviewTarget {
    /// Staged, unstaged and untracked changes.
    UncommittedChanges,
    /// The current branch's changes since it left `branch`.
    BaseBranch { branch: String },
    /// One commit's changes; `title` only labels it.
    Commit {
        sha: String,
        #[serde(default)]
        title: Option<String>,
    },
    /// Free-form review instructions.
    Custom { instructions: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ReviewDelivery {
    Inline,
    Detached,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStartResponse {
    pub turn: Turn,
    /// The thread the review runs on: `threadId`, or the new thread of a `detached` review.
    pub review_thread_id: String,
}
