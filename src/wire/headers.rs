//! Facts a provider puts in response headers (HTTP response or WebSocket handshake), read before
//! the first frame.
//!
//! Three kinds, with three destinations: the served model, rate-limit snapshots and the models
//! etag become [`ResponseEvent`]s that precede every frame event; the request id stays on the
//! stream for diagnostics (it is not model content); the sticky turn state goes back to the
//! client, which sends it on every later request of the same turn. This module only reads; it
//! knows no HTTP library, so callers pass a header lookup.

use super::event::{RateLimitSnapshot, RateLimitWindow, ResponseEvent};

/// The model that actually served the request; safety routing may pick another than asked.
pub const SERVER_MODEL_HEADER: &str = "openai-model";
/// The provider's id for this request, quoted in bug reports.
pub const REQUEST_ID_HEADER: &str = "x-request-id";
/// The version of the provider's models list.
pub const MODELS_ETAG_HEADER: &str = "x-models-etag";
/// Sticky routing: set by the provider, echoed by the client on later requests of the turn.
pub const TURN_STATE_HEADER: &str = "x-codex-turn-state";

/// What the response headers said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResponseHeaderFacts {
    /// Events to deliver before the first frame, in this order: server model, rate limits,
    /// models etag.
    pub events: Vec<ResponseEvent>,
    pub request_id: Option<String>,
    pub turn_state: Option<String>,
}

/// Reads the facts through `header`, which returns a header's value by lowercase name.
pub fn read_response_headers(header: impl Fn(&str) -> Option<String>) -> ResponseHeaderFacts {
    let mut events = Vec::new();
    if let Some(model) = header(SERVER_MODEL_HEADER).filter(|model| !model.is_empty()) {
        events.push(ResponseEvent::ServerModel(model));
    }
    if let Some(snapshot) = rate_limit_snapshot(&header) {
        events.push(ResponseEvent::RateLimits(snapshot));
    }
    if let Some(etag) = header(MODELS_ETAG_HEADER).filter(|etag| !etag.is_empty()) {
        events.push(ResponseEvent::ModelsEtag(etag));
    }
    ResponseHeaderFacts {
        events,
        request_id: header(REQUEST_ID_HEADER).filter(|id| !id.is_empty()),
        turn_state: header(TURN_STATE_HEADER).filter(|state| !state.is_empty()),
    }
}

/// `x-codex-{primary,secondary}-{used-percent,window-minutes,reset-at}`; a window counts only
/// when its used percentage parses.
fn rate_limit_snapshot(header: &impl Fn(&str) -> Option<String>) -> Option<RateLimitSnapshot> {
    let window = |prefix: &str| -> Option<RateLimitWindow> {
        let used_percent = header(&format!("x-codex-{prefix}-used-percent"))?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|percent| percent.is_finite())?;
        let number = |suffix: &str| {
            header(&format!("x-codex-{prefix}-{suffix}")).and_then(|v| v.trim().parse().ok())
        };
        Some(RateLimitWindow {
            used_percent,
            window_minutes: number("window-minutes"),
            resets_at: number("reset-at"),
        })
    };
    let snapshot = RateLimitSnapshot {
        primary: window("primary"),
        secondary: window("secondary"),
    };
    (snapshot.primary.is_some() || snapshot.secondary.is_some()).then_some(snapshot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(pairs: &[(&str, &str)]) -> ResponseHeaderFacts {
        read_response_headers(|name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        })
    }

    #[test]
    fn header_events_come_in_order_model_rate_limits_etag() {
        let read = facts(&[
            ("x-models-etag", "etag-7"),
            ("x-codex-primary-used-percent", "12.5"),
            ("x-codex-primary-window-minutes", "300"),
            ("x-codex-primary-reset-at", "1700000000"),
            ("openai-model", "gpt-5-mini"),
            ("x-request-id", "req_1"),
            ("x-codex-turn-state", "ts_1"),
        ]);
        let expected = ResponseHeaderFacts {
            events: vec![
                ResponseEvent::ServerModel("gpt-5-mini".to_string()),
                ResponseEvent::RateLimits(RateLimitSnapshot {
                    primary: Some(RateLimitWindow {
                        used_percent: 12.5,
                        window_minutes: Some(300),
                        resets_at: Some(1_700_000_000),
                    }),
                    secondary: None,
                }),
                ResponseEvent::ModelsEtag("etag-7".to_string()),
            ],
            request_id: Some("req_1".to_string()),
            turn_state: Some("ts_1".to_string()),
        };
        assert_eq!(read, expected);
    }

    #[test]
    fn absent_or_unparsable_headers_yield_no_events() {
        let read = facts(&[
            ("x-codex-primary-used-percent", "lots"),
            ("openai-model", ""),
        ]);
        assert_eq!(read, ResponseHeaderFacts::default());
    }
}
