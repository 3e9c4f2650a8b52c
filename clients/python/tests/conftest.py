"""Fixtures shared by the suite: the binary under test and one loopback mock provider per
scenario, both handed over by the Rust harness (tests/clients_python.rs) in the environment:

- ``OPENTURN_BIN``: the openturn binary;
- ``OPENTURN_TEST_PROVIDERS``: JSON object, scenario name → mock provider base URL.

Run the suite through ``cargo test --test clients_python``; run directly, the tests that need a
provider skip and say why.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from openturn_client import OpenturnClient

TEST_TIMEOUT_SECONDS = 60


def async_test(fn):
    """Runs an async test on a fresh event loop, bounded so a hung daemon fails the test."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(asyncio.wait_for(fn(*args, **kwargs), TEST_TIMEOUT_SECONDS))

    return wrapper


def _providers() -> dict[str, str]:
    raw = os.environ.get("OPENTURN_TEST_PROVIDERS")
    if not raw:
        pytest.skip("OPENTURN_TEST_PROVIDERS is not set: run through `cargo test --test clients_python`")
    return json.loads(raw)


class Daemons:
    """Starts clients against one scenario's provider, all sharing this test's home folder."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def config(self, scenario: str) -> dict[str, Any]:
        providers = _providers()
        if scenario not in providers:
            raise AssertionError(f"no provider for scenario {scenario!r}; the harness has {sorted(providers)}")
        return {
            "model": "gpt-5",
            "model_provider": "mock",
            "model_providers.mock.name": "mock",
            "model_providers.mock.base_url": providers[scenario],
            "model_providers.mock.env_key": "OPENTURN_TEST_KEY",
            "model_providers.mock.request_max_retries": 0,
            "model_providers.mock.stream_max_retries": 0,
        }

    async def start(self, scenario: str, **kwargs: Any) -> OpenturnClient:
        binary = os.environ.get("OPENTURN_BIN")
        if not binary:
            pytest.skip("OPENTURN_BIN is not set: run through `cargo test --test clients_python`")
        env = {"OPENTURN_HOME": str(self.home), "OPENTURN_TEST_KEY": "sk-test-key"}
        return await OpenturnClient.start(binary, config=self.config(scenario), env=env, **kwargs)


@pytest.fixture
def daemons(tmp_path: Path) -> Daemons:
    home = tmp_path / "home"
    home.mkdir()
    return Daemons(home)
