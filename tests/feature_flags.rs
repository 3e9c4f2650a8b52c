//! `experimentalFeature/list` shows the flags openturn acts on with their state in config.toml as
//! it is now (a `config/value/write` shows at once), pages with a cursor and refuses a bad one;
//! `experimentalFeature/enablement/set` sets a flag for the rest of the process, returning only
//! the flags it set, and a thread started afterwards uses it: with patch previews switched on at
//! runtime, a streamed `apply_patch` sends `item/fileChange/patchUpdated`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

const PATCH: &str = "*** Begin Patch
*** Add File: a.txt
+hello
*** End Patch
";

fn previews(list: &Value) -> Value {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|flag| flag["name"] == "apply_patch_streaming_events")
        .cloned()
        .unwrap_or_else(|| panic!("not listed: {list}"))
}

#[tokio::test]
async fn flags_follow_the_file_and_runtime_enablement_reaches_new_threads() {
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().canonicalize().unwrap();
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .custom_tool_call(
                "ctc_1",
                "call_p",
                "apply_patch",
                &PATCH.split_inclusive('\n').collect::<Vec<_>>(),
            )
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m", &["ok"]),
    ]);
    let provider = MockProvider::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), "# flags\n").unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;

    let list = daemon.ok("experimentalFeature/list", json!({})).await;
    assert_eq!(
        previews(&list),
        json!({"name": "apply_patch_streaming_events", "stage": "underDevelopment",
               "displayName": null, "description": null, "announcement": null,
               "enabled": false, "defaultEnabled": false})
    );
    assert_eq!(list["nextCursor"], Value::Null);
    daemon
        .ok(
            "config/value/write",
            json!({"keyPath": "features.apply_patch_streaming_events", "value": true,
                   "mergeStrategy": "replace"}),
        )
        .await;
    let list = daemon.ok("experimentalFeature/list", json!({})).await;
    assert_eq!(previews(&list)["enabled"], true);
    let bad = daemon
        .err("experimentalFeature/list", json!({"cursor": "zz"}))
        .await;
    assert_eq!(bad["message"], "invalid cursor: zz");

    // The file says on; the runtime switch wins, off and then on again. Names openturn does
    // not act on are not set.
    let set = daemon
        .ok(
            "experimentalFeature/enablement/set",
            json!({"enablement": {"apply_patch_streaming_events": false, "no_such_flag": true}}),
        )
        .await;
    assert_eq!(
        set,
        json!({"enablement": {"apply_patch_streaming_events": false}})
    );
    let list = daemon.ok("experimentalFeature/list", json!({})).await;
    assert_eq!(previews(&list)["enabled"], false);
    std::fs::write(home.path().join("config.toml"), "# flags\n").unwrap();
    daemon
        .ok(
            "experimentalFeature/enablement/set",
            json!({"enablement": {"apply_patch_streaming_events": true}}),
        )
        .await;

    let thread_id = daemon
        .start_thread(
            json!({"approvalPolicy": "never", "sandbox": "workspace-write",
                             "cwd": cwd.display().to_string()}),
        )
        .await;
    daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "write"}]}),
        )
        .await;
    let turn = daemon.until_turn_completed().await;
    assert!(
        turn.iter()
            .any(|m| m["method"] == "item/fileChange/patchUpdated"),
        "no preview: {turn:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("a.txt")).unwrap(),
        "hello\n"
    );
    daemon.exit_cleanly().await;
}
