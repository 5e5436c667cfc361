"""What an item's value says as a fact, and how filters read values.

A value is the caller's JSON object. Its text is `value["text"]`, else `value["content"]`
(langmem's tools write `{"content": ...}`), else every field rendered as `name: value`;
`category`, `confidence`, `subject` and `learned_at`, when present, set those attributes of
the fact and stay in the value. The text is screened, redacted and validated like an
extracted fact; a refused value raises `ValueRejectedError` with the reasons and nothing is
written. A redacted value is stored redacted in every string it holds.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from recollect.extraction.validation import FactScreen, ValidationPolicy
from recollect.gate import redact
from recollect.longterm.facts import WRITTEN_BY
from recollect.longterm.records import FactCategory, NewFact, StoredFact
from recollect.store import clock
from recollect.store.scope import ORG_OWNER
from recollect.store.storable import json_refusal

DEFAULT_CATEGORY = FactCategory.BIOGRAPHICAL
"""Neither single- nor multi-valued by itself, and not copied into the profile."""
STORE_CONFIDENCE = 0.9
MAX_VALUE_BYTES = 16_384
"""A value is a fact with a few attributes, not a document store."""
MAX_TTL_MINUTES = 36_500 * 24 * 60
"""A hundred years: an item's expiry stays a date Postgres can store and compare."""
FUTURE_SKEW = timedelta(minutes=5)
"""How far ahead of this process's clock a `learned_at` may be (another machine's clock)."""
TEXT_FIELDS = ("text", "content")
FACT_FIELDS = frozenset({"category", "confidence", "subject", "learned_at"})
SOURCE = "store"


class ValueRejectedError(ValueError):
    """The value was not stored: the reasons, in one line."""


@dataclass(frozen=True)
class Offered:
    """A screened put: the fact to write and the value to keep beside it."""

    fact: NewFact
    value: dict[str, Any]


def item_text(value: Mapping[str, Any]) -> str:
    """The text that is recalled for `value`."""
    for name in TEXT_FIELDS:
        field = value.get(name)
        if isinstance(field, str):
            return field
        if name == "content" and isinstance(field, Mapping | list):
            return _render(field)
    return _render({k: v for k, v in value.items() if k not in FACT_FIELDS})


def _render(obj: Any) -> str:
    if isinstance(obj, Mapping):
        return "; ".join(f"{k}: {_render(v)}" for k, v in obj.items() if v is not None)
    if isinstance(obj, list | tuple):
        return ", ".join(_render(v) for v in obj if v is not None)
    if isinstance(obj, bool):
        return "yes" if obj else "no"
    return str(obj)


def offered(value: Any, policy: ValidationPolicy, where: str) -> Offered:
    """Screen one put's value; `where` names the item in the error."""
    if not isinstance(value, Mapping):
        raise ValueRejectedError(
            f"{where}: a value must be a JSON object, got {type(value).__name__}"
        )
    refused = json_refusal(value)
    if refused:
        raise ValueRejectedError(f"{where}: {refused}; nothing was stored")
    try:
        size = len(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueRejectedError(f"{where}: the value is not JSON ({exc})") from exc
    if size > MAX_VALUE_BYTES:
        raise ValueRejectedError(f"{where}: the value is {size} bytes, limit {MAX_VALUE_BYTES}")
    category = _category(value.get("category"), where)
    verdict = FactScreen(policy).check(item_text(value), category)
    if not verdict.accepted:
        raise ValueRejectedError(f"{where} not stored: {'; '.join(verdict.reasons)}")
    redacted = any(r.startswith("redacted") for r in verdict.reasons)
    kept = _redacted(dict(value), policy) if redacted else dict(value)
    fact = NewFact(
        text=verdict.text,
        category=FactCategory(category),
        subject=_subject(value.get("subject"), where),
        confidence=_confidence(value.get("confidence"), where),
        learned_at=_moment(value.get("learned_at"), where),
        metadata={"source": SOURCE},
    )
    return Offered(fact, kept)


def _category(raw: Any, where: str) -> str:
    if raw is None:
        return DEFAULT_CATEGORY.value
    if not isinstance(raw, str):
        raise ValueRejectedError(f"{where}: category must be a string")
    return "_".join(raw.strip().lower().replace("-", " ").split())


def _subject(raw: Any, where: str) -> str | None:
    if raw is None or (isinstance(raw, str) and len(raw) <= 200):
        return raw
    raise ValueRejectedError(f"{where}: subject must be a string of at most 200 characters")


def _confidence(raw: Any, where: str) -> float:
    if raw is None:
        return STORE_CONFIDENCE
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= 1:
        raise ValueRejectedError(f"{where}: confidence must be a number from 0 to 1")
    return float(raw)


def _moment(raw: Any, where: str) -> datetime | None:
    if raw is None:
        return None
    try:
        moment = datetime.fromisoformat(str(raw))
    except ValueError as exc:
        raise ValueRejectedError(f"{where}: learned_at must be an ISO date or time") from exc
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    if moment > clock.now() + FUTURE_SKEW:
        raise ValueRejectedError(
            f"{where}: learned_at may not be in the future (it sets how recent a fact is)"
        )
    return moment


def check_ttl(ttl: Any, where: str) -> None:
    """A ttl is a positive, finite number of minutes, at most `MAX_TTL_MINUTES`."""
    if ttl is None:
        return
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl <= MAX_TTL_MINUTES:
        raise ValueRejectedError(
            f"{where}: ttl must be a number of minutes above 0 and at most {MAX_TTL_MINUTES}"
        )


def _redacted(obj: Any, policy: ValidationPolicy) -> Any:
    if isinstance(obj, str):
        return redact(obj, policy.extra_patterns, policy.allow_pii).text
    if isinstance(obj, Mapping):
        return {k: _redacted(v, policy) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_redacted(v, policy) for v in obj]
    return obj


def fact_value(fact: StoredFact) -> dict[str, Any]:
    """The value of a fact no put named (extracted, or written by the agent's tools); an
    organisation-shared one names who wrote it."""
    value: dict[str, Any] = {
        "text": fact.text,
        "category": str(fact.category),
        "confidence": round(fact.confidence, 4),
        "subject": fact.subject,
        "learned_at": fact.learned_at.isoformat(),
        "source_ids": list(fact.source_ids),
    }
    if fact.user_id == ORG_OWNER and fact.metadata.get(WRITTEN_BY):
        value[WRITTEN_BY] = fact.metadata[WRITTEN_BY]
    return value


def is_fact_id(key: str) -> bool:
    try:
        uuid.UUID(key)
    except ValueError:
        return False
    return True


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """`BaseStore` filters: equality, or `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`."""
    return all(_holds(value.get(k), c) for k, c in (conditions or {}).items())


def _holds(actual: Any, condition: Any) -> bool:
    if isinstance(condition, Mapping) and condition and all(k.startswith("$") for k in condition):
        return all(_compare(actual, op, expected) for op, expected in condition.items())
    if isinstance(condition, Mapping):
        return isinstance(actual, Mapping) and matches(actual, condition)
    return bool(actual == condition)


def _compare(actual: Any, op: str, expected: Any) -> bool:
    if op == "$eq":
        return bool(actual == expected)
    if op == "$ne":
        return bool(actual != expected)
    numbers = all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in (actual, expected)
    )
    if not numbers and not (isinstance(actual, str) and isinstance(expected, str)):
        return False
    if op == "$gt":
        return bool(actual > expected)
    if op == "$gte":
        return bool(actual >= expected)
    if op == "$lt":
        return bool(actual < expected)
    if op == "$lte":
        return bool(actual <= expected)
    raise ValueError(f"unknown filter operator {op!r} (known: $eq, $ne, $gt, $gte, $lt, $lte)")
