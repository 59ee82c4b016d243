"""The bubblewrap sandbox and the warm pool, with cheap workers (nothing preloaded).

bwrap is a CI requirement (installed by .ci/run): these tests fail, never skip, without it.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plumbline.sandbox import (
    Job,
    ResourceLimits,
    SandboxUnavailable,
    WarmPool,
    probe_sandbox,
    sandbox_environment,
)
from plumbline.sandbox import bwrap as bwrap_module

FAKE_SECRET = "sk-plumbline-fake-0123456789abcdef"


@pytest.fixture(scope="module")
def pool() -> Iterator[WarmPool]:
    previous = {name: os.environ.get(name) for name in ("OPENAI_API_KEY", "GITHUB_TOKEN")}
    os.environ["OPENAI_API_KEY"] = FAKE_SECRET  # the parent has secrets; the sandbox must not
    os.environ["GITHUB_TOKEN"] = FAKE_SECRET
    try:
        with WarmPool(
            environment=sandbox_environment({"HOME": "{workdir}/home", "TMPDIR": "{workdir}/tmp"}),
            limits=ResourceLimits(wall_seconds=30, cpu_seconds=10, workdir_bytes=64 * 1024**2),
            size=1,
        ) as shared:
            yield shared
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_script(pool: WarmPool, source: str) -> dict[str, object]:
    """Run a script that writes its findings to out/result.json; return them."""
    result = pool.run(Job(files={"app/main.py": source}, entry="main.py", collect=["out/*"]))
    assert result.status == "ok", (result.status, result.exception, result.log)
    return json.loads(result.files["out/result.json"])  # type: ignore[no-any-return]


REPORT = """
import json, os
os.makedirs("out", exist_ok=True)
def report(**found):
    with open("out/result.json", "w") as handle:
        json.dump(found, handle)
"""


def test_bubblewrap_is_available_here() -> None:
    status = probe_sandbox()
    assert status.available, status.reason


def test_environment_is_an_allow_list(pool: WarmPool) -> None:
    found = run_script(
        pool,
        REPORT
        + """
environ = dict(os.environ)
proc = {}
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            proc[pid] = open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
        except OSError:
            pass
report(environ=environ, proc=proc)
""",
    )
    environ = found["environ"]
    assert isinstance(environ, dict)
    assert "OPENAI_API_KEY" not in environ and "GITHUB_TOKEN" not in environ
    assert FAKE_SECRET not in json.dumps(found)
    allowed = {"PATH", "PYTHONDONTWRITEBYTECODE", "HOME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE"}
    assert set(environ) <= allowed | {"TZ", "PWD"}  # PWD: set by bwrap --chdir


def test_secret_looking_names_are_refused() -> None:
    with pytest.raises(ValueError, match="AWS_SECRET_ACCESS_KEY"):
        sandbox_environment({"AWS_SECRET_ACCESS_KEY": "x"})
    assert "OPENAI_API_KEY" not in sandbox_environment({}, parent={"OPENAI_API_KEY": "sk"})
    assert sandbox_environment({}, parent={"LANG": "C.UTF-8"})["LANG"] == "C.UTF-8"


def test_no_network(pool: WarmPool) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    found = run_script(
        pool,
        REPORT
        + f"""
import socket
errors = []
for host in ("127.0.0.1", "1.1.1.1"):
    try:
        socket.create_connection((host, {port}), timeout=3).close()
        errors.append(None)
    except OSError as error:
        errors.append(type(error).__name__)
report(errors=errors)
""",
    )
    errors = found["errors"]
    assert isinstance(errors, list) and len(errors) == 2 and None not in errors
    with pytest.raises(TimeoutError):
        server.accept()  # nothing from the sandbox reached the host's listener
    server.close()


def test_new_pid_namespace(pool: WarmPool) -> None:
    found = run_script(
        pool,
        REPORT + 'report(pid=os.getpid(), pids=[p for p in os.listdir("/proc") if p.isdigit()])',
    )
    pids = found["pids"]
    assert isinstance(pids, list) and len(pids) < 10
    assert str(os.getpid()) not in pids or os.getpid() < 10


def test_file_system_is_read_only_and_private(pool: WarmPool, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text(FAKE_SECRET)
    found = run_script(
        pool,
        REPORT
        + f"""
def attempt(action):
    try:
        action()
        return "allowed"
    except OSError as error:
        return type(error).__name__
results = {{
    "read host tmp file": attempt(lambda: open({str(secret)!r}).read()),
    "write host tmp dir": attempt(lambda: open({str(tmp_path / "planted.txt")!r}, "w")),
    "read /etc/shadow": attempt(lambda: open("/etc/shadow").read()),
    "write /etc": attempt(lambda: open("/etc/planted", "w")),
    "write /usr": attempt(lambda: open("/usr/planted", "w")),
    "list /root": attempt(lambda: os.listdir("/root/.ssh")),
    "list /home": attempt(lambda: os.listdir("/home")),
    "write /work": attempt(lambda: open({str(Path.cwd() / "planted.txt")!r}, "w")),
    "write own dir": attempt(lambda: open("mine.txt", "w").write("ok")),
    "write /tmp": attempt(lambda: open("/tmp/mine.txt", "w").write("ok")),
}}
# The virtual environment is bound read-only at its own path; nothing else of the repo is.
repo = {str(Path.cwd())!r}
results["repo"] = sorted(os.listdir(repo)) if os.path.isdir(repo) else []
report(**results)
""",
    )
    assert found.pop("write own dir") == "allowed"
    assert found.pop("write /tmp") == "allowed"  # /tmp is a private tmpfs
    # A checkout under /tmp (a CI clone) has its mount points inside the private /tmp, so a
    # write beside the virtual environment lands there; it must still never reach the host.
    checkout_in_private_tmp = Path.cwd().is_relative_to("/tmp")
    write_checkout = found.pop("write /work")
    assert checkout_in_private_tmp or write_checkout != "allowed"
    allowed_entries = {".venv", "planted.txt"} if checkout_in_private_tmp else {".venv"}
    assert set(found.pop("repo")) <= allowed_entries  # type: ignore[arg-type]
    assert all(outcome != "allowed" for outcome in found.values()), found
    assert not (tmp_path / "planted.txt").exists()
    assert not (Path.cwd() / "planted.txt").exists()


def test_samples_do_not_see_each_other(pool: WarmPool) -> None:
    first = run_script(
        pool,
        REPORT + 'open("/tmp/left-behind", "w").write("A")\nreport(cwd=os.getcwd())',
    )
    second = run_script(
        pool, REPORT + 'report(seen=os.path.exists("/tmp/left-behind"), cwd=os.getcwd())'
    )
    assert first["cwd"] == second["cwd"] == "/sandbox/app"
    assert second["seen"] is False


def test_concurrent_samples_are_isolated() -> None:
    with WarmPool(environment=sandbox_environment({}), size=2) as pool:
        barrier_source = (
            REPORT
            + """
import time
name = "{name}"
open("/sandbox/tmp/" + name, "w").write(name)
time.sleep(1.5)
report(files=sorted(os.listdir("/sandbox/tmp")))
"""
        )
        results: dict[str, object] = {}

        def one(name: str) -> None:
            results[name] = run_script(pool, barrier_source.replace("{name}", name))

        threads = [threading.Thread(target=one, args=(name,)) for name in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert results == {"a": {"files": ["a"]}, "b": {"files": ["b"]}}


def _children() -> set[int]:
    children = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            if f"\nPPid:\t{os.getpid()}\n" in status:
                children.add(int(entry.name))
    return children


def test_wall_clock_timeout_kills_the_whole_sandbox() -> None:
    before = _children()
    with WarmPool(
        environment=sandbox_environment({}), limits=ResourceLimits(wall_seconds=2), size=1
    ) as pool:
        result = pool.run(
            Job(
                files={
                    "app/main.py": "import os, time\n"
                    "if os.fork() == 0:\n    time.sleep(3600)\n"
                    "time.sleep(3600)\n"
                },
                entry="main.py",
            )
        )
    assert result.status in ("timeout", "exception")
    if result.status == "exception":  # forks are refused, so the sample stops at once
        assert result.exception is not None and result.exception["type"] == "BlockingIOError"
    sleeper = Job(files={"app/main.py": "import time\ntime.sleep(3600)\n"}, entry="main.py")
    with WarmPool(
        environment=sandbox_environment({}), limits=ResourceLimits(wall_seconds=2), size=1
    ) as pool:
        started = time.monotonic()
        result = pool.run(sleeper)
        assert result.status == "timeout"
        assert time.monotonic() - started < 30
    deadline = time.monotonic() + 10
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (_children() - before)


def test_resource_limits_validate() -> None:
    with pytest.raises(ValueError, match="wall_seconds"):
        ResourceLimits(wall_seconds=0)


def test_refuses_without_bubblewrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    bwrap_module.probe_sandbox.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="bubblewrap is not installed"):
            WarmPool(size=1)
    finally:
        bwrap_module.probe_sandbox.cache_clear()


def test_unsafe_mode_runs_without_sandbox_but_keeps_the_allow_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_SECRET)
    with WarmPool(
        environment=sandbox_environment({"HOME": "{workdir}/home"}),
        size=1,
        unsafe_no_sandbox=True,
    ) as pool:
        found = run_script(pool, REPORT + "report(environ=dict(os.environ), cwd=os.getcwd())")
    assert "OPENAI_API_KEY" not in found["environ"]  # type: ignore[operator]
    assert str(found["cwd"]).endswith("/app") and not str(found["cwd"]).startswith("/sandbox")


def test_read_only_paths_under_tmp_coexist_with_the_private_tmp(tmp_path: Path) -> None:
    """A checkout or virtualenv under /tmp (as in a CI clone) is mounted inside the private /tmp."""
    import subprocess
    import sys

    assert str(tmp_path).startswith("/tmp/")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "data.txt").write_text("visible")
    (tmp_path / "secret.txt").write_text("host tmp")
    script = (
        "import os, pathlib; "
        f"print(pathlib.Path({str(shared / 'data.txt')!r}).read_text()); "
        f"print(os.path.exists({str(tmp_path / 'secret.txt')!r})); "
        "pathlib.Path('/tmp/scratch').write_text('ok'); print(open('/tmp/scratch').read())"
    )
    layout = bwrap_module.SandboxLayout(read_only=(shared,), environment={"PATH": "/usr/bin"})
    command, fds = bwrap_module.build_command(layout, [sys.executable, "-I", "-c", script])
    try:
        completed = subprocess.run(
            command, pass_fds=fds, capture_output=True, text=True, timeout=60, check=False
        )
    finally:
        for fd in fds:
            os.close(fd)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["visible", "False", "ok"]
    assert not (tmp_path / "scratch").exists() and not Path("/tmp/scratch").exists()


def test_bwrap_path_comes_from_the_environment_when_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PLUMBLINE_BWRAP", str(tmp_path / "absent"))
    bwrap_module.probe_sandbox.cache_clear()
    try:
        status = bwrap_module.probe_sandbox()
        assert not status.available and status.bwrap is None
        assert f"PLUMBLINE_BWRAP={tmp_path / 'absent'} is not an executable" in status.reason
        with pytest.raises(SandboxUnavailable, match="bubblewrap is not installed"):
            WarmPool(size=1)
    finally:
        bwrap_module.probe_sandbox.cache_clear()
