//! The syntax of overrides: a `-c key=value` flag (a TOML value, else a plain string), a dotted
//! key set into a table, and a thread's JSON `config` values as TOML.

use toml::{Table, Value};

use super::error::ConfigError;

/// `key=value` → (key, TOML value); a value that is not TOML is taken as a string.
pub fn parse_override(raw: &str) -> Result<(String, Value), ConfigError> {
    let (key, value) = raw
        .split_once('=')
        .ok_or_else(|| ConfigError::BadOverride(raw.to_string()))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(ConfigError::BadOverride(raw.to_string()));
    }
    let value = value.trim();
    let parsed = format!("v = {value}")
        .parse::<Table>()
        .ok()
        .and_then(|mut table| table.remove("v"))
        .unwrap_or_else(|| Value::String(value.to_string()));
    Ok((key.to_string(), parsed))
}

pub(super) fn set_dotted(table: &mut Table, key: &str, value: Value) -> Result<(), ConfigError> {
    let parts: Vec<&str> = key.split('.').collect();
    let (last, parents) = parts
        .split_last()
        .ok_or_else(|| ConfigError::BadOverride(key.to_string()))?;
    let mut current = table;
    for part in parents {
        let entry = current
            .entry(part.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        current = match entry {
            Value::Table(inner) => inner,
            _ => {
                return Err(ConfigError::Invalid(format!(
                    "`{key}`: `{part}` is not a table"
                )))
            }
        };
    }
    current.insert(last.to_string(), value);
    Ok(())
}

pub(super) fn json_to_toml(value: &serde_json::Value) -> Option<Value> {
    Some(match value {
        serde_json::Value::Null => return None,
        serde_json::Value::Bool(b) => Value::Boolean(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Float(n.as_f64()?),
        },
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(items) => {
            Value::Array(items.iter().filter_map(json_to_toml).collect())
        }
        serde_json::Value::Object(map) => Value::Table(
            map.iter()
                .filter_map(|(k, v)| Some((k.clone(), json_to_toml(v)?)))
                .collect(),
        ),
    })
}
