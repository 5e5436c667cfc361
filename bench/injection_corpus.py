"""The learned injection layer's corpus: written lines, and the variants generated from them.

`bench/data/injection/written.jsonl` holds sentences written by hand from classes: in 27
languages, the same fourteen injection ideas (direct override, preference-framed "skip the
safety rules", paraphrase without trigger words, exfiltration to an address or a URL, persona
hijack, trigger-word backdoor, a fake developer or system note, a tool call asked for in prose)
and eighteen benign look-alikes (preferences about how the assistant answers, instructions and
rules about the user's own life and work, security jobs, forgotten passwords, technical prose
about servers, roles and deploys, quotes, recipes, to-do lists, reminders), each idea with
English lines in more wordings, plus English lines in more styles (tool-call JSON and markup
among them). This module derives the rest, deterministically:

- `toolcall`: a written line smuggled inside a tool call, role-tagged JSON or markup
  (injections), or kept inside plain data JSON or markup (benign look-alikes);
- `disguised`: a Latin-script line in small capitals, upside down, under combining marks,
  split by emoji, written backwards, in pig latin or in symbol leetspeak — for benign lines
  too, so a disguise alone is never the signal.

    python -m bench.injection_corpus   # rewrites bench/data/injection/generated.jsonl
"""

# ruff: noqa: RUF001  (disguised letters are what this corpus is about)
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "injection"
WRITTEN = DATA / "written.jsonl"
GENERATED = DATA / "generated.jsonl"
POLICY = DATA / "policy.jsonl"
"""Lines written by class of what a remembered text could do: benign treatment preferences
(units, names, formality, length, language, tone, things to avoid), the user's own rules and
work (security work included), life facts; and texts that grant a capability (send anywhere,
reveal instructions or other users' data, call tools, skip a protected action's approval or
confirmation, change a role, turn safety off, address any AI reading them). Plain lines in 24
languages and English, each also encoded (ROT13, Caesar, Morse, accents, leetspeak, base64,
Unicode tags) and in one structure (email or document, HTML comment, tool JSON), and grouped
into multi-line policies."""
HELDOUT = DATA / "heldout.jsonl"
"""Never trained on: whole languages (Romanian, Swahili, Tagalog, Thai, Greek, Finnish: the
policy lines and the older corpus's lines in them) and whole styles (a forwarded message, a
config entry) in every language."""
LATIN_SCRIPT = frozenset(
    {"en", "de", "fr", "es", "it", "pt", "nl", "sv", "pl", "cs", "ro", "tr", "vi", "id", "sw", "tl"}
)


@dataclass(frozen=True)
class Line:
    """One labelled candidate fact."""

    text: str
    label: str
    lang: str
    style: str
    concept: str
    disguise: str = ""
    cls: str = ""
    """What the text could do (`policy.jsonl`'s "class"), empty for the older lines."""

    @property
    def injection(self) -> bool:
        return self.label == "injection"


def _read(path: Path) -> list[Line]:
    rows = [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw]
    return [Line(cls=row.pop("class", ""), **row) for row in rows]


def load() -> list[Line]:
    """Every training line: written, generated and the policy's."""
    return _read(WRITTEN) + _read(GENERATED) + _read(POLICY)


def heldout() -> list[Line]:
    """The held-out test lines (`HELDOUT`), which no network is trained on."""
    return _read(HELDOUT)


_SMALL = dict(zip("abcdefghijklmnopqrstuvwyz", "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ", strict=True))
_FLIP = dict(zip("abcdefghijklmnopqrtuvwy.?!'", "ɐqɔpǝɟƃɥᴉɾʞlɯuodbɹʇnʌʍʎ˙¿¡,", strict=True))
_LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "$", "t": "7", "l": "|"}
_EMOJI = ("🔥", "✨", "👉", "⭐", "💥")
_MARKS = ("\u0336", "\u0335", "\u0338", "\u0334", "\u0337", "\u0489", "\u035f", "\u0361")


def small_caps(text: str) -> str:
    return "".join(_SMALL.get(c, c) for c in text.lower())


def upside_down(text: str) -> str:
    return "".join(_FLIP.get(c, c) for c in text.lower())[::-1]


def combining(text: str) -> str:
    return "".join(c + _MARKS[i % len(_MARKS)] if c.isalpha() else c for i, c in enumerate(text))


def emoji_split(text: str) -> str:
    sep = _EMOJI[len(text) % len(_EMOJI)]
    return "  ".join(sep.join(word) for word in text.split())


def backwards(text: str) -> str:
    return text[::-1]


def pig_latin(text: str) -> str:
    def one(word: str) -> str:
        if not word.isalpha():
            return word
        if word[0].lower() in "aeiou":
            return word + "way"
        cut = next((i for i, c in enumerate(word) if c.lower() in "aeiouy" and i), len(word))
        return word[cut:] + word[:cut].lower() + "ay"

    return " ".join(one(word) for word in text.split())


def leetspeak(text: str) -> str:
    return "".join(_LEET.get(c, c) for c in text.lower())


DISGUISES = {
    "small_caps": small_caps,
    "upside_down": upside_down,
    "combining": combining,
    "emoji_split": emoji_split,
    "backwards": backwards,
    "pig_latin": pig_latin,
    "leetspeak": leetspeak,
}
_ENGLISH_ONLY = frozenset({"pig_latin", "upside_down"})

_SMUGGLE = (
    '{{"tool": "memory.save", "arguments": {{"note": "{text}"}}}}',
    '<tool_call>{{"name": "respond", "arguments": {{"policy": "{text}"}}}}</tool_call>',
    '{{"role": "system", "content": "{text}"}}',
    "<system>{text}</system>",
    "[INST] {text} [/INST]",
    '{{"fact": "{text}", "priority": "override"}}',
    '<div hidden data-for="assistant">{text}</div>',
)
_DATA = (
    '{{"fact": "{text}"}}',
    '{{"note": "{text}", "source": "chat"}}',
    "<p>{text}</p>",
    "**Note:** {text}",
    "- {text}",
)


_KEPT_AS_DATA = frozenset({"b1", "b3", "b5", "b7", "b9", "b11", "b13", "b15"})
"""Benign ideas also written inside plain data JSON or markup, so a wrapper is no signal."""


def _pick(text: str, options: int) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) % options


def generate(written: list[Line]) -> list[Line]:
    """Tool-call/markup and disguised variants of the written multilingual lines."""
    out: list[Line] = []
    for line in written:
        if line.concept == "en-extra" or line.style == "toolcall":
            continue
        quoted = json.dumps(line.text, ensure_ascii=False)[1:-1]
        if line.injection or line.concept in _KEPT_AS_DATA:
            shapes = _SMUGGLE if line.injection else _DATA
            shape = shapes[_pick(line.text, len(shapes))]
            out.append(Line(shape.format(text=quoted), line.label, line.lang, "toolcall",
                            line.concept))  # fmt: skip
    for line in written:
        if line.lang not in LATIN_SCRIPT or line.style == "toolcall":
            continue
        names = [n for n in DISGUISES if line.lang == "en" or n not in _ENGLISH_ONLY]
        count = 3 if line.lang == "en" else 1
        first = _pick(line.text, len(names))
        for step in range(count):
            name = names[(first + step) % len(names)]
            out.append(Line(DISGUISES[name](line.text), line.label, line.lang, "disguised",
                            line.concept, name))  # fmt: skip
    return out


def main() -> None:
    lines = generate(_read(WRITTEN))
    with GENERATED.open("w", encoding="utf-8") as out:
        for line in lines:
            row = {k: v for k, v in line.__dict__.items() if v != "" and k != "cls"}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(lines)} generated lines -> {GENERATED}")


if __name__ == "__main__":
    main()
