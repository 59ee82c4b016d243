"""leaderboard.labels.read_labels: every file either reads or fails as `file:line: field: why`."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plumbline.leaderboard.labels import LabelFileError, read_labels


def test_jsonl_and_csv_read_the_same_rows(tmp_path: Path) -> None:
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text(
        '{"model": "m", "task": "t", "sample_id": 1, "value": 1}\n'
        '{"model": "m", "task": "t", "sample_id": "2", "epoch": 2, "value": 0.5}\n'
    )
    csv = tmp_path / "labels.csv"
    csv.write_text("model,task,sample_id,epoch,value\nm,t,1,,1\nm,t,2,2,0.5\n")
    rows = [(r.model, r.task, r.sample_id, r.epoch, r.value) for r in read_labels(jsonl)]
    assert rows == [("m", "t", "1", 1, 1.0), ("m", "t", "2", 2, 0.5)]
    assert [(r.model, r.task, r.sample_id, r.epoch, r.value) for r in read_labels(csv)] == rows
    assert read_labels(csv)[1].where.endswith("labels.csv:3")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"model": "m", "task": "t", "value": 1}\n', "labels.jsonl:1: sample_id: missing"),
        ('{"model": "m", "task": "t", "sample_id": "a", "epoch": 0, "value": 1}\n', "epoch"),
        ('{"model": "m", "task": "t", "sample_id": "a", "value": null}\n', "value: missing"),
        ("[1]\n", "labels.jsonl:1: expected an object"),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(text)
    with pytest.raises(LabelFileError, match=message):
        read_labels(path)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".jsonl", ".csv"]))
def test_garbage_never_escapes_as_another_exception(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"labels{suffix}"
        path.write_bytes(data)
        try:
            labels = read_labels(path)
        except LabelFileError as error:
            assert str(error).startswith(str(path))
        else:
            for label in labels:  # what reads is a usable row
                assert label.model.strip() and label.task.strip() and label.sample_id.strip()
                assert math.isfinite(label.value) and label.epoch >= 1
