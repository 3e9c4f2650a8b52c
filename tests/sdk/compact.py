"""Drives openturn's compaction with the official `openai-codex` Python SDK: run a turn,
`Thread.compact()`, wait (bounded) until `thread/read` shows the compaction turn completed, then
run another turn. Prints what it saw as JSON. Arguments: OPENTURN_BIN BASE_URL OPENTURN_HOME."""

import json
import sys
import time

from openai_codex import Codex, CodexConfig


def turns_of(thread):
    read = thread.read(include_turns=True).model_dump(by_alias=True, mode="json")
    return read["thread"]["turns"]


def item_types(turn):
    return [item.get("type") for item in turn["items"]]


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
        first = thread.run("first question")
        response = thread.compact()
        compaction = None
        for _ in range(200):
            compaction = next(
                (t for t in turns_of(thread) if "contextCompaction" in item_types(t)), None
            )
            if compaction is not None and compaction["status"] != "inProgress":
                break
            time.sleep(0.05)
        second = thread.run("second question")
        print(json.dumps({
            "first": first.final_response,
            "compact_response": response.model_dump(by_alias=True, mode="json"),
            "compaction_status": compaction and compaction["status"],
            "compaction_items": compaction and item_types(compaction),
            "second": second.final_response,
            "turns": len(turns_of(thread)),
        }))


if __name__ == "__main__":
    main()
