import asyncio
import sys

from openturn_client import OpenturnClient


async def approve(params):                         # models.CommandExecutionRequestApprovalParams
    print(f"\n[approving {params.command}]")
    return "accept"                                # or "acceptForSession", "decline", "cancel"


async def main() -> None:
    async with await OpenturnClient.start(
        config={"model_provider": "demo"},         # -c overrides, values written as TOML
        approval_handler=approve,                  # without it every approval is declined
    ) as client:
        thread = await client.thread_start(sandbox="workspace-write")  # may write in its cwd
        turn = await thread.start_turn("Run a command and edit a file")
        async for notification in turn:            # ends after turn/completed
            if notification.method == "item/agentMessage/delta":
                print(notification.params.delta, end="", flush=True)
        print()
        result = turn.result
        if result.status != "completed":
            error = result.turn.error
            sys.exit(f"turn {result.status}: {error.message if error else 'no reason given'}")


asyncio.run(main())
