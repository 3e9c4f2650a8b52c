"""Drives openturn's account methods and newer turn/thread options through the official
`openai-codex` Python SDK: account() before and after login_api_key(), a turn run with
turn_service_tier and source, thread_resume/thread_fork with include_turns, then logout().
Prints one JSON summary line. Arguments: OPENTURN_BIN BASE_URL OPENTURN_HOME API_KEY."""

import json
import sys

from openai_codex import Codex, CodexConfig


def account_type(response) -> str | None:
    account = response.account
    if account is None:
        return None
    inner = getattr(account, "root", account)
    return str(getattr(inner.type, "value", inner.type))


def main() -> None:
    openturn_bin, base_url, home, api_key = sys.argv[1:5]
    config = CodexConfig(
        codex_bin=openturn_bin,
        config_overrides=(
            'model="gpt-5"',
            'model_provider="mock"',
            f'model_providers.mock.base_url="{base_url}"',
            # Takes OpenAI sign-in: the key login_api_key() stores is its key.
            'model_providers.mock.requires_openai_auth=true',
            'model_providers.mock.request_max_retries=0',
            'model_providers.mock.stream_max_retries=0',
        ),
        env={"OPENTURN_HOME": home, "PATH": "/usr/bin:/bin"},
    )
    summary = {}
    with Codex(config) as codex:
        summary["server_version"] = codex.metadata.serverInfo.version
        before = codex.account()
        summary["account_before"] = account_type(before)
        summary["requires_auth_before"] = before.requires_openai_auth
        codex.login_api_key(api_key)
        summary["account_after_login"] = account_type(codex.account())

        thread = codex.thread_start()
        result = thread.run("hi", turn_service_tier="flex", source="sdk-test")
        summary["final_response"] = result.final_response
        summary["status"] = str(getattr(result.status, "value", result.status))

        resumed = codex.thread_resume(thread.id, include_turns=True)
        summary["resumed_turns"] = len(resumed.read(include_turns=True).thread.turns)
        forked = codex.thread_fork(thread.id, include_turns=False)
        summary["forked"] = forked.id != thread.id

        codex.logout()
        summary["account_after_logout"] = account_type(codex.account())
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
