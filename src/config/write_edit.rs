//! One edit of a config.toml document, made with `toml_edit` so that everything the edit does
//! not touch (comments, blank lines, key order, quoting, inline comments after the edited value)
//! stays exactly as the user wrote it. Knows TOML documents and JSON values, not files: the
//! writer ([`super::write`]) reads, checks and replaces the file.

use serde_json::Value as Json;
use toml_edit::{ArrayOfTables, DocumentMut, InlineTable, Item, Table, TableLike, Value};

use super::write_error::{ConfigWriteError, MergeStrategy};

/// The segments of a dotted key path; an empty path or segment is refused as the reference
/// refuses it.
pub(super) fn key_segments(key_path: &str) -> Result<Vec<&str>, ConfigWriteError> {
    if key_path.trim().is_empty() {
        return Err(ConfigWriteError::Validation(
            "keyPath must not be empty".to_string(),
        ));
    }
    let segments: Vec<&str> = key_path.split('.').collect();
    if segments.iter().any(|segment| segment.trim().is_empty()) {
        return Err(ConfigWriteError::Validation(
            "keyPath segments must not be empty".to_string(),
        ));
    }
    Ok(segments)
}

/// Sets (or, for `null`, removes) the value at `segments`. `Replace` puts `value` in place of
/// whatever was there; `Upsert` merges an object into an existing table key by key (a `null`
/// member removes that key) and replaces anything else.
pub(super) fn apply(
    document: &mut DocumentMut,
    segments: &[&str],
    value: &Json,
    merge: MergeStrategy,
) -> Result<(), ConfigWriteError> {
    let Some((last, parents)) = segments.split_last() else {
        return Ok(());
    };
    let root: &mut dyn TableLike = document.as_table_mut();
    if value.is_null() {
        // Removing a key under a parent that does not exist leaves nothing to do.
        if let Some(parent) = existing_parent(root, parents) {
            parent.remove(last);
        }
        return Ok(());
    }
    let (parent, inline) = parent_table(root, parents, segments)?;
    set(parent, last, value, merge, inline);
    Ok(())
}

/// The table at `parents`, if every step exists and is a table.
fn existing_parent<'a>(
    mut table: &'a mut dyn TableLike,
    parents: &[&str],
) -> Option<&'a mut dyn TableLike> {
    for segment in parents {
        table = table.get_mut(segment)?.as_table_like_mut()?;
    }
    Some(table)
}

/// The table at `parents`, creating missing ones; and whether it is written inline (then
/// anything put into it must be inline too). A step through a value that is not a table is
/// refused, naming the key path and the step.
fn parent_table<'a>(
    mut table: &'a mut dyn TableLike,
    parents: &[&str],
    segments: &[&str],
) -> Result<(&'a mut dyn TableLike, bool), ConfigWriteError> {
    let mut inline = false;
    for (index, segment) in parents.iter().enumerate() {
        if !table.contains_key(segment) {
            table.insert(segment, empty_table(inline));
        }
        let not_a_table = || {
            ConfigWriteError::Validation(format!(
                "cannot set `{}`: `{}` is not a table",
                segments.join("."),
                parents[..=index].join(".")
            ))
        };
        let item = table.get_mut(segment).ok_or_else(not_a_table)?;
        inline = inline || matches!(item, Item::Value(_));
        table = item.as_table_like_mut().ok_or_else(not_a_table)?;
    }
    Ok((table, inline))
}

/// A table made only to hold what is put into it: implicit, so a table holding nothing but
/// other tables gets no header of its own (`[mcp_servers.x]`, not also `[mcp_servers]`).
fn empty_table(inline: bool) -> Item {
    if inline {
        Item::Value(Value::InlineTable(InlineTable::new()))
    } else {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    }
}

fn set(parent: &mut dyn TableLike, key: &str, value: &Json, merge: MergeStrategy, inline: bool) {
    if value.is_null() {
        parent.remove(key);
        return;
    }
    if let (MergeStrategy::Upsert, Json::Object(fields)) = (merge, value) {
        if let Some(existing) = parent.get_mut(key) {
            let inner_inline = inline || matches!(existing, Item::Value(_));
            if let Some(existing_table) = existing.as_table_like_mut() {
                for (name, member) in fields {
                    set(existing_table, name, member, merge, inner_inline);
                }
                return;
            }
        }
    }
    let Some(mut new_item) = to_item(value, inline) else {
        return;
    };
    match parent.get_mut(key) {
        Some(existing) => {
            keep_decoration(existing, &mut new_item);
            *existing = new_item;
        }
        None => {
            parent.insert(key, new_item);
        }
    }
}

/// The replaced item's comments and place carry over to its replacement: a comment after
/// `model = "x"  # why` or above a `[table]` header belongs to the key, not to the old value.
fn keep_decoration(old: &Item, new: &mut Item) {
    match (old, new) {
        (Item::Value(old), Item::Value(new)) => *new.decor_mut() = old.decor().clone(),
        (Item::Table(old), Item::Table(new)) => {
            *new.decor_mut() = old.decor().clone();
            if let Some(position) = old.position() {
                new.set_position(position);
            }
        }
        _ => {}
    }
}

/// A JSON value as a TOML item: objects become `[tables]` and arrays of objects `[[tables]]`
/// where the file allows them (not inside an inline table), everything else a value. TOML has
/// no null: `null` members and elements are left out.
fn to_item(value: &Json, inline: bool) -> Option<Item> {
    match value {
        Json::Null => None,
        Json::Object(fields) if !inline => {
            let mut table = Table::new();
            for (name, member) in fields {
                if let Some(item) = to_item(member, false) {
                    table.insert(name, item);
                }
            }
            Some(Item::Table(table))
        }
        Json::Array(items) if !inline && !items.is_empty() && items.iter().all(Json::is_object) => {
            let mut tables = ArrayOfTables::new();
            for item in items {
                if let Some(Item::Table(table)) = to_item(item, false) {
                    tables.push(table);
                }
            }
            Some(Item::ArrayOfTables(tables))
        }
        other => to_value(other).map(Item::Value),
    }
}

fn to_value(value: &Json) -> Option<Value> {
    Some(match value {
        Json::Null => return None,
        Json::Bool(flag) => Value::from(*flag),
        Json::Number(number) => match number.as_i64() {
            Some(integer) => Value::from(integer),
            None => Value::from(number.as_f64()?),
        },
        Json::String(text) => Value::from(text.as_str()),
        Json::Array(items) => Value::Array(items.iter().filter_map(to_value).collect()),
        Json::Object(fields) => {
            let mut table = InlineTable::new();
            for (name, member) in fields {
                if let Some(member) = to_value(member) {
                    table.insert(name, member);
                }
            }
            Value::InlineTable(table)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edited(text: &str, key: &str, value: Json, merge: MergeStrategy) -> String {
        let mut document: DocumentMut = text.parse().unwrap();
        apply(&mut document, &key_segments(key).unwrap(), &value, merge).unwrap();
        document.to_string()
    }

    #[test]
    fn a_replaced_value_keeps_its_comments_and_everything_else_stays() {
        let text = "# top\nmodel = \"a\"  # why\n\n[features]\n# keep\nx = true\n";
        assert_eq!(
            edited(text, "model", json!("b"), MergeStrategy::Replace),
            "# top\nmodel = \"b\"  # why\n\n[features]\n# keep\nx = true\n"
        );
    }

    #[test]
    fn upsert_merges_tables_and_replace_swaps_them() {
        let text = "[mcp_servers.a]\ncommand = \"x\"\nargs = [\"1\"]\n";
        assert_eq!(
            edited(
                text,
                "mcp_servers.a",
                json!({"args": ["2"], "cwd": "/"}),
                MergeStrategy::Upsert
            ),
            "[mcp_servers.a]\ncommand = \"x\"\nargs = [\"2\"]\ncwd = \"/\"\n"
        );
        assert_eq!(
            edited(
                text,
                "mcp_servers.a",
                json!({"command": "y"}),
                MergeStrategy::Replace
            ),
            "[mcp_servers.a]\ncommand = \"y\"\n"
        );
    }

    #[test]
    fn new_tables_get_one_header_and_null_removes() {
        assert_eq!(
            edited(
                "",
                "mcp_servers.b.command",
                json!("z"),
                MergeStrategy::Replace
            ),
            "[mcp_servers.b]\ncommand = \"z\"\n"
        );
        assert_eq!(
            edited("a = 1\nb = 2\n", "a", Json::Null, MergeStrategy::Replace),
            "b = 2\n"
        );
        assert_eq!(
            edited("b = 2\n", "x.y", Json::Null, MergeStrategy::Replace),
            "b = 2\n"
        );
    }

    #[test]
    fn bad_paths_are_refused() {
        assert!(key_segments("").is_err());
        assert!(key_segments("a..b").is_err());
        let mut document: DocumentMut = "a = 1\n".parse().unwrap();
        let error = apply(
            &mut document,
            &["a", "b"],
            &json!(1),
            MergeStrategy::Replace,
        )
        .unwrap_err();
        assert!(error.to_string().contains("`a` is not a table"), "{error}");
    }
}
