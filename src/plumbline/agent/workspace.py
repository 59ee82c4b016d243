"""Hermetic trial directories: a fresh repository, its own HOME, nothing from elsewhere.

A trial directory holds `workspace/` (the task's repository: a copy of the source, its own
`git init` and one initial commit with a fixed author and date), `home/` (HOME, the XDG
directories and the agents' state directories), `tmp/` and `logs/`. It lives outside any git
repository and below no directory holding agent instruction files, so nothing from another arm,
trial or project is visible. The agent's environment is built from an allow-list.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from plumbline.agent.safe_files import MAX_READ_BYTES, escaped_name, read_regular, remove_tree

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
    try:
        result = _run_git(directory, ("rev-parse", "--show-toplevel"), env, GIT_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        raise WorkspaceError(f"git rev-parse in {directory} did not finish") from None
    return os.fsdecode(result.stdout).strip() or None if result.returncode == 0 else None


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
    trial: Trial,
    variables: Mapping[str, str],
    parent: Mapping[str, str] | None = None,
    *,
    home: Path | None = None,
) -> dict[str, str]:
    """The allow-listed part of `parent`, the trial's own directories (`home` instead of the
    trial's HOME when given), then `variables`."""
    source = os.environ if parent is None else parent
    env = {name: source[name] for name in ALLOWED_ENV if name in source}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    home = trial.home if home is None else home
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


#: Every git call of the harness runs with these: nothing a repository's configuration (which an
#: agent may have written) names is executed, and no ignore file outside the repository counts.
SAFE_GIT_CONFIG = (
    "core.autocrlf=false",
    "commit.gpgsign=false",
    "core.fsmonitor=",
    "core.hooksPath=/dev/null",
    "core.excludesFile=/dev/null",
    "core.attributesFile=/dev/null",
    "diff.external=",
)
#: How long one git call of the harness may take.
GIT_TIMEOUT_SECONDS = 120.0


def _run_git(
    directory: Path, args: Sequence[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """git `args` in `directory` with `SAFE_GIT_CONFIG`, its output captured (raises
    `subprocess.TimeoutExpired` after `timeout` seconds)."""
    options = [item for setting in SAFE_GIT_CONFIG for item in ("-c", setting)]
    return subprocess.run(
        ["git", *options, *args],
        cwd=directory,
        env=env,
        capture_output=True,
        check=False,
        timeout=timeout,
    )


def git(
    workspace: Path, *args: str, env: Mapping[str, str], timeout: float = GIT_TIMEOUT_SECONDS
) -> bytes:
    """Run git in the workspace with a fixed identity, no user or system configuration, no
    hooks, no fsmonitor, no external diff or text conversion, and a time limit."""
    git_env = {
        "PATH": os.environ.get("PATH", os.defpath),
        **env,
        **GIT_IDENTITY,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    if args and args[0] == "diff":
        args = ("diff", "--no-ext-diff", "--no-textconv", *args[1:])
    try:
        result = _run_git(workspace, args, git_env, timeout)
    except subprocess.TimeoutExpired:
        raise WorkspaceError(f"git {' '.join(args)} took longer than {timeout:g} s") from None
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


@dataclass(frozen=True)
class SourceSnapshot:
    """A task's source, read once: its files as a tar archive, named by the archive's sha256.

    `kind` is "git" (a commit's files, extracted with the `data` filter: no link leaves the
    tree) or "dir" (a directory's files, its symbolic links as they are)."""

    kind: str
    sha256: str
    archive: bytes

    def extract(self, workspace: Path) -> None:
        """The files into `workspace`, after checking the archive still has its digest."""
        if hashlib.sha256(self.archive).hexdigest() != self.sha256:
            raise WorkspaceError(f"the task source snapshot {self.sha256[:12]} was altered")
        with tarfile.open(fileobj=io.BytesIO(self.archive)) as tar:
            tar.extractall(workspace, filter="data" if self.kind == "git" else "tar")


def snapshot_source(location: Path, commit: str | None) -> SourceSnapshot:
    """The snapshot of a commit of the repository at `location`, or (`commit` None) of the
    directory `location` without any `.git`."""
    if commit is not None:
        archive = git(location, "archive", "--format=tar", commit, env={})
        return SourceSnapshot("git", hashlib.sha256(archive).hexdigest(), archive)
    archive = tar_directory(location)
    return SourceSnapshot("dir", hashlib.sha256(archive).hexdigest(), archive)


def tar_directory(directory: Path) -> bytes:
    """A directory's files (without any `.git`, links kept as links) as a tar archive."""
    if not directory.is_dir():
        raise WorkspaceError(f"task source {directory}: no such directory")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(directory.rglob("*")):
            relative = path.relative_to(directory)
            if ".git" in relative.parts:
                continue
            tar.add(path, arcname=relative.as_posix(), recursive=False)
    return buffer.getvalue()


def init_repository(workspace: Path, env: Mapping[str, str]) -> None:
    git(workspace, "init", "--quiet", "--initial-branch=main", env=env)


def commit_all(workspace: Path, env: Mapping[str, str]) -> str:
    """Commit everything in the workspace as the initial commit; its hash."""
    git(workspace, "add", "--all", env=env)
    git(workspace, "commit", "--quiet", "--allow-empty", "-m", "initial state", env=env)
    return git(workspace, "rev-parse", "HEAD", env=env).decode().strip()


@functools.lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """git's `:(glob)` pathspec as a regular expression: `*` and `?` stay within one path
    component, `**/` matches any leading directories, `/**` everything inside."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)  # a name may hold a newline


def matches_globs(path: str, globs: list[str]) -> bool:
    """Whether a workspace path matches any of `globs` as git's `:(glob)` pathspecs do (a
    pattern naming a directory matches everything below it)."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    return any(
        regex.fullmatch(prefix)
        for regex in (_glob_regex(pattern.rstrip("/")) for pattern in globs)
        for prefix in prefixes
    )


@dataclass(frozen=True)
class Entry:
    """One protected file as it was: a regular file's bytes and mode, or a symlink's target
    (`kind` "other": anything else, never opened; "large": a file over `MAX_READ_BYTES`,
    never read, its size as `data`)."""

    kind: str  # "file", "link", "other" or "large"
    data: bytes
    mode: int = 0o644


def _entries(workspace: Path) -> dict[str, Entry | None]:
    """Every file and symlink in the workspace (not below a symlinked directory, not in
    `.git`); values are filled in by the caller."""
    found: dict[str, Entry | None] = {}
    for top, dirs, files in os.walk(workspace, followlinks=False):
        rel = os.path.relpath(top, workspace)
        prefix = "" if rel == "." else f"{rel}/"
        if not prefix:
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(top, d)))]:
            found[f"{prefix}{name}"] = None
    return found


def _read_entry(path: Path) -> Entry:
    """What is at `path` now, opening only a regular file (no FIFO blocks, no link is
    followed) of at most `MAX_READ_BYTES` (a larger one differs from any snapshot)."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return Entry("link", os.fsencode(os.readlink(path)))
    if not stat.S_ISREG(info.st_mode):
        return Entry("other", b"", stat.S_IFMT(info.st_mode))
    if info.st_size > MAX_READ_BYTES:
        return Entry("large", str(info.st_size).encode(), stat.S_IMODE(info.st_mode))
    return Entry("file", read_regular(path), stat.S_IMODE(info.st_mode))


def snapshot_protected(workspace: Path, globs: list[str]) -> dict[str, Entry]:
    """The bytes of every file matching `globs`, read straight from the filesystem (the
    workspace's `.git` belongs to the agent once it runs, so nothing here trusts it)."""
    if not globs:
        return {}
    return {
        name: _read_entry(workspace / name)
        for name in sorted(_entries(workspace))
        if matches_globs(name, globs)
    }


def protected_changes(workspace: Path, snapshot: dict[str, Entry], globs: list[str]) -> list[str]:
    """The protected paths that differ from `snapshot`: changed, deleted, or new files
    matching `globs`."""
    if not globs:
        return []
    now = [name for name in _entries(workspace) if matches_globs(name, globs)]
    changed: list[str] = []
    for name in sorted({*now, *snapshot}):
        before = snapshot.get(name)
        try:
            after: Entry | None = _read_entry(workspace / name)
        except OSError:
            after = None
        if after is not None and name not in now:
            after = None  # reached through a symlinked directory: not the file itself
        if before != after:
            changed.append(name)
    return changed


def escaped_names(names: list[str]) -> list[str]:
    """Workspace paths as valid UTF-8 text for a record (`escaped_name`)."""
    return [escaped_name(name) for name in names]


def _remove(target: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        remove_tree(target)
    elif os.path.lexists(target):
        target.unlink()


def _real_directory(workspace: Path, relative: Path) -> Path:
    """`workspace/relative` as a real directory: whatever symlink or file stands in for any
    part of it is removed first, so restoring never writes outside the workspace."""
    current = workspace
    for part in relative.parts:
        current = current / part
        if current.is_symlink() or (os.path.lexists(current) and not current.is_dir()):
            current.unlink()
        if not current.exists():
            current.mkdir()
    return current


def restore_snapshot(workspace: Path, snapshot: dict[str, Entry], paths: list[str]) -> None:
    """Put `paths` back as `snapshot` has them (new ones are deleted); raises OSError."""
    for name in paths:
        before = snapshot.get(name)
        relative = Path(name)
        parent = _real_directory(workspace, relative.parent)
        target = parent / relative.name
        if os.path.lexists(target):
            _remove(target)
        if before is None:
            continue
        if before.kind == "link":
            os.symlink(os.fsdecode(before.data), target)
        else:
            target.write_bytes(before.data)
            target.chmod(before.mode)
    wrong = []
    for name in paths:
        try:
            now: Entry | None = _read_entry(workspace / name)
        except OSError:
            now = None
        if now != snapshot.get(name):
            wrong.append(name)
    if wrong:
        raise OSError(f"still different after restoring: {', '.join(wrong)}")


def file_names(workspace: Path) -> frozenset[str]:
    """Every file and symlink path in the workspace (not in `.git`)."""
    return frozenset(_entries(workspace))


#: Files Python or pytest run on their own when they are found on the import path.
AUTOLOADED = ("sitecustomize.py", "usercustomize.py")


@functools.cache
def importable_names() -> frozenset[str]:
    """Top-level module names of the standard library and of the installed distributions."""
    installed = importlib.metadata.packages_distributions()
    return frozenset(sys.stdlib_module_names) | frozenset(installed)


def _module_name(relative: str) -> str | None:
    """The module a workspace file defines (`json.py`, `json/__init__.py`, an extension
    module `json.cpython-311-x86_64-linux-gnu.so`), or None."""
    path = Path(relative)
    if path.name == "__init__.py":
        return path.parent.name or None
    if path.suffix in (".py", ".pyc", ".so", ".pyd"):
        return path.name.split(".", 1)[0]
    return None


def _protected_modules(protected: Sequence[str]) -> set[tuple[Path, str]]:
    """(directory, module name) of every protected Python file (`tests/test_x.py`)."""
    return {(Path(name).parent, Path(name).stem) for name in protected if name.endswith(".py")}


def shadowing_files(
    workspace: Path,
    before: frozenset[str],
    allowed: Sequence[str] = (),
    protected: Sequence[str] = (),
) -> list[str]:
    """New workspace files that would change what an acceptance command imports or runs: a
    top-level module or package (in a directory that is not itself a package, so on some
    import path) named like a standard-library or installed one, a module or package beside a
    `protected` Python file and named like it (`test_x/__init__.py` or an extension module
    `test_x.*.so` beside `test_x.py` wins the import), a `conftest.py` where the task had
    none, `sitecustomize.py`, `usercustomize.py`, or a `.pth` file. `allowed` names modules
    or paths the suite expects. Paths are escaped for a record (`escaped_name`)."""
    found: list[str] = []
    names = importable_names()
    shadowable = _protected_modules(protected)
    now = file_names(workspace)
    for relative in sorted(now - before):
        path = Path(relative)
        if relative in allowed or path.name in allowed or relative in protected:
            continue
        if path.name in AUTOLOADED or path.name == "conftest.py" or path.suffix == ".pth":
            found.append(escaped_name(relative))
            continue
        module = _module_name(relative)
        if module is None or module in allowed:
            continue
        holder = path.parent.parent if path.name == "__init__.py" else path.parent
        on_import_path = holder == Path(".") or (holder / "__init__.py").as_posix() not in now
        if (holder, module) in shadowable or (module in names and on_import_path):
            found.append(escaped_name(relative))
    return found


def save_baseline(workspace: Path, baseline: Path) -> None:
    """A copy of the workspace's pristine `.git` (just after the initial commit), kept where
    the agent does not work, to diff against whatever the agent does to its own `.git`."""
    shutil.copytree(workspace / ".git", baseline, symlinks=True)


__all__ = [
    "ALLOWED_ENV",
    "INSTRUCTION_FILES",
    "Entry",
    "SourceSnapshot",
    "Trial",
    "WorkspaceError",
    "agent_environment",
    "check_trial_base",
    "commit_all",
    "create_trial",
    "enclosing_repository",
    "escaped_names",
    "file_names",
    "init_repository",
    "matches_globs",
    "protected_changes",
    "resolve_revision",
    "restore_snapshot",
    "save_baseline",
    "shadowing_files",
    "snapshot_protected",
    "snapshot_source",
    "tar_directory",
]
