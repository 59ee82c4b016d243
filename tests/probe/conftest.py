"""Fixtures: the local OpenAI-compatible server, stopped after each test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer


@pytest.fixture
def server_factory() -> Iterator[Any]:
    servers: list[OpenAIServer] = []

    def make(*args: Any, **kwargs: Any) -> OpenAIServer:
        server = OpenAIServer(*args, **kwargs).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()
