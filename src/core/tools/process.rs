//! A tool's child process as it runs: its exit code, and its stdout and stderr read as they
//! arrive, decoded as UTF-8 without ever splitting a character between two pieces. Starting it
//! and killing everything it started is the supervisor's job (`crate::supervisor`).

use tokio::io::AsyncReadExt;
use tokio::process::{ChildStderr, ChildStdout};

pub(crate) fn exit_code_of(status: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
}

/// stdout and stderr, read as they come, decoded as UTF-8 without splitting characters.
pub(crate) struct OutputPipes {
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    pending_stdout: Vec<u8>,
    pending_stderr: Vec<u8>,
}

impl OutputPipes {
    pub(crate) fn new(stdout: Option<ChildStdout>, stderr: Option<ChildStderr>) -> OutputPipes {
        OutputPipes {
            stdout,
            stderr,
            pending_stdout: Vec::new(),
            pending_stderr: Vec::new(),
        }
    }

    pub(crate) fn is_open(&self) -> bool {
        self.stdout.is_some() || self.stderr.is_some()
    }

    /// The next decoded piece; `None` when a pipe closed or nothing decodable arrived yet.
    /// Never resolves once both pipes are closed.
    pub(crate) async fn next_chunk(&mut self) -> Option<String> {
        let mut out_buffer = [0u8; 8192];
        let mut err_buffer = [0u8; 8192];
        let (from_stdout, read) = tokio::select! {
            // Both ready: stdout first, so the order of sequential writes mostly survives.
            biased;
            read = read_some(&mut self.stdout, &mut out_buffer) => (true, read),
            read = read_some_err(&mut self.stderr, &mut err_buffer) => (false, read),
        };
        if from_stdout {
            Self::decode(
                &mut self.stdout,
                &mut self.pending_stdout,
                read,
                &out_buffer,
            )
        } else {
            Self::decode(
                &mut self.stderr,
                &mut self.pending_stderr,
                read,
                &err_buffer,
            )
        }
    }

    fn decode<T>(
        pipe: &mut Option<T>,
        pending: &mut Vec<u8>,
        read: std::io::Result<usize>,
        buffer: &[u8],
    ) -> Option<String> {
        match read {
            Ok(0) | Err(_) => {
                *pipe = None;
                let rest = String::from_utf8_lossy(pending).into_owned();
                pending.clear();
                Some(rest).filter(|rest| !rest.is_empty())
            }
            Ok(n) => {
                pending.extend_from_slice(&buffer[..n]);
                take_utf8(pending)
            }
        }
    }
}

async fn read_some(pipe: &mut Option<ChildStdout>, buffer: &mut [u8]) -> std::io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buffer).await,
        None => std::future::pending().await,
    }
}

async fn read_some_err(
    pipe: &mut Option<ChildStderr>,
    buffer: &mut [u8],
) -> std::io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buffer).await,
        None => std::future::pending().await,
    }
}

/// Takes the longest valid UTF-8 prefix of `pending` (invalid bytes become U+FFFD); an
/// incomplete character at the end waits for the next read.
pub(crate) fn take_utf8(pending: &mut Vec<u8>) -> Option<String> {
    let valid = match std::str::from_utf8(pending) {
        Ok(_) => pending.len(),
        Err(error) if error.error_len().is_none() => error.valid_up_to(),
        Err(_) => pending.len(),
    };
    let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
    pending.drain(..valid);
    Some(text).filter(|text| !text.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_is_never_split() {
        let mut pending = "é".as_bytes()[..1].to_vec();
        assert_eq!(take_utf8(&mut pending), None);
        pending.push("é".as_bytes()[1]);
        assert_eq!(take_utf8(&mut pending).as_deref(), Some("é"));
        let mut invalid = vec![b'a', 0xff, b'b'];
        assert_eq!(take_utf8(&mut invalid).as_deref(), Some("a\u{fffd}b"));
    }
}
