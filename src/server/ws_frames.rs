//! WebSocket framing of what the daemon sends on a socket connection (RFC 6455, server to
//! client: final, unmasked frames). The fan-out frames a round of notifications once and every
//! socket subscriber's writer writes those same bytes, so an added subscriber costs a hand-off
//! and a copy into its socket, not the framing of every line again. Reading stays with
//! tungstenite, which also frames the control replies it makes (pongs, the close reply).

use bytes::Bytes;

/// Opcode byte of a final text frame.
const TEXT: u8 = 0x81;
/// Opcode byte of a (final) close frame.
const CLOSE: u8 = 0x88;

/// `lines` (JSON-RPC messages, each ending in `\n`) as one text frame per line, without the
/// newline. A last line without its newline is framed too.
pub(crate) fn frame_lines(lines: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(lines.len() + lines.len() / 16 + 16);
    let mut rest = lines;
    while !rest.is_empty() {
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        push_frame(&mut out, TEXT, &rest[..end]);
        rest = rest.get(end + 1..).unwrap_or_default();
    }
    Bytes::from(out)
}

/// A close frame with `code` and a short `reason` (cut to fit a control frame's 125 bytes).
pub(crate) fn close_frame(code: u16, reason: &str) -> Bytes {
    let mut reason = reason.as_bytes();
    if reason.len() > 123 {
        reason = &reason[..123];
    }
    let mut payload = Vec::with_capacity(2 + reason.len());
    payload.extend_from_slice(&code.to_be_bytes());
    payload.extend_from_slice(reason);
    let mut out = Vec::with_capacity(2 + payload.len());
    push_frame(&mut out, CLOSE, &payload);
    Bytes::from(out)
}

/// Whether `frame` (a complete frame, as tungstenite writes its replies) is a close frame.
pub(crate) fn is_close(frame: &[u8]) -> bool {
    frame
        .first()
        .is_some_and(|first| first & 0x0f == CLOSE & 0x0f)
}

fn push_frame(out: &mut Vec<u8>, first: u8, payload: &[u8]) {
    out.push(first);
    let len = payload.len();
    if let Ok(short) = u8::try_from(len) {
        if short < 126 {
            out.push(short);
            out.extend_from_slice(payload);
            return;
        }
    }
    match u16::try_from(len) {
        Ok(medium) => {
            out.push(126);
            out.extend_from_slice(&medium.to_be_bytes());
        }
        Err(_) => {
            out.push(127);
            out.extend_from_slice(&(len as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_is_one_text_frame_without_its_newline() {
        let framed = frame_lines(b"{\"a\":1}\n{}\n");
        assert_eq!(&framed[..], b"\x81\x07{\"a\":1}\x81\x02{}");
    }

    #[test]
    fn lengths_use_the_short_medium_and_long_forms() {
        for (len, header) in [
            (125usize, vec![0x81, 125]),
            (126, vec![0x81, 126, 0, 126]),
            (65_535, vec![0x81, 126, 0xff, 0xff]),
            (65_536, vec![0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0]),
        ] {
            let mut line = vec![b'x'; len];
            line.push(b'\n');
            let framed = frame_lines(&line);
            assert_eq!(&framed[..header.len()], &header[..], "length {len}");
            assert_eq!(framed.len(), header.len() + len, "length {len}");
        }
    }

    #[test]
    fn a_close_frame_carries_its_code_and_a_cut_reason() {
        let frame = close_frame(1013, "too slow");
        assert_eq!(&frame[..], b"\x88\x0a\x03\xf5too slow");
        assert!(is_close(&frame));
        assert_eq!(close_frame(1000, &"r".repeat(300)).len(), 2 + 125);
        assert!(!is_close(&frame_lines(b"{}\n")));
    }
}
