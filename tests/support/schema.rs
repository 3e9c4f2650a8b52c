//! Shape checks against the reference's JSON Schema: `tests/fixtures/schema/core_subset.json`
//! holds the definitions of every response and notification of the core subset (extracted by
//! `extract.py` from `codex app-server generate-json-schema`, 0.169.0). A small draft-07
//! validator covers exactly the keywords that schema uses (`type`, `$ref`, `properties`,
//! `required`, `enum`, `anyOf`, `oneOf`, `allOf`, `items`, `additionalProperties`, `minimum`,
//! `minLength`); `format` and `default` are annotations.

use std::sync::OnceLock;

use serde_json::Value;

const SUBSET: &str = include_str!("../fixtures/schema/core_subset.json");

fn subset() -> &'static Value {
    static PARSED: OnceLock<Value> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(SUBSET).expect("schema"))
}

/// Checks a response to `method` (its `result`). Methods outside the subset are not checked.
pub fn check_response(method: &str, result: &Value) -> Result<(), String> {
    match subset()["responses"][method].as_str() {
        Some(definition) => validate_definition(definition, result),
        None => Ok(()),
    }
}

/// Checks a server notification's `params` (every notification must carry `emittedAtMs`).
pub fn check_notification(message: &Value) -> Result<(), String> {
    let method = message["method"].as_str().unwrap_or_default();
    if !message["emittedAtMs"].is_i64() {
        return Err(format!("{method}: no integer emittedAtMs"));
    }
    match subset()["notifications"][method].as_str() {
        Some(definition) => validate_definition(definition, &message["params"]),
        None => Err(format!(
            "notification `{method}` is not in the reference's core subset"
        )),
    }
}

/// Checks an error response's envelope: integer code, string message.
pub fn check_error(error: &Value) -> Result<(), String> {
    if error["code"].is_i64() && error["message"].is_string() {
        Ok(())
    } else {
        Err(format!("malformed error object {error}"))
    }
}

pub fn validate_definition(name: &str, value: &Value) -> Result<(), String> {
    let schema = &subset()["definitions"][name];
    if schema.is_null() {
        return Err(format!("no definition {name}"));
    }
    validate(schema, value, name)
}

/// Checks `value` against a schema of another document whose `$ref`s are already inlined (the
/// exec events schema is checked this way; see `tests/exec_support`).
pub fn validate_inlined(schema: &Value, value: &Value) -> Result<(), String> {
    validate(schema, value, "$")
}

fn resolve(reference: &str) -> Result<&'static Value, String> {
    let name = reference
        .strip_prefix("#/definitions/")
        .ok_or_else(|| format!("unsupported $ref {reference}"))?;
    let schema = &subset()["definitions"][name];
    if schema.is_null() {
        return Err(format!("unresolved $ref {reference}"));
    }
    Ok(schema)
}

fn validate(schema: &Value, value: &Value, path: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        // `true` / `{}`-like schemas accept everything.
        return Ok(());
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        validate(resolve(reference)?, value, path)?;
    }
    if let Some(types) = schema.get("type") {
        check_type(types, value, path)?;
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            return Err(format!("{path}: {value} is not one of {options:?}"));
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for sub in all {
            validate(sub, value, path)?;
        }
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        let errors: Vec<String> = any
            .iter()
            .filter_map(|s| validate(s, value, path).err())
            .collect();
        if errors.len() == any.len() {
            return Err(format!("{path}: matches no anyOf branch: {errors:?}"));
        }
    }
    if let Some(one) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = one
            .iter()
            .filter(|s| validate(s, value, path).is_ok())
            .count();
        if matching != 1 {
            let errors: Vec<String> = one
                .iter()
                .filter_map(|s| validate(s, value, path).err())
                .collect();
            return Err(format!(
                "{path}: {matching} oneOf branches match {value}: {errors:?}"
            ));
        }
    }
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
        if value.as_f64().is_some_and(|n| n < min) {
            return Err(format!("{path}: {value} is below {min}"));
        }
    }
    if let Some(min) = schema.get("minLength").and_then(Value::as_u64) {
        if value
            .as_str()
            .is_some_and(|s| (s.chars().count() as u64) < min)
        {
            return Err(format!("{path}: string shorter than {min}"));
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (index, item) in array.iter().enumerate() {
            validate(items, item, &format!("{path}[{index}]"))?;
        }
    }
    if let Some(object) = value.as_object() {
        validate_object(schema, object, path)?;
    }
    Ok(())
}

fn validate_object(
    schema: &serde_json::Map<String, Value>,
    object: &serde_json::Map<String, Value>,
    path: &str,
) -> Result<(), String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = required.as_str().unwrap_or_default();
        if !object.contains_key(key) {
            return Err(format!("{path}: missing required `{key}`"));
        }
    }
    for (key, value) in object {
        let child = format!("{path}.{key}");
        match properties.and_then(|p| p.get(key)) {
            Some(property) => validate(property, value, &child)?,
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => return Err(format!("{child}: not allowed")),
                Some(extra @ Value::Object(_)) => validate(extra, value, &child)?,
                _ => {}
            },
        }
    }
    Ok(())
}

fn check_type(types: &Value, value: &Value, path: &str) -> Result<(), String> {
    let names: Vec<&str> = match types {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => return Ok(()),
    };
    let ok = names.iter().any(|name| match *name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        _ => true,
    });
    if ok {
        Ok(())
    } else {
        Err(format!("{path}: {value} is not of type {names:?}"))
    }
}
