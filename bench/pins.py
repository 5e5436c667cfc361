"""Which exact values does pinning lift, in how many formats and languages, and what does it
pin that it should not? The pin corpus (`tests/data/pins/`: tuning and held-out parts) through
the pinning reducer as a thread runs it: each user turn scanned once, then merged.

Reported per split: the share of cases lifted (every expected value pinned exactly, with its
currency and its kind; every taken-back value gone), by family, and the false-pin rate on
benign text (years, counts, times, versions, scores). The held-out part was written before the
finders and never adjusted on. Also the scan's cost on a 40 kB JSON tool log, the largest
text a turn hands it, and with `--data` the values pinned from every turn of LoCoMo's real
conversations (where a value pin is more likely a false one than a missed one).

    python -m bench.pins --json bench/out/pins.json [--data ../shared/data/locomo/locomo_dev.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from recollect.history.pinning import INSTRUCTION_KINDS, pins_from_text
from tests.support.pin_corpus import BENIGN, CORRECTIONS, VALUES, score


def service_log(entries: int = 400) -> str:
    """A JSON service log like the growth benchmark's: timestamps, levels, request ids."""
    rows = [
        {
            "ts": f"2026-11-26T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z",
            "level": "ERROR" if i % 97 == 0 else "INFO",
            "msg": f"worker {i % 7} handled request 25-{i} in {10 + i % 90} ms",
        }
        for i in range(entries)
    ]
    return json.dumps({"service": "billing", "turn": 25, "entries": rows})


def scan_cost(repeats: int) -> dict[str, float]:
    """Milliseconds to scan one ~10,000-token tool log (as a tool result and as a user turn)."""
    log = service_log()
    out: dict[str, float] = {"log_chars": len(log)}
    for name, from_tool in (("tool_result_ms", True), ("user_turn_ms", False)):
        pins_from_text(log, "warm", from_tool=from_tool)
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            pins_from_text(log, "t", from_tool=from_tool)
            samples.append((time.perf_counter() - start) * 1000)
        out[name] = round(statistics.median(samples), 1)
    return out


def chat_pins(path: Path) -> dict[str, Any]:
    """Value pins (not instructions) lifted from every turn of LoCoMo's conversations."""
    turns = [
        turn.get("text", "")
        for sample in json.loads(path.read_text(encoding="utf-8"))
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
    pinned = [
        f"{pin['kind']}: {pin['value']}"
        for i, text in enumerate(turns)
        for pin in pins_from_text(text, str(i), from_tool=False).values()
        if pin["kind"] not in INSTRUCTION_KINDS
    ]
    return {"turns": len(turns), "value_pins": len(pinned), "examples": pinned[:20]}


def run(repeats: int, data: Path | None = None) -> dict[str, Any]:
    result = {
        "corpus": {"values": len(VALUES), "corrections": len(CORRECTIONS), "benign": len(BENIGN)},
        "tune": score("tune"),
        "holdout": score("holdout"),
        "scan_cost": scan_cost(repeats),
    }
    if data is not None:
        result["locomo"] = chat_pins(data)
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--data", type=Path, help="LoCoMo JSON: count the values its chat pins")
    args = parser.parse_args(argv)
    result = run(args.repeats, args.data)
    print(f"{'split':8} {'cases':>5} {'lifted':>7} {'values':>7} {'fixes':>6} {'false pins':>10}")
    for split in ("tune", "holdout"):
        row = result[split]
        print(
            f"{split:8} {row['cases']:>5} {row['lifted']:>7.1%} {row['values_lifted']:>7.1%} "
            f"{row['corrections_lifted']:>6.1%} {row['false_pin_rate']:>10.1%}"
        )
        for miss in row["misses"]:
            print(f"    miss: {miss}")
    print(f"scan of a {result['scan_cost']['log_chars']}-character tool log: {result['scan_cost']}")
    if "locomo" in result:
        chat = result["locomo"]
        print(
            f"LoCoMo: {chat['value_pins']} value pins in {chat['turns']} turns {chat['examples']}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2))
    return result


if __name__ == "__main__":
    main()
