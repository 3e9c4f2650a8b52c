//! One exec run: read the inputs, serve a connection in-process, initialize, start or resume the
//! thread, run one turn to its end, then close the connection so the server shuts down as it
//! does at EOF (turns ended, rollouts flushed).
//!
//! SIGINT, SIGTERM and SIGHUP reach the in-process server's own shutdown (it interrupts the
//! running turn and records it in the rollout); exec also asks for the interruption itself. Then
//! it ends as the reference's `codex exec` does: no end event for the interrupted turn, exit code
//! 1 after SIGINT, death by the signal itself after SIGTERM or SIGHUP (the reference handles
//! neither). The official TypeScript SDK relies on that: an aborted run (it sends SIGTERM) must
//! end without a `turn.failed`, or `run()` rejects with that event's message instead of its
//! `AbortError`.

use std::future::Future;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::DuplexStream;

use crate::protocol::thread::{ThreadResumeParams, ThreadStartParams};
use crate::server::shutdown::TerminationSignals;

use super::args::ExecArgs;
use super::connection::{Connection, PIPE_CAPACITY};
use super::error::ExecError;
use super::events::{ErrorMessage, ExecEvent};
use super::human::HumanOutput;
use super::inputs::Inputs;
use super::mapping::{EventMapper, TurnOutcome};

/// How long exec keeps reading after it closed the connection, while the server shuts down
/// (its own shutdown is bounded well below this).
const SHUTDOWN_READ_BUDGET: Duration = Duration::from_secs(5);

/// How an exec run ends the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecEnd {
    /// Exit with this code: 0 when the turn completed, 1 when it failed or was interrupted.
    Code(i32),
    /// End by this signal's default action (the signal that interrupted the run), once
    /// everything is flushed: what the parent of the reference sees for SIGTERM and SIGHUP.
    Signal(i32),
}

/// Runs one turn and says how the process ends. `serve` serves one connection over (input,
/// output) byte streams; the binary passes `server::serve` with the loaded configuration.
pub async fn run<S, F, E>(args: ExecArgs, serve: S) -> Result<ExecEnd, ExecError>
where
    S: FnOnce(DuplexStream, DuplexStream) -> F,
    F: Future<Output = Result<(), E>>,
    E: std::fmt::Display,
{
    let inputs = Inputs::read(&args)?;
    let (to_server, server_input) = tokio::io::duplex(PIPE_CAPACITY);
    let (server_output, from_server) = tokio::io::duplex(PIPE_CAPACITY);
    let connection = Connection::new(to_server, from_server);
    let server = serve(server_input, server_output);
    let client = drive(&args, inputs, connection);
    let (server_result, client_result) = tokio::join!(server, client);
    let code = client_result?;
    server_result.map_err(|e| ExecError::Server(e.to_string()))?;
    Ok(code)
}

/// Where events go: JSON lines, or text for a person.
enum Output {
    /// `thread_started` remembers whether `thread.started` was printed: from then on the run
    /// must end with a turn event, even when the turn could not start.
    Json {
        thread_started: bool,
    },
    Human(HumanOutput),
}

impl Output {
    fn events(&mut self, events: &[ExecEvent]) {
        let Output::Json { thread_started } = self else {
            return;
        };
        *thread_started = true;
        let mut stdout = std::io::stdout().lock();
        for event in events {
            if let Ok(line) = serde_json::to_string(event) {
                let _ = writeln!(stdout, "{line}");
            }
        }
        let _ = stdout.flush();
    }
}

async fn drive(
    args: &ExecArgs,
    inputs: Inputs,
    mut connection: Connection,
) -> Result<ExecEnd, ExecError> {
    let started = Instant::now();
    let mut output = if args.json {
        Output::Json {
            thread_started: false,
        }
    } else {
        Output::Human(HumanOutput::new())
    };
    let result = run_turn(args, inputs, &mut connection, &mut output).await;
    connection.close();
    drain_until_closed(&mut connection).await;
    let (mapper, signal) = match result {
        Ok(ran) => ran,
        Err(error) => {
            if let Output::Json {
                thread_started: true,
            } = output
            {
                let message = error.to_string();
                output.events(&[ExecEvent::TurnFailed {
                    error: ErrorMessage { message },
                }]);
            }
            return Err(error);
        }
    };
    let outcome = mapper.outcome.clone().unwrap_or(TurnOutcome::Interrupted);
    if let Output::Human(human) = &mut output {
        human.summary(&outcome, &mapper.usage, started.elapsed());
    }
    if let (Some(path), TurnOutcome::Completed) = (&args.output_last_message, &outcome) {
        write_last_message(path, mapper.last_agent_message.as_deref())?;
    }
    if let Some(signal) = signal {
        return Ok(end_after(signal));
    }
    Ok(ExecEnd::Code(if outcome == TurnOutcome::Completed {
        0
    } else {
        1
    }))
}

/// How the reference's exec ends after `signal`: exit code 1 after SIGINT (it handles Ctrl-C),
/// the signal's own death otherwise.
fn end_after(signal: &str) -> ExecEnd {
    #[cfg(unix)]
    {
        match signal {
            "SIGTERM" => return ExecEnd::Signal(libc::SIGTERM),
            "SIGHUP" => return ExecEnd::Signal(libc::SIGHUP),
            _ => {}
        }
    }
    let _ = signal;
    ExecEnd::Code(1)
}

async fn drain_until_closed(connection: &mut Connection) {
    let drain = async { while let Ok(Some(_)) = connection.next_message().await {} };
    let _ = tokio::time::timeout(SHUTDOWN_READ_BUDGET, drain).await;
}

fn write_last_message(path: &Path, message: Option<&str>) -> Result<(), ExecError> {
    let Some(message) = message else {
        eprintln!(
            "openturn exec: no agent message to write into {}",
            path.display()
        );
        return Ok(());
    };
    std::fs::write(path, message).map_err(|source| ExecError::WriteOutput {
        path: path.to_path_buf(),
        source,
    })
}

/// Initialize, open the thread, run the turn; returns the mapper holding the outcome, and the
/// signal that interrupted the turn, if one did.
async fn run_turn(
    args: &ExecArgs,
    inputs: Inputs,
    connection: &mut Connection,
    output: &mut Output,
) -> Result<(EventMapper, Option<&'static str>), ExecError> {
    // Listen before anything can take long, so a signal is never the process's default death.
    let mut signals = TerminationSignals::new();
    connection
        .request(
            "initialize",
            json!({"clientInfo": {"name": "openturn_exec", "version": env!("CARGO_PKG_VERSION")}}),
        )
        .await?;
    connection
        .send(&json!({"jsonrpc": "2.0", "method": "initialized"}))
        .await?;
    let thread = open_thread(args, &inputs, connection).await?;
    let thread_id = thread["thread"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut mapper = EventMapper::new(args.stream);
    match output {
        Output::Json { .. } => output.events(&[ExecEvent::ThreadStarted {
            thread_id: thread_id.clone(),
        }]),
        Output::Human(human) => human.thread_started(
            &thread_id,
            thread["model"].as_str().unwrap_or_default(),
            thread["modelProvider"].as_str().unwrap_or_default(),
            args.resume_thread_id().is_some(),
        ),
    }
    let turn = connection
        .request("turn/start", turn_start_params(&thread_id, &inputs))
        .await?;
    let turn_id = turn["turn"]["id"].as_str().unwrap_or_default().to_string();
    let mut interrupted_by = None;
    loop {
        let message = tokio::select! {
            message = connection.next_message() => message?,
            signal = signals.recv(), if interrupted_by.is_none() => {
                interrupted_by = Some(signal);
                eprintln!("openturn exec: {signal}: interrupting the turn");
                let params = json!({"threadId": thread_id, "turnId": turn_id});
                // The in-process server saw the signal too and may already be shutting down;
                // either way the turn ends as interrupted.
                let _ = connection.send_request("turn/interrupt", params).await;
                continue;
            }
        };
        let Some(message) = message else {
            return Err(ExecError::ServerGone);
        };
        let signalled = interrupted_by.is_some();
        handle_message(connection, &mut mapper, output, &message, signalled).await?;
        if mapper.outcome.is_some() {
            return Ok((mapper, interrupted_by));
        }
    }
}

async fn open_thread(
    args: &ExecArgs,
    inputs: &Inputs,
    connection: &mut Connection,
) -> Result<Value, ExecError> {
    let overrides = ThreadStartParams {
        model: args.model.clone(),
        cwd: Some(inputs.cwd.display().to_string()),
        sandbox: inputs.sandbox,
        approval_policy: inputs.approval_policy,
        ephemeral: args.ephemeral.then_some(true),
        ..ThreadStartParams::default()
    };
    let to_value = |params: Result<Value, serde_json::Error>| {
        params.map_err(|e| ExecError::Protocol(e.to_string()))
    };
    match args.resume_thread_id() {
        Some(thread_id) => {
            let params = to_value(serde_json::to_value(ThreadResumeParams {
                thread_id: thread_id.to_string(),
                overrides,
                exclude_turns: true,
                turns_limit: None,
            }))?;
            connection.request("thread/resume", params).await
        }
        None => {
            let params = to_value(serde_json::to_value(overrides))?;
            connection.request("thread/start", params).await
        }
    }
}

fn turn_start_params(thread_id: &str, inputs: &Inputs) -> Value {
    let mut input = vec![json!({"type": "text", "text": inputs.prompt})];
    input.extend(
        inputs
            .images
            .iter()
            .map(|path| json!({"type": "localImage", "path": path.display().to_string()})),
    );
    let mut params = json!({"threadId": thread_id, "input": input});
    if let Some(schema) = &inputs.output_schema {
        params["outputSchema"] = schema.clone();
    }
    params
}

/// Prints what `message` means. After a signal (`signalled`), the interrupted turn's end is
/// not printed: the run just stops, as the reference's does.
async fn handle_message(
    connection: &mut Connection,
    mapper: &mut EventMapper,
    output: &mut Output,
    message: &Value,
    signalled: bool,
) -> Result<(), ExecError> {
    let Some(method) = message["method"].as_str() else {
        return Ok(()); // A response (to turn/interrupt); nothing waits for it.
    };
    if let Some(id) = message.get("id") {
        return answer_server_request(connection, id, method, &message["params"]).await;
    }
    let params = &message["params"];
    if let Output::Human(human) = output {
        human.notification(method, params);
    }
    let mut events = mapper.map(method, params);
    if signalled && mapper.outcome == Some(TurnOutcome::Interrupted) {
        events.retain(|event| !matches!(event, ExecEvent::TurnFailed { .. }));
    }
    output.events(&events);
    Ok(())
}

/// Nobody can be asked headless: approvals are declined, and stderr says which and why (the
/// item then completes with status `declined`). A question for the user gets an error saying no
/// user is there, which the model reads as its tool output; other requests get a JSON-RPC error.
async fn answer_server_request(
    connection: &mut Connection,
    id: &Value,
    method: &str,
    params: &Value,
) -> Result<(), ExecError> {
    let reply = if method.ends_with("requestApproval") {
        let what = params["command"].as_str().unwrap_or(method);
        eprintln!(
            "openturn exec: declined `{what}`: approval cannot be asked headless. Set \
             -c approval_policy=\"never\" (or --sandbox danger-full-access) to let it run."
        );
        json!({"jsonrpc": "2.0", "id": id, "result": {"decision": "decline"}})
    } else if method == "item/tool/requestUserInput" {
        json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32000,
            "message": "no user is available to answer: openturn exec runs without one",
        }})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32601,
            "message": format!("openturn exec cannot answer `{method}`"),
        }})
    };
    connection.send(&reply).await
}
