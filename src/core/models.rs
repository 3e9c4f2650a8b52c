//! Which models reason, and with what defaults: the part of the model catalogue that shapes
//! requests. A reasoning model's requests carry `reasoning` (summary `auto` unless configured,
//! effort only when configured, as the reference sends) and ask for encrypted reasoning back; a
//! model that does not reason gets neither, because providers reject both for such models.
//!
//! The catalogue is configuration (`[models.<id>]` tables: `supports_reasoning`,
//! `default_reasoning_summary`, `apply_patch_tool_type`) over the OpenAI models openturn knows
//! by name (`openai_models.rs`), then over built-in knowledge of model families; it also says
//! how the `apply_patch` tool is offered. A model that none of them names is treated as a
//! reasoning model, which is what the reference assumes of every model. `model/list` shows the
//! same answer (no reasoning efforts for a model that does not reason).

use std::collections::BTreeMap;

use super::openai_models::known_model;
use super::tool_set::{ToolConfig, ToolFamily};

/// How the `apply_patch` tool is offered: models that take custom tools get the freeform
/// definition. A property of the model, so it lives with the catalogue, not with the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyPatchForm {
    Freeform,
    Function,
}

/// What one model does with reasoning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelReasoning {
    /// No `reasoning` request field, no encrypted reasoning asked for.
    Unsupported,
    /// `reasoning` is sent; `default_summary` is the summary asked for when the thread's
    /// settings name none (`None`: no summary unless configured).
    Supported { default_summary: Option<String> },
}

/// The summary reasoning models get when neither the model's entry nor the thread names one.
pub const DEFAULT_REASONING_SUMMARY: &str = "auto";

/// Model families that do not reason (slug prefixes, lowercase): the GPT-4 and GPT-3.5 lines.
const NON_REASONING_FAMILIES: &[&str] = &["gpt-4", "gpt-3.5", "gpt-35", "chatgpt-4o"];

/// Configured answers first, then the built-in families.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelCatalog {
    configured: BTreeMap<String, ModelReasoning>,
    /// `apply_patch_tool_type` in `[models.<id>]` tables.
    apply_patch_per_model: BTreeMap<String, ApplyPatchForm>,
    /// The top-level `apply_patch_tool_type`: every model not named above.
    apply_patch_default: Option<ApplyPatchForm>,
    /// Which tools each model is offered (`tool_set.rs`).
    tools: ToolConfig,
}

impl ModelCatalog {
    /// A catalogue where `configured` overrides the built-in families for its models.
    pub fn new(configured: BTreeMap<String, ModelReasoning>) -> ModelCatalog {
        ModelCatalog {
            configured,
            ..ModelCatalog::default()
        }
    }

    /// The same catalogue with configured `apply_patch` forms: `per_model` for the models it
    /// names, `default` for every other model (the built-in families when `None`).
    pub fn with_apply_patch_forms(
        mut self,
        default: Option<ApplyPatchForm>,
        per_model: BTreeMap<String, ApplyPatchForm>,
    ) -> ModelCatalog {
        self.apply_patch_default = default;
        self.apply_patch_per_model = per_model;
        self
    }

    /// The same catalogue with the configuration's say on tools (`[tools]`, `web_search`,
    /// `[models.<id>] tools`). The `apply_patch_tool_type` keys given to
    /// [`ModelCatalog::with_apply_patch_forms`] count as asking for the tool.
    pub fn with_tool_config(mut self, mut tools: ToolConfig) -> ModelCatalog {
        tools.apply_patch_for_all = self.apply_patch_default.is_some();
        tools.apply_patch_models = self.apply_patch_per_model.keys().cloned().collect();
        self.tools = tools;
        self
    }

    /// What the configuration says about tools.
    pub fn tool_config(&self) -> &ToolConfig {
        &self.tools
    }

    /// The tool set `model` was trained on: its catalogue entry's, else its slug's.
    pub fn tool_family(&self, model: &str) -> ToolFamily {
        known_model(model)
            .map(|known| known.tool_family)
            .unwrap_or_else(|| ToolFamily::from_slug(model))
    }

    /// The tool names `model` is offered, in order (`tool_set.rs`).
    pub fn tool_names(&self, model: &str) -> Vec<String> {
        self.tools.names_for(model, self.tool_family(model))
    }

    /// How `apply_patch` is offered to `model`: the configured form (`apply_patch_tool_type`
    /// for the model, then for every model), else the form a known model was trained on, else
    /// freeform with a grammar to the families that take custom tools and a JSON function tool
    /// (one `input` string) to every other model.
    pub fn apply_patch_form(&self, model: &str) -> ApplyPatchForm {
        if let Some(form) = self
            .apply_patch_per_model
            .get(model)
            .or(self.apply_patch_default.as_ref())
        {
            return *form;
        }
        if let Some(known) = known_model(model) {
            return if known.freeform_apply_patch {
                ApplyPatchForm::Freeform
            } else {
                ApplyPatchForm::Function
            };
        }
        let slug = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        if FREEFORM_TOOL_FAMILIES
            .iter()
            .any(|family| slug.starts_with(family))
        {
            ApplyPatchForm::Freeform
        } else {
            ApplyPatchForm::Function
        }
    }

    /// What `model` does with reasoning.
    pub fn reasoning(&self, model: &str) -> ModelReasoning {
        if let Some(configured) = self.configured.get(model) {
            return configured.clone();
        }
        if let Some(known) = known_model(model) {
            return if known.efforts.is_empty() {
                ModelReasoning::Unsupported
            } else {
                ModelReasoning::Supported {
                    default_summary: Some(DEFAULT_REASONING_SUMMARY.to_string()),
                }
            };
        }
        // A provider prefix (`openai/gpt-4o`) does not change the family.
        let slug = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        if NON_REASONING_FAMILIES
            .iter()
            .any(|family| slug.starts_with(family))
        {
            ModelReasoning::Unsupported
        } else {
            ModelReasoning::Supported {
                default_summary: Some(DEFAULT_REASONING_SUMMARY.to_string()),
            }
        }
    }
}

/// Context windows of known model families (slug prefixes, lowercase, most specific first), in
/// tokens: what compaction's default limit is a share of when the configuration names none.
const CONTEXT_WINDOWS: &[(&str, i64)] = &[
    ("gpt-5", 272_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o4-mini", 200_000),
    ("o3", 200_000),
    ("gpt-3.5", 16_385),
];

impl ModelCatalog {
    /// The usable context window of `model` (95% of its full window, the rest left for the
    /// model's own overhead), when the model or its family is known.
    pub fn context_window(&self, model: &str) -> Option<i64> {
        if let Some(known) = known_model(model) {
            return Some(known.context_window / 100 * 95);
        }
        let slug = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        CONTEXT_WINDOWS
            .iter()
            .find(|(family, _)| slug.starts_with(family))
            .map(|(_, window)| window / 100 * 95)
    }
}

/// Model families that take freeform (custom) tools with a grammar (slug prefixes, lowercase).
const FREEFORM_TOOL_FAMILIES: &[&str] = &["gpt-5", "gpt-6"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_decide_unless_configuration_says_otherwise() {
        let auto = ModelReasoning::Supported {
            default_summary: Some("auto".into()),
        };
        let catalog = ModelCatalog::new(BTreeMap::from([
            ("gpt-4.1".to_string(), auto.clone()),
            ("local-llm".to_string(), ModelReasoning::Unsupported),
        ]));
        for reasoning in ["gpt-5", "gpt-5-codex", "o3", "o4-mini", "some-new-model"] {
            assert_eq!(catalog.reasoning(reasoning), auto, "{reasoning}");
        }
        for plain in [
            "gpt-4o",
            "GPT-4o-mini",
            "openai/gpt-4o",
            "gpt-3.5-turbo",
            "local-llm",
        ] {
            assert_eq!(
                catalog.reasoning(plain),
                ModelReasoning::Unsupported,
                "{plain}"
            );
        }
        assert_eq!(catalog.reasoning("gpt-4.1"), auto);
    }

    #[test]
    fn the_catalogue_names_a_known_models_tool_family_before_its_slug() {
        let catalog = ModelCatalog::default();
        assert_eq!(catalog.tool_family("gpt-5"), ToolFamily::Gpt5);
        assert_eq!(catalog.tool_family("gpt-5.5"), ToolFamily::Gpt55);
        assert_eq!(catalog.tool_family("gpt-6.2-sol"), ToolFamily::Gpt55);
        // o3's slug names no family, and its entry keeps it generic.
        assert_eq!(catalog.tool_family("o3"), ToolFamily::Generic);
        assert_eq!(catalog.tool_family("gpt-4.1"), ToolFamily::Generic);
    }

    #[test]
    fn the_apply_patch_form_is_configured_per_model_then_for_all_then_by_family() {
        let families = ModelCatalog::default();
        assert_eq!(
            families.apply_patch_form("gpt-5-codex"),
            ApplyPatchForm::Freeform
        );
        assert_eq!(
            families.apply_patch_form("openai/GPT-5"),
            ApplyPatchForm::Freeform
        );
        assert_eq!(
            families.apply_patch_form("gpt-4.1"),
            ApplyPatchForm::Function
        );
        assert_eq!(families.apply_patch_form("o3"), ApplyPatchForm::Function);
        assert_eq!(
            families.apply_patch_form("gpt-6.2-sol"),
            ApplyPatchForm::Freeform
        );
        assert_eq!(
            families.apply_patch_form("gpt-6-later"),
            ApplyPatchForm::Freeform
        );
        assert_eq!(families.context_window("gpt-6.2-sol"), Some(475_000));
        assert_eq!(families.context_window("gpt-5"), Some(258_400));
        let configured = ModelCatalog::default().with_apply_patch_forms(
            Some(ApplyPatchForm::Function),
            BTreeMap::from([("local".to_string(), ApplyPatchForm::Freeform)]),
        );
        assert_eq!(
            configured.apply_patch_form("gpt-5"),
            ApplyPatchForm::Function
        );
        assert_eq!(
            configured.apply_patch_form("local"),
            ApplyPatchForm::Freeform
        );
    }
}
