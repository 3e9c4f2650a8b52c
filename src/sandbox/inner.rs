//! The helper that runs inside bwrap's namespaces: openturn's own binary started as
//! `openturn __openturn-sandbox-inner [--network] [--write PATH]... [--protect PATH]... -- PROGRAM ARGS...`.
//!
//! The Landlock ruleset must be built inside the new mount namespace (its `/tmp` exists only
//! there) and after bwrap has mounted everything (a Landlock domain forbids mounting), so the
//! inner layer cannot be installed by the daemon before `bwrap` starts. The helper is a fresh
//! process with one thread, so unlike a `pre_exec` hook it may allocate: it builds the ruleset
//! and the seccomp filters, drops whatever capabilities are left, confines itself and execs the
//! command, which inherits all of it.
//!
//! A failure to confine is reported on stderr with exit code 126 and the command never runs; a
//! program that cannot be found exits 127, as in a shell.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use super::child::ChildConfinement;
use super::error::SandboxError;
use super::filesystem::{self, Grants};
use super::policy::SandboxPolicy;
use super::probe;
use super::syscalls::{self, Refusals};

/// The first argument that makes openturn act as the helper. Not a subcommand a person uses.
pub const INNER_ARG: &str = "__openturn-sandbox-inner";
/// Asks the helper only to prove it runs (the startup probe).
pub(super) const PROBE_FLAG: &str = "--probe";
/// What the helper prints for [`PROBE_FLAG`].
pub(super) const PROBE_ANSWER: &str = "openturn-sandbox-helper-ready";

const NETWORK_FLAG: &str = "--network";
const WRITE_FLAG: &str = "--write";
const PROTECT_FLAG: &str = "--protect";

/// What the helper confines the command to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct InnerSpec {
    pub(super) network_access: bool,
    /// Writable trees (the writable roots and the private `/tmp`).
    pub(super) writable: Vec<PathBuf>,
    /// Paths inside them Landlock keeps read-only: those no mount could cover because they do
    /// not exist yet.
    pub(super) protected: Vec<PathBuf>,
}

impl InnerSpec {
    /// The helper's flags for this spec (without the program).
    pub(super) fn flags(&self) -> Vec<OsString> {
        let mut flags = Vec::new();
        if self.network_access {
            flags.push(NETWORK_FLAG.into());
        }
        for path in &self.writable {
            flags.push(WRITE_FLAG.into());
            flags.push(path.clone().into_os_string());
        }
        for path in &self.protected {
            flags.push(PROTECT_FLAG.into());
            flags.push(path.clone().into_os_string());
        }
        flags
    }
}

/// What the helper was asked to do.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    Probe,
    Run {
        spec: InnerSpec,
        program: OsString,
        args: Vec<OsString>,
    },
}

/// Call first thing in `main`: when this process was started as the helper, it confines itself
/// and becomes the command (or exits); otherwise it returns at once.
pub fn run_helper_if_asked() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(OsStr::new(INNER_ARG)) {
        return;
    }
    let code = match parse(args) {
        Ok(Request::Probe) => {
            println!("{PROBE_ANSWER}");
            0
        }
        Ok(Request::Run {
            spec,
            program,
            args,
        }) => run(&spec, &program, &args),
        Err(message) => {
            eprintln!("openturn sandbox helper: {message}");
            126
        }
    };
    std::process::exit(code);
}

fn parse(args: impl Iterator<Item = OsString>) -> Result<Request, String> {
    let mut args = args;
    let mut spec = InnerSpec::default();
    loop {
        let Some(flag) = args.next() else {
            return Err("no `--` before the program".to_string());
        };
        match flag.to_str() {
            Some(PROBE_FLAG) => return Ok(Request::Probe),
            Some(NETWORK_FLAG) => spec.network_access = true,
            Some(WRITE_FLAG) => spec.writable.push(path_after(&mut args, WRITE_FLAG)?),
            Some(PROTECT_FLAG) => spec.protected.push(path_after(&mut args, PROTECT_FLAG)?),
            Some("--") => break,
            _ => return Err(format!("unknown flag {flag:?}")),
        }
    }
    let program = args.next().ok_or("no program after `--`")?;
    Ok(Request::Run {
        spec,
        program,
        args: args.collect(),
    })
}

fn path_after(args: &mut impl Iterator<Item = OsString>, flag: &str) -> Result<PathBuf, String> {
    args.next()
        .map(PathBuf::from)
        .ok_or_else(|| format!("`{flag}` needs a path"))
}

/// Confines this process and execs the program; returns only the exit code of a failure.
fn run(spec: &InnerSpec, program: &OsStr, args: &[OsString]) -> i32 {
    if let Err(error) = confine(spec) {
        eprintln!("openturn sandbox: the command was not run: {error}");
        return 126;
    }
    let error = std::process::Command::new(program).args(args).exec();
    eprintln!(
        "openturn sandbox: cannot run `{}`: {error}",
        program.to_string_lossy()
    );
    if error.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

fn confine(spec: &InnerSpec) -> Result<(), SandboxError> {
    let support = probe::probe();
    // The same kernel requirements as outside; the policy only names the messages.
    let policy = SandboxPolicy::WorkspaceWrite {
        network_access: spec.network_access,
    };
    support.check(&policy)?;
    let grants = Grants {
        policy: policy.name(),
        writable_roots: &spec.writable,
        protected: &spec.protected,
        own_tmp: None,
        unreadable: &[],
    };
    let ruleset = filesystem::ruleset(support.landlock_abi, spec.network_access, &grants)?;
    let programs = syscalls::programs(&Refusals::inside_namespaces(spec.network_access))?;
    ChildConfinement { ruleset, programs }
        .apply()
        .map_err(|source| SandboxError::Setup {
            action: "confining the command inside its namespaces",
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_flags_a_spec_writes_parse_back_to_the_same_spec() {
        let spec = InnerSpec {
            network_access: true,
            writable: vec![PathBuf::from("/tmp"), PathBuf::from("/work/a b")],
            protected: vec![PathBuf::from("/work/a b/.openturn")],
        };
        let mut args = spec.flags();
        args.extend(os(&["--", "sh", "-c", "echo --write"]));
        assert_eq!(
            parse(args.into_iter()).unwrap(),
            Request::Run {
                spec,
                program: "sh".into(),
                args: os(&["-c", "echo --write"]),
            }
        );
        assert_eq!(parse(os(&["--probe"]).into_iter()).unwrap(), Request::Probe);
        assert!(parse(os(&["--write"]).into_iter()).is_err());
        assert!(parse(os(&["--bogus", "--", "sh"]).into_iter()).is_err());
        assert!(parse(os(&["--"]).into_iter()).is_err());
    }
}
