//! The one table of client → server methods: name, params type, response type, concurrency. A line's params
//! are decoded exactly once, straight into the typed params of its method.

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::account::{
    CancelLoginAccountParams, CancelLoginAccountResponse, EmptyParams, GetAccountParams,
    GetAccountResponse, LoginAccountParams, LoginAccountResponse,
};
use super::background_terminals::{
    ThreadBackgroundTerminalsCleanParams, ThreadBackgroundTerminalsListParams,
    ThreadBackgroundTerminalsListResponse, ThreadBackgroundTerminalsTerminateParams,
    ThreadBackgroundTerminalsTerminateResponse,
};
use super::collaboration_mode::{CollaborationModeListParams, CollaborationModeListResponse};
use super::command::{
    CommandExecParams, CommandExecResizeParams, CommandExecResponse, CommandExecTerminateParams,
    CommandExecWriteParams,
};
use super::compact::{ThreadCompactStartParams, ThreadCompactStartResponse};
use super::config::{ConfigReadParams, ConfigReadResponse};
use super::config_write::{
    ConfigBatchWriteParams, ConfigRequirementsReadResponse, ConfigValueWriteParams,
    ConfigWriteResponse, ExperimentalFeatureEnablement, ExperimentalFeatureListParams,
    ExperimentalFeatureListResponse, HooksListParams, HooksListResponse,
};
use super::file_search::{
    FuzzyFileSearchParams, FuzzyFileSearchResponse, FuzzyFileSearchSessionStartParams,
    FuzzyFileSearchSessionStopParams, FuzzyFileSearchSessionUpdateParams,
};
use super::fs::{
    FsCopyParams, FsCreateDirectoryParams, FsGetMetadataParams, FsGetMetadataResponse,
    FsReadDirectoryParams, FsReadDirectoryResponse, FsReadFileParams, FsReadFileResponse,
    FsRemoveParams, FsUnwatchParams, FsWatchParams, FsWatchResponse, FsWriteFileParams,
};
use super::goal::{
    ThreadGoalClearParams, ThreadGoalClearResponse, ThreadGoalGetParams, ThreadGoalGetResponse,
    ThreadGoalSetParams, ThreadGoalSetResponse,
};
use super::initialize::{InitializeParams, InitializeResponse};
use super::mcp::{
    ListMcpServerStatusParams, ListMcpServerStatusResponse, McpResourceReadParams,
    McpResourceReadResponse, McpServerToolCallParams, McpServerToolCallResponse,
};
use super::mcp_oauth::{McpServerOauthLoginParams, McpServerOauthLoginResponse};
use super::model::{ModelListParams, ModelListResponse};
use super::model_provider::{
    ModelProviderCapabilitiesReadResponse, ModelProviderConfigWriteParams,
    ModelProviderConfigWriteResponse, ModelProviderDefaultSetParams, ModelProviderListResponse,
    ModelProviderNoParams,
};
use super::permission_profile::{PermissionProfileListParams, PermissionProfileListResponse};
use super::process::{
    ProcessKillParams, ProcessResizePtyParams, ProcessSpawnParams, ProcessWriteStdinParams,
};
use super::rate_limits::{GetAccountRateLimitsParams, GetAccountRateLimitsResponse};
use super::review::{ReviewStartParams, ReviewStartResponse};
use super::skills::{
    SkillsConfigWriteParams, SkillsConfigWriteResponse, SkillsExtraRootsSetParams,
    SkillsListParams, SkillsListResponse,
};
use super::thread::{
    ThreadForkParams, ThreadIdParams, ThreadListParams, ThreadListResponse, ThreadLoadedListParams,
    ThreadLoadedListResponse, ThreadReadParams, ThreadReadResponse, ThreadResponse,
    ThreadResumeParams, ThreadResumeResponse, ThreadSetNameParams, ThreadStartParams,
    ThreadStartResponse, ThreadUnsubscribeResponse,
};
use super::thread_history::{
    ThreadInjectItemsParams, ThreadMetadataUpdateParams, ThreadRevertParams, ThreadRevertResponse,
};
use super::thread_items::{ThreadItemsListParams, ThreadItemsListResponse};
use super::thread_search::{ThreadSearchParams, ThreadSearchResponse};
use super::thread_settings::{
    ThreadSettingsUpdateParams, TurnSettingsUpdateParams, TurnSettingsUpdateResponse,
};
use super::thread_turns::{ThreadTurnsListParams, ThreadTurnsListResponse};
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

/// How the dispatcher runs a method's handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    /// One at a time, in arrival order (the handshake, thread lifecycle, turns, writes).
    Ordered,
    /// A read that may be slow: runs beside the ordered ones, a bounded number at once.
    Concurrent,
    /// Work that may last minutes (a command): runs on its own task and is answered when done.
    Background,
}

/// One client method: its wire name, params, result and how it is dispatched. Implemented by
/// the marker types in [`method`], one per row of the table.
pub trait Method {
    const NAME: &'static str;
    const CONCURRENCY: Concurrency;
    type Params: Send + 'static;
    type Response: serde::Serialize + Send;
}

/// The table itself. It hands its rows to `$callback`, so the request enum, decoding, the
/// schema, the dispatch of the server (`server::handlers`) and the method markers all come from
/// this one list. Columns: variant, wire name, params type, result type, [`Concurrency`].
macro_rules! client_request_table {
    ($callback:ident) => {
        $callback! {
            Initialize => "initialize", InitializeParams, InitializeResponse, Ordered;
            ThreadStart => "thread/start", ThreadStartParams, ThreadStartResponse, Ordered;
            ThreadResume => "thread/resume", ThreadResumeParams, ThreadResumeResponse, Ordered;
            ThreadFork => "thread/fork", ThreadForkParams, ThreadStartResponse, Ordered;
            ThreadList => "thread/list", ThreadListParams, ThreadListResponse, Concurrent;
            ThreadRead => "thread/read", ThreadReadParams, ThreadReadResponse, Concurrent;
            ThreadArchive => "thread/archive", ThreadIdParams, EmptyResponse, Ordered;
            ThreadUnarchive => "thread/unarchive", ThreadIdParams, ThreadResponse, Ordered;
            ThreadSetName => "thread/name/set", ThreadSetNameParams, EmptyResponse, Ordered;
            ThreadLoadedList => "thread/loaded/list", ThreadLoadedListParams, ThreadLoadedListResponse, Concurrent;
            ThreadUnsubscribe => "thread/unsubscribe", ThreadIdParams, ThreadUnsubscribeResponse, Ordered;
            TurnStart => "turn/start", TurnStartParams, TurnStartResponse, Ordered;
            TurnSteer => "turn/steer", TurnSteerParams, TurnSteerResponse, Ordered;
            TurnInterrupt => "turn/interrupt", TurnInterruptParams, EmptyResponse, Ordered;
            ModelList => "model/list", ModelListParams, ModelListResponse, Concurrent;
            ConfigRead => "config/read", ConfigReadParams, ConfigReadResponse, Concurrent;
            CommandExec => "command/exec", CommandExecParams, CommandExecResponse, Background;
            AccountRead => "account/read", GetAccountParams, GetAccountResponse, Ordered;
            AccountLoginStart => "account/login/start", LoginAccountParams, LoginAccountResponse, Ordered;
            AccountLoginCancel => "account/login/cancel", CancelLoginAccountParams, CancelLoginAccountResponse, Ordered;
            AccountLogout => "account/logout", EmptyParams, EmptyResponse, Ordered;
            SkillsList => "skills/list", SkillsListParams, SkillsListResponse, Ordered;
            SkillsExtraRootsSet => "skills/extraRoots/set", SkillsExtraRootsSetParams, EmptyResponse, Ordered;
            PermissionProfileList => "permissionProfile/list", PermissionProfileListParams, PermissionProfileListResponse, Ordered;
            ThreadGoalGet => "thread/goal/get", ThreadGoalGetParams, ThreadGoalGetResponse, Ordered;
            ThreadItemsList => "thread/items/list", ThreadItemsListParams, ThreadItemsListResponse, Ordered;
            ThreadCompactStart => "thread/compact/start", ThreadCompactStartParams, ThreadCompactStartResponse, Ordered;
            // Without a thread it starts the configured servers to look at them, which can take
            // each its start-up timeout.
            McpServerStatusList => "mcpServerStatus/list", ListMcpServerStatusParams, ListMcpServerStatusResponse, Concurrent;
            ThreadBackgroundTerminalsList => "thread/backgroundTerminals/list", ThreadBackgroundTerminalsListParams, ThreadBackgroundTerminalsListResponse, Ordered;
            ThreadBackgroundTerminalsTerminate => "thread/backgroundTerminals/terminate", ThreadBackgroundTerminalsTerminateParams, ThreadBackgroundTerminalsTerminateResponse, Ordered;
            ThreadBackgroundTerminalsClean => "thread/backgroundTerminals/clean", ThreadBackgroundTerminalsCleanParams, EmptyResponse, Ordered;
            ThreadGoalSet => "thread/goal/set", ThreadGoalSetParams, ThreadGoalSetResponse, Ordered;
            ThreadGoalClear => "thread/goal/clear", ThreadGoalClearParams, ThreadGoalClearResponse, Ordered;
            ReviewStart => "review/start", ReviewStartParams, ReviewStartResponse, Ordered;
            ThreadSettingsUpdate => "thread/settings/update", ThreadSettingsUpdateParams, EmptyResponse, Ordered;
            TurnSettingsUpdate => "turn/settings/update", TurnSettingsUpdateParams, TurnSettingsUpdateResponse, Ordered;
            // The file methods block on the file system (off the async threads); writes stay in
            // arrival order with everything else, reads and searches run beside it.
            FsReadFile => "fs/readFile", FsReadFileParams, FsReadFileResponse, Concurrent;
            FsWriteFile => "fs/writeFile", FsWriteFileParams, EmptyResponse, Ordered;
            FsGetMetadata => "fs/getMetadata", FsGetMetadataParams, FsGetMetadataResponse, Concurrent;
            FsReadDirectory => "fs/readDirectory", FsReadDirectoryParams, FsReadDirectoryResponse, Concurrent;
            FsCreateDirectory => "fs/createDirectory", FsCreateDirectoryParams, EmptyResponse, Ordered;
            FsRemove => "fs/remove", FsRemoveParams, EmptyResponse, Ordered;
            FsCopy => "fs/copy", FsCopyParams, EmptyResponse, Ordered;
            FsWatch => "fs/watch", FsWatchParams, FsWatchResponse, Ordered;
            FsUnwatch => "fs/unwatch", FsUnwatchParams, EmptyResponse, Ordered;
            FuzzyFileSearch => "fuzzyFileSearch", FuzzyFileSearchParams, FuzzyFileSearchResponse, Concurrent;
            FuzzyFileSearchSessionStart => "fuzzyFileSearch/sessionStart", FuzzyFileSearchSessionStartParams, EmptyResponse, Ordered;
            FuzzyFileSearchSessionUpdate => "fuzzyFileSearch/sessionUpdate", FuzzyFileSearchSessionUpdateParams, EmptyResponse, Ordered;
            FuzzyFileSearchSessionStop => "fuzzyFileSearch/sessionStop", FuzzyFileSearchSessionStopParams, EmptyResponse, Ordered;
            CommandExecWrite => "command/exec/write", CommandExecWriteParams, EmptyResponse, Ordered;
            CommandExecResize => "command/exec/resize", CommandExecResizeParams, EmptyResponse, Ordered;
            CommandExecTerminate => "command/exec/terminate", CommandExecTerminateParams, EmptyResponse, Ordered;
            ThreadDelete => "thread/delete", ThreadIdParams, EmptyResponse, Ordered;
            ThreadTurnsList => "thread/turns/list", ThreadTurnsListParams, ThreadTurnsListResponse, Concurrent;
            AccountRateLimitsRead => "account/rateLimits/read", GetAccountRateLimitsParams, GetAccountRateLimitsResponse, Ordered;
            ModelProviderList => "modelProvider/list", ModelProviderNoParams, ModelProviderListResponse, Concurrent;
            ModelProviderCapabilitiesRead => "modelProvider/capabilities/read", ModelProviderNoParams, ModelProviderCapabilitiesReadResponse, Concurrent;
            // Bounded in bytes, threads and time per request (see its handler).
            ThreadSearch => "thread/search", ThreadSearchParams, ThreadSearchResponse, Concurrent;
            // Writes edit one file: one at a time, in arrival order.
            ConfigValueWrite => "config/value/write", ConfigValueWriteParams, ConfigWriteResponse, Ordered;
            ConfigBatchWrite => "config/batchWrite", ConfigBatchWriteParams, ConfigWriteResponse, Ordered;
            ConfigRequirementsRead => "configRequirements/read", EmptyParams, ConfigRequirementsReadResponse, Concurrent;
            SkillsConfigWrite => "skills/config/write", SkillsConfigWriteParams, SkillsConfigWriteResponse, Ordered;
            HooksList => "hooks/list", HooksListParams, HooksListResponse, Concurrent;
            McpServerReload => "config/mcpServer/reload", EmptyParams, EmptyResponse, Ordered;
            // A server's tool may run for its whole tool timeout.
            McpServerToolCall => "mcpServer/tool/call", McpServerToolCallParams, McpServerToolCallResponse, Background;
            McpResourceRead => "mcpServer/resource/read", McpResourceReadParams, McpResourceReadResponse, Background;
            ExperimentalFeatureList => "experimentalFeature/list", ExperimentalFeatureListParams, ExperimentalFeatureListResponse, Concurrent;
            ExperimentalFeatureEnablementSet => "experimentalFeature/enablement/set", ExperimentalFeatureEnablement, ExperimentalFeatureEnablement, Ordered;
            ThreadRevert => "thread/revert", ThreadRevertParams, ThreadRevertResponse, Ordered;
            ThreadInjectItems => "thread/inject_items", ThreadInjectItemsParams, EmptyResponse, Ordered;
            ThreadMetadataUpdate => "thread/metadata/update", ThreadMetadataUpdateParams, ThreadResponse, Ordered;
            // A spawn answers once the process runs; its output and exit are notifications.
            ProcessSpawn => "process/spawn", ProcessSpawnParams, EmptyResponse, Ordered;
            ProcessWriteStdin => "process/writeStdin", ProcessWriteStdinParams, EmptyResponse, Ordered;
            ProcessResizePty => "process/resizePty", ProcessResizePtyParams, EmptyResponse, Ordered;
            ProcessKill => "process/kill", ProcessKillParams, EmptyResponse, Ordered;
            ModelProviderDefaultSet => "modelProvider/default/set", ModelProviderDefaultSetParams, ConfigWriteResponse, Ordered;
            ModelProviderConfigWrite => "modelProvider/config/write", ModelProviderConfigWriteParams, ModelProviderConfigWriteResponse, Ordered;
            // Answers once the authorization URL is known; the login ends in a notification.
            McpServerOauthLogin => "mcpServer/oauth/login", McpServerOauthLoginParams, McpServerOauthLoginResponse, Ordered;
            CollaborationModeList => "collaborationMode/list", CollaborationModeListParams, CollaborationModeListResponse, Ordered;
        }
    };
}
pub(crate) use client_request_table;

macro_rules! define_client_requests {
    ($($variant:ident => $method:literal, $params:ty, $response:ty, $mode:ident;)*) => {
        /// A decoded client request.
        #[derive(Debug, Clone)]
        pub enum ClientRequest {
            $($variant($params),)*
        }

        /// Every method name this server answers, in table order.
        pub const CLIENT_REQUEST_METHODS: &[&str] = &[$($method,)*];

        /// One marker type per method, carrying its row of the table as a [`Method`].
        pub mod method {
            use super::*;
            $(
                #[derive(Debug, Clone, Copy)]
                pub struct $variant;
                impl Method for $variant {
                    const NAME: &'static str = $method;
                    const CONCURRENCY: Concurrency = Concurrency::$mode;
                    type Params = $params;
                    type Response = $response;
                }
            )*
        }

        impl ClientRequest {
            pub fn method(&self) -> &'static str {
                match self {
                    $(ClientRequest::$variant(_) => $method,)*
                }
            }

            /// How the dispatcher runs this request.
            pub fn concurrency(&self) -> Concurrency {
                match self {
                    $(ClientRequest::$variant(_) => Concurrency::$mode,)*
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

client_request_table!(define_client_requests);

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
