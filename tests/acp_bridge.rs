//! The ACP bridge that Zed and JetBrains use for Codex (`@agentclientprotocol/codex-acp`, pinned
//! in `tests/acp/package.json`) drives openturn unchanged: it spawns `CODEX_PATH app-server`,
//! and an ACP client talking to the bridge over stdio gets a whole session out of it:
//! `initialize`, `session/new`, a prompt whose reply streams in chunks and ends with
//! `end_turn`, a shell tool call approved through `session/request_permission`, `session/list`,
//! `session/load` replaying the history in a fresh bridge, and `session/cancel` ending a
//! running prompt with `cancelled`; and a patch the model writes shown to the client as an
//! `edit` tool call with each file's diff, applied unasked in the bridge's workspace-write mode
//! and after `session/request_permission` in its read-only mode. Its `/compact` command
//! compacts the thread; its `/plan` switches the collaboration mode (`thread/settings/update`),
//! its `/review` runs `review/start` in a git repository, and its `/mcp reconnect` restarts a
//! server fixed in config.toml. Every bridge runs openturn the way
//! users wrap agent binaries, behind a bash script that logs its stdio through two `tee`s (which
//! become the daemon's own children), with an MCP server configured; commands and an MCP tool
//! call run side by side through it.
//!
//! `scripts/test` installs the bridge into `tests/acp/node_modules`. Without node or the
//! package the test is skipped with the reason printed, except under `CI=true`, where it fails:
//! CI must never silently stop exercising the bridge.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod acp_support;
mod support;
mod turn_support;

use std::path::Path;

use serde_json::{json, Value};

use acp_support::*;
use support::*;
use turn_support::*;

/// A reply that streams one delta and then stays open until the request is dropped.
fn held_open_reply() -> Reply {
    Reply::Sse(
        ResponseBuilder::new("r_wait")
            .created()
            .message_added(Some("m_wait"), "")
            .text_delta("m_wait", "Thinking it over")
            .into_reply()
            .held_open_after_end(),
    )
}

#[tokio::test]
async fn the_acp_bridge_runs_a_whole_session_against_openturn() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    let provider = MockProvider::start(Script::new([
        message_reply("r1", "m1", &["Hello", " from", " openturn"]),
        // The bridge asks for a title after the first turn, in a thread of its own.
        message_reply("r_title", "m_title", &["{\"title\": \"Friendly greeting\"}"]),
        ResponseBuilder::new("r2").created().exec_call(
                "fc1",
                "call_touch",
                json!({"cmd": "touch created-by-tool.txt", "sandbox_permissions": "require_escalated", "justification": "create the file the user asked for"}),
            ).completed(Usage::small(), None).build(),
        message_reply("r3", "m3", &["File created"]),
        held_open_reply(),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write_config(home.path(), &provider);
    let skill = home.path().join("skills/greet/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap_or(home.path())).unwrap();
    std::fs::write(
        &skill,
        "---\nname: greet\ndescription: Greets people\n---\n",
    )
    .unwrap();
    let cwd = project.path().display().to_string();

    let mut client = AcpClient::spawn(&entry, home.path());
    let init = client.initialize().await;
    assert_eq!(init["protocolVersion"], 1, "{init}");
    assert_eq!(init["agentCapabilities"]["loadSession"], true, "{init}");

    // session/new needs account/read, permissionProfile/list, skills/list, … to answer.
    let session_id = client.new_session(&cwd).await;

    // A prompt: chunks stream as session/update, the prompt ends with end_turn.
    let (result, seen) = client
        .ok(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "Say hello"}]}),
        )
        .await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let chunks = updates(&seen, "agent_message_chunk");
    assert!(
        chunks.len() >= 2,
        "the reply should stream in chunks: {chunks:?}"
    );
    assert_eq!(chunk_text(&chunks), "Hello from openturn");
    // The skill on disk reached the bridge (as a command) and the model (in its instructions).
    let commands =
        serde_json::to_string(&updates(&seen, "available_commands_update")).unwrap_or_default();
    assert!(
        commands.contains("greet"),
        "skill missing from commands: {commands}"
    );
    let first_body = &provider.requests()[0].body;
    assert!(
        first_body.to_string().contains(&format!(
            "- greet: Greets people (file: {})",
            skill.display()
        )),
        "skill missing from the request: {first_body}"
    );
    // Let the title request take its reply before the next prompt.
    provider.wait_for_requests(2, TIMEOUT).await;

    // A shell tool call: the bridge asks the client, the command runs once allowed.
    let (result, seen) = client
        .ok(
            "session/prompt",
            json!({"sessionId": session_id,
                "prompt": [{"type": "text", "text": "Create the file"}]}),
        )
        .await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    assert_eq!(
        client.permission_requests.len(),
        1,
        "{:#?}",
        client.transcript
    );
    let asked = serde_json::to_string(&client.permission_requests[0]).unwrap_or_default();
    assert!(asked.contains("touch created-by-tool.txt"), "{asked}");
    assert!(
        project.path().join("created-by-tool.txt").exists(),
        "the approved command did not run"
    );
    let tool_calls = updates(&seen, "tool_call");
    assert!(!tool_calls.is_empty(), "no tool_call update: {seen:#?}");
    assert_eq!(
        chunk_text(&updates(&seen, "agent_message_chunk")),
        "File created"
    );

    // session/list shows the session.
    let (list, _) = client.ok("session/list", json!({"cwd": cwd})).await;
    let listed: Vec<&str> = list["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["sessionId"].as_str())
        .collect();
    assert!(listed.contains(&session_id.as_str()), "{list}");

    // session/cancel mid-turn: the prompt ends with `cancelled`.
    let prompt = client
        .send_request(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "Think long"}]}),
        )
        .await;
    loop {
        let message = client.next().await;
        if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
        assert!(
            message["id"] != prompt,
            "the prompt ended before streaming: {message}"
        );
    }
    client
        .notify("session/cancel", json!({"sessionId": session_id}))
        .await;
    let (response, _) = client.response_to(prompt).await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    client.shutdown().await;

    // A fresh bridge (and daemon) loads the session and replays its history.
    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let (_, replay) = client
        .ok(
            "session/load",
            json!({"sessionId": session_id, "cwd": cwd, "mcpServers": []}),
        )
        .await;
    let user_text = chunk_text(&updates(&replay, "user_message_chunk"));
    assert!(user_text.contains("Say hello"), "{replay:#?}");
    assert!(user_text.contains("Create the file"), "{replay:#?}");
    let agent_text = chunk_text(&updates(&replay, "agent_message_chunk"));
    assert!(agent_text.contains("Hello from openturn"), "{replay:#?}");
    assert!(agent_text.contains("File created"), "{replay:#?}");
    assert!(!updates(&replay, "tool_call").is_empty(), "{replay:#?}");
    client.shutdown().await;

    // Every app-server request the bridge sent was answered, none with an error.
    let sent = recorded(&home.path().join("bridge-in.jsonl"));
    let answers = recorded(&home.path().join("bridge-out.jsonl"));
    let errors: Vec<&Value> = answers
        .iter()
        .filter(|m| m.get("error").is_some())
        .collect();
    assert!(
        errors.is_empty(),
        "openturn refused bridge calls: {errors:#?}"
    );
    // The reference's keys the bridge sends with every thread (`features`, `projects`) pass
    // without a warning the bridge would show in every session.
    let warnings: Vec<&Value> = answers
        .iter()
        .filter(|m| m["method"] == "configWarning")
        .collect();
    assert!(
        warnings.is_empty(),
        "openturn warned about the bridge's config: {warnings:#?}"
    );
    let methods: std::collections::BTreeSet<&str> = sent
        .iter()
        .filter(|m| m.get("id").is_some())
        .filter_map(|m| m["method"].as_str())
        .collect();
    for method in [
        "initialize",
        "account/read",
        "skills/list",
        "permissionProfile/list",
        "thread/start",
        "turn/start",
        "thread/list",
        "thread/resume",
        "thread/goal/get",
        "thread/items/list",
    ] {
        assert!(
            methods.contains(method),
            "the bridge never called {method}: {methods:?}"
        );
    }
    for request in sent
        .iter()
        .filter(|m| m.get("id").is_some() && m.get("method").is_some())
    {
        assert!(
            answers
                .iter()
                .any(|a| a.get("method").is_none() && a["id"] == request["id"]),
            "no answer to {request}"
        );
    }
    eprintln!("app-server methods the bridge called: {methods:?}");
}

/// The bridge's `/compact` command calls `thread/compact/start` and waits for the compaction
/// turn: the prompt ends with `end_turn`, the summarization request went to the provider with no
/// tools, and the next prompt's request carries the summary instead of the first answer.
#[tokio::test]
async fn the_acp_bridge_compact_command_compacts_the_thread() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    let provider = MockProvider::start(Script::new([
        message_reply("r1", "m1", &["first answer"]),
        message_reply("r_title", "m_title", &["{\"title\": \"Compaction\"}"]),
        message_reply("r_sum", "m_sum", &["BRIDGE-SUMMARY"]),
        message_reply("r2", "m2", &["second answer"]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write_config(home.path(), &provider);
    let cwd = project.path().display().to_string();
    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let session_id = client.new_session(&cwd).await;
    let prompt =
        |text: &str| json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]});
    let (result, _) = client.ok("session/prompt", prompt("Say hello")).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    provider.wait_for_requests(2, TIMEOUT).await;

    let (result, _) = client.ok("session/prompt", prompt("/compact")).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let (result, _) = client.ok("session/prompt", prompt("And now?")).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    client.shutdown().await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        requests[2].body["tools"],
        json!([]),
        "the summarization request"
    );
    let next = requests[3].body["input"].to_string();
    assert!(
        next.contains("BRIDGE-SUMMARY") && !next.contains("first answer"),
        "{next}"
    );
    let sent = recorded(&home.path().join("bridge-in.jsonl"));
    assert!(
        sent.iter().any(|m| m["method"] == "thread/compact/start"),
        "the bridge never called thread/compact/start"
    );
    answers_without_errors(home.path());
}

/// A `custom_tool_call` to `apply_patch` whose input streams in two deltas.
fn patch_call(response: ResponseBuilder, call_id: &str, patch: &str) -> ResponseBuilder {
    let (head, tail) = patch.split_at(patch.len() / 2);
    response.custom_tool_call(
        &format!("ctc_{call_id}"),
        call_id,
        "apply_patch",
        &[head, tail],
    )
}

/// The ACP path shows file changes: a patch the model writes reaches the ACP client as an
/// `edit` tool call whose content is the diff of each file (the bridge's rendering of the
/// `fileChange` item), the tool call completes, and the files are really written. In the
/// bridge's read-only mode the edit is asked about through `session/request_permission`,
/// which the test client allows.
#[tokio::test]
async fn the_acp_bridge_shows_a_patch_as_an_edit_with_its_diffs() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    let patch = "*** Begin Patch\n*** Add File: notes.txt\n+first line\n+second line\n\
                 *** Update File: main.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n*** End Patch\n";
    let second = "*** Begin Patch\n*** Add File: asked.txt\n+allowed\n*** End Patch\n";
    let provider = MockProvider::start(Script::new([
        ResponseBuilder::new("r1")
            .created()
            .with(|b| patch_call(b, "call_patch", patch))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m2", &["Edited"]),
        message_reply("r_title", "m_title", &["{\"title\": \"Edit files\"}"]),
        ResponseBuilder::new("r3")
            .created()
            .with(|b| patch_call(b, "call_asked", second))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r4", "m4", &["Edited again"]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    std::fs::write(root.join("main.txt"), "alpha\nbeta\ngamma\n").unwrap();
    write_config(home.path(), &provider);
    let cwd = root.display().to_string();

    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let session_id = client.new_session(&cwd).await;
    let (result, seen) = client
        .ok(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "Edit"}]}),
        )
        .await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt"))
            .ok()
            .as_deref(),
        Some("first line\nsecond line\n"),
        "{}",
        client.context()
    );
    assert_eq!(
        std::fs::read_to_string(root.join("main.txt"))
            .ok()
            .as_deref(),
        Some("alpha\nBETA\ngamma\n")
    );

    // The edit tool call, with one diff per file (by path, as the item lists them).
    let calls: Vec<&Value> = updates(&seen, "tool_call")
        .into_iter()
        .filter(|u| u["toolCallId"] == "call_patch")
        .collect();
    assert_eq!(calls.len(), 1, "{seen:#?}");
    assert_eq!(calls[0]["kind"], "edit", "{:#}", calls[0]);
    let diffs: Vec<Value> = calls[0]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            json!({"type": c["type"], "path": c["path"], "oldText": c["oldText"],
            "newText": c["newText"]})
        })
        .collect();
    assert_eq!(
        diffs,
        vec![
            json!({"type": "diff", "path": root.join("main.txt").display().to_string(),
                "oldText": "alpha\nbeta\ngamma\n", "newText": "alpha\nBETA\ngamma\n"}),
            json!({"type": "diff", "path": root.join("notes.txt").display().to_string(),
                "oldText": null, "newText": "first line\nsecond line\n"}),
        ],
        "{:#}",
        calls[0]
    );
    // ... which then completes.
    let completed = updates(&seen, "tool_call_update")
        .into_iter()
        .any(|u| u["toolCallId"] == "call_patch" && u["status"] == "completed");
    assert!(completed, "{seen:#?}");
    // The bridge's default mode is workspace-write: an edit inside the project needs no
    // permission.
    assert!(
        client.permission_requests.is_empty(),
        "{:#?}",
        client.permission_requests
    );
    provider.wait_for_requests(3, TIMEOUT).await;

    // Read-only mode: the same kind of edit is asked about (`item/fileChange/requestApproval`
    // becomes `session/request_permission`), and once allowed, written.
    client
        .ok(
            "session/set_mode",
            json!({"sessionId": session_id, "modeId": "read-only"}),
        )
        .await;
    let (result, seen) = client
        .ok(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "Again"}]}),
        )
        .await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    assert_eq!(
        client.permission_requests.len(),
        1,
        "{:#?}",
        client.transcript
    );
    assert_eq!(
        client.permission_requests[0]["params"]["toolCall"]["toolCallId"], "call_asked",
        "{:#}",
        client.permission_requests[0]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("asked.txt"))
            .ok()
            .as_deref(),
        Some("allowed\n")
    );
    let asked_call = updates(&seen, "tool_call")
        .into_iter()
        .find(|u| u["toolCallId"] == "call_asked")
        .cloned()
        .unwrap_or_else(|| panic!("no tool_call for the second patch: {seen:#?}"));
    assert_eq!(asked_call["content"][0]["newText"], "allowed\n");
    client.shutdown().await;
}

/// Shell text that starts `sleep 1000` in the background through `prefix` (output discarded),
/// writes its pid to `<name>.pid` in `dir` and waits for the file.
fn start_background(dir: &Path, name: &str, prefix: &str) -> String {
    let pid_file = dir.join(format!("{name}.pid"));
    let pid_file = pid_file.display();
    format!(
        "{prefix}sh -c 'echo $$ > {pid_file}; exec sleep 1000' > /dev/null 2>&1 & \
         while [ ! -s {pid_file} ]; do sleep 0.01; done"
    )
}

/// A response running three commands (a plain one, one leaving a process in the background,
/// one whose process leaves the session), then, in its follow-up, a call of the `kb` MCP
/// server's `echo` tool.
fn commands_then_mcp(n: usize, dir: &Path) -> [Reply; 3] {
    let mut commands = ResponseBuilder::new(format!("r_cmd{n}")).created();
    let lines = [
        format!("echo plain{n}"),
        start_background(dir, &format!("bg{n}"), ""),
        start_background(dir, &format!("setsid{n}"), "setsid "),
    ];
    for (i, cmd) in lines.iter().enumerate() {
        commands = commands.exec_call(
            &format!("fc_{n}_{i}"),
            &format!("call_{n}_{i}"),
            json!({"cmd": cmd, "login": false}),
        );
    }
    let item = |arguments: &str| {
        json!({"type": "function_call", "id": format!("fc_kb{n}"), "call_id": format!("call_kb{n}"),
               "name": "echo", "namespace": "mcp__kb", "arguments": arguments})
    };
    let mcp = ResponseBuilder::new(format!("r_kb{n}"))
        .created()
        .output_item_added(item(""))
        .output_item_done(item(&json!({"text": format!("kb answer {n}")}).to_string()))
        .completed(Usage::small(), None)
        .build();
    [
        commands.completed(Usage::small(), None).build(),
        mcp,
        message_reply(
            format!("r_done{n}"),
            &format!("m_done{n}"),
            &[&format!("Done {n}")],
        ),
    ]
}

/// What users run: the bridge, openturn behind a stdio-logging wrapper whose `tee`s are the
/// daemon's children, an MCP server configured. Two prompts each run commands (one leaving a
/// process behind, one leaving the session) and then the MCP tool: every prompt ends with
/// `end_turn`, the MCP call succeeds after the commands ended, what the commands left is gone,
/// the `tee`s live on through every command, and both logs hold the traffic.
#[tokio::test]
async fn the_acp_bridge_runs_commands_and_an_mcp_tool_behind_a_stdio_logging_wrapper() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let mut replies = vec![
        message_reply("r1", "m1", &["Hello"]),
        message_reply("r_title", "m_title", &["{\"title\": \"Wrapped\"}"]),
    ];
    replies.extend(commands_then_mcp(1, &root));
    replies.extend(commands_then_mcp(2, &root));
    let provider = MockProvider::start(Script::new(replies)).await.unwrap();
    write_config(home.path(), &provider);
    // The commands' pid files must hold host pids, which a command in a PID namespace of its own
    // cannot know: the sandbox runs them in its fallback (Landlock and seccomp, no namespaces).
    let config = home.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("sandbox_isolation = \"fallback\"\n{text}")).unwrap();
    let cwd = root.display().to_string();

    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let session_id = client.new_session(&cwd).await;
    let prompt =
        |text: &str| json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]});
    let (result, _) = client.ok("session/prompt", prompt("Say hello")).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    provider.wait_for_requests(2, TIMEOUT).await;
    // The wrapper's tees are the daemon's own children.
    let tees = tee_pids(home.path());
    assert_eq!(tees.len(), 2, "{tees:?}");
    for tee in &tees {
        let parent = process_status(*tee).map(|(_, parent)| parent).unwrap();
        let exe = std::fs::read_link(format!("/proc/{parent}/exe")).unwrap();
        assert_eq!(exe, openturn_bin(), "a tee's parent is not the daemon");
    }

    for n in [1, 2] {
        let (result, seen) = client
            .ok("session/prompt", prompt(&format!("Run things {n}")))
            .await;
        assert_eq!(
            result["stopReason"],
            "end_turn",
            "{result}\n{}",
            client.context()
        );
        // The bridge shows the daemon's warnings as text too (here, once: the fallback's).
        let text = chunk_text(&updates(&seen, "agent_message_chunk"));
        assert!(text.ends_with(&format!("Done {n}")), "{text}");
        assert_eq!(
            text.matches("Warning: sandbox").count(),
            usize::from(n == 1),
            "{text}"
        );
        for tee in &tees {
            assert!(running(*tee), "a tee of the wrapper died in prompt {n}");
        }
        for name in [format!("bg{n}"), format!("setsid{n}")] {
            let pid = std::fs::read_to_string(root.join(format!("{name}.pid"))).unwrap();
            let pid: u32 = pid.trim().parse().unwrap();
            assert!(!running(pid), "{name} outlived its command");
        }
    }
    // Each MCP call, made after its prompt's commands had ended, reached the server and its
    // answer went back to the model.
    let requests = provider.requests();
    for n in [1, 2] {
        let follow_up = requests
            .iter()
            .map(|r| r.body.to_string())
            .find(|body| {
                body.contains(&format!("call_kb{n}")) && body.contains("function_call_output")
            })
            .unwrap_or_default();
        assert!(
            follow_up.contains(&format!("kb answer {n}")),
            "the MCP call {n} failed: {follow_up}"
        );
    }
    client.shutdown().await;

    let sent = recorded(&home.path().join("bridge-in.jsonl"));
    let answers = recorded(&home.path().join("bridge-out.jsonl"));
    assert!(
        sent.iter().any(|m| m["method"] == "turn/start"),
        "{sent:#?}"
    );
    let completed = answers
        .iter()
        .filter(|m| m["method"] == "turn/completed")
        .count();
    // The three prompts' turns at least (the bridge's title turn may add one).
    assert!(completed >= 3, "{completed} turns logged on the way out");
    assert!(
        answers.iter().all(|m| m.get("error").is_none()),
        "{answers:#?}"
    );
}

/// The bridge's `/plan` switches the session to plan mode through `thread/settings/update`
/// (a collaboration mode, answered and announced with `thread/settings/updated`), and its
/// `/review` runs `review/start` on uncommitted changes in a git repository: the prompt ends
/// with `end_turn`, the reviewer's request starts from a fresh context, and the rendered report
/// reaches the client as text.
#[tokio::test]
async fn the_acp_bridge_plan_and_review_commands_work() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    let answer = r#"{"findings":[],"overall_correctness":"patch is correct","overall_explanation":"BRIDGE-REVIEW: nothing to fix.","overall_confidence_score":0.9}"#;
    let provider = MockProvider::start(Script::new([
        message_reply("r1", "m1", &["first answer"]),
        message_reply("r_title", "m_title", &["{\"title\": \"Review\"}"]),
        message_reply("r_review", "m_review", &[answer]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    for args in [
        vec!["init", "-q", "-b", "main"],
        vec![
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "first",
        ],
    ] {
        let status = std::process::Command::new("git")
            .args(&args)
            .current_dir(project.path())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }
    std::fs::write(project.path().join("new.txt"), "uncommitted\n").unwrap();
    write_config(home.path(), &provider);
    let cwd = project.path().display().to_string();
    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let session_id = client.new_session(&cwd).await;
    let prompt =
        |text: &str| json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]});
    let (result, _) = client.ok("session/prompt", prompt("Say hello")).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    provider.wait_for_requests(2, TIMEOUT).await;

    let (result, _) = client.ok("session/prompt", prompt("/plan")).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let (result, seen) = client.ok("session/prompt", prompt("/review")).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let text = chunk_text(&updates(&seen, "agent_message_chunk"));
    assert!(
        text.contains("BRIDGE-REVIEW: nothing to fix."),
        "{text}\n{seen:#?}"
    );
    // `/plan` again switches back to the default mode.
    let (result, _) = client.ok("session/prompt", prompt("/plan")).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    client.shutdown().await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    let review = requests[2].body["input"].to_string();
    assert!(
        review.contains("How to review this change") && !review.contains("Say hello"),
        "{review}"
    );
    let sent = recorded(&home.path().join("bridge-in.jsonl"));
    let modes: Vec<&Value> = sent
        .iter()
        .filter(|m| m["method"] == "thread/settings/update")
        .map(|m| &m["params"]["collaborationMode"]["mode"])
        .collect();
    assert_eq!(modes, [&json!("plan"), &json!("default")], "{sent:#?}");
    let review_start = sent
        .iter()
        .find(|m| m["method"] == "review/start")
        .expect("the bridge never called review/start");
    assert_eq!(
        review_start["params"]["target"]["type"],
        "uncommittedChanges"
    );
    let answers = answers_without_errors(home.path());
    assert!(
        answers
            .iter()
            .any(|m| m["method"] == "thread/settings/updated"
                && m["params"]["threadSettings"]["collaborationMode"]["mode"] == "plan"),
        "openturn never announced plan mode"
    );
    assert!(
        answers
            .iter()
            .any(|m| m["method"] == "thread/settings/updated"
                && m["params"]["threadSettings"]["collaborationMode"]["mode"] == "default"),
        "openturn never announced the default mode"
    );
}

/// Through the bridge, a search the provider ran and an image the model looked at are tool
/// calls of the ACP session: the search a `search` call titled with its query, both completed,
/// and nothing the bridge answers openturn or the client is an error.
#[tokio::test]
async fn the_acp_bridge_shows_web_searches_and_viewed_images() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    let picture = image::RgbImage::from_pixel(8, 8, image::Rgb([0, 0, 255]));
    picture.save(project.path().join("blue.png")).unwrap();
    let search = json!({"type": "web_search_call", "id": "ws_acp", "status": "completed",
        "action": {"type": "search", "query": "openturn acp", "queries": ["openturn acp"]}});
    let provider = MockProvider::start(Script::new([
        ResponseBuilder::new("r1")
            .created()
            .output_item_added(json!({"type": "web_search_call", "id": "ws_acp",
                "status": "in_progress"}))
            .output_item_done(search)
            .function_call_json(
                "fc_v",
                "call_view",
                "view_image",
                json!({"path": "blue.png"}),
            )
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m2", &["It is blue."]),
        message_reply("r_title", "m_title", &["{\"title\": \"Search\"}"]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    write_config(home.path(), &provider);
    let cwd = project.path().display().to_string();
    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let session_id = client.new_session(&cwd).await;
    let (result, seen) = client
        .ok(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "Look it up"}]}),
        )
        .await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let calls = updates(&seen, "tool_call");
    let searched = calls
        .iter()
        .find(|call| call["toolCallId"] == "ws_acp")
        .unwrap_or_else(|| panic!("no search tool call: {seen:#?}"));
    assert_eq!(searched["kind"], "search", "{searched}");
    assert!(
        calls.iter().any(|call| call["toolCallId"] == "call_view"),
        "no image tool call: {seen:#?}"
    );
    // The bridge shows an image view as one call that is already complete.
    let mut finished = updates(&seen, "tool_call_update");
    finished.extend(calls.iter().copied());
    finished.retain(|update| update["status"] == "completed");
    for id in ["ws_acp", "call_view"] {
        assert!(
            finished.iter().any(|update| update["toolCallId"] == id),
            "{id} never completed: {seen:#?}"
        );
    }
    // The query, unknown when the search started, titles it once it completed.
    assert!(
        finished
            .iter()
            .any(|update| update["toolCallId"] == "ws_acp"
                && update["title"] == "Web search: openturn acp"),
        "{finished:#?}"
    );
    client.shutdown().await;
    answers_without_errors(home.path());
}

/// The bridge's `/mcp reconnect` reloads openturn's MCP configuration and shows the servers as
/// they are after it: a server that failed to start (its config.toml table ran a server that
/// exits at once) and was then fixed in config.toml is started again by
/// `config/mcpServer/reload` and listed as connected with its tools.
#[tokio::test]
async fn the_acp_bridge_mcp_reconnect_restarts_a_fixed_server() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write_config(home.path(), &provider);
    let config = home.path().join("config.toml");
    let working = std::fs::read_to_string(&config).unwrap();
    let script = serde_json::to_string(&support::mcp::server_script()).unwrap();
    let broken = working.replace(
        &format!("args = [{script}]"),
        &format!("args = [{script}, \"exit-now\"]"),
    );
    assert_ne!(broken, working);
    std::fs::write(&config, &broken).unwrap();

    let cwd = project.path().display().to_string();
    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let session_id = client.new_session(&cwd).await;
    let prompt =
        |text: &str| json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]});
    // The failure is recorded in the daemon's output before the fix goes in.
    let out = home.path().join("bridge-out.jsonl");
    let kb_failed = || {
        recorded(&out).iter().any(|m| {
            m["method"] == "mcpServer/startupStatus/updated"
                && m["params"]["name"] == "kb"
                && m["params"]["status"] == "failed"
        })
    };
    assert!(poll_until(kb_failed).await, "kb never failed to start");

    std::fs::write(&config, &working).unwrap();
    let (result, messages) = client.ok("session/prompt", prompt("/mcp reconnect")).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let text = chunk_text(&updates(&messages, "agent_message_chunk"));
    assert!(
        text.contains("Reloaded the MCP configuration"),
        "no reload note: {text}"
    );
    let connected = text
        .split("**Connected**")
        .nth(1)
        .unwrap_or_else(|| panic!("kb not connected: {text}"));
    assert!(
        connected.trim_start().starts_with("- `kb`:") && connected.contains("tools"),
        "{text}"
    );
    assert!(!text.contains("Failed"), "{text}");
    client.shutdown().await;

    let sent = recorded(&home.path().join("bridge-in.jsonl"));
    assert!(
        sent.iter()
            .any(|m| m["method"] == "config/mcpServer/reload"),
        "the bridge never called config/mcpServer/reload"
    );
    let answers = recorded(&out);
    assert!(
        answers.iter().all(|m| m.get("error").is_none()),
        "{answers:#?}"
    );
}
