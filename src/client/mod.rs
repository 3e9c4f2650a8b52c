//! Talking to a model provider: building the HTTP request, auth, retries before a stream exists,
//! and the [`stream::ResponseStream`] handed to the turn loop.
//!
//! Retries and 401 recovery happen only before any byte of the response body has been read; once
//! bytes have flowed, errors go up to the turn, which decides whether to re-sample. Dropping a
//! `ResponseStream` cancels its task, which stops polling and drops the HTTP body.
//!
//! Imports only `wire/` from the crate.

pub mod auth;
pub mod error;
pub mod provider;
pub mod retry;
pub mod stream;
pub mod transport;

pub use error::ClientError;
pub use provider::{ProviderInfo, WireApi};
pub use stream::ResponseStream;
pub use transport::{ModelClient, RequestContext};
