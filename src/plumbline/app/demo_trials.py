"""The demo's agent trials: the example agent suite, run by the harness against an offline model.

`demo_agent` serves the scripted coding model (`plumbline.models.scripted_coder`) on loopback
and writes a copy of the example agent suite whose `[env]` points an agent at it. The demo then
runs `plumbline agent run` on that suite with the demo's agent (`plumbline/examples/
demo_agent.py`): each trial in the sandbox, on its own network, its model calls through the
harness's metering proxy (the only way out), so every token in its records is one the harness
counted.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from plumbline.models.scripted_coder import MODEL, ScriptedCoder
from plumbline.records.writing import write_atomic


@dataclass(frozen=True)
class DemoAgent:
    """What `agent run` needs to run the demo's trials: the suite, the agent, the upstream."""

    suite: Path
    command: str
    allow_host: str


def _example(name: str) -> Path:
    return Path(str(resources.files("plumbline") / "examples" / name))


def agent_unavailable() -> str | None:
    """Why this machine cannot run the demo's agent trials (None when it can)."""
    from plumbline.sandbox import probe_sandbox

    status = probe_sandbox()
    return None if status.available else f"the agent trials need a sandbox: {status.reason}"


@contextmanager
def demo_agent(directory: Path) -> Iterator[DemoAgent]:
    """The example suite copied under `directory` and pointed at the scripted model, which is
    served until the context closes."""
    suite_dir = directory / "agent-suite"
    shutil.rmtree(suite_dir, ignore_errors=True)
    shutil.copytree(_example("agent_suite"), suite_dir)
    suite = suite_dir / "suite.toml"
    text = suite.read_text(encoding="utf-8")
    with ScriptedCoder() as coder:
        # The example suite's [env] says how to point an agent at a local model: done here.
        here = f'[env]\nANTHROPIC_BASE_URL = "{coder.base_url}"\nANTHROPIC_MODEL = "{MODEL}"\n'
        write_atomic(suite, text.replace("[env]\n", here, 1))
        agent = shlex.join([sys.executable, str(_example("demo_agent.py"))]) + " {prompt}"
        yield DemoAgent(suite, agent, coder.host)
