//! Provider error codes → `ApiError` (docs/PROTOCOL.md §10).

use std::time::Duration;

use super::super::error::{parse_retry_after, ApiError};

#[test]
fn provider_error_codes_map_to_the_classification_table() {
    let table: Vec<(Option<&str>, &str, ApiError)> = vec![
        (
            Some("context_length_exceeded"),
            "too long",
            ApiError::ContextWindowExceeded("too long".to_string()),
        ),
        (
            Some("insufficient_quota"),
            "no credit",
            ApiError::QuotaExceeded("no credit".to_string()),
        ),
        (
            Some("usage_not_included"),
            "plan",
            ApiError::UsageNotIncluded,
        ),
        (
            Some("cyber_policy"),
            "flagged: details",
            ApiError::CyberPolicy("flagged: details".to_string()),
        ),
        (
            Some("invalid_prompt"),
            "bad prompt",
            ApiError::InvalidRequest("bad prompt".to_string()),
        ),
        (
            Some("bio_policy"),
            "bio",
            ApiError::InvalidRequest("bio".to_string()),
        ),
        (
            Some("server_is_overloaded"),
            "busy",
            ApiError::ServerOverloaded("busy".to_string()),
        ),
        (
            Some("slow_down"),
            "slow",
            ApiError::RateLimited {
                message: "slow".to_string(),
                delay: None,
            },
        ),
        (
            Some("rate_limit_exceeded"),
            "Please try again in 11.054s.",
            ApiError::RateLimited {
                message: "Please try again in 11.054s.".to_string(),
                delay: Some(Duration::from_millis(11_054)),
            },
        ),
        (
            Some("rate_limit_exceeded"),
            "try again in 250ms",
            ApiError::RateLimited {
                message: "try again in 250ms".to_string(),
                delay: Some(Duration::from_millis(250)),
            },
        ),
        (
            Some("rate_limit_exceeded"),
            "no hint here",
            ApiError::RateLimited {
                message: "no hint here".to_string(),
                delay: None,
            },
        ),
        (
            Some("server_error"),
            "try again in 3s",
            ApiError::Retryable {
                message: "try again in 3s".to_string(),
                delay: None,
            },
        ),
        (
            None,
            "mystery",
            ApiError::Retryable {
                message: "mystery".to_string(),
                delay: None,
            },
        ),
    ];
    for (code, message, expected) in table {
        assert_eq!(ApiError::classify(code, message), expected, "{code:?}");
    }
}

#[test]
fn cyber_policy_with_an_empty_message_gets_a_fixed_fallback() {
    let ApiError::CyberPolicy(message) = ApiError::classify(Some("cyber_policy"), "") else {
        panic!("not a cyber policy error");
    };
    assert!(!message.is_empty());
}

#[test]
fn only_transient_classes_are_retryable() {
    assert!(ApiError::classify(Some("slow_down"), "").is_retryable());
    assert!(ApiError::classify(None, "").is_retryable());
    for code in [
        "context_length_exceeded",
        "insufficient_quota",
        "usage_not_included",
        "cyber_policy",
        "invalid_prompt",
        "server_is_overloaded",
    ] {
        assert!(!ApiError::classify(Some(code), "").is_retryable(), "{code}");
    }
}

#[test]
fn retry_after_parsing_is_narrow() {
    assert_eq!(
        parse_retry_after("Try again in 2s"),
        Some(Duration::from_secs(2))
    );
    assert_eq!(
        parse_retry_after("try again in 1.5 s"),
        Some(Duration::from_millis(1500))
    );
    assert_eq!(parse_retry_after("try again in a minute"), None);
    assert_eq!(parse_retry_after("try again in 5 minutes"), None);
    assert_eq!(parse_retry_after("try again in -1s"), None);
    assert_eq!(parse_retry_after("try again in 1e999s"), None);
}
