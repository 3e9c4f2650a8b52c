//! The schema checker used by every end-to-end test really rejects bad shapes (a checker that
//! accepts everything would make all shape checks vacuous).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use support::schema::validate_definition;

#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let good = serde_json::json!({"threadId": "t", "status": {"type": "idle"}});
    assert_eq!(
        validate_definition("ThreadStatusChangedNotification", &good),
        Ok(())
    );
    let bad_enum = serde_json::json!({"threadId": "t", "status": {"type": "sleeping"}});
    assert!(validate_definition("ThreadStatusChangedNotification", &bad_enum).is_err());
    let missing = serde_json::json!({"status": {"type": "idle"}});
    assert!(validate_definition("ThreadStatusChangedNotification", &missing).is_err());
    let wrong_type = serde_json::json!({"threadId": 5, "status": {"type": "idle"}});
    assert!(validate_definition("ThreadStatusChangedNotification", &wrong_type).is_err());
}

#[test]
fn responses_and_notifications_are_checked_by_method() {
    use serde_json::json;
    use support::schema::{check_notification, check_response};
    assert!(check_response("model/list", &json!({"data": [{"id": "x"}]})).is_err());
    assert!(check_response("thread/unsubscribe", &json!({"status": "gone"})).is_err());
    assert!(check_response("thread/unsubscribe", &json!({"status": "notLoaded"})).is_ok());
    let closed = json!({"method": "thread/closed", "params": {"threadId": "t"}, "emittedAtMs": 1});
    assert!(check_notification(&closed).is_ok());
    let no_time = json!({"method": "thread/closed", "params": {"threadId": "t"}});
    assert!(check_notification(&no_time).is_err());
    let unknown = json!({"method": "thread/exploded", "params": {}, "emittedAtMs": 1});
    assert!(check_notification(&unknown).is_err());
}
