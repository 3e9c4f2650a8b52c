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

mod child;
mod error;
mod filesystem;
mod policy;
mod prepared;
mod private_tmp;
mod probe;
mod syscalls;
mod writable;

pub use error::SandboxError;
pub use policy::SandboxPolicy;
pub use prepared::PreparedSandbox;
pub use probe::{probe, SandboxSupport, MIN_LANDLOCK_ABI};
pub use writable::{WritableArea, WriteDenied};
