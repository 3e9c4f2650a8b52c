//! `fs/*` through the real binary: each method does its job inside the client's roots (here the
//! daemon's working directory), refuses paths outside them and paths through a link with an
//! error naming the path, touches nothing beside the path it names, and a watch reports a
//! change until it is unwatched.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{json, Value};
use support::{mock_overrides, Daemon, MockProvider, Script};
use tokio::process::Command;

/// A workspace the daemon runs in, a directory beside it that is outside its roots, and the
/// daemon.
struct Setup {
    _base: tempfile::TempDir,
    _home: tempfile::TempDir,
    workspace: PathBuf,
    outside: PathBuf,
    daemon: Daemon,
    _provider: MockProvider,
}

async fn setup() -> Setup {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().canonicalize().unwrap();
    let workspace = root.join("workspace");
    let outside = root.join("outside");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "outside secret").unwrap();
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
    daemon.initialize().await;
    Setup {
        _base: base,
        _home: home,
        workspace,
        outside,
        daemon,
        _provider: provider,
    }
}

fn text(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Every file and directory under `root`, relative, sorted (links listed, not followed).
fn tree(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            found.push(path.strip_prefix(root).unwrap().display().to_string());
            if entry.file_type().unwrap().is_dir() {
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

fn assert_refused(error: &Value, code: i64, path: &Path) {
    assert_eq!(error["code"], code, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&text(path)), "{message}");
}

#[tokio::test]
async fn each_method_does_its_job_inside_the_roots() {
    let Setup {
        workspace,
        mut daemon,
        _base,
        _home,
        _provider,
        ..
    } = setup().await;
    let file = workspace.join("notes.txt");
    let written = daemon
        .ok(
            "fs/writeFile",
            json!({"path": text(&file), "dataBase64": b64(b"hello\x00bytes")}),
        )
        .await;
    assert_eq!(written, json!({}));
    assert_eq!(std::fs::read(&file).unwrap(), b"hello\x00bytes");
    let read = daemon.ok("fs/readFile", json!({"path": text(&file)})).await;
    assert_eq!(read, json!({"dataBase64": b64(b"hello\x00bytes")}));

    let metadata = daemon
        .ok("fs/getMetadata", json!({"path": text(&file)}))
        .await;
    assert_eq!(metadata["isFile"], true);
    assert_eq!(metadata["isDirectory"], false);
    assert_eq!(metadata["isSymlink"], false);
    assert!(metadata["modifiedAtMs"].as_i64().unwrap() > 0, "{metadata}");
    let root_metadata = daemon
        .ok("fs/getMetadata", json!({"path": text(&workspace)}))
        .await;
    assert_eq!(root_metadata["isDirectory"], true);

    let nested = workspace.join("a/b/c");
    daemon
        .ok("fs/createDirectory", json!({"path": text(&nested)}))
        .await;
    assert!(nested.is_dir());
    let exists = daemon
        .err(
            "fs/createDirectory",
            json!({"path": text(&nested), "recursive": false}),
        )
        .await;
    assert_refused(&exists, -32603, &nested);

    std::os::unix::fs::symlink("notes.txt", workspace.join("link")).unwrap();
    let listing = daemon
        .ok("fs/readDirectory", json!({"path": text(&workspace)}))
        .await;
    assert_eq!(
        listing,
        json!({"entries": [
            {"fileName": "a", "isDirectory": true, "isFile": false},
            {"fileName": "link", "isDirectory": false, "isFile": false},
            {"fileName": "notes.txt", "isDirectory": false, "isFile": true},
        ]})
    );
    let link_metadata = daemon
        .ok(
            "fs/getMetadata",
            json!({"path": text(&workspace.join("link"))}),
        )
        .await;
    assert_eq!(link_metadata["isSymlink"], true);

    // Copy a file, then a tree (which needs `recursive`).
    let copy = workspace.join("a/copy.txt");
    daemon
        .ok(
            "fs/copy",
            json!({"sourcePath": text(&file), "destinationPath": text(&copy)}),
        )
        .await;
    assert_eq!(std::fs::read(&copy).unwrap(), b"hello\x00bytes");
    let tree_copy = workspace.join("a2");
    let needs_recursive = daemon
        .err(
            "fs/copy",
            json!({"sourcePath": text(&workspace.join("a")), "destinationPath": text(&tree_copy)}),
        )
        .await;
    assert_eq!(needs_recursive["code"], -32600, "{needs_recursive}");
    assert!(
        needs_recursive["message"]
            .as_str()
            .unwrap()
            .contains("recursive"),
        "{needs_recursive}"
    );
    daemon
        .ok(
            "fs/copy",
            json!({"sourcePath": text(&workspace.join("a")), "destinationPath": text(&tree_copy), "recursive": true}),
        )
        .await;
    assert_eq!(tree(&tree_copy), vec!["b", "b/c", "copy.txt"]);

    // Remove: a missing path is fine by default, not with `force: false`.
    let missing = workspace.join("missing");
    daemon
        .ok("fs/remove", json!({"path": text(&missing)}))
        .await;
    let not_found = daemon
        .err("fs/remove", json!({"path": text(&missing), "force": false}))
        .await;
    assert_refused(&not_found, -32603, &missing);
    let not_empty = daemon
        .err(
            "fs/remove",
            json!({"path": text(&workspace.join("a")), "recursive": false}),
        )
        .await;
    assert_eq!(not_empty["code"], -32603, "{not_empty}");
    daemon
        .ok("fs/remove", json!({"path": text(&workspace.join("a"))}))
        .await;
    assert!(!workspace.join("a").exists());
    let root_removal = daemon
        .err("fs/remove", json!({"path": text(&workspace)}))
        .await;
    assert_refused(&root_removal, -32600, &workspace);
    assert!(workspace.is_dir());
}

#[tokio::test]
async fn paths_outside_the_roots_are_refused_with_their_name() {
    let Setup {
        workspace,
        outside,
        mut daemon,
        _base,
        _home,
        _provider,
        ..
    } = setup().await;
    let secret = outside.join("secret.txt");
    for (method, params) in [
        ("fs/readFile", json!({"path": text(&secret)})),
        ("fs/getMetadata", json!({"path": text(&secret)})),
        ("fs/readDirectory", json!({"path": text(&outside)})),
        (
            "fs/writeFile",
            json!({"path": text(&secret), "dataBase64": b64(b"overwritten")}),
        ),
        ("fs/remove", json!({"path": text(&secret)})),
        (
            "fs/createDirectory",
            json!({"path": text(&outside.join("made"))}),
        ),
        (
            "fs/copy",
            json!({"sourcePath": text(&secret), "destinationPath": text(&workspace.join("stolen"))}),
        ),
        ("fs/watch", json!({"path": text(&outside), "watchId": "w"})),
    ] {
        let error = daemon.err(method, params).await;
        assert_eq!(error["code"], -32600, "{method}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(&text(&outside)), "{method}: {message}");
        assert!(message.contains("outside the roots"), "{method}: {message}");
    }
    // `..` cannot climb out either.
    let climbing = workspace.join("../outside/secret.txt");
    let error = daemon
        .err("fs/readFile", json!({"path": text(&climbing)}))
        .await;
    assert_eq!(error["code"], -32600, "{error}");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "outside secret");
    assert_eq!(tree(&outside), vec!["secret.txt"]);
    assert_eq!(tree(&workspace), Vec::<String>::new());
}

#[tokio::test]
async fn a_link_out_of_the_roots_is_never_followed() {
    let Setup {
        workspace,
        outside,
        mut daemon,
        _base,
        _home,
        _provider,
        ..
    } = setup().await;
    let link = workspace.join("escape");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let through = link.join("secret.txt");
    for (method, params) in [
        ("fs/readFile", json!({"path": text(&through)})),
        (
            "fs/writeFile",
            json!({"path": text(&through), "dataBase64": b64(b"overwritten")}),
        ),
        (
            "fs/writeFile",
            json!({"path": text(&link.join("planted.txt")), "dataBase64": b64(b"x")}),
        ),
        ("fs/readDirectory", json!({"path": text(&link)})),
        ("fs/getMetadata", json!({"path": text(&through)})),
        (
            "fs/createDirectory",
            json!({"path": text(&link.join("made"))}),
        ),
        ("fs/remove", json!({"path": text(&through)})),
        (
            "fs/copy",
            json!({"sourcePath": text(&through), "destinationPath": text(&workspace.join("stolen"))}),
        ),
        ("fs/watch", json!({"path": text(&link), "watchId": "w"})),
    ] {
        let error = daemon.err(method, params).await;
        assert_eq!(error["code"], -32600, "{method}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("symbolic link"), "{method}: {message}");
        assert!(message.contains(&text(&link)), "{method}: {message}");
    }
    // A file link pointing out is not read through either.
    std::os::unix::fs::symlink(outside.join("secret.txt"), workspace.join("file-link")).unwrap();
    let error = daemon
        .err(
            "fs/readFile",
            json!({"path": text(&workspace.join("file-link"))}),
        )
        .await;
    assert_eq!(error["code"], -32600, "{error}");
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "outside secret"
    );
    assert_eq!(tree(&outside), vec!["secret.txt"]);
}

#[tokio::test]
async fn remove_and_write_touch_nothing_beside_the_named_path() {
    let Setup {
        workspace,
        outside,
        mut daemon,
        _base,
        _home,
        _provider,
        ..
    } = setup().await;
    let doomed = workspace.join("doomed");
    std::fs::create_dir_all(doomed.join("deep/deeper")).unwrap();
    std::fs::write(doomed.join("deep/deeper/file"), "x").unwrap();
    // A link inside the tree to a directory outside: removing the tree unlinks the link only.
    std::os::unix::fs::symlink(&outside, doomed.join("deep/to-outside")).unwrap();
    std::os::unix::fs::symlink(workspace.join("keep"), doomed.join("to-sibling")).unwrap();
    std::fs::create_dir_all(workspace.join("keep")).unwrap();
    std::fs::write(workspace.join("keep/kept.txt"), "kept").unwrap();
    std::fs::write(workspace.join("doomed-not.txt"), "beside").unwrap();
    let before_outside = tree(&outside);

    daemon.ok("fs/remove", json!({"path": text(&doomed)})).await;
    assert_eq!(
        tree(&workspace),
        vec!["doomed-not.txt", "keep", "keep/kept.txt"]
    );
    assert_eq!(tree(&outside), before_outside);
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "outside secret"
    );

    // A write replaces exactly its file: no temporary file stays, neighbours are unchanged.
    daemon
        .ok(
            "fs/writeFile",
            json!({"path": text(&workspace.join("keep/kept.txt")), "dataBase64": b64(b"new")}),
        )
        .await;
    assert_eq!(
        tree(&workspace),
        vec!["doomed-not.txt", "keep", "keep/kept.txt"]
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("keep/kept.txt")).unwrap(),
        "new"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("doomed-not.txt")).unwrap(),
        "beside"
    );
    // A write into a missing directory fails rather than creating it.
    let orphan = workspace.join("nowhere/file.txt");
    let error = daemon
        .err(
            "fs/writeFile",
            json!({"path": text(&orphan), "dataBase64": b64(b"x")}),
        )
        .await;
    assert_refused(&error, -32603, &orphan);
    assert!(!workspace.join("nowhere").exists());
}

#[tokio::test]
async fn a_watch_reports_changes_until_unwatched() {
    let Setup {
        workspace,
        mut daemon,
        _base,
        _home,
        _provider,
        ..
    } = setup().await;
    let watched = daemon
        .ok(
            "fs/watch",
            json!({"path": text(&workspace), "watchId": "w1"}),
        )
        .await;
    assert_eq!(watched, json!({"path": text(&workspace)}));
    let duplicate = daemon
        .err(
            "fs/watch",
            json!({"path": text(&workspace), "watchId": "w1"}),
        )
        .await;
    assert_eq!(duplicate["code"], -32600);
    assert_eq!(duplicate["message"], "watchId already exists: w1");

    daemon
        .ok(
            "fs/writeFile",
            json!({"path": text(&workspace.join("first.txt")), "dataBase64": b64(b"1")}),
        )
        .await;
    let changed = daemon.notification("fs/changed").await;
    assert_eq!(
        changed["params"],
        json!({"watchId": "w1", "changedPaths": [text(&workspace.join("first.txt"))]})
    );

    daemon.ok("fs/unwatch", json!({"watchId": "w1"})).await;
    daemon.ok("fs/unwatch", json!({"watchId": "w1"})).await;
    daemon
        .ok(
            "fs/writeFile",
            json!({"path": text(&workspace.join("second.txt")), "dataBase64": b64(b"2")}),
        )
        .await;
    // A second watch sees the next change; the first, ended, must have said nothing since.
    daemon
        .ok(
            "fs/watch",
            json!({"path": text(&workspace), "watchId": "w2"}),
        )
        .await;
    daemon
        .ok(
            "fs/writeFile",
            json!({"path": text(&workspace.join("third.txt")), "dataBase64": b64(b"3")}),
        )
        .await;
    let next = daemon.notification("fs/changed").await;
    assert_eq!(next["params"]["watchId"], "w2", "{next}");
    assert_eq!(
        next["params"]["changedPaths"],
        json!([text(&workspace.join("third.txt"))])
    );
    let stray: Vec<&Value> = daemon
        .transcript
        .iter()
        .filter(|m| m["method"] == "fs/changed" && m["params"]["watchId"] == "w1")
        .collect();
    assert_eq!(stray.len(), 1, "{stray:?}");

    // A path that does not exist yet is watched through its parent.
    let future = workspace.join("later.txt");
    let pending = daemon
        .ok("fs/watch", json!({"path": text(&future), "watchId": "w3"}))
        .await;
    assert_eq!(pending, json!({"path": text(&future)}));
    daemon
        .ok(
            "fs/writeFile",
            json!({"path": text(&future), "dataBase64": b64(b"now")}),
        )
        .await;
    let appeared = changed_for(&mut daemon, "w3").await;
    assert_eq!(appeared["params"]["changedPaths"], json!([text(&future)]));
    // Closing the connection with watches open ends them and the daemon exits cleanly.
    daemon.exit_cleanly().await;
}

/// The next `fs/changed` of watch `watch_id` (others are skipped).
async fn changed_for(daemon: &mut Daemon, watch_id: &str) -> Value {
    loop {
        let changed = daemon.notification("fs/changed").await;
        if changed["params"]["watchId"] == watch_id {
            return changed;
        }
    }
}

#[tokio::test]
async fn watches_of_one_path_share_it_and_are_bounded() {
    let Setup {
        workspace,
        mut daemon,
        _base,
        _home,
        _provider,
        ..
    } = setup().await;
    let watch = |id: String| json!({"path": text(&workspace), "watchId": id});
    daemon.ok("fs/watch", watch("a".to_string())).await;
    daemon.ok("fs/watch", watch("b".to_string())).await;
    // Unwatching one of two watches on a path keeps the other's kernel watch.
    daemon.ok("fs/unwatch", json!({"watchId": "a"})).await;
    daemon
        .ok(
            "fs/writeFile",
            json!({"path": text(&workspace.join("f.txt")), "dataBase64": b64(b"f")}),
        )
        .await;
    let changed = changed_for(&mut daemon, "b").await;
    assert_eq!(
        changed["params"]["changedPaths"],
        json!([text(&workspace.join("f.txt"))])
    );

    for index in 1..256 {
        daemon.ok("fs/watch", watch(format!("w{index}"))).await;
    }
    let refused = daemon
        .err("fs/watch", watch("one-too-many".to_string()))
        .await;
    assert_eq!(refused["code"], -32600, "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains("256 watches"),
        "{refused}"
    );
    daemon.ok("fs/unwatch", json!({"watchId": "w1"})).await;
    daemon.ok("fs/watch", watch("one-more".to_string())).await;
}

#[tokio::test]
async fn bad_params_name_the_field() {
    let Setup {
        workspace,
        mut daemon,
        _base,
        _home,
        _provider,
        ..
    } = setup().await;
    let cases = [
        ("fs/readFile", json!({}), "path"),
        ("fs/readFile", json!({"path": "relative/x"}), "path"),
        (
            "fs/writeFile",
            json!({"path": text(&workspace.join("f"))}),
            "dataBase64",
        ),
        (
            "fs/writeFile",
            json!({"path": text(&workspace.join("f")), "dataBase64": "!!not base64"}),
            "dataBase64",
        ),
        ("fs/remove", json!({"path": 7}), "path"),
        (
            "fs/createDirectory",
            json!({"path": text(&workspace), "recursive": "yes"}),
            "recursive",
        ),
        (
            "fs/copy",
            json!({"sourcePath": text(&workspace)}),
            "destinationPath",
        ),
        (
            "fs/copy",
            json!({"sourcePath": "x", "destinationPath": text(&workspace)}),
            "sourcePath",
        ),
        ("fs/watch", json!({"path": text(&workspace)}), "watchId"),
        ("fs/unwatch", json!({}), "watchId"),
        ("fs/getMetadata", json!({"path": ""}), "path"),
        ("fs/readDirectory", json!({"path": null}), "path"),
    ];
    for (method, params, field) in cases {
        let error = daemon.err(method, params.clone()).await;
        assert_eq!(error["code"], -32602, "{method} {params}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(field), "{method} {params}: {message}");
    }
    assert!(!workspace.join("f").exists());
}
