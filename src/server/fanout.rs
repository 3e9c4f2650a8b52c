//! One task per loaded thread: takes the thread's core events, projects them once, and queues
//! the notifications on every connection that should hear them — turn traffic on the thread's
//! subscribers, lifecycle notifications on every initialized connection (the fan-out rule of
//! docs/PROTOCOL.md §4). A round's lines are encoded once (and framed once for the WebSocket
//! connections) and the same bytes are queued on each connection; only a connection that opted
//! out of some method gets a filtered copy. A fast stream's text is gathered for a few
//! milliseconds ([`STREAM_SPACING`]), so each connection gets fewer, larger writes. Keeps core's
//! order. On stdio (one client) a slow client makes the thread's turn wait and loses nothing; on
//! a socket a connection whose queue is full is closed instead (see
//! `OutgoingSender::closing_when_full`), so one slow client never stalls the others.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::core::{EventMsg, ThreadId};
use crate::protocol::jsonrpc::{NotificationEnvelope, JSONRPC_VERSION};
use crate::protocol::notification::ServerNotification;

use super::context::ServerContext;
use super::hub::{Audience, Hub};
use super::member::Member;
use super::outgoing::{
    encode_agent_message_delta_line, encode_line_into, AgentMessageDelta,
    AGENT_MESSAGE_DELTA_METHOD,
};
use super::projection::ThreadProjection;
use super::ws_frames;

/// Most core events projected per round: bounds the notifications one round encodes.
const EVENTS_PER_ROUND: usize = 64;
/// Encoded lines are queued once this many bytes have gathered, so one hand-off to the writer
/// never carries more than about this much (`outgoing::OUTGOING_CAPACITY` counts on it).
const LINES_FLUSH_BYTES: usize = 32 * 1024;
/// What the encoding buffer keeps between rounds: a fast stream's gathered rounds grow it to
/// about [`LINES_FLUSH_BYTES`], which a thread that streams no more should not keep.
const LINES_KEPT_BYTES: usize = 8 * 1024;
/// The size of the buffer rounds' bytes are carved from (see `ProjectionTask::arena`).
const ARENA_BYTES: usize = 64 * 1024;

/// While a thread's text comes in rounds less than [`STREAM_BURST_GAP`] apart, its pieces go
/// out at most this often, gathered: every notification a connection gets costs it a write to
/// its socket (on loopback TCP a few microseconds, whatever the size), so ten subscribers of a
/// fast stream would otherwise cost ten writes per round of a few deltas. A stream paced like a
/// model's tokens (a few milliseconds apart) is never held, nor the first piece after a pause,
/// and anything that is not streamed text (an item starting or ending, a status, a question) is
/// sent at once with what is held before it: only a fast stream is delayed, by at most this much.
const STREAM_SPACING: Duration = Duration::from_millis(4);

/// Rounds closer than this are a fast stream, whose text [`STREAM_SPACING`] gathers.
const STREAM_BURST_GAP: Duration = Duration::from_millis(1);

/// The largest round split off the arena: a round of a few deltas (the streaming case) costs no
/// allocation, and at most this much of an arena is left unused when the next round does not fit.
const ARENA_ROUND_BYTES: usize = ARENA_BYTES / 8;

pub(crate) fn spawn_thread_projection(
    context: &Arc<ServerContext>,
    thread_id: ThreadId,
    events_rx: mpsc::Receiver<EventMsg>,
) {
    spawn_projection(&context.hub, thread_id, events_rx, None);
}

/// [`spawn_thread_projection`] for a thread no connection loaded (a sub-agent).
pub(crate) fn spawn_projection(
    hub: &Arc<Hub>,
    thread_id: ThreadId,
    events_rx: mpsc::Receiver<EventMsg>,
    root_turn: Option<super::projection::RootTurn>,
) {
    let hub = hub.clone();
    let projection = ThreadProjection::new(thread_id.to_string());
    let task = ProjectionTask {
        hub: hub.clone(),
        projection: match root_turn {
            Some(root_turn) => projection.with_root_turn(root_turn),
            None => projection,
        },
        thread_id: thread_id.clone(),
        lines: Vec::new(),
        arena: BytesMut::new(),
        segments: Vec::new(),
        audience: Audience::default(),
        audience_membership: None,
        scratch: Vec::new(),
        last_flush: None,
        last_round: None,
        due_at: None,
        urgent: false,
    };
    let handle = hub.lifecycle.projections.spawn(task.run(events_rx));
    hub.loaded().projections.insert(thread_id, handle);
}

/// One encoded line of a round: where it ends in the buffer, its method (for opt-outs), and
/// whether unsubscribed connections hear it too.
struct Segment {
    end: usize,
    method: &'static str,
    everyone: bool,
}

/// The state of one thread's projection task.
struct ProjectionTask {
    hub: Arc<Hub>,
    thread_id: ThreadId,
    projection: ThreadProjection,
    /// Lines encoded but not yet queued.
    lines: Vec<u8>,
    /// Where each round's bytes are copied to and split off from, so a round allocates nothing:
    /// the split-off part shares this buffer (cloning it for more connections only counts a
    /// reference), and a new buffer is taken only once this one is used up, one per
    /// [`ARENA_BYTES`] of notifications. A slice still queued keeps its buffer alive.
    arena: BytesMut,
    segments: Vec<Segment>,
    /// Who hears this thread, looked up (the connections' locks) only when the hub's membership
    /// changed since, into buffers kept from round to round.
    audience: Audience,
    /// The hub's membership count `audience` was looked up at.
    audience_membership: Option<u64>,
    /// The lookup's scratch buffer, kept like `audience`'s.
    scratch: Vec<Arc<dyn Member>>,
    /// When lines last went out, for [`STREAM_SPACING`].
    last_flush: Option<Instant>,
    /// When the last round that had lines ended, for [`STREAM_BURST_GAP`].
    last_round: Option<Instant>,
    /// What the held lines' timer is set to, if it is set: it is reset only when this changes,
    /// once per flush, not once per round.
    due_at: Option<Instant>,
    /// Whether `lines` holds something other than streamed text, which goes out at once.
    urgent: bool,
}

impl ProjectionTask {
    /// Takes core's events as they come — every event already queued in one round — and queues
    /// their notifications as one message per round and connection: a burst of deltas costs
    /// one hand-off to each writer, a lone delta still goes out at once, and a fast stream's
    /// rounds are gathered ([`STREAM_SPACING`]).
    async fn run(mut self, mut events_rx: mpsc::Receiver<EventMsg>) {
        let lifecycle = self.hub.lifecycle.clone();
        let stop = lifecycle.projections_stop.cancelled();
        tokio::pin!(stop);
        let due = tokio::time::sleep_until(Instant::now());
        tokio::pin!(due);
        let mut events = Vec::with_capacity(EVENTS_PER_ROUND);
        let mut stopping = false;
        loop {
            let received = tokio::select! {
                received = events_rx.recv_many(&mut events, EVENTS_PER_ROUND) => received,
                // Held text is due: nothing came to send it with.
                _ = &mut due, if !self.lines.is_empty() => {
                    self.flush().await;
                    continue;
                }
                _ = &mut stop, if !stopping => {
                    // Every turn has ended: drain what is buffered, then stop.
                    events_rx.close();
                    stopping = true;
                    continue;
                }
            };
            if received == 0 {
                self.flush().await;
                return;
            }
            let now_ms = chrono::Utc::now().timestamp_millis();
            for event in events.drain(..) {
                self.handle(event, now_ms).await;
            }
            self.end_round(due.as_mut()).await;
        }
    }

    /// Sends the round's lines, or holds them until [`STREAM_SPACING`] after the last lines
    /// went out if they are only streamed text of a fast stream and that was less than the
    /// spacing ago.
    async fn end_round(&mut self, due: std::pin::Pin<&mut tokio::time::Sleep>) {
        if self.lines.is_empty() {
            return;
        }
        let now = Instant::now();
        let fast = self
            .last_round
            .is_some_and(|last| now.saturating_duration_since(last) < STREAM_BURST_GAP);
        self.last_round = Some(now);
        let held_until = match self.last_flush {
            Some(last) if fast && !self.urgent => last + STREAM_SPACING,
            _ => return self.flush().await,
        };
        if now >= held_until {
            return self.flush().await;
        }
        if self.due_at != Some(held_until) {
            due.reset(held_until);
            self.due_at = Some(held_until);
        }
    }

    async fn handle(&mut self, event: EventMsg, now_ms: i64) {
        // A question for the clients goes out here, in event order, after every notification
        // core emitted before it; every subscriber is asked.
        if let EventMsg::ClientRequest(request) = event {
            self.flush().await;
            let to = self.hub.subscriber_senders(&self.thread_id);
            self.hub
                .server_requests
                .send(self.thread_id.as_str(), request, to)
                .await;
            return;
        }
        let ended_turn = match &event {
            EventMsg::TurnEnded { turn_id, .. } => Some(turn_id.clone()),
            _ => None,
        };
        if let EventMsg::AgentMessageDelta {
            turn_id,
            item_id,
            delta,
        } = &event
        {
            // Most of a turn's traffic: encoded from the event's fields, without building the
            // notification (the projection has no state to update for a delta).
            if self.has_subscribers() {
                let delta = AgentMessageDelta {
                    thread_id: self.thread_id.as_str(),
                    turn_id: turn_id.as_str(),
                    item_id: item_id.as_str(),
                    delta,
                };
                match encode_agent_message_delta_line(&delta, now_ms, &mut self.lines) {
                    Ok(()) => self.mark(AGENT_MESSAGE_DELTA_METHOD, false),
                    Err(error) => {
                        tracing::error!(%error, "outgoing notification could not be serialized")
                    }
                }
            }
        } else {
            for notification in self.projection.project(event) {
                // A response that reported no limits is projected as an empty snapshot; the
                // last real one stays what `account/rateLimits/read` answers.
                if let ServerNotification::RateLimitsUpdated(update) = &notification {
                    let limits = &update.rate_limits;
                    if limits.primary.is_some() || limits.secondary.is_some() {
                        self.hub.record_rate_limits(limits);
                    }
                }
                if let ServerNotification::ThreadStatusChanged(changed) = &notification {
                    self.hub
                        .loaded()
                        .statuses
                        .insert(self.thread_id.clone(), changed.status.clone());
                }
                let everyone = notification.reaches_unsubscribed();
                if everyone || self.has_subscribers() {
                    self.urgent |= !notification.is_streamed_delta();
                    self.encode(&notification, now_ms, everyone);
                }
            }
        }
        if self.lines.len() >= LINES_FLUSH_BYTES {
            self.flush().await;
        }
        if let Some(turn_id) = ended_turn {
            // Requests still open when their turn ended are resolved after `turn/completed`.
            self.flush().await;
            self.hub
                .server_requests
                .turn_ended(self.thread_id.as_str(), &turn_id)
                .await;
        }
    }

    fn encode(&mut self, notification: &ServerNotification, now_ms: i64, everyone: bool) {
        let envelope = NotificationEnvelope {
            jsonrpc: JSONRPC_VERSION,
            notification,
            emitted_at_ms: now_ms,
        };
        match encode_line_into(&envelope, &mut self.lines) {
            Ok(()) => self.mark(notification.method(), everyone),
            Err(error) => tracing::error!(%error, "outgoing notification could not be serialized"),
        }
    }

    fn mark(&mut self, method: &'static str, everyone: bool) {
        self.segments.push(Segment {
            end: self.lines.len(),
            method,
            everyone,
        });
    }

    fn audience(&mut self) -> &Audience {
        self.refresh_audience();
        &self.audience
    }

    /// Looks the audience up again if the hub's membership changed since the last lookup. The
    /// count is read first: a change during the lookup bumps it again, so the next round looks
    /// once more.
    fn refresh_audience(&mut self) {
        let membership = self.hub.membership();
        if self.audience_membership != Some(membership) {
            self.hub
                .fill_audience(&self.thread_id, &mut self.scratch, &mut self.audience);
            self.audience_membership = Some(membership);
        }
    }

    /// Whether any connection is subscribed to this thread, as of this round.
    fn has_subscribers(&mut self) -> bool {
        !self.audience().subscribers.is_empty()
    }

    /// Queues the encoded lines on each connection of the audience. Once shutdown gave up on
    /// the clients, they are dropped instead: core's events keep being consumed, so turns can
    /// still end and record.
    async fn flush(&mut self) {
        if self.lines.is_empty() {
            return;
        }
        self.last_flush = Some(Instant::now());
        self.urgent = false;
        // The burst is copied once and shared by every connection's queue; the encoding buffer
        // is kept, so encoding the next burst allocates nothing.
        let lines = if self.lines.len() > ARENA_ROUND_BYTES {
            // A big round gets a buffer of its own, exact-size: in the arena it could leave most
            // of one unused, and a client that stopped reading would hold a queue of those.
            Bytes::copy_from_slice(&self.lines)
        } else {
            if self.arena.capacity() < self.lines.len() {
                self.arena = BytesMut::with_capacity(ARENA_BYTES);
            }
            self.arena.extend_from_slice(&self.lines);
            self.arena.split().freeze()
        };
        self.lines.clear();
        self.lines.shrink_to(LINES_KEPT_BYTES);
        let abandoned = self.hub.lifecycle.output_abandoned.clone();
        if abandoned.is_cancelled() {
            self.segments.clear();
            return;
        }
        // Fields borrowed apart, so neither the audience nor the segments are copied: a round
        // allocates nothing while the arena has room.
        self.refresh_audience();
        let audience = &self.audience;
        let segments = &self.segments;
        let targets = audience
            .subscribers
            .iter()
            .map(|context| (context, true))
            .chain(audience.others.iter().map(|context| (context, false)));
        // The round as WebSocket frames, made once for every socket connection that hears
        // all of it: an added subscriber then costs a hand-off and a write, not a framing.
        let mut frames: Option<Bytes> = None;
        for (context, subscribed) in targets {
            let outgoing = context.outgoing();
            let message = match message_for(context, subscribed, &lines, segments) {
                Some(Message::All) if outgoing.takes_frames() => {
                    let frames = frames.get_or_insert_with(|| ws_frames::frame_lines(&lines));
                    // A socket connection never waits: a full queue closes it.
                    let _ = outgoing.queue_frames(frames.clone());
                    continue;
                }
                // A clone of the arena's slice only counts a reference.
                Some(Message::All) => lines.clone(),
                Some(Message::Filtered(filtered)) => filtered,
                None => continue,
            };
            if outgoing.takes_frames() {
                let _ = outgoing.queue_frames(ws_frames::frame_lines(&message));
                continue;
            }
            tokio::select! {
                _ = outgoing.send_bytes(message) => {}
                _ = abandoned.cancelled() => break,
            }
        }
        self.segments.clear();
    }
}

/// What of a round's lines one connection hears.
enum Message {
    /// All of them: the same bytes, no copy.
    All,
    /// Only some (it is not subscribed, or opted out of some methods): a copy of those.
    Filtered(Bytes),
}

/// What of a round's `lines` one connection hears; `None` when nothing.
fn message_for(
    context: &Arc<dyn Member>,
    subscribed: bool,
    lines: &Bytes,
    segments: &[Segment],
) -> Option<Message> {
    if subscribed && !context.outgoing().opts_out_of_any() {
        // The common case, decided without looking at each line.
        return Some(Message::All);
    }
    let hears = |segment: &Segment| {
        (subscribed || segment.everyone) && !context.outgoing().is_opted_out(segment.method)
    };
    if segments.iter().all(hears) {
        return Some(Message::All);
    }
    let mut filtered = Vec::new();
    let mut start = 0;
    for segment in segments {
        if hears(segment) {
            filtered.extend_from_slice(&lines[start..segment.end]);
        }
        start = segment.end;
    }
    (!filtered.is_empty()).then(|| Message::Filtered(Bytes::from(filtered)))
}
