//! A tool's child process as it runs: its exit code, and its output decoded as UTF-8 without
//! ever splitting a character between two pieces. Starting it
//! and killing everything it started is the supervisor's job (`crate::supervisor`).

pub(crate) fn exit_code_of(status: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
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
