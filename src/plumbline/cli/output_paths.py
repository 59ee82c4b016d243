"""The output layer's checks: the types of the options that name what a command writes, and
`Command`, which checks every output against every input before any work (README, "Command
line"). Imports click and nothing heavy (every command's `--help` imports it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

# Every path a command writes is an option of one of the types below, and every command is a
# `Command` (or a `Group`'s), whose `invoke` checks all its outputs against all its inputs before
# any work. Files are written by `write_output` (`records.io.write_atomic`): atomically for a
# regular file, through a symbolic link to its target, streamed into a FIFO or a character device.


if TYPE_CHECKING:  # click 8.5 types are generic; older clicks (>= 8.1 is supported) are not
    _ParamType = click.ParamType[Any, Any]
else:
    _ParamType = click.ParamType


class InputFile(click.Path):
    """An existing file a command reads: click's `Path(exists=True, dir_okay=False)`, with a
    usage error (not an internal one) for a path holding a NUL byte, which `os.stat` refuses."""

    def __init__(self) -> None:
        super().__init__(exists=True, dir_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import os

        text = os.fsdecode(value) if isinstance(value, bytes) else str(value)
        if "\x00" in text:
            self.fail("a path cannot hold a NUL byte", param, ctx)
        return super().convert(value, param, ctx)


class OutputType(_ParamType):
    """The type of every option that names something a command writes (see `Command`).

    `kind` says what is written there: "file" (a whole file: atomic, or streamed into a FIFO
    or a character device), "journal" (a file appended to and read back on resume), "site" (a
    plumbline site directory) or "directory" (a results directory the command fills).
    """

    kind = "file"
    name = "path"

    def __init__(self, *, allow_dash: bool = False, path_type: type[Any] = str) -> None:
        self.allow_dash = allow_dash
        self.path_type = path_type

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import os

        text = os.fsdecode(value) if isinstance(value, bytes) else os.fspath(value)
        if text == "-" and self.allow_dash:
            return text
        if not text.strip():
            self.fail(
                "an empty path names nothing to write: give a file or directory name "
                "(use './NAME' for the current directory)",
                param,
                ctx,
            )
        if "\x00" in text:
            self.fail("a path cannot hold a NUL byte", param, ctx)
        problem = self.problem(text)
        if problem:
            self.fail(f"{text}: {problem}", param, ctx)
        return self.path_type(text)

    def problem(self, path: str) -> str | None:
        """Why `path` cannot take this kind of output (None: it can)."""
        return _file_problem(path)


class OutputFile(OutputType):
    """A file written whole: refused when empty, a directory, a socket or a link loop."""


class OutputJournal(OutputType):
    """A file appended to and read back on resume: a regular file (or a link to one) only."""

    kind = "journal"

    def problem(self, path: str) -> str | None:
        return _file_problem(path, stream_ok=False)


class OutputDirectory(OutputType):
    """A directory a command fills (created when missing): refused when it is a file."""

    kind = "directory"
    name = "directory"

    def problem(self, path: str) -> str | None:
        import os

        if os.path.lexists(path) and not os.path.isdir(path):
            return "exists and is not a directory"
        return None


class OutputSite(OutputDirectory):
    """A plumbline site directory: new, empty, or one plumbline made (see report/site.py)."""

    kind = "site"


def _file_problem(path: str, *, stream_ok: bool = True) -> str | None:
    import errno
    import os
    import stat

    if path.endswith(("/", os.sep)):
        return "names a directory: give a file name"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None  # a new file (or a dangling link, whose target is created)
    except NotADirectoryError:
        return "a part of the path before the file name is not a directory"
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a loop of symbolic links"
        return error.strerror or str(error)
    if stat.S_ISDIR(mode):
        return "is a directory: give a file name (inside it, if you meant that)"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        if stream_ok:
            return None
        return "a FIFO or device: a journal is read back and appended to, give a regular file"
    return "not a regular file, FIFO or character device"


def _is_remote(text: str) -> bool:
    return "://" in text


def _all_files(directory: Path) -> list[Path]:
    """Every file under `directory` (the inputs a directory argument stands for by default)."""
    import os

    found: list[Path] = []
    for root, _dirs, files in os.walk(directory):
        found.extend(Path(root) / name for name in files)
    return found


def log_inputs(directory: Path) -> list[Path]:
    """The Inspect logs a log directory stands for (what `leaderboard` and `report` read)."""
    from plumbline.records.log_files import find_log_files

    return [Path(log) for log in find_log_files([directory]).logs]


DirectoryInputs = Callable[[Path], list[Path]]


class Command(click.Command):
    """A plumbline command: before it runs, every output option is checked against every input.

    An output (see `OutputType`) that is the same file as an input (by device and inode:
    through symbolic and hard links), a file an input directory stands for
    (`directory_inputs`, by default every file under it), an input directory itself, or
    another output of the same command, is a usage error (exit 2) and nothing is done. A site
    directory that is not plumbline's is refused the same way.
    """

    def __init__(
        self, *args: Any, directory_inputs: DirectoryInputs | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.directory_inputs = directory_inputs or _all_files

    def invoke(self, ctx: click.Context) -> Any:
        check_outputs(ctx)
        return super().invoke(ctx)


class Group(click.Group):
    """A group whose commands (and subgroups) are `Command`s."""

    command_class = Command

    def invoke(self, ctx: click.Context) -> Any:
        check_outputs(ctx)
        return super().invoke(ctx)


Group.group_class = Group


def output_params(command: click.Command) -> list[click.Parameter]:
    """The parameters of `command` that name something it writes."""
    return [param for param in command.params if isinstance(param.type, OutputType)]


def _label(param: click.Parameter) -> str:
    if isinstance(param, click.Option):
        longs = [opt for opt in param.opts if opt.startswith("--")]
        return (longs or param.opts)[0]
    return (param.name or "").upper()


def _param_value(ctx: click.Context, param: click.Parameter) -> Any:
    if param.expose_value:
        return ctx.params.get(param.name or "")
    # a renamed option (see `renamed`) keeps its value for the new option's parameter
    for key, value in ctx.meta.items():
        if key.startswith("plumbline.renamed.") and param.name == f"renamed_{key[18:]}":
            return value
    return None


def _identity(path: Path) -> tuple[int, int] | None:
    import os

    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return (status.st_dev, status.st_ino)


def _is_stream(path: Path) -> bool:
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def check_outputs(ctx: click.Context) -> None:
    """Refuse (exit 2) outputs that would overwrite an input or another output (see `Command`)."""
    outputs = _outputs_given(ctx)
    if not outputs:
        return
    inputs, input_paths = _inputs_given(ctx)
    named: dict[str, str] = {}
    written: dict[tuple[int, int], str] = {}
    for label, path, kind in outputs:
        _check_output(label, path, kind, inputs, input_paths, named, written)


def _outputs_given(ctx: click.Context) -> list[tuple[str, Path, OutputType]]:
    outputs: list[tuple[str, Path, OutputType]] = []
    for param in output_params(ctx.command):
        value = _param_value(ctx, param)
        assert isinstance(param.type, OutputType)
        if value is None or value == "-" or value is True:
            continue
        outputs.append((_label(param), Path(str(value)), param.type))
    return outputs


def _inputs_given(ctx: click.Context) -> tuple[dict[tuple[int, int], str], list[tuple[str, str]]]:
    """Every input file by identity (device, inode), with what the user gave for it; and the
    resolved paths of the inputs as given."""
    import os

    expand: DirectoryInputs = getattr(ctx.command, "directory_inputs", _all_files)
    inputs: dict[tuple[int, int], str] = {}
    input_paths: list[tuple[str, str]] = []
    for param in ctx.command.params:
        # An option naming a place that may be a local file (a store URL) says which file.
        local_path: Callable[[str], str | None] | None = getattr(param.type, "local_path", None)
        is_input = (
            isinstance(param, click.Argument)
            or (isinstance(param.type, click.Path) and bool(param.type.exists))
            or local_path is not None
        )
        if isinstance(param.type, OutputType) or not is_input:
            continue
        value = _param_value(ctx, param)
        for given in value if isinstance(value, tuple | list) else (value,):
            if given is not None and local_path is not None:
                given = local_path(str(given))
            if given is None or given == "-" or _is_remote(str(given)):
                continue
            path = Path(str(given))
            identity = _identity(path)
            if identity is None:
                continue
            inputs.setdefault(identity, str(given))
            input_paths.append((os.path.realpath(path), str(given)))
            for inner in expand(path) if path.is_dir() else ():
                inner_identity = _identity(inner)
                if inner_identity is not None:
                    inputs.setdefault(inner_identity, f"{inner} (in {given})")
    return inputs, input_paths


def _check_output(
    label: str,
    path: Path,
    kind: OutputType,
    inputs: dict[tuple[int, int], str],
    input_paths: list[tuple[str, str]],
    named: dict[str, str],
    written: dict[tuple[int, int], str],
) -> None:
    import os

    # two outputs may share a stream (`/dev/null`, a terminal, a FIFO), never a file
    real = "" if _is_stream(path) else os.path.realpath(path)
    if real and real in named:
        raise click.UsageError(
            f"{label} {path}: {named[real]} writes the same path; give each output its own"
        )
    if real:
        named[real] = label
    identity = _identity(path)
    if identity is None:
        return
    if identity in inputs:
        hint = (
            " (--json takes an optional PATH: put it after the inputs, or give it with no PATH "
            "last)"
            if label == "--json"
            else ""
        )
        raise click.UsageError(
            f"{path} is both an input and an output ({label} "
            f"{'PATH' if kind.kind in ('file', 'journal') else 'DIR'}): it is the input "
            f"{inputs[identity]}, and writing it would overwrite the input; choose another "
            f"path{hint}"
        )
    if identity in written and real:
        raise click.UsageError(
            f"{label} {path}: {written[identity]} writes the same file; give each output its own"
        )
    written[identity] = label
    if kind.kind == "site":
        from plumbline.app.site import site_problem

        inside = [given for resolved, given in input_paths if resolved.startswith(real + os.sep)]
        if inside:
            raise click.UsageError(
                f"{label} {path}: the input {inside[0]} is inside this site, whose files "
                "the site's update replaces: copy it out of the site first"
            )
        problem = site_problem(path)
        if problem:
            raise click.UsageError(f"{label} {path}: {problem}")
