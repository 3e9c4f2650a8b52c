//! Which tools each model is offered, by name: the one place that decides it. The tools
//! themselves (`tools/`) only say how a named tool is described; a name no registered tool
//! describes is skipped when the request is built, so a tool added later slots into the sets
//! below without touching them.
//!
//! A model's set is, in order of precedence:
//! 1. `[models.<id>] tools = [...]` in the configuration: exactly those names;
//! 2. else the set of its family: the catalogue's entry for a known model (`openai_models.rs`,
//!    asked by `ModelCatalog::tool_family`), else its slug (`gpt-5.5`, `gpt-5.6`, `gpt-6…` → [`ToolFamily::Gpt55`]; other `gpt-5…` →
//!    [`ToolFamily::Gpt5`]; anything else → [`ToolFamily::Generic`]);
//!
//! then `[tools] <name> = true|false` (or `<name>.enabled`) adds or removes a tool for every
//! model, a configured `apply_patch_tool_type` adds `apply_patch`, and `web_search =
//! "disabled"` removes the hosted search.
//!
//! The two OpenAI families are the sets the reference CLI (0.171.0) sends those models; the
//! generic set is for models of other providers, which know function tools but neither the
//! hosted search nor the namespaced sub-agent tools, and were mostly trained to edit files with
//! a patch tool and to keep a plan.

use std::collections::BTreeMap;

/// The tool sets models are trained on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFamily {
    /// gpt-5, gpt-5-codex, gpt-5-mini: commands, questions, images, sub-agents, goals, search.
    Gpt5,
    /// gpt-5.5 and later: the freeform `apply_patch` and `tool_search` instead of sub-agents.
    Gpt55,
    /// Every other model: function tools only, a patch tool and a plan tool included.
    Generic,
}

impl ToolFamily {
    /// The family's tool names, in the order they are offered.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            ToolFamily::Gpt5 => &[
                "exec_command",
                "write_stdin",
                "request_user_input",
                "view_image",
                "multi_agent_v1",
                "get_goal",
                "create_goal",
                "update_goal",
                "web_search",
            ],
            ToolFamily::Gpt55 => &[
                "exec_command",
                "write_stdin",
                "request_user_input",
                "apply_patch",
                "view_image",
                "get_goal",
                "create_goal",
                "update_goal",
                "tool_search",
                "web_search",
            ],
            ToolFamily::Generic => &[
                "exec_command",
                "write_stdin",
                "update_plan",
                "request_user_input",
                "apply_patch",
                "view_image",
                "get_goal",
                "create_goal",
                "update_goal",
            ],
        }
    }

    /// The family a model's slug names; the catalogue's entry for a known model comes first
    /// (`ModelCatalog::tool_family`), so this file does not read the catalogue.
    pub fn from_slug(model: &str) -> ToolFamily {
        let slug = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        if ["gpt-5.5", "gpt-5.6", "gpt-6"]
            .iter()
            .any(|family| slug.starts_with(family))
        {
            ToolFamily::Gpt55
        } else if slug.starts_with("gpt-5") {
            ToolFamily::Gpt5
        } else {
            ToolFamily::Generic
        }
    }
}

/// Every tool name a set may hold, in the order tools are offered when configuration adds one
/// to a set that lacks it.
pub const TOOL_ORDER: &[&str] = &[
    "exec_command",
    "write_stdin",
    "update_plan",
    "request_user_input",
    "apply_patch",
    "view_image",
    "multi_agent_v1",
    "get_goal",
    "create_goal",
    "update_goal",
    "tool_search",
    "web_search",
];

/// Switch names that are the reference's spelling of one of openturn's tools: `[tools]
/// experimental_request_user_input` is the reference's switch for `request_user_input` (its
/// side threads send `enabled = false`). When both are given, the tool's own name is applied
/// last and wins.
const SWITCH_ALIASES: &[(&str, &str)] =
    &[("experimental_request_user_input", "request_user_input")];

/// The tool a `[tools]` switch turns on or off.
fn switch_target(name: &str) -> &str {
    SWITCH_ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, tool)| tool)
}

/// `web_search` at the top level of config.toml: whether the hosted search is offered and
/// whether it may fetch live pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebSearchMode {
    Disabled,
    /// Results from the provider's index only (`external_web_access: false`).
    Cached,
    /// Live pages too (`external_web_access: true`).
    Live,
    /// Live pages and the provider's own index (`indexed_web_access: true` as well).
    Indexed,
}

/// What the configuration says about tools.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolConfig {
    /// `[tools] <name> = bool` / `<name>.enabled = bool`.
    pub switches: BTreeMap<String, bool>,
    /// `[models.<id>] tools = [...]`.
    pub per_model: BTreeMap<String, Vec<String>>,
    /// `web_search = "disabled" | "cached" | "live" | "indexed"`; `None`: cached. Cached
    /// (configured or not) becomes live when the thread runs without a sandbox, as in the
    /// reference: its commands could fetch any page anyway.
    pub web_search: Option<WebSearchMode>,
    /// Whether `apply_patch_tool_type` names a form for every model (top level).
    pub apply_patch_for_all: bool,
    /// The models whose `[models.<id>]` table names an `apply_patch_tool_type`.
    pub apply_patch_models: Vec<String>,
}

impl ToolConfig {
    /// The tool names `model`, of `family`, is offered, in order.
    pub fn names_for(&self, model: &str, family: ToolFamily) -> Vec<String> {
        let mut names: Vec<String> = match self.per_model.get(model) {
            Some(listed) => listed.clone(),
            None => family
                .names()
                .iter()
                .map(|name| (*name).to_string())
                .collect(),
        };
        let add = |names: &mut Vec<String>, name: &str| {
            if !names.iter().any(|present| present == name) {
                let rank = |n: &str| TOOL_ORDER.iter().position(|o| *o == n);
                let at = names
                    .iter()
                    .position(|present| rank(present) > rank(name))
                    .unwrap_or(names.len());
                names.insert(at, name.to_string());
            }
        };
        if self.apply_patch_for_all || self.apply_patch_models.iter().any(|m| m == model) {
            add(&mut names, "apply_patch");
        }
        for (name, enabled) in &self.switches {
            let name = switch_target(name);
            if *enabled {
                add(&mut names, name);
            } else {
                names.retain(|present| present != name);
            }
        }
        if self.web_search == Some(WebSearchMode::Disabled) {
            names.retain(|present| present != "web_search");
        }
        names
    }

    /// The search mode for a thread: the configured one, cached when none is, and cached turns
    /// live without a sandbox.
    pub fn web_search_mode(&self, unsandboxed: bool) -> WebSearchMode {
        match self.web_search.unwrap_or(WebSearchMode::Cached) {
            WebSearchMode::Cached if unsandboxed => WebSearchMode::Live,
            mode => mode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_name_their_family() {
        assert_eq!(
            ToolFamily::from_slug("openai/gpt-5-codex"),
            ToolFamily::Gpt5
        );
        assert_eq!(ToolFamily::from_slug("gpt-5.5-pro"), ToolFamily::Gpt55);
        assert_eq!(ToolFamily::from_slug("gpt-6.9-new"), ToolFamily::Gpt55);
        assert_eq!(ToolFamily::from_slug("gpt-5-nano"), ToolFamily::Gpt5);
        assert_eq!(ToolFamily::from_slug("llama3"), ToolFamily::Generic);
    }

    #[test]
    fn configuration_replaces_adds_and_removes_in_the_offered_order() {
        let config = ToolConfig {
            switches: BTreeMap::from([
                ("view_image".to_string(), false),
                ("update_plan".to_string(), true),
            ]),
            per_model: BTreeMap::from([(
                "local".to_string(),
                vec!["exec_command".to_string(), "view_image".to_string()],
            )]),
            web_search: Some(WebSearchMode::Disabled),
            apply_patch_for_all: false,
            apply_patch_models: vec!["gpt-5".to_string()],
        };
        assert_eq!(
            config.names_for("gpt-5", ToolFamily::Gpt5),
            [
                "exec_command",
                "write_stdin",
                "update_plan",
                "request_user_input",
                "apply_patch",
                "multi_agent_v1",
                "get_goal",
                "create_goal",
                "update_goal"
            ]
        );
        assert_eq!(
            config.names_for("local", ToolFamily::Generic),
            ["exec_command", "update_plan"]
        );
        assert_eq!(
            ToolConfig::default().web_search_mode(true),
            WebSearchMode::Live
        );
        assert_eq!(
            ToolConfig::default().web_search_mode(false),
            WebSearchMode::Cached
        );
        let configured = |mode| ToolConfig {
            web_search: Some(mode),
            ..ToolConfig::default()
        };
        // Without a sandbox even a configured cache goes live; the other modes stay as set.
        assert_eq!(
            configured(WebSearchMode::Cached).web_search_mode(true),
            WebSearchMode::Live
        );
        for mode in [WebSearchMode::Disabled, WebSearchMode::Indexed] {
            assert_eq!(configured(mode).web_search_mode(true), mode);
        }
    }

    #[test]
    fn the_references_name_for_the_question_tool_switches_it() {
        let switched = |pairs: &[(&str, bool)]| ToolConfig {
            switches: pairs
                .iter()
                .map(|(name, on)| (name.to_string(), *on))
                .collect(),
            ..ToolConfig::default()
        };
        let offered = |config: ToolConfig| {
            config
                .names_for("gpt-5", ToolFamily::Gpt5)
                .contains(&"request_user_input".to_string())
        };
        assert!(offered(ToolConfig::default()));
        assert!(!offered(switched(&[(
            "experimental_request_user_input",
            false
        )])));
        // openturn's own name is applied last.
        assert!(offered(switched(&[
            ("experimental_request_user_input", false),
            ("request_user_input", true)
        ])));
    }
}
