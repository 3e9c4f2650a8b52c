//! When a command ends, what it started is killed — and nothing else. The daemon's other
//! children live on: a thread's stdio MCP server (its next tool call still works after the
//! command), and the `tee`s a stdio-logging wrapper gave the daemon
//! (`exec openturn "$@" < <(tee in.log) > >(tee out.log)`), without which the daemon loses its
//! stdin and stdout. Where the daemon can create a cgroup per command, even a descendant that
//! clears its environment and leaves its session is found by its cgroup.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::mcp::server_overrides;
use support::*;
use tokio::process::Command;
use turn_support::*;

/// `(state, parent)` of a process from /proc, `None` when it is gone.
fn process_status(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((state, parent))
}

fn running(pid: u32) -> bool {
    process_status(pid).is_some_and(|(state, _)| !matches!(state, 'Z' | 'X'))
}

/// Waits (bounded) until `path` holds `text`; its contents then.
async fn file_containing(path: &Path, text: &str) -> String {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let contents = std::fs::read_to_string(path).unwrap_or_default();
        if contents.contains(text) {
            return contents;
        }
        assert!(
            Instant::now() < deadline,
            "{} never held {text:?}; it holds {contents:?}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn pid_in(path: &Path) -> u32 {
    file_containing(path, "\n").await.trim().parse().unwrap()
}

/// Shell text that starts `sleep 1000` through `prefix`, output discarded, writes its pid to
/// `<name>.pid` in `dir` and waits for the file.
fn start_background(dir: &Path, name: &str, prefix: &str) -> String {
    let pid_file = dir.join(format!("{name}.pid"));
    let pid_file = pid_file.display();
    format!(
        "{prefix}sh -c 'echo $$ > {pid_file}; exec sleep 1000' > /dev/null 2>&1 & \
         while [ ! -s {pid_file} ]; do sleep 0.01; done"
    )
}

fn full_access(dir: &Path) -> Value {
    json!({"approvalPolicy": "never", "sandbox": "danger-full-access",
        "cwd": dir.display().to_string()})
}

/// A function call of `tool` in the MCP namespace of `server`.
fn mcp_call(response: ResponseBuilder, call_id: &str, server: &str, tool: &str) -> ResponseBuilder {
    let item = |arguments: &str| {
        json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
               "name": tool, "namespace": format!("mcp__{server}"), "arguments": arguments})
    };
    response
        .output_item_added(item(""))
        .output_item_done(item(&json!({"text": "still here"}).to_string()))
}

#[tokio::test]
async fn an_mcp_server_still_answers_after_a_command_of_its_thread_ended() {
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    let pids = tempfile::tempdir().unwrap();
    let command = ResponseBuilder::new("r1")
        .created()
        .exec_call(
            "fc_cmd",
            "call_cmd",
            json!({"cmd": start_background(dir, "left", ""), "login": false}),
        )
        .completed(Usage::small(), None)
        .build();
    let tool = ResponseBuilder::new("r2")
        .created()
        .with(|b| mcp_call(b, "call_kb", "kb", "echo"))
        .completed(Usage::small(), None)
        .build();
    let script = Script::new([command, tool, message_reply("r3", "m3", &["done"])]);
    let mut overrides = server_overrides("kb", &[]);
    overrides.push(format!(
        "mcp_servers.kb.env.MCP_TEST_PID_DIR=\"{}\"",
        pids.path().display()
    ));
    let extra: Vec<&str> = overrides.iter().map(String::as_str).collect();
    let mut s = session(script, &extra, full_access(dir)).await;
    loop {
        let status = s
            .daemon
            .notification("mcpServer/startupStatus/updated")
            .await;
        if status["params"]["status"] != "starting" {
            assert_eq!(status["params"]["status"], "ready", "{status}");
            break;
        }
    }

    let turn = s
        .run_turn("run a command, then ask the knowledge base")
        .await;
    single_turn_end(&turn, "completed");
    let command = items_of(&turn, "item/completed", "commandExecution");
    assert_eq!(command[0]["status"], "completed", "{command:#?}");
    // The command's own background process went with it ...
    let left: u32 = std::fs::read_to_string(dir.join("left.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !running(left),
        "the command's background process outlived it"
    );
    // ... and the MCP server did not: its tool call, made after the command ended, succeeded.
    let call = items_of(&turn, "item/completed", "mcpToolCall");
    assert_eq!(call.len(), 1, "{turn:#?}");
    assert_eq!(call[0]["status"], "completed", "{:#}", call[0]);
    assert_eq!(
        call[0]["result"]["content"],
        json!([{"type": "text", "text": "still here"}])
    );
    let server = std::fs::read_dir(pids.path())
        .unwrap()
        .flatten()
        .find_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .unwrap();
    assert!(running(server), "the MCP server died");
    s.daemon.exit_cleanly().await;
}

/// A wrapper that logs the daemon's stdio through two `tee`s, which become the daemon's own
/// children, and writes their pids to `in-tee.pid` and `out-tee.pid` beside the logs.
fn logging_wrapper(dir: &Path) -> PathBuf {
    let script = dir.join("openturn-logged");
    let d = dir.display();
    let text = format!(
        "#!/bin/bash\nexec '{bin}' \"$@\" \
         < <(echo $BASHPID > '{d}/in-tee.pid'; exec tee -a '{d}/in.log') \
         > >(echo $BASHPID > '{d}/out-tee.pid'; exec tee -a '{d}/out.log')\n",
        bin = openturn_bin().display(),
    );
    std::fs::write(&script, text).unwrap();
    script
}

#[tokio::test]
async fn a_daemon_behind_a_stdio_logging_wrapper_keeps_its_tees_through_many_commands() {
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    let logs = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // Two turns of three commands each: a plain one, one that leaves a process in the
    // background and one whose process leaves the session.
    let turn_of = |n: usize| {
        let mut response = ResponseBuilder::new(format!("r{n}")).created();
        let commands = [
            "echo plain".to_string(),
            start_background(dir, &format!("bg{n}"), ""),
            start_background(dir, &format!("setsid{n}"), "setsid "),
        ];
        for (i, cmd) in commands.iter().enumerate() {
            response = response.exec_call(
                &format!("fc_{n}_{i}"),
                &format!("call_{n}_{i}"),
                json!({"cmd": cmd, "login": false}),
            );
        }
        response.completed(Usage::small(), None).build()
    };
    let provider = MockProvider::start(Script::new([
        turn_of(1),
        message_reply("m1", "msg_1", &["first done"]),
        turn_of(2),
        message_reply("m2", "msg_2", &["second done"]),
    ]))
    .await
    .unwrap();
    // Run by bash rather than executed itself: another test of this binary forking while the
    // script's file is still open for writing would make exec fail with "Text file busy".
    let mut command = Command::new("bash");
    command.arg(logging_wrapper(logs.path()));
    for o in mock_overrides(&provider) {
        command.arg("-c").arg(o);
    }
    command
        .arg("app-server")
        .env("OPENTURN_HOME", home.path())
        .env("OPENTURN_TEST_KEY", "sk-test-secret-key")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut daemon = Daemon::from_command(command);
    let daemon_pid = daemon.child.id().unwrap();
    daemon.initialize().await;
    let tees = [
        pid_in(&logs.path().join("in-tee.pid")).await,
        pid_in(&logs.path().join("out-tee.pid")).await,
    ];
    for tee in tees {
        assert_eq!(
            process_status(tee).map(|(_, parent)| parent),
            Some(daemon_pid),
            "the wrapper's tees are the daemon's children"
        );
    }
    let thread_id = daemon.start_thread(full_access(dir)).await;

    for (n, answer) in [(1, "first done"), (2, "second done")] {
        let turn = text_turn(&mut daemon, &thread_id, &format!("turn {n}")).await;
        single_turn_end(&turn, "completed");
        let commands = items_of(&turn, "item/completed", "commandExecution");
        assert_eq!(commands.len(), 3, "{turn:#?}");
        assert!(
            commands.iter().all(|c| c["status"] == "completed"),
            "{commands:#?}"
        );
        assert!(
            joined_deltas(&turn, "item/agentMessage/delta").contains(answer),
            "{turn:#?}"
        );
        for tee in tees {
            assert!(running(tee), "a tee of the wrapper died in turn {n}");
        }
        for name in [format!("bg{n}"), format!("setsid{n}")] {
            let pid = std::fs::read_to_string(dir.join(format!("{name}.pid"))).unwrap();
            let pid: u32 = pid.trim().parse().unwrap();
            assert!(!running(pid), "{name} outlived its command");
        }
    }
    // Both directions went through the tees.
    let sent = file_containing(&logs.path().join("in.log"), "turn 2").await;
    assert!(sent.contains("\"method\":\"turn/start\""), "{sent}");
    file_containing(&logs.path().join("out.log"), "second done").await;
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));
}

/// Whether this test process could create a cgroup v2 beside its own (so a daemon it starts
/// can create one per command).
fn cgroups_work_here() -> Result<(), String> {
    let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
    let own = own
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .ok_or("no cgroup v2 line in /proc/self/cgroup")?
        .to_string();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    let mount = mounts
        .lines()
        .filter(|line| line.contains(" - cgroup2 "))
        .find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.get(3) == Some(&"/")).then(|| fields[4].to_string())
        })
        .ok_or("no cgroup2 mount")?;
    let dir = Path::new(&mount).join(own.trim_start_matches('/'));
    let probe = dir.join(format!("openturn-test-probe-{}", std::process::id()));
    std::fs::create_dir(&probe).map_err(|e| format!("cannot create a cgroup: {e}"))?;
    let killable = probe.join("cgroup.kill").exists();
    let _ = std::fs::remove_dir(&probe);
    if killable {
        Ok(())
    } else {
        Err("no cgroup.kill (Linux before 5.14)".to_string())
    }
}

#[tokio::test]
async fn a_descendant_that_clears_its_environment_and_leaves_its_session_is_killed_through_the_cgroup(
) {
    if let Err(reason) = cgroups_work_here() {
        eprintln!("skipping: {reason}");
        return;
    }
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    let cmd = start_background(dir, "hidden", "setsid env -i ");
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .exec_call("fc_1", "call_1", json!({"cmd": cmd, "login": false}))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m2", &["done"]),
    ]);
    let mut s = session(script, &[], full_access(dir)).await;
    let turn = s.run_turn("hide a process").await;
    single_turn_end(&turn, "completed");
    let pid: u32 = std::fs::read_to_string(dir.join("hidden.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let alive = running(pid);
    if alive {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    assert!(
        !alive,
        "a process without the marker or the group outlived its command"
    );
    s.daemon.exit_cleanly().await;
}
