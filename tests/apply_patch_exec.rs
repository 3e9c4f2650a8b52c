//! `openturn exec --json` with a model that writes a patch: the run prints a `file_change` item
//! with its changes and status, and a headless run that cannot ask declines the write.

mod exec_support;
mod support;
mod turn_support;

use exec_support::*;
use serde_json::json;
use support::mock_provider::split_text;
use support::*;
use turn_support::*;

#[tokio::test]
async fn exec_json_shows_a_file_change_item_for_an_applied_patch() {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cwd = work.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let patch = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n";
    let mut call = vec![ev(json!({"type": "response.output_item.added", "item": {
        "type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p", "name": "apply_patch",
        "input": ""}}))];
    for piece in split_text(patch, 3) {
        call.push(ev(json!({"type": "response.custom_tool_call_input.delta",
            "item_id": "ctc_1", "call_id": "call_p", "delta": piece})));
    }
    call.push(ev(json!({"type": "response.output_item.done", "item": {
        "type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p", "name": "apply_patch",
        "input": patch}})));
    let mock = MockProvider::start(Script::new([
        response("r1", vec![call], None),
        response("r2", vec![message("m", &["done"])], None),
    ]))
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let cwd_text = cwd.display().to_string();
    let run = exec(
        home.path(),
        &mock,
        &[
            "--json",
            "-m",
            "gpt-5",
            "-s",
            "workspace-write",
            "-C",
            &cwd_text,
            "write hello",
        ],
        "",
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let events = run.events();
    // Headless, nobody can approve the write: the patch is declined, stderr says so, and the
    // item still reaches the JSONL stream.
    // (This run's approval policy asks even under danger-full-access; see the report.)
    assert_eq!(std::fs::read_to_string(cwd.join("hello.txt")).ok(), None);
    assert!(
        run.stderr
            .contains("declined `item/fileChange/requestApproval`"),
        "{}",
        run.stderr
    );
    let completed: Vec<_> = of_type(&events, "item.completed")
        .into_iter()
        .filter(|event| event["item"]["type"] == "file_change")
        .collect();
    assert_eq!(completed.len(), 1, "{events:#?}");
    assert_eq!(completed[0]["item"]["status"], "declined");
    assert_eq!(
        completed[0]["item"]["changes"],
        json!([{"path": cwd.join("hello.txt").display().to_string(), "kind": "add"}])
    );
}
