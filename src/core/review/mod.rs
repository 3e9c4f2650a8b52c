//! Code review (`review/start`): what a review looks at ([`ReviewTarget`]), the prompt and
//! label each target gets ([`ReviewRequest::resolve`]), and how the reviewer's JSON answer
//! becomes the text the client shows ([`render`]). The turn that runs a review is
//! `turn/review.rs`; the reviewer's standing instructions are `guidelines.md`.

mod output;

pub(crate) use output::history_note;
pub use output::render;

use std::path::Path;

/// The reviewer's instructions, sent as a developer message at the head of the review's fresh
/// context.
pub(crate) const REVIEW_GUIDELINES: &str = include_str!("guidelines.md");

/// What to review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewTarget {
    /// Staged, unstaged and untracked changes of the working tree.
    UncommittedChanges,
    /// What the current branch changed since it left `branch`.
    BaseBranch { branch: String },
    /// What one commit changed; `title` (its subject, say) only labels it.
    Commit { sha: String, title: Option<String> },
    /// Whatever the instructions ask.
    Custom { instructions: String },
}

/// Why a review target cannot be reviewed; names the params field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`target.{field}` must not be empty")]
pub struct EmptyTargetField {
    pub field: &'static str,
}

/// A review ready to run: the prompt the reviewer gets and the short label the client shows
/// (the `enteredReviewMode` item's `review`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRequest {
    pub prompt: String,
    pub label: String,
}

impl ReviewRequest {
    /// The prompt and label of `target`, for a repository at `cwd`. A base branch is compared
    /// from the commit where the current branch left it (`git merge-base`), which the prompt
    /// names when git can find it.
    pub async fn resolve(
        target: ReviewTarget,
        cwd: &Path,
    ) -> Result<ReviewRequest, EmptyTargetField> {
        Ok(match target {
            ReviewTarget::UncommittedChanges => ReviewRequest {
                prompt: "Review the changes not yet committed in this repository (staged, \
                         unstaged and untracked files) and report prioritized findings."
                    .to_string(),
                label: "current changes".to_string(),
            },
            ReviewTarget::BaseBranch { branch } => {
                let branch = non_empty(branch, "branch")?;
                let prompt = match merge_base(cwd, &branch).await {
                    Some(base) => format!(
                        "Review what this branch changed relative to the base branch '{branch}'. \
                         It left '{branch}' at commit {base}; `git diff {base}` shows every \
                         change since. Report prioritized, actionable findings."
                    ),
                    None => format!(
                        "Review what this branch changed relative to the base branch '{branch}'. \
                         First find the commit where the two diverged (`git merge-base HEAD \
                         {branch}`, or against its upstream), then diff from it. Report \
                         prioritized, actionable findings."
                    ),
                };
                ReviewRequest {
                    prompt,
                    label: format!("changes against '{branch}'"),
                }
            }
            ReviewTarget::Commit { sha, title } => {
                let sha = non_empty(sha, "sha")?;
                let title = title.filter(|title| !title.trim().is_empty());
                let short: String = sha.chars().take(7).collect();
                let (prompt, label) = match &title {
                    Some(title) => (
                        format!(
                            "Review the changes made by commit {sha} (\"{title}\"). Report \
                             prioritized, actionable findings."
                        ),
                        format!("commit {short}: {title}"),
                    ),
                    None => (
                        format!(
                            "Review the changes made by commit {sha}. Report prioritized, \
                             actionable findings."
                        ),
                        format!("commit {short}"),
                    ),
                };
                ReviewRequest { prompt, label }
            }
            ReviewTarget::Custom { instructions } => {
                let instructions = non_empty(instructions, "instructions")?;
                ReviewRequest {
                    prompt: instructions.clone(),
                    label: instructions,
                }
            }
        })
    }
}

fn non_empty(value: String, field: &'static str) -> Result<String, EmptyTargetField> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(EmptyTargetField { field });
    }
    Ok(trimmed.to_string())
}

/// The commit where `HEAD` left `branch`, when `cwd` is a git repository that has both.
async fn merge_base(cwd: &Path, branch: &str) -> Option<String> {
    let output = tokio::process::Command::new("git")
        .arg("merge-base")
        .arg("HEAD")
        // `--` would end the revisions here; a branch name starting with `-` is refused by git.
        .arg(branch)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let base = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (!base.is_empty()).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_target_gets_its_label_and_empty_fields_are_named() {
        let cwd = Path::new("/");
        let commit = ReviewRequest::resolve(
            ReviewTarget::Commit {
                sha: "0123456789abcdef".into(),
                title: Some("Fix it".into()),
            },
            cwd,
        )
        .await
        .unwrap();
        assert_eq!(commit.label, "commit 0123456: Fix it");
        assert!(
            commit.prompt.contains("0123456789abcdef"),
            "{}",
            commit.prompt
        );
        let custom = ReviewRequest::resolve(
            ReviewTarget::Custom {
                instructions: "  look at the tests ".into(),
            },
            cwd,
        )
        .await
        .unwrap();
        assert_eq!(custom.prompt, "look at the tests");
        let empty =
            ReviewRequest::resolve(ReviewTarget::BaseBranch { branch: " ".into() }, cwd).await;
        assert_eq!(empty, Err(EmptyTargetField { field: "branch" }));
    }
}
