"""One redactor, every encoding: each form a secret takes on the way to a file is replaced.

The encoded texts are produced by the real encoders (git itself for quoted paths, the json,
urllib, base64 and html modules), never written by hand.
"""

from __future__ import annotations

import base64
import html
import json
import subprocess
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from plumbline.core.redaction import (
    REDACTED,
    Redactor,
    encoded_forms,
    public_arguments,
    secret_arguments,
    secret_values,
)

SECRETS = [
    "sk-plumbline-0123456789abcdef",  # plain ASCII
    'sk-plumbline/ключ+"quoted"\\=0123',  # non-ASCII, quotes, backslash, URL-special
    "tab\tand\nnewline-secret-42",  # control characters
]


def encodings(secret: str) -> dict[str, str]:
    raw = secret.encode()
    return {
        "raw": f"before {secret} after",
        "json": json.dumps({"message": f"bad key {secret}"}),
        "json_ascii_false": json.dumps({"m": secret}, ensure_ascii=False),
        "json_twice": json.dumps({"body": json.dumps({"error": secret})}),
        "url": f"https://example.com/v1?key={quote(secret, safe='')}&x=1",
        "url_plus": "key=" + quote_plus(secret),
        "url_lower_hex": quote(secret, safe="").lower(),
        "html": f"<p>{html.escape(secret)}</p>",
        "hex": raw.hex(),
        **{
            f"base64_offset_{n}": base64.b64encode(b"x" * n + raw + b"tail").decode()
            for n in range(3)
        },
        "base64_urlsafe": base64.urlsafe_b64encode(b"Basic " + raw).decode(),
    }


@pytest.mark.parametrize("secret", SECRETS, ids=["ascii", "unicode", "control"])
def test_every_encoding_is_redacted_in_text_and_bytes(secret: str) -> None:
    redactor = Redactor([secret])
    for name, text in encodings(secret).items():
        if name == "url_lower_hex" and text == secret.lower():
            continue  # nothing to encode: lower-casing changed the secret itself
        cleaned = redactor.text(text)
        assert REDACTED in cleaned, (name, text)
        for form in encoded_forms(secret):
            assert form not in cleaned, (name, form)
        assert redactor.bytes(text.encode()) == cleaned.encode(), name


def test_git_quoted_paths_in_a_real_diff_are_redacted(tmp_path: Path) -> None:
    unslashed = SECRETS[1].replace("/", "-")  # a file name cannot hold a slash
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / f"notes-{unslashed}.md").write_text("x\n")
    (repo / unslashed).write_text(f"the key is {unslashed}\n")
    subprocess.run([*git, "add", "-A"], check=True)
    patch = subprocess.run([*git, "diff", "--cached"], capture_output=True, check=True).stdout
    assert b"\\320\\272" in patch  # git really quoted the path (octal escapes)
    cleaned = Redactor({"KEY": unslashed}).bytes(patch)
    assert b"[redacted KEY]" in cleaned
    for form in encoded_forms(unslashed):
        assert form.encode() not in cleaned, form


def test_values_are_redacted_inside_nested_records() -> None:
    secret = SECRETS[0]
    record = {"a": [secret, {"k": f"x{secret}"}], secret: 1, "n": 3}
    cleaned = Redactor([secret]).value(record)
    assert secret not in json.dumps(cleaned)
    assert cleaned["n"] == 3


def test_shapes_only_when_asked() -> None:
    text = "Authorization: Bearer abcdef123456 and sk-abcdefghijkl"
    assert Redactor([]).text(text) == text
    assert Redactor([], shapes=True).text(text).count(REDACTED) == 2


def test_short_and_ordinary_values_are_not_secrets() -> None:
    assert encoded_forms("abc") == set()
    env = {"OPENAI_API_KEY": "sk-123456789", "HF_TOKEN": "true", "PATH": "/usr/bin:/bin"}
    assert secret_values(env) == ["sk-123456789"]


def test_model_arguments_that_name_secrets() -> None:
    args = (("api_key", "k-123456"), ("reasoning_effort", "high"), ("token", 12345))
    assert secret_arguments(args) == ["k-123456"]
    assert public_arguments(args) == {
        "api_key": REDACTED,
        "reasoning_effort": "high",
        "token": REDACTED,
    }
