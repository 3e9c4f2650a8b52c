//! The one table of client → server methods: name, params type, response type. A line's params
//! are decoded exactly once, straight into the typed params of its method.

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::account::{
    CancelLoginAccountParams, CancelLoginAccountResponse, EmptyParams, GetAccountParams,
    GetAccountResponse, LoginAccountParams, LoginAccountResponse,
};
use super::command::{CommandExecParams, CommandExecResponse};
use super::compact::{ThreadCompactStartParams, ThreadCompactStartResponse};
use super::config::{ConfigReadParams, ConfigReadResponse};
use super::goal::{ThreadGoalGetParams, ThreadGoalGetResponse};
use super::initialize::{InitializeParams, InitializeResponse};
use super::mcp::{ListMcpServerStatusParams, ListMcpServerStatusResponse};
use super::model::{ModelListParams, ModelListResponse};
use super::permission_profile::{PermissionProfileListParams, PermissionProfileListResponse};
use super::skills::{SkillsExtraRootsSetParams, SkillsListParams, SkillsListResponse};
use super::thread::{
    ThreadForkParams, ThreadIdParams, ThreadListParams, ThreadListResponse, ThreadLoadedListParams,
    ThreadLoadedListResponse, ThreadReadParams, ThreadReadResponse, ThreadResponse,
    ThreadResumeParams, ThreadResumeResponse, ThreadSetNameParams, ThreadStartParams,
    ThreadStartResponse, ThreadUnsubscribeResponse,
};
use super::thread_items::{ThreadItemsListParams, ThreadItemsListResponse};
use super::turn::{
    EmptyResponse, TurnInterruptParams, TurnStartParams, TurnStartResponse, TurnSteerParams,
    TurnSteerResponse,
};

/// Why a request's method/params could not be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    #[error("unknown method `{0}`")]
    UnknownMethod(String),
    #[error("Invalid params: {0}")]
    InvalidParams(String),
}

macro_rules! client_requests {
    ($($variant:ident => $method:literal, $params:ty, $response:ty;)*) => {
        /// A decoded client request.
        #[derive(Debug, Clone)]
        pub enum ClientRequest {
            $($variant($params),)*
        }

        /// Every method name this server answers, in table order.
        pub const CLIENT_REQUEST_METHODS: &[&str] = &[$($method,)*];

        impl ClientRequest {
            pub fn method(&self) -> &'static str {
                match self {
                    $(ClientRequest::$variant(_) => $method,)*
                }
            }

            /// Decodes `params` for `method`.
            pub fn decode(method: &str, params: Option<&RawValue>) -> Result<ClientRequest, DecodeError> {
                match method {
                    $($method => decode_params::<$params>(params).map(ClientRequest::$variant),)*
                    other => Err(DecodeError::UnknownMethod(other.to_string())),
                }
            }
        }

        /// (method, params schema, response schema) for every method; used by `openturn schema`.
        pub fn client_request_schemas(
            generator: &mut schemars::gen::SchemaGenerator,
        ) -> Vec<(&'static str, schemars::schema::Schema, schemars::schema::Schema)> {
            vec![$((
                $method,
                generator.subschema_for::<$params>(),
                generator.subschema_for::<$response>(),
            ),)*]
        }
    };
}

client_requests! {
    Initialize => "initialize", InitializeParams, InitializeResponse;
    ThreadStart => "thread/start", ThreadStartParams, ThreadStartResponse;
    ThreadResume => "thread/resume", ThreadResumeParams, ThreadResumeResponse;
    ThreadFork => "thread/fork", ThreadForkParams, ThreadStartResponse;
    ThreadList => "thread/list", ThreadListParams, ThreadListResponse;
    ThreadRead => "thread/read", ThreadReadParams, ThreadReadResponse;
    ThreadArchive => "thread/archive", ThreadIdParams, EmptyResponse;
    ThreadUnarchive => "thread/unarchive", ThreadIdParams, ThreadResponse;
    ThreadSetName => "thread/name/set", ThreadSetNameParams, EmptyResponse;
    ThreadLoadedList => "thread/loaded/list", ThreadLoadedListParams, ThreadLoadedListResponse;
    ThreadUnsubscribe => "thread/unsubscribe", ThreadIdParams, ThreadUnsubscribeResponse;
    TurnStart => "turn/start", TurnStartParams, TurnStartResponse;
    TurnSteer => "turn/steer", TurnSteerParams, TurnSteerResponse;
    TurnInterrupt => "turn/interrupt", TurnInterruptParams, EmptyResponse;
    ModelList => "model/list", ModelListParams, ModelListResponse;
    ConfigRead => "config/read", ConfigReadParams, ConfigReadResponse;
    CommandExec => "command/exec", CommandExecParams, CommandExecResponse;
    AccountRead => "account/read", GetAccountParams, GetAccountResponse;
    AccountLoginStart => "account/login/start", LoginAccountParams, LoginAccountResponse;
    AccountLoginCancel => "account/login/cancel", CancelLoginAccountParams, CancelLoginAccountResponse;
    AccountLogout => "account/logout", EmptyParams, EmptyResponse;
    SkillsList => "skills/list", SkillsListParams, SkillsListResponse;
    SkillsExtraRootsSet => "skills/extraRoots/set", SkillsExtraRootsSetParams, EmptyResponse;
    PermissionProfileList => "permissionProfile/list", PermissionProfileListParams, PermissionProfileListResponse;
    ThreadGoalGet => "thread/goal/get", ThreadGoalGetParams, ThreadGoalGetResponse;
    ThreadItemsList => "thread/items/list", ThreadItemsListParams, ThreadItemsListResponse;
    ThreadCompactStart => "thread/compact/start", ThreadCompactStartParams, ThreadCompactStartResponse;
    McpServerStatusList => "mcpServerStatus/list", ListMcpServerStatusParams, ListMcpServerStatusResponse;
}

/// Absent or `null` params read as `{}`, so methods whose fields are all optional need none.
/// Errors name the offending field by its path.
fn decode_params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, DecodeError> {
    let text = match params {
        Some(raw) if raw.get().trim() != "null" => raw.get(),
        _ => "{}",
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if path.is_empty() || path == "." {
            DecodeError::InvalidParams(strip_position(&inner.to_string()))
        } else {
            DecodeError::InvalidParams(format!("`{path}`: {}", strip_position(&inner.to_string())))
        }
    })
}

/// serde_json appends " at line 1 column 42"; on a one-line message that is noise.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(index) => message[..index].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    #[test]
    fn omitted_params_read_as_empty_object_when_all_fields_optional() {
        assert!(matches!(
            ClientRequest::decode("thread/start", None),
            Ok(ClientRequest::ThreadStart(_))
        ));
    }

    #[test]
    fn bad_params_name_the_field() {
        let params = raw(r#"{"threadId":"t","input":[{"type":"text","text":5}]}"#);
        let error = ClientRequest::decode("turn/start", Some(&params));
        match error {
            Err(DecodeError::InvalidParams(message)) => {
                assert!(message.contains("input[0]"), "{message}")
            }
            other => panic!("unexpected {other:?}"),
        }
        let missing = ClientRequest::decode("initialize", Some(&raw("{}")));
        assert!(
            matches!(&missing, Err(DecodeError::InvalidParams(m)) if m.contains("clientInfo")),
            "{missing:?}"
        );
    }

    #[test]
    fn unknown_methods_are_reported() {
        assert_eq!(
            ClientRequest::decode("nope/x", None).err(),
            Some(DecodeError::UnknownMethod("nope/x".to_string()))
        );
    }
}
