"""Agent suites: the tasks an agent is run on and the arms it is compared in.

A suite is a TOML or JSON file (schema: `schemas/agent_suite.schema.json`, generated from the
models below). Paths in it (prompt files, source repositories, files an arm adds) resolve
relative to the suite file. Problems read `file: field: problem`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from plumbline.core.limits import MAX_REPEATS
from plumbline.core.problems import ProblemLinesError
from plumbline.records.io import UnreadableFileError, load_json_text, read_text_file

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
SCHEMA_ID = "https://plumbline.dev/schemas/agent_suite/1.0.0/agent_suite.schema.json"

Name = Annotated[str, Field(pattern=NAME_PATTERN, max_length=100)]
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]


def _relative(value: str) -> str:
    path = PurePosixPath(value)
    if not value or path.is_absolute() or ".." in path.parts:
        raise ValueError(f"{value!r} must be a relative path inside the workspace (no '..')")
    return value


def _all_relative(values: list[str]) -> list[str]:
    return [_relative(value) for value in values]


_PathText = Annotated[str, Field(min_length=1)]
#: A path (or glob) inside the workspace; a list of them is `RelativePaths`, checked as a whole
#: so that a problem names the field.
RelativePath = Annotated[_PathText, AfterValidator(_relative)]
RelativePaths = Annotated[list[_PathText], AfterValidator(_all_relative)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def _exactly_one(self, first: str, second: str, note: str = "") -> Self:
        """This model, when exactly one of its fields `first` and `second` is given."""
        if (getattr(self, first) is None) == (getattr(self, second) is None):
            raise ValueError(f"give exactly one of `{first}`{note} or `{second}`")
        return self


class Source(_Model):
    """Where a task's repository comes from: a local git repository at a revision, or a
    directory copied as it is."""

    git: str | None = Field(None, description="A local git repository (relative to the suite).")
    rev: str = Field("HEAD", description="The revision of `git` to check out.")
    dir: str | None = Field(None, description="A directory to copy (relative to the suite).")

    @model_validator(mode="after")
    def _one_kind(self) -> Source:
        return self._exactly_one("git", "dir", " (with optional `rev`)")


class FileToAdd(_Model):
    """A file an arm adds to the workspace, from a file next to the suite or inline."""

    path: RelativePath = Field(description="Where the file goes, relative to the workspace.")
    source: str | None = Field(None, description="A file to copy (relative to the suite).")
    content: str | None = Field(None, description="The file's text, inline.")

    @model_validator(mode="after")
    def _one_origin(self) -> FileToAdd:
        return self._exactly_one("source", "content")


class Arm(_Model):
    """One arm: what differs from the other arms. Everything else is identical."""

    name: Name
    description: str = ""
    setup: list[str] = Field(default_factory=list, description="Extra setup commands (sh -c).")
    add_files: list[FileToAdd] = Field(default_factory=list)
    remove_files: RelativePaths = Field(
        default_factory=list, description="Globs of files removed from the workspace."
    )
    env: dict[str, str] = Field(default_factory=dict)
    prompt_prefix: str = Field("", description="Text put before the prompt in this arm only.")
    prompt_suffix: str = Field("", description="Text put after the prompt in this arm only.")
    agent: str | None = Field(None, description="An agent command for this arm only.")
    pass_env: list[str] = Field(
        default_factory=list,
        description="Variables (an API key) passed from the invoking environment to this "
        "arm's agent only, like `--pass-env ARM:NAME`; never written anywhere.",
    )


class Network(_Model):
    """The model upstreams trials may reach, through the harness's metering proxy."""

    allow: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list,
        description="Upstream hosts (`host` or `host:port`) the metering proxy forwards to, "
        "besides api.anthropic.com and api.openai.com (like `--allow-host`).",
    )


class Task(_Model):
    """One task: a repository, a prompt, and the command that decides success."""

    id: Name
    prompt: str | None = Field(None, description="The prompt, inline.")
    prompt_file: str | None = Field(None, description="A file holding the prompt.")
    source: Source
    setup: list[str] = Field(default_factory=list, description="Setup commands (sh -c).")
    acceptance: str = Field(min_length=1, description="Success is this command's exit status 0.")
    acceptance_files: RelativePaths = Field(
        default_factory=list,
        description="The files the acceptance command checks with (e.g. its tests); protected.",
    )
    protected_paths: RelativePaths = Field(
        default_factory=list, description="More globs the agent must not change."
    )
    timeout_seconds: Seconds | None = None
    acceptance_timeout_seconds: Seconds | None = None
    env: dict[str, str] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_prompt(self) -> Task:
        return self._exactly_one("prompt", "prompt_file")


class AgentSuite(_Model):
    """A suite of agent tasks run in two or more arms."""

    name: Name
    description: str = ""
    control: Name | None = Field(None, description="The control arm (the baseline).")
    arms: list[Arm] = Field(min_length=2)
    tasks: list[Task] = Field(min_length=1)
    prompt_template: str = Field(
        "{prompt}", description="Scaffolding around every task prompt, the same in every arm."
    )
    repeats: Annotated[int, Field(ge=1, le=MAX_REPEATS)] = 5
    timeout_seconds: Seconds = 1800.0
    acceptance_timeout_seconds: Seconds = 600.0
    setup_timeout_seconds: Seconds = 600.0
    protected_paths: RelativePaths = Field(
        default_factory=list, description="Globs no agent may change, in every task."
    )
    restore_protected: bool = Field(
        True,
        description="Restore protected files to their original content before the "
        "acceptance check (their edits stay in the saved diff and are flagged).",
    )
    env: dict[str, str] = Field(default_factory=dict)
    agent: str | None = Field(None, description="Default agent command or profile name.")
    mounts: list[str] = Field(
        default_factory=list,
        description="Host paths every trial's sandbox gets read-only (a toolchain, a cache); "
        "relative paths resolve against the suite's directory.",
    )
    network: Network = Field(
        default_factory=Network, description="The upstreams the metering proxy may forward to."
    )
    allow_shadowing: list[str] = Field(
        default_factory=list,
        description="Module names or workspace paths an agent may add although they would "
        "shadow what the acceptance command imports (a new conftest.py, a json.py).",
    )

    @field_validator("prompt_template")
    @classmethod
    def _has_prompt(cls, value: str) -> str:
        if "{prompt}" not in value:
            raise ValueError("must contain {prompt}")
        return value

    @model_validator(mode="after")
    def _unique(self) -> AgentSuite:
        for kind, names in (
            ("arm", [a.name for a in self.arms]),
            ("task", [t.id for t in self.tasks]),
        ):
            seen = {n for n in names if names.count(n) > 1}
            if seen:
                raise ValueError(f"{kind} names must be unique: {', '.join(sorted(seen))}")
        if self.control is not None and self.control not in [a.name for a in self.arms]:
            raise ValueError(f"control {self.control!r} is not one of the arms")
        return self

    def arm(self, name: str) -> Arm:
        return next(a for a in self.arms if a.name == name)

    def task(self, task_id: str) -> Task:
        return next(t for t in self.tasks if t.id == task_id)


class SuiteError(ProblemLinesError):
    """A suite that cannot be used; the message lists every problem as `file: field: problem`."""


@dataclass(frozen=True)
class LoadedSuite:
    """A validated suite with where it came from and a digest of everything it names."""

    suite: AgentSuite
    path: Path
    digest: str

    @property
    def base(self) -> Path:
        return self.path.parent

    def resolve(self, relative: str) -> Path:
        return (self.base / relative).resolve()

    def prompt(self, task: Task) -> str:
        if task.prompt is not None:
            return task.prompt
        assert task.prompt_file is not None
        return read_text_file(self.resolve(task.prompt_file))

    def file_content(self, item: FileToAdd) -> bytes:
        if item.content is not None:
            return item.content.encode("utf-8")
        assert item.source is not None
        return self.resolve(item.source).read_bytes()


def _location(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "<suite>"


def _parse(path: Path) -> Any:
    text = read_text_file(path)
    if path.suffix.lower() == ".json":
        return load_json_text(text, path)
    return tomllib.loads(text)


def load_suite(path: str | Path) -> LoadedSuite:
    """Read, validate and check a suite file (every problem at once, as `file: field: why`)."""
    source = Path(path)
    name = str(path)
    try:
        data = _parse(source)
    except FileNotFoundError:
        raise SuiteError([f"{name}: <suite>: no such file"]) from None
    except OSError as error:
        raise SuiteError([f"{name}: <suite>: cannot read: {error.strerror or error}"]) from None
    except UnreadableFileError as error:
        raise SuiteError([str(error)]) from None
    except tomllib.TOMLDecodeError as error:
        raise SuiteError([f"{name}: <suite>: not valid TOML or JSON: {error}"]) from None
    except RecursionError:
        raise SuiteError([f"{name}: <suite>: not valid TOML or JSON: nested too deeply"]) from None
    try:
        suite = AgentSuite.model_validate(data)
    except ValidationError as error:
        raise SuiteError(
            [f"{name}: {_location(d['loc'])}: {d['msg']}" for d in error.errors()]
        ) from None
    loaded = LoadedSuite(suite, source.resolve(), "")
    problems = _missing_files(loaded, name)
    if problems:
        raise SuiteError(problems)
    return LoadedSuite(suite, source.resolve(), _digest(loaded))


def _missing_files(loaded: LoadedSuite, name: str) -> list[str]:
    problems: list[str] = []
    suite = loaded.suite
    for i, task in enumerate(suite.tasks):
        if task.prompt_file and not loaded.resolve(task.prompt_file).is_file():
            problems.append(f"{name}: tasks.{i}.prompt_file: no such file: {task.prompt_file}")
        if task.source.git and not loaded.resolve(task.source.git).is_dir():
            problems.append(f"{name}: tasks.{i}.source.git: no such directory: {task.source.git}")
        if task.source.dir and not loaded.resolve(task.source.dir).is_dir():
            problems.append(f"{name}: tasks.{i}.source.dir: no such directory: {task.source.dir}")
    for i, arm in enumerate(suite.arms):
        for j, item in enumerate(arm.add_files):
            if item.source and not loaded.resolve(item.source).is_file():
                problems.append(
                    f"{name}: arms.{i}.add_files.{j}.source: no such file: {item.source}"
                )
    return problems


def _digest(loaded: LoadedSuite) -> str:
    """sha256 over the suite file and every prompt and added file it names."""
    digest = hashlib.sha256(loaded.path.read_bytes())
    for task in loaded.suite.tasks:
        digest.update(loaded.prompt(task).encode("utf-8"))
    for arm in loaded.suite.arms:
        for item in arm.add_files:
            digest.update(loaded.file_content(item))
    return digest.hexdigest()


def tree_digest(directory: Path) -> str:
    """sha256 over a directory's files as a workspace gets them (`.git` left out): every
    path, its kind and executable bit, and its bytes or link target."""
    digest = hashlib.sha256()
    for top, dirs, files in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        base = Path(top)
        names = sorted([*files, *(d for d in dirs if (base / d).is_symlink())])
        for name in names:
            if name == ".git":
                continue
            path = base / name
            relative = path.relative_to(directory).as_posix().encode()
            if path.is_symlink():
                digest.update(b"L" + relative + b"\0" + os.fsencode(os.readlink(path)) + b"\0")
                continue
            mode = b"x" if path.stat().st_mode & 0o111 else b"f"
            content = path.read_bytes()
            digest.update(mode + relative + b"\0" + str(len(content)).encode() + b"\0" + content)
    return digest.hexdigest()


def generated_schema() -> dict[str, Any]:
    """The suite JSON Schema, generated from `AgentSuite` (the shipped file equals this)."""
    schema = AgentSuite.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "version": "1.0.0",
        **schema,
    }


@cache
def agent_suite_schema() -> dict[str, Any]:
    """The suite JSON Schema shipped with the package."""
    text = resources.files("plumbline").joinpath("schemas/agent_suite.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


__all__ = [
    "AgentSuite",
    "Arm",
    "FileToAdd",
    "LoadedSuite",
    "Source",
    "SuiteError",
    "Task",
    "agent_suite_schema",
    "generated_schema",
    "load_suite",
    "tree_digest",
]
