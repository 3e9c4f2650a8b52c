"""Drives openturn with the official `openai-codex` Python SDK: start a thread, run one turn,
print the final text as JSON. Arguments: OPENTURN_BIN BASE_URL OPENTURN_HOME."""

import json
import sys

from openai_codex import Codex, CodexConfig


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
        result = thread.run("hi")
        print(json.dumps({
            "final_response": result.final_response,
            "status": str(getattr(result.status, "value", result.status)),
            "thread_id": thread.id,
        }))


if __name__ == "__main__":
    main()
