//! `view_image` and the hosted `web_search`, through the real binary: a provider's
//! `web_search_call` becomes a `webSearch` item and is replayed in the next request; the model
//! looks at a workspace image (scaled to fit 2048 pixels) that the next request carries as an
//! `input_image` data URL, the client sees an `imageView` item, and a missing or non-image file
//! is a plain error for the model. Both items read the same from `thread/read` afterwards.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use base64::Engine;
use openturn::mock_provider::{ResponseBuilder, Script, Usage};
use serde_json::{json, Value};
use turn_support::*;

fn png(width: u32, height: u32) -> Vec<u8> {
    let picture = image::RgbImage::from_pixel(width, height, image::Rgb([10, 200, 10]));
    let mut out = std::io::Cursor::new(Vec::new());
    picture.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

fn input_items<'a>(body: &'a Value, kind: &str) -> Vec<&'a Value> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == kind)
        .collect()
}

fn output_of<'a>(body: &'a Value, call_id: &str) -> &'a Value {
    input_items(body, "function_call_output")
        .into_iter()
        .find(|item| item["call_id"] == call_id)
        .map(|item| &item["output"])
        .unwrap_or_else(|| panic!("no output for {call_id} in {body:#}"))
}

#[tokio::test]
async fn searches_and_viewed_images_reach_the_client_and_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    std::fs::write(cwd.join("wide.png"), png(3000, 1000)).unwrap();
    std::fs::write(cwd.join("notes.txt"), "not a picture").unwrap();
    let search = json!({"type": "web_search_call", "id": "ws_1", "status": "completed",
        "action": {"type": "search", "query": "rust image crate",
                   "queries": ["rust image crate"]}});
    let first = ResponseBuilder::new("r1")
        .created()
        .output_item_added(json!({"type": "web_search_call", "id": "ws_1",
            "status": "in_progress"}))
        .output_item_done(search.clone())
        .function_call_json("fc_1", "call_v", "view_image", json!({"path": "wide.png"}))
        .completed(Usage::small(), None)
        .build();
    let missing = cwd.join("missing.png").display().to_string();
    let second = ResponseBuilder::new("r2")
        .created()
        .function_call_json("fc_2", "call_m", "view_image", json!({"path": missing}))
        .function_call_json("fc_3", "call_t", "view_image", json!({"path": "notes.txt"}))
        .completed(Usage::small(), None)
        .build();
    let third = message_reply("r3", "msg_3", &["It is green."]);
    let params = json!({"approvalPolicy": "never", "sandbox": "workspace-write",
        "model": "gpt-5", "cwd": cwd.display().to_string()});
    let mut s = session(Script::new([first, second, third]), &[], params).await;
    let turn = s.run_turn("look").await;
    single_turn_end(&turn, "completed");

    let started = items_of(&turn, "item/started", "webSearch");
    assert_eq!(started.len(), 1, "{turn:#?}");
    let searches = items_of(&turn, "item/completed", "webSearch");
    assert_eq!(searches.len(), 1, "{turn:#?}");
    assert_eq!(searches[0]["id"], "ws_1");
    assert_eq!(searches[0]["query"], "rust image crate");
    assert_eq!(
        searches[0]["action"],
        json!({"type": "search", "query": "rust image crate", "queries": ["rust image crate"]})
    );
    assert_eq!(searches[0]["results"], Value::Null);
    let views = items_of(&turn, "item/completed", "imageView");
    assert_eq!(views.len(), 1, "only the image that loaded: {turn:#?}");
    assert_eq!(views[0]["id"], "call_v");
    assert_eq!(views[0]["path"], cwd.join("wide.png").display().to_string());

    let bodies = s.bodies(3).await;
    // The search is replayed as the provider sent it.
    assert_eq!(input_items(&bodies[1], "web_search_call"), vec![&search]);
    let image = output_of(&bodies[1], "call_v");
    let parts = image.as_array().unwrap_or_else(|| panic!("{image}"));
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0]["type"], "input_image");
    assert_eq!(parts[0]["detail"], "high");
    let url = parts[0]["image_url"].as_str().unwrap();
    let data = url.strip_prefix("data:image/png;base64,").unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let sent = image::load_from_memory(&bytes).unwrap();
    assert_eq!((sent.width(), sent.height()), (2048, 683));
    let not_found = output_of(&bodies[2], "call_m").as_str().unwrap();
    assert!(
        not_found.contains("missing.png") && not_found.contains("No such file"),
        "{not_found}"
    );
    let not_image = output_of(&bodies[2], "call_t").as_str().unwrap();
    assert!(not_image.contains("not an image"), "{not_image}");
    // The image is still in the history the third request replays.
    assert!(output_of(&bodies[2], "call_v").is_array());

    let read = s
        .daemon
        .ok(
            "thread/read",
            json!({"threadId": s.thread_id, "includeTurns": true}),
        )
        .await;
    let items = read["thread"]["turns"][0]["items"].as_array().unwrap();
    let kinds: Vec<&str> = items.iter().filter_map(|i| i["type"].as_str()).collect();
    assert_eq!(
        kinds,
        ["userMessage", "webSearch", "imageView", "agentMessage"],
        "{read:#}"
    );
    assert_eq!(items[1]["action"], searches[0]["action"]);
    assert_eq!(items[2]["path"], views[0]["path"]);
}
