"""Smallest JSON value that a JSON schema accepts.

The offline model has to answer forced tool calls and structured-output requests without a
language model, and its answers must still pass validation downstream; this builds a
deterministic, schema-valid stand-in value from the schema alone.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["UnsatisfiableSchemaError", "minimal_instance"]

_MAX_DEPTH = 64
_PLACEHOLDER = "offline"

# Sample values for common string formats, so that format-checking validators accept them.
_FORMAT_SAMPLES: dict[str, str] = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00Z",
    "duration": "P0D",
    "email": "offline@example.com",
    "idn-email": "offline@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "iri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri-reference": "https://example.com/",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "json-pointer": "",
    "regex": ".*",
}

# Candidates tried, in order, when a string must match a `pattern`.
_PATTERN_CANDIDATES: tuple[str, ...] = (
    _PLACEHOLDER,
    "",
    "0",
    "a",
    "A",
    "offline@example.com",
    "https://example.com/",
    "1970-01-01",
    "00000000-0000-0000-0000-000000000000",
)


class UnsatisfiableSchemaError(ValueError):
    """No finite value satisfies the schema (e.g. a required property that recurses forever)."""


def minimal_instance(schema: Mapping[str, Any] | bool) -> Any:
    """Return a small deterministic value that validates against `schema`.

    Objects get only their required properties, so that defaults are left to the consumer;
    arrays get `minItems` items; unions take their first non-null branch, falling back to
    null when that is allowed and the other branches cannot be built.
    """
    root: Mapping[str, Any] = schema if isinstance(schema, Mapping) else {}
    return _build(schema, root, (), 0)


def _build(node: Any, root: Mapping[str, Any], refs: tuple[str, ...], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise UnsatisfiableSchemaError("schema nests too deeply to build a finite value")
    if node is False:
        raise UnsatisfiableSchemaError("the `false` schema accepts no value")
    if not isinstance(node, Mapping):
        return None

    if "$ref" in node:
        ref = str(node["$ref"])
        if ref in refs:
            raise UnsatisfiableSchemaError(f"required value recurses through {ref}")
        merged = {**_resolve_ref(root, ref), **{k: v for k, v in node.items() if k != "$ref"}}
        return _build(merged, root, (*refs, ref), depth + 1)

    if "const" in node:
        return copy.deepcopy(node["const"])
    if "default" in node:
        return copy.deepcopy(node["default"])
    enum = node.get("enum")
    if isinstance(enum, Sequence) and not isinstance(enum, str) and enum:
        return copy.deepcopy(enum[0])

    all_of = node.get("allOf")
    if isinstance(all_of, Sequence) and all_of:
        rest = {k: v for k, v in node.items() if k != "allOf"}
        return _build(_merge_all_of(rest, all_of, root), root, refs, depth + 1)

    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, Sequence) and branches:
            rest = {k: v for k, v in node.items() if k != key}
            merged_branches = [{**rest, **b} if isinstance(b, Mapping) else b for b in branches]
            return _first_buildable(merged_branches, root, refs, depth)

    declared = node.get("type")
    if isinstance(declared, Sequence) and not isinstance(declared, str):
        return _first_buildable([{**node, "type": t} for t in declared], root, refs, depth)
    kind = declared if isinstance(declared, str) else _infer_type(node)
    return _build_typed(kind, node, root, refs, depth)


def _first_buildable(
    branches: Sequence[Any], root: Mapping[str, Any], refs: tuple[str, ...], depth: int
) -> Any:
    """Prefer the first non-null branch; null only when nothing else can be built."""
    null_allowed = False
    last_error: UnsatisfiableSchemaError | None = None
    for branch in branches:
        if _is_null_schema(branch):
            null_allowed = True
            continue
        try:
            return _build(branch, root, refs, depth + 1)
        except UnsatisfiableSchemaError as exc:
            last_error = exc
    if null_allowed:
        return None
    raise last_error or UnsatisfiableSchemaError("no branch of the union can be built")


def _build_typed(
    kind: str | None,
    node: Mapping[str, Any],
    root: Mapping[str, Any],
    refs: tuple[str, ...],
    depth: int,
) -> Any:
    if kind == "object":
        return _build_object(node, root, refs, depth)
    if kind == "array":
        return _build_array(node, root, refs, depth)
    if kind == "string":
        return _build_string(node)
    if kind == "integer":
        return _build_integer(node)
    if kind == "number":
        return _build_number(node)
    if kind == "boolean":
        return False
    return None


def _build_object(
    node: Mapping[str, Any], root: Mapping[str, Any], refs: tuple[str, ...], depth: int
) -> dict[str, Any]:
    properties = node.get("properties")
    props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    extra = node.get("additionalProperties")
    fallback: Any = extra if isinstance(extra, Mapping) else {}
    result: dict[str, Any] = {}
    for name in node.get("required") or ():
        result[str(name)] = _build(props.get(name, fallback), root, refs, depth + 1)
    min_props = node.get("minProperties")
    if isinstance(min_props, int):
        for name, sub in props.items():
            if len(result) >= min_props:
                break
            if name not in result:
                result[name] = _build(sub, root, refs, depth + 1)
    return result


def _build_array(
    node: Mapping[str, Any], root: Mapping[str, Any], refs: tuple[str, ...], depth: int
) -> list[Any]:
    prefix = node.get("prefixItems")
    items = node.get("items")
    if prefix is None and isinstance(items, Sequence) and not isinstance(items, str | Mapping):
        prefix, items = items, node.get("additionalItems")
    min_items = node.get("minItems")
    wanted = min_items if isinstance(min_items, int) else 0
    result: list[Any] = []
    prefix_schemas: Sequence[Any] = prefix if isinstance(prefix, Sequence) else ()
    for sub in prefix_schemas:
        result.append(_build(sub, root, refs, depth + 1))
    while len(result) < wanted:
        result.append(_build(items if items is not None else {}, root, refs, depth + 1))
    return result


def _build_string(node: Mapping[str, Any]) -> str:
    fmt = node.get("format")
    base = _FORMAT_SAMPLES.get(fmt, _PLACEHOLDER) if isinstance(fmt, str) else _PLACEHOLDER
    min_len = node.get("minLength")
    max_len = node.get("maxLength")
    lo = min_len if isinstance(min_len, int) else 0
    hi = max_len if isinstance(max_len, int) else None

    def fit(value: str) -> str:
        value = value.ljust(lo, "-")
        return value if hi is None else value[:hi]

    pattern = node.get("pattern")
    if isinstance(pattern, str):
        try:
            compiled = re.compile(pattern)
        except re.error:
            return fit(base)
        for candidate in (base, *_PATTERN_CANDIDATES):
            fitted = fit(candidate)
            if compiled.search(fitted) is not None:
                return fitted
    return fit(base)


def _bounds(node: Mapping[str, Any]) -> tuple[float | None, bool, float | None, bool]:
    """Lower bound, whether it is exclusive, upper bound, whether it is exclusive."""
    lo, lo_excl = _number(node.get("minimum")), False
    hi, hi_excl = _number(node.get("maximum")), False
    ex_min, ex_max = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
    if isinstance(ex_min, bool):
        lo_excl = ex_min and lo is not None
    elif (value := _number(ex_min)) is not None and (lo is None or value >= lo):
        lo, lo_excl = value, True
    if isinstance(ex_max, bool):
        hi_excl = ex_max and hi is not None
    elif (value := _number(ex_max)) is not None and (hi is None or value <= hi):
        hi, hi_excl = value, True
    return lo, lo_excl, hi, hi_excl


def _build_integer(node: Mapping[str, Any]) -> int:
    lo, lo_excl, hi, hi_excl = _bounds(node)
    low = None if lo is None else (math.floor(lo) + 1 if lo_excl else math.ceil(lo))
    high = None if hi is None else (math.ceil(hi) - 1 if hi_excl else math.floor(hi))
    value = 0
    if low is not None and value < low:
        value = low
    if high is not None and value > high:
        value = high
    step = _number(node.get("multipleOf"))
    if step is not None and step > 0 and float(step).is_integer():
        whole = int(step)
        value = math.ceil(value / whole) * whole
        if high is not None and value > high:
            value -= whole
    return value


def _build_number(node: Mapping[str, Any]) -> float:
    lo, lo_excl, hi, hi_excl = _bounds(node)
    value = 0.0
    if lo is not None and (value < lo or (lo_excl and value == lo)):
        if not lo_excl:
            value = lo
        elif hi is not None:
            value = (lo + hi) / 2
        else:
            value = lo + 1
    if hi is not None and (value > hi or (hi_excl and value == hi)):
        if not hi_excl:
            value = hi
        elif lo is not None:
            value = (lo + hi) / 2
        else:
            value = hi - 1
    step = _number(node.get("multipleOf"))
    if step is not None and step > 0 and not (value / step).is_integer():
        value = math.ceil(value / step) * step
    return float(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _infer_type(node: Mapping[str, Any]) -> str | None:
    if "properties" in node or "required" in node or "additionalProperties" in node:
        return "object"
    if "items" in node or "prefixItems" in node or "minItems" in node:
        return "array"
    if "minLength" in node or "maxLength" in node or "pattern" in node or "format" in node:
        return "string"
    if "minimum" in node or "maximum" in node or "exclusiveMinimum" in node:
        return "number"
    return None


def _is_null_schema(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null"


def _merge_all_of(
    base: Mapping[str, Any], parts: Sequence[Any], root: Mapping[str, Any]
) -> dict[str, Any]:
    """Fold `allOf` into one schema: properties and required lists union, other keys win late."""
    merged: dict[str, Any] = dict(base)
    properties: dict[str, Any] = dict(merged.get("properties") or {})
    required: list[str] = list(merged.get("required") or [])
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        resolved: Mapping[str, Any] = part
        if "$ref" in part:
            resolved = {**_resolve_ref(root, str(part["$ref"])), **part}
            resolved = {k: v for k, v in resolved.items() if k != "$ref"}
        for key, value in resolved.items():
            if key == "properties" and isinstance(value, Mapping):
                properties.update(value)
            elif key == "required" and isinstance(value, Sequence):
                required.extend(str(name) for name in value if name not in required)
            else:
                merged[key] = value
    if properties:
        merged["properties"] = properties
    if required:
        merged["required"] = required
    return merged


def _resolve_ref(root: Mapping[str, Any], ref: str) -> Mapping[str, Any]:
    if not ref.startswith("#"):
        raise UnsatisfiableSchemaError(f"only local $ref values can be resolved, got {ref!r}")
    target: Any = root
    for raw in ref[1:].split("/"):
        if not raw:
            continue
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(target, Mapping) and key in target:
            target = target[key]
        elif isinstance(target, Sequence) and key.isdigit() and int(key) < len(target):
            target = target[int(key)]
        else:
            raise UnsatisfiableSchemaError(f"cannot resolve $ref {ref!r}")
    if target is True:
        return {}
    if not isinstance(target, Mapping):
        raise UnsatisfiableSchemaError(f"$ref {ref!r} does not point at a schema")
    return target
