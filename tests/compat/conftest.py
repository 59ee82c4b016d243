"""Fixtures of the compat tests: the local OpenAI-compatible server, as the reliability tests'."""

from tests.probe.conftest import server_factory

__all__ = ["server_factory"]
