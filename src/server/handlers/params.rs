//! Checks of request params that `thread/start` and `turn/start` share, so neither handler
//! imports the other for them.

use super::super::errors::HandlerError;

/// A client's service tier as the provider spells it: `fast` is the priority tier; other names
/// (`flex`, `priority`, …) pass through. An empty or malformed name is refused, naming `field`.
pub(super) fn upstream_service_tier(
    tier: Option<&str>,
    field: &str,
) -> Result<Option<String>, HandlerError> {
    let Some(tier) = tier else {
        return Ok(None);
    };
    let valid = !tier.is_empty()
        && tier
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err(HandlerError::InvalidParams(format!(
            "`{field}`: `{tier}` is not a service tier name (e.g. `flex` or `fast`)"
        )));
    }
    Ok(Some(match tier {
        "fast" => "priority".to_string(),
        other => other.to_string(),
    }))
}

/// An empty `model` would only fail later, at the provider, with a less useful message.
pub(super) fn check_model_param(model: Option<&str>) -> Result<(), HandlerError> {
    match model {
        Some(model) if model.trim().is_empty() => Err(HandlerError::InvalidParams(
            "`model` must not be empty: name a model, or leave `model` out to use the \
             configured one"
                .to_string(),
        )),
        _ => Ok(()),
    }
}
