//! What `exec_command` and `write_stdin` tell the model: a short header (a chunk id, the
//! wall time, whether the process runs on — with its session id — or exited with its code,
//! the output's size in tokens) and the output the model has not seen yet, its middle elided
//! past the model's token budget. The layout is the one models are trained on.

use std::time::Duration;

use rand::Rng;

use super::super::head_tail::{HeadTail, MODEL_OUTPUT_LINES};
use super::session::Collected;

/// The model's output budget when it names none (`max_output_tokens`).
pub(crate) const DEFAULT_MAX_OUTPUT_TOKENS: usize = 10_000;
/// Bytes per token, the rough measure the budget and the reported count use.
const BYTES_PER_TOKEN: usize = 4;

/// The text for one read of session `session_id`.
pub(crate) fn render(
    collected: &Collected,
    session_id: i32,
    wall: Duration,
    max_output_tokens: Option<u64>,
) -> String {
    let budget_tokens = max_output_tokens
        .and_then(|tokens| usize::try_from(tokens).ok())
        .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS);
    let chunk_id: u32 = rand::thread_rng().gen_range(0..0x100_0000);
    let status = match collected.exit_code {
        Some(code) => format!("Process exited with code {code}"),
        None => format!("Process running with session ID {session_id}"),
    };
    format!(
        "Chunk ID: {chunk_id:06x}\nWall time: {:.4} seconds\n{status}\nOriginal token count: \
         {}\nOutput:\n{}",
        wall.as_secs_f64(),
        collected.original_bytes.div_ceil(BYTES_PER_TOKEN),
        truncate(
            &collected.text,
            budget_tokens.saturating_mul(BYTES_PER_TOKEN)
        ),
    )
}

/// `text` within `budget` bytes and [`MODEL_OUTPUT_LINES`] lines: its head and tail, the
/// middle counted and elided.
fn truncate(text: &str, budget: usize) -> String {
    let mut head_tail = HeadTail::new(budget, MODEL_OUTPUT_LINES);
    head_tail.push(text);
    head_tail.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collected(text: &str, exit_code: Option<i32>) -> Collected {
        Collected {
            text: text.to_string(),
            original_bytes: text.len(),
            exit_code,
        }
    }

    #[test]
    fn the_header_says_whether_the_process_runs_and_how_big_its_output_was() {
        let running = render(&collected("", None), 4242, Duration::from_millis(500), None);
        let lines: Vec<&str> = running.lines().collect();
        assert!(
            lines[0].starts_with("Chunk ID: ") && lines[0].len() == 16,
            "{running}"
        );
        assert_eq!(
            &lines[1..],
            [
                "Wall time: 0.5000 seconds",
                "Process running with session ID 4242",
                "Original token count: 0",
                "Output:"
            ]
        );
        let exited = render(&collected("hello bob\n", Some(3)), 1, Duration::ZERO, None);
        assert!(exited.contains("\nProcess exited with code 3\nOriginal token count: 3\n"));
        assert!(exited.ends_with("Output:\nhello bob\n"), "{exited}");
    }

    #[test]
    fn output_past_the_token_budget_keeps_its_head_and_tail() {
        let text: String = (0..200).map(|n| format!("line {n}\n")).collect();
        let shown = render(&collected(&text, Some(0)), 1, Duration::ZERO, Some(25));
        let output = shown.split_once("Output:\n").map(|(_, o)| o).unwrap_or("");
        assert!(output.starts_with("line 0\n"), "{output}");
        assert!(output.ends_with("line 199\n"), "{output}");
        assert!(output.contains("elided"), "{output}");
        assert!(output.len() < 200, "{output}");
        assert!(shown.contains(&format!("Original token count: {}", text.len().div_ceil(4))));
    }
}
