//! A terminal program under tmux, for tests that drive an interactive client (the Codex TUI in
//! `tests/reference_clients.rs`): a private tmux server, keys sent to its one pane, and the
//! pane's text read back with `capture-pane`. A dead pane stays (`remain-on-exit`), so a test
//! reads the program's last words and its exit status.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::poll_until;

/// A tmux server on a private socket, killed (with what runs in it) when dropped.
pub struct Tmux {
    socket: PathBuf,
    config: PathBuf,
}

impl Tmux {
    pub fn new(dir: &Path) -> Tmux {
        let config = dir.join("tmux.conf");
        // A dead pane stays, so the test reads the CLI's last words and its exit status.
        std::fs::write(
            &config,
            "set -g remain-on-exit on\nset -g history-limit 5000\n",
        )
        .unwrap();
        Tmux {
            socket: dir.join("tmux.sock"),
            config,
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

    /// Waits until the pane shows `text`; the pane on failure.
    pub async fn wait_for(&self, text: &str) {
        if !poll_until(|| self.pane().contains(text)).await {
            panic!("the pane never showed {text:?}:\n{}", self.pane());
        }
    }

    /// Types `line` and submits it. The TUI takes keys that arrive in a burst for a paste, in
    /// which Enter is a newline: Enter is sent once the text shows, and again while the
    /// submission is not seen (`submitted` tells).
    pub async fn submit(&self, line: &str, submitted: impl Fn() -> bool) {
        self.literal(line);
        self.wait_for(line).await;
        for _ in 0..5 {
            self.keys(&["Enter"]);
            let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
            while tokio::time::Instant::now() < deadline {
                if submitted() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        panic!("{line:?} was never submitted:\n{}", self.pane());
    }
}

impl Tmux {
    /// Starts `codex --remote URL` in the session `codex`, its state in `client_home`; with
    /// `--remote-auth-token-env VAR` when `token` (VAR, value) is given (the CLI sends tokens on
    /// `ws://` only).
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
        args.extend([cli.to_str().unwrap(), "--remote", url]);
        if let Some((var, _)) = token {
            args.extend(["--remote-auth-token-env", var]);
        }
        self.run(&args);
    }

    /// Submits `/quit` and waits for the CLI to exit; its exit status.
    pub async fn quit(&self) -> String {
        self.submit("/quit", || {
            self.run(&["display-message", "-p", "-t", "codex", "#{pane_dead}"])
                .trim()
                == "1"
        })
        .await;
        self.run(&[
            "display-message",
            "-p",
            "-t",
            "codex",
            "#{pane_dead_status}",
        ])
        .trim()
        .to_string()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}
