//! The thread methods of docs/PROTOCOL.md §4 through the real binary: list (filters, cursors,
//! archived), read (with turns), name/set, archive/unarchive, loaded/list, unsubscribe and its
//! fan-out rule, ephemeral threads; plus model/list and config/read.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

fn text_turns(n: usize) -> Script {
    Script::new((0..n).map(|i| {
        Reply::Sse(mock_provider::simple_text_response(
            &format!("resp_{i}"),
            &format!("msg_{i}"),
            &format!("Answer number {i}"),
            2,
        ))
    }))
}

#[tokio::test]
async fn list_pages_with_cursors_and_filters_and_hides_archived_threads() {
    let provider = MockProvider::start(text_turns(4)).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = work.path().display().to_string();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let params = if i == 0 {
            json!({"cwd": cwd})
        } else {
            json!({})
        };
        let id = daemon.start_thread(params).await;
        text_turn(&mut daemon, &id, &format!("question {i}")).await;
        ids.push(id);
    }
    // Default order: newest first; two per page.
    let first = daemon.ok("thread/list", json!({"limit": 2})).await;
    let page_ids: Vec<&str> = first["data"].as_array().map_or(Vec::new(), |d| {
        d.iter().filter_map(|t| t["id"].as_str()).collect()
    });
    assert_eq!(page_ids, vec![ids[2].as_str(), ids[1].as_str()]);
    assert_eq!(first["data"][0]["preview"], "question 2");
    assert_eq!(first["data"][0]["status"]["type"], "idle");
    assert_eq!(first["data"][0]["turns"], json!([]));
    let cursor = first["nextCursor"].clone();
    assert!(cursor.is_string());
    let second = daemon
        .ok("thread/list", json!({"limit": 2, "cursor": cursor}))
        .await;
    assert_eq!(second["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(second["data"][0]["id"], ids[0].as_str());
    assert_eq!(second["nextCursor"], Value::Null);
    let ascending = daemon
        .ok(
            "thread/list",
            json!({"sortDirection": "asc", "sortKey": "updated_at"}),
        )
        .await;
    assert_eq!(ascending["data"][0]["id"], ids[0].as_str());

    let by_cwd = daemon.ok("thread/list", json!({"cwd": cwd})).await;
    assert_eq!(by_cwd["data"].as_array().map(Vec::len), Some(1));
    let by_provider = daemon
        .ok("thread/list", json!({"modelProviders": ["nope"]}))
        .await;
    assert_eq!(by_provider["data"], json!([]));
    let excluded = daemon
        .ok(
            "thread/list",
            json!({"excludedThreadIds": [ids[0], ids[1]]}),
        )
        .await;
    assert_eq!(excluded["data"].as_array().map(Vec::len), Some(1));
    let bad = daemon
        .err("thread/list", json!({"cursor": "garbage"}))
        .await;
    assert_eq!(bad["message"], "invalid cursor: garbage");

    // Names: searchable, announced.
    daemon
        .ok(
            "thread/name/set",
            json!({"threadId": ids[1], "name": "Refactor parser"}),
        )
        .await;
    let named = daemon.notification("thread/name/updated").await;
    assert_eq!(
        named["params"],
        json!({"threadId": ids[1], "threadName": "Refactor parser"})
    );
    let empty = daemon
        .err("thread/name/set", json!({"threadId": ids[1], "name": "  "}))
        .await;
    assert_eq!(empty["message"], "thread name must not be empty");
    let found = daemon
        .ok("thread/list", json!({"searchTerm": "parser"}))
        .await;
    assert_eq!(found["data"][0]["name"], "Refactor parser");
    let case_sensitive = daemon
        .ok("thread/list", json!({"searchTerm": "PARSER"}))
        .await;
    assert_eq!(case_sensitive["data"], json!([]));

    // Archive: notLoaded before the response, thread/archived after; gone from the live list.
    let archive_id = daemon
        .send_request("thread/archive", json!({"threadId": ids[0]}))
        .await;
    let status = daemon.notification("thread/status/changed").await;
    assert_eq!(status["params"]["status"]["type"], "notLoaded");
    let response = daemon.response_to(archive_id).await;
    assert_eq!(response["result"], json!({}));
    daemon.notification("thread/archived").await;
    let live = daemon.ok("thread/list", json!({})).await;
    assert!(!live["data"].to_string().contains(&ids[0]));
    let archived = daemon.ok("thread/list", json!({"archived": true})).await;
    assert_eq!(archived["data"][0]["id"], ids[0].as_str());
    assert!(archived["data"][0]["path"]
        .as_str()
        .is_some_and(|p| p.contains("archived_sessions")));
    let gone = daemon
        .err(
            "turn/start",
            json!({"threadId": ids[0], "input": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert_eq!(gone["message"], format!("thread not found: {}", ids[0]));
    // thread/read works on archived threads.
    let read = daemon
        .ok(
            "thread/read",
            json!({"threadId": ids[0], "includeTurns": true}),
        )
        .await;
    assert_eq!(
        read["thread"]["turns"][0]["items"][0]["content"][0]["text"],
        "question 0"
    );

    let restored = daemon
        .ok("thread/unarchive", json!({"threadId": ids[0]}))
        .await;
    assert_eq!(restored["thread"]["status"]["type"], "notLoaded");
    daemon.notification("thread/unarchived").await;
    let live = daemon.ok("thread/list", json!({})).await;
    assert!(live["data"].to_string().contains(&ids[0]));
    let again = daemon
        .err("thread/unarchive", json!({"threadId": ids[0]}))
        .await;
    assert_eq!(
        again["message"],
        format!("no rollout found for thread id {}", ids[0])
    );
}

#[tokio::test]
async fn read_returns_turns_with_items_and_pages_them() {
    let provider = MockProvider::start(text_turns(3)).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let id = daemon.start_thread(json!({})).await;
    for i in 0..3 {
        text_turn(&mut daemon, &id, &format!("q{i}")).await;
    }
    let plain = daemon.ok("thread/read", json!({"threadId": id})).await;
    assert_eq!(plain["thread"]["turns"], json!([]));
    let full = daemon
        .ok("thread/read", json!({"threadId": id, "includeTurns": true}))
        .await;
    let turns = full["thread"]["turns"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(turns.len(), 3);
    assert_eq!(turns[0]["status"], "completed");
    assert_eq!(turns[0]["itemsView"], "full");
    assert_eq!(turns[0]["items"][0]["type"], "userMessage");
    assert_eq!(turns[0]["items"][1]["text"], "Answer number 0");
    assert_eq!(full["thread"]["preview"], "q0");

    let newest = daemon
        .ok(
            "thread/read",
            json!({"threadId": id, "includeTurns": true, "turnsLimit": 2}),
        )
        .await;
    assert_eq!(newest["thread"]["turns"].as_array().map(Vec::len), Some(2));
    assert_eq!(newest["thread"]["turns"][1]["id"], turns[2]["id"]);
    let cursor = newest["turnsBackwardsCursor"].clone();
    assert_eq!(cursor, turns[1]["id"]);
    let older = daemon
        .ok(
            "thread/read",
            json!({"threadId": id, "includeTurns": true, "turnsLimit": 2, "turnsCursor": cursor}),
        )
        .await;
    assert_eq!(older["thread"]["turns"].as_array().map(Vec::len), Some(1));
    assert_eq!(older["thread"]["turns"][0]["id"], turns[0]["id"]);
    assert_eq!(older["turnsBackwardsCursor"], Value::Null);

    let unknown = uuid::Uuid::now_v7().to_string();
    let missing = daemon
        .err("thread/read", json!({"threadId": unknown}))
        .await;
    assert_eq!(missing["message"], format!("thread not loaded: {unknown}"));
    let invalid = daemon.err("thread/read", json!({"threadId": "nope"})).await;
    assert!(invalid["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("invalid thread id: ")));
}

#[tokio::test]
async fn unsubscribed_connections_see_only_status_and_idle_threads_unload() {
    let provider = MockProvider::start(text_turns(1)).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&provider);
    overrides.push("thread_unload_delay_secs=1".to_string());
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    let id = daemon.start_thread(json!({})).await;
    daemon.notification("thread/started").await;
    let loaded = daemon.ok("thread/loaded/list", json!({})).await;
    assert_eq!(loaded["data"], json!([id]));
    let first = daemon
        .ok("thread/unsubscribe", json!({"threadId": id}))
        .await;
    assert_eq!(first["status"], "unsubscribed");
    let second = daemon
        .ok("thread/unsubscribe", json!({"threadId": id}))
        .await;
    assert_eq!(second["status"], "notSubscribed");
    daemon
        .ok(
            "turn/start",
            json!({"threadId": id, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    // Only status changes reach us: active, idle, then (after the idle delay) notLoaded + closed.
    let seen = daemon
        .collect_until(|m| m["method"] == "thread/closed")
        .await;
    assert_eq!(
        methods(&seen),
        vec![
            "thread/status/changed",
            "thread/status/changed",
            "thread/status/changed",
            "thread/closed"
        ]
    );
    let statuses: Vec<&Value> = seen
        .iter()
        .map(|m| &m["params"]["status"]["type"])
        .collect();
    assert_eq!(
        statuses[..3],
        [&json!("active"), &json!("idle"), &json!("notLoaded")]
    );
    let unloaded = daemon
        .ok("thread/unsubscribe", json!({"threadId": id}))
        .await;
    assert_eq!(unloaded["status"], "notLoaded");
    let loaded = daemon.ok("thread/loaded/list", json!({})).await;
    assert_eq!(loaded["data"], json!([]));
}

#[tokio::test]
async fn ephemeral_threads_write_nothing_and_are_never_listed() {
    let provider = MockProvider::start(text_turns(1)).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let started = daemon.ok("thread/start", json!({"ephemeral": true})).await;
    assert_eq!(started["thread"]["ephemeral"], true);
    assert_eq!(started["thread"]["path"], Value::Null);
    let id = started["thread"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    text_turn(&mut daemon, &id, "hello").await;
    assert!(rollout_files(home.path()).is_empty());
    let list = daemon.ok("thread/list", json!({})).await;
    assert_eq!(list["data"], json!([]));
    let turns = daemon
        .err("thread/read", json!({"threadId": id, "includeTurns": true}))
        .await;
    assert_eq!(
        turns["message"],
        "ephemeral threads do not support includeTurns"
    );
    let archive = daemon.err("thread/archive", json!({"threadId": id})).await;
    assert_eq!(
        archive["message"],
        format!("no rollout found for thread id {id}")
    );
    let loaded = daemon.ok("thread/loaded/list", json!({})).await;
    assert_eq!(loaded["data"], json!([id]));
}

#[tokio::test]
async fn model_list_and_config_read_come_from_configuration() {
    let provider = MockProvider::start(text_turns(0)).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "approval_policy = \"never\"\n[models.gpt-5-mini]\ndisplay_name = \"GPT-5 mini\"\n\
         supported_reasoning_efforts = [\"low\"]\n[models.secret-model]\nhidden = true\n\
         [model_providers.other]\nbase_url = \"http://127.0.0.1:9\"\nexperimental_bearer_token = \"sk-hide\"\n",
    )
    .unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let models = daemon.ok("model/list", json!({})).await;
    let ids: Vec<&str> = models["data"].as_array().map_or(Vec::new(), |d| {
        d.iter().filter_map(|m| m["id"].as_str()).collect()
    });
    assert_eq!(ids, vec!["gpt-5", "gpt-5-mini"]);
    let defaults: Vec<bool> = models["data"].as_array().map_or(Vec::new(), |d| {
        d.iter().filter_map(|m| m["isDefault"].as_bool()).collect()
    });
    assert_eq!(defaults, vec![true, false]);
    assert_eq!(models["data"][1]["displayName"], "GPT-5 mini");
    let hidden = daemon
        .ok("model/list", json!({"includeHidden": true, "limit": 2}))
        .await;
    assert_eq!(hidden["data"].as_array().map(Vec::len), Some(2));
    let rest = daemon
        .ok(
            "model/list",
            json!({"includeHidden": true, "cursor": hidden["nextCursor"]}),
        )
        .await;
    assert_eq!(rest["data"][0]["id"], "secret-model");

    let config = daemon.ok("config/read", json!({})).await;
    assert_eq!(config["config"]["model"], "gpt-5");
    assert_eq!(config["config"]["model_provider"], "mock");
    assert_eq!(config["config"]["approval_policy"], "never");
    assert_eq!(config["config"]["sandbox_mode"], "read-only");
    assert!(!config.to_string().contains("sk-hide"));
}
