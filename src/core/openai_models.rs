//! The OpenAI models openturn knows by name: what `model/list` offers for the OpenAI provider,
//! and what a known model's requests and compaction rely on (its context window, its reasoning
//! efforts, the `apply_patch` form it was trained on). The facts follow the provider's own
//! catalogue as the reference CLI ships it; the wording is openturn's.
//!
//! A model not named here is still usable: `models.rs` falls back to its family (or to the
//! configuration) for everything this table would have said.

use super::tool_set::ToolFamily;

/// One model of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    pub id: &'static str,
    pub display_name: &'static str,
    pub description: &'static str,
    /// The whole context window in tokens; openturn uses 95% of it (the rest is the model's
    /// own overhead).
    pub context_window: i64,
    /// Reasoning efforts it accepts, lowest first; empty for a model that does not reason.
    pub efforts: &'static [&'static str],
    /// The effort it uses when the thread names none (`none` for a model that does not reason).
    pub default_effort: &'static str,
    /// Whether it takes `apply_patch` as a freeform (custom, grammar) tool; otherwise as a JSON
    /// function tool.
    pub freeform_apply_patch: bool,
    /// Left out of a picker unless hidden models are asked for: older models kept for threads
    /// that use them.
    pub hidden: bool,
    /// The tool set it was trained on (`tool_set.rs`).
    pub tool_family: ToolFamily,
}

const LOW_TO_ULTRA: &[&str] = &["low", "medium", "high", "xhigh", "max", "ultra"];
const LOW_TO_MAX: &[&str] = &["low", "medium", "high", "xhigh", "max"];
const LOW_TO_XHIGH: &[&str] = &["low", "medium", "high", "xhigh"];
const MINIMAL_TO_HIGH: &[&str] = &["minimal", "low", "medium", "high"];
const LOW_TO_HIGH: &[&str] = &["low", "medium", "high"];
const NO_REASONING: &[&str] = &[];

/// Newest first, as a picker shows them.
pub const OPENAI_MODELS: &[KnownModel] = &[
    KnownModel {
        id: "gpt-6.2-sol",
        display_name: "GPT-6.2 Sol",
        description: "The quick everyday model of the GPT-6.2 line, for coding and general work.",
        context_window: 500_000,
        efforts: LOW_TO_ULTRA,
        default_effort: "low",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-6.2-astra",
        display_name: "GPT-6.2 Astra",
        description: "The most capable model of the GPT-6.2 line, for large and difficult tasks.",
        context_window: 272_000,
        efforts: LOW_TO_ULTRA,
        default_effort: "low",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-6.1-terra",
        display_name: "GPT-6.1 Terra",
        description: "A lean GPT-6.1 model that is strong with images and screens.",
        context_window: 500_000,
        efforts: LOW_TO_ULTRA,
        default_effort: "low",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-6.1-sol",
        display_name: "GPT-6.1 Sol",
        description: "The everyday model of the GPT-6.1 line.",
        context_window: 500_000,
        efforts: LOW_TO_ULTRA,
        default_effort: "low",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-6-astra",
        display_name: "GPT-6 Astra",
        description: "The most capable model of the GPT-6 line.",
        context_window: 272_000,
        efforts: LOW_TO_ULTRA,
        default_effort: "low",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-6-sol",
        display_name: "GPT-6 Sol",
        description: "The everyday model of the GPT-6 line.",
        context_window: 272_000,
        efforts: LOW_TO_ULTRA,
        default_effort: "medium",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-6-luna",
        display_name: "GPT-6 Luna",
        description: "A small, fast and inexpensive GPT-6 model for simpler tasks.",
        context_window: 272_000,
        efforts: LOW_TO_MAX,
        default_effort: "medium",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-5.6-sol",
        display_name: "GPT-5.6 Sol",
        description: "The everyday model of the GPT-5.6 line.",
        context_window: 272_000,
        efforts: LOW_TO_ULTRA,
        default_effort: "low",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-5.6-terra",
        display_name: "GPT-5.6 Terra",
        description: "A balanced GPT-5.6 model for agentic coding.",
        context_window: 272_000,
        efforts: LOW_TO_ULTRA,
        default_effort: "medium",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-5.6-luna",
        display_name: "GPT-5.6 Luna",
        description: "A small and fast GPT-5.6 model for simpler tasks.",
        context_window: 272_000,
        efforts: LOW_TO_MAX,
        default_effort: "medium",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-5.5",
        display_name: "GPT-5.5",
        description: "An earlier coding model.",
        context_window: 272_000,
        efforts: LOW_TO_XHIGH,
        default_effort: "medium",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt55,
    },
    KnownModel {
        id: "gpt-5",
        display_name: "GPT-5",
        description: "openturn's default model: the first GPT-5, for coding and general work.",
        context_window: 272_000,
        efforts: MINIMAL_TO_HIGH,
        default_effort: "medium",
        freeform_apply_patch: true,
        hidden: false,
        tool_family: ToolFamily::Gpt5,
    },
    KnownModel {
        id: "gpt-5-codex",
        display_name: "GPT-5 Codex",
        description: "GPT-5 tuned for agentic coding.",
        context_window: 272_000,
        efforts: LOW_TO_HIGH,
        default_effort: "medium",
        freeform_apply_patch: true,
        hidden: true,
        tool_family: ToolFamily::Gpt5,
    },
    KnownModel {
        id: "gpt-5-mini",
        display_name: "GPT-5 mini",
        description: "A smaller, cheaper GPT-5.",
        context_window: 272_000,
        efforts: MINIMAL_TO_HIGH,
        default_effort: "medium",
        freeform_apply_patch: true,
        hidden: true,
        tool_family: ToolFamily::Gpt5,
    },
    KnownModel {
        id: "o3",
        display_name: "o3",
        description: "An earlier reasoning model.",
        context_window: 200_000,
        efforts: LOW_TO_HIGH,
        default_effort: "medium",
        freeform_apply_patch: false,
        hidden: true,
        tool_family: ToolFamily::Generic,
    },
    KnownModel {
        id: "o4-mini",
        display_name: "o4-mini",
        description: "An earlier small reasoning model.",
        context_window: 200_000,
        efforts: LOW_TO_HIGH,
        default_effort: "medium",
        freeform_apply_patch: false,
        hidden: true,
        tool_family: ToolFamily::Generic,
    },
    KnownModel {
        id: "gpt-4.1",
        display_name: "GPT-4.1",
        description: "An earlier model without reasoning, with a very long context.",
        context_window: 1_047_576,
        efforts: NO_REASONING,
        default_effort: "none",
        freeform_apply_patch: false,
        hidden: true,
        tool_family: ToolFamily::Generic,
    },
    KnownModel {
        id: "gpt-4o",
        display_name: "GPT-4o",
        description: "An earlier model without reasoning.",
        context_window: 128_000,
        efforts: NO_REASONING,
        default_effort: "none",
        freeform_apply_patch: false,
        hidden: true,
        tool_family: ToolFamily::Generic,
    },
];

/// The catalogue's entry for `model`, matched exactly or after a provider prefix
/// (`openai/gpt-5`), case-insensitively.
pub fn known_model(model: &str) -> Option<&'static KnownModel> {
    let slug = model.rsplit('/').next().unwrap_or(model);
    OPENAI_MODELS
        .iter()
        .find(|known| known.id.eq_ignore_ascii_case(slug))
}

/// What choosing `effort` means, for a picker.
pub fn effort_description(effort: &str) -> String {
    let text = match effort {
        "none" => "No reasoning",
        "minimal" => "As little reasoning as possible, for the fastest answers",
        "low" => "Light reasoning for quick answers",
        "medium" => "Balanced reasoning for everyday work",
        "high" => "Thorough reasoning for hard problems",
        "xhigh" => "Very thorough reasoning; slower",
        "max" => "Deep reasoning for the hardest problems",
        "ultra" => "The model's highest reasoning setting; slowest",
        other => return format!("{other} reasoning effort"),
    };
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_consistent() {
        for (index, model) in OPENAI_MODELS.iter().enumerate() {
            assert!(
                OPENAI_MODELS[..index].iter().all(|m| m.id != model.id),
                "{} twice",
                model.id
            );
            assert!(model.context_window > 0, "{}", model.id);
            if model.efforts.is_empty() {
                assert_eq!(model.default_effort, "none", "{}", model.id);
            } else {
                assert!(
                    model.efforts.contains(&model.default_effort),
                    "{}: default effort not offered",
                    model.id
                );
            }
        }
        assert_eq!(known_model("OpenAI/GPT-5").map(|m| m.id), Some("gpt-5"));
        assert_eq!(known_model("gpt-5-nano"), None);
    }
}
