//! A streaming scanner for one pair of literal tags (`<x>` … `</x>`) in text that arrives in
//! arbitrary pieces. It owns only the split: which bytes are outside a tag pair, which inside,
//! and where the tags were. A tag cut across two pieces is held back until it can be decided,
//! so a consumer never sees half a tag as ordinary text.

/// One piece of scanner output, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TagEvent {
    Outside(String),
    Open,
    Inside(String),
    Close,
}

#[derive(Debug, Clone)]
pub(crate) struct TagScanner {
    open: &'static str,
    close: &'static str,
    inside: bool,
    /// Text not yet emitted because its tail could be the start of the tag we look for.
    held: String,
}

impl TagScanner {
    pub(crate) fn new(open: &'static str, close: &'static str) -> TagScanner {
        TagScanner {
            open,
            close,
            inside: false,
            held: String::new(),
        }
    }

    /// Whether [`TagScanner::push`] of `chunk` would return exactly `[Outside(chunk)]` (or
    /// nothing, for an empty chunk) and change nothing: outside the tag, nothing held, and no
    /// byte of `chunk` can begin the tag. Callers use it to skip the event list.
    pub(crate) fn passes_through(&self, chunk: &str) -> bool {
        let tag_start = self.open.as_bytes().first().copied().unwrap_or(b'<');
        !self.inside
            && self.held.is_empty()
            && memchr::memchr(tag_start, chunk.as_bytes()).is_none()
    }

    /// Feeds a piece of text; returns what can be decided now.
    pub(crate) fn push(&mut self, chunk: &str) -> Vec<TagEvent> {
        let mut out = Vec::new();
        let tag = if self.inside { self.close } else { self.open };
        let tag_start = tag.as_bytes().first().copied().unwrap_or(b'<');
        if self.held.is_empty() && memchr::memchr(tag_start, chunk.as_bytes()).is_none() {
            // Nothing held and nothing here can begin the tag: the whole piece is decided (the
            // common case — most text has no tag in it — without copying it through `held`).
            self.emit_text(chunk.to_string(), &mut out);
            return out;
        }
        self.held.push_str(chunk);
        loop {
            let tag = if self.inside { self.close } else { self.open };
            match self.held.find(tag) {
                Some(index) => {
                    let before: String = self.held[..index].to_string();
                    self.held.drain(..index + tag.len());
                    self.emit_text(before, &mut out);
                    out.push(if self.inside {
                        TagEvent::Close
                    } else {
                        TagEvent::Open
                    });
                    self.inside = !self.inside;
                }
                None => {
                    let keep = partial_tag_suffix(&self.held, tag);
                    let ready: String = self.held[..self.held.len() - keep].to_string();
                    self.held.drain(..self.held.len() - keep);
                    self.emit_text(ready, &mut out);
                    return out;
                }
            }
        }
    }

    /// Ends the stream: held text is released as it stands, and an open tag pair is closed.
    pub(crate) fn finish(&mut self) -> Vec<TagEvent> {
        let mut out = Vec::new();
        let rest = std::mem::take(&mut self.held);
        self.emit_text(rest, &mut out);
        if self.inside {
            self.inside = false;
            out.push(TagEvent::Close);
        }
        out
    }

    fn emit_text(&self, text: String, out: &mut Vec<TagEvent>) {
        if text.is_empty() {
            return;
        }
        out.push(if self.inside {
            TagEvent::Inside(text)
        } else {
            TagEvent::Outside(text)
        });
    }
}

/// Length of the longest suffix of `text` that is a proper prefix of `tag`.
fn partial_tag_suffix(text: &str, tag: &str) -> usize {
    let longest = tag.len().saturating_sub(1).min(text.len());
    (1..=longest)
        .rev()
        .find(|&len| {
            let start = text.len() - len;
            text.is_char_boundary(start) && tag.starts_with(&text[start..])
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(pieces: &[&str]) -> Vec<TagEvent> {
        let mut scanner = TagScanner::new("<t>", "</t>");
        let mut out = Vec::new();
        for piece in pieces {
            out.extend(scanner.push(piece));
        }
        out.extend(scanner.finish());
        merge(out)
    }

    /// Adjacent text events joined, so splits compare equal to the unsplit result.
    fn merge(events: Vec<TagEvent>) -> Vec<TagEvent> {
        let mut out: Vec<TagEvent> = Vec::new();
        for event in events {
            match (out.last_mut(), event) {
                (Some(TagEvent::Outside(a)), TagEvent::Outside(b)) => a.push_str(&b),
                (Some(TagEvent::Inside(a)), TagEvent::Inside(b)) => a.push_str(&b),
                (_, event) => out.push(event),
            }
        }
        out
    }

    #[test]
    fn tags_split_at_every_byte_give_the_same_events() {
        let text = "héllo <t>in</t> wörld <t";
        let expected = scan_all(&[text]);
        assert_eq!(
            expected,
            vec![
                TagEvent::Outside("héllo ".into()),
                TagEvent::Open,
                TagEvent::Inside("in".into()),
                TagEvent::Close,
                TagEvent::Outside(" wörld <t".into()),
            ]
        );
        for split in 1..text.len() {
            if !text.is_char_boundary(split) {
                continue;
            }
            assert_eq!(
                scan_all(&[&text[..split], &text[split..]]),
                expected,
                "{split}"
            );
        }
    }

    #[test]
    fn an_unclosed_pair_is_closed_at_finish() {
        assert_eq!(
            scan_all(&["a<t>b"]),
            vec![
                TagEvent::Outside("a".into()),
                TagEvent::Open,
                TagEvent::Inside("b".into()),
                TagEvent::Close
            ]
        );
    }
}
