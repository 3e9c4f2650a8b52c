//! openturn: a Responses-API agent daemon speaking the Codex app-server v2 protocol over stdio.
//!
//! One streamed response crosses five layers; data flows down this list and nothing reaches up:
//!
//! - [`wire`]: bytes → `ResponseEvent` (SSE frames, item shapes, failure policies).
//! - [`client`]: requests to a provider, auth, retries before a stream exists, the stream task.
//! - [`core`]: threads and turns — active item, history, tools, follow-ups — emitting `EventMsg`.
//! - [`server`]: JSON-RPC on stdio; projects `EventMsg` into protocol notifications.
//! - [`protocol`]: the JSON-RPC payload types (plain data, schema-generating).
//!
//! Beside them: [`exec`] is `openturn exec`, a headless client of the server run in-process;
//! [`rollout`] persists threads as JSONL; [`config`] resolves `config.toml` and overrides;
//! [`mcp`] is the MCP client (a thread's tool servers); [`sandbox`] confines command children (Landlock + seccomp, OS only); [`supervisor`] owns every
//! OS child (commands and MCP servers) and kills only what descends from a command; [`demo`] is the offline
//! scripted session; [`mock_provider`] is the loopback Responses server used by `openturn demo`, tests
//! and benchmarks.

pub mod client;
pub mod config;
pub mod core;
pub mod demo;
pub mod exec;
pub mod mcp;
pub mod mock_provider;
pub mod protocol;
pub mod rollout;
pub mod sandbox;
pub mod server;
pub mod supervisor;
pub mod wire;
