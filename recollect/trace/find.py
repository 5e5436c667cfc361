"""`--find TEXT`: was this ever said, extracted, stored, recalled, shown — and where did it
stop? Read from a thread's traces and the user's long-term memory, turn by turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recollect.trace.store import TraceRow

STAGES = ("said", "extracted", "stored", "recalled", "shown")


def _has(text: Any, needle: str) -> bool:
    return isinstance(text, str) and needle in text.lower()


def _turn_events(trace: dict[str, Any], needle: str, carriers: set[str]) -> list[str]:
    """What happened to the text (or the messages carrying it) in one turn's trace."""
    events: list[str] = []
    for role in ("user_message", "reply"):
        said = trace.get(role) or {}
        if _has(said.get("text"), needle):
            carriers.add(str(said.get("id")))
            events.append("said by the user" if role == "user_message" else "said in the reply")
    if carriers & set(trace.get("history_ids", [])):
        events.append("shown: in the prompt's verbatim history")
    if carriers & set(trace.get("trimmed", [])):
        events.append("trimmed from the checkpointed window")
    if carriers & set(trace.get("truncated", [])):
        events.append("cut in the middle (excerpts kept for the fold)")
    fold = trace.get("fold") or {}
    if carriers & set(fold.get("folded_ids", [])):
        kept = "kept" if _has(fold.get("text"), needle) else "lost"
        events.append(f"folded into summary version {fold.get('version')} ({kept} in its text)")
    if _has(trace.get("summary_shown"), needle):
        events.append("shown: in the conversation summary")
    for state in ("shown", "hidden"):
        for pin in (trace.get("pinned") or {}).get(state, []):
            if _has(pin.get("value"), needle):
                where = "shown: " if state == "shown" else ""
                events.append(f"{where}pinned as {pin.get('kind')} ({state})")
    if any(_has(p, needle) for p in trace.get("profile", [])):
        events.append("shown: in the user profile")
    shown_ids = set(trace.get("recalled_shown", []))
    for c in trace.get("recall", []):
        if not _has(c.get("text"), needle):
            continue
        ranks = f"dense #{c.get('dense_rank')}, lexical #{c.get('lexical_rank')}"
        head = f"recalled {c.get('kind')} {str(c.get('id'))[-8:]} ({ranks}, score {c['score']:.3f})"
        if c.get("id") in shown_ids:
            events.append(f"shown: {head}")
        elif c.get("kept"):
            events.append(f"{head}, left out of the prompt by its recalled-memory budget")
        else:
            events.append(f"{head}, not shown: {c.get('dropped')}")
    for fact in trace.get("facts", []):
        if _has(fact.get("text"), needle) or carriers & set(fact.get("sources", [])):
            verdict = fact.get("verdict")
            detail = f" as {str(fact['fact_id'])[-8:]}" if fact.get("fact_id") else ""
            if fact.get("superseded"):
                detail += f", superseding {', '.join(s[-8:] for s in fact['superseded'])}"
            if verdict in ("rejected", "review") and fact.get("reasons"):
                detail += f" ({'; '.join(fact['reasons'])})"
            events.append(f"extracted: {verdict}{detail}")
    return events


def _stage(event: str) -> str | None:
    if event.startswith("said by"):
        return "said"
    if event.startswith("extracted: "):
        verdict = event.split(":", 1)[1].split()[0]
        return "stored" if verdict in ("stored", "merged", "superseded") else "extracted"
    if event.startswith("shown: recalled"):
        return "shown"
    if event.startswith("recalled"):
        return "recalled"
    if event.startswith("shown:"):
        return "shown"
    return None


def story(rows: Sequence[TraceRow], facts: Sequence[dict[str, Any]], text: str) -> dict[str, Any]:
    """The thread's turns that touched `text` and the user's facts that contain it, with the
    first and last turn of each stage and a sentence on where the trail ends."""
    needle = text.lower()
    carriers: set[str] = set()
    turns: list[dict[str, Any]] = []
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for row in rows:
        events = _turn_events(row.trace, needle, carriers)
        if not events:
            continue
        turns.append({"turn": row.turn, "kind": row.kind, "events": events})
        for event in events:
            stage = _stage(event)
            if stage is not None:
                first.setdefault(stage, row.turn)
                last[stage] = row.turn
    memory = [
        {
            "id": f["id"],
            "text": f["text"],
            "status": (
                "deleted"
                if f["deleted_at"]
                else f"superseded by {f['superseded_by']}"
                if f["superseded_by"]
                else "live"
            ),
        }
        for f in facts
    ]
    if memory:
        first.setdefault("stored", -1)
    stages = {s: {"first_turn": first.get(s), "last_turn": last.get(s)} for s in STAGES}
    return {
        "find": text,
        "turns": turns,
        "memory": memory,
        "stages": stages,
        "stopped": _ending(first, last, memory, rows),
    }


def _ending(
    first: dict[str, int],
    last: dict[str, int],
    memory: list[dict[str, Any]],
    rows: Sequence[TraceRow],
) -> str:
    final = max((r.turn for r in rows), default=0)
    if "said" not in first and not memory:
        return "never said in this thread and not in the user's memory"
    if "shown" in last and last["shown"] == final:
        return f"still shown to the model at the last turn ({final})"
    shown = f"; last shown at turn {last['shown']}" if "shown" in last else ""
    if not memory and "extracted" not in first:
        return f"never extracted into long-term memory{shown}"
    if not memory:
        return f"extracted but never stored (see the verdicts){shown}"
    if all(m["status"] != "live" for m in memory):
        return f"stored, but no longer live ({memory[-1]['status']}){shown}"
    if "recalled" not in first and "shown" not in first:
        return "stored, never recalled in this thread"
    return f"stored and live; not shown at the last turn ({final}){shown}"
