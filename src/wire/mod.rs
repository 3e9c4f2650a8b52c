//! The Responses API on the wire: bytes in, typed [`event::ResponseEvent`] values out.
//!
//! This layer owns the request body shape, the response item shapes, SSE frame decoding and the
//! three stream failure policies. It has no HTTP client and spawns no tasks: `client/` feeds it
//! bytes and drives it. It imports nothing else from the crate.

pub mod error;
pub mod event;
pub mod item;
pub mod request;
pub mod sse;

pub use error::{ApiError, StreamError};
pub use event::{ResponseEvent, TokenUsage};
pub use item::{ContentItem, ReasoningSummary, ResponseItem};
pub use request::ResponsesRequest;
