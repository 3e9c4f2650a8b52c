"""The JSON-RPC connection to one spawned ``openturn app-server`` process.

One reader task owns the daemon's stdout: responses resolve the future of their request,
server → client requests (approvals, client-tool calls) run their handler in a task of their own
and are answered, and notifications are routed to the queue of the thread they name. A second
task drains stderr into a bounded tail, so a daemon that logs a lot never blocks and an exit can
say why.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Union, get_args

from pydantic import BaseModel, ValidationError

from . import models
from .errors import DaemonExited, JsonRpcError, OpenturnError, ProtocolError

# Lines can carry whole thread histories (`thread/read`); the daemon's own limit is 16 MiB.
MAX_LINE_BYTES = 64 * 1024 * 1024
STDERR_TAIL_LINES = 200

ApprovalDecision = Union[str, Mapping[str, Any]]
ApprovalHandler = Callable[[models.CommandExecutionRequestApprovalParams], Awaitable[ApprovalDecision]]
ToolResult = Union[str, models.DynamicToolCallResponse, Mapping[str, Any]]
ToolHandler = Callable[[models.DynamicToolCallParams], Awaitable[ToolResult]]
NotificationHook = Callable[["Notification"], None]


def _variants_by_method(union: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """method name → the generated ``{method, params}`` model of that variant of a union."""
    table: dict[str, type[BaseModel]] = {}
    for variant in get_args(union.model_fields["root"].annotation):
        (method,) = get_args(variant.model_fields["method"].annotation)
        table[method] = variant
    return table


NOTIFICATIONS = _variants_by_method(models.ServerNotification)
SERVER_REQUESTS = _variants_by_method(models.ServerRequest)


class Notification:
    """One server notification: its ``method`` and ``params`` as a generated model.

    A method this client's models do not know yet (a newer daemon) keeps ``params`` as a dict.
    ``raw`` is the params exactly as received.
    """

    __slots__ = ("method", "params", "raw")

    def __init__(self, method: str, params: Any, raw: dict[str, Any]) -> None:
        self.method = method
        self.params = params
        self.raw = raw

    @classmethod
    def parse(cls, method: str, raw: dict[str, Any]) -> "Notification":
        variant = NOTIFICATIONS.get(method)
        if variant is None:
            return cls(method, raw, raw)
        try:
            parsed = variant.model_validate({"method": method, "params": raw})
        except ValidationError as error:
            raise ProtocolError(f"{method} notification does not match the schema: {error}") from error
        return cls(method, parsed.params, raw)  # type: ignore[attr-defined]

    @property
    def thread_id(self) -> str | None:
        value = self.raw.get("threadId")
        return value if isinstance(value, str) else None

    @property
    def turn_id(self) -> str | None:
        value = self.raw.get("turnId")
        if isinstance(value, str):
            return value
        turn = self.raw.get("turn")
        if isinstance(turn, dict) and isinstance(turn.get("id"), str):
            return turn["id"]
        return None

    def __repr__(self) -> str:
        return f"Notification({self.method!r}, {self.raw!r})"


async def decline_every_command(_params: models.CommandExecutionRequestApprovalParams) -> ApprovalDecision:
    """The default approval handler: nothing the model asks to run runs unless you say so."""
    return "decline"


class Connection:
    """A running daemon and the JSON-RPC session with it. Use :meth:`spawn`."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        approval_handler: ApprovalHandler,
        tool_handler: ToolHandler | None,
        on_notification: NotificationHook | None,
    ) -> None:
        self._process = process
        self._approval_handler = approval_handler
        self._tool_handler = tool_handler
        self._on_notification = on_notification
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._threads: dict[str, asyncio.Queue[Notification | OpenturnError]] = {}
        self._write_lock = asyncio.Lock()
        self._handler_tasks: set[asyncio.Task[None]] = set()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._closed: OpenturnError | None = None
        self._reader = asyncio.create_task(self._read_stdout())
        self._stderr_reader = asyncio.create_task(self._read_stderr())

    @classmethod
    async def spawn(
        cls,
        binary: str | os.PathLike[str] = "openturn",
        *,
        config: Mapping[str, Any] | Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        inherit_env: bool = True,
        cwd: str | os.PathLike[str] | None = None,
        approval_handler: ApprovalHandler = decline_every_command,
        tool_handler: ToolHandler | None = None,
        on_notification: NotificationHook | None = None,
    ) -> "Connection":
        """Starts ``binary -c k=v … app-server``; the caller then calls :meth:`initialize`.

        ``config`` is ``-c`` overrides, as a mapping (values written as TOML) or ready
        ``"key=value"`` strings. ``env`` is added to this process's environment (or replaces it
        when ``inherit_env`` is false), so ``OPENAI_API_KEY`` and friends pass through.
        """
        args: list[str] = []
        for override in _overrides(config):
            args += ["-c", override]
        environment = dict(os.environ) if inherit_env else {}
        environment.update(env or {})
        try:
            process = await asyncio.create_subprocess_exec(
                os.fspath(binary),
                *args,
                "app-server",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=environment,
                cwd=cwd,
                limit=MAX_LINE_BYTES,
            )
        except OSError as error:
            raise OpenturnError(f"cannot start openturn from {os.fspath(binary)!r}: {error}") from error
        return cls(process, approval_handler, tool_handler, on_notification)

    @property
    def pid(self) -> int:
        return self._process.pid

    async def initialize(self, client_name: str, client_version: str) -> models.InitializeResponse:
        """The handshake every session starts with; experimental fields (dynamic tools) are on."""
        result = await self.request(
            "initialize",
            {
                "clientInfo": {"name": client_name, "version": client_version},
                "capabilities": {"experimentalApi": True},
            },
        )
        await self.notify("initialized", None)
        return models.InitializeResponse.model_validate(result)

    async def request(self, method: str, params: Any) -> Any:
        """Sends one request and waits for its result; a JSON-RPC error raises :class:`JsonRpcError`."""
        if self._closed is not None:
            raise self._closed
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            try:
                await self._send(message)
            except DaemonExited:
                # The reader fails this future once it has seen the end of the output, with the
                # exit status and last log lines (or what the daemon wrote that was not JSON).
                pass
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: Any) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)

    def subscribe(self, thread_id: str) -> "asyncio.Queue[Notification | OpenturnError]":
        """The queue that receives every notification naming ``thread_id`` (one per thread)."""
        return self._threads.setdefault(thread_id, asyncio.Queue())

    async def close(self, timeout: float = 5.0) -> int | None:
        """Closes stdin (the daemon's signal to shut down) and waits; kills it after ``timeout``."""
        if self._process.stdin and not self._process.stdin.is_closing():
            self._process.stdin.close()
        try:
            await asyncio.wait_for(self._process.wait(), timeout)
        except asyncio.TimeoutError:
            self._process.kill()
            await self._process.wait()
        for task in (self._reader, self._stderr_reader):
            try:
                await asyncio.wait_for(task, timeout)
            except asyncio.TimeoutError:
                task.cancel()
        for task in list(self._handler_tasks):
            task.cancel()
        return self._process.returncode

    async def _send(self, message: dict[str, Any]) -> None:
        stdin = self._process.stdin
        if stdin is None or stdin.is_closing():
            raise self._closed or DaemonExited(self._process.returncode, list(self.stderr_tail))
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        async with self._write_lock:
            try:
                stdin.write(line)
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as error:
                raise DaemonExited(self._process.returncode, list(self.stderr_tail)) from error

    async def _read_stdout(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        failure: OpenturnError | None = None
        try:
            while True:
                line = await stdout.readline()
                if not line:
                    break
                try:
                    message = json.loads(line)
                except json.JSONDecodeError as error:
                    failure = ProtocolError(f"openturn wrote a line that is not JSON: {line[:200]!r}")
                    raise failure from error
                self._dispatch(message)
        except ValueError as error:  # a line over MAX_LINE_BYTES
            failure = ProtocolError(f"reading openturn's output: {error}")
        except OpenturnError as error:
            failure = error
        finally:
            if failure is not None and self._process.returncode is None:
                # Nobody reads its stdout any more: a daemon left running would block on it.
                self._process.kill()
            await asyncio.sleep(0)  # let the stderr task catch the last lines first
            try:
                await asyncio.wait_for(self._process.wait(), 1.0)
            except asyncio.TimeoutError:
                pass
            self._fail_everything(failure or DaemonExited(self._process.returncode, list(self.stderr_tail)))

    def _fail_everything(self, error: OpenturnError) -> None:
        self._closed = error
        for _method, future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        for queue in self._threads.values():
            queue.put_nowait(error)

    async def _read_stderr(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        while True:
            try:
                line = await stderr.readline()
            except ValueError:
                continue
            if not line:
                return
            self.stderr_tail.append(line.decode(errors="replace").rstrip("\n"))

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            raise ProtocolError(f"openturn sent a message that is not an object: {message!r}")
        if "method" in message and "id" in message:
            task = asyncio.create_task(self._answer(message))
            self._handler_tasks.add(task)
            task.add_done_callback(self._handler_tasks.discard)
        elif "method" in message:
            notification = Notification.parse(message["method"], message.get("params") or {})
            if self._on_notification is not None:
                self._on_notification(notification)
            if notification.thread_id is not None:
                self.subscribe(notification.thread_id).put_nowait(notification)
        elif "id" in message:
            entry = self._pending.get(message["id"])
            if entry is None:
                return  # an answer to a request whose caller gave up (cancelled)
            method, future = entry
            if future.done():
                return
            if "error" in message:
                error = message["error"] or {}
                future.set_exception(
                    JsonRpcError(method, error.get("code", 0), error.get("message", ""), error.get("data"))
                )
            else:
                future.set_result(message.get("result"))

    async def _answer(self, message: dict[str, Any]) -> None:
        """Runs the handler of one server → client request and sends its reply."""
        request_id = message["id"]
        method = message["method"]
        variant = SERVER_REQUESTS.get(method)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        try:
            if variant is None:
                raise _Unhandled(-32601, f"openturn-client does not handle server request {method!r}")
            params = variant.model_validate({"method": method, "params": message.get("params")}).params  # type: ignore[attr-defined]
            if isinstance(params, models.CommandExecutionRequestApprovalParams):
                decision = await self._approval_handler(params)
                reply["result"] = {"decision": decision}
            else:
                reply["result"] = await self._call_tool(params)
        except _Unhandled as unhandled:
            reply["error"] = {"code": unhandled.code, "message": unhandled.message}
        except ValidationError as error:
            reply["error"] = {"code": -32602, "message": f"{method}: params do not match the schema: {error}"}
        except Exception as error:  # a handler's own failure goes back to the daemon, not up the stack
            reply["error"] = {"code": -32603, "message": f"{method} handler failed: {error}"}
        try:
            await self._send(reply)
        except OpenturnError:
            pass  # the daemon is gone; whoever waits on it learns that from the reader

    async def _call_tool(self, params: models.DynamicToolCallParams) -> dict[str, Any]:
        if self._tool_handler is None:
            raise _Unhandled(-32601, f"no tool handler: cannot run client tool {params.tool!r}")
        try:
            result = await self._tool_handler(params)
        except Exception as error:
            # The model hears that the tool failed, and why; the turn goes on.
            return {"contentItems": [{"type": "inputText", "text": str(error)}], "success": False}
        if isinstance(result, str):
            return {"contentItems": [{"type": "inputText", "text": result}], "success": True}
        if isinstance(result, BaseModel):
            return result.model_dump(by_alias=True, exclude_none=True, mode="json")
        return models.DynamicToolCallResponse.model_validate(dict(result)).model_dump(
            by_alias=True, exclude_none=True, mode="json"
        )


class _Unhandled(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _overrides(config: Mapping[str, Any] | Sequence[str]) -> list[str]:
    if isinstance(config, Mapping):
        return [f"{key}={_toml_value(value)}" for key, value in config.items()]
    return [str(item) for item in config]


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"config value {value!r} has no TOML form")
