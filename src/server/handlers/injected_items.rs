//! The check of `thread/inject_items`' raw items. The reference appends whatever it is given,
//! and a malformed item then fails every later request of the thread at the provider; openturn
//! refuses the call instead, naming the item's index and the field that is wrong, and appends
//! nothing.

use serde_json::{Map, Value};

use crate::core::ResponseItem;

/// The items as history items, or a message naming the first malformed one (`items[i].field`).
pub(crate) fn checked_items(items: &[Value]) -> Result<Vec<ResponseItem>, String> {
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            checked_item(item).map_err(|problem| format!("items[{index}]{problem}"))
        })
        .collect()
}

/// One item; the error is the field path under the item and what is wrong with it.
fn checked_item(item: &Value) -> Result<ResponseItem, String> {
    let Some(object) = item.as_object() else {
        return Err(": must be an object".to_string());
    };
    let kind = string_field(object, "type")?;
    match kind {
        "message" => {
            let role = string_field(object, "role")?;
            if !["user", "assistant", "system", "developer"].contains(&role) {
                return Err(format!(
                    ".role: `{role}` is not one of user, assistant, system, developer"
                ));
            }
            check_content(object)?;
        }
        "function_call" => {
            string_field(object, "call_id")?;
            string_field(object, "name")?;
            string_field(object, "arguments")?;
        }
        "function_call_output" | "custom_tool_call_output" => {
            string_field(object, "call_id")?;
            match object.get("output") {
                Some(Value::String(_) | Value::Array(_)) => {}
                Some(_) => return Err(".output: must be a string or an array".to_string()),
                None => return Err(".output: missing".to_string()),
            }
        }
        "custom_tool_call" => {
            string_field(object, "call_id")?;
            string_field(object, "name")?;
            string_field(object, "input")?;
        }
        "reasoning" => {
            if !matches!(object.get("summary"), Some(Value::Array(_))) {
                return Err(".summary: must be an array".to_string());
            }
        }
        other => {
            return Err(format!(
                ".type: `{other}` is not an item type that can be injected (message, \
                 function_call, function_call_output, custom_tool_call, \
                 custom_tool_call_output, reasoning)"
            ))
        }
    }
    serde_json::from_value(item.clone()).map_err(|error| format!(": {error}"))
}

fn string_field<'a>(object: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    match object.get(name) {
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(format!(".{name}: must be a string")),
        None => Err(format!(".{name}: missing")),
    }
}

/// A message's `content`: a non-empty array of text or image parts.
fn check_content(object: &Map<String, Value>) -> Result<(), String> {
    let parts = match object.get("content") {
        Some(Value::Array(parts)) if !parts.is_empty() => parts,
        Some(Value::Array(_)) => return Err(".content: must not be empty".to_string()),
        Some(_) => return Err(".content: must be an array".to_string()),
        None => return Err(".content: missing".to_string()),
    };
    for (index, part) in parts.iter().enumerate() {
        let at = |problem: String| format!(".content[{index}]{problem}");
        let Some(part) = part.as_object() else {
            return Err(at(": must be an object".to_string()));
        };
        match string_field(part, "type").map_err(at)? {
            "input_text" | "output_text" => {
                string_field(part, "text").map_err(at)?;
            }
            "input_image" => {
                string_field(part, "image_url").map_err(at)?;
            }
            other => {
                return Err(at(format!(
                    ".type: `{other}` is not input_text, output_text or input_image"
                )))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_malformed_item_is_named_by_index_and_field() {
        let good = json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "hi"}]});
        assert!(checked_items(std::slice::from_ref(&good)).is_ok());
        let cases = [
            (json!(3), "items[1]: must be an object"),
            (json!({"role": "user"}), "items[1].type: missing"),
            (
                json!({"type": "message", "role": 5, "content": []}),
                "items[1].role: must be a string",
            ),
            (
                json!({"type": "message", "role": "user"}),
                "items[1].content: missing",
            ),
            (
                json!({"type": "message", "role": "user", "content": [{"type": "input_text"}]}),
                "items[1].content[0].text: missing",
            ),
            (
                json!({"type": "function_call", "call_id": "c", "name": "f"}),
                "items[1].arguments: missing",
            ),
            (
                json!({"type": "function_call_output", "call_id": "c", "output": 1}),
                "items[1].output: must be a string or an array",
            ),
        ];
        for (bad, expected) in cases {
            let error = checked_items(&[good.clone(), bad.clone()]).unwrap_err();
            assert!(error.starts_with(expected), "{bad}: {error}");
        }
        let unknown = checked_items(&[json!({"type": "garbage"})]).unwrap_err();
        assert!(unknown.starts_with("items[0].type: `garbage`"), "{unknown}");
    }
}
