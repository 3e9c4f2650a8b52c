"""Threads and turns through the real daemon: streaming, reading, listing, resuming,
interrupting, steering, and a provider failure."""

from __future__ import annotations

import asyncio

from conftest import async_test

from openturn_client import models


@async_test
async def test_a_turn_streams_its_deltas_in_order_and_ends_with_turn_completed(daemons):
    async with await daemons.start("stream") as client:
        thread = await client.thread_start()
        turn = await thread.start_turn("hi")
        methods, deltas = [], []
        async for notification in turn:
            methods.append(notification.method)
            if notification.method == "item/agentMessage/delta":
                assert isinstance(notification.params, models.ItemDeltaNotification)
                deltas.append(notification.params.delta)
        assert deltas == ["Hello", " from", " open", "turn"]
        assert methods.index("turn/started") < methods.index("item/started")
        assert methods.index("item/started") < methods.index("item/agentMessage/delta")
        assert methods[-1] == "turn/completed"
        assert turn.result is not None
        assert turn.result.status == "completed"
        assert turn.result.final_text == "Hello from openturn"

        read = await thread.read()
        assert [t.id for t in read.thread.turns] == [turn.id]
        listed = await client.thread_list()
        assert thread.id in [t.id for t in listed.data]


@async_test
async def test_a_thread_resumed_in_a_new_daemon_continues_with_its_history(daemons):
    async with await daemons.start("resume") as first:
        thread = await first.thread_start()
        result = await thread.run("question one")
        assert result.final_text == "first answer"
        thread_id = thread.id
    # The first daemon has exited: its lock on the thread is gone.
    async with await daemons.start("resume") as second:
        resumed = await second.thread_resume(thread_id)
        assert resumed.id == thread_id
        result = await resumed.run("question two")
        assert result.final_text == "second answer"
        read = await second.thread_read(thread_id, include_turns=True)
        assert len(read.thread.turns) == 2


@async_test
async def test_interrupt_ends_a_running_turn_as_interrupted(daemons):
    async with await daemons.start("interrupt") as client:
        thread = await client.thread_start()
        turn = await thread.start_turn("count slowly")
        interrupted = False
        async for notification in turn:
            if notification.method == "item/agentMessage/delta" and not interrupted:
                await turn.interrupt()
                interrupted = True
        assert interrupted
        assert turn.result is not None
        assert turn.result.status == "interrupted"


@async_test
async def test_steer_adds_input_to_the_running_turn(daemons):
    async with await daemons.start("steer") as client:
        thread = await client.thread_start()
        turn = await thread.start_turn("say letters")
        steered = False
        async for notification in turn:
            if notification.method == "item/agentMessage/delta" and not steered:
                await turn.steer("please also say steered")
                steered = True
        assert steered
        assert turn.result is not None
        assert turn.result.status == "completed"
        assert turn.result.final_text == "steered"


@async_test
async def test_a_provider_error_fails_the_turn_and_the_daemon_keeps_serving(daemons):
    async with await daemons.start("provider_error") as client:
        thread = await client.thread_start()
        turn = await thread.start_turn("hi")
        errors = [n async for n in turn if n.method == "error"]
        assert turn.result is not None
        assert turn.result.status == "failed"
        assert turn.result.turn.error is not None
        assert errors, "an error notification says what went wrong"
        # Still serving: another request on the same connection succeeds.
        listed = await client.thread_list()
        assert thread.id in [t.id for t in listed.data]
