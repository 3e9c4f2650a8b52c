"""Server → client requests: command approvals and client tools (`dynamicTools`)."""

from __future__ import annotations

from conftest import async_test

from openturn_client import models


@async_test
async def test_an_accepted_command_runs_and_the_handler_sees_what_it_approves(daemons, tmp_path):
    asked = []

    async def approve(params: models.CommandExecutionRequestApprovalParams):
        asked.append(params)
        return "accept"

    workdir = tmp_path / "work"
    workdir.mkdir()
    async with await daemons.start("approval_accept", approval_handler=approve) as client:
        thread = await client.thread_start(cwd=str(workdir), approval_policy="untrusted")
        result = await thread.run("make a file")
    assert result.status == "completed"
    assert len(asked) == 1
    assert "echo approved > approved.txt" in asked[0].command
    assert asked[0].thread_id == thread.id
    assert (workdir / "approved.txt").read_text() == "approved\n"
    commands = [i.root for i in result.items if i.root.type == "commandExecution"]
    assert commands and commands[0].status == "completed"


@async_test
async def test_the_default_handler_declines_so_nothing_runs(daemons, tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    async with await daemons.start("approval_default") as client:
        thread = await client.thread_start(cwd=str(workdir), approval_policy="untrusted")
        result = await thread.run("make a file")
    assert result.status == "completed"
    assert not (workdir / "declined.txt").exists()
    commands = [i.root for i in result.items if i.root.type == "commandExecution"]
    assert commands and commands[0].status == "declined"


@async_test
async def test_a_client_tool_call_is_answered_by_the_tool_handler(daemons):
    calls = []

    async def tools(params: models.DynamicToolCallParams):
        calls.append(params)
        return f"ticket {params.arguments['id']} is open"

    lookup = {
        "type": "function",
        "name": "lookup_ticket",
        "description": "Look up a ticket",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
    }
    async with await daemons.start("client_tool", tool_handler=tools) as client:
        thread = await client.thread_start(dynamic_tools=[lookup])
        result = await thread.run("is ABC-123 open?")
    assert [c.tool for c in calls] == ["lookup_ticket"]
    assert calls[0].arguments == {"id": "ABC-123"}
    assert result.final_text == "the ticket is open"
