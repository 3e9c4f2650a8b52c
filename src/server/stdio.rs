//! Framing on stdio: newline-delimited JSON. Reads whole lines (bounded: an oversized line is
//! skipped without being buffered whole) and writes queued lines from one task.

use bytes::Bytes;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One framed input line.
#[derive(Debug, PartialEq)]
pub enum InputLine {
    Line(Vec<u8>),
    /// A line longer than the limit; its bytes were discarded as they arrived.
    TooLong {
        length: usize,
    },
    Eof,
}

/// Reads newline-delimited lines of at most `max_len` bytes.
pub struct LineReader<R> {
    reader: R,
    max_len: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(reader: R, max_len: usize) -> LineReader<R> {
        LineReader { reader, max_len }
    }

    pub async fn next_line(&mut self) -> std::io::Result<InputLine> {
        let mut line = Vec::new();
        let mut length = 0usize;
        let mut too_long = false;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(match (length, too_long) {
                    (0, _) => InputLine::Eof,
                    (_, true) => InputLine::TooLong { length },
                    // A final line without '\n' still counts.
                    (_, false) => InputLine::Line(line),
                });
            }
            let (chunk, found_newline) = match available.iter().position(|b| *b == b'\n') {
                Some(index) => (&available[..index], true),
                None => (available, false),
            };
            length += chunk.len();
            if !too_long && length > self.max_len {
                too_long = true;
                line = Vec::new();
            }
            if !too_long {
                line.extend_from_slice(chunk);
            }
            let consumed = chunk.len() + usize::from(found_newline);
            self.reader.consume(consumed);
            if found_newline {
                return Ok(if too_long {
                    InputLine::TooLong { length }
                } else {
                    InputLine::Line(line)
                });
            }
        }
    }
}

/// The daemon's stdout as an async writer.
///
/// When stdout is a pipe of its own (the normal case: an editor or SDK spawned us), it is switched
/// to non-blocking mode and driven by the reactor, so a burst of lines costs one `write` on the
/// runtime thread. Otherwise — a file, a terminal, or a pipe shared with stderr, whose blocking
/// log writes must never start failing with `EAGAIN` — tokio's stdout is used, which hands every
/// write to a blocking-pool thread and costs two thread switches per burst (a measured ~10% of
/// the daemon's CPU when streaming deltas).
pub(crate) fn stdout_writer() -> Box<dyn AsyncWrite + Unpin + Send> {
    match nonblocking_stdout_pipe() {
        Ok(pipe) => Box::new(pipe),
        Err(reason) => {
            tracing::debug!(%reason, "stdout is not a private pipe; writing through a blocking thread");
            Box::new(tokio::io::stdout())
        }
    }
}

#[cfg(unix)]
fn nonblocking_stdout_pipe() -> std::io::Result<tokio::net::unix::pipe::Sender> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned()?;
    let stdout_meta = std::fs::File::from(stdout.try_clone()?).metadata()?;
    let stderr = std::io::stderr().as_fd().try_clone_to_owned()?;
    let stderr_meta = std::fs::File::from(stderr).metadata()?;
    if (stdout_meta.dev(), stdout_meta.ino()) == (stderr_meta.dev(), stderr_meta.ino()) {
        return Err(std::io::Error::other("stdout and stderr are the same file"));
    }
    // Fails (and we fall back) unless stdout is a pipe or FIFO open for writing.
    tokio::net::unix::pipe::Sender::from_owned_fd(stdout)
}

#[cfg(not(unix))]
fn nonblocking_stdout_pipe() -> std::io::Result<tokio::io::Stdout> {
    Err(std::io::Error::other("non-blocking pipes need unix"))
}

/// Which way a watched descriptor carries the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Input,
    Output,
}

/// Cancels `gone` once the client closed its end of `fd`, without reading or writing it.
///
/// A failed write is how the writer learns that stdout is closed, but nothing is written while a
/// silent tool runs, and nothing is read from stdin while the request loop waits for room in the
/// outgoing queue: without this watch, a client that went away would hold the daemon (and the
/// tool) for as long as that lasts. Every wake-up of the reactor for `fd` is checked with a
/// zero-timeout `poll(2)`: for stdout, a pipe whose reader left (POLLERR) or a socket or terminal
/// that hung up (POLLHUP); for stdin, its writer closing (POLLHUP, POLLRDHUP), which a pipe
/// reports even while unread lines remain in it. Returns at once for a descriptor the reactor
/// cannot watch (a file, `/dev/null`: they never hang up), and when `stop` is cancelled.
#[cfg(unix)]
pub(crate) async fn watch_for_hangup(
    fd: std::os::fd::OwnedFd,
    direction: Direction,
    gone: CancellationToken,
    stop: CancellationToken,
) {
    use std::os::fd::AsRawFd;
    use tokio::io::{unix::AsyncFd, Interest};
    // Errors and hangups are reported whatever the interest; READABLE is the registration
    // tokio needs, and on stdin also wakes us when input arrives (checked, then ignored).
    let interest = Interest::READABLE | Interest::ERROR;
    // SAFETY: `fd` is an open descriptor owned by the `AsyncFd` from here on, so it stays open
    // and names the same file description for the `AsyncFd`'s whole life.
    let watched = match unsafe { AsyncFd::register_with_interest(fd, interest) } {
        Ok(watched) => watched,
        Err(error) => {
            let error = error.to_string();
            tracing::debug!(?direction, %error, "stdio descriptor cannot be watched for hangup");
            return;
        }
    };
    loop {
        if client_end_closed(watched.as_raw_fd(), direction) {
            tracing::info!(?direction, "the client closed its end of stdio");
            gone.cancel();
            return;
        }
        let mut ready = tokio::select! {
            ready = watched.ready(interest) => match ready {
                Ok(ready) => ready,
                Err(_) => return,
            },
            _ = stop.cancelled() => return,
        };
        ready.clear_ready();
    }
}

/// Watches the process's own stdin and stdout for the client closing them (see
/// [`watch_for_hangup`]) until `stop` is cancelled.
#[cfg(unix)]
pub(crate) fn watch_stdio(
    input_hung_up: &CancellationToken,
    output_closed: &CancellationToken,
    stop: &CancellationToken,
) {
    use std::os::fd::AsFd;
    let watched = [
        (
            std::io::stdin().as_fd().try_clone_to_owned(),
            Direction::Input,
            input_hung_up,
        ),
        (
            std::io::stdout().as_fd().try_clone_to_owned(),
            Direction::Output,
            output_closed,
        ),
    ];
    for (fd, direction, gone) in watched {
        match fd {
            Ok(fd) => {
                tokio::spawn(watch_for_hangup(fd, direction, gone.clone(), stop.clone()));
            }
            Err(error) => tracing::debug!(?direction, %error, "stdio descriptor not watched"),
        }
    }
}

#[cfg(unix)]
fn client_end_closed(fd: std::os::fd::RawFd, direction: Direction) -> bool {
    let events = match direction {
        Direction::Input => libc::POLLRDHUP,
        Direction::Output => 0,
    };
    let mut poll_fd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a zero timeout; `fd` stays open for the call (we own it).
    let ready = unsafe { libc::poll(&mut poll_fd, 1, 0) };
    ready == 1 && poll_fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLRDHUP) != 0
}

/// Most queued messages written per flush; bounds the latency a burst can add to the first
/// line in it.
const MAX_MESSAGES_PER_FLUSH: usize = 64;

/// Owns stdout: writes every queued message (one or more complete lines), flushing after each
/// burst. Ends when every sender is dropped or `finish` is cancelled (after writing what is
/// queued), or when the output fails (EPIPE: the client went away), in which case it cancels
/// `closed` so the connection shuts down.
pub(crate) async fn run_writer<W: AsyncWrite + Unpin>(
    mut output: W,
    mut lines_rx: mpsc::Receiver<Bytes>,
    closed: CancellationToken,
    finish: CancellationToken,
) {
    let finishing = finish.cancelled();
    tokio::pin!(finishing);
    let mut finished = false;
    let mut burst = Vec::with_capacity(MAX_MESSAGES_PER_FLUSH);
    let mut joined = Vec::new();
    loop {
        let received = if finished {
            lines_rx.recv_many(&mut burst, MAX_MESSAGES_PER_FLUSH).await
        } else {
            tokio::select! {
                received = lines_rx.recv_many(&mut burst, MAX_MESSAGES_PER_FLUSH) => received,
                _ = &mut finishing => {
                    lines_rx.close();
                    finished = true;
                    continue;
                }
            }
        };
        if received == 0 {
            break;
        }
        if let Err(error) = write_burst(&mut output, &mut burst, &mut joined).await {
            tracing::info!(%error, "stdout closed; shutting down");
            closed.cancel();
            return;
        }
    }
    let _ = output.flush().await;
}

/// Writes the messages of `burst` with one write when possible: a lone message as it is, several
/// joined in `joined` (a buffer kept across bursts, so joining does not allocate).
async fn write_burst<W: AsyncWrite + Unpin>(
    output: &mut W,
    burst: &mut Vec<Bytes>,
    joined: &mut Vec<u8>,
) -> std::io::Result<()> {
    if let [only] = burst.as_slice() {
        output.write_all(only).await?;
    } else {
        joined.clear();
        for message in burst.iter() {
            joined.extend_from_slice(message);
        }
        output.write_all(joined).await?;
        // A burst far above the usual size is not kept around.
        if joined.capacity() > 1 << 20 {
            *joined = Vec::new();
        }
    }
    burst.clear();
    output.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn oversized_lines_are_skipped_and_reading_goes_on() {
        let input: &[u8] = b"{\"a\":1}\n0123456789abcdef\n{\"b\":2}";
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(4, input), 10);
        assert_eq!(
            reader.next_line().await.ok(),
            Some(InputLine::Line(b"{\"a\":1}".to_vec()))
        );
        assert_eq!(
            reader.next_line().await.ok(),
            Some(InputLine::TooLong { length: 16 })
        );
        assert_eq!(
            reader.next_line().await.ok(),
            Some(InputLine::Line(b"{\"b\":2}".to_vec()))
        );
        assert_eq!(reader.next_line().await.ok(), Some(InputLine::Eof));
    }
}
