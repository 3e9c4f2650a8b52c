//! Tools the model can call: what we offer in the request (`tools`), how a complete call item is
//! routed, and the output that goes back to the model. One file per tool.
//!
//! A call that cannot run (unknown tool, bad arguments) is answered at once with a synthetic
//! output, so the model learns why and the history never holds a call without its output.

pub(crate) mod agents;
pub(crate) mod apply_patch;
pub(crate) mod client_tool;
pub(crate) mod goal;
pub(crate) mod handle;
pub(crate) mod head_tail;
pub(crate) mod mcp;
pub(crate) mod output;
pub(crate) mod process;
pub(crate) mod request_user_input;
pub(crate) mod shell;
pub(crate) mod tool_search;
pub(crate) mod unified_exec;
pub(crate) mod update_plan;
pub(crate) mod view_image;
pub(crate) mod web_search;
pub(crate) mod write_stdin;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::wire::ResponseItem;

use super::approval::ClientToolCall;
use super::ids::ItemId;
use super::settings::ThreadSettings;
use handle::TurnHandle;

pub(crate) use output::ToolOutput;

/// A call that will run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ToolCall {
    Shell {
        call_id: ItemId,
        args: shell::ShellArgs,
    },
    Client(ClientToolCall),
    UpdatePlan {
        call_id: ItemId,
        args: update_plan::UpdatePlanArgs,
    },
    RequestUserInput {
        call_id: ItemId,
        args: request_user_input::RequestUserInputArgs,
    },
    ApplyPatch {
        call_id: ItemId,
        /// Called as the freeform tool (answered with a custom tool output).
        custom: bool,
        input: String,
        /// The directory the patch's paths are relative to, for a patch sent as a shell command
        /// (its `workdir` and `cd`); the thread's cwd when `None`.
        dir: Option<PathBuf>,
    },
    /// A tool of an MCP server, or a resource helper.
    Mcp(mcp::McpCall),
    WriteStdin {
        call_id: ItemId,
        args: write_stdin::WriteStdinArgs,
    },
    /// `get_goal`, `create_goal` or `update_goal`.
    Goal {
        call_id: ItemId,
        call: goal::GoalCall,
    },
    ViewImage {
        call_id: ItemId,
        args: view_image::ViewImageArgs,
    },
    /// A sub-agent tool (`multi_agent_v1`).
    Agents(agents::RoutedAgentCall),
}

impl ToolCall {
    pub(crate) fn call_id(&self) -> &ItemId {
        match self {
            ToolCall::Shell { call_id, .. }
            | ToolCall::UpdatePlan { call_id, .. }
            | ToolCall::RequestUserInput { call_id, .. }
            | ToolCall::WriteStdin { call_id, .. }
            | ToolCall::Goal { call_id, .. }
            | ToolCall::ViewImage { call_id, .. } => call_id,
            ToolCall::Client(call) => &call.call_id,
            ToolCall::ApplyPatch { call_id, .. } => call_id,
            ToolCall::Mcp(call) => &call.call_id,
            ToolCall::Agents(call) => &call.call_id,
        }
    }
}

/// How a complete output item is handled.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Routed {
    Run(ToolCall),
    /// A call that cannot run; this output goes to the model instead.
    Refused(ToolOutput),
    NotATool,
}

/// The tool definitions offered to the model on every request: the model's tool set
/// (`core/tool_set.rs` decides it, by name), then the client's dynamic tools.
pub(crate) fn tool_specs(settings: &ThreadSettings) -> Vec<Value> {
    let names = settings.model_catalog.tool_names(&settings.model);
    let mut specs: Vec<Value> = names
        .iter()
        .filter_map(|name| spec_of(name, settings))
        .collect();
    let deferring = names.iter().any(|name| name == tool_search::TOOL_NAME);
    for tool in &settings.dynamic_tools {
        if tool.defer_loading && deferring {
            continue;
        }
        specs.push(json!({
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "strict": false,
            "parameters": tool.input_schema,
        }));
    }
    specs
}

/// How the tool called `name` is described to the model; `None` for a name no tool here
/// provides (a set may name tools a later build adds).
fn spec_of(name: &str, settings: &ThreadSettings) -> Option<Value> {
    let spec = match name {
        shell::TOOL_NAME => shell::spec(),
        update_plan::TOOL_NAME => update_plan::spec(),
        request_user_input::TOOL_NAME => request_user_input::spec(),
        apply_patch::tool::TOOL_NAME => {
            apply_patch::tool::spec(settings.model_catalog.apply_patch_form(&settings.model))
        }
        write_stdin::TOOL_NAME => write_stdin::spec(),
        goal::GET_GOAL | goal::CREATE_GOAL | goal::UPDATE_GOAL => goal::specs()
            .into_iter()
            .find(|spec| spec["name"] == name)?,
        view_image::TOOL_NAME => view_image::spec(),
        web_search::TOOL_NAME => web_search::spec(settings),
        tool_search::TOOL_NAME => tool_search::spec(),
        agents::TOOL_NAME => agents::spec(),
        _ => return None,
    };
    Some(spec)
}

pub(crate) fn route(item: &ResponseItem, settings: &ThreadSettings) -> Routed {
    if let ResponseItem::FunctionCall {
        call_id,
        name,
        namespace,
        arguments,
        ..
    } = item
    {
        if let Some(parsed) = agents::parse(name, namespace.as_deref(), arguments, settings) {
            let call_id = ItemId::from(call_id.clone());
            return match parsed {
                Ok(call) => {
                    Routed::Run(ToolCall::Agents(agents::RoutedAgentCall { call_id, call }))
                }
                Err(text) => Routed::Refused(ToolOutput {
                    call_id,
                    custom: false,
                    text,
                }),
            };
        }
    }
    match item {
        ResponseItem::FunctionCall {
            call_id,
            name,
            namespace,
            arguments,
            ..
        } => match mcp::route(call_id, name, namespace.as_deref(), arguments, settings) {
            Some(Ok(call)) => Routed::Run(ToolCall::Mcp(call)),
            Some(Err(text)) => Routed::Refused(ToolOutput {
                call_id: ItemId::from(call_id.clone()),
                custom: false,
                text,
            }),
            None => route_function_call(call_id, name, arguments, settings),
        },
        ResponseItem::CustomToolCall {
            call_id,
            name,
            input,
            ..
        } if name == apply_patch::tool::TOOL_NAME => Routed::Run(ToolCall::ApplyPatch {
            call_id: ItemId::from(call_id.clone()),
            custom: true,
            input: input.clone(),
            dir: None,
        }),
        ResponseItem::CustomToolCall { call_id, name, .. } => Routed::Refused(ToolOutput {
            call_id: ItemId::from(call_id.clone()),
            custom: true,
            text: format!("unsupported custom tool call: {name}"),
        }),
        _ => Routed::NotATool,
    }
}

fn route_function_call(
    call_id: &str,
    name: &str,
    arguments: &str,
    settings: &ThreadSettings,
) -> Routed {
    let refuse = |text: String| {
        Routed::Refused(ToolOutput {
            call_id: ItemId::from(call_id),
            custom: false,
            text,
        })
    };
    // A model may call a tool it was trained on but not offered (answered as usual), but never
    // one the configuration turned off.
    if settings.model_catalog.tool_config().switches.get(name) == Some(&false) {
        return refuse(format!("unsupported call: {name}"));
    }
    if name == shell::TOOL_NAME {
        return match serde_json::from_str::<shell::ShellArgs>(arguments) {
            // An `apply_patch` heredoc is applied as a patch, never run as a process.
            Ok(args) => match apply_patch::heredoc::shell_patch(&args.cmd) {
                Some(found) => {
                    let dir = match (&args.workdir, found.dir) {
                        (Some(workdir), Some(cd)) => Some(Path::new(workdir).join(cd)),
                        (Some(workdir), None) => Some(PathBuf::from(workdir)),
                        (None, cd) => cd.map(PathBuf::from),
                    };
                    Routed::Run(ToolCall::ApplyPatch {
                        call_id: ItemId::from(call_id),
                        custom: false,
                        input: found.patch,
                        dir,
                    })
                }
                None => Routed::Run(ToolCall::Shell {
                    call_id: ItemId::from(call_id),
                    args,
                }),
            },
            Err(error) => refuse(format!("failed to parse function arguments: {error}")),
        };
    }
    if name == write_stdin::TOOL_NAME {
        return match serde_json::from_str::<write_stdin::WriteStdinArgs>(arguments) {
            Ok(args) => Routed::Run(ToolCall::WriteStdin {
                call_id: ItemId::from(call_id),
                args,
            }),
            Err(error) => refuse(format!("failed to parse function arguments: {error}")),
        };
    }
    if name == update_plan::TOOL_NAME {
        return match serde_json::from_str::<update_plan::UpdatePlanArgs>(arguments) {
            Ok(args) => match args.check() {
                Ok(()) => Routed::Run(ToolCall::UpdatePlan {
                    call_id: ItemId::from(call_id),
                    args,
                }),
                Err(error) => refuse(error),
            },
            Err(error) => refuse(format!("failed to parse function arguments: {error}")),
        };
    }
    if name == request_user_input::TOOL_NAME {
        return match serde_json::from_str::<request_user_input::RequestUserInputArgs>(arguments) {
            Ok(args) => match args.check() {
                Ok(()) => Routed::Run(ToolCall::RequestUserInput {
                    call_id: ItemId::from(call_id),
                    args,
                }),
                Err(error) => refuse(error),
            },
            Err(error) => refuse(format!("failed to parse function arguments: {error}")),
        };
    }
    if let Some(parsed) = goal::parse(name, arguments) {
        return match parsed {
            Ok(call) => Routed::Run(ToolCall::Goal {
                call_id: ItemId::from(call_id),
                call,
            }),
            Err(error) => refuse(error),
        };
    }
    if name == view_image::TOOL_NAME {
        return match serde_json::from_str::<view_image::ViewImageArgs>(arguments) {
            Ok(args) => Routed::Run(ToolCall::ViewImage {
                call_id: ItemId::from(call_id),
                args,
            }),
            Err(error) => refuse(format!("failed to parse function arguments: {error}")),
        };
    }
    if name == apply_patch::tool::TOOL_NAME {
        return match serde_json::from_str::<apply_patch::tool::FunctionArgs>(arguments) {
            Ok(args) => Routed::Run(ToolCall::ApplyPatch {
                call_id: ItemId::from(call_id),
                custom: false,
                input: args.input,
                dir: None,
            }),
            Err(error) => refuse(format!("failed to parse function arguments: {error}")),
        };
    }
    let Some(tool) = settings.dynamic_tools.iter().find(|tool| tool.name == name) else {
        return refuse(format!("unsupported call: {name}"));
    };
    let arguments = if arguments.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        match serde_json::from_str(arguments) {
            Ok(value) => value,
            Err(error) => return refuse(format!("failed to parse function arguments: {error}")),
        }
    };
    Routed::Run(ToolCall::Client(ClientToolCall {
        call_id: ItemId::from(call_id),
        namespace: tool.namespace.clone(),
        tool: tool.name.clone(),
        arguments,
    }))
}

/// Runs a call to its output. `None` when the turn was cancelled before an answer existed.
pub(crate) async fn run(turn: TurnHandle, call: ToolCall) -> Option<ToolOutput> {
    match call {
        ToolCall::Shell { call_id, args } => shell::run(&turn, call_id, args).await,
        ToolCall::Client(call) => client_tool::run(&turn, call).await,
        ToolCall::UpdatePlan { call_id, args } => {
            Some(update_plan::run(&turn, call_id, args).await)
        }
        ToolCall::RequestUserInput { call_id, args } => {
            request_user_input::run(&turn, call_id, args).await
        }
        ToolCall::ApplyPatch {
            call_id,
            custom,
            input,
            dir,
        } => apply_patch::tool::run(&turn, call_id, custom, &input, dir.as_deref()).await,
        ToolCall::Mcp(call) => mcp::run(&turn, call).await,
        ToolCall::WriteStdin { call_id, args } => write_stdin::run(&turn, call_id, args).await,
        ToolCall::Goal { call_id, call } => Some(goal::run(&turn, call_id, call).await),
        ToolCall::ViewImage { call_id, args } => Some(view_image::run(&turn, call_id, args).await),
        ToolCall::Agents(call) => agents::run(&turn, call).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::settings::DynamicToolSpec;

    fn settings() -> ThreadSettings {
        ThreadSettings {
            dynamic_tools: vec![DynamicToolSpec {
                name: "lookup_ticket".into(),
                namespace: None,
                description: "d".into(),
                input_schema: json!({"type": "object"}),
                defer_loading: false,
            }],
            ..ThreadSettings::for_tests()
        }
    }

    fn call(name: &str, arguments: &str) -> ResponseItem {
        ResponseItem::FunctionCall {
            id: None,
            call_id: "c1".into(),
            name: name.into(),
            namespace: None,
            arguments: arguments.into(),
        }
    }

    #[test]
    fn calls_route_to_their_tool_or_get_a_synthetic_output() {
        let settings = settings();
        assert!(matches!(
            route(&call("exec_command", r#"{"cmd":"ls"}"#), &settings),
            Routed::Run(ToolCall::Shell { .. })
        ));
        assert!(matches!(
            route(&call("lookup_ticket", r#"{"id":"A"}"#), &settings),
            Routed::Run(ToolCall::Client(ClientToolCall { ref tool, .. })) if tool == "lookup_ticket"
        ));
        match route(&call("nope", "{}"), &settings) {
            Routed::Refused(output) => {
                assert_eq!(output.call_id, "c1");
                assert_eq!(output.text, "unsupported call: nope");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            route(&call("exec_command", "{not json"), &settings),
            Routed::Refused(_)
        ));
        assert_eq!(
            route(&ResponseItem::user_text("x"), &settings),
            Routed::NotATool
        );
        // A generic model's set (names no tool here provides are skipped), then the client's.
        let settings = ThreadSettings {
            model: "local-llm".into(),
            ..settings
        };
        let names: Vec<Value> = tool_specs(&settings)
            .iter()
            .map(|spec| spec["name"].clone())
            .collect();
        assert_eq!(
            names,
            vec![
                json!("exec_command"),
                json!("write_stdin"),
                json!("update_plan"),
                json!("request_user_input"),
                json!("apply_patch"),
                json!("view_image"),
                json!("get_goal"),
                json!("create_goal"),
                json!("update_goal"),
                json!("lookup_ticket")
            ]
        );
    }

    #[test]
    fn a_tool_the_configuration_turned_off_is_refused_even_when_called() {
        use crate::core::models::ModelCatalog;
        use crate::core::tool_set::ToolConfig;
        let catalog = ModelCatalog::default().with_tool_config(ToolConfig {
            switches: std::collections::BTreeMap::from([("view_image".to_string(), false)]),
            ..ToolConfig::default()
        });
        let off = ThreadSettings {
            model_catalog: std::sync::Arc::new(catalog),
            ..settings()
        };
        let view = call("view_image", r#"{"path":"a.png"}"#);
        assert!(matches!(
            route(&view, &settings()),
            Routed::Run(ToolCall::ViewImage { .. })
        ));
        match route(&view, &off) {
            Routed::Refused(output) => assert_eq!(output.text, "unsupported call: view_image"),
            other => panic!("unexpected {other:?}"),
        }
        assert!(!tool_specs(&off)
            .iter()
            .any(|spec| spec["name"] == "view_image"));
    }

    #[test]
    fn questions_outside_one_to_three_and_unknown_plan_statuses_are_refused_with_the_reason() {
        let settings = settings();
        let question = json!({"id": "a", "header": "h", "question": "q?", "options": []});
        let refused = |arguments: Value, name: &str| match route(
            &call(name, &arguments.to_string()),
            &settings,
        ) {
            Routed::Refused(output) => output.text,
            other => panic!("unexpected {other:?}"),
        };
        assert!(refused(json!({"questions": []}), "request_user_input").contains("at least one"));
        let four = json!({"questions": [question, question, question, question]});
        assert!(refused(four, "request_user_input").contains("at most 3"));
        let bad_status = json!({"plan": [{"step": "s", "status": "done"}]});
        assert!(refused(bad_status, "update_plan").contains("failed to parse"));
        assert!(matches!(
            route(
                &call(
                    "request_user_input",
                    &json!({"questions": [question]}).to_string()
                ),
                &settings
            ),
            Routed::Run(ToolCall::RequestUserInput { .. })
        ));
    }
}
