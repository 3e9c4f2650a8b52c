"""Failures surface as exceptions that say what is wrong."""

from __future__ import annotations

import pytest
from conftest import async_test

from openturn_client import DaemonExited, JsonRpcError, OpenturnClient, OpenturnError, ProtocolError


@async_test
async def test_a_json_rpc_error_carries_its_code_and_data(daemons):
    async with await daemons.start("stream") as client:
        with pytest.raises(JsonRpcError) as caught:
            await client.request("turn/start", {"threadId": "no-such-thread", "input": "not a list"})
        assert caught.value.code == -32602
        assert caught.value.method == "turn/start"
        assert "input" in caught.value.message
        with pytest.raises(JsonRpcError) as unknown:
            await client.request("no/such/method", {})
        assert unknown.value.code == -32601


@async_test
async def test_unknown_keyword_arguments_are_rejected_before_anything_is_sent(daemons):
    async with await daemons.start("stream") as client:
        with pytest.raises(TypeError, match="modle"):
            await client.thread_start(modle="gpt-5")


@async_test
async def test_a_missing_binary_is_an_error_naming_the_path(tmp_path):
    missing = tmp_path / "not-openturn"
    with pytest.raises(OpenturnError, match="not-openturn"):
        await OpenturnClient.start(missing)


@async_test
async def test_an_error_carries_its_data_a_thread_loaded_elsewhere_is_busy(daemons):
    async with await daemons.start("stream") as first, await daemons.start("stream") as second:
        thread = await first.thread_start()
        with pytest.raises(JsonRpcError) as caught:
            await second.thread_resume(thread.id)
        assert isinstance(caught.value.data, dict)
        assert caught.value.data.get("reason") == "thread_busy"


@async_test
async def test_a_binary_that_is_not_openturn_is_a_protocol_error_naming_its_output():
    # `echo app-server` prints a line that is not JSON-RPC.
    with pytest.raises(ProtocolError, match="app-server"):
        await OpenturnClient.start("/bin/echo")


@async_test
async def test_a_daemon_that_exits_at_once_is_daemon_exited_with_its_status():
    with pytest.raises(DaemonExited) as caught:
        await OpenturnClient.start("/bin/false")
    assert caught.value.returncode == 1
