"""Hermetic trial directories: a fresh repository, its own HOME, nothing from elsewhere.

A trial directory holds `workspace/` (the task's repository: a copy of the source, its own
`git init` and one initial commit with a fixed author and date), `home/` (HOME, the XDG
directories and the agents' state directories), `tmp/` and `logs/`. It lives outside any git
repository and below no directory holding agent instruction files, so nothing from another arm,
trial or project is visible. The agent's environment is built from an allow-list.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: Files and directories agents read instructions or settings from, in any parent directory.
INSTRUCTION_FILES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    "AGENTS.md",
    ".claude",
    ".codex",
    "opencode.json",
    ".opencode",
    ".cursorrules",
    ".github/copilot-instructions.md",
)

#: Variables of the harness's own environment the agent may see (nothing else passes).
ALLOWED_ENV = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "USER",
    "LOGNAME",
    "SHELL",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)

FIXED_DATE = "2000-01-01T00:00:00+00:00"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "plumbline",
    "GIT_AUTHOR_EMAIL": "plumbline@localhost",
    "GIT_COMMITTER_NAME": "plumbline",
    "GIT_COMMITTER_EMAIL": "plumbline@localhost",
    "GIT_AUTHOR_DATE": FIXED_DATE,
    "GIT_COMMITTER_DATE": FIXED_DATE,
}


class WorkspaceError(RuntimeError):
    """The trial directory or its repository could not be made."""


@dataclass(frozen=True)
class Trial:
    """The directories of one trial."""

    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def logs(self) -> Path:
        return self.root / "logs"


def enclosing_repository(directory: Path) -> str | None:
    """The top level of the git repository `directory` is in, or None."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    result = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.strip() or None if result.returncode == 0 else None


def check_trial_base(base: Path) -> None:
    """Refuse a base directory inside a repository or below agent instruction files."""
    repository = enclosing_repository(base)
    if repository is not None:
        raise WorkspaceError(
            f"trial directories under {base} would be inside the git repository {repository}, "
            "where agents read its files; choose a --workdir outside any repository"
        )
    found = [
        str(parent / name)
        for parent in [base, *base.parents]
        for name in INSTRUCTION_FILES
        if (parent / name).exists()
    ]
    if found:
        raise WorkspaceError(
            f"agents would read instruction files above {base}: {', '.join(found)}; "
            "choose a --workdir with none in its parent directories"
        )


def create_trial(base: Path, prefix: str) -> Trial:
    """A fresh trial directory under `base`."""
    root = Path(tempfile.mkdtemp(prefix=f"{prefix}.", dir=base))
    trial = Trial(root)
    for directory in (
        trial.workspace,
        trial.home / ".config",
        trial.home / ".cache",
        trial.home / ".local" / "share",
        trial.home / ".local" / "state",
        trial.home / ".claude",
        trial.home / ".codex",
        trial.tmp,
        trial.logs,
    ):
        directory.mkdir(parents=True, exist_ok=True)
    # Agents that commit need an identity; it is the same in every trial.
    (trial.home / ".gitconfig").write_text(
        "[user]\n\tname = agent\n\temail = agent@localhost\n[init]\n\tdefaultBranch = main\n"
    )
    return trial


def agent_environment(
    trial: Trial, variables: Mapping[str, str], parent: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allow-listed part of `parent`, the trial's own directories, then `variables`."""
    source = os.environ if parent is None else parent
    env = {name: source[name] for name in ALLOWED_ENV if name in source}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    home = trial.home
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "TMPDIR": str(trial.tmp),
            # git never looks above the trial for a repository.
            "GIT_CEILING_DIRECTORIES": str(trial.root),
        }
    )
    env.update(variables)
    return env


def git(workspace: Path, *args: str, env: Mapping[str, str]) -> bytes:
    """Run git in the workspace with a fixed identity and no user or system configuration."""
    git_env = {
        "PATH": os.environ.get("PATH", os.defpath),
        **env,
        **GIT_IDENTITY,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    result = subprocess.run(
        ["git", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", *args],
        cwd=workspace,
        env=git_env,
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise WorkspaceError(f"git {' '.join(args)} failed: {message}")
    return result.stdout


def resolve_revision(repository: Path, rev: str) -> str:
    """The commit a revision of a local repository names."""
    try:
        out = git(repository, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", env={})
    except WorkspaceError:
        raise WorkspaceError(f"{repository}: revision {rev!r} does not name a commit") from None
    return out.decode().strip()


def copy_git_source(repository: Path, commit: str, workspace: Path) -> None:
    """The files of `commit` (no history) into the workspace."""
    archive = git(repository, "archive", "--format=tar", commit, env={})
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: refuse links out of the tree
            tar.extractall(workspace, filter="data")
        else:  # pragma: no cover - older 3.11 patch releases
            tar.extractall(workspace)


def copy_dir_source(directory: Path, workspace: Path) -> None:
    """A directory's files into the workspace, without any `.git` (history stays behind)."""
    shutil.copytree(
        directory,
        workspace,
        symlinks=True,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(".git"),
    )


def init_repository(workspace: Path, env: Mapping[str, str]) -> None:
    git(workspace, "init", "--quiet", "--initial-branch=main", env=env)


def commit_all(workspace: Path, env: Mapping[str, str]) -> str:
    """Commit everything in the workspace as the initial commit; its hash."""
    git(workspace, "add", "--all", env=env)
    git(workspace, "commit", "--quiet", "--allow-empty", "-m", "initial state", env=env)
    return git(workspace, "rev-parse", "HEAD", env=env).decode().strip()


def staged_diff(workspace: Path, initial: str, env: Mapping[str, str]) -> tuple[bytes, list[str]]:
    """Everything changed since `initial` (new files included): a binary patch and the paths."""
    git(workspace, "add", "--all", env=env)
    patch = git(workspace, "diff", "--cached", "--binary", "--no-renames", initial, env=env)
    names = git(
        workspace, "diff", "--cached", "--name-only", "--no-renames", "-z", initial, env=env
    )
    return patch, [n for n in names.decode("utf-8", "replace").split("\0") if n]


def matching(workspace: Path, initial: str, paths: list[str], globs: list[str]) -> list[str]:
    """The changed `paths` that match any of `globs` (git's `:(glob)` pathspecs, `**` works)."""
    if not globs or not paths:
        return []
    specs = [f":(glob){pattern}" for pattern in globs]
    out = git(
        workspace,
        "diff",
        "--cached",
        "--name-only",
        "--no-renames",
        "-z",
        initial,
        "--",
        *specs,
        env={},
    )
    chosen = {n for n in out.decode("utf-8", "replace").split("\0") if n}
    return [p for p in paths if p in chosen]


def restore(workspace: Path, initial: str, paths: list[str], env: Mapping[str, str]) -> None:
    """Put `paths` back as they were in `initial` (files the agent added are removed)."""
    for path in paths:
        try:
            git(workspace, "cat-file", "-e", f"{initial}:{path}", env=env)
        except WorkspaceError:
            target = workspace / path
            if target.is_symlink() or target.is_file():
                target.unlink()
            elif target.is_dir():
                shutil.rmtree(target)
            git(workspace, "rm", "--cached", "--quiet", "--ignore-unmatch", "--", path, env=env)
        else:
            git(workspace, "checkout", initial, "--", path, env=env)


__all__ = [
    "ALLOWED_ENV",
    "INSTRUCTION_FILES",
    "Trial",
    "WorkspaceError",
    "agent_environment",
    "check_trial_base",
    "commit_all",
    "copy_dir_source",
    "copy_git_source",
    "create_trial",
    "enclosing_repository",
    "init_repository",
    "matching",
    "resolve_revision",
    "restore",
    "staged_diff",
]
