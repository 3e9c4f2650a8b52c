//! `tool_search`: the hosted-style tool through which a model finds the MCP servers' tools that
//! are not offered up front. When a model's set holds it, the servers' tools are deferred (left
//! out of the request's `tools`); the model sends a `tool_search_call` (`execution: "client"`)
//! with a query, and openturn answers with a `tool_search_output` listing the best matches as
//! namespaces of functions. The provider makes those callable from then on, because the output
//! stays in the history that every later request replays; a call of a found tool routes like
//! any MCP call. The client is shown no item for a search (the call and its output live in the
//! history and the rollout only).
//!
//! The client's dynamic tools marked `deferLoading` are deferred and found the same way, under
//! their own namespace.
//!
//! Matches are ranked with BM25 over each tool's server, name, title, description and
//! parameter names; a tool sharing no word with the query is never returned. Arguments that do
//! not parse (no `query`, not an object) get an empty list, so the model still hears back.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::mcp::{McpServers, McpTool};
use crate::wire::ResponseItem;

use super::super::settings::ThreadSettings;

pub(crate) const TOOL_NAME: &str = "tool_search";
const CALL_TYPE: &str = "tool_search_call";
const OUTPUT_TYPE: &str = "tool_search_output";
/// How many tools a search returns when the model gives no `limit`.
const DEFAULT_LIMIT: usize = 8;
/// BM25's term-frequency saturation and length normalisation, the usual values.
const K1: f64 = 1.2;
const B: f64 = 0.75;

pub(crate) fn spec() -> Value {
    json!({
        "type": TOOL_NAME,
        "execution": "client",
        "description": "Find tools that were not offered up front. The tools of the connected MCP servers are deferred: search them by what you need done (words of their names, descriptions or parameters); the tools found can be called from your next step on, under the namespace they are listed in.",
        "parameters": {
            "type": "object",
            "properties": {
                "limit": {"type": "number", "description": "How many tools to return at most; 8 when omitted."},
                "query": {"type": "string", "description": "Words describing the tool you need."},
            },
            "required": ["query"],
            "additionalProperties": false,
        },
    })
}

/// Whether `settings`' model is offered `tool_search`, and so the MCP servers' tools are
/// deferred to it instead of listed in every request.
pub(crate) fn defers_mcp_tools(settings: &ThreadSettings) -> bool {
    settings
        .model_catalog
        .tool_names(&settings.model)
        .iter()
        .any(|name| name == TOOL_NAME)
}

/// The `call_id` of a `tool_search_call` item; `None` for any other item. The item stays an
/// unmodelled wire item so it is replayed exactly as the provider sent it.
pub(crate) fn call_id(item: &ResponseItem) -> Option<&str> {
    match item {
        ResponseItem::Other(value)
            if value.get("type").and_then(Value::as_str) == Some(CALL_TYPE) =>
        {
            value.get("call_id").and_then(Value::as_str)
        }
        _ => None,
    }
}

#[derive(Debug, Deserialize)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    limit: Option<f64>,
}

/// The `tool_search_output` answering `call`: the deferred tools (ready MCP servers' tools,
/// then the client's deferred dynamic tools) that best match its query, or none when searching
/// is switched off or the arguments do not parse.
pub(crate) fn answer(
    call: &ResponseItem,
    servers: Option<&McpServers>,
    settings: &ThreadSettings,
) -> ResponseItem {
    let call_id = call_id(call).unwrap_or_default().to_string();
    let arguments = match call {
        ResponseItem::Other(value) => value.get("arguments").cloned(),
        _ => None,
    };
    let switched_off = settings.model_catalog.tool_config().switches.get(TOOL_NAME) == Some(&false);
    let found = match arguments.map(serde_json::from_value::<SearchArgs>) {
        Some(Ok(args)) if !switched_off => {
            let limit = args
                .limit
                .filter(|limit| limit.is_finite() && *limit >= 0.0)
                .map_or(DEFAULT_LIMIT, |limit| limit as usize);
            let mut deferred = servers
                .map(|servers| mcp_candidates(&servers.ready_tools()))
                .unwrap_or_default();
            deferred.extend(dynamic_candidates(settings));
            search(&deferred, &args.query, limit)
        }
        _ => Vec::new(),
    };
    ResponseItem::Other(json!({
        "type": OUTPUT_TYPE,
        "call_id": call_id,
        "status": "completed",
        "execution": "client",
        "tools": found,
    }))
}

/// A deferred tool a search may return: the namespace it is listed in, its description as a
/// found function, and the text it is matched by.
struct Candidate {
    namespace: String,
    namespace_description: String,
    spec: Value,
    text: String,
}

fn mcp_candidates(servers: &[(String, Vec<McpTool>)]) -> Vec<Candidate> {
    servers
        .iter()
        .flat_map(|(server, tools)| {
            tools.iter().map(move |tool| {
                let namespace = super::mcp::namespace_spec(server, Vec::new());
                Candidate {
                    namespace: namespace["name"].as_str().unwrap_or_default().to_string(),
                    namespace_description: namespace["description"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    spec: super::mcp::deferred_function_spec(tool),
                    text: mcp_text(server, tool),
                }
            })
        })
        .collect()
}

/// The client's tools marked `deferLoading` (each inside a namespace, `thread/start` saw to it).
fn dynamic_candidates(settings: &ThreadSettings) -> Vec<Candidate> {
    settings
        .dynamic_tools
        .iter()
        .filter(|tool| tool.defer_loading)
        .filter_map(|tool| {
            let namespace = tool.namespace.clone()?;
            let mut text = format!("{namespace} {} {}", tool.name, tool.description);
            push_parameters(&mut text, &tool.input_schema);
            Some(Candidate {
                namespace_description: format!("Tools in the `{namespace}` namespace."),
                namespace,
                spec: json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "strict": false,
                    "defer_loading": true,
                    "parameters": tool.input_schema,
                }),
                text,
            })
        })
        .collect()
}

/// The best `limit` matches of `query` among `candidates`, as namespaces (in the order of each
/// namespace's best match) of deferred functions.
fn search(candidates: &[Candidate], query: &str, limit: usize) -> Vec<Value> {
    let documents: Vec<Vec<String>> = candidates.iter().map(|c| words(&c.text)).collect();
    let ranked = rank(
        &documents.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        &words(query),
    );
    let mut namespaces: Vec<(&Candidate, Vec<Value>)> = Vec::new();
    for index in ranked.into_iter().take(limit) {
        let found = &candidates[index];
        match namespaces
            .iter_mut()
            .find(|(first, _)| first.namespace == found.namespace)
        {
            Some((_, tools)) => tools.push(found.spec.clone()),
            None => namespaces.push((found, vec![found.spec.clone()])),
        }
    }
    namespaces
        .into_iter()
        .map(|(first, tools)| {
            json!({
                "type": "namespace",
                "name": first.namespace,
                "description": first.namespace_description,
                "tools": tools,
            })
        })
        .collect()
}

/// Everything a search may match an MCP tool by.
fn mcp_text(server: &str, tool: &McpTool) -> String {
    let mut text = format!("{server} {}", tool.name);
    for field in ["title", "description"] {
        if let Some(value) = tool.listing.get(field).and_then(Value::as_str) {
            text.push(' ');
            text.push_str(value);
        }
    }
    if tool.listing.get("description").is_none() {
        if let Some(description) = &tool.description {
            text.push(' ');
            text.push_str(description);
        }
    }
    push_parameters(&mut text, &tool.input_schema);
    text
}

/// Appends the names and descriptions of a schema's top-level parameters.
fn push_parameters(text: &mut String, schema: &Value) {
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            text.push(' ');
            text.push_str(name);
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                text.push(' ');
                text.push_str(description);
            }
        }
    }
}

/// Lower-case words: runs of letters and digits (so `read_file` is `read` and `file`).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The indexes of `documents` sharing a word with `query`, best BM25 score first (ties keep the
/// documents' order).
fn rank(documents: &[&[String]], query: &[String]) -> Vec<usize> {
    let count = documents.len() as f64;
    if documents.is_empty() {
        return Vec::new();
    }
    let average_length = documents.iter().map(|words| words.len()).sum::<usize>() as f64 / count;
    let mut terms: Vec<&String> = query.iter().collect();
    terms.sort();
    terms.dedup();
    let document_frequency: HashMap<&String, f64> = terms
        .iter()
        .map(|term| {
            let holding = documents
                .iter()
                .filter(|words| words.contains(term))
                .count();
            (*term, holding as f64)
        })
        .collect();
    let mut scored: Vec<(usize, f64)> = documents
        .iter()
        .enumerate()
        .filter_map(|(index, words)| {
            let length = words.len() as f64;
            let score: f64 = terms
                .iter()
                .map(|term| {
                    let frequency = words.iter().filter(|word| word == term).count() as f64;
                    if frequency == 0.0 {
                        return 0.0;
                    }
                    let holding = document_frequency.get(term).copied().unwrap_or(0.0);
                    let idf = (1.0 + (count - holding + 0.5) / (holding + 0.5)).ln();
                    let norm = K1 * (1.0 - B + B * length / average_length.max(1.0));
                    idf * frequency * (K1 + 1.0) / (frequency + norm)
                })
                .sum();
            (score > 0.0).then_some((index, score))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(index, _)| index).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str, properties: Value) -> McpTool {
        McpTool {
            name: name.into(),
            description: Some(description.into()),
            input_schema: json!({"type": "object", "properties": properties}),
            listing: json!({"name": name, "description": description}),
            read_only: false,
        }
    }

    fn servers() -> Vec<(String, Vec<McpTool>)> {
        vec![
            (
                "docs".into(),
                vec![
                    tool(
                        "search_pages",
                        "Search the wiki pages.",
                        json!({"query": {}}),
                    ),
                    tool("read_page", "Read one wiki page.", json!({"id": {}})),
                ],
            ),
            (
                "math".into(),
                vec![tool("add", "Add two integers.", json!({"a": {}, "b": {}}))],
            ),
        ]
    }

    fn names(found: &[Value]) -> Vec<String> {
        found
            .iter()
            .flat_map(|namespace| {
                let server = namespace["name"].as_str().unwrap_or_default().to_string();
                namespace["tools"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .map(move |tool| format!("{server}.{}", tool["name"].as_str().unwrap_or("")))
            })
            .collect()
    }

    #[test]
    fn the_best_matches_come_first_grouped_by_server_and_unrelated_tools_never() {
        let found = search(&mcp_candidates(&servers()), "read the wiki page", 8);
        assert_eq!(
            names(&found),
            ["mcp__docs.read_page", "mcp__docs.search_pages"]
        );
        assert_eq!(found[0]["type"], "namespace");
        assert_eq!(found[0]["tools"][0]["defer_loading"], true);
        assert_eq!(
            names(&search(&mcp_candidates(&servers()), "add integers", 8)),
            ["mcp__math.add"]
        );
        assert!(search(&mcp_candidates(&servers()), "zzz", 8).is_empty());
    }

    #[test]
    fn the_limit_bounds_the_tools_returned() {
        assert_eq!(
            names(&search(&mcp_candidates(&servers()), "wiki", 1)),
            ["mcp__docs.search_pages"]
        );
        assert!(search(&mcp_candidates(&servers()), "wiki", 0).is_empty());
    }

    #[test]
    fn the_clients_deferred_tools_are_found_in_their_namespace() {
        use crate::core::settings::DynamicToolSpec;
        let tool = |name: &str, defer_loading| DynamicToolSpec {
            name: name.into(),
            namespace: Some("tickets".into()),
            description: format!("{name} a support ticket"),
            input_schema: json!({"type": "object", "properties": {"id": {"type": "string"}}}),
            defer_loading,
        };
        let settings = ThreadSettings {
            dynamic_tools: vec![tool("close", true), tool("open", false)],
            ..ThreadSettings::for_tests()
        };
        let call = ResponseItem::Other(json!({"type": "tool_search_call", "call_id": "c1",
            "arguments": {"query": "ticket"}}));
        let ResponseItem::Other(output) = answer(&call, None, &settings) else {
            panic!("not an output item");
        };
        // Only the deferred one: the other is offered up front.
        assert_eq!(
            names(output["tools"].as_array().unwrap()),
            ["tickets.close"]
        );
        assert_eq!(output["tools"][0]["tools"][0]["defer_loading"], true);
    }

    #[test]
    fn only_tool_search_calls_are_recognised() {
        let call = ResponseItem::Other(json!({"type": "tool_search_call", "call_id": "c1",
            "execution": "client", "arguments": {"query": "x"}}));
        assert_eq!(call_id(&call), Some("c1"));
        let other = ResponseItem::Other(json!({"type": "image_generation_call", "call_id": "c2"}));
        assert_eq!(call_id(&other), None);
        let settings = ThreadSettings::for_tests();
        let bad = ResponseItem::Other(json!({"type": "tool_search_call", "call_id": "c3",
            "arguments": {"limit": 2}}));
        let ResponseItem::Other(output) = answer(&bad, None, &settings) else {
            panic!("not an output item");
        };
        assert_eq!(
            output,
            json!({"type": "tool_search_output", "call_id": "c3", "status": "completed",
                "execution": "client", "tools": []})
        );
    }
}
