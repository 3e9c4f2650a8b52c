//! Which of the two ways to confine a command this machine gets, decided once per helper binary.
//!
//! - **Namespaces**: the command runs under `bwrap` (bubblewrap) in new user, mount, PID, IPC,
//!   UTS and (network off) network namespaces, with the root file system read-only, the writable
//!   roots bound read-write and their `.git` directories and openturn's home bound read-only on
//!   top, a private size-bounded `/tmp`, its own `/proc` and no capabilities; inside that,
//!   openturn's own binary (the helper, [`super::inner`]) applies Landlock and seccomp before it
//!   execs the command.
//! - **Fallback**: where `bwrap` is missing or user namespaces are not allowed (many containers),
//!   Landlock and seccomp are applied between fork and exec, capabilities are dropped, and the
//!   seccomp filter also refuses what the mounts would have stopped and a filter can see
//!   (`docs/SANDBOX.md` lists what this mode cannot contain).
//!
//! The namespace check runs `bwrap` once with the real flags and openturn's helper inside it, so
//! "available" means a command would really start that way. Its answer is kept for the daemon's
//! life. The daemon starts the check at startup on a thread of its own; whoever asks for the
//! mode meanwhile waits for that one check (the lock is held while it runs), so no command
//! runs before its answer is known.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};

use serde::Deserialize;

use super::bwrap;
use super::inner;

/// What the configuration asks for (`sandbox_isolation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// Namespaces where they work, the fallback elsewhere.
    #[default]
    Auto,
    /// Namespaces or nothing: without them the confining policies are refused.
    Namespaces,
    /// The fallback even where namespaces would work (tests, or a host where `bwrap` misbehaves).
    Fallback,
}

/// How confined commands actually run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationMode {
    Namespaces,
    Fallback,
}

impl IsolationMode {
    /// The name `config/read` and the docs use.
    pub fn name(self) -> &'static str {
        match self {
            IsolationMode::Namespaces => "namespaces",
            IsolationMode::Fallback => "fallback",
        }
    }
}

/// The isolation a caller asks for and the binary that serves as the helper inside the
/// namespaces (openturn itself; a test built against the library names the openturn binary).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxSetup {
    pub isolation: Isolation,
    /// `None`: the running executable, which must be openturn.
    pub helper: Option<PathBuf>,
}

/// The mode commands run in, and why it is not namespaces when it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveIsolation {
    pub mode: IsolationMode,
    /// Why namespaces are not used (`None` in namespace mode).
    pub fallback_reason: Option<String>,
    /// `bwrap` and the helper, in namespace mode.
    pub(super) launcher: Option<Launcher>,
}

/// The two binaries a namespace launch needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Launcher {
    pub(super) bwrap: PathBuf,
    pub(super) helper: PathBuf,
}

impl SandboxSetup {
    pub fn new(isolation: Isolation) -> SandboxSetup {
        SandboxSetup {
            isolation,
            helper: None,
        }
    }

    /// Which mode confined commands run in here. `Err` (the reason) only when namespaces are
    /// required and unavailable.
    pub fn active(&self) -> Result<ActiveIsolation, String> {
        if self.isolation == Isolation::Fallback {
            return Ok(ActiveIsolation {
                mode: IsolationMode::Fallback,
                fallback_reason: Some("the configuration asks for it (`sandbox_isolation`)".into()),
                launcher: None,
            });
        }
        match self.namespace_launcher() {
            Ok(launcher) => Ok(ActiveIsolation {
                mode: IsolationMode::Namespaces,
                fallback_reason: None,
                launcher: Some(launcher),
            }),
            Err(reason) if self.isolation == Isolation::Namespaces => Err(format!(
                "`sandbox_isolation` is `namespaces`, but they cannot be used here: {reason}"
            )),
            Err(reason) => Ok(ActiveIsolation {
                mode: IsolationMode::Fallback,
                fallback_reason: Some(reason),
                launcher: None,
            }),
        }
    }

    fn namespace_launcher(&self) -> Result<Launcher, String> {
        let helper = match &self.helper {
            Some(helper) => helper.clone(),
            None => std::env::current_exe()
                .map_err(|error| format!("openturn cannot find its own binary: {error}"))?,
        };
        static PROBES: LazyLock<Mutex<HashMap<PathBuf, Result<Launcher, String>>>> =
            LazyLock::new(Mutex::default);
        // A poisoned lock only means a panic elsewhere while it was held; the map is still sound.
        let mut probes = PROBES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        probes
            .entry(helper.clone())
            .or_insert_with(|| probe_namespaces(helper))
            .clone()
    }
}

/// Finds `bwrap` on `PATH` and starts the helper under it with the flags every command gets.
fn probe_namespaces(helper: PathBuf) -> Result<Launcher, String> {
    let bwrap = find_on_path("bwrap")
        .ok_or_else(|| "`bwrap` (bubblewrap) is not installed or not on PATH".to_string())?;
    let mut args: Vec<OsString> = bwrap::namespace_flags(false);
    args.extend(bwrap::probe_mounts(&helper));
    args.push("--".into());
    args.push(helper.clone().into_os_string());
    args.push(inner::INNER_ARG.into());
    args.push(inner::PROBE_FLAG.into());
    let output = std::process::Command::new(&bwrap)
        .args(&args)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|error| format!("`{}` cannot be started: {error}", bwrap.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status.success() && stdout.trim() == inner::PROBE_ANSWER {
        return Ok(Launcher { bwrap, helper });
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let said = stderr.lines().find(|line| !line.trim().is_empty());
    Err(match said {
        Some(line) => format!("bubblewrap cannot create the namespaces: {}", line.trim()),
        None => format!(
            "bubblewrap cannot create the namespaces (it exited with {})",
            output.status
        ),
    })
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate).is_ok_and(|metadata| {
                metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forcing_the_fallback_never_probes_and_says_why() {
        let setup = SandboxSetup {
            isolation: Isolation::Fallback,
            helper: Some(PathBuf::from("/nonexistent/openturn")),
        };
        let active = setup.active().unwrap();
        assert_eq!(active.mode, IsolationMode::Fallback);
        assert!(active
            .fallback_reason
            .unwrap()
            .contains("sandbox_isolation"));
    }

    #[test]
    fn a_helper_that_is_not_openturn_is_no_namespace_launcher() {
        // `true` runs fine under bwrap but never answers the probe, so namespaces are not
        // trusted with it; required namespaces are then refused, auto falls back.
        let Some(not_openturn) = find_on_path("true") else {
            return;
        };
        let required = SandboxSetup {
            isolation: Isolation::Namespaces,
            helper: Some(not_openturn.clone()),
        };
        assert!(required.active().is_err());
        let auto = SandboxSetup {
            isolation: Isolation::Auto,
            helper: Some(not_openturn),
        };
        assert_eq!(auto.active().unwrap().mode, IsolationMode::Fallback);
    }
}
