//! Confining a child process: in new namespaces under `bwrap` where the machine allows them,
//! with Landlock for the filesystem (and TCP where the kernel has it) and seccomp-BPF for the
//! syscalls Landlock cannot see inside them, or with Landlock, seccomp and no capabilities alone
//! where it does not (the fallback, see [`isolation`]).
//!
//! This layer owns the operating-system side of the sandbox and nothing else: it knows no
//! thread, turn, tool or protocol type, and imports nothing from the rest of the crate. A caller
//! turns its own policy value into a [`SandboxPolicy`], calls [`PreparedSandbox::prepare`] in the
//! daemon (where allocating, opening files and compiling filters is allowed), then asks the
//! prepared value for the process to spawn ([`PreparedSandbox::command`]). In the fallback the
//! forked child only runs a few raw syscalls before `exec`; in namespace mode openturn's own
//! binary confines itself inside the namespaces ([`run_helper_if_asked`]) and execs the command.
//!
//! The rule every caller relies on: a policy is enforced completely or refused with
//! [`SandboxError::Unsupported`]; it is never silently weakened. `docs/SANDBOX.md` says what
//! each policy allows, what each mode contains and why.
//!
//! The daemon's own writes (`apply_patch`) are confined here too: [`ConfinedWriter`] is the one
//! way the daemon writes into a [`WritableArea`], through directory handles opened beneath a
//! root without following links ([`beneath`]), so no link swapped in by a parallel command can
//! send a write outside the area.

mod beneath;
mod bwrap;
mod child;
mod confined_tree;
mod confined_writer;
mod error;
mod filesystem;
mod inner;
pub mod isolation;
mod policy;
mod prepared;
mod private_tmp;
mod probe;
mod shield;
mod syscalls;
mod writable;

pub use confined_tree::{EntryKind, EntryMetadata, TreeError, MAX_TREE_DEPTH, MAX_TREE_ENTRIES};
pub use confined_writer::{ConfinedWriter, StagedWrite, WriteError, TEMP_PREFIX};
pub use error::SandboxError;
pub use inner::{run_helper_if_asked, INNER_ARG};
pub use isolation::{ActiveIsolation, Isolation, IsolationMode, SandboxSetup};
pub use policy::SandboxPolicy;
pub use prepared::PreparedSandbox;
pub use probe::{probe, SandboxSupport, MIN_LANDLOCK_ABI};
pub use shield::shield_daemon;
pub use writable::{WritableArea, WriteDenied};
