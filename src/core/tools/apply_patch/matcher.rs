//! Finds a hunk's old lines in a file. Exact comparison first; then, because models often get
//! invisible details wrong, progressively looser ones: trailing whitespace ignored, surrounding
//! whitespace ignored, and finally typographic punctuation (curly quotes, dashes, non-breaking
//! spaces) read as its ASCII counterpart. The first pass that finds the lines wins, so a loose
//! pass can never override an exact match elsewhere.

/// The index in `lines` where `pattern` starts, searching from `start`. With `end_of_file`, a
/// match that ends the file is preferred.
pub fn find_lines(
    lines: &[String],
    pattern: &[&str],
    start: usize,
    end_of_file: bool,
) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start.min(lines.len()));
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let passes: [fn(&str) -> String; 4] = [
        |s| s.to_string(),
        |s| s.trim_end().to_string(),
        |s| s.trim().to_string(),
        |s| normalise_punctuation(s.trim()),
    ];
    let last_start = lines.len() - pattern.len();
    for normalise in passes {
        let wanted: Vec<String> = pattern.iter().map(|line| normalise(line)).collect();
        let matches_at = |at: usize| {
            wanted
                .iter()
                .zip(&lines[at..at + pattern.len()])
                .all(|(want, have)| *want == normalise(have))
        };
        if end_of_file && last_start >= start && matches_at(last_start) {
            return Some(last_start);
        }
        if let Some(found) = (start..=last_start).find(|&at| matches_at(at)) {
            return Some(found);
        }
    }
    None
}

/// Typographic punctuation read as the ASCII a model would type.
fn normalise_punctuation(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn exact_matches_win_over_loose_ones() {
        let file = lines("a  \nb\na\nb");
        // `a` then `b` matches loosely at 0 (trailing spaces) but exactly at 2.
        assert_eq!(find_lines(&file, &["a", "b"], 0, false), Some(2));
        assert_eq!(find_lines(&file, &["a", "b"], 3, false), None);
    }

    #[test]
    fn whitespace_and_typographic_punctuation_are_tolerated() {
        let file = lines("fn x() {\n    let s = \u{201C}hi\u{201D}; // \u{2014} note  \n}");
        assert_eq!(
            find_lines(
                &file,
                &["    let s = \u{201C}hi\u{201D}; // \u{2014} note"],
                0,
                false
            ),
            Some(1)
        );
        assert_eq!(
            find_lines(
                &file,
                &["let s = \u{201C}hi\u{201D}; // \u{2014} note"],
                0,
                false
            ),
            Some(1)
        );
        assert_eq!(
            find_lines(&file, &["let s = \"hi\"; // - note"], 0, false),
            Some(1)
        );
        assert_eq!(find_lines(&file, &["let s = 'hi';"], 0, false), None);
    }

    #[test]
    fn end_of_file_prefers_the_last_occurrence() {
        let file = lines("x\ny\nx");
        assert_eq!(find_lines(&file, &["x"], 0, false), Some(0));
        assert_eq!(find_lines(&file, &["x"], 0, true), Some(2));
        assert_eq!(find_lines(&file, &["x", "y", "x", "z"], 0, false), None);
        assert_eq!(find_lines(&file, &[], 1, false), Some(1));
    }
}
