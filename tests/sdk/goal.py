"""Drives openturn's goals with the official `openai-codex` Python SDK (0.163.0): the SDK's own
goal operation (`CodexClient.start_goal_operation`: clear, then set an active goal, then wait for
the turn the server starts by itself) streamed to its logical completion, then `thread/goal/get`,
`pause_goal`, `thread_goal_clear` and a second clear. Version 0.163.0 has no public `Thread.goal`
yet; these are the client calls it is built on. Prints what it saw as JSON.
Arguments: OPENTURN_BIN BASE_URL OPENTURN_HOME."""

import json
import sys

from openai_codex import Codex, CodexConfig
from openai_codex._goal import _GoalNotificationStream
from openai_codex.generated.v2_all import ThreadGoalGetResponse


def goal_of(client, thread_id):
    response = client.request(
        "thread/goal/get", {"threadId": thread_id}, response_model=ThreadGoalGetResponse
    )
    goal = response.model_dump(by_alias=True, mode="json")["goal"]
    return goal and {"objective": goal["objective"], "status": goal["status"]}


def main() -> None:
    openturn_bin, base_url, home = sys.argv[1], sys.argv[2], sys.argv[3]
    config = CodexConfig(
        codex_bin=openturn_bin,
        config_overrides=(
            'model="gpt-5"',
            'model_provider="mock"',
            f'model_providers.mock.base_url="{base_url}"',
            'model_providers.mock.request_max_retries=0',
            'model_providers.mock.stream_max_retries=0',
        ),
        env={"OPENTURN_HOME": home, "PATH": "/usr/bin:/bin"},
    )
    with Codex(config) as codex:
        thread = codex.thread_start()
        client = codex._client
        state, _turn_id = client.start_goal_operation(thread.id, "Write hello.txt")
        stream = _GoalNotificationStream(
            state,
            lambda: client.next_goal_notification(state),
            lambda: client.unregister_goal_operation(state),
            lambda: client.cancel_goal_operation(state),
        )
        notifications = list(stream)
        completed = [n for n in notifications if n.method == "turn/completed"]
        goal_after_run = goal_of(client, thread.id)
        paused = client.pause_goal(thread.id).model_dump(by_alias=True, mode="json")["goal"]
        cleared = client.thread_goal_clear(thread.id).cleared
        cleared_again = client.thread_goal_clear(thread.id).cleared
        print(json.dumps({
            "completed_turns": len(completed),
            "completed_status": completed
            and completed[-1].payload.turn.status.value,
            "goal_after_run": goal_after_run,
            "paused_status": paused["status"],
            "cleared": cleared,
            "cleared_again": cleared_again,
            "goal_after_clear": goal_of(client, thread.id),
        }))


if __name__ == "__main__":
    main()
