//! The mapping of item kinds the end-to-end tests cannot reach yet (no server tool produces file
//! changes, MCP calls or plan updates today): each protocol shape gives the exec shape the
//! TypeScript SDK declares, and the todo list opens, updates and closes with the turn.

use serde_json::{json, Value};

use super::*;

fn to_json(events: Vec<ExecEvent>) -> Vec<Value> {
    events
        .into_iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

#[test]
fn file_changes_and_mcp_calls_keep_the_sdks_shapes() {
    let mut mapper = EventMapper::new(false);
    let patch = json!({"type": "fileChange", "id": "call_p", "status": "completed", "changes": [
        {"path": "a.rs", "kind": {"type": "add"}, "diff": "+x"},
        {"path": "b.rs", "kind": {"type": "update", "move_path": null}, "diff": ""},
    ]});
    let mcp = json!({"type": "mcpToolCall", "id": "call_m", "server": "docs", "tool": "search",
        "status": "failed", "arguments": {"q": "x"}, "result": null, "error": {"message": "down"}});
    let events = to_json(
        [
            mapper.map("item/completed", &json!({"item": patch})),
            mapper.map("item/completed", &json!({"item": mcp})),
        ]
        .concat(),
    );
    assert_eq!(
        events,
        vec![
            json!({"type": "item.completed", "item": {"id": "item_0", "type": "file_change",
                "changes": [{"path": "a.rs", "kind": "add"}, {"path": "b.rs", "kind": "update"}],
                "status": "completed"}}),
            json!({"type": "item.completed", "item": {"id": "item_1", "type": "mcp_tool_call",
                "server": "docs", "tool": "search", "arguments": {"q": "x"},
                "error": {"message": "down"}, "status": "failed"}}),
        ]
    );
}

#[test]
fn plan_updates_are_one_todo_list_closed_at_the_turns_end() {
    let mut mapper = EventMapper::new(false);
    let plan = |second: &str| json!({"plan": [{"step": "read", "status": "completed"}, {"step": "write", "status": second}]});
    let mut events = mapper.map("turn/plan/updated", &plan("inProgress"));
    events.extend(mapper.map("turn/plan/updated", &plan("completed")));
    events.extend(mapper.map("turn/completed", &json!({"turn": {"status": "completed"}})));
    let events = to_json(events);
    let items = |done: bool| json!([{"text": "read", "completed": true}, {"text": "write", "completed": done}]);
    assert_eq!(
        events[..3],
        [
            json!({"type": "item.started", "item": {"id": "item_0", "type": "todo_list", "items": items(false)}}),
            json!({"type": "item.updated", "item": {"id": "item_0", "type": "todo_list", "items": items(true)}}),
            json!({"type": "item.completed", "item": {"id": "item_0", "type": "todo_list", "items": items(true)}}),
        ]
    );
    assert_eq!(events[3]["type"], "turn.completed");
    assert_eq!(mapper.outcome, Some(TurnOutcome::Completed));
}

#[test]
fn a_failed_turn_without_a_message_takes_the_last_fatal_error() {
    let mut mapper = EventMapper::new(false);
    let retrying = json!({"error": {"message": "try again"}, "willRetry": true});
    assert!(mapper.map("error", &retrying).is_empty());
    let fatal = json!({"error": {"message": "gave up"}, "willRetry": false});
    assert_eq!(
        to_json(mapper.map("error", &fatal)),
        [json!({"type": "error", "message": "gave up"})]
    );
    let end = mapper.map(
        "turn/completed",
        &json!({"turn": {"status": "failed", "error": null}}),
    );
    assert_eq!(
        to_json(end),
        [json!({"type": "turn.failed", "error": {"message": "gave up"}})]
    );
}
