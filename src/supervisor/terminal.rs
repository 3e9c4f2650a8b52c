//! A command with a terminal or with pipes, as one shape: [`spawn_terminal`] starts a command
//! leader (through [`super::command::spawn_leader`], so everything it starts is found and killed
//! like any command's) and returns a [`Terminal`]: its output as a stream of byte chunks and its
//! stdin (when it has one).
//!
//! With a PTY (`portable-pty` opens the pair) the leader starts a session of its own whose
//! controlling terminal is the PTY's slave, on its stdin, stdout and stderr; the daemon keeps
//! the master's reading and writing ends. Reads of the master block, so one dedicated thread per terminal reads it and
//! hands chunks to a bounded channel; it ends when the last holder of the slave is gone (the
//! kernel then answers EIO), which the command's sweep guarantees. With pipes, stdout and
//! stderr are read by two tasks into the same channel, each chunk tagged with its stream.

use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use portable_pty::{MasterPty, PtySize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use super::command::{spawn_leader, CommandTree, Leads};

/// Chunks of output waiting for their reader. Small: a reader that falls behind slows the
/// command down (its writes block) instead of growing the daemon's memory.
const OUTPUT_CHANNEL: usize = 32;
/// The most one read takes.
const READ_CHUNK: usize = 8192;

/// Which stream a chunk came from. A PTY has one stream, reported as stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

/// Rows and columns of a PTY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TerminalSize {
    pub rows: u16,
    pub cols: u16,
}

impl Default for TerminalSize {
    fn default() -> Self {
        TerminalSize { rows: 24, cols: 80 }
    }
}

/// How the command's stdio is wired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TerminalMode {
    /// A PTY of this size on stdin, stdout and stderr.
    Tty(TerminalSize),
    /// Pipes for stdout and stderr; stdin a pipe when `stdin`, else `/dev/null`.
    Pipes { stdin: bool },
}

/// A running command's stdio. The command's leader and its processes are `child` and `tree`,
/// which the caller waits for and ends exactly as for [`super::spawn_command`].
pub(crate) struct Terminal {
    pub child: Child,
    pub tree: CommandTree,
    /// Chunks as they arrive; closed once every stream reached its end.
    pub output: mpsc::Receiver<(Stream, Vec<u8>)>,
    /// `None` when the command has no stdin to write to.
    pub input: Option<TerminalInput>,
    /// The PTY's master, to resize it; `None` with pipes.
    pub pty: Option<PtyHandle>,
}

/// Starts `command` as a command leader in `mode`. `confine` adds the caller's child hooks (the
/// sandbox), run after the supervisor's. The command is consumed so that the daemon's copies of
/// the child's ends (the PTY's slave) are closed once it runs.
pub(crate) fn spawn_terminal(
    mut command: Command,
    mode: TerminalMode,
    confine: impl FnOnce(&mut Command),
) -> io::Result<Terminal> {
    command.kill_on_drop(true);
    match mode {
        TerminalMode::Tty(size) => spawn_with_pty(command, size, confine),
        TerminalMode::Pipes { stdin } => spawn_with_pipes(command, stdin, confine),
    }
}

fn spawn_with_pipes(
    mut command: Command,
    stdin: bool,
    confine: impl FnOnce(&mut Command),
) -> io::Result<Terminal> {
    command
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut child, tree) = spawn_leader(&mut command, Leads::Group, confine)?;
    drop(command);
    let (sender, output) = mpsc::channel(OUTPUT_CHANNEL);
    if let Some(stdout) = child.stdout.take() {
        tokio::spawn(pump(stdout, Stream::Stdout, sender.clone()));
    }
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(pump(stderr, Stream::Stderr, sender));
    }
    let input = child.stdin.take().map(TerminalInput::Pipe);
    Ok(Terminal {
        child,
        tree,
        output,
        input,
        pty: None,
    })
}

/// Forwards one pipe to the channel until its end (or until nobody reads the channel).
async fn pump(
    mut pipe: impl AsyncRead + Unpin,
    stream: Stream,
    sender: mpsc::Sender<(Stream, Vec<u8>)>,
) {
    let mut buffer = vec![0u8; READ_CHUNK];
    loop {
        match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if sender.send((stream, buffer[..n].to_vec())).await.is_err() {
                    return;
                }
            }
        }
    }
}

fn spawn_with_pty(
    mut command: Command,
    size: TerminalSize,
    confine: impl FnOnce(&mut Command),
) -> io::Result<Terminal> {
    let pair = portable_pty::native_pty_system()
        .openpty(PtySize {
            rows: size.rows,
            cols: size.cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|error| io::Error::other(format!("cannot open a PTY: {error}")))?;
    let slave_path = pair
        .master
        .tty_name()
        .ok_or_else(|| io::Error::other("the PTY has no slave device name"))?;
    // Opened here, not in the child, so no sandbox hook can stand in the way; O_NOCTTY keeps it
    // from becoming the daemon's own controlling terminal.
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&slave_path)?;
    command
        .stdin(slave.try_clone()?)
        .stdout(slave.try_clone()?)
        .stderr(slave);
    let spawned = spawn_leader(&mut command, Leads::TerminalSession, confine);
    // The daemon's ends of the slave go now (the child has its own): when the command's last
    // process is gone, reads of the master end.
    drop(command);
    drop(pair.slave);
    let (child, tree) = spawned?;
    let reader = pair
        .master
        .try_clone_reader()
        .map_err(|error| io::Error::other(format!("cannot read the PTY: {error}")))?;
    let writer = pair
        .master
        .take_writer()
        .map_err(|error| io::Error::other(format!("cannot write to the PTY: {error}")))?;
    let (sender, output) = mpsc::channel(OUTPUT_CHANNEL);
    std::thread::Builder::new()
        .name("openturn-pty-reader".into())
        .spawn(move || read_pty(reader, sender))?;
    Ok(Terminal {
        child,
        tree,
        output,
        input: Some(TerminalInput::Pty(Arc::new(Mutex::new(writer)))),
        pty: Some(PtyHandle {
            master: Arc::new(Mutex::new(pair.master)),
        }),
    })
}

/// The PTY's reading thread: blocking reads until the slave is closed everywhere.
fn read_pty(mut reader: Box<dyn Read + Send>, sender: mpsc::Sender<(Stream, Vec<u8>)>) {
    let mut buffer = vec![0u8; READ_CHUNK];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => return,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
            Ok(n) => {
                if sender
                    .blocking_send((Stream::Stdout, buffer[..n].to_vec()))
                    .is_err()
                {
                    return;
                }
            }
        }
    }
}

/// A command's stdin: the PTY's master or a pipe.
pub(crate) enum TerminalInput {
    /// Shared with the blocking thread a write runs on; one write at a time.
    Pty(Arc<Mutex<Box<dyn Write + Send>>>),
    Pipe(ChildStdin),
}

impl TerminalInput {
    /// Writes all of `bytes`. A PTY write may block (the line discipline's buffer is full), so
    /// it runs on a blocking thread.
    pub(crate) async fn write(&mut self, bytes: Vec<u8>) -> io::Result<()> {
        match self {
            TerminalInput::Pipe(pipe) => {
                pipe.write_all(&bytes).await?;
                pipe.flush().await
            }
            TerminalInput::Pty(writer) => {
                let writer = writer.clone();
                tokio::task::spawn_blocking(move || {
                    let mut writer = writer
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    writer.write_all(&bytes)?;
                    writer.flush()
                })
                .await
                .map_err(io::Error::other)?
            }
        }
    }
}

impl std::fmt::Debug for TerminalInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TerminalInput::Pty(_) => f.write_str("TerminalInput::Pty"),
            TerminalInput::Pipe(_) => f.write_str("TerminalInput::Pipe"),
        }
    }
}

/// A PTY's master, kept to resize it.
#[derive(Clone)]
pub(crate) struct PtyHandle {
    master: Arc<Mutex<Box<dyn MasterPty + Send>>>,
}

impl PtyHandle {
    pub(crate) fn resize(&self, size: TerminalSize) -> io::Result<()> {
        let master = self
            .master
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        master
            .resize(PtySize {
                rows: size.rows,
                cols: size.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|error| io::Error::other(error.to_string()))
    }
}

impl std::fmt::Debug for PtyHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PtyHandle")
    }
}
