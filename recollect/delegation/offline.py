"""A worker report without a language model, so the offline demo hands back real fields.

The offline model answers a forced report with the smallest schema-valid value (an empty
report); this stand-in instead reports what the worker was given, each line as a fact citing
its own id, and its last reply as the summary. Deterministic, and visibly not a judgement.
"""

from __future__ import annotations

import re

from recollect.delegation.brief import BLACKBOARD_PREFIX, WorkerBrief
from recollect.delegation.records import ReportedFact, WorkerReport

_LINE = re.compile(r"^- \[([^\]]+)\] (.+)$")


def offline_report(
    brief: WorkerBrief, last_reply: str, *, skip: tuple[str, ...] = (), limit: int = 6
) -> WorkerReport:
    """Up to `limit` of the brief's entries as facts (a blackboard entry as `key: value`),
    except the ids in `skip`; the reply as summary."""
    facts = []
    for section in brief.sections:
        for line in section.lines:
            found = _LINE.match(line)
            if not found or found.group(1) not in brief.sources or found.group(1) in skip:
                continue
            shown, text = found.groups()
            if shown.startswith(BLACKBOARD_PREFIX):
                text = f"{shown.removeprefix(BLACKBOARD_PREFIX)}: {text}"
            facts.append(ReportedFact(text=text, sources=[shown]))
    return WorkerReport(summary=last_reply, facts=facts[:limit], open_questions=[])
