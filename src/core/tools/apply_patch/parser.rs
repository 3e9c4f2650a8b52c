//! The patch language: `*** Begin Patch`, file sections (`*** Add File:`, `*** Delete File:`,
//! `*** Update File:` with an optional `*** Move to:` and `@@` hunks), `*** End Patch`.
//!
//! The parser is a line-at-a-time state machine, so the same code serves a finished patch
//! ([`parse_patch`]) and one the model is still writing ([`PatchStream`]): the stream feeds each
//! complete line as it arrives and can show the files and hunks parsed so far at any moment.
//! It knows nothing about the file system.
//!
//! Tolerances (models write these): surrounding whitespace on marker lines, a heredoc wrapper
//! (`<<'EOF'` … `EOF`) around the patch, a first hunk without its `@@` line, and an empty line in
//! a hunk, read as an empty context line.

/// One parsed patch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Patch {
    pub files: Vec<FileOp>,
}

/// What one file section does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Creates `path` with `content` (each `+` line, newline-terminated).
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// One `@@` section of an update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    /// The text after `@@`: a line (often a function signature) that precedes the hunk.
    pub context: Option<String>,
    pub lines: Vec<HunkLine>,
    /// `*** End of File`: the hunk's old lines end the file.
    pub end_of_file: bool,
}

impl Hunk {
    /// The lines the file must contain for the hunk to apply (context and removals).
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                HunkLine::Context(text) | HunkLine::Remove(text) => Some(text.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect()
    }

    /// The lines that replace them (context and additions).
    pub fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                HunkLine::Context(text) | HunkLine::Add(text) => Some(text.as_str()),
                HunkLine::Remove(_) => None,
            })
            .collect()
    }
}

/// One line of a hunk, without its prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    Context(String),
    Remove(String),
    Add(String),
}

/// Why a patch could not be parsed; `line` counts from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid patch, line {line}: {message}")]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before `*** Begin Patch` (a heredoc opener may come first).
    Start,
    /// Between file sections.
    Files,
    /// Inside an Add section.
    Adding,
    /// Right after `*** Update File:` (a `*** Move to:` may follow).
    UpdateHeader,
    /// Inside an Update section's hunks.
    Hunks,
    /// After `*** End Patch` (only a heredoc terminator or blank lines may follow).
    Ended,
}

/// The line-at-a-time parser behind [`parse_patch`] and [`PatchStream`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct LineParser {
    patch: Patch,
    state: State,
    line_number: usize,
}

impl LineParser {
    fn new() -> LineParser {
        LineParser {
            patch: Patch::default(),
            state: State::Start,
            line_number: 0,
        }
    }

    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line_number,
            message: message.into(),
        }
    }

    /// Feeds one line (without its `\n`; a trailing `\r` is dropped).
    fn feed(&mut self, raw: &str) -> Result<(), ParseError> {
        self.line_number += 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let marker = line.trim();
        match self.state {
            State::Start => self.feed_start(marker),
            State::Ended => {
                if marker.is_empty() || is_heredoc_end(marker) {
                    Ok(())
                } else {
                    Err(self.error(format!("text after `{END}`: {line:?}")))
                }
            }
            State::UpdateHeader if marker.starts_with(MOVE.trim_end()) => {
                let target = marker[MOVE.trim_end().len()..].trim();
                if target.is_empty() {
                    return Err(self.error("`*** Move to:` names no path"));
                }
                if let Some(FileOp::Update { move_to, .. }) = self.patch.files.last_mut() {
                    *move_to = Some(target.to_string());
                }
                self.state = State::Hunks;
                Ok(())
            }
            _ if is_marker_line(line, marker) => self.feed_marker(marker),
            State::Files => {
                if marker.is_empty() {
                    Ok(())
                } else {
                    Err(self.error(format!(
                        "expected a file section (`{ADD}`, `{UPDATE}` or `{DELETE}`), got {line:?}"
                    )))
                }
            }
            State::Adding => self.feed_add_line(line),
            State::UpdateHeader | State::Hunks => {
                self.state = State::Hunks;
                self.feed_hunk_line(line, marker)
            }
        }
    }

    fn feed_start(&mut self, marker: &str) -> Result<(), ParseError> {
        if marker == BEGIN {
            self.state = State::Files;
            Ok(())
        } else if marker.is_empty() || is_heredoc_start(marker) {
            Ok(())
        } else {
            Err(self.error(format!("the first line must be `{BEGIN}`")))
        }
    }

    fn feed_marker(&mut self, marker: &str) -> Result<(), ParseError> {
        self.check_section_complete()?;
        let path_after = |prefix: &str| -> Option<String> {
            marker
                .strip_prefix(prefix.trim_end())
                .map(|rest| rest.trim().to_string())
        };
        let op = if marker == END {
            self.state = State::Ended;
            return Ok(());
        } else if let Some(path) = path_after(ADD) {
            self.state = State::Adding;
            FileOp::Add {
                path,
                content: String::new(),
            }
        } else if let Some(path) = path_after(DELETE) {
            self.state = State::Files;
            FileOp::Delete { path }
        } else if let Some(path) = path_after(UPDATE) {
            self.state = State::UpdateHeader;
            FileOp::Update {
                path,
                move_to: None,
                hunks: Vec::new(),
            }
        } else if marker == BEGIN {
            return Err(self.error(format!("`{BEGIN}` twice")));
        } else {
            return Err(self.error(format!("unknown marker line {marker:?}")));
        };
        if op.path().is_empty() {
            return Err(self.error(format!("{marker:?} names no path")));
        }
        self.patch.files.push(op);
        Ok(())
    }

    /// An update needs at least one changed line before the next section starts.
    fn check_section_complete(&self) -> Result<(), ParseError> {
        if let Some(FileOp::Update { path, hunks, .. }) = self.patch.files.last() {
            if matches!(self.state, State::UpdateHeader | State::Hunks)
                && hunks.iter().all(|hunk| hunk.lines.is_empty())
            {
                return Err(self.error(format!("update of {path} has no hunk lines")));
            }
        }
        Ok(())
    }

    fn feed_add_line(&mut self, line: &str) -> Result<(), ParseError> {
        let Some(text) = line.strip_prefix('+') else {
            return Err(self.error(format!(
                "every line of an added file starts with `+`, got {line:?}"
            )));
        };
        if let Some(FileOp::Add { content, .. }) = self.patch.files.last_mut() {
            content.push_str(text);
            content.push('\n');
        }
        Ok(())
    }

    fn feed_hunk_line(&mut self, line: &str, marker: &str) -> Result<(), ParseError> {
        let line_number = self.line_number;
        let Some(FileOp::Update { hunks, .. }) = self.patch.files.last_mut() else {
            return Ok(());
        };
        if marker == END_OF_FILE {
            return match hunks.last_mut() {
                Some(hunk) if !hunk.lines.is_empty() => {
                    hunk.end_of_file = true;
                    Ok(())
                }
                _ => Err(self.error(format!("`{END_OF_FILE}` before any hunk line"))),
            };
        }
        if let Some(rest) = line.strip_prefix("@@") {
            let context = rest.trim();
            hunks.push(Hunk {
                context: (!context.is_empty()).then(|| context.to_string()),
                ..Hunk::default()
            });
            return Ok(());
        }
        let parsed = match line.chars().next() {
            Some(' ') => HunkLine::Context(line[1..].to_string()),
            Some('-') => HunkLine::Remove(line[1..].to_string()),
            Some('+') => HunkLine::Add(line[1..].to_string()),
            None => HunkLine::Context(String::new()),
            Some(_) => {
                return Err(ParseError {
                    line: line_number,
                    message: format!(
                        "a hunk line starts with ` `, `-` or `+` (or is `@@ ...`), got {line:?}"
                    ),
                })
            }
        };
        // The first hunk may start without its `@@` line.
        if hunks.is_empty() {
            hunks.push(Hunk::default());
        }
        if let Some(hunk) = hunks.last_mut() {
            if hunk.end_of_file {
                return Err(ParseError {
                    line: line_number,
                    message: format!("hunk line after `{END_OF_FILE}`"),
                });
            }
            hunk.lines.push(parsed);
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Patch, ParseError> {
        match self.state {
            State::Ended => Ok(self.patch),
            State::Start => Err(self.error(format!("the patch has no `{BEGIN}` line"))),
            _ => {
                self.line_number += 1;
                Err(self.error(format!("the patch ends without `{END}`")))
            }
        }
    }
}

/// A `*** ` line that is not a hunk or added line (those start with ` `, `-` or `+`).
fn is_marker_line(line: &str, marker: &str) -> bool {
    marker.starts_with("*** ") && marker != END_OF_FILE && !line.starts_with([' ', '+', '-'])
}

fn is_heredoc_start(marker: &str) -> bool {
    marker.starts_with("<<")
        && marker
            .trim_start_matches("<<")
            .trim_start_matches('-')
            .trim_matches(|c| c == '\'' || c == '"')
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_heredoc_end(marker: &str) -> bool {
    !marker.is_empty() && marker.chars().all(|c| c.is_ascii_uppercase() || c == '_')
}

/// Parses a complete patch.
pub fn parse_patch(text: &str) -> Result<Patch, ParseError> {
    let mut parser = LineParser::new();
    let body = text.strip_suffix('\n').unwrap_or(text);
    for line in body.split('\n') {
        parser.feed(line)?;
    }
    parser.finish()
}

/// A patch the model is still writing: deltas go in, each complete line is parsed once, and
/// the files and hunks parsed so far can be read at any moment (the preview renders them as
/// they grow). After a parse error the stream stops updating (the finished text is parsed
/// again, and that error is what the model sees).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchStream {
    parser: LineParser,
    /// The text after the last complete line (never holds a newline between pushes).
    pending: String,
    failed: bool,
}

impl Default for PatchStream {
    fn default() -> PatchStream {
        PatchStream {
            parser: LineParser::new(),
            pending: String::new(),
            failed: false,
        }
    }
}

impl PatchStream {
    /// Appends a delta; true when it completed at least one line, which was parsed. Only the
    /// delta is searched for line ends and each line is fed once, so a patch streamed in any
    /// number of pieces costs time in proportion to its length.
    pub fn push(&mut self, delta: &str) -> bool {
        if self.failed {
            return false;
        }
        let searched = self.pending.len();
        self.pending.push_str(delta);
        let Some(last_newline) = self.pending[searched..].rfind('\n') else {
            return false;
        };
        let complete: String = self.pending.drain(..=searched + last_newline).collect();
        let mut fed = false;
        for line in complete[..complete.len() - 1].split('\n') {
            if self.parser.feed(line).is_err() {
                self.failed = true;
                return fed;
            }
            fed = true;
        }
        fed
    }

    /// The files and hunks parsed so far.
    pub fn snapshot(&self) -> &Patch {
        &self.parser.patch
    }
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
