"""Every generated schema ships as its model generates it, and result schemas state units."""

from __future__ import annotations

from typing import Any

import pytest

from plumbline.core.schema_files import GENERATED, RESULT_SCHEMAS, generated, shipped


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_shipped_schema_matches_its_model(name: str) -> None:
    """Regenerate with `python -m plumbline.core.schema_files` after changing a model."""
    assert shipped(name) == generated(name)


def _numbers_without_unit(node: Any, path: str = "", has_unit: bool = False) -> list[str]:
    """Paths of number schemas with no `unit` (the alternatives of a field with a unit share it)."""
    missing: list[str] = []
    if isinstance(node, dict):
        types = node.get("type")
        kinds = types if isinstance(types, list) else [types]
        unit = has_unit or "unit" in node
        if {"number", "integer"} & set(kinds) and not unit:
            missing.append(path or "<root>")
        for key, value in node.items():
            inherit = unit and key in ("anyOf", "oneOf", "items", "additionalProperties")
            missing += _numbers_without_unit(value, f"{path}.{key}" if path else key, inherit)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            missing += _numbers_without_unit(value, f"{path}[{index}]", has_unit)
    return missing


@pytest.mark.parametrize("name", RESULT_SCHEMAS)
def test_every_number_of_a_result_states_its_unit(name: str) -> None:
    assert _numbers_without_unit(generated(name)) == []


def test_unit_check_finds_a_number_without_unit() -> None:
    schema = {"properties": {"a": {"type": "number"}, "b": {"type": "number", "unit": "count"}}}
    assert _numbers_without_unit(schema) == ["properties.a"]
