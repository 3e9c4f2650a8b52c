//! The thread index stays small and honest: names and previews are stored bounded, so a huge
//! thread name does not grow the index by its size at every turn; a rollout file the index has
//! no entry for (its index line was lost to a full disk or a crash) is listed again by
//! `thread/list` without rebuilding the index; and a rollout path that is a symbolic link is
//! refused with an error naming the file, never followed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::os::unix::fs::MetadataExt;

use serde_json::{json, Value};
use support::*;

/// What the index keeps of a name or preview, in characters.
const INDEX_TEXT_CHARS: usize = 400;

fn listed(list: &Value, id: &str) -> Value {
    list["data"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} is not listed: {list:#}"))
}

fn index_path(home: &std::path::Path) -> std::path::PathBuf {
    home.join("thread_index.jsonl")
}

#[tokio::test]
async fn a_huge_name_and_first_message_are_stored_bounded_so_turns_do_not_grow_the_index() {
    let home = tempfile::tempdir().unwrap();
    let replies = (0..3).map(|n| text_reply(n, "ok")).collect();
    let provider = provider(replies).await;
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let id = daemon.start_thread(json!({})).await;
    // Two-byte characters, so a cut at a byte count would split one.
    let first_message = "é".repeat(100_000);
    text_turn(&mut daemon, &id, &first_message).await;
    let name = "ñ".repeat(512 * 1024);
    daemon
        .ok("thread/name/set", json!({"threadId": id, "name": name}))
        .await;
    let size_after_name = std::fs::metadata(index_path(home.path())).unwrap().len();
    text_turn(&mut daemon, &id, "second").await;
    text_turn(&mut daemon, &id, "third").await;

    let size = std::fs::metadata(index_path(home.path())).unwrap().len();
    assert!(
        size_after_name < 64 * 1024 && size < 64 * 1024,
        "the index holds bounded entries: {size_after_name} bytes after the name, {size} after two turns"
    );
    let list = daemon.ok("thread/list", json!({})).await;
    let thread = listed(&list, &id);
    let listed_name = thread["name"].as_str().unwrap_or_default();
    let listed_preview = thread["preview"].as_str().unwrap_or_default();
    assert_eq!(listed_name.chars().count(), INDEX_TEXT_CHARS);
    assert!(name.starts_with(listed_name));
    assert_eq!(listed_preview.chars().count(), INDEX_TEXT_CHARS);
    assert!(first_message.starts_with(listed_preview));
}

#[tokio::test]
async fn a_rollout_the_index_has_no_entry_for_is_listed_again_without_a_rebuild() {
    let home = tempfile::tempdir().unwrap();
    let provider = provider(vec![text_reply(0, "answer")]).await;
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let known = daemon.start_thread(json!({})).await;
    text_turn(&mut daemon, &known, "indexed question").await;
    // The folder looks long settled, so this listing remembers it as fully indexed: the file
    // created below must still be found (creating it changes the folder).
    let day = rollout_of(home.path(), &known)
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::open(&day)
        .and_then(|folder| folder.set_modified(an_hour_ago))
        .unwrap();
    let list = daemon.ok("thread/list", json!({})).await;
    assert_eq!(listed(&list, &known)["preview"], "indexed question");
    let index_before = std::fs::metadata(index_path(home.path())).unwrap();

    // A thread written while its index line could not be (another daemon on a full disk, or a
    // crash between the two writes): its rollout is complete, the index never heard of it.
    let source = rollout_of(home.path(), &known);
    let orphan = uuid::Uuid::now_v7().to_string();
    let text = std::fs::read_to_string(&source)
        .unwrap()
        .replace(&known, &orphan)
        .replace("indexed question", "orphaned question");
    let file_name = source
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .replace(&known, &orphan);
    std::fs::write(source.with_file_name(file_name), text).unwrap();

    let list = daemon.ok("thread/list", json!({})).await;
    assert_eq!(listed(&list, &orphan)["preview"], "orphaned question");
    assert_eq!(listed(&list, &known)["preview"], "indexed question");
    let index_after = std::fs::metadata(index_path(home.path())).unwrap();
    assert_eq!(
        (index_after.dev(), index_after.ino()),
        (index_before.dev(), index_before.ino()),
        "the index was appended to, not rebuilt"
    );
    // The entry is now in the index itself: a fresh daemon lists it from there.
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));
    let index = std::fs::read_to_string(index_path(home.path())).unwrap();
    assert!(index.contains(&orphan), "{index}");
    // The orphan can be resumed and read like any thread.
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    daemon
        .ok("thread/resume", json!({"threadId": orphan}))
        .await;
}

#[tokio::test]
async fn a_rollout_path_that_is_a_symbolic_link_is_refused_naming_the_file() {
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let provider = provider(vec![text_reply(0, "answer")]).await;
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let id = daemon.start_thread(json!({})).await;
    text_turn(&mut daemon, &id, "question").await;
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));

    // The rollout is replaced by a link to a file elsewhere: appends must not land there.
    let rollout = rollout_of(home.path(), &id);
    let target = outside.path().join("elsewhere.jsonl");
    std::fs::rename(&rollout, &target).unwrap();
    std::os::unix::fs::symlink(&target, &rollout).unwrap();
    let before = std::fs::read(&target).unwrap();

    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let resume = daemon.err("thread/resume", json!({"threadId": id})).await;
    let read = daemon
        .err("thread/read", json!({"threadId": id, "includeTurns": true}))
        .await;
    for error in [&resume, &read] {
        assert_eq!(error["data"]["reason"], "rollout_is_symlink", "{error}");
        assert_eq!(error["data"]["path"], rollout.to_string_lossy().as_ref());
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("symbolic link") && message.contains(&*rollout.to_string_lossy()),
            "{message}"
        );
    }
    assert_eq!(std::fs::read(&target).unwrap(), before);
}
