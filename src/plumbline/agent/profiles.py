"""Agent profiles: how to start an agent on a prompt and read what it reports.

An agent command is a template: `{prompt}` becomes the prompt text (one argument, never
through a shell), `{prompt_file}` a file holding it, `{workspace}` the workspace. A template
with neither prompt placeholder gets the prompt on standard input. A bare profile name
(`claude-code`, `opencode`, `codex`) stands for that profile's usual command.

Built-in profiles parse the agent's standard output with the run-record adapters: Claude Code
(`--output-format json` or `stream-json`), opencode (`run --format json` events), Codex CLI
(`exec --json` events). The generic profile reads nothing: its records carry duration and exit
code, and null tokens and cost (unknown, never zero).
"""

from __future__ import annotations

import io
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbline.records.adapters import claude_code, codex, opencode
from plumbline.records.io import Located, iter_json_values

_PLACEHOLDER = re.compile(r"\{(prompt|prompt_file|workspace)\}")

Parser = Callable[[list[Any]], dict[str, Any]]

#: Fields a profile may report; the harness owns every other record field.
REPORTED_FIELDS = (
    "duration_seconds",
    "total_cost_usd",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "step_count",
    "tool_call_count",
    "session_id",
    "model",
    "model_usage",
)


def _claude(values: list[Any]) -> dict[str, Any]:
    return claude_code.output_to_fields(values) or {}


def _opencode(values: list[Any]) -> dict[str, Any]:
    exports = [v for v in values if isinstance(v, dict) and "info" in v and "messages" in v]
    if exports:
        return opencode.export_to_fields(exports[-1])
    events = [v for v in values if isinstance(v, dict) and "type" in v]
    return opencode.events_to_fields(events) if events else {}


def _codex(values: list[Any]) -> dict[str, Any]:
    events = [v for v in values if isinstance(v, dict) and "type" in v]
    return codex.events_to_fields(events) if events else {}


def _generic(values: list[Any]) -> dict[str, Any]:
    return {}


Commands = Callable[[list[Any]], list[str] | None]


def _claude_commands(values: list[Any]) -> list[str] | None:
    """Shell commands from the `tool_use` blocks of a stream-json stream (None without one)."""
    streamed = False
    commands: list[str] = []
    for value in values:
        if not isinstance(value, dict) or value.get("type") != "assistant":
            continue
        streamed = True
        message = value.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                given = block.get("input")
                command = given.get("command") if isinstance(given, dict) else None
                if isinstance(command, str):
                    commands.append(command)
    return commands if streamed else None


def _opencode_commands(values: list[Any]) -> list[str] | None:
    commands: list[str] = []
    for value in values:
        part = value.get("part") if isinstance(value, dict) else None
        if isinstance(part, dict) and part.get("type") == "tool":
            state = part.get("state")
            given = state.get("input") if isinstance(state, dict) else None
            command = given.get("command") if isinstance(given, dict) else None
            if isinstance(command, str):
                commands.append(command)
    return commands if values else None


def _codex_commands(values: list[Any]) -> list[str] | None:
    commands = [
        v["item"]["command"]
        for v in values
        if isinstance(v, dict)
        and v.get("type") == "item.completed"
        and isinstance(v.get("item"), dict)
        and v["item"].get("type") == "command_execution"
        and isinstance(v["item"].get("command"), str)
    ]
    return commands if values else None


def _no_commands(values: list[Any]) -> list[str] | None:
    return None


@dataclass(frozen=True)
class Profile:
    name: str
    executable: str | None
    template: str | None
    parse: Parser
    commands: Commands = _no_commands


#: The usual command of each agent. Claude Code: `-p` mode denies every tool not allowed on the
#: command line (and refuses `--dangerously-skip-permissions` to root), and `stream-json` names
#: the tool calls and shell commands. Codex CLI: its own sandbox cannot start inside a trial (it
#: will not install its helper under a temporary directory, and would nest bubblewrap in the
#: trial's), so the trial sandbox is the wall (docs/tutorials/agents-in-the-sandbox.md).
PROFILES: dict[str, Profile] = {
    "claude-code": Profile(
        "claude-code",
        "claude",
        "claude -p {prompt} --output-format stream-json --verbose "
        "--allowedTools Bash,Edit,Write,Read,Glob,Grep",
        _claude,
        _claude_commands,
    ),
    "opencode": Profile(
        "opencode", "opencode", "opencode run --format json {prompt}", _opencode, _opencode_commands
    ),
    "codex": Profile(
        "codex",
        "codex",
        "codex exec --json --dangerously-bypass-approvals-and-sandbox {prompt}",
        _codex,
        _codex_commands,
    ),
    "generic": Profile("generic", None, None, _generic),
}


class AgentCommandError(ValueError):
    """An agent command template that cannot be used."""


@dataclass(frozen=True)
class AgentReport:
    """What an agent reported: run-record fields (empty when nothing parsed), the shell
    commands it ran (None when its output does not say), and why its output could not be
    read (None when it could; the fields are then empty)."""

    fields: dict[str, Any]
    commands: list[str] | None
    problem: str | None = None


@dataclass(frozen=True)
class AgentCommand:
    """An agent command template and the profile that reads its output."""

    template: str
    profile: Profile

    @property
    def argv_template(self) -> list[str]:
        return shlex.split(self.template)

    def argv(self, prompt: str, prompt_file: Path, workspace: Path) -> tuple[list[str], bool]:
        """The argument list, and whether the prompt goes to standard input."""
        values = {"prompt": prompt, "prompt_file": str(prompt_file), "workspace": str(workspace)}
        # One pass, so a prompt that happens to contain `{workspace}` stays as written.
        argv = [
            _PLACEHOLDER.sub(lambda m: values[m.group(1)], token) for token in self.argv_template
        ]
        uses_prompt = "{prompt}" in self.template or "{prompt_file}" in self.template
        return argv, not uses_prompt

    def anchored(self, base: Path) -> AgentCommand:
        """This command with a relative executable path (`./agent.py`, `bin/agent`) made
        absolute against `base`: trials run in their own workspaces, where it would name
        nothing. A bare name (looked up on PATH) or an absolute path stays as written."""
        stream = io.StringIO(self.template)
        lexer = shlex.shlex(stream, posix=True)
        lexer.whitespace_split = True
        first = lexer.get_token()
        if not first or "/" not in first or Path(first).is_absolute():
            return self
        rest = stream.read()
        resolved = shlex.quote(str((base / first).absolute()))
        return AgentCommand(f"{resolved} {rest}" if rest else resolved, self.profile)

    @property
    def executable(self) -> str:
        """The program the command starts (its first word)."""
        return self.argv_template[0]

    def read(self, stdout: Path) -> AgentReport:
        """What the agent reported on standard output. Output of an unexpected shape is the
        agent's business, never the harness's failure: it leaves the fields unknown."""
        try:
            if not stdout.is_file() or stdout.stat().st_size == 0:
                return AgentReport({}, None)
            values = [item.value for item in iter_json_values(stdout) if isinstance(item, Located)]
            fields = self.profile.parse(values)
            if not isinstance(fields, dict):
                raise TypeError(f"the {self.profile.name} parser returned {type(fields).__name__}")
            reported = {k: v for k, v in fields.items() if k in REPORTED_FIELDS}
            return AgentReport(reported, self.profile.commands(values))
        except Exception as error:  # any shape of output: a parser bug must not lose the run
            problem = f"the {self.profile.name} profile could not read the agent's output: "
            return AgentReport({}, None, f"{problem}{type(error).__name__}: {error}")

    def report(self, stdout: Path) -> tuple[dict[str, Any], list[str] | None]:
        """What the agent reported on standard output: run-record fields (empty when nothing
        parsed), and the shell commands it ran (None when its output does not say)."""
        found = self.read(stdout)
        return found.fields, found.commands

    def parse(self, stdout: Path) -> dict[str, Any]:
        """The run-record fields the agent reported (see `report`)."""
        return self.report(stdout)[0]


def count_runs_of(command: str, commands: list[str] | None) -> int | None:
    """How many of the agent's shell commands ran `command` (whitespace-insensitive)."""
    if commands is None:
        return None
    wanted = " ".join(command.split())
    return sum(wanted in " ".join(c.split()) for c in commands)


def resolve_agent(spec: str, profile: str | None = None) -> AgentCommand:
    """An agent command from a template or a profile name; the profile is detected from the
    executable's name unless given."""
    if spec in PROFILES and PROFILES[spec].template is not None:
        chosen = PROFILES[spec]
        assert chosen.template is not None
        if profile not in (None, spec):
            raise AgentCommandError(f"--agent {spec} uses the {spec} profile, not {profile}")
        return AgentCommand(chosen.template, chosen)
    try:
        argv = shlex.split(spec)
    except ValueError as error:
        raise AgentCommandError(f"agent command {spec!r}: {error}") from None
    if not argv:
        raise AgentCommandError("the agent command is empty")
    if profile is not None:
        if profile not in PROFILES:
            raise AgentCommandError(
                f"unknown profile {profile!r}: use one of {', '.join(sorted(PROFILES))}"
            )
        return AgentCommand(spec, PROFILES[profile])
    executable = Path(argv[0]).name
    detected = next(
        (p for p in PROFILES.values() if p.executable and p.executable == executable),
        PROFILES["generic"],
    )
    return AgentCommand(spec, detected)


__all__ = [
    "PROFILES",
    "AgentCommand",
    "AgentCommandError",
    "AgentReport",
    "Profile",
    "count_runs_of",
    "resolve_agent",
]
