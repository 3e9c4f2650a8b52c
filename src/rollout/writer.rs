//! `RolloutWriter`: one blocking writer thread owns each rollout file.
//!
//! Every line is written with a single `write(2)` of the whole line plus `\n`, so a crash leaves
//! at most one torn last line, which the reader skips. `flush` fsyncs and acknowledges.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use tokio::sync::{mpsc, oneshot};

use super::line::{RolloutItem, RolloutLine};
use super::RolloutError;

/// Lines queued ahead of the writer thread. Appends are awaited with an acknowledgement, so this
/// only needs to absorb bursts from one thread's turn.
const WRITER_QUEUE: usize = 256;

enum WriterCommand {
    Append(Vec<u8>, oneshot::Sender<std::io::Result<()>>),
    Flush(oneshot::Sender<std::io::Result<()>>),
}

/// A handle to the task that owns one rollout file. Cloning shares the same writer.
#[derive(Clone, Debug)]
pub struct RolloutWriter {
    commands_tx: mpsc::Sender<WriterCommand>,
    path: PathBuf,
}

impl RolloutWriter {
    /// Creates a new rollout file (0600, folders 0700) and starts its writer.
    pub fn create(path: &Path) -> Result<RolloutWriter, RolloutError> {
        let io_error = |source| RolloutError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            create_private_dirs(parent).map_err(io_error)?;
        }
        let file = private_open(path, true).map_err(io_error)?;
        Ok(RolloutWriter::start(file, path))
    }

    /// Opens an existing rollout for appending (a resumed thread).
    pub fn open_append(path: &Path) -> Result<RolloutWriter, RolloutError> {
        let file = private_open(path, false).map_err(|source| RolloutError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(RolloutWriter::start(file, path))
    }

    fn start(file: File, path: &Path) -> RolloutWriter {
        let (commands_tx, commands_rx) = mpsc::channel(WRITER_QUEUE);
        // The thread ends when every handle is dropped (the channel closes).
        tokio::task::spawn_blocking(move || run_writer(file, commands_rx));
        RolloutWriter {
            commands_tx,
            path: path.to_path_buf(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line and waits until it has been written (not fsynced).
    pub async fn append(&self, item: RolloutItem) -> Result<(), RolloutError> {
        let line = RolloutLine::now(item);
        let mut bytes = serde_json::to_vec(&line).map_err(|error| RolloutError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(error),
        })?;
        bytes.push(b'\n');
        let (ack_tx, ack_rx) = oneshot::channel();
        self.send(WriterCommand::Append(bytes, ack_tx)).await?;
        self.await_ack(ack_rx).await
    }

    /// Fsyncs everything written so far.
    pub async fn flush(&self) -> Result<(), RolloutError> {
        let (ack_tx, ack_rx) = oneshot::channel();
        self.send(WriterCommand::Flush(ack_tx)).await?;
        self.await_ack(ack_rx).await
    }

    async fn send(&self, command: WriterCommand) -> Result<(), RolloutError> {
        self.commands_tx
            .send(command)
            .await
            .map_err(|_| RolloutError::WriterStopped(self.path.clone()))
    }

    async fn await_ack(
        &self,
        ack_rx: oneshot::Receiver<std::io::Result<()>>,
    ) -> Result<(), RolloutError> {
        match ack_rx.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(source)) => Err(RolloutError::Io {
                path: self.path.clone(),
                source,
            }),
            Err(_) => Err(RolloutError::WriterStopped(self.path.clone())),
        }
    }
}

fn run_writer(mut file: File, mut commands_rx: mpsc::Receiver<WriterCommand>) {
    while let Some(command) = commands_rx.blocking_recv() {
        match command {
            WriterCommand::Append(bytes, ack) => {
                let _ = ack.send(write_line(&mut file, &bytes));
            }
            WriterCommand::Flush(ack) => {
                let _ = ack.send(file.sync_data());
            }
        }
    }
    let _ = file.sync_data();
}

/// One `write` call for the whole line; a short write (rare, e.g. disk full) finishes the line
/// with further writes rather than leaving it torn.
fn write_line(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    let written = file.write(bytes)?;
    if written < bytes.len() {
        file.write_all(&bytes[written..])?;
    }
    Ok(())
}

fn private_open(path: &Path, create_new: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true);
    if create_new {
        options.create_new(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Creates `dir` and its missing parents with mode 0700.
pub fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}
