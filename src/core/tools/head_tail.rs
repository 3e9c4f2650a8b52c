//! What a command's output keeps for the model: the first and the last lines, within a byte and
//! a line budget, with the middle counted and elided. The output streams in chunks of any size
//! and may be far larger than memory should hold, so only the head and a sliding tail are kept;
//! the client still gets every chunk as a delta, this only shapes what goes back to the model.

use std::collections::VecDeque;

/// The line budget of what the model sees of one command's output (head and tail together).
pub(crate) const MODEL_OUTPUT_LINES: usize = 256;

/// The head and tail of a stream of text, each half of the budgets.
#[derive(Debug)]
pub(crate) struct HeadTail {
    head_budget_bytes: usize,
    head_budget_lines: usize,
    tail_budget_bytes: usize,
    tail_budget_lines: usize,
    head: String,
    head_lines: usize,
    /// Set once something went past the head: from then on everything goes to the tail.
    head_closed: bool,
    /// The tail's lines; each but the last ends with `\n`.
    tail: VecDeque<String>,
    tail_bytes: usize,
    elided_bytes: usize,
    elided_lines: usize,
}

impl HeadTail {
    /// A collector keeping at most `bytes` bytes and `lines` lines in total.
    pub(crate) fn new(bytes: usize, lines: usize) -> HeadTail {
        HeadTail {
            head_budget_bytes: bytes / 2,
            head_budget_lines: lines / 2,
            tail_budget_bytes: bytes - bytes / 2,
            tail_budget_lines: lines - lines / 2,
            head: String::new(),
            head_lines: 0,
            head_closed: false,
            tail: VecDeque::new(),
            tail_bytes: 0,
            elided_bytes: 0,
            elided_lines: 0,
        }
    }

    pub(crate) fn push(&mut self, text: &str) {
        for piece in text.split_inclusive('\n') {
            let rest = self.push_head(piece);
            if !rest.is_empty() {
                self.push_tail(rest);
            }
        }
    }

    /// Takes what fits of `piece` (at most one line) into the head; returns the rest.
    fn push_head<'a>(&mut self, piece: &'a str) -> &'a str {
        if self.head_closed {
            return piece;
        }
        // A line already started in the head continues there without counting as a new one.
        let continues_line = !self.head.is_empty() && !self.head.ends_with('\n');
        if !continues_line && self.head_lines >= self.head_budget_lines {
            self.head_closed = true;
            return piece;
        }
        let room = self.head_budget_bytes - self.head.len();
        let mut take = piece.len().min(room);
        while !piece.is_char_boundary(take) {
            take -= 1;
        }
        if !continues_line {
            self.head_lines += 1;
        }
        self.head.push_str(&piece[..take]);
        if take < piece.len() {
            self.head_closed = true;
        }
        &piece[take..]
    }

    fn push_tail(&mut self, piece: &str) {
        match self.tail.back_mut() {
            Some(last) if !last.ends_with('\n') => last.push_str(piece),
            _ => self.tail.push_back(piece.to_string()),
        }
        self.tail_bytes += piece.len();
        while self.tail.len() > self.tail_budget_lines {
            if let Some(dropped) = self.tail.pop_front() {
                self.tail_bytes -= dropped.len();
                self.elided_bytes += dropped.len();
                self.elided_lines += 1;
            }
        }
        while self.tail_bytes > self.tail_budget_bytes {
            let Some(front) = self.tail.front_mut() else {
                break;
            };
            let excess = self.tail_bytes - self.tail_budget_bytes;
            if excess >= front.len() {
                let dropped_len = front.len();
                self.tail.pop_front();
                self.tail_bytes -= dropped_len;
                self.elided_bytes += dropped_len;
                self.elided_lines += 1;
            } else {
                // Only part of one long line goes: cut at a character boundary past the excess.
                let mut cut = excess;
                while !front.is_char_boundary(cut) {
                    cut += 1;
                }
                front.drain(..cut);
                self.tail_bytes -= cut;
                self.elided_bytes += cut;
            }
        }
    }

    /// Whether anything was elided.
    pub(crate) fn elided(&self) -> bool {
        self.elided_bytes > 0
    }

    /// The kept text; when something was elided, a line in the middle says how much.
    pub(crate) fn render(&self) -> String {
        let mut text = self.head.clone();
        if self.elided() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[… {} lines ({} bytes) elided …]\n",
                self.elided_lines, self.elided_bytes
            ));
        }
        for line in &self.tail {
            text.push_str(line);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(text: &str, bytes: usize, lines: usize, chunk: usize) -> String {
        let mut head_tail = HeadTail::new(bytes, lines);
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + chunk).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            head_tail.push(&text[start..end]);
            start = end;
        }
        head_tail.render()
    }

    #[test]
    fn short_output_is_kept_whole_whatever_the_chunking() {
        let text = "one\ntwo\nthree";
        for chunk in 1..=text.len() {
            assert_eq!(collect(text, 1024, 10, chunk), text);
        }
    }

    #[test]
    fn many_lines_keep_the_first_and_last_with_the_count_between() {
        let text: String = (1..=100).map(|n| format!("{n}\n")).collect();
        for chunk in [1, 3, 7, 1000] {
            let kept = collect(&text, 1024, 4, chunk);
            let elided_bytes = text.len() - "1\n2\n99\n100\n".len();
            assert_eq!(
                kept,
                format!("1\n2\n[… 96 lines ({elided_bytes} bytes) elided …]\n99\n100\n"),
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn one_long_line_keeps_its_ends_within_the_byte_budget() {
        let text = format!("{}{}", "a".repeat(100), "é".repeat(50));
        let kept = collect(&text, 20, 10, 9);
        assert!(kept.starts_with("aaaaaaaaaa\n[… 0 lines ("), "{kept}");
        assert!(kept.ends_with("ééééé"), "{kept}");
        assert!(kept.len() < 80, "{kept}");
    }
}
