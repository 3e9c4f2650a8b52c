//! Wall-clock time as the protocol and rollouts carry it. Its own file so that every part of
//! `core` can read the clock without importing `core/mod.rs`, which declares them all.

/// Unix seconds now.
pub fn now_unix_seconds() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Unix milliseconds now.
pub fn now_unix_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
