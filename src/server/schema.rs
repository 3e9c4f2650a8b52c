//! `openturn schema --out DIR`: JSON Schema generated from the `protocol/` types (schemars), for
//! client libraries and for reviewing protocol changes. The output is checked in under
//! `schema/`, and a test regenerates it and fails on any drift.

use std::path::Path;

use schemars::gen::SchemaSettings;
use serde_json::{json, Map, Value};

use crate::protocol::approval::{
    CommandExecutionRequestApprovalResponse, DynamicToolCallResponse, ServerRequest,
    ToolRequestUserInputResponse,
};
use crate::protocol::jsonrpc::{ErrorObject, RequestId};
use crate::protocol::methods::client_request_schemas;
use crate::protocol::notification::ServerNotification;
use crate::protocol::PROTOCOL_VERSION;

/// The file `write_schema` produces.
pub const SCHEMA_FILE: &str = "openturn_protocol.schema.json";

/// The whole protocol as one draft-07 document: every definition, plus the method table
/// (`methods.<name>.params` / `.result`), the notification union, and the server → client
/// requests with their replies (typed client libraries answer approvals and tool calls from it).
pub(crate) fn protocol_schema() -> Value {
    let mut generator = SchemaSettings::draft07().into_generator();
    let mut methods = Map::new();
    for (method, params, result) in client_request_schemas(&mut generator) {
        methods.insert(
            method.to_string(),
            json!({ "params": params, "result": result }),
        );
    }
    let notifications = generator.subschema_for::<ServerNotification>();
    let server_request = generator.subschema_for::<ServerRequest>();
    let server_request_replies = json!({
        "item/commandExecution/requestApproval":
            generator.subschema_for::<CommandExecutionRequestApprovalResponse>(),
        "item/tool/call": generator.subschema_for::<DynamicToolCallResponse>(),
        "item/tool/requestUserInput": generator.subschema_for::<ToolRequestUserInputResponse>(),
    });
    let request_id = generator.subschema_for::<RequestId>();
    let error = generator.subschema_for::<ErrorObject>();
    let definitions: Map<String, Value> = generator
        .take_definitions()
        .into_iter()
        .map(|(name, schema)| (name, serde_json::to_value(schema).unwrap_or(Value::Null)))
        .collect();
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "openturn app-server protocol",
        "protocolVersion": PROTOCOL_VERSION,
        "methods": methods,
        "serverNotification": notifications,
        "serverRequest": server_request,
        "serverRequestReplies": server_request_replies,
        "requestId": request_id,
        "error": error,
        "definitions": definitions,
    })
}

/// Writes the schema into `dir` (created if needed).
pub fn write_schema(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut text =
        serde_json::to_string_pretty(&protocol_schema()).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(dir.join(SCHEMA_FILE), text)
}
