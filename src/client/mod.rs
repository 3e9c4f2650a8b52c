//! Talking to a model provider: building the request, auth, retries before a stream exists, the
//! HTTP (SSE) and WebSocket transports, and the [`stream::ResponseStream`] handed to the turn loop.
//!
//! Retries and 401 recovery happen only before a stream exists; once bytes have flowed, errors go
//! up to the turn, which decides whether to re-sample. A stream decodes in its consumer's poll
//! (no task, no channel); dropping the `ResponseStream` drops the connection to the provider.
//!
//! Imports only `wire/` from the crate.

mod api_key;
pub mod auth;
pub mod error;
mod headers;
mod http;
pub mod models;
pub mod provider;
mod request_context;
pub mod retry;
pub mod stored_key;
pub mod stream;
pub mod transport;
mod websocket;

pub use api_key::ApiKey;
pub use error::ClientError;
pub use headers::TurnState;
pub use provider::{ProviderInfo, WireApi};
pub use request_context::RequestContext;
pub use stream::ResponseStream;
pub use transport::{ModelClient, RetryNotice};
