"""The process that runs inside the sandbox: warm up, take one job, run it, report, exit.

This file is executed by path inside bubblewrap (``python -I -B worker.py CONFIG``), where the
plumbline package is not importable, so it uses the standard library only.

Life of a worker:

1. Apply the limits that the runtime it is about to start should inherit (file size, core
   dumps, processes).
2. Warm up: import the configured modules (for CDK, ``aws_cdk``, which starts the jsii
   runtime and loads aws-cdk-lib: about 3 s that the sample then does not pay).
3. Write ``{"event": "ready"}`` on the protocol channel and block reading one job from stdin.
4. Write the job's files into the private work directory, apply the remaining limits (address
   space, CPU seconds), forbid creating processes (seccomp), and run the entry point in this
   process, as ``python ENTRY`` would.
5. Stop the jsii runtime if the job used it (its relayed output then reaches the log),
   collect the requested output files, write ``{"event": "result", ...}`` and exit. A worker
   never serves a second job. Without the early stop (the `compat.jsii` adapter's public
   path), a job that used jsii ends with a normal interpreter exit instead: jsii's own exit
   handler stops the runtime, and the result is written after it (`_send_after_exit_handlers`).

The protocol channel is the original stdout, duplicated before the job runs; the job's own
stdout and stderr both go to stderr, which the host keeps as the log.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import fnmatch
import hashlib
import json
import os
import platform
import resource
import runpy
import struct
import sys
import traceback
from pathlib import Path
from typing import Any, TextIO

MAX_TRACEBACK_CHARS = 8000


def _send(channel: TextIO, message: dict[str, Any]) -> None:
    channel.write(json.dumps(message) + "\n")
    channel.flush()


def _set_limit(which: int, value: int, *, soft_only: bool = False) -> None:
    """Lower a limit; with soft_only the hard limit stays, so the worker can lift it again."""
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY and value > hard:
        value = hard
    resource.setrlimit(which, (value, hard if soft_only else value))


def _lift_soft_limit(which: int) -> None:
    _soft, hard = resource.getrlimit(which)
    resource.setrlimit(which, (hard, hard))


# --- seccomp: forbid new processes, keep threads -------------------------------------------
# A classic-BPF program; see seccomp(2) and Documentation/userspace-api/seccomp_filter.rst.
# Denied fork/clone calls fail with EAGAIN, the errno RLIMIT_NPROC gives, so a fork bomb sees
# "Resource temporarily unavailable" on its first fork. clone3 gets ENOSYS so that the C
# library falls back to clone(2), whose flags a filter can inspect (clone3 passes a pointer).

_ARCHES: dict[str, tuple[int, int, int, int, int, int]] = {
    # machine: (AUDIT_ARCH, clone, clone3, fork, vfork, seccomp)
    "x86_64": (0xC000003E, 56, 435, 57, 58, 317),
    "aarch64": (0xC00000B7, 220, 435, 0xFFFFFFFF, 0xFFFFFFFF, 277),
}
_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JGE_K = 0x35
_BPF_JSET_K = 0x45
_BPF_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_CLONE_THREAD = 0x00010000


def _bpf(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def _process_filter(machine: str) -> bytes:
    arch, clone, clone3, fork, vfork, _ = _ARCHES[machine]
    program = [
        _bpf(_BPF_LD_W_ABS, 4),  # 0: seccomp_data.arch
        _bpf(_BPF_JEQ_K, arch, 1, 0),  # 1: native ABI -> 3
        _bpf(_BPF_RET_K, _RET_ERRNO | errno.EPERM),  # 2: foreign ABI: refuse every call
        _bpf(_BPF_LD_W_ABS, 0),  # 3: seccomp_data.nr
        _bpf(_BPF_JGE_K, 0x40000000, 8, 0),  # 4: x32 ABI -> deny (13)
        _bpf(_BPF_JEQ_K, clone, 4, 0),  # 5: clone -> flag check (10)
        _bpf(_BPF_JEQ_K, clone3, 7, 0),  # 6: clone3 -> ENOSYS (14)
        _bpf(_BPF_JEQ_K, fork, 5, 0),  # 7: fork -> deny (13)
        _bpf(_BPF_JEQ_K, vfork, 4, 0),  # 8: vfork -> deny (13)
        _bpf(_BPF_RET_K, _RET_ALLOW),  # 9
        _bpf(_BPF_LD_W_ABS, 16),  # 10: low word of args[0] (clone flags)
        _bpf(_BPF_JSET_K, _CLONE_THREAD, 0, 1),  # 11: a thread -> 12, a process -> 13
        _bpf(_BPF_RET_K, _RET_ALLOW),  # 12
        _bpf(_BPF_RET_K, _RET_ERRNO | errno.EAGAIN),  # 13
        _bpf(_BPF_RET_K, _RET_ERRNO | errno.ENOSYS),  # 14
    ]
    return b"".join(program)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def forbid_new_processes() -> str | None:
    """Install the seccomp filter on every thread of this process; return an error or None."""
    machine = platform.machine()
    if machine not in _ARCHES:
        return f"seccomp filter not available for machine {machine!r}"
    program = _process_filter(machine)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p).value)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}"
    seccomp_nr = _ARCHES[machine][5]
    # SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_TSYNC: the runtime has helper threads.
    if libc.syscall(seccomp_nr, 1, 1, ctypes.byref(fprog)) != 0:
        return f"seccomp(SECCOMP_SET_MODE_FILTER) failed: {os.strerror(ctypes.get_errno())}"
    return None


# --- the job ----------------------------------------------------------------------------------


def _safe_relative(path: str) -> Path:
    relative = Path(path)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        raise ValueError(f"job file path {path!r} must be relative and stay inside the work dir")
    return relative


def _write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / _safe_relative(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def _collect(root: Path, patterns: list[str], max_bytes: int) -> tuple[dict[str, str], bool]:
    """Return the text of files under root matching any pattern, up to max_bytes in total."""
    collected: dict[str, str] = {}
    total = 0
    truncated = False
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        if not any(fnmatch.fnmatch(relative, pattern) for pattern in patterns):
            continue
        size = path.stat().st_size
        if total + size > max_bytes:
            truncated = True
            continue
        total += size
        collected[relative] = path.read_text(encoding="utf-8", errors="replace")
    return collected, truncated


def _user_traceback(error: BaseException) -> Any:
    """The traceback without the worker's and runpy's own frames."""
    tb = error.__traceback__
    while tb is not None and (
        tb.tb_frame.f_code.co_filename == __file__ or "runpy" in tb.tb_frame.f_code.co_filename
    ):
        tb = tb.tb_next
    return tb


def _exception_chain(error: BaseException) -> list[str]:
    chain: list[str] = []
    current: BaseException | None = error
    while current is not None and len(chain) < 10:
        chain.append(f"{type(current).__module__}.{type(current).__qualname__}")
        current = current.__cause__ or current.__context__
    return chain


def _exception_info(error: BaseException) -> dict[str, Any]:
    kind = type(error)
    text = "".join(traceback.format_exception(kind, error, _user_traceback(error)))
    info: dict[str, Any] = {
        "type": kind.__name__,
        "module": kind.__module__,
        "message": str(error)[:2000],
        "traceback": text[-MAX_TRACEBACK_CHARS:],
        "errno": getattr(error, "errno", None),
        "chain": _exception_chain(error),
    }
    if isinstance(error, SystemExit):
        info["exit_code"] = error.code if isinstance(error.code, int) else 1
    return info


#: The feature flag by which an app asks for aws-cdk-lib's built-in template validation to fail
#: synthesis; an app that sets it keeps the validation whatever the defaults say.
VALIDATE_AGAINST_DEFAULT_RULES = "@aws-cdk/core:validateAgainstDefaultRules"


def _patch_app(context: dict[str, Any], defaults: dict[str, Any]) -> None:
    """Give every ``aws_cdk.App`` the cdk.json context and the job's default arguments.

    The CLI hands context to the app through CDK_CONTEXT_JSON, read by the JavaScript side
    when the App is built; the runtime here started before the job arrived, so its
    environment cannot change any more and the context is merged into the App's props.
    Defaults apply only where the app passes nothing itself and this aws-cdk-lib knows them.
    """
    import inspect

    import aws_cdk

    original = aws_cdk.App.__init__
    known = set(inspect.signature(original).parameters)

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        merged = {**(kwargs.get("context") or {}), **context}
        if context:
            kwargs["context"] = merged
        opted_in = str(merged.get(VALIDATE_AGAINST_DEFAULT_RULES, "")).lower() == "true"
        for name, value in defaults.items():
            if name in known and not (name == "builtin_cloud_formation_validation" and opted_in):
                kwargs.setdefault(name, value)
        original(self, *args, **kwargs)

    setattr(aws_cdk.App, "__init__", init)  # noqa: B010


def _json_digests(directory: str) -> dict[str, str]:
    """SHA-256 of every regular ``*.json`` file under a directory (symlinks skipped)."""
    digests: dict[str, str] = {}
    for folder, _subdirs, names in os.walk(directory):
        for name in names:
            path = os.path.join(folder, name)
            if not name.endswith(".json") or os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:
                digests[os.path.realpath(path)] = hashlib.sha256(handle.read()).hexdigest()
    return digests


def _when_imported(name: str, patch: Any) -> None:
    """Run `patch()` now if module `name` is loaded, else right after the job first imports it.

    A worker that did not preload aws_cdk then does not pay its start-up for a job that never
    uses it. An app that removes the hook before importing aws_cdk only loses the patches:
    its synthesis is then unrecorded, and its assembly scored ``forged_output``.
    """
    if name in sys.modules:
        patch()
        return
    import importlib.abc
    import importlib.util

    class _Hook(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
            if fullname != name:
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(fullname)
            loader = getattr(spec, "loader", None)
            if loader is None or not hasattr(loader, "exec_module"):
                return spec
            original = loader.exec_module

            def exec_module(module: Any) -> None:
                original(module)
                patch()

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Hook())


def _record_synthesis(cwd: Path, record: dict[str, str]) -> None:
    """Wrap ``Stage.synth`` and ``App.synth`` so that every file a synthesis writes is recorded.

    Fills `record`: path relative to ``cwd`` -> SHA-256 of the content the synthesis wrote.
    The assembly directory is digested before and after each call; a file counts as
    synthesized when the call created or changed it. Files written by anything else (the app
    writing ``*.template.json`` itself, or over a real synthesis's output afterwards) are
    absent from the record or differ from it, and the host scores them ``forged_output``.
    """
    import aws_cdk

    base = os.path.realpath(cwd)

    def wrap(original: Any) -> Any:
        def synth(self: Any, *args: Any, **kwargs: Any) -> Any:
            outdir = str(self.outdir)
            before = _json_digests(outdir)
            assembly = original(self, *args, **kwargs)
            for path, digest in _json_digests(outdir).items():
                if before.get(path) != digest:
                    record[os.path.relpath(path, base)] = digest
            return assembly

        return synth

    for cls in (aws_cdk.Stage, aws_cdk.App):
        setattr(cls, "synth", wrap(cls.__dict__["synth"]))  # noqa: B010


def _stop_jsii_runtime() -> None:
    """Stop the jsii runtime (Node.js) the job used, so that its last output reaches the log.

    The runtime relays what the app's JavaScript side prints (aws-cdk-lib's validation report,
    for example) through a reader thread of its own, after the call that printed it has
    returned. ``os._exit`` would drop what that thread had not yet written; stopping the
    runtime closes its output and waits for the thread to finish.
    """
    # jsii's private access is plumbline.compat's (compat/jsii_runtime.py, named here by the
    # host only when the installed jsii has it; otherwise `main` ends with a normal exit, whose
    # exit handlers include jsii's stop)
    adapter = os.environ.get("PLUMBLINE_JSII_ADAPTER")
    if "aws_cdk" not in sys.modules or not adapter:  # never started, or the public path
        return
    try:
        import importlib.util

        spec = importlib.util.spec_from_file_location("plumbline_compat_jsii_runtime", adapter)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.stop_runtime()
    except BaseException as error:  # the job may have replaced any of this; the log says so
        print(f"plumbline: could not stop the jsii runtime: {error!r}", file=sys.stderr)


#: What `_send_after_exit_handlers` writes: (channel, message) pairs.
_AFTER_EXIT: list[tuple[TextIO, dict[str, Any]]] = []


def _send_after_exit_handlers() -> None:
    """Registered before the warm-up imports start the jsii runtime, so that it runs after the
    exit handler jsii registers then (handlers run last-registered first): the result is
    written once jsii's stop has relayed the runtime's last output to the log."""
    sys.stdout.flush()
    sys.stderr.flush()
    for channel, message in _AFTER_EXIT:
        _send(channel, message)
    os._exit(0)


def _run_job(job: dict[str, Any], channel: TextIO, allow_processes: bool) -> dict[str, Any]:
    root = Path(job["workdir"])
    _write_files(root, job["files"])
    entry = job["entry"]
    cwd = root / _safe_relative(job.get("cwd") or ".")
    os.chdir(cwd)
    sys.path.insert(0, str(cwd))
    sys.argv = [entry, *job.get("args", [])]
    context, defaults = job.get("cdk_context") or {}, job.get("cdk_app_defaults") or {}
    synthesized: dict[str, str] | None = {} if job.get("record_synthesis") else None

    def patch_cdk() -> None:
        if context or defaults:
            _patch_app(context, defaults)
        if synthesized is not None:
            _record_synthesis(cwd, synthesized)

    if context or defaults or synthesized is not None:
        _when_imported("aws_cdk", patch_cdk)

    limits = job.get("limits", {})
    if limits.get("address_space_bytes"):
        _set_limit(resource.RLIMIT_AS, int(limits["address_space_bytes"]), soft_only=True)
    if limits.get("cpu_seconds"):
        used = resource.getrusage(resource.RUSAGE_SELF)
        spent = int(used.ru_utime + used.ru_stime) + 1
        soft = spent + int(limits["cpu_seconds"])
        # SIGXCPU at the soft limit names the cause; SIGKILL two seconds later if ignored.
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 2))
    if not allow_processes:
        problem = forbid_new_processes()
        if problem is not None:
            return {"event": "result", "status": "sandbox_error", "message": problem}

    _send(channel, {"event": "started"})
    status = "ok"
    exception: dict[str, Any] | None = None
    try:
        if job.get("module"):
            runpy.run_module(entry, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(entry, run_name="__main__")
    except SystemExit as error:
        if error.code not in (None, 0):
            status, exception = "exception", _exception_info(error)
    except BaseException as error:
        _lift_soft_limit(resource.RLIMIT_AS)  # formatting a MemoryError needs memory
        status, exception = "exception", _exception_info(error)
    finally:
        _stop_jsii_runtime()
        sys.stdout.flush()
        sys.stderr.flush()

    # Collecting must not be killed by the job's own address-space limit.
    _lift_soft_limit(resource.RLIMIT_AS)
    files, truncated = _collect(cwd, job.get("collect", []), int(job.get("collect_max_bytes", 0)))
    return {
        "event": "result",
        "status": status,
        "exception": exception,
        "files": files,
        "truncated": truncated,
        "synthesized": None if synthesized is None else dict(synthesized),
    }


def main() -> None:
    config: dict[str, Any] = json.loads(sys.argv[1])
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the job's print() goes to the log, never into the protocol
    sys.stdout = os.fdopen(1, "w", encoding="utf-8", buffering=1)

    early = config.get("limits", {})
    if early.get("file_size_bytes"):
        _set_limit(resource.RLIMIT_FSIZE, int(early["file_size_bytes"]))
    if early.get("max_processes"):
        _set_limit(resource.RLIMIT_NPROC, int(early["max_processes"]))
    _set_limit(resource.RLIMIT_CORE, 0)
    atexit.register(_send_after_exit_handlers)

    try:
        for module in config.get("preload", []):
            __import__(module)
    except BaseException as error:
        _send(channel, {"event": "warmup_failed", "exception": _exception_info(error)})
        os._exit(3)
    _send(channel, {"event": "ready"})

    line = sys.stdin.readline()
    if not line:
        os._exit(0)  # the host closed the pool before this worker was needed
    try:
        result = _run_job(json.loads(line), channel, bool(config.get("allow_processes")))
    except BaseException as error:
        result = {"event": "result", "status": "worker_error", "exception": _exception_info(error)}
    if "aws_cdk" in sys.modules and not os.environ.get("PLUMBLINE_JSII_ADAPTER"):
        # no early stop (the public path): jsii's exit handler stops its runtime
        _AFTER_EXIT.append((channel, result))
        sys.exit(0)
    _send(channel, result)
    os._exit(0)  # skip the runtime's exit handlers: the sandbox is torn down with us


if __name__ == "__main__":
    main()
