"""How a `Context` class shows itself as run settings (Studio's panel, `/assistants/{id}/schemas`).

Pydantic builds the JSON schema of the dataclass; this hook then keeps only the fields the
graph offers (never the ones authentication owns), describes each with the docstring written
under it, and gives each its default as this process's environment sets it (the dataclass
reads defaults from the environment when it is built, so the schema alone would show none).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import fields, is_dataclass
from typing import Any

AUTH_OWNED = frozenset({"user_id", "org_id", "permissions"})
"""Filled from the caller's credentials on the served API; a run that sets them is refused."""


def run_settings_schema(schema: dict[str, Any], cls: type[Any]) -> None:
    """Pydantic's `json_schema_extra` hook for a `Context` class (edits `schema` in place)."""
    offered: frozenset[str] | None = getattr(cls, "offered_settings", None)
    properties: dict[str, Any] = schema.get("properties", {})
    docs = field_docs(cls)
    defaults = cls()
    for name in list(properties):
        if name in AUTH_OWNED or (offered is not None and name not in offered):
            del properties[name]
            continue
        if name in docs:
            properties[name]["description"] = docs[name]
        properties[name]["default"] = _json_value(getattr(defaults, name))
    schema["required"] = [name for name in schema.get("required", []) if name in properties]
    if not schema["required"]:
        del schema["required"]


def field_docs(cls: type[Any]) -> dict[str, str]:
    """Each dataclass field's docstring (the string written under it), from `cls` and the
    classes it inherits from; a subclass's own docstring for a field wins."""
    docs: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        if is_dataclass(base):
            docs.update(_own_field_docs(base))
    names = {f.name for f in fields(cls)}
    return {name: text for name, text in docs.items() if name in names}


def _own_field_docs(cls: type[Any]) -> dict[str, str]:
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = ast.parse(source).body[0]
    if not isinstance(body, ast.ClassDef):
        return {}
    docs: dict[str, str] = {}
    for field_node, next_node in zip(body.body, body.body[1:], strict=False):
        if (
            isinstance(field_node, ast.AnnAssign)
            and isinstance(field_node.target, ast.Name)
            and isinstance(next_node, ast.Expr)
            and isinstance(next_node.value, ast.Constant)
            and isinstance(next_node.value.value, str)
        ):
            docs[field_node.target.id] = inspect.cleandoc(next_node.value.value)
    return docs


def _json_value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
