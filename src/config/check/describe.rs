//! How an error describes a bad value: what the key expected, in words, and what was given,
//! shortened and never shown when the key may hold a secret.

use toml::Value;

use super::known::Expect;

pub(super) fn expected(expect: Expect) -> String {
    match expect {
        Expect::Text => "a string".to_string(),
        Expect::NonEmptyText => "a non-empty string".to_string(),
        Expect::Bool => "true or false".to_string(),
        Expect::Count(max) => format!("a whole number from 0 to {max}"),
        Expect::Integer => "a whole number".to_string(),
        Expect::Seconds => "a number of seconds, 0 or more".to_string(),
        Expect::OneOf(options) => format!("one of {}", options.join(", ")),
        Expect::TextList => "an array of strings".to_string(),
        Expect::TableList(_) => "an array of tables".to_string(),
        Expect::Keys(..) | Expect::MapOf(_) | Expect::Features => "a table".to_string(),
        Expect::Switch => "true or false, or a table of the tool's options".to_string(),
    }
}

/// The value as TOML, short, and never the value of a key that may hold a secret (a header
/// value or anything named like a key or token): the error goes to stderr and to clients.
pub(super) fn shown(path: &str, value: &Value) -> String {
    let secret = path.split('.').any(|part| {
        let part = part.to_ascii_lowercase();
        part == "http_headers"
            || part == "env"
            || ["key", "token", "secret", "password", "authorization"]
                .iter()
                .any(|word| part.contains(word) && part != "env_key")
    });
    if secret {
        return "a value (not shown)".to_string();
    }
    let text = value.to_string();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}
