//! JSON-RPC 2.0 envelopes. We write `"jsonrpc":"2.0"` on every message and accept messages
//! without it (real clients omit it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const SERVER_OVERLOADED: i64 = -32001;

/// A request id: a string or a signed 64-bit integer, echoed verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RequestId {
    Integer(i64),
    String(String),
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::Integer(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

/// The lenient shape of any incoming line; classified by [`IncomingMessage::classify`].
#[derive(Debug, Deserialize)]
pub struct IncomingMessage<'a> {
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default, borrow)]
    pub params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub result: Option<&'a RawValue>,
    #[serde(default)]
    pub error: Option<ErrorObject>,
}

/// What an incoming message is.
#[derive(Debug)]
pub enum Incoming<'a> {
    Request {
        id: RequestId,
        method: String,
        params: Option<&'a RawValue>,
    },
    Notification {
        method: String,
    },
    Response {
        id: RequestId,
        result: Result<&'a RawValue, ErrorObject>,
    },
    /// A JSON object that is none of the above; the id is echoed when it was readable.
    Invalid {
        id: Option<RequestId>,
        reason: String,
    },
}

impl<'a> IncomingMessage<'a> {
    pub fn classify(self) -> Incoming<'a> {
        let id = match self.id {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(RequestId::String(s)),
            Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64().map(RequestId::Integer),
            Some(other) => {
                // The reference takes a float id for a notification and stays silent; a
                // client that sent it is waiting for an answer, so it gets an error instead
                // (with a null id: the one it sent cannot be echoed as a `RequestId`).
                return Incoming::Invalid {
                    id: None,
                    reason: format!(
                        "`id` must be a string or a 64-bit integer, not {}",
                        describe_id(&other)
                    ),
                };
            }
        };
        match (self.method, id) {
            // `id: null` or no id: a notification.
            (Some(method), None) => Incoming::Notification { method },
            (Some(method), Some(id)) => Incoming::Request {
                id,
                method,
                params: self.params,
            },
            (None, Some(id)) => match (self.result, self.error) {
                (Some(result), None) => Incoming::Response {
                    id,
                    result: Ok(result),
                },
                (_, Some(error)) => Incoming::Response {
                    id,
                    result: Err(error),
                },
                (None, None) => Incoming::Invalid {
                    id: Some(id),
                    reason: "a message needs `method`, `result` or `error`".to_string(),
                },
            },
            (None, _) => Incoming::Invalid {
                id: None,
                reason: "a message needs `method`, `result` or `error`".to_string(),
            },
        }
    }
}

/// What kind of value an unusable `id` is, for the error message.
fn describe_id(id: &Value) -> &'static str {
    match id {
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer outside the 64-bit range",
        Value::Bool(_) => "a boolean",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
        Value::Null | Value::String(_) => "this value",
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    pub fn new(code: i64, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> ErrorObject {
        self.data = Some(data);
        self
    }
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`
#[derive(Debug, Serialize)]
pub struct ResponseEnvelope<'a, T: Serialize> {
    pub jsonrpc: &'static str,
    pub id: &'a RequestId,
    pub result: &'a T,
}

/// `{"jsonrpc":"2.0","id":…|null,"error":{…}}`
#[derive(Debug, Serialize)]
pub struct ErrorEnvelope<'a> {
    pub jsonrpc: &'static str,
    pub id: Option<&'a RequestId>,
    pub error: &'a ErrorObject,
}

/// `{"jsonrpc":"2.0","method":…,"params":…,"emittedAtMs":…}`; the method/params pair comes from
/// a tagged notification enum.
#[derive(Debug, Serialize)]
pub struct NotificationEnvelope<'a, T: Serialize> {
    pub jsonrpc: &'static str,
    #[serde(flatten)]
    pub notification: &'a T,
    #[serde(rename = "emittedAtMs")]
    pub emitted_at_ms: i64,
}

/// `{"jsonrpc":"2.0","id":…,"method":…,"params":…}` for server→client requests.
#[derive(Debug, Serialize)]
pub struct ServerRequestEnvelope<'a, T: Serialize> {
    pub jsonrpc: &'static str,
    pub id: &'a RequestId,
    #[serde(flatten)]
    pub request: &'a T,
}

pub const JSONRPC_VERSION: &str = "2.0";
