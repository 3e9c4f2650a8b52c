//! The projection from core events to protocol notifications: a pure reducer, one per thread.
//! `(state, EventMsg) → notifications`, no I/O. Notifications come out in the order core emitted
//! the events, which keeps the ordering rules of docs/PROTOCOL.md §9.

use std::collections::HashMap;

use crate::core::record::TurnEndRecord;
use crate::core::{EventMsg, TurnOutcome};
use crate::protocol::notification::{
    ErrorNotification, ItemCompletedNotification, ItemStartedNotification,
    ModelReroutedNotification, ServerNotification, ThreadStatusChangedNotification,
    TurnNotification, WarningNotification,
};
use crate::protocol::thread::ThreadStatus;
use crate::protocol::turn::Turn;

use super::convert;
use super::thread_status::StatusState;
use super::turn_builder::{ItemsView, TurnBuilder};

mod stateless;

use stateless::one_to_one;

/// Per-thread projection state: when each completed item of the running turn started and
/// completed, for `turn/completed`'s summary items. Every time is core's stamp from the item's
/// events, the same one the item's rollout line stores, so an item reads the same live and
/// replayed; the projection reads no clock. And the facts the thread's status is made of.
pub(crate) struct ThreadProjection {
    thread_id: String,
    item_times_ms: HashMap<String, (i64, i64)>,
    thread_status: StatusState,
    /// For a sub-agent: the parent turn its current turn serves (its turns' `rootTurnId`).
    root_turn: Option<RootTurn>,
}

/// Asked as a turn starts: the id of the turn it belongs under, when not its own.
pub(crate) type RootTurn = std::sync::Arc<dyn Fn() -> Option<String> + Send + Sync>;

impl ThreadProjection {
    pub(crate) fn new(thread_id: String) -> ThreadProjection {
        ThreadProjection {
            thread_id,
            item_times_ms: HashMap::new(),
            thread_status: StatusState::new(),
            root_turn: None,
        }
    }

    /// A sub-agent's projection: its turns start under the parent turn `root_turn` names.
    pub(crate) fn with_root_turn(mut self, root_turn: RootTurn) -> ThreadProjection {
        self.root_turn = Some(root_turn);
        self
    }

    pub(crate) fn project(&mut self, event: EventMsg) -> Vec<ServerNotification> {
        match event {
            EventMsg::TurnStarted {
                turn_id,
                started_at,
            } => self.turn_started(turn_id.into_string(), started_at),
            EventMsg::ItemStarted {
                turn_id,
                item,
                started_at_ms,
            } => {
                vec![ServerNotification::ItemStarted(ItemStartedNotification {
                    thread_id: self.thread_id.clone(),
                    turn_id: turn_id.into_string(),
                    item: convert::thread_item(&item, Some(started_at_ms), None),
                    started_at_ms,
                })]
            }
            EventMsg::ItemCompleted {
                turn_id,
                item,
                started_at_ms,
                completed_at_ms,
            } => {
                self.item_times_ms
                    .insert(item.id().to_string(), (started_at_ms, completed_at_ms));
                vec![ServerNotification::ItemCompleted(
                    ItemCompletedNotification {
                        thread_id: self.thread_id.clone(),
                        turn_id: turn_id.into_string(),
                        item: convert::thread_item(
                            &item,
                            Some(started_at_ms),
                            Some(completed_at_ms),
                        ),
                        completed_at_ms,
                        content_token_count: None,
                    },
                )]
            }
            EventMsg::WaitingOnClient {
                approval,
                user_input,
            } => {
                let changed = self.thread_status.waiting(approval, user_input);
                changed
                    .map(|status| self.status(status))
                    .into_iter()
                    .collect()
            }
            EventMsg::ModelRerouted {
                turn_id,
                from_model,
                to_model,
            } => self.model_rerouted(turn_id.into_string(), from_model, to_model),
            EventMsg::TurnEnded {
                turn_id,
                outcome,
                started_at,
                completed_at,
                duration_ms,
            } => self.turn_ended(
                turn_id.into_string(),
                outcome,
                started_at,
                completed_at,
                duration_ms,
            ),
            // Sent by the fanout through the server-request component, not projected.
            EventMsg::ClientRequest(_) => Vec::new(),
            stateless => one_to_one(self.thread_id.clone(), stateless)
                .into_iter()
                .collect(),
        }
    }

    fn turn_started(&mut self, turn_id: String, started_at: i64) -> Vec<ServerNotification> {
        self.item_times_ms.clear();
        let status = self.thread_status.turn_started();
        let mut turn = in_progress_turn(turn_id, Some(started_at));
        if let Some(root) = self.root_turn.as_ref().and_then(|root| root()) {
            turn.root_turn_id = Some(root);
        }
        vec![
            self.status(status),
            ServerNotification::TurnStarted(TurnNotification {
                thread_id: self.thread_id.clone(),
                turn,
            }),
        ]
    }

    fn model_rerouted(
        &self,
        turn_id: String,
        from_model: String,
        to_model: String,
    ) -> Vec<ServerNotification> {
        let message = format!(
            "The provider served this request with `{to_model}` instead of `{from_model}`."
        );
        vec![
            ServerNotification::ModelRerouted(ModelReroutedNotification {
                thread_id: self.thread_id.clone(),
                turn_id,
                from_model,
                to_model,
                reason: "highRiskCyberActivity".to_string(),
            }),
            ServerNotification::Warning(WarningNotification {
                message,
                thread_id: Some(self.thread_id.clone()),
            }),
        ]
    }

    fn status(&self, status: ThreadStatus) -> ServerNotification {
        ServerNotification::ThreadStatusChanged(ThreadStatusChangedNotification {
            thread_id: self.thread_id.clone(),
            status,
        })
    }

    /// A turn ended and the thread rests in `resting`.
    fn rest(&mut self, resting: ThreadStatus) -> ServerNotification {
        let status = self.thread_status.turn_ended(resting);
        self.status(status)
    }

    fn turn_ended(
        &mut self,
        turn_id: String,
        outcome: TurnOutcome,
        started_at: i64,
        completed_at: i64,
        duration_ms: i64,
    ) -> Vec<ServerNotification> {
        let item_times = std::mem::take(&mut self.item_times_ms);
        // The same record core writes as the turn's end line, so `thread/read` rebuilds the
        // same turn from it.
        let end = TurnEndRecord::new(turn_id.as_str(), &outcome, completed_at, duration_ms);
        let mut turn = TurnBuilder::started(&turn_id, Some(started_at));
        turn.ended(&end);
        let mut out = Vec::new();
        let turn = match outcome {
            TurnOutcome::Completed { final_items } => {
                // Items core never announced (none today) read as of the turn's end.
                let end_ms = completed_at.saturating_mul(1000);
                let items = final_items
                    .iter()
                    .map(|item| {
                        let (started, completed) = item_times
                            .get(item.id().as_str())
                            .copied()
                            .unwrap_or((end_ms, end_ms));
                        convert::thread_item(item, Some(started), Some(completed))
                    })
                    .collect();
                out.push(self.rest(ThreadStatus::Idle));
                turn.build(ItemsView::Summary, items)
            }
            TurnOutcome::Interrupted => {
                out.push(self.rest(ThreadStatus::Idle));
                turn.build(ItemsView::NotLoaded, Vec::new())
            }
            TurnOutcome::Failed(_) => {
                let turn = turn.build(ItemsView::NotLoaded, Vec::new());
                out.push(self.rest(ThreadStatus::SystemError));
                if let Some(error) = &turn.error {
                    out.push(ServerNotification::Error(ErrorNotification {
                        thread_id: self.thread_id.clone(),
                        turn_id,
                        error: error.clone(),
                        will_retry: false,
                    }));
                }
                turn
            }
        };
        let mut turn = turn;
        // A child's turn ends under the same root its start named.
        if let Some(root) = self.root_turn.as_ref().and_then(|root| root()) {
            turn.root_turn_id = Some(root);
        }
        out.push(ServerNotification::TurnCompleted(TurnNotification {
            thread_id: self.thread_id.clone(),
            turn,
        }));
        out
    }
}

/// A turn as first announced: in progress, no items loaded.
pub(crate) fn in_progress_turn(turn_id: String, started_at: Option<i64>) -> Turn {
    TurnBuilder::started(&turn_id, started_at).build(ItemsView::NotLoaded, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn method_and_params(notifications: Vec<ServerNotification>) -> Vec<serde_json::Value> {
        notifications
            .iter()
            .map(|n| serde_json::to_value(n).unwrap())
            .collect()
    }

    /// The hand-written delta line is what the generic envelope encoding writes for the
    /// projected notification, for strings that need every kind of escaping.
    #[test]
    fn the_fast_delta_line_encodes_exactly_as_the_projected_notification() {
        use crate::server::outgoing::{
            encode_agent_message_delta_line, AgentMessageDelta, AGENT_MESSAGE_DELTA_METHOD,
        };
        let deltas = [
            "plain",
            "a \"quoted\" \u{2028} delta \u{2029}",
            "back\\slash, tab\t, newline\n, nul\u{0}, bell\u{7}, del\u{7f}",
            "unicode: é ✓ 😀",
            "",
        ];
        for delta in deltas {
            let mut projection = ThreadProjection::new("th_\"1".into());
            let event = EventMsg::AgentMessageDelta {
                turn_id: "tu_1".into(),
                item_id: "msg\u{2028}1".into(),
                delta: delta.into(),
            };
            let projected = projection.project(event);
            assert_eq!(projected.len(), 1);
            assert_eq!(projected[0].method(), AGENT_MESSAGE_DELTA_METHOD);
            let expected = erased::Encode::encode_line(&projected[0]);
            let mut fast = b"earlier line\n".to_vec();
            let fields = AgentMessageDelta {
                thread_id: "th_\"1",
                turn_id: "tu_1",
                item_id: "msg\u{2028}1",
                delta,
            };
            encode_agent_message_delta_line(&fields, 7, &mut fast).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&fast[b"earlier line\n".len()..]),
                String::from_utf8_lossy(&expected),
                "delta {delta:?}"
            );
        }
    }

    /// Encodes a notification the way the outgoing queue does, for byte comparisons.
    mod erased {
        use crate::protocol::jsonrpc::{NotificationEnvelope, JSONRPC_VERSION};
        use crate::server::outgoing::encode_line;

        pub(crate) trait Encode {
            fn encode_line(&self) -> Vec<u8>;
        }

        impl<T: serde::Serialize> Encode for T {
            fn encode_line(&self) -> Vec<u8> {
                let envelope = NotificationEnvelope {
                    jsonrpc: JSONRPC_VERSION,
                    notification: self,
                    emitted_at_ms: 7,
                };
                encode_line(&envelope).unwrap().to_vec()
            }
        }
    }

    /// Invariant: an item's times are core's stamps from its events — on `item/started`,
    /// `item/completed` and the summary items of `turn/completed` — never the time the
    /// projection saw the event, so they are the times replay reads from the item's line.
    #[test]
    fn item_times_are_the_stamps_core_put_in_the_events() {
        let mut projection = ThreadProjection::new("thr".into());
        let item = crate::core::TurnItem::AgentMessage {
            id: "msg".into(),
            text: "hi".into(),
            phase: None,
            memory_citation: None,
        };
        projection.project(EventMsg::TurnStarted {
            turn_id: "t".into(),
            started_at: 1,
        });
        let started = method_and_params(projection.project(EventMsg::ItemStarted {
            turn_id: "t".into(),
            item: item.clone(),
            started_at_ms: 1_100,
        }));
        assert_eq!(started[0]["params"]["startedAtMs"], 1_100);
        assert_eq!(started[0]["params"]["item"]["startedAtMs"], 1_100);
        assert_eq!(
            started[0]["params"]["item"]["completedAtMs"],
            serde_json::Value::Null
        );
        let completed = method_and_params(projection.project(EventMsg::ItemCompleted {
            turn_id: "t".into(),
            item: item.clone(),
            started_at_ms: 1_100,
            completed_at_ms: 1_900,
        }));
        assert_eq!(completed[0]["params"]["completedAtMs"], 1_900);
        let completed_item = completed[0]["params"]["item"].clone();
        assert_eq!(completed_item["startedAtMs"], 1_100);
        assert_eq!(completed_item["completedAtMs"], 1_900);
        let ended = method_and_params(projection.project(EventMsg::TurnEnded {
            turn_id: "t".into(),
            outcome: TurnOutcome::Completed {
                final_items: vec![item],
            },
            started_at: 1,
            completed_at: 2,
            duration_ms: 1_000,
        }));
        let turn = &ended.last().unwrap()["params"]["turn"];
        assert_eq!(turn["items"], serde_json::json!([completed_item]));
    }

    #[test]
    fn a_question_between_turns_makes_the_thread_active_and_its_answer_idle_again() {
        let mut projection = ThreadProjection::new("thr".into());
        let statuses = |projection: &mut ThreadProjection, approval, user_input| {
            method_and_params(projection.project(EventMsg::WaitingOnClient {
                approval,
                user_input,
            }))
            .iter()
            .map(|n| n["params"]["status"].clone())
            .collect::<Vec<_>>()
        };
        assert_eq!(
            statuses(&mut projection, true, true),
            vec![serde_json::json!({"type": "active",
                "activeFlags": ["waitingOnApproval", "waitingOnUserInput"]})]
        );
        assert_eq!(
            statuses(&mut projection, false, false),
            vec![serde_json::json!({"type": "idle"})]
        );
        // Nothing changed: nothing is reported.
        assert!(statuses(&mut projection, false, false).is_empty());
    }

    #[test]
    fn approval_waits_plan_deltas_and_command_output_project_to_their_notifications() {
        let mut projection = ThreadProjection::new("thr".into());
        let waiting = method_and_params(projection.project(EventMsg::WaitingOnClient {
            approval: true,
            user_input: false,
        }));
        assert_eq!(
            waiting,
            vec![
                serde_json::json!({"method": "thread/status/changed", "params": {"threadId": "thr",
                "status": {"type": "active", "activeFlags": ["waitingOnApproval"]}}})
            ]
        );
        let plan = method_and_params(projection.project(EventMsg::PlanDelta {
            turn_id: "t".into(),
            item_id: "t-plan".into(),
            delta: "- a".into(),
        }));
        assert_eq!(plan[0]["method"], "item/plan/delta");
        assert_eq!(plan[0]["params"]["itemId"], "t-plan");
        let output = method_and_params(projection.project(EventMsg::CommandOutputDelta {
            turn_id: "t".into(),
            item_id: "call_1".into(),
            delta: "hi\n".into(),
        }));
        assert_eq!(output[0]["method"], "item/commandExecution/outputDelta");
        assert_eq!(output[0]["params"]["delta"], "hi\n");
    }
}
