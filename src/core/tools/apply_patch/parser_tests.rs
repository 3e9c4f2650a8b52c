use super::*;

const FULL: &str = "*** Begin Patch
*** Add File: notes/new.txt
+first
+second
*** Update File: src/lib.rs
*** Move to: src/core.rs
@@ fn main() {
 let a = 1;
-let b = 2;
+let b = 3;

@@
-old tail
+new tail
*** End of File
*** Delete File: gone.txt
*** End Patch
";

fn expected() -> Patch {
    Patch {
        files: vec![
            FileOp::Add {
                path: "notes/new.txt".into(),
                content: "first\nsecond\n".into(),
            },
            FileOp::Update {
                path: "src/lib.rs".into(),
                move_to: Some("src/core.rs".into()),
                hunks: vec![
                    Hunk {
                        context: Some("fn main() {".into()),
                        lines: vec![
                            HunkLine::Context("let a = 1;".into()),
                            HunkLine::Remove("let b = 2;".into()),
                            HunkLine::Add("let b = 3;".into()),
                            HunkLine::Context(String::new()),
                        ],
                        end_of_file: false,
                    },
                    Hunk {
                        context: None,
                        lines: vec![
                            HunkLine::Remove("old tail".into()),
                            HunkLine::Add("new tail".into()),
                        ],
                        end_of_file: true,
                    },
                ],
            },
            FileOp::Delete {
                path: "gone.txt".into(),
            },
        ],
    }
}

#[test]
fn every_section_kind_parses() {
    assert_eq!(parse_patch(FULL), Ok(expected()));
    // Without the final newline, with CRLF line ends, and inside a heredoc wrapper: the same.
    assert_eq!(parse_patch(FULL.trim_end()), Ok(expected()));
    assert_eq!(parse_patch(&FULL.replace('\n', "\r\n")), Ok(expected()));
    assert_eq!(
        parse_patch(&format!("<<'EOF'\n{FULL}EOF\n")),
        Ok(expected())
    );
}

#[test]
fn the_first_hunk_may_omit_its_header() {
    let patch = "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch";
    let Ok(parsed) = parse_patch(patch) else {
        panic!("should parse")
    };
    assert_eq!(
        parsed.files,
        vec![FileOp::Update {
            path: "a".into(),
            move_to: None,
            hunks: vec![Hunk {
                context: None,
                lines: vec![HunkLine::Remove("x".into()), HunkLine::Add("y".into())],
                end_of_file: false,
            }],
        }]
    );
}

#[test]
fn bad_patches_name_the_line_and_what_is_wrong() {
    let cases = [
        ("hello\n*** End Patch", 1, "the first line must be `*** Begin Patch`"),
        ("*** Begin Patch\n*** Add File: a\n+x", 4, "the patch ends without `*** End Patch`"),
        ("*** Begin Patch\n*** Add File: a\nx\n*** End Patch", 3, "every line of an added file starts with `+`, got \"x\""),
        ("*** Begin Patch\n*** Update File: a\n*** End Patch", 3, "update of a has no hunk lines"),
        ("*** Begin Patch\n*** Update File: a\n@@\n*** End Patch", 4, "update of a has no hunk lines"),
        ("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch", 2, "unknown marker line \"*** Frobnicate File: a\""),
        ("*** Begin Patch\n*** Add File: \n*** End Patch", 2, "\"*** Add File:\" names no path"),
        ("*** Begin Patch\n*** Update File: a\n@@\n?x\n*** End Patch", 4, "a hunk line starts with ` `, `-` or `+` (or is `@@ ...`), got \"?x\""),
        ("*** Begin Patch\nstray\n*** End Patch", 2, "expected a file section (`*** Add File: `, `*** Update File: ` or `*** Delete File: `), got \"stray\""),
        ("*** Begin Patch\n*** End Patch\nmore", 3, "text after `*** End Patch`: \"more\""),
    ];
    for (text, line, message) in cases {
        assert_eq!(
            parse_patch(text),
            Err(ParseError {
                line,
                message: message.to_string()
            }),
            "{text:?}"
        );
    }
}

#[test]
fn a_hunk_line_that_looks_like_a_marker_is_content() {
    let patch = "*** Begin Patch\n*** Update File: a\n@@\n-*** x\n+ *** End Patch\n*** End Patch\n";
    let Ok(parsed) = parse_patch(patch) else {
        panic!("should parse")
    };
    let FileOp::Update { hunks, .. } = &parsed.files[0] else {
        panic!("update expected")
    };
    assert_eq!(hunks[0].old_lines(), vec!["*** x"]);
    assert_eq!(hunks[0].new_lines(), vec![" *** End Patch"]);
}

/// The incremental parser reaches the same patch whatever the delta boundaries, including
/// boundaries inside multi-byte characters' neighbours and inside marker lines.
#[test]
fn the_stream_reaches_the_full_parse_at_every_split() {
    let text = FULL.replace("first", "firßt ✓");
    let Ok(want) = parse_patch(&text) else {
        panic!("should parse")
    };
    let boundaries: Vec<usize> = (0..=text.len())
        .filter(|i| text.is_char_boundary(*i))
        .collect();
    for &split in &boundaries {
        let mut stream = PatchStream::default();
        stream.push(&text[..split]);
        stream.push(&text[split..]);
        assert_eq!(stream.snapshot(), &want, "split at {split}");
    }
    // One character at a time: the snapshot only grows, and every change comes at a newline.
    let mut stream = PatchStream::default();
    let mut files_seen = 0;
    for (index, c) in text.char_indices() {
        let changed = stream.push(&text[index..index + c.len_utf8()]);
        assert!(
            !changed || c == '\n',
            "a change without a completed line at {index}"
        );
        assert!(stream.snapshot().files.len() >= files_seen);
        files_seen = stream.snapshot().files.len();
    }
    assert_eq!(stream.snapshot(), &want);
}

#[test]
fn the_stream_shows_a_partial_patch() {
    let mut stream = PatchStream::default();
    assert!(stream.push("*** Begin Patch\n*** Update File: a.txt\n@@\n-x"));
    assert_eq!(stream.snapshot().files.len(), 1);
    // The unfinished `-x` line is not in the snapshot yet.
    assert!(!stream.push(" still x"));
    assert!(stream.push("\n+y"));
    let FileOp::Update { hunks, .. } = &stream.snapshot().files[0] else {
        panic!("update expected")
    };
    assert_eq!(hunks[0].lines, vec![HunkLine::Remove("x still x".into())]);
}
