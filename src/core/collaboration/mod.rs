//! Collaboration modes: the presets a client offers its user (`collaborationMode/list`) and
//! what each mode tells the model. A thread is in one mode at a time (`ThreadSettings::
//! plan_mode`); `turn/start` and `thread/settings/update` switch it, with the model and effort
//! the client picked for the mode. Plan mode sends [`PLAN_MODE_INSTRUCTIONS`] with every
//! request and turns the model's `<proposed_plan>` block into a plan item (`turn/response/
//! plan.rs`); Default mode sends nothing extra. The server only converts these to wire types.

/// The two modes a thread can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollaborationModeKind {
    /// Explore, ask, and propose a plan; change nothing.
    Plan,
    /// Ordinary work.
    Default,
}

/// A mode as a client offers it: its name, and the model and effort selecting it applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollaborationPreset {
    /// What the client shows (`Plan`, `Default`).
    pub name: &'static str,
    pub kind: CollaborationModeKind,
    /// `None`: the mode keeps the thread's model.
    pub model: Option<&'static str>,
    /// `None`: the mode keeps the thread's effort. Plan mode thinks harder by default, as the
    /// reference's does, since a plan is worth more than the time it takes.
    pub reasoning_effort: Option<&'static str>,
}

/// Every mode, in the order clients list them (the reference lists Plan first).
pub const PRESETS: &[CollaborationPreset] = &[
    CollaborationPreset {
        name: "Plan",
        kind: CollaborationModeKind::Plan,
        model: None,
        reasoning_effort: Some("medium"),
    },
    CollaborationPreset {
        name: "Default",
        kind: CollaborationModeKind::Default,
        model: None,
        reasoning_effort: None,
    },
];

/// What plan mode tells the model, every request of a turn in plan mode.
pub const PLAN_MODE_INSTRUCTIONS: &str = include_str!("plan_mode.md");

/// The developer message a request carries for the thread's mode, framed as the reference
/// frames its mode instructions; `None` in Default mode. Sent with each request rather than
/// kept in the history, so leaving plan mode needs no message taking it back.
pub fn mode_instructions(plan_mode: bool) -> Option<String> {
    plan_mode.then(|| format!("<collaboration_mode>{PLAN_MODE_INSTRUCTIONS}</collaboration_mode>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_mode_alone_is_told_to_the_model_and_asks_for_a_proposed_plan_block() {
        assert_eq!(mode_instructions(false), None);
        let plan = mode_instructions(true).unwrap();
        assert!(plan.starts_with("<collaboration_mode>You are in Plan mode."));
        assert!(plan.ends_with("</collaboration_mode>"));
        // The block the plan item is made from (`core/text`) is the one the model is asked for.
        assert!(plan.contains("<proposed_plan>\n") && plan.contains("\n</proposed_plan>\n"));
    }

    #[test]
    fn each_kind_has_exactly_one_preset() {
        for kind in [CollaborationModeKind::Plan, CollaborationModeKind::Default] {
            assert_eq!(PRESETS.iter().filter(|p| p.kind == kind).count(), 1);
        }
    }
}
