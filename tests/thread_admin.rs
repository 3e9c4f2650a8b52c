//! Thread administration through the real binary: `thread/delete` (gone from list and read, its
//! file and index entry removed and nothing else touched, refused while a turn runs),
//! `thread/turns/list` (paged both ways, items views) and `thread/list`'s `includedThreadIds`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::path::Path;

use serde_json::{json, Value};
use support::*;

/// The last index line recorded for `thread_id` (what a reader folds to), if any.
fn index_line(home: &Path, thread_id: &str) -> Option<Value> {
    let text = std::fs::read_to_string(home.join("thread_index.jsonl")).unwrap_or_default();
    text.lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["id"] == thread_id)
}

fn ids_of(page: &Value) -> Vec<String> {
    page["data"].as_array().map_or(Vec::new(), |data| {
        data.iter()
            .filter_map(|t| t["id"].as_str().map(str::to_string))
            .collect()
    })
}

#[tokio::test]
async fn delete_removes_only_the_named_thread_and_waits_for_its_turn_to_end() {
    let provider = provider(vec![
        text_reply(0, "kept answer"),
        text_reply(1, "doomed answer"),
        stalled_text_reply("msg_slow", &["still going"]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let kept = daemon.start_thread(json!({})).await;
    text_turn(&mut daemon, &kept, "keep me").await;
    let doomed = daemon.start_thread(json!({})).await;
    text_turn(&mut daemon, &doomed, "delete me").await;
    let kept_file = rollout_of(home.path(), &kept);
    let doomed_file = rollout_of(home.path(), &doomed);
    let kept_bytes = std::fs::read(&kept_file).unwrap();
    let kept_index = index_line(home.path(), &kept).expect("kept thread indexed");
    assert!(index_line(home.path(), &doomed).is_some());

    // A running turn refuses the delete and loses nothing.
    let started = daemon
        .ok(
            "turn/start",
            json!({"threadId": doomed, "input": [{"type": "text", "text": "long"}]}),
        )
        .await;
    let turn_id = started["turn"]["id"].clone();
    daemon.notification("item/agentMessage/delta").await;
    let refused = daemon
        .err("thread/delete", json!({"threadId": doomed}))
        .await;
    assert_eq!(refused["code"], -32600);
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("running turn")),
        "{refused}"
    );
    assert!(doomed_file.exists());
    daemon
        .ok(
            "turn/interrupt",
            json!({"threadId": doomed, "turnId": turn_id}),
        )
        .await;
    daemon.until_turn_completed().await;

    // Deleted: notLoaded before the answer, thread/deleted after, as the reference orders them.
    let id = daemon
        .send_request("thread/delete", json!({"threadId": doomed}))
        .await;
    let status = daemon.notification("thread/status/changed").await;
    assert_eq!(status["params"]["status"]["type"], "notLoaded");
    assert_eq!(daemon.response_to(id).await["result"], json!({}));
    let deleted = daemon.notification("thread/deleted").await;
    assert_eq!(deleted["params"], json!({"threadId": doomed}));

    assert!(!doomed_file.exists());
    assert_eq!(index_line(home.path(), &doomed), None);
    assert_eq!(std::fs::read(&kept_file).unwrap(), kept_bytes);
    assert_eq!(index_line(home.path(), &kept), Some(kept_index));
    assert_eq!(
        ids_of(&daemon.ok("thread/list", json!({})).await),
        std::slice::from_ref(&kept)
    );
    let read = daemon.err("thread/read", json!({"threadId": doomed})).await;
    assert_eq!(read["message"], format!("thread not loaded: {doomed}"));
    let again = daemon
        .err("thread/delete", json!({"threadId": doomed}))
        .await;
    assert_eq!(
        again["message"],
        format!("no rollout found for thread id {doomed}")
    );
    let bad = daemon
        .err("thread/delete", json!({"threadId": "nope"}))
        .await;
    assert_eq!(bad["code"], -32600);
    let missing = daemon.err("thread/delete", json!({})).await;
    assert_eq!(missing["code"], -32602);

    // A restarted daemon (fresh index cache) agrees.
    daemon.exit_cleanly().await;
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    assert_eq!(ids_of(&daemon.ok("thread/list", json!({})).await), [kept]);
}

#[tokio::test]
async fn archived_and_never_sent_threads_can_be_deleted() {
    let provider = provider(vec![text_reply(0, "answer")]).await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let archived = daemon.start_thread(json!({})).await;
    text_turn(&mut daemon, &archived, "to the archive").await;
    daemon
        .ok("thread/archive", json!({"threadId": archived}))
        .await;
    let archive = files_under(&home.path().join("archived_sessions"));
    assert_eq!(archive.len(), 1, "{archive:?}");
    let file = archive[0].clone();
    daemon
        .ok("thread/delete", json!({"threadId": archived}))
        .await;
    assert!(!file.exists());
    let listed = daemon.ok("thread/list", json!({"archived": true})).await;
    assert_eq!(listed["data"], json!([]));

    let unsent = daemon.start_thread(json!({})).await;
    daemon
        .ok("thread/delete", json!({"threadId": unsent}))
        .await;
    let loaded = daemon.ok("thread/loaded/list", json!({})).await;
    assert!(!loaded["data"].to_string().contains(&unsent));
}

#[tokio::test]
async fn turns_list_pages_newest_first_and_back_with_each_items_view() {
    let provider = provider(
        (0..3)
            .map(|i| text_reply(i, &format!("answer {i}")))
            .collect(),
    )
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let thread = daemon.start_thread(json!({})).await;
    let unsent = daemon
        .err("thread/turns/list", json!({"threadId": thread}))
        .await;
    assert_eq!(
        unsent["message"],
        format!("thread {thread} is not materialized yet; thread/turns/list is unavailable before first user message")
    );
    let mut turn_ids = Vec::new();
    for i in 0..3 {
        let messages = text_turn(&mut daemon, &thread, &format!("question {i}")).await;
        let done = messages.last().unwrap();
        turn_ids.push(done["params"]["turn"]["id"].as_str().unwrap().to_string());
    }
    let turn_ids_of = |page: &Value| ids_of(page);

    let first = daemon
        .ok("thread/turns/list", json!({"threadId": thread, "limit": 2}))
        .await;
    assert_eq!(
        turn_ids_of(&first),
        [turn_ids[2].clone(), turn_ids[1].clone()]
    );
    assert_eq!(first["data"][0]["itemsView"], "summary");
    let texts: Vec<&str> = first["data"][0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["userMessage", "agentMessage"]);
    let second = daemon
        .ok(
            "thread/turns/list",
            json!({"threadId": thread, "limit": 2, "cursor": first["nextCursor"]}),
        )
        .await;
    assert_eq!(turn_ids_of(&second), [turn_ids[0].clone()]);
    assert_eq!(second["nextCursor"], Value::Null);
    // Back the other way from the second page's first turn: it is included again.
    let back = daemon
        .ok(
            "thread/turns/list",
            json!({"threadId": thread, "sortDirection": "asc",
                   "cursor": second["backwardsCursor"], "itemsView": "full"}),
        )
        .await;
    assert_eq!(turn_ids_of(&back), turn_ids);
    assert_eq!(back["data"][0]["itemsView"], "full");
    assert_eq!(back["data"][0]["items"][1]["text"], "answer 0");
    let bare = daemon
        .ok(
            "thread/turns/list",
            json!({"threadId": thread, "limit": 1, "itemsView": "notLoaded"}),
        )
        .await;
    assert_eq!(bare["data"][0]["items"], json!([]));
    assert_eq!(bare["data"][0]["itemsView"], "notLoaded");

    let bad_cursor = daemon
        .err(
            "thread/turns/list",
            json!({"threadId": thread, "cursor": "bogus"}),
        )
        .await;
    assert_eq!(bad_cursor["message"], "invalid cursor: bogus");
    let bad_view = daemon
        .err(
            "thread/turns/list",
            json!({"threadId": thread, "itemsView": "some"}),
        )
        .await;
    assert_eq!(bad_view["code"], -32602);
    let unknown = "019a0000-0000-7000-8000-000000000000";
    let not_found = daemon
        .err("thread/turns/list", json!({"threadId": unknown}))
        .await;
    assert_eq!(
        not_found["message"],
        format!("thread not loaded: {unknown}")
    );
}

#[tokio::test]
async fn list_keeps_only_included_threads_and_bounds_how_many() {
    let provider = provider((0..3).map(|i| text_reply(i, "answer")).collect()).await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let id = daemon.start_thread(json!({})).await;
        text_turn(&mut daemon, &id, &format!("question {i}")).await;
        ids.push(id);
    }
    let some = daemon
        .ok(
            "thread/list",
            json!({"includedThreadIds": [ids[0], ids[2], "019a0000-0000-7000-8000-000000000000"]}),
        )
        .await;
    assert_eq!(ids_of(&some), [ids[2].clone(), ids[0].clone()]);
    let minus_excluded = daemon
        .ok(
            "thread/list",
            json!({"includedThreadIds": [ids[0], ids[2]], "excludedThreadIds": [ids[2]]}),
        )
        .await;
    assert_eq!(ids_of(&minus_excluded), [ids[0].clone()]);
    let none = daemon
        .ok("thread/list", json!({"includedThreadIds": []}))
        .await;
    assert_eq!(none["data"], json!([]));
    let too_many: Vec<String> = (0..101)
        .map(|i| format!("019a0000-0000-7000-8000-{i:012}"))
        .collect();
    let refused = daemon
        .err("thread/list", json!({"includedThreadIds": too_many}))
        .await;
    assert_eq!(refused["code"], -32602);
    assert_eq!(
        refused["message"],
        "includedThreadIds accepts at most 100 entries"
    );
}

#[tokio::test]
async fn search_finds_threads_by_name_message_or_answer_in_pages() {
    let provider = provider(vec![
        text_reply(0, "Use a Zebra crossing there."),
        text_reply(1, "nothing to see"),
        text_reply(2, "also nothing"),
        text_reply(3, "still nothing"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let mut ids = Vec::new();
    for question in ["how to cross?", "talk about zebras", "unrelated", "other"] {
        let id = daemon.start_thread(json!({})).await;
        text_turn(&mut daemon, &id, question).await;
        ids.push(id);
    }
    daemon
        .ok(
            "thread/name/set",
            json!({"threadId": ids[2], "name": "ZEBRA notes"}),
        )
        .await;

    // Newest first: the name, the first message, then the agent's answer deep in a rollout.
    let all = daemon
        .ok("thread/search", json!({"searchTerm": "  zebra "}))
        .await;
    assert_eq!(
        ids_of(
            &json!({"data": all["data"].as_array().unwrap().iter().map(|r| r["thread"].clone()).collect::<Vec<_>>()})
        ),
        [ids[2].clone(), ids[1].clone(), ids[0].clone()]
    );
    assert_eq!(all["data"][0]["snippet"], "ZEBRA notes");
    assert_eq!(all["data"][1]["snippet"], "talk about zebras");
    assert_eq!(all["data"][2]["snippet"], "Use a Zebra crossing there.");
    assert_eq!(all["nextCursor"], Value::Null);

    let first = daemon
        .ok("thread/search", json!({"searchTerm": "zebra", "limit": 2}))
        .await;
    assert_eq!(first["data"].as_array().map(Vec::len), Some(2));
    let rest = daemon
        .ok(
            "thread/search",
            json!({"searchTerm": "zebra", "limit": 2, "cursor": first["nextCursor"]}),
        )
        .await;
    assert_eq!(rest["data"][0]["thread"]["id"], ids[0].as_str());
    let none = daemon
        .ok("thread/search", json!({"searchTerm": "giraffe"}))
        .await;
    assert_eq!(none["data"], json!([]));
    let archived_only = daemon
        .ok(
            "thread/search",
            json!({"searchTerm": "zebra", "archived": true}),
        )
        .await;
    assert_eq!(archived_only["data"], json!([]));

    let empty = daemon
        .err("thread/search", json!({"searchTerm": "  "}))
        .await;
    assert_eq!(empty["code"], -32602);
    let missing = daemon.err("thread/search", json!({})).await;
    assert_eq!(missing["code"], -32602);
    let bad_cursor = daemon
        .err(
            "thread/search",
            json!({"searchTerm": "x", "cursor": "junk"}),
        )
        .await;
    assert_eq!(bad_cursor["message"], "invalid cursor: junk");
}
