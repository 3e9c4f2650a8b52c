//! Advisory whole-file locks (`flock`) shared by every openturn process on a home: a rollout is
//! written by one process at a time, and index writers take turns.

use std::fs::{File, OpenOptions};
use std::path::Path;

/// A held lock; released when dropped (the descriptor closes).
#[derive(Debug)]
pub struct FileLock {
    file: File,
}

impl FileLock {
    /// Waits for an exclusive lock on `path`, creating the file (0600) if needed.
    pub fn exclusive(path: &Path) -> std::io::Result<FileLock> {
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        if let Some(parent) = path.parent() {
            super::paths::create_private_dirs(parent)?;
        }
        let file = options.open(path)?;
        lock(&file, false)?;
        Ok(FileLock { file })
    }

    pub fn file(&self) -> &File {
        &self.file
    }
}

/// Takes an exclusive lock on an open file without waiting. `Ok(false)`: another open file
/// description (another process, or another handle in this one) holds it.
pub fn try_lock_exclusive(file: &File) -> std::io::Result<bool> {
    match lock(file, true) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
        Err(error) => Err(error),
    }
}

#[cfg(unix)]
fn lock(file: &File, nonblocking: bool) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let mut operation = libc::LOCK_EX;
    if nonblocking {
        operation |= libc::LOCK_NB;
    }
    loop {
        // SAFETY: flock only reads the descriptor, which `file` keeps open for the call.
        let result = unsafe { libc::flock(file.as_raw_fd(), operation) };
        if result == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

#[cfg(not(unix))]
fn lock(_file: &File, _nonblocking: bool) -> std::io::Result<()> {
    Ok(())
}
