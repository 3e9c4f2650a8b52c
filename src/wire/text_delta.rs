//! The common frame, read without the general decoder: `response.output_text.delta` is nearly
//! every frame of a turn, and reading it through `serde_json` into the lenient DTO of `map.rs`
//! cost about a third of the daemon's instructions per delta (callgrind, 20,000-delta turns).
//!
//! [`text_delta`] reads a flat JSON object once, left to right, and answers only when it is sure
//! of the answer [`super::map::map_frame`] would give: an object whose `type` is the text delta,
//! with string `item_id` and `delta`, and whose other members are values the DTO would accept.
//! Anything else — another type, a nested value (other than an empty `[]` / `{}`), a malformed
//! or duplicate member, a number that is not plain JSON — returns `None`, and the caller takes
//! the general path, which decides exactly as before. A string with escapes is decoded by
//! `serde_json` itself, so escaping rules live in one place. A test feeds both paths the same
//! frames, random ones included, and holds every answer of this one equal to the general one.

use std::borrow::Cow;

use super::event::ResponseEvent;

const TEXT_DELTA: &str = "response.output_text.delta";

/// The event of a text-delta frame, or `None` when the general path must decide.
pub(super) fn text_delta(data: &str) -> Option<ResponseEvent> {
    let mut reader = Reader {
        bytes: data.as_bytes(),
        data,
        at: 0,
    };
    let mut kind_seen = false;
    let mut item_id = None;
    let mut delta = None;
    // The typed members of the DTO seen so far: the DTO refuses a frame naming one twice.
    let mut typed_seen = 0u8;
    reader.skip_space();
    reader.expect(b'{')?;
    reader.skip_space();
    if reader.peek()? == b'}' {
        return None;
    }
    loop {
        let key = reader.plain_string()?;
        reader.skip_space();
        reader.expect(b':')?;
        reader.skip_space();
        match key {
            "type" => {
                // Compared where it lies: this member is in every frame, and a copy of it
                // would be an allocation per delta.
                if kind_seen || reader.borrowed_string()? != TEXT_DELTA {
                    return None;
                }
                kind_seen = true;
            }
            "item_id" if item_id.is_none() => item_id = Some(reader.string()?),
            "delta" if delta.is_none() => delta = Some(reader.string()?),
            // Members the general DTO reads with a type: they must be what it expects (or
            // null), else it refuses the frame and so must this.
            "call_id" | "text" | "code" | "message" | "summary_index" | "content_index" => {
                let bit = match key {
                    "call_id" => 1,
                    "text" => 2,
                    "code" => 4,
                    "message" => 8,
                    "summary_index" => 16,
                    _ => 32,
                };
                if typed_seen & bit != 0 {
                    return None;
                }
                typed_seen |= bit;
                if bit >= 16 {
                    reader.integer_or_null()?;
                } else {
                    reader.string_or_null()?;
                }
            }
            // Read by the DTO (and so checked once each); everything else is ignored by it.
            "item_id" | "delta" | "error" | "item" | "response" => return None,
            _ => reader.any_flat_value()?,
        }
        reader.skip_space();
        match reader.next()? {
            b',' => reader.skip_space(),
            b'}' => break,
            _ => return None,
        }
    }
    reader.skip_space();
    if reader.at != reader.bytes.len() || !kind_seen {
        return None;
    }
    Some(ResponseEvent::OutputTextDelta {
        item_id: item_id?,
        delta: delta?,
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    data: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The extent of the string starting here (quotes included), and whether it has escapes.
    /// `None` for an unterminated string or a raw control character (invalid JSON).
    fn string_extent(&mut self) -> Option<(usize, usize, bool)> {
        let start = self.at;
        self.expect(b'"')?;
        let mut escaped = false;
        loop {
            // One tight scan to the next byte that matters, not a step per byte.
            let rest = self.bytes.get(self.at..)?;
            let stop = rest
                .iter()
                .position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)?;
            self.at += stop + 1;
            match rest[stop] {
                b'"' => return Some((start, self.at, escaped)),
                b'\\' => {
                    escaped = true;
                    self.next()?;
                }
                _ => return None,
            }
        }
    }

    /// A string without escapes, borrowed (member names).
    fn plain_string(&mut self) -> Option<&'a str> {
        let (start, end, escaped) = self.string_extent()?;
        if escaped {
            return None;
        }
        self.data.get(start + 1..end - 1)
    }

    /// A string value, unescaped by `serde_json` when it has escapes.
    fn string(&mut self) -> Option<String> {
        self.borrowed_string().map(Cow::into_owned)
    }

    /// [`Reader::string`], borrowed from the frame unless it has escapes.
    fn borrowed_string(&mut self) -> Option<Cow<'a, str>> {
        let (start, end, escaped) = self.string_extent()?;
        let quoted = self.data.get(start..end)?;
        if escaped {
            serde_json::from_str::<String>(quoted).ok().map(Cow::Owned)
        } else {
            quoted.get(1..quoted.len() - 1).map(Cow::Borrowed)
        }
    }

    /// Steps over a string value, checking its escapes (by `serde_json`) when it has any.
    fn skip_string(&mut self) -> Option<()> {
        let (start, end, escaped) = self.string_extent()?;
        if escaped {
            serde_json::from_str::<serde::de::IgnoredAny>(self.data.get(start..end)?).ok()?;
        }
        Some(())
    }

    fn string_or_null(&mut self) -> Option<()> {
        if self.peek()? == b'"' {
            self.skip_string()
        } else {
            self.literal(b"null")
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        if self.bytes.get(self.at..end)? != word {
            return None;
        }
        self.at = end;
        Some(())
    }

    /// A JSON number; `integer` when it has no fraction or exponent.
    fn number(&mut self) -> Option<bool> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        // `-0` reads as a float (it keeps its sign), never as an integer.
        let mut integer = match self.next()? {
            b'0' => !negative,
            b'1'..=b'9' => {
                self.digits();
                true
            }
            _ => return None,
        };
        if self.peek() == Some(b'.') {
            self.at += 1;
            integer = false;
            self.at_least_one_digit()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            integer = false;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.at_least_one_digit()?;
        }
        // Past 18 digits an integer may not fit the i64 the DTO reads: let it decide.
        (self.at - start <= 18 || !integer).then_some(integer)
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn at_least_one_digit(&mut self) -> Option<()> {
        self.next()?.is_ascii_digit().then(|| self.digits())
    }

    fn integer_or_null(&mut self) -> Option<()> {
        if self.peek()? == b'n' {
            return self.literal(b"null");
        }
        self.number()?.then_some(())
    }

    /// Any value but a non-empty array or object.
    fn any_flat_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            open @ (b'[' | b'{') => {
                self.at += 1;
                self.skip_space();
                let close = if open == b'[' { b']' } else { b'}' };
                self.expect(close)
            }
            _ => self.number().map(|_| ()),
        }
    }
}
