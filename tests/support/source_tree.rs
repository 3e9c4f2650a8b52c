//! Reading the crate's own source for the structure tests (layering, import direction): the
//! `.rs` files under a folder. Kept apart from the daemon support so those tests compile
//! without it.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively (an unreadable folder contributes nothing).
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
