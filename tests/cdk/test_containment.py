"""Model code that misbehaves is stopped or finds nothing, gets its outcome, and harms nobody.

Each probe runs as a CDK app through the scorer's synthesizer. Probes that find nothing go on
to synthesize a stack and pass; a probe that found something raises, which would show as
python_error with the finding in the log.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from plumbline.cdk.outcomes import Outcome
from plumbline.cdk.synth import CdkSynthesizer

pytestmark = pytest.mark.slow

SYNTH = """
import aws_cdk as cdk
from aws_cdk import aws_sqs as sqs

app = cdk.App()
stack = cdk.Stack(app, "Probe")
sqs.Queue(stack, "Queue")
app.synth()
"""


def probe(body: str) -> str:
    return (
        "import os, sys\nfindings = []\n"
        + body
        + ("\nif findings:\n    raise RuntimeError(f'FOUND: {findings}')\n" + SYNTH)
    )


def test_environment_secrets_are_absent(
    synthesizer: CdkSynthesizer, fake_secrets: dict[str, str]
) -> None:
    secrets = list(fake_secrets.values())
    body = f"""
secrets = {secrets!r}
for name, value in os.environ.items():
    if value in secrets or name in ("OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY"):
        findings.append(name)
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            environ = open(f"/proc/{{pid}}/environ", "rb").read().decode(errors="replace")
        except OSError:
            continue
        findings += [f"/proc/{{pid}}/environ" for secret in secrets if secret in environ]
print("environment:", sorted(os.environ))
"""
    assert all(os.environ[name] == value for name, value in fake_secrets.items())
    report = synthesizer.check_source(probe(body))
    assert report.outcome is Outcome.PASSED, (report.reason, report.log)
    assert not any(secret in report.log for secret in secrets)
    assert "CDK_DEFAULT_ACCOUNT" in report.log and "OPENAI_API_KEY" not in report.log


def test_sockets_reach_nothing(synthesizer: CdkSynthesizer) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    body = f"""
import socket
for host in ("127.0.0.1", "8.8.8.8", "example.com"):
    try:
        socket.create_connection((host, {port}), timeout=3).close()
        findings.append(host)
    except OSError:
        pass
"""
    report = synthesizer.check_source(probe(body))
    assert report.outcome is Outcome.PASSED, (report.reason, report.log)
    with pytest.raises(TimeoutError):
        listener.accept()
    listener.close()


def test_files_outside_the_work_directory(synthesizer: CdkSynthesizer, tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = do-not-read")
    home = Path.home()
    body = f"""
for path in ({str(secret)!r}, {str(home / ".bashrc")!r}, "/etc/shadow", "/root/.ssh/id_rsa"):
    try:
        open(path).read()
        findings.append("read " + path)
    except OSError:
        pass
for path in ({str(tmp_path / "planted")!r}, "/etc/planted", "/usr/lib/planted",
             {str(home / "planted")!r}, "/opt/jsii-package-cache/planted"):
    try:
        open(path, "w").write("x")
        findings.append("wrote " + path)
    except OSError:
        pass
"""
    report = synthesizer.check_source(probe(body))
    assert report.outcome is Outcome.PASSED, (report.reason, report.log)
    assert not (tmp_path / "planted").exists() and not (home / "planted").exists()


def test_other_samples_directories_are_invisible(synthesizer: CdkSynthesizer) -> None:
    first = synthesizer.check_source(
        probe('open("/tmp/from-first-sample", "w").write("x")\nopen("left", "w").write("x")')
    )
    second = synthesizer.check_source(
        probe(
            'findings += [p for p in ("/tmp/from-first-sample", "left") if os.path.exists(p)]\n'
            'findings += [p for p in os.listdir("/sandbox") if p not in ("app", "tmp", "home")]'
        )
    )
    assert first.outcome is Outcome.PASSED and second.outcome is Outcome.PASSED, second.log


@pytest.mark.parametrize(
    ("name", "source", "outcome"),
    [
        ("fork bomb", "import os\nwhile True:\n    os.fork()\n", Outcome.RESOURCE_LIMIT),
        (
            "subprocess bomb",
            "import subprocess\nwhile True:\n    subprocess.Popen(['sleep', '100'])\n",
            Outcome.RESOURCE_LIMIT,
        ),
        (
            "unbounded allocation",
            "hoard = []\nwhile True:\n    hoard.append(bytearray(256 * 1024 * 1024))\n",
            Outcome.RESOURCE_LIMIT,
        ),
        (
            "one huge file",
            "with open('big', 'wb') as f:\n    while True:\n        f.write(b'x' * 2**20)\n",
            Outcome.RESOURCE_LIMIT,
        ),
        (
            "fills the disk with many files",
            "i = 0\nwhile True:\n    open(f'f{i}', 'wb').write(b'x' * 8 * 2**20)\n    i += 1\n",
            Outcome.RESOURCE_LIMIT,
        ),
        ("never exits", "import time\ntime.sleep(10_000)\n", Outcome.TIMEOUT),
        ("spins forever", "while True:\n    pass\n", Outcome.TIMEOUT),
        (
            "ignores signals and sleeps",
            "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "time.sleep(10_000)\n",
            Outcome.TIMEOUT,
        ),
    ],
)
def test_runaway_code_is_stopped(
    light_synthesizer: CdkSynthesizer, name: str, source: str, outcome: Outcome
) -> None:
    report = light_synthesizer.check_source(source)
    assert report.outcome is outcome, (name, report.reason, report.stderr_head)
    assert report.reason
    # The host and the next sample are unaffected: a normal sample still runs to completion.
    after = light_synthesizer.check_source("print('still fine')\n")
    assert after.outcome is Outcome.SYNTH_ERROR  # ran fine; wrote no cloud assembly
    assert "still fine" in after.log
