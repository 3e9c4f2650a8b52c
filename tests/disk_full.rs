//! A full disk loses nothing that was acknowledged: an append that fails part-way (ENOSPC) is cut
//! back, so the bytes that did land never become a torn line in the middle of the rollout. The
//! client hears about the failure (a `warning` naming the thread and the cause), every turn
//! written before the failure reads back with `thread/read` and with `thread/resume` after a
//! restart, and once space is free again later turns append cleanly.
//!
//! The test mounts a small tmpfs as the daemon's home, so it needs root (as in CI); elsewhere it
//! prints why it skipped.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::ffi::CString;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::*;

/// Unmounts the test's tmpfs when dropped, also when an assertion fails first.
struct Mounted(PathBuf);

impl Mounted {
    /// Mounts a tmpfs of `size` at `target`; `Err` says why not (not root, no permission).
    fn tmpfs(target: &Path, size: &str) -> Result<Mounted, String> {
        // SAFETY: reading our own effective uid.
        if unsafe { libc::geteuid() } != 0 {
            return Err("mounting a tmpfs needs root".to_string());
        }
        let cstring = |s: &str| CString::new(s).unwrap();
        let target_c = cstring(&target.to_string_lossy());
        let (source, kind) = (cstring("tmpfs"), cstring("tmpfs"));
        let options = cstring(&format!("size={size},mode=0700"));
        // SAFETY: all pointers are valid NUL-terminated strings that outlive the call.
        let status = unsafe {
            libc::mount(
                source.as_ptr(),
                target_c.as_ptr(),
                kind.as_ptr(),
                0,
                options.as_ptr().cast(),
            )
        };
        if status != 0 {
            return Err(format!(
                "mount tmpfs failed: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Mounted(target.to_path_buf()))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let target = CString::new(self.0.to_string_lossy().as_bytes()).unwrap_or_default();
        // SAFETY: a valid path; MNT_DETACH so a daemon still exiting cannot keep it mounted.
        unsafe {
            libc::umount2(target.as_ptr(), libc::MNT_DETACH);
        }
    }
}

/// Writes `path` until the filesystem has no free block left.
fn fill_disk(path: &Path) {
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![b'x'; 4096];
    // Bounded: the filesystem is a few hundred KiB.
    for _ in 0..100_000 {
        match file.write(&chunk) {
            Ok(0) => return,
            Ok(_) => continue,
            Err(error) if error.raw_os_error() == Some(libc::ENOSPC) => return,
            Err(error) => panic!("filling the disk: {error}"),
        }
    }
    panic!("the filesystem never filled up");
}

/// The (user text, agent text) of every turn `thread/read` or `thread/resume` returned.
fn turn_texts(thread: &Value) -> Vec<(String, String)> {
    let text_of = |turn: &Value, kind: &str| -> String {
        turn["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|item| item["type"] == kind)
            .map(|item| match kind {
                "userMessage" => item["content"][0]["text"].as_str().unwrap_or_default(),
                _ => item["text"].as_str().unwrap_or_default(),
            })
            .collect::<Vec<_>>()
            .join("|")
    };
    thread["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|turn| (text_of(turn, "userMessage"), text_of(turn, "agentMessage")))
        .collect()
}

async fn read_thread(daemon: &mut Daemon, thread_id: &str) -> Value {
    let read = daemon
        .ok(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    read["thread"].clone()
}

fn pair(user: &str, agent: &str) -> (String, String) {
    (user.to_string(), agent.to_string())
}

#[tokio::test]
async fn a_full_disk_mid_turn_loses_no_acknowledged_turn_and_later_turns_append_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let _mounted = match Mounted::tmpfs(&home, "256k") {
        Ok(mounted) => mounted,
        Err(reason) => {
            println!("skipped: {reason}");
            return;
        }
    };
    let provider = MockProvider::start(Script::new(vec![
        text_reply(0, "one"),
        text_reply(1, "two"),
        text_reply(2, "three"),
        text_reply(3, "four"),
    ]))
    .await
    .unwrap();
    let mut daemon = Daemon::spawn(&home, &mock_overrides(&provider));
    daemon.initialize().await;
    // A long working folder, preview and name make every index line longer than a page, so on
    // the full disk an index line, too, is written part-way.
    let cwd = (0..3).fold(dir.path().to_path_buf(), |path, n| {
        path.join(format!("{n}{}", "w".repeat(200)))
    });
    std::fs::create_dir_all(&cwd).unwrap();
    let id = daemon.start_thread(json!({"cwd": cwd})).await;
    let first = "𝄞".repeat(450);
    text_turn(&mut daemon, &id, &first).await;
    daemon
        .ok(
            "thread/name/set",
            json!({"threadId": id, "name": "名".repeat(450)}),
        )
        .await;

    // The disk fills up; the next turn's user message is far larger than what is left in the
    // rollout's last page, so its line is written part-way and then fails with ENOSPC.
    let filler = home.join("filler");
    fill_disk(&filler);
    let large = "L".repeat(12_000);
    let during = text_turn(&mut daemon, &id, &large).await;
    let warning = during
        .iter()
        .find(|m| m["method"] == "warning")
        .unwrap_or_else(|| panic!("no warning about the failed append: {during:#?}"));
    assert_eq!(warning["params"]["threadId"], id.as_str());
    let message = warning["params"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("No space left on device") && message.contains(&id),
        "the warning names the cause and the thread's file: {message}"
    );

    // Space comes back: the next turn appends after the last complete line.
    std::fs::remove_file(&filler).unwrap();
    text_turn(&mut daemon, &id, "third").await;
    let read = read_thread(&mut daemon, &id).await;
    let turns = turn_texts(&read);
    assert_eq!(turns.first(), Some(&pair(&first, "one")), "{read:#}");
    assert_eq!(turns.last(), Some(&pair("third", "three")), "{read:#}");
    let rollout = std::fs::read_to_string(rollout_of(&home, &id)).unwrap();
    for (number, line) in rollout.lines().enumerate() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("rollout line {} is torn: {e}", number + 1));
    }
    // The thread index went through the same full disk: no torn line in it either, and it
    // lists the thread.
    let index = std::fs::read_to_string(home.join("thread_index.jsonl")).unwrap();
    for (number, line) in index.lines().enumerate() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("index line {} is torn: {e}", number + 1));
    }
    let list = daemon.ok("thread/list", json!({})).await;
    assert_eq!(list["data"][0]["id"], id.as_str(), "{list:#}");
    assert_eq!(list["data"][0]["preview"], "𝄞".repeat(400));
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));

    // A new daemon resumes the same turns and keeps appending.
    let mut daemon = Daemon::spawn(&home, &mock_overrides(&provider));
    daemon.initialize().await;
    let resumed = daemon.ok("thread/resume", json!({"threadId": id})).await;
    assert_eq!(turn_texts(&resumed["thread"]), turns);
    text_turn(&mut daemon, &id, "fourth").await;
    let read = read_thread(&mut daemon, &id).await;
    let mut expected = turns.clone();
    expected.push(pair("fourth", "four"));
    assert_eq!(turn_texts(&read), expected);
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));
}
