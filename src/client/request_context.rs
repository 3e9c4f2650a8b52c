//! The per-request facts both transports send as headers, beside the body: which thread asks,
//! which client it serves, and the turn's sticky routing state. A file of its own because the
//! retry loop (`transport.rs`) and each transport it calls (`http.rs`, `websocket.rs`) all take
//! it, and none of them should import another for it.

use super::headers::TurnState;

/// Per-request facts that are not part of the body.
#[derive(Debug, Clone, Default)]
pub struct RequestContext {
    pub thread_id: String,
    /// The client's name (`clientInfo.name`), sent as the `originator` header.
    pub originator: String,
    /// Shared by all requests of one turn: create one per turn and clone it into each request.
    pub turn_state: TurnState,
}
