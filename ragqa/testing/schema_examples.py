"""Schema-valid placeholder values built from a JSON schema (pydantic's flavour).

The fake server answers unscripted models with them, so wire-format tests (structured output
modes, usage, headers) get a parseable answer. A placeholder is not a judgement: use a responder
of :mod:`ragqa.testing.responders` for anything that is scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["example_from_schema"]


def example_from_schema(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """Build a value that validates against a JSON schema (pydantic's flavour).

    Objects get every property, arrays one item, strings ``"ok"``, numbers 0.75 (clamped to
    ``minimum``/``maximum``), integers 1 (clamped), booleans ``true``, enums their first value;
    ``$ref`` into ``$defs`` and ``anyOf``/``oneOf`` (first non-null branch) are followed.

    Args:
        schema: the (sub)schema.
        root: the root schema holding ``$defs`` (default: ``schema``).

    Returns:
        A JSON-compatible value.
    """
    root = root if root is not None else schema
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return example_from_schema(root.get("$defs", {}).get(name, {}), root)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            branches = [b for b in schema[key] if b.get("type") != "null"] or schema[key]
            return example_from_schema(branches[0], root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {name: example_from_schema(sub, root) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [example_from_schema(schema.get("items", {}), root)]
    if kind == "string":
        return "ok"
    if kind in ("integer", "number"):
        value: float = 1 if kind == "integer" else 0.75
        if "maximum" in schema:
            value = min(value, schema["maximum"])
        if "minimum" in schema:
            value = max(value, schema["minimum"])
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return True
    return None
