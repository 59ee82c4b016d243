"""Shared synthesizers: one warm pool per test process, reused by every CDK test module."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from plumbline.cdk.synth import CdkSynthesizer, SynthOptions
from plumbline.sandbox import ResourceLimits

GiB = 1024**3

#: Present in the parent's environment for the whole session; no sample may ever see it.
FAKE_SECRETS = {
    "OPENAI_API_KEY": "sk-plumbline-fake-cdk-0123456789",
    "AWS_SECRET_ACCESS_KEY": "plumbline/fake/aws/secret/0123456789",
}


@pytest.fixture(scope="session")
def fake_secrets() -> dict[str, str]:
    return dict(FAKE_SECRETS)


@pytest.fixture(scope="session")
def synthesizer() -> Iterator[CdkSynthesizer]:
    """Full CDK workers. Generous wall clock: CI machines are shared and slow; the infinite
    loop is stopped by its CPU-second budget instead."""
    previous = {name: os.environ.get(name) for name in FAKE_SECRETS}
    os.environ.update(FAKE_SECRETS)
    options = SynthOptions(
        limits=ResourceLimits(wall_seconds=240, cpu_seconds=8, address_space_bytes=3 * GiB),
        pool_size=1,
    )
    try:
        with CdkSynthesizer(options) as shared:
            yield shared
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="session")
def light_synthesizer() -> Iterator[CdkSynthesizer]:
    """Workers with nothing preloaded (no jsii runtime): cheap, for apps that never get to
    CDK because the sandbox stops them first."""
    options = SynthOptions(
        limits=ResourceLimits(
            wall_seconds=6,
            cpu_seconds=4,
            address_space_bytes=GiB,
            file_size_bytes=16 * 1024**2,
            workdir_bytes=48 * 1024**2,
        ),
        pool_size=1,
        preload=(),
    )
    with CdkSynthesizer(options) as shared:
        yield shared
