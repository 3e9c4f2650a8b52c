"""Threads and turns on top of a :class:`~openturn_client.connection.Connection`.

``OpenturnClient`` spawns and initializes the daemon; ``Thread`` starts turns on one thread;
``Turn`` is an async iterator over that turn's notifications (deltas included) that ends after
``turn/completed``, and offers steer and interrupt while it runs.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from . import models
from .connection import (
    ApprovalHandler,
    Connection,
    Notification,
    NotificationHook,
    ToolHandler,
    decline_every_command,
)
from .errors import OpenturnError

__all__ = ["OpenturnClient", "Thread", "Turn", "TurnResult"]

CLIENT_NAME = "openturn-client-python"
CLIENT_VERSION = "0.1.0"

Input = str | Sequence[Mapping[str, Any] | BaseModel]


class OpenturnClient:
    """One ``openturn app-server`` process and the session with it.

    Use as ``async with await OpenturnClient.start(...) as client:``, or call :meth:`close`.
    """

    def __init__(self, connection: Connection, info: models.InitializeResponse) -> None:
        self.connection = connection
        self.server_info = info

    @classmethod
    async def start(
        cls,
        binary: str | os.PathLike[str] | None = None,
        *,
        config: Mapping[str, Any] | Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        inherit_env: bool = True,
        cwd: str | os.PathLike[str] | None = None,
        approval_handler: ApprovalHandler = decline_every_command,
        tool_handler: ToolHandler | None = None,
        on_notification: NotificationHook | None = None,
        client_name: str = CLIENT_NAME,
        client_version: str = CLIENT_VERSION,
    ) -> "OpenturnClient":
        """Spawns the daemon and performs the ``initialize`` handshake.

        ``binary`` defaults to ``$OPENTURN_BIN``, then ``openturn`` on ``PATH``.
        ``approval_handler`` answers command approvals; the default declines every one, so the
        model runs nothing that the daemon's approval policy asks about. ``tool_handler``
        answers ``item/tool/call`` for the ``dynamic_tools`` declared on :meth:`thread_start`.
        """
        binary = binary or os.environ.get("OPENTURN_BIN") or "openturn"
        connection = await Connection.spawn(
            binary,
            config=config,
            env=env,
            inherit_env=inherit_env,
            cwd=cwd,
            approval_handler=approval_handler,
            tool_handler=tool_handler,
            on_notification=on_notification,
        )
        try:
            info = await connection.initialize(client_name, client_version)
        except BaseException:
            await connection.close()
            raise
        return cls(connection, info)

    async def __aenter__(self) -> "OpenturnClient":
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def close(self) -> int | None:
        """Shuts the daemon down (closing its stdin) and returns its exit status."""
        return await self.connection.close()

    async def request(self, method: str, params: Any = None) -> Any:
        """Any method by name, params and result as plain JSON (for methods without a helper)."""
        return await self.connection.request(method, params)

    async def thread_start(self, **params: Any) -> "Thread":
        """``thread/start``; keyword arguments are :class:`models.ThreadStartParams` fields
        (snake_case or camelCase): ``model``, ``cwd``, ``approval_policy``, ``dynamic_tools``, …"""
        wire = _params(models.ThreadStartParams, params, "thread_start")
        result = models.ThreadStartResponse.model_validate(await self.request("thread/start", wire))
        return Thread(self, result.thread)

    async def thread_resume(self, thread_id: str, **params: Any) -> "Thread":
        """``thread/resume``: loads a stored thread so turns can run on it again."""
        wire = _params(models.ThreadResumeParams, {"thread_id": thread_id, **params}, "thread_resume")
        result = models.ThreadResumeResponse.model_validate(await self.request("thread/resume", wire))
        return Thread(self, result.thread)

    async def thread_read(self, thread_id: str, **params: Any) -> models.ThreadReadResponse:
        """``thread/read``: a stored thread, with its turns when ``include_turns=True``."""
        wire = _params(models.ThreadReadParams, {"thread_id": thread_id, **params}, "thread_read")
        return models.ThreadReadResponse.model_validate(await self.request("thread/read", wire))

    async def thread_list(self, **params: Any) -> models.ThreadListResponse:
        """``thread/list``: one page of stored threads (``limit``, ``cursor``, ``sort_key``, …)."""
        wire = _params(models.ThreadListParams, params, "thread_list")
        return models.ThreadListResponse.model_validate(await self.request("thread/list", wire))

    async def model_list(self, **params: Any) -> models.ModelListResponse:
        wire = _params(models.ModelListParams, params, "model_list")
        return models.ModelListResponse.model_validate(await self.request("model/list", wire))


class Thread:
    """A loaded thread. ``info`` is the :class:`models.Thread` the daemon returned."""

    def __init__(self, client: OpenturnClient, info: models.Thread) -> None:
        self.client = client
        self.info = info
        self.id = info.id
        # Subscribe now: notifications of the first turn may arrive before its response.
        self._queue = client.connection.subscribe(self.id)

    async def start_turn(self, input: Input, **params: Any) -> "Turn":
        """``turn/start``; ``input`` is text or a list of :class:`models.UserInput` items.
        Keyword arguments are the other :class:`models.TurnStartParams` fields."""
        wire = _params(
            models.TurnStartParams,
            {"thread_id": self.id, "input": _input(input), **params},
            "start_turn",
        )
        result = models.TurnStartResponse.model_validate(await self.client.request("turn/start", wire))
        return Turn(self, result.turn)

    async def run(self, input: Input, **params: Any) -> "TurnResult":
        """Starts a turn and waits for it to end; the result has the final text."""
        turn = await self.start_turn(input, **params)
        return await turn.wait()

    async def read(self, include_turns: bool = True) -> models.ThreadReadResponse:
        return await self.client.thread_read(self.id, include_turns=include_turns)


@dataclass
class TurnResult:
    """How a turn ended: the final :class:`models.Turn` (``status``, ``error``), every item that
    completed during it, and the text of its last agent message (``None`` if it wrote none)."""

    turn: models.Turn
    items: list[Any]
    final_text: str | None

    @property
    def status(self) -> str:
        return self.turn.status.root


class Turn:
    """A running turn. ``async for notification in turn`` yields its notifications in order
    (``item/agentMessage/delta`` and the other deltas included) and stops after
    ``turn/completed``. Iterate once; :meth:`wait` consumes whatever is left."""

    def __init__(self, thread: Thread, info: models.Turn) -> None:
        self.thread = thread
        self.id = info.id
        self.info = info
        self.result: TurnResult | None = None
        self._items: list[Any] = []
        self._final_text: str | None = None

    def __aiter__(self) -> AsyncIterator[Notification]:
        return self._notifications()

    async def _notifications(self) -> AsyncIterator[Notification]:
        if self.result is not None:
            return
        queue = self.thread._queue
        while True:
            entry = await queue.get()
            if isinstance(entry, OpenturnError):
                queue.put_nowait(entry)  # later readers of this thread learn it too
                raise entry
            turn_id = entry.turn_id
            if turn_id is not None and turn_id != self.id:
                continue  # left over from an earlier turn of this thread
            self._observe(entry)
            yield entry
            if entry.method == "turn/completed" and turn_id == self.id:
                return

    def _observe(self, notification: Notification) -> None:
        params = notification.params
        if notification.method == "item/completed":
            self._items.append(params.item)
            item = params.item.root
            if getattr(item, "type", None) == "agentMessage":
                self._final_text = item.text
        elif notification.method == "turn/completed":
            self.info = params.turn
            self.result = TurnResult(params.turn, self._items, self._final_text)

    async def wait(self) -> TurnResult:
        """Consumes the rest of the turn and returns how it ended."""
        async for _ in self:
            pass
        if self.result is None:
            raise OpenturnError(f"turn {self.id} ended without turn/completed")
        return self.result

    async def steer(self, input: Input) -> None:
        """``turn/steer``: adds input to this turn while it runs."""
        wire = _params(
            models.TurnSteerParams,
            {"thread_id": self.thread.id, "expected_turn_id": self.id, "input": _input(input)},
            "steer",
        )
        await self.thread.client.request("turn/steer", wire)

    async def interrupt(self) -> None:
        """``turn/interrupt``: the turn ends soon with status ``interrupted``."""
        wire = _params(models.TurnInterruptParams, {"thread_id": self.thread.id, "turn_id": self.id}, "interrupt")
        await self.thread.client.request("turn/interrupt", wire)


def _input(input: Input) -> list[Any]:
    if isinstance(input, str):
        return [{"type": "text", "text": input}]
    return [item.model_dump(by_alias=True, exclude_none=True, mode="json") if isinstance(item, BaseModel) else dict(item) for item in input]


def _params(model: type[BaseModel], params: Mapping[str, Any], caller: str) -> dict[str, Any]:
    """Checks ``params`` against the generated model and returns them in wire (camelCase) form.

    An unknown name is an error rather than silently dropped, so a typo never goes unnoticed.
    """
    known = set(model.model_fields) | {field.alias for field in model.model_fields.values() if field.alias}
    unknown = sorted(set(params) - known)
    if unknown:
        raise TypeError(f"{caller}() got unknown parameter(s) {', '.join(unknown)}; see {model.__name__}")
    validated = model.model_validate(dict(params))
    return validated.model_dump(by_alias=True, exclude_unset=True, mode="json")
