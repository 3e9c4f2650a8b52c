//! Directory handles opened beneath a root without following a single symbolic link, and the
//! few `*at` calls the confined writer makes relative to them.
//!
//! A path is opened from the root's descriptor, never from its string: the kernel resolves it
//! with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where it has that call (Linux 5.6), and
//! otherwise one component at a time with `openat(O_NOFOLLOW | O_DIRECTORY)`, each step from the
//! previous step's descriptor. Either way a link swapped in at any moment makes the open fail
//! (`ELOOP`) instead of leading elsewhere, and a directory once opened stays the same directory
//! whatever is renamed around it. The components handed in are plain names (no `.`, `..` or
//! `/`): the caller normalizes paths first, so the walk never climbs.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Cleared the first time the kernel answers `ENOSYS` to `openat2`: every later open walks.
static OPENAT2_AVAILABLE: AtomicBool = AtomicBool::new(true);

/// How many times an `openat2` that reported a concurrent rename (`EAGAIN`) is tried again
/// before the component walk takes over (the walk needs no retry: each step is atomic).
const OPENAT2_ATTEMPTS: usize = 3;

/// Opens `path` (a root: trusted as given, links in it followed) as a directory handle.
pub(super) fn open_root(path: &Path) -> io::Result<OwnedFd> {
    let path = c_path(path.as_os_str())?;
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    owned(fd)
}

/// Whether to resolve with `openat2` when the kernel has it, or always walk (tests force the
/// walk to exercise the fallback on kernels that have `openat2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Resolver {
    PreferOpenat2,
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "the daemon walks only when the kernel lacks openat2"
        )
    )]
    Walk,
}

/// The directory `components` name beneath `root`. `Ok(None)` when one of them does not exist
/// and `create` is false; with `create`, missing ones are made (`mkdirat`, mode 0777 less the
/// umask) on the way down. A symbolic link anywhere fails with `ELOOP`.
pub(super) fn open_dir_beneath(
    root: &OwnedFd,
    components: &[OsString],
    create: bool,
    resolver: Resolver,
) -> io::Result<Option<OwnedFd>> {
    if components.is_empty() {
        return root.try_clone().map(Some);
    }
    if resolver == Resolver::PreferOpenat2 && OPENAT2_AVAILABLE.load(Ordering::Relaxed) {
        match openat2_beneath(root, components) {
            Ok(fd) => return Ok(Some(fd)),
            Err(error) if error.raw_os_error() == Some(libc::ENOENT) && !create => return Ok(None),
            // Missing directories are created by the walk; a kernel without the call, or a
            // resolution that kept racing with renames, is walked too.
            Err(error)
                if matches!(
                    error.raw_os_error(),
                    Some(libc::ENOENT | libc::ENOSYS | libc::EAGAIN)
                ) =>
            {
                if error.raw_os_error() == Some(libc::ENOSYS) {
                    OPENAT2_AVAILABLE.store(false, Ordering::Relaxed);
                }
            }
            Err(error) => return Err(error),
        }
    }
    walk(root, components, create)
}

/// One `openat2` call for the whole relative path, retried while the kernel reports a rename
/// racing with the lookup.
fn openat2_beneath(root: &OwnedFd, components: &[OsString]) -> io::Result<OwnedFd> {
    let mut relative = OsString::new();
    for (index, component) in components.iter().enumerate() {
        if index > 0 {
            relative.push("/");
        }
        relative.push(component);
    }
    let relative = c_path(&relative)?;
    // SAFETY: `open_how` is a plain C struct; all-zero is its documented default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    let mut last = io::Error::from_raw_os_error(libc::EAGAIN);
    for _ in 0..OPENAT2_ATTEMPTS {
        // SAFETY: the descriptor is open, `relative` is NUL-terminated and `how` is a valid
        // `open_how` whose size is passed; the kernel only reads them.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                root.as_raw_fd(),
                relative.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        match owned(fd as libc::c_int) {
            Err(error) if error.raw_os_error() == Some(libc::EAGAIN) => last = error,
            other => return other,
        }
    }
    Err(last)
}

/// The fallback: one component at a time, each opened from its parent's descriptor with
/// `O_NOFOLLOW`, so no step can be redirected by a link.
fn walk(root: &OwnedFd, components: &[OsString], create: bool) -> io::Result<Option<OwnedFd>> {
    let mut current = root.try_clone()?;
    for component in components {
        let next = match open_child_dir(&current, component) {
            Err(error) if error.raw_os_error() == Some(libc::ENOENT) && create => {
                make_dir(&current, component)?;
                open_child_dir(&current, component)?
            }
            Err(error) if error.raw_os_error() == Some(libc::ENOENT) => return Ok(None),
            other => other?,
        };
        current = next;
    }
    Ok(Some(current))
}

/// `openat(dir, name, O_DIRECTORY | O_NOFOLLOW)`. The kernel answers `ENOTDIR` for a link
/// there; it is reported as `ELOOP`, the answer `openat2` gives, so callers see one error.
pub(super) fn open_child_dir(dir: &OwnedFd, name: &OsStr) -> io::Result<OwnedFd> {
    let c_name = c_path(name)?;
    // SAFETY: the descriptor is open and `c_name` is NUL-terminated.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    owned(fd).map_err(|error| {
        if error.raw_os_error() == Some(libc::ENOTDIR) && is_symlink(dir, name) {
            io::Error::from_raw_os_error(libc::ELOOP)
        } else {
            error
        }
    })
}

/// `mkdirat`; a directory made meanwhile by someone else is fine (the open that follows checks
/// it is a directory and not a link).
fn make_dir(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    let c_name = c_path(name)?;
    // SAFETY: the descriptor is open and `c_name` is NUL-terminated.
    let made = unsafe { libc::mkdirat(dir.as_raw_fd(), c_name.as_ptr(), 0o777) };
    if made == 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EEXIST) {
        Ok(())
    } else {
        Err(error)
    }
}

/// What `name` in `dir` is, without following it; `None` when it does not exist.
pub(super) fn stat_entry(dir: &OwnedFd, name: &OsStr) -> io::Result<Option<libc::stat>> {
    let c_name = c_path(name)?;
    // SAFETY: `stat` is plain data the kernel fills; all-zero is a valid value.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open, `c_name` is NUL-terminated and `stat` is writable.
    let result = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if result == 0 {
        return Ok(Some(stat));
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::ENOENT) {
        Ok(None)
    } else {
        Err(error)
    }
}

fn is_symlink(dir: &OwnedFd, name: &OsStr) -> bool {
    matches!(stat_entry(dir, name), Ok(Some(stat)) if stat.st_mode & libc::S_IFMT == libc::S_IFLNK)
}

/// Opens the file `name` in `dir` for reading; `follow` decides whether a link there is
/// followed (an unconfined read) or refused with `ELOOP`. Non-blocking, so a FIFO put in the
/// file's place cannot stall the reader; the caller checks what it opened.
pub(super) fn open_file(dir: &OwnedFd, name: &OsStr, follow: bool) -> io::Result<File> {
    let c_name = c_path(name)?;
    let mut flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    // SAFETY: the descriptor is open and `c_name` is NUL-terminated.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c_name.as_ptr(), flags) };
    owned(fd).map(File::from)
}

/// Creates `name` in `dir` for writing; fails if anything (a link included) is already there.
pub(super) fn create_new_file(dir: &OwnedFd, name: &OsStr) -> io::Result<File> {
    let c_name = c_path(name)?;
    // SAFETY: the descriptor is open and `c_name` is NUL-terminated.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o666 as libc::c_uint,
        )
    };
    owned(fd).map(File::from)
}

/// `renameat(dir, from, dir, to)`: replaces the entry `to` (a link there is replaced, never
/// followed).
pub(super) fn rename_in(dir: &OwnedFd, from: &OsStr, to: &OsStr) -> io::Result<()> {
    let (from, to) = (c_path(from)?, c_path(to)?);
    // SAFETY: the descriptor is open and both names are NUL-terminated.
    let result =
        unsafe { libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr()) };
    check(result)
}

/// `unlinkat(dir, name, 0)`: removes a file (or a link, never what it points at).
pub(super) fn unlink_in(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    let c_name = c_path(name)?;
    // SAFETY: the descriptor is open and `c_name` is NUL-terminated.
    let result = unsafe { libc::unlinkat(dir.as_raw_fd(), c_name.as_ptr(), 0) };
    check(result)
}

/// `mkdirat(dir, name)`, failing if anything is already there (unlike the walk's `make_dir`).
pub(super) fn create_dir_in(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    let c_name = c_path(name)?;
    // SAFETY: the descriptor is open and `c_name` is NUL-terminated.
    let result = unsafe { libc::mkdirat(dir.as_raw_fd(), c_name.as_ptr(), 0o777) };
    check(result)
}

/// `unlinkat(dir, name, AT_REMOVEDIR)`: removes an empty directory.
pub(super) fn remove_dir_in(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    let c_name = c_path(name)?;
    // SAFETY: the descriptor is open and `c_name` is NUL-terminated.
    let result = unsafe { libc::unlinkat(dir.as_raw_fd(), c_name.as_ptr(), libc::AT_REMOVEDIR) };
    check(result)
}

/// The target text of the link `name` in `dir` (read, never followed).
pub(super) fn read_link_in(dir: &OwnedFd, name: &OsStr) -> io::Result<OsString> {
    let c_name = c_path(name)?;
    let mut buffer = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: the descriptor is open, `c_name` is NUL-terminated and `buffer` is writable for
    // its whole length, which is passed.
    let length = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
        )
    };
    if length < 0 {
        return Err(io::Error::last_os_error());
    }
    buffer.truncate(length as usize);
    Ok(OsString::from(OsStr::from_bytes(&buffer)))
}

/// `symlinkat(target, dir, name)`: makes a link; nothing is followed, `target` is only text.
pub(super) fn symlink_in(target: &OsStr, dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    let (target, c_name) = (c_path(target)?, c_path(name)?);
    // SAFETY: the descriptor is open and both strings are NUL-terminated.
    let result = unsafe { libc::symlinkat(target.as_ptr(), dir.as_raw_fd(), c_name.as_ptr()) };
    check(result)
}

/// The names in the directory `dir` with their types as the directory records them (a link is
/// a link, not what it points at). Read through the descriptor's `/proc/self/fd` entry, which
/// is the opened directory itself whatever has been renamed since.
pub(super) fn list_dir(dir: &OwnedFd) -> io::Result<Vec<(OsString, std::fs::FileType)>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))? {
        let entry = entry?;
        names.push((entry.file_name(), entry.file_type()?));
    }
    Ok(names)
}

fn c_path(path: &OsStr) -> io::Result<CString> {
    CString::new(path.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Wraps a descriptor a call returned, or its error.
fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
