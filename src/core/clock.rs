//! Wall-clock timestamps as the protocol and the rollout carry them. A file of its own so that
//! the modules that stamp events import it, not `core/mod.rs`, which imports them.

/// Unix seconds now.
pub(crate) fn now_unix_seconds() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Unix milliseconds now.
pub(crate) fn now_unix_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
