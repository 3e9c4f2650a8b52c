//! The Responses API on the wire: bytes in, typed [`event::ResponseEvent`] values out.
//!
//! This layer owns the request body shape, the response item shapes, the meaning of each stream
//! event (`map.rs`), SSE framing (`sse_frame.rs`) and decoding (`sse.rs`), WebSocket message decoding (`websocket.rs`), the
//! facts read from response headers (`headers.rs`) and the stream failure policies. It has no
//! HTTP or WebSocket client and spawns no tasks: `client/` feeds it bytes or messages and drives
//! it. It imports nothing else from the crate.

pub mod error;
pub mod event;
pub mod headers;
pub mod item;
pub mod map;
pub mod request;
pub mod sse;
pub mod sse_frame;
mod text_delta;
pub mod websocket;

#[cfg(test)]
mod tests;

pub use error::{ApiError, StreamError};
pub use event::{ResponseEvent, ResponseEventSource, TokenUsage};
pub use item::{ContentItem, FunctionCallOutputBody, ReasoningSummary, ResponseItem};
pub use request::ResponsesRequest;
