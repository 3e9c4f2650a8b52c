//! `fuzzyFileSearch` and its experimental sessions through the real binary: results ranked and
//! scored as the reference ranks them, `.gitignore` honoured, roots outside the client's
//! refused, sessions gated on the experimental capability and answering each update with
//! `sessionUpdated` then `sessionCompleted`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::{mock_overrides, Daemon, MockProvider, Script};
use tokio::process::Command;

struct Setup {
    _base: tempfile::TempDir,
    _home: tempfile::TempDir,
    _provider: MockProvider,
    workspace: PathBuf,
    outside: PathBuf,
    daemon: Daemon,
}

/// A git workspace (as the reference was observed on) the daemon runs in, and a directory
/// beside it.
async fn setup(experimental: bool) -> Setup {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().canonicalize().unwrap();
    let workspace = root.join("workspace");
    let outside = root.join("outside");
    for dir in [".git", "src/nested", "ignored"] {
        std::fs::create_dir_all(workspace.join(dir)).unwrap();
    }
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(workspace.join(".gitignore"), "ignored/\n*.log\n").unwrap();
    for file in [
        "src/main.rs",
        "src/lib.rs",
        "src/domain.rs",
        "src/nested/mainly.rs",
        "ignored/main.rs",
        "main.log",
    ] {
        std::fs::write(workspace.join(file), "").unwrap();
    }
    std::fs::write(outside.join("main.rs"), "").unwrap();
    let home = tempfile::tempdir().unwrap();
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let mut command = Command::new(support::openturn_bin());
    for override_ in mock_overrides(&provider) {
        command.arg("-c").arg(override_);
    }
    command
        .arg("app-server")
        .current_dir(&workspace)
        .env("OPENTURN_HOME", home.path())
        .env("OPENTURN_TEST_KEY", "sk-test")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut daemon = Daemon::from_command(command);
    daemon
        .ok(
            "initialize",
            json!({
                "clientInfo": {"name": "openturn-tests", "version": "1.0"},
                "capabilities": {"experimentalApi": experimental},
            }),
        )
        .await;
    daemon.send(json!({"method": "initialized"})).await;
    Setup {
        _base: base,
        _home: home,
        _provider: provider,
        workspace,
        outside,
        daemon,
    }
}

fn text(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

/// The reference's answer for "main" on this tree (scores, order, indices as it sent them).
fn expected_main(root: &str) -> Value {
    json!([
        {"root": root, "path": "src/main.rs", "match_type": "file", "file_name": "main.rs",
         "score": 65645, "indices": [4, 5, 6, 7]},
        {"root": root, "path": "src/nested/mainly.rs", "match_type": "file",
         "file_name": "mainly.rs", "score": 65645, "indices": [11, 12, 13, 14]},
        {"root": root, "path": "src/domain.rs", "match_type": "file", "file_name": "domain.rs",
         "score": 65612, "indices": [6, 7, 8, 9]},
    ])
}

#[tokio::test]
async fn a_search_ranks_like_the_reference_and_skips_ignored_files() {
    let Setup {
        workspace,
        outside,
        mut daemon,
        _base,
        _home,
        _provider,
    } = setup(false).await;
    let root = text(&workspace);
    let found = daemon
        .ok(
            "fuzzyFileSearch",
            json!({"query": "main", "roots": [root.clone()]}),
        )
        .await;
    assert_eq!(found, json!({"files": expected_main(&root)}));
    let directory = daemon
        .ok(
            "fuzzyFileSearch",
            json!({"query": "src", "roots": [root.clone()], "cancellationToken": "t"}),
        )
        .await;
    assert_eq!(
        directory["files"][0],
        json!({"root": root, "path": "src", "match_type": "directory", "file_name": "src",
               "score": 131156, "indices": [0, 1, 2]})
    );
    let empty = daemon
        .ok(
            "fuzzyFileSearch",
            json!({"query": "", "roots": [root.clone()]}),
        )
        .await;
    assert_eq!(empty, json!({"files": []}));

    let refused = daemon
        .err(
            "fuzzyFileSearch",
            json!({"query": "main", "roots": [text(&outside)]}),
        )
        .await;
    assert_eq!(refused["code"], -32600, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains(&text(&outside)),
        "{refused}"
    );
    // A link inside the workspace to the outside directory is not a way in.
    std::os::unix::fs::symlink(&outside, workspace.join("escape")).unwrap();
    let through_link = daemon
        .err(
            "fuzzyFileSearch",
            json!({"query": "main", "roots": [text(&workspace.join("escape"))]}),
        )
        .await;
    assert_eq!(through_link["code"], -32600, "{through_link}");

    let missing = daemon
        .err("fuzzyFileSearch", json!({"query": "main"}))
        .await;
    assert_eq!(missing["code"], -32602, "{missing}");
    assert!(
        missing["message"].as_str().unwrap().contains("roots"),
        "{missing}"
    );
    let relative = daemon
        .err(
            "fuzzyFileSearch",
            json!({"query": "main", "roots": ["src"]}),
        )
        .await;
    assert_eq!(relative["code"], -32602, "{relative}");
    assert!(
        relative["message"].as_str().unwrap().contains("roots"),
        "{relative}"
    );
}

#[tokio::test]
async fn sessions_need_the_experimental_capability() {
    let Setup {
        workspace,
        mut daemon,
        _base,
        _home,
        _provider,
        ..
    } = setup(false).await;
    for (method, params) in [
        (
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "s", "roots": [text(&workspace)]}),
        ),
        (
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "s", "query": "main"}),
        ),
        ("fuzzyFileSearch/sessionStop", json!({"sessionId": "s"})),
    ] {
        let error = daemon.err(method, params).await;
        assert_eq!(error["code"], -32600, "{error}");
        assert_eq!(
            error["message"],
            format!("{method} requires experimentalApi capability")
        );
    }
}

#[tokio::test]
async fn a_session_answers_each_query_with_its_results_then_completion() {
    let Setup {
        workspace,
        mut daemon,
        _base,
        _home,
        _provider,
        ..
    } = setup(true).await;
    let root = text(&workspace);
    daemon
        .ok(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "s1", "roots": [root.clone()]}),
        )
        .await;
    let id = daemon
        .send_request(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "s1", "query": "main"}),
        )
        .await;
    let messages = daemon
        .collect_until(|m| m["method"] == "fuzzyFileSearch/sessionCompleted")
        .await;
    let kinds: Vec<String> = messages
        .iter()
        .map(|m| match m["method"].as_str() {
            Some(method) => method.to_string(),
            None => format!("response {}", m["id"]),
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            format!("response {id}"),
            "fuzzyFileSearch/sessionUpdated".to_string(),
            "fuzzyFileSearch/sessionCompleted".to_string(),
        ]
    );
    assert_eq!(messages[0]["result"], json!({}));
    assert_eq!(
        messages[1]["params"],
        json!({"sessionId": "s1", "query": "main", "files": expected_main(&root)})
    );
    assert_eq!(messages[2]["params"], json!({"sessionId": "s1"}));

    // The index is reused: a file made after the start is not in it, the next query ranks
    // what was walked.
    std::fs::write(workspace.join("src/library.rs"), "").unwrap();
    daemon
        .ok(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "s1", "query": "lib"}),
        )
        .await;
    let updated = daemon.notification("fuzzyFileSearch/sessionUpdated").await;
    assert_eq!(updated["params"]["query"], "lib");
    let paths: Vec<&Value> = updated["params"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| &file["path"])
        .collect();
    assert_eq!(paths, vec!["src/lib.rs"]);
    daemon
        .notification("fuzzyFileSearch/sessionCompleted")
        .await;

    daemon
        .ok("fuzzyFileSearch/sessionStop", json!({"sessionId": "s1"}))
        .await;
    let gone = daemon
        .err(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "s1", "query": "main"}),
        )
        .await;
    assert_eq!(gone["code"], -32600);
    assert_eq!(gone["message"], "fuzzy file search session not found: s1");
    let no_roots = daemon
        .err(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "s2", "roots": []}),
        )
        .await;
    assert_eq!(no_roots["code"], -32602);
    assert!(no_roots["message"].as_str().unwrap().contains("roots"));
    // A session left open ends with the connection.
    daemon
        .ok(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "s3", "roots": [root]}),
        )
        .await;
    daemon.exit_cleanly().await;
}
