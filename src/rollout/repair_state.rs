//! What the index repair (`index_repair.rs`) remembers between listings. A file of its own
//! because the thread index holds this state (one per index, behind its own lock) and the
//! repair, which extends the index, reads and updates it: so the index never imports the repair.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::SystemTime;

#[derive(Default)]
pub(crate) struct RepairState {
    /// Folders whose every rollout was indexed, with their modification time then.
    pub(super) scanned: HashMap<PathBuf, ScannedDir>,
    /// Rollouts that could not be read, with the length they had then: not read again at
    /// every listing until they change.
    pub(super) unreadable: HashMap<PathBuf, u64>,
}

/// A folder as it was when every rollout in it was indexed.
#[derive(Clone)]
pub(super) struct ScannedDir {
    pub(super) modified: SystemTime,
    pub(super) subdirs: Vec<PathBuf>,
}
