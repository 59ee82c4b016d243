"""Secrets out of everything plumbline writes, in every encoding they can take on the way.

A secret reaches a file not only as its own bytes: a file name holding it appears in a patch in
git's quoted form (``"b/\\303\\251..."``), an error body echoes it JSON-escaped or inside a URL
(percent-encoded), a header or a log carries it in base64 or hex, an HTML page escapes it. One
``Redactor`` replaces each of those forms, in text and in bytes, and is used by every writer:
trial records (``probe``), error messages, and the agent harness's logs, diffs and records.

``encoded_forms`` lists the forms; a form shorter than ``MIN_FORM`` characters is left out (it
would match ordinary text), as are secrets shorter than ``MIN_SECRET``.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, quote_plus

#: Names of environment variables and model arguments that hold secrets.
SECRET_NAME = re.compile(
    r"(?:API_?KEY|ACCESS_?KEY|^KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH(?:ORIZATION)?)$",
    re.IGNORECASE,
)
#: Shapes of keys and tokens, redacted from provider error messages even when not known.
SECRET_SHAPES = (
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{6,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),
)
_SHAPES_BYTES = tuple(re.compile(pattern.pattern.encode()) for pattern in SECRET_SHAPES)
MIN_SECRET = 4
MIN_FORM = 8
REDACTED = "[REDACTED]"

_GIT_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r"}


def git_quoted(secret: str) -> str:
    """The secret as git writes it inside a quoted path (``core.quotePath``, quote_c_style):
    ``"`` and ``\\`` escaped, control characters as ``\\t``-style escapes or octal, every byte
    of a non-ASCII character in octal."""
    out = []
    for byte in secret.encode("utf-8"):
        if byte in (0x22, 0x5C):
            out.append("\\" + chr(byte))
        elif byte in _GIT_ESCAPES:
            out.append(_GIT_ESCAPES[byte])
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    return "".join(out)


def _json_forms(text: str) -> set[str]:
    ascii_form = json.dumps(text)[1:-1]
    forms = {ascii_form, json.dumps(text, ensure_ascii=False)[1:-1]}
    forms.add(re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), ascii_form))
    forms |= {form.replace("/", "\\/") for form in list(forms)}
    return forms


def _percent_forms(text: str) -> set[str]:
    forms = {quote(text, safe=""), quote(text), quote_plus(text), quote_plus(text, safe="/")}
    return forms | {re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), f) for f in forms}


def _base64_forms(secret: bytes) -> set[str]:
    """The base64 characters that depend on the secret alone, at each of the three alignments
    it can have inside a longer encoded text (standard and URL-safe alphabets)."""
    forms = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret).decode("ascii").rstrip("=")
        start = -(-8 * offset // 6)
        end = 8 * (offset + len(secret)) // 6
        core = encoded[start:end]
        forms |= {core, core.replace("+", "-").replace("/", "_")}
    return forms


def encoded_forms(secret: str) -> set[str]:
    """Every form of `secret` a writer may meet: itself, JSON-escaped (also twice),
    percent-encoded, HTML-escaped, git-quoted, base64 (any alignment) and hex."""
    if len(secret) < MIN_SECRET:
        return set()
    raw = secret.encode("utf-8")
    forms = {secret, git_quoted(secret), html.escape(secret), html.escape(secret, quote=False)}
    forms |= _percent_forms(secret)
    for form in list(forms):
        forms |= _json_forms(form)
    for form in list(forms):
        forms |= _json_forms(form)  # JSON inside JSON (an error body inside a message)
    forms |= {raw.hex(), raw.hex().upper()}
    forms |= _base64_forms(raw)
    return {form for form in forms if form == secret or len(form) >= MIN_FORM}


class Redactor:
    """Replaces every encoded form of known secrets, in text, bytes and JSON-like values.

    Args:
        secrets: values, or a mapping name -> value (the replacement then names the secret:
            ``[redacted NAME]``; otherwise ``[REDACTED]``).
        shapes: also replace anything shaped like a key or a bearer token (``SECRET_SHAPES``);
            for error messages, not for model output (which may legitimately look like a key).
    """

    def __init__(
        self, secrets: Mapping[str, str] | Iterable[str] = (), *, shapes: bool = False
    ) -> None:
        named = secrets.items() if isinstance(secrets, Mapping) else ((None, s) for s in secrets)
        replacements: dict[str, str] = {}
        for name, value in named:
            label = REDACTED if name is None else f"[redacted {name}]"
            for form in encoded_forms(str(value)):
                replacements.setdefault(form, label)
        self._replacements = replacements
        self._shapes = shapes
        ordered = sorted(replacements, key=len, reverse=True)
        self._text = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        encoded = {form.encode("utf-8"): label.encode() for form, label in replacements.items()}
        self._bytes_map = encoded
        longest_first = sorted(encoded, key=len, reverse=True)
        self._bytes = re.compile(b"|".join(map(re.escape, longest_first))) if encoded else None

    def __bool__(self) -> bool:
        return self._text is not None or self._shapes

    def text(self, text: str) -> str:
        if self._text is not None:
            text = self._text.sub(lambda match: self._replacements[match.group(0)], text)
        if self._shapes:
            for pattern in SECRET_SHAPES:
                text = pattern.sub(REDACTED, text)
        return text

    def bytes(self, data: bytes) -> bytes:
        if self._bytes is not None:
            data = self._bytes.sub(lambda match: self._bytes_map[match.group(0)], data)
        if self._shapes:
            for pattern in _SHAPES_BYTES:
                data = pattern.sub(REDACTED.encode(), data)
        return data

    def value(self, value: Any) -> Any:
        """Every string (keys included) inside a JSON-like value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(key): self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value


def redact(text: str, secrets: Iterable[str] = (), *, shapes: bool = True) -> str:
    """`text` with every form of `secrets` (and, by default, key-shaped strings) replaced."""
    return Redactor(secrets, shapes=shapes).text(text)


def secret_values(environ: Mapping[str, str], *, min_length: int = 6) -> list[str]:
    """Values of the entries whose names say they hold a key, token or password (values
    shorter than `min_length`, such as ``true``, are settings rather than secrets)."""
    values = {
        value
        for name, value in environ.items()
        if SECRET_NAME.search(name) and isinstance(value, str) and len(value) >= min_length
    }
    return sorted(values, key=len, reverse=True)


def secret_arguments(arguments: Sequence[tuple[str, Any]]) -> list[str]:
    """String values of model arguments whose names say they hold a secret (``api_key=...``)."""
    strings = {key: value for key, value in arguments if isinstance(value, str)}
    return secret_values(strings, min_length=MIN_SECRET)


def public_arguments(arguments: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """Model arguments fit for a record: secret-named ones replaced by ``[REDACTED]``."""
    return {key: REDACTED if SECRET_NAME.search(key) else value for key, value in arguments}
