//! A request as the mock provider recorded it, for tests to inspect. Its own file: the handle,
//! the HTTP server and the WebSocket server all use it.

use bytes::Bytes;

/// A request as the mock provider received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// As sent, e.g. `POST`.
    pub method: String,
    /// The path without the query string, e.g. `/v1/responses`.
    pub path: String,
    /// The query string without `?`, if the target had one.
    pub query: Option<String>,
    /// Names lowercased, values trimmed, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or `Null` when it is empty or not JSON.
    pub body: serde_json::Value,
    /// The body exactly as received (after chunked decoding).
    pub raw_body: Bytes,
}

impl RecordedRequest {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header_name, _)| header_name.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}
