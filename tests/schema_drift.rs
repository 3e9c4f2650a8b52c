//! The checked-in `schema/` is exactly what `openturn schema` generates from `src/protocol/`:
//! a protocol change without regenerating it fails here.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

#[test]
fn checked_in_schema_matches_the_protocol_types() {
    let out = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(support::openturn_bin())
        .arg("schema")
        .arg("--out")
        .arg(out.path())
        .status()
        .unwrap();
    assert!(status.success());
    let file = openturn::server::schema::SCHEMA_FILE;
    let generated = std::fs::read_to_string(out.path().join(file)).unwrap();
    let checked_in = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("schema")
            .join(file),
    )
    .unwrap_or_default();
    assert!(
        generated == checked_in,
        "schema/{file} is stale: run `cargo run -- schema --out schema` and commit the result"
    );
    let parsed: serde_json::Value = serde_json::from_str(&generated).unwrap();
    assert!(parsed["methods"]["thread/list"]["params"].is_object());
    assert!(parsed["definitions"]["Thread"].is_object());
}
