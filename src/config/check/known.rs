//! The keys openturn knows and the kind of value each takes ([`Expect`]), from the top level
//! ([`TOP_LEVEL`]) down into provider, model, MCP server, tool and project tables, and the keys
//! the Codex CLI reads that openturn accepts and ignores. Data only: the checker walks it and
//! `super::super::keys` lists it.

/// The kind of value a key takes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Expect {
    Text,
    NonEmptyText,
    Bool,
    /// A whole number from 0 up to the given maximum.
    Count(u64),
    Integer,
    OneOf(&'static [&'static str]),
    TextList,
    /// An array of tables (`[[name]]`), each with the given keys.
    TableList(&'static [(&'static str, Expect)]),
    /// A table whose keys are known, and the keys Codex reads there that openturn ignores.
    Keys(&'static [(&'static str, Expect)], &'static [&'static str]),
    /// A table of any keys, each value of one kind.
    MapOf(&'static Expect),
    /// A duration in seconds: a whole or fractional number, not negative.
    Seconds,
    /// `[features]`: the reference's feature names (`--enable`/`--disable`), each on or off.
    Features,
    /// A tool switch (`[tools] web_search = …`): on or off, or a table of the tool's options
    /// whose `enabled`, when given, is on or off.
    Switch,
}

const U32: Expect = Expect::Count(u32::MAX as u64);
const U64: Expect = Expect::Count(i64::MAX as u64);

const PROVIDER_KEYS: &[(&str, Expect)] = &[
    ("name", Expect::Text),
    ("base_url", Expect::NonEmptyText),
    ("env_key", Expect::Text),
    (
        "wire_api",
        Expect::OneOf(&["responses", "responses_websocket"]),
    ),
    ("query_params", Expect::MapOf(&Expect::Text)),
    ("http_headers", Expect::MapOf(&Expect::Text)),
    ("env_http_headers", Expect::MapOf(&Expect::Text)),
    ("api_key_header", Expect::Text),
    ("request_max_retries", U32),
    ("stream_max_retries", U32),
    ("stream_idle_timeout_ms", U64),
    ("requires_openai_auth", Expect::Bool),
];

const MODEL_KEYS: &[(&str, Expect)] = &[
    ("display_name", Expect::Text),
    ("description", Expect::Text),
    ("hidden", Expect::Bool),
    ("default_reasoning_effort", Expect::Text),
    ("supported_reasoning_efforts", Expect::TextList),
    ("input_modalities", Expect::TextList),
    ("model_provider", Expect::Text),
    ("supports_reasoning", Expect::Bool),
    ("default_reasoning_summary", Expect::Text),
    ("apply_patch_tool_type", APPLY_PATCH_TOOL_TYPE),
    ("tools", Expect::TextList),
];

/// One `[mcp_servers.NAME]` table: a stdio server (`command`) or a streamable HTTP one (`url`).
const MCP_SERVER_KEYS: &[(&str, Expect)] = &[
    ("command", Expect::NonEmptyText),
    ("args", Expect::TextList),
    ("env", Expect::MapOf(&Expect::Text)),
    ("cwd", Expect::NonEmptyText),
    ("url", Expect::NonEmptyText),
    ("bearer_token_env_var", Expect::NonEmptyText),
    ("http_headers", Expect::MapOf(&Expect::Text)),
    ("enabled", Expect::Bool),
    ("startup_timeout_sec", Expect::Seconds),
    ("tool_timeout_sec", Expect::Seconds),
    ("enabled_tools", Expect::TextList),
    ("disabled_tools", Expect::TextList),
];

/// Keys the Codex CLI reads in an MCP server table that openturn accepts and ignores.
const CODEX_ONLY_MCP_SERVER: &[&str] = &[
    "env_vars",
    "env_http_headers",
    "required",
    "startup_timeout_ms",
    "scopes",
    "oauth_resource",
    "default_tools_approval_mode",
    "tools",
    "experimental_environment",
];

/// How the `apply_patch` tool is offered (the reference's model-catalogue field name).
const APPLY_PATCH_TOOL_TYPE: Expect = Expect::OneOf(&["freeform", "function"]);

/// One `[[skills.config]]` entry: which skill (by name or path) and whether it is on.
const SKILL_TOGGLE_KEYS: &[(&str, Expect)] = &[
    ("name", Expect::Text),
    ("path", Expect::Text),
    ("enabled", Expect::Bool),
];

/// One `[projects."<path>"]` table: how far the reference trusts the folder.
const PROJECT_KEYS: &[(&str, Expect)] =
    &[("trust_level", Expect::OneOf(&["trusted", "untrusted"]))];

/// `[tools]`: the reference's switches for its optional tools.
/// `[tools]`: a switch for every tool a model may be offered (`core/tool_set.rs`).
const TOOL_KEYS: &[(&str, Expect)] = &[
    ("exec_command", Expect::Switch),
    ("write_stdin", Expect::Switch),
    ("update_plan", Expect::Switch),
    ("request_user_input", Expect::Switch),
    // The reference's name for the `request_user_input` switch (`core/tool_set.rs`).
    ("experimental_request_user_input", Expect::Switch),
    ("apply_patch", Expect::Switch),
    ("view_image", Expect::Switch),
    ("multi_agent_v1", Expect::Switch),
    ("get_goal", Expect::Switch),
    ("create_goal", Expect::Switch),
    ("update_goal", Expect::Switch),
    ("tool_search", Expect::Switch),
    ("web_search", Expect::Switch),
];

pub(crate) const TOP_LEVEL: &[(&str, Expect)] = &[
    ("model", Expect::NonEmptyText),
    ("features", Expect::Features),
    ("projects", Expect::MapOf(&Expect::Keys(PROJECT_KEYS, &[]))),
    ("tools", Expect::Keys(TOOL_KEYS, &[])),
    ("model_provider", Expect::NonEmptyText),
    ("openai_base_url", Expect::NonEmptyText),
    (
        "skills",
        Expect::Keys(
            &[
                ("config", Expect::TableList(SKILL_TOGGLE_KEYS)),
                ("include_instructions", Expect::Bool),
            ],
            &[],
        ),
    ),
    // `cloud.skills.enabled`: known, and `true` warned about (`super::cloud`).
    (
        "cloud",
        Expect::Keys(
            &[("skills", Expect::Keys(&[("enabled", Expect::Bool)], &[]))],
            &[],
        ),
    ),
    (
        "model_providers",
        Expect::MapOf(&Expect::Keys(PROVIDER_KEYS, CODEX_ONLY_PROVIDER)),
    ),
    ("models", Expect::MapOf(&Expect::Keys(MODEL_KEYS, &[]))),
    (
        "mcp_servers",
        Expect::MapOf(&Expect::Keys(MCP_SERVER_KEYS, CODEX_ONLY_MCP_SERVER)),
    ),
    (
        "approval_policy",
        Expect::OneOf(&["untrusted", "on-request", "never"]),
    ),
    (
        "sandbox_mode",
        Expect::OneOf(&["read-only", "workspace-write", "danger-full-access"]),
    ),
    (
        "sandbox_workspace_write",
        Expect::Keys(
            &[
                ("writable_roots", Expect::TextList),
                ("network_access", Expect::Bool),
            ],
            &["exclude_tmpdir_env_var", "exclude_slash_tmp"],
        ),
    ),
    (
        "sandbox_isolation",
        Expect::OneOf(&["auto", "namespaces", "fallback"]),
    ),
    (
        "shell_environment_policy",
        Expect::Keys(
            &[
                ("inherit", Expect::OneOf(&["all", "core", "none"])),
                ("ignore_default_excludes", Expect::Bool),
                ("exclude", Expect::TextList),
                ("set", Expect::MapOf(&Expect::Text)),
                ("include_only", Expect::TextList),
            ],
            &["experimental_use_profile", "filters"],
        ),
    ),
    ("instructions", Expect::Text),
    ("developer_instructions", Expect::Text),
    ("model_reasoning_effort", Expect::Text),
    ("model_reasoning_summary", Expect::Text),
    ("model_context_window", Expect::Integer),
    ("show_raw_agent_reasoning", Expect::Bool),
    (
        "reasoning_summary_mode",
        Expect::OneOf(&["streaming", "sequential_cutoff"]),
    ),
    ("max_line_bytes", U64),
    ("max_sampling_requests_per_turn", U32),
    ("thread_unload_delay_secs", U64),
    ("ingress_queue_capacity", U64),
    ("project_doc_max_bytes", U64),
    ("model_auto_compact_token_limit", U64),
    ("compact_prompt", Expect::NonEmptyText),
    ("apply_patch_tool_type", APPLY_PATCH_TOOL_TYPE),
    (
        "web_search",
        Expect::OneOf(&["disabled", "cached", "live", "indexed"]),
    ),
];

/// Settings the Codex CLI reads that openturn accepts and ignores (a config.toml shared with
/// Codex should not stop openturn), each said once so the user knows it has no effect here.
pub(super) const CODEX_ONLY_TOP_LEVEL: &[&str] = &[
    "profile",
    "profiles",
    "model_verbosity",
    "model_max_output_tokens",
    "hide_agent_reasoning",
    "history",
    "file_opener",
    "notify",
    "tui",
    "otel",
    "preferred_auth_method",
    "forced_login_method",
    "chatgpt_base_url",
    "disable_response_storage",
    "model_supports_reasoning_summaries",
    "experimental_instructions_file",
    "review_model",
    "service_tier",
    "personality",
];

const CODEX_ONLY_PROVIDER: &[&str] = &["experimental_bearer_token", "supports_websockets"];
