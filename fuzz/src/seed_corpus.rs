//! Writes the `sse_decoder` seed corpus from the test transcripts (`tests/data/*.json` and
//! `transcripts/*.json`, the mock provider's format): each SSE reply rendered as an SSE body,
//! once with LF and once with CRLF line ends and comments, prefixed by a chunk-size byte.
//!
//! Run from anywhere: `cargo run --manifest-path fuzz/Cargo.toml --bin seed_corpus`.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn render(events: &[Value], line_end: &str, comments: bool) -> Vec<u8> {
    let mut out = String::new();
    for event in events {
        if comments {
            out.push_str(&format!(": keep-alive{line_end}{line_end}"));
        }
        let data = match event {
            Value::String(raw) => raw.clone(),
            other => {
                if let Some(name) = other.get("type").and_then(Value::as_str) {
                    out.push_str(&format!("event: {name}{line_end}"));
                }
                other.to_string()
            }
        };
        for line in data.split('\n') {
            out.push_str(&format!("data: {line}{line_end}"));
        }
        out.push_str(line_end);
    }
    out.into_bytes()
}

fn transcript_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["tests/data", "transcripts"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        files.extend(
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "json")),
        );
    }
    files.sort();
    files
}

fn main() -> std::io::Result<()> {
    let fuzz_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = fuzz_dir.join("..");
    let out = fuzz_dir.join("corpus/sse_decoder");
    std::fs::create_dir_all(&out)?;
    let mut written = 0;
    for path in transcript_files(&root) {
        let text = std::fs::read_to_string(&path)?;
        let Ok(file) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let replies = file["replies"].as_array().cloned().unwrap_or_default();
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("t");
        for (index, reply) in replies.iter().enumerate() {
            let Some(events) = reply["events"].as_array() else {
                continue;
            };
            for (style, line_end, comments, chunk) in
                [("lf", "\n", false, 0u8), ("crlf", "\r\n", true, 6u8)]
            {
                let mut bytes = vec![chunk];
                bytes.extend(render(events, line_end, comments));
                std::fs::write(out.join(format!("{stem}-{index}-{style}")), bytes)?;
                written += 1;
            }
        }
    }
    println!("wrote {written} seeds to {}", out.display());
    Ok(())
}
