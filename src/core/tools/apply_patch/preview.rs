//! The client's view of a patch the model is still writing (`item/fileChange/patchUpdated`),
//! kept in time and bytes proportional to the patch.
//!
//! Each update carries every file parsed so far (the protocol's `changes` is a snapshot, not a
//! delta), so sending one per line would send the patch again on every line: quadratic in its
//! length. Here each complete line is parsed once ([`PatchStream`]) and only appended to its
//! file's rendered diff; an update is due only when the view has grown by a quarter since the
//! last one was sent. The sizes sent then grow geometrically, so all updates of a patch
//! together carry at most about five times the patch, however finely it streams, and a short
//! patch still shows nearly every line. [`PatchPreview::finish`] sends what the last update
//! missed once the input is complete.
//!
//! As the reference shows it: each file's path as the patch writes it, an added file's lines so
//! far, an updated file's hunks as written (not yet matched against the file), nothing for a
//! deleted file.

use super::super::super::items::FileChangeEntry;
use super::parser::{FileOp, HunkLine, PatchStream};
use super::tool::{op_kind, sort_by_path};

/// An update is due once the rendered view has grown by this fraction (1/N) of what was last
/// sent: a geometric series, so the bytes of all updates stay within a constant factor of the
/// patch.
const GROWTH_DIVISOR: usize = 4;

/// A streamed patch and its rendered view.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct PatchPreview {
    stream: PatchStream,
    /// One per file section parsed so far, in patch order.
    files: Vec<RenderedFile>,
    /// Bytes of every path and diff rendered; grows with every line that changes the view.
    size: usize,
    /// `size` when the last update was sent.
    shown: usize,
}

/// One file's diff as rendered so far, and how much of its section that covers.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct RenderedFile {
    diff: String,
    /// Bytes of an added file's content already in `diff`.
    added: usize,
    /// Hunks of an update with their header in `diff`, and lines of the last of them.
    hunks: usize,
    lines_in_last_hunk: usize,
    /// Whether the `*** Move to:` path is counted in the size.
    move_counted: bool,
}

impl PatchPreview {
    /// Appends a delta of the patch; the files parsed so far when an update is due.
    pub(crate) fn push(&mut self, delta: &str) -> Option<Vec<FileChangeEntry>> {
        if !self.stream.push(delta) {
            return None;
        }
        self.render_new_lines();
        let grown = self
            .size
            .checked_sub(self.shown)
            .filter(|grown| *grown > 0)?;
        (grown >= self.shown / GROWTH_DIVISOR).then(|| self.update())
    }

    /// The complete view, if it holds anything the last update did not.
    pub(crate) fn finish(&mut self) -> Option<Vec<FileChangeEntry>> {
        (self.size > self.shown).then(|| self.update())
    }

    /// The view as it stands, whether or not it was sent.
    pub(crate) fn entries(&self) -> Vec<FileChangeEntry> {
        let mut entries: Vec<FileChangeEntry> = self
            .stream
            .snapshot()
            .files
            .iter()
            .zip(&self.files)
            .map(|(op, rendered)| FileChangeEntry {
                path: op.path().to_string(),
                kind: op_kind(op, str::to_string),
                diff: rendered.diff.clone(),
            })
            .collect();
        sort_by_path(&mut entries);
        entries
    }

    fn update(&mut self) -> Vec<FileChangeEntry> {
        self.shown = self.size;
        self.entries()
    }

    /// Renders what the lines just parsed added. Only the section that was last before them
    /// and the sections they opened can have changed; earlier sections are final.
    fn render_new_lines(&mut self) {
        let ops = &self.stream.snapshot().files;
        let first = self.files.len().saturating_sub(1);
        for (index, op) in ops.iter().enumerate().skip(first) {
            if index == self.files.len() {
                self.files.push(RenderedFile::default());
                self.size += op.path().len();
            }
            let rendered = &mut self.files[index];
            self.size += rendered.render_more(op);
        }
    }
}

impl RenderedFile {
    /// Appends the part of `op` not rendered yet; returns the bytes it added to the view.
    fn render_more(&mut self, op: &FileOp) -> usize {
        let before = self.diff.len();
        let mut counted = 0;
        match op {
            FileOp::Add { content, .. } => {
                self.diff.push_str(&content[self.added..]);
                self.added = content.len();
            }
            FileOp::Delete { .. } => {}
            FileOp::Update { move_to, hunks, .. } => {
                if let (Some(target), false) = (move_to, self.move_counted) {
                    self.move_counted = true;
                    counted = target.len();
                }
                for (index, hunk) in hunks.iter().enumerate().skip(self.hunks.saturating_sub(1)) {
                    let mut from = self.lines_in_last_hunk;
                    if index >= self.hunks {
                        match &hunk.context {
                            Some(context) => {
                                self.diff.push_str("@@ ");
                                self.diff.push_str(context);
                                self.diff.push('\n');
                            }
                            None => self.diff.push_str("@@\n"),
                        }
                        from = 0;
                    }
                    for line in &hunk.lines[from..] {
                        let (prefix, body) = match line {
                            HunkLine::Context(body) => (' ', body),
                            HunkLine::Remove(body) => ('-', body),
                            HunkLine::Add(body) => ('+', body),
                        };
                        self.diff.push(prefix);
                        self.diff.push_str(body);
                        self.diff.push('\n');
                    }
                    self.hunks = index + 1;
                    self.lines_in_last_hunk = hunk.lines.len();
                }
            }
        }
        self.diff.len() - before + counted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line, one delta each: the preview ends equal to rendering the whole patch at once,
    /// and the bytes of all updates stay within a constant factor of the patch.
    #[test]
    fn the_preview_is_incremental_and_its_updates_bounded() {
        let mut text = String::from("*** Begin Patch\n*** Add File: big.txt\n");
        for index in 0..3_000 {
            text.push_str(&format!("+line {index}\n"));
        }
        text.push_str("*** Update File: a.txt\n*** Move to: b.txt\n");
        for index in 0..500 {
            text.push_str(&format!("@@ fn f{index}()\n-old {index}\n+new {index}\n"));
        }
        text.push_str("*** Delete File: gone.txt\n*** End Patch\n");
        let mut preview = PatchPreview::default();
        let mut sent = 0;
        let mut updates = 0;
        for line in text.split_inclusive('\n') {
            for piece in [&line[..line.len() / 2], &line[line.len() / 2..]] {
                if let Some(entries) = preview.push(piece) {
                    updates += 1;
                    sent += entries
                        .iter()
                        .map(|e| e.path.len() + e.diff.len())
                        .sum::<usize>();
                }
            }
        }
        let last = preview.finish();
        assert!(last.is_some(), "the delete section was not shown yet");
        sent += last
            .iter()
            .flatten()
            .map(|e| e.path.len() + e.diff.len())
            .sum::<usize>();
        assert!(
            sent <= 6 * text.len(),
            "{sent} bytes sent for {}",
            text.len()
        );
        assert!(updates >= 10, "{updates} updates");
        assert_eq!(preview.finish(), None);

        let mut whole = PatchPreview::default();
        assert!(whole.push(&text).is_some());
        assert_eq!(preview.entries(), whole.entries());
        let entries = whole.entries();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].path, "a.txt");
        assert!(entries[0]
            .diff
            .starts_with("@@ fn f0()\n-old 0\n+new 0\n@@ fn f1()\n"));
        assert!(entries[1].diff.starts_with("line 0\nline 1\n"));
        assert_eq!(entries[2].diff, "");
    }
}
