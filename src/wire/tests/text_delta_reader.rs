//! The dedicated text-delta reader answers exactly as the general path, or not at all.
//!
//! Invariant: for every frame, `text_delta(frame)` is `None` or the event `map_frame_general`
//! maps the frame to. Checked on hand-picked frames (escapes, duplicates, wrong member types,
//! odd numbers, nested values, broken JSON) and on thousands of random flat objects assembled
//! from the same parts. The reader must also actually answer for the frames providers send.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::super::event::ResponseEvent;
use super::super::map::{map_frame_general, FrameOutcome};
use super::super::text_delta::text_delta;

/// Fails unless the reader's answer (if any) is the general path's.
fn agrees(frame: &str) -> Option<ResponseEvent> {
    let fast = text_delta(frame);
    if let Some(event) = &fast {
        assert_eq!(
            FrameOutcome::Event(event.clone()),
            map_frame_general(frame),
            "the reader and the general path disagree on {frame}"
        );
    }
    fast
}

fn delta(item_id: &str, delta: &str) -> Option<ResponseEvent> {
    Some(ResponseEvent::OutputTextDelta {
        item_id: item_id.to_string(),
        delta: delta.to_string(),
    })
}

#[test]
fn the_reader_answers_for_the_frames_providers_send() {
    let answered = [
        (
            r#"{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello","logprobs":[],"obfuscation":"x1"}"#,
            delta("msg_1", "Hello"),
        ),
        (
            r#"{"type":"response.output_text.delta","item_id":"msg_1","delta":"a \"quote\"\n\u00e9\ud83d\ude00"}"#,
            delta("msg_1", "a \"quote\"\né😀"),
        ),
        (
            r#"{"type":"response.output_text.delt\u0061","item_id":"m","delta":"x"}"#,
            delta("m", "x"),
        ),
        (
            " {\n \"delta\" : \"tok \" , \"item_id\":\"m\", \"type\":\"response.output_text.delta\" }\r\n",
            delta("m", "tok "),
        ),
        (
            r#"{"type":"response.output_text.delta","item_id":"m","delta":"","content_index":null,"extra":{},"n":-1.5e3,"b":true,"z":null}"#,
            delta("m", ""),
        ),
    ];
    for (frame, expected) in answered {
        assert_eq!(agrees(frame), expected, "{frame}");
    }
}

#[test]
fn the_reader_leaves_every_doubtful_frame_to_the_general_path() {
    let left = [
        r#"{"type":"response.output_text.delta","item_id":"m"}"#,
        r#"{"type":"response.output_text.delta","delta":"x"}"#,
        r#"{"type":"response.output_text.delta","item_id":null,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","item_id":7,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","item_id":"n","delta":"x"}"#,
        r#"{"type":"response.output_text.delta","type":"response.output_text.delta","item_id":"m","delta":"x"}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x","content_index":1,"content_index":2}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x","content_index":"0"}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x","content_index":1.0}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x","content_index":99999999999999999999}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x","text":5}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x","error":null}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x","logprobs":[{"a":1}]}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x","n":01}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x","n":1.}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x","s":"\q"}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x",}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x"} trailing"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"x""#,
        "{\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"delta\":\"raw\ttab\"}",
        r#"{"type":"response.output_text.done","item_id":"m","text":"x"}"#,
        r#"{"typ\u0065":"response.output_text.delta","item_id":"m","delta":"x"}"#,
        r#"["type","response.output_text.delta"]"#,
        "[DONE]",
        "{}",
        "",
    ];
    for frame in left {
        assert_eq!(agrees(frame), None, "{frame}");
    }
}

#[test]
fn random_flat_frames_read_the_same_on_both_paths() {
    let keys = [
        "\"type\"",
        "\"item_id\"",
        "\"delta\"",
        "\"content_index\"",
        "\"summary_index\"",
        "\"text\"",
        "\"call_id\"",
        "\"code\"",
        "\"message\"",
        "\"error\"",
        "\"item\"",
        "\"sequence_number\"",
        "\"logprobs\"",
        "\"obfuscation\"",
        "\"output_index\"",
    ];
    let values = [
        "\"response.output_text.delta\"",
        "\"response.output_text.delta\"",
        "\"msg_1\"",
        "\"tok \"",
        "\"esc \\\" \\\\ \\n \\u00e9 \\ud83d\\ude00\"",
        "\"bad \\x\"",
        "\"\"",
        "0",
        "-12",
        "3.25",
        "1e5",
        "-0",
        "012",
        "1234567890123456789",
        "true",
        "false",
        "null",
        "[]",
        "{}",
        "[ ]",
        "[1]",
        "{\"a\":1}",
        "nul",
    ];
    let mut rng = StdRng::seed_from_u64(0x7e47_de17a);
    let mut answered = 0;
    for _ in 0..20_000 {
        let mut members: Vec<String> = vec![
            format!("\"type\":{}", values[rng.gen_range(0..2)]),
            "\"item_id\":\"msg_1\"".to_string(),
            "\"delta\":\"tok \"".to_string(),
        ];
        for _ in 0..rng.gen_range(0..6) {
            let key = keys.choose(&mut rng).unwrap();
            let value = values.choose(&mut rng).unwrap();
            members.push(format!("{key}:{value}"));
        }
        members.shuffle(&mut rng);
        let space = [" ", "", "\n", ""].choose(&mut rng).unwrap();
        let mut frame = format!("{{{space}{}{space}}}", members.join(&format!(",{space}")));
        if rng.gen_range(0..20) == 0 {
            let cut = rng.gen_range(0..frame.len());
            frame.truncate(cut);
        }
        if agrees(&frame).is_some() {
            answered += 1;
        }
    }
    // About a fifth of the random frames carry only members the reader understands (about 4,400
    // with this seed): it must take them, not leave everything to the general path.
    assert!(
        answered > 2_000,
        "the reader answered only {answered} of 20000"
    );
}
