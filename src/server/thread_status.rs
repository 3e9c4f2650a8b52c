//! A loaded thread's status as `thread/status/changed` reports it, made of three facts: whether
//! a turn runs, what core says the thread waits on the client for (`EventMsg::WaitingOnClient`),
//! and the status it rests in between turns (idle, or the system error a failed turn left). The
//! projection feeds it events and sends what it returns; it knows nothing of notifications.

use crate::protocol::thread::{ThreadActiveFlag, ThreadStatus};

/// See the module docs.
pub(crate) struct StatusState {
    turn_running: bool,
    /// Core's waiting flags: an approval, the user's input.
    waiting: (bool, bool),
    resting: ThreadStatus,
    /// The status last reported.
    reported: Option<ThreadStatus>,
}

impl StatusState {
    pub(crate) fn new() -> StatusState {
        StatusState {
            turn_running: false,
            waiting: (false, false),
            resting: ThreadStatus::Idle,
            reported: None,
        }
    }

    /// A turn started: the status to report.
    pub(crate) fn turn_started(&mut self) -> ThreadStatus {
        self.turn_running = true;
        self.report()
    }

    /// The waiting flags changed: the status to report, `None` when it stays what was reported.
    pub(crate) fn waiting(&mut self, approval: bool, user_input: bool) -> Option<ThreadStatus> {
        self.waiting = (approval, user_input);
        if self.reported.as_ref() == Some(&self.current()) {
            return None;
        }
        Some(self.report())
    }

    /// A turn ended and the thread rests in `resting`: the status to report. The turn's
    /// questions ended with it (each is cancelled with its turn), so the flags are cleared here
    /// rather than left to the late word of a question torn down with its turn.
    pub(crate) fn turn_ended(&mut self, resting: ThreadStatus) -> ThreadStatus {
        self.turn_running = false;
        self.waiting = (false, false);
        self.resting = resting;
        self.report()
    }

    /// Active while a turn runs or the client is asked something (a flag per kind of question
    /// open), else the resting status.
    fn current(&self) -> ThreadStatus {
        let (approval, user_input) = self.waiting;
        let mut active_flags = Vec::new();
        if approval {
            active_flags.push(ThreadActiveFlag::WaitingOnApproval);
        }
        if user_input {
            active_flags.push(ThreadActiveFlag::WaitingOnUserInput);
        }
        if self.turn_running || !active_flags.is_empty() {
            ThreadStatus::Active { active_flags }
        } else {
            self.resting.clone()
        }
    }

    /// The current status, remembered as reported.
    fn report(&mut self) -> ThreadStatus {
        let status = self.current();
        self.reported = Some(status.clone());
        status
    }
}
