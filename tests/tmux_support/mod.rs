//! A terminal program under tmux, for tests that drive an interactive client (the Codex TUI in
//! `tests/reference_clients.rs`): a private tmux server, keys sent to its one pane, and the
//! pane's text read back with `capture-pane`. A dead pane stays (`remain-on-exit`), so a test
//! reads the program's last words.
//!
//! The program's exit status is NOT read from tmux. tmux learns it from SIGCHLD, and Debian's
//! tmux (built with libutempter) can lose that signal: when the pane's terminal closes before
//! the child is reaped, tmux removes the utmp record through a helper process while SIGCHLD is
//! set to its default, and a child that exits in that moment stays a zombie, so
//! `#{pane_dead_status}` stays empty for good (and is empty for a moment in any case, between
//! the terminal closing, which is what `#{pane_dead}` reports, and the reaping). The program
//! runs under `sh`, which waits for it and writes its status to a file instead.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::poll_until;

/// How long a line may take from being typed to being seen submitted: the TUI and the daemon
/// behind it share a busy machine with the rest of the suite. A bound for a hung TUI, not a
/// guess at how fast it is.
const SUBMIT_TIMEOUT: Duration = Duration::from_secs(90);

/// Runs `"$@"` and writes its exit status to the file `$1` names (`128 + N` for a program
/// killed by signal N, as `sh` reports it), renamed into place so a reader never sees half.
const STATUS_WRAPPER: &str =
    "status=$1; shift; \"$@\"; code=$?; echo \"$code\" > \"$status.part\"; mv \"$status.part\" \"$status\"";

/// A tmux server on a private socket, killed (with what runs in it) when dropped.
pub struct Tmux {
    socket: PathBuf,
    config: PathBuf,
    /// Where the wrapper writes the program's exit status when it ends.
    exit_status: PathBuf,
}

impl Tmux {
    pub fn new(dir: &Path) -> Tmux {
        let config = dir.join("tmux.conf");
        // A dead pane stays, so the test reads the CLI's last words after it exits.
        std::fs::write(
            &config,
            "set -g remain-on-exit on\nset -g history-limit 5000\n",
        )
        .unwrap();
        Tmux {
            socket: dir.join("tmux.sock"),
            config,
            exit_status: dir.join("tmux-program.status"),
        }
    }

    pub fn run(&self, args: &[&str]) -> String {
        let output = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg(&self.config)
            .args(args)
            .env("LANG", "C.UTF-8")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).to_string()
    }

    pub fn pane(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-t", "codex"])
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "codex"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    pub fn literal(&self, text: &str) {
        self.run(&["send-keys", "-t", "codex", "-l", text]);
    }

    /// Pastes `text` into the pane as one bracketed paste (when the program asked for
    /// bracketed paste, as the TUI does): the program reads it as a paste, not as keys typed in
    /// a burst, which the TUI would also take for a paste, but with a moment after it in which
    /// Enter is a newline.
    pub fn paste(&self, text: &str) {
        self.run(&["set-buffer", "-b", "typed", "--", text]);
        self.run(&["paste-buffer", "-p", "-d", "-b", "typed", "-t", "codex"]);
    }

    /// Waits until the pane shows `text`; the pane on failure.
    pub async fn wait_for(&self, text: &str) {
        if !poll_until(|| self.pane().contains(text)).await {
            panic!("the pane never showed {text:?}:\n{}", self.pane());
        }
    }

    /// The pane's rows as drawn (wrapped rows not joined, so they count as the cursor does)
    /// and the cursor's row, read by one tmux command so no redraw comes between them.
    fn rows_and_cursor(&self) -> (Vec<String>, usize) {
        let text = self.run(&[
            "display-message",
            "-p",
            "-t",
            "codex",
            "#{cursor_y}",
            ";",
            "capture-pane",
            "-p",
            "-t",
            "codex",
        ]);
        let mut lines = text.lines();
        let cursor = lines.next().unwrap().trim().parse().unwrap();
        (lines.map(str::to_string).collect(), cursor)
    }

    /// Whether the cursor is on a row ending with `line`: the composer holds the line as typed.
    fn typed_at_cursor(&self, line: &str) -> bool {
        let (rows, cursor) = self.rows_and_cursor();
        rows.get(cursor)
            .is_some_and(|row| row.trim_end().ends_with(line))
    }

    /// Whether the composer holds `line` followed by an empty row with the cursor on it: an
    /// Enter the TUI took for a newline inside a paste rather than for a submission. (An empty
    /// composer shows a placeholder on the cursor's row, so a submitted line never looks so.)
    fn enter_became_a_newline(&self, line: &str) -> bool {
        let (rows, cursor) = self.rows_and_cursor();
        let blank = |row: &String| row.trim_start_matches('›').trim().is_empty();
        cursor >= 1
            && rows
                .get(cursor - 1)
                .is_some_and(|above| above.trim_end().ends_with(line))
            && rows.get(cursor).is_some_and(blank)
    }

    /// Types `line` and submits it; `submitted` tells when the submission is seen (a request
    /// reaching the provider, the answer on the pane, the program's exit). The line goes in as
    /// a bracketed paste, after which the TUI takes Enter for a submission; should it take one
    /// for a newline all the same (keys typed in a burst are a paste to it, in which Enter is a
    /// newline for a moment), the pane shows it and the newline is deleted and Enter sent again.
    /// Every step waits on what the pane shows, within one generous deadline.
    pub async fn submit(&self, line: &str, submitted: impl Fn() -> bool) {
        self.paste(line);
        let deadline = tokio::time::Instant::now() + SUBMIT_TIMEOUT;
        let failed = |what: &str| panic!("{line:?} {what}:\n{}", self.pane());
        loop {
            if !until(deadline, || submitted() || self.typed_at_cursor(line)).await {
                failed("never stood in the composer with the cursor after it");
            }
            if submitted() {
                return;
            }
            self.keys(&["Enter"]);
            // The Enter has been read once the line leaves the cursor's row: it was either
            // submitted (the composer empties) or continued on a new row.
            let read = until(deadline, || submitted() || !self.typed_at_cursor(line)).await;
            let settled = read
                && until(deadline, || {
                    submitted() || self.enter_became_a_newline(line)
                })
                .await;
            if submitted() {
                return;
            }
            if !settled {
                failed("was never submitted");
            }
            // A newline: delete it, so the line is submitted as typed, then Enter again.
            self.keys(&["BSpace"]);
        }
    }
}

/// Polls `check` until it holds or `deadline` passes; whether it held.
async fn until(deadline: tokio::time::Instant, check: impl Fn() -> bool) -> bool {
    while !check() {
        if tokio::time::Instant::now() >= deadline {
            return check();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

impl Tmux {
    /// Starts `codex --remote URL` in the session `codex`, its state in `client_home`; with
    /// `--remote-auth-token-env VAR` when `token` (VAR, value) is given (the CLI sends tokens on
    /// `ws://` only). It runs under `sh`, which records its exit status (see the module doc).
    pub fn start_tui(
        &self,
        cli: &Path,
        client_home: &Path,
        url: &str,
        token: Option<(&str, &str)>,
    ) {
        let home = client_home.display().to_string();
        let (codex_home, user_home) = (format!("CODEX_HOME={home}"), format!("HOME={home}"));
        let assignment = token.map(|(var, value)| format!("{var}={value}"));
        let status = self.exit_status.display().to_string();
        let mut args = vec!["new-session", "-d", "-s", "codex", "-x", "200", "-y", "50"];
        args.extend([
            "-c",
            &home,
            "env",
            "-u",
            "OPENAI_API_KEY",
            "-u",
            "CODEX_API_KEY",
        ]);
        args.extend(["-u", "RUST_LOG", &codex_home, &user_home]);
        args.extend(assignment.as_deref());
        args.extend(["sh", "-c", STATUS_WRAPPER, "sh", &status]);
        args.extend([cli.to_str().unwrap(), "--remote", url]);
        if let Some((var, _)) = token {
            args.extend(["--remote-auth-token-env", var]);
        }
        self.run(&args);
    }

    /// The program's exit status once it has ended (a signal N shows as `128 + N`); `None`
    /// while it runs.
    pub fn exit_status(&self) -> Option<String> {
        let text = std::fs::read_to_string(&self.exit_status).ok()?;
        Some(text.trim().to_string())
    }

    /// Submits `/quit` and waits for the CLI to exit; its exit status.
    pub async fn quit(&self) -> String {
        self.submit("/quit", || self.exit_status().is_some()).await;
        self.exit_status().unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg(&self.config)
            .arg("kill-server")
            .output();
    }
}
