//! Patches sent as shell commands. Models trained on a shell tool also write
//! `apply_patch <<'EOF'` … `EOF` to `exec_command`, sometimes after `cd dir &&`, sometimes
//! wrapped in `bash -lc "…"`. Such a command is applied as a patch (the same tool, item and
//! gating) instead of running a process: there is no `apply_patch` program to run, and a patch
//! must never bypass the writable-roots check by going through a shell.
//!
//! Only a command that is exactly one of these shapes is taken; anything more (a second command,
//! a pipe, a variable the outer shell would expand) runs as a command like any other.

/// A patch found in a shell command, and the directory its paths are relative to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellPatch {
    pub patch: String,
    /// The `cd` target before the heredoc, relative to the command's directory or absolute.
    pub dir: Option<String>,
}

/// The patch in `cmd` when the whole command is an `apply_patch` heredoc, optionally after
/// `cd DIR &&`, optionally as the script of `bash|sh|zsh -c|-lc '…'` (or `"…"`).
pub(crate) fn shell_patch(cmd: &str) -> Option<ShellPatch> {
    let script = unwrap_shell(cmd.trim()).unwrap_or_else(|| cmd.trim().to_string());
    let (dir, rest) = match strip_cd(&script) {
        Some((dir, rest)) => (Some(dir), rest),
        None => (None, script.as_str()),
    };
    heredoc_body(rest).map(|patch| ShellPatch { patch, dir })
}

/// The script of `SHELL -c|-lc 'SCRIPT'` / `"SCRIPT"` when that is the whole command.
fn unwrap_shell(cmd: &str) -> Option<String> {
    let (program, rest) = cmd.split_once(char::is_whitespace)?;
    let name = program.rsplit('/').next().unwrap_or(program);
    if !matches!(name, "bash" | "sh" | "zsh") {
        return None;
    }
    let (flag, quoted) = rest.trim_start().split_once(char::is_whitespace)?;
    if !matches!(flag, "-c" | "-lc") {
        return None;
    }
    unquote_whole(quoted.trim())
}

/// One shell word in single or double quotes spanning all of `text`, unquoted. Double quotes
/// holding `$` or a backquote are not taken: the outer shell would expand them first.
fn unquote_whole(text: &str) -> Option<String> {
    if let Some(inner) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        return (!inner.contains('\'')).then(|| inner.to_string());
    }
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next @ ('"' | '\\' | '$' | '`')) => out.push(next),
                Some('\n') => {}
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => return None,
            },
            '"' | '$' | '`' => return None,
            other => out.push(other),
        }
    }
    Some(out)
}

/// `cd DIR && REST` with a plain or single-quoted DIR.
fn strip_cd(script: &str) -> Option<(String, &str)> {
    let rest = script.strip_prefix("cd")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim_start();
    let (dir, rest) = if let Some(quoted) = rest.strip_prefix('\'') {
        let (dir, rest) = quoted.split_once('\'')?;
        (dir.to_string(), rest)
    } else {
        let end = rest.find(char::is_whitespace)?;
        let dir = &rest[..end];
        let plain = |c: char| c.is_alphanumeric() || "._-/~+@%,:".contains(c);
        if dir.is_empty() || dir.starts_with('~') || !dir.chars().all(plain) {
            return None;
        }
        (dir.to_string(), &rest[end..])
    };
    let rest = rest.trim_start().strip_prefix("&&")?.trim_start();
    Some((dir, rest))
}

/// The body of `apply_patch <<'EOF'\n…\nEOF` (or `applypatch`, or an unquoted or `<<-`
/// delimiter), when that is all of `text`.
fn heredoc_body(text: &str) -> Option<String> {
    let text = text.trim();
    let (first, rest) = text.split_once('\n')?;
    let first = first.trim();
    let redirect = first
        .strip_prefix("apply_patch")
        .or_else(|| first.strip_prefix("applypatch"))?
        .trim_start();
    let terminator = redirect
        .strip_prefix("<<")?
        .trim_start_matches('-')
        .trim()
        .trim_matches(|c| c == '\'' || c == '"');
    if terminator.is_empty()
        || !terminator
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let body = rest.strip_suffix(terminator)?;
    if !(body.is_empty() || body.ends_with('\n')) {
        return None;
    }
    Some(body.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "*** Begin Patch\n*** Delete File: a\n*** End Patch\n";

    fn found(cmd: &str) -> Option<(String, Option<String>)> {
        shell_patch(cmd).map(|found| (found.patch, found.dir))
    }

    #[test]
    fn only_a_whole_apply_patch_heredoc_is_taken_for_a_patch() {
        let plain = Some((PATCH.to_string(), None));
        assert_eq!(found(&format!("apply_patch <<'EOF'\n{PATCH}EOF")), plain);
        assert_eq!(
            found(&format!("apply_patch <<PATCH\n{PATCH}PATCH\n")),
            plain
        );
        assert_eq!(found(&format!("applypatch <<\"EOF\"\n{PATCH}EOF")), plain);
        assert_eq!(
            found(&format!("apply_patch <<'EOF'\n{PATCH}EOF\nrm -rf x")),
            None
        );
        assert_eq!(found(&format!("cat <<'EOF'\n{PATCH}EOF")), None);
        assert_eq!(found("apply_patch"), None);
    }

    #[test]
    fn a_cd_before_the_heredoc_names_the_directory() {
        let in_sub = Some((PATCH.to_string(), Some("sub/dir".to_string())));
        assert_eq!(
            found(&format!("cd sub/dir && apply_patch <<'EOF'\n{PATCH}EOF\n")),
            in_sub
        );
        assert_eq!(
            found(&format!(
                "cd 'sub/dir' && apply_patch <<'EOF'\n{PATCH}EOF\n"
            )),
            in_sub
        );
        assert_eq!(
            found(&format!("cd sub; apply_patch <<'EOF'\n{PATCH}EOF\n")),
            None
        );
        assert_eq!(
            found(&format!("cd $HOME && apply_patch <<'EOF'\n{PATCH}EOF\n")),
            None
        );
    }

    #[test]
    fn a_shell_wrapper_is_seen_through_unless_the_outer_shell_would_expand_something() {
        let plain = Some((PATCH.to_string(), None));
        assert_eq!(
            found(&format!("bash -lc \"apply_patch <<'EOF'\n{PATCH}EOF\n\"")),
            plain
        );
        assert_eq!(
            found(&format!("/bin/sh -c 'apply_patch <<\"EOF\"\n{PATCH}EOF\n'")),
            plain
        );
        assert_eq!(
            found(&format!(
                "bash -lc 'cd a && apply_patch <<\"EOF\"\n{PATCH}EOF'"
            )),
            Some((PATCH.to_string(), Some("a".to_string())))
        );
        let escaped = "*** Begin Patch\n*** Add File: q\n+say \"hi\" \\\\o/\n*** End Patch\n";
        assert_eq!(
            found(&format!(
                "bash -lc \"apply_patch <<'EOF'\n{}EOF\n\"",
                escaped.replace('\\', "\\\\").replace('"', "\\\"")
            )),
            Some((escaped.to_string(), None))
        );
        assert_eq!(
            found(&format!(
                "bash -lc \"apply_patch <<'EOF'\n$X\n{PATCH}EOF\n\""
            )),
            None
        );
        assert_eq!(
            found(&format!("python -c 'apply_patch <<EOF\n{PATCH}EOF'")),
            None
        );
        assert_eq!(
            found(&format!("bash -lc 'apply_patch <<EOF\n{PATCH}EOF' && rm x")),
            None
        );
    }
}
