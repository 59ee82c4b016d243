"""`plumbline leaderboard s3://bucket/logs`: logs discovered and read through Inspect's file-system
layer from a real S3-compatible server (moto's server mode on 127.0.0.1), not a mocked client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.support.original_sa_bench import SCRIPT, expected

from plumbline.cli.main import main

pytest.importorskip("moto.server", reason="moto[server] is part of the dev extra")


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A moto S3 server on a free 127.0.0.1 port; the AWS client settings point at it."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }.items():
        monkeypatch.setenv(name, value)
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="evals")
    try:
        yield endpoint
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        server.stop()


def upload(root: Path, endpoint: str, prefix: str) -> int:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    count = 0
    for path in sorted(root.rglob("*")):
        if path.is_file():
            key = f"{prefix}/{path.relative_to(root).as_posix()}"
            client.put_object(Bucket="evals", Key=key, Body=path.read_bytes())
            count += 1
    return count


def test_a_leaderboard_from_an_s3_log_directory(
    s3: str, original_logs: Path, tmp_path: Path
) -> None:
    assert upload(original_logs, s3, "team/logs/2026") == 6
    out = tmp_path / "board.json"
    result = CliRunner().invoke(
        main, ["leaderboard", "s3://evals/team/logs", "-o", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["_metadata"]["log_count"] == 6 and document["problems"] == []
    by_model = {entry["model"]: entry for entry in document["models"]}
    for name in SCRIPT:
        for key, value in expected(name).items():
            assert by_model[f"mockllm/{name}"][key] == pytest.approx(value, abs=1e-12)


def test_a_missing_s3_prefix_is_reported(s3: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["leaderboard", "s3://evals/nothing-here", "--json"], catch_exceptions=False
    )
    assert result.exit_code == 1
    problems = json.loads(result.stdout)["problems"]
    assert [(p["kind"], p["path"]) for p in problems] == [
        ("path_not_found", "s3://evals/nothing-here")
    ]
