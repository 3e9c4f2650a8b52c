//! Confining a child process before it execs: Landlock for the filesystem (and TCP where the
//! kernel has it), seccomp-BPF for the syscalls Landlock cannot see.
//!
//! This layer owns the operating-system side of the sandbox and nothing else: it knows no
//! thread, turn, tool or protocol type, and imports nothing from the rest of the crate. A caller
//! turns its own policy value into a [`SandboxPolicy`], calls [`PreparedSandbox::prepare`] in the
//! daemon (where allocating, opening files and compiling filters is allowed), then hands the
//! prepared value to the command it is about to spawn ([`PreparedSandbox::install`]). The child
//! only runs a few raw syscalls between `fork` and `exec` ([`PreparedSandbox::apply_in_child`]).
//!
//! The rule every caller relies on: a policy is enforced completely or refused with
//! [`SandboxError::Unsupported`]; it is never silently weakened. `docs/SANDBOX.md` says what
//! each policy allows and why.
//!
//! The daemon's own writes (`apply_patch`) are confined here too: [`ConfinedWriter`] is the one
//! way the daemon writes into a [`WritableArea`], through directory handles opened beneath a
//! root without following links ([`beneath`]), so no link swapped in by a parallel command can
//! send a write outside the area.

mod beneath;
mod child;
mod confined_writer;
mod error;
mod filesystem;
mod policy;
mod prepared;
mod private_tmp;
mod probe;
mod syscalls;
mod writable;

pub use confined_writer::{ConfinedWriter, StagedWrite, WriteError};
pub use error::SandboxError;
pub use policy::SandboxPolicy;
pub use prepared::PreparedSandbox;
pub use probe::{probe, SandboxSupport, MIN_LANDLOCK_ABI};
pub use writable::{WritableArea, WriteDenied};
