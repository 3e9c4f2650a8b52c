//! The schema checker used by every end-to-end test really rejects bad shapes (a checker that
//! accepts everything would make all shape checks vacuous).

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
