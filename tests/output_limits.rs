//! Output limits, through the real binary: what a command's output keeps for the model is its
//! head and tail within a byte and a line budget, with a line in the middle counting what was
//! elided; the client still gets every byte as `item/commandExecution/outputDelta`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::json;
use support::*;
use turn_support::*;

#[tokio::test]
async fn a_command_with_100k_lines_gives_the_model_head_and_tail_and_the_client_every_delta() {
    let workdir = tempfile::tempdir().unwrap();
    let cwd = workdir.path().display().to_string();
    let first = ResponseBuilder::new("r1")
        .created()
        .exec_call(
            "fc_1",
            "call_1",
            json!({"cmd": "seq 1 100000", "login": false}),
        )
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["Done."]);
    let mut s = session(
        Script::new([first, second]),
        &[],
        json!({"approvalPolicy": "never", "sandbox": "danger-full-access", "cwd": cwd}),
    )
    .await;
    let turn = s.run_turn("count").await;
    single_turn_end(&turn, "completed");

    let expected: String = (1..=100_000).map(|n| format!("{n}\n")).collect();
    assert_eq!(
        joined_deltas(&turn, "item/commandExecution/outputDelta"),
        expected,
        "the client gets every byte of the output"
    );

    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    assert_eq!(outputs.len(), 1);
    let output = &outputs[0].1;
    let (_, shown) = output
        .split_once("Output:\n")
        .unwrap_or_else(|| panic!("no output section in {output}"));
    let lines: Vec<&str> = shown.lines().collect();
    // 128 head lines, the elision line, 128 tail lines.
    assert_eq!(lines.len(), 257, "{shown}");
    assert_eq!(lines[0], "1");
    assert_eq!(lines[127], "128");
    assert_eq!(lines[129], "99873");
    assert_eq!(lines[256], "100000");
    let kept_bytes: usize = lines
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != 128)
        .map(|(_, line)| line.len() + 1)
        .sum();
    assert_eq!(
        lines[128],
        format!(
            "[… 99744 lines ({} bytes) elided …]",
            expected.len() - kept_bytes
        )
    );
    assert!(output.len() < 12 * 1024, "the model's output is bounded");
}
