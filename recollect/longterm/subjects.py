"""Subjects: the normalised key of what a fact is about, and how many values it holds at once.

A subject is single-valued (one home city, one manager: a new value replaces the old) or
multi-valued (allergies, languages, tools, team members: a new value joins the others and only
an explicit retraction or switch removes one). The category decides by default
(`CATEGORY_MULTI_VALUED`); a subject named in `MULTI_VALUED` or `SINGLE_VALUED` overrides it.

When a caller offers no subject, `infer_subject` reads a few common phrasings (in English,
German, French, Spanish, and for some slots Portuguese, Italian and Japanese) so the offline
path can still place "Moved to Berlin" against
"Lives in Paris". Canonical names follow the profile's fields ("location", "role"). A
model-backed extractor names subjects itself.
"""

from __future__ import annotations

import re

from recollect.longterm.records import FactCategory

MAX_SUBJECT_LENGTH = 200

CATEGORY_MULTI_VALUED: dict[FactCategory, bool] = {
    FactCategory.PREFERENCE: False,
    FactCategory.BIOGRAPHICAL: False,
    FactCategory.CONSTRAINT: True,
    FactCategory.GOAL: True,
    FactCategory.TECHNICAL_STACK: True,
    FactCategory.EVENT: True,
}
"""Whether a subject of the category holds many values unless the subject itself says."""

MULTI_VALUED = frozenset(
    {
        "allergy", "intolerance", "dietary_restriction", "diet_restriction", "medication",
        "language", "spoken_language", "programming_language", "tool", "library", "service",
        "team_member", "colleague", "report", "child", "pet", "sibling", "hobby", "interest",
        "skill", "certification", "accessibility_need",
    }
)  # fmt: skip
"""Subjects (or their last word) that hold a list whatever their category."""

SINGLE_VALUED = frozenset(
    {
        "name", "location", "home_country", "employer", "role", "manager", "timezone",
        "frontend_framework", "backend_framework", "editor", "operating_system",
        "cloud_provider", "drink", "diet", "partner", "age", "email", "phone",
        "bank", "car", "commute", "hosting", "database", "budget", "favourite_team",
    }
)  # fmt: skip
"""Subjects that hold one value whatever their category: a new value replaces the old."""

SINGLE_VALUED_LAST = frozenset(
    {"budget", "deadline", "target", "limit", "salary", "rent", "price", "weight", "goal"}
)
"""A last word that names one amount ("laptop_budget", "weight_target"): constraints and goals
default to lists, but a new amount replaces the old one."""

ALIASES: dict[str, str] = {
    "home_city": "location", "city": "location", "residence": "location",
    "home": "location", "lives_in": "location", "current_city": "location",
    "company": "employer", "workplace": "employer", "works_at": "employer", "job": "role",
    "job_title": "role", "title": "role", "position": "role", "boss": "manager",
    "line_manager": "manager", "reports_to": "manager", "beverage": "drink",
    "favorite_drink": "drink", "favourite_drink": "drink", "preferred_drink": "drink",
    "morning_drink": "drink", "food_allergy": "allergy", "allergie": "allergy",
    "languages_spoken": "language", "os": "operating_system", "ide": "editor",
    "frontend": "frontend_framework", "ui_framework": "frontend_framework",
    "team": "team_member", "teammate": "team_member", "coworker": "team_member",
}  # fmt: skip
"""Different names models give one subject; the canonical one is stored."""

_ONE_OF = frozenset({"favourite", "favorite", "preferred", "primary", "main", "current", "native"})
"""A first word that picks one value out of a list: "favourite_language" holds one."""

_NON_WORD = re.compile(r"[^\w]+")
_PREFIXES = ("user_s_", "users_", "user_", "my_", "the_", "their_")


def _singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("s"):
        return word[:-1]
    return word


def normalise_subject(raw: str | None) -> str | None:
    """snake_case, singular, without "user_"/"my_" prefixes, and aliases folded: "My
    Allergies" and "allergy" are one subject. None for nothing usable."""
    if raw is None:
        return None
    key = _NON_WORD.sub("_", raw.strip().lower()).strip("_")
    for prefix in _PREFIXES:
        if key.startswith(prefix) and len(key) > len(prefix):
            key = key[len(prefix) :]
    if not key:
        return None
    words = key.split("_")
    words[-1] = _singular(words[-1])
    key = "_".join(w for w in words if w)
    key = ALIASES.get(key, key)
    return key[:MAX_SUBJECT_LENGTH] or None


def is_multi_valued(subject: str | None, category: FactCategory) -> bool:
    """Whether a new value of `subject` joins the old ones rather than replacing them."""
    if subject:
        if subject.split("_", 1)[0] in _ONE_OF:
            return False
        last = subject.rsplit("_", 1)[-1]
        if subject in MULTI_VALUED or last in MULTI_VALUED:
            return True
        if subject in SINGLE_VALUED or last in SINGLE_VALUED_LAST:
            return False
    return CATEGORY_MULTI_VALUED.get(category, True)


_INFER: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), subject)
    for pattern, subject in (
        (r"\b(supports|roots for|fan of|favou?rite (\w+ )?team)\b|\bhincha de\b|\btifos[oa]\b"
         r"|\btorcedor\b|\bFan (von|der|des)\b|ファン", "favourite_team"),
        (r"\bdatabase\b|\bdatenbank\b|\bbase de (données|datos)\b|\bbanco de dados\b"
         r"|\bbase (di )?dati\b|データベース", "database"),
        (r"\bbudget\b|\bpresupuesto\b|\borçamento\b|予算", "budget"),
        (r"\bbanks? (with|at)\b|\bbank account\b|\bmain bank\b|\bbanque\b|\bbanco\b"
         r"|\bconto corrente\b|\bHausbank\b|銀行", "bank"),
        (r"\b(writes|writing) code\b|\bcodes (in|with)\b|\bcode editor\b|\beditor\b|\bIDE\b"
         r"|\béditeur\b|エディタ", "editor"),
        (r"\bcommut|\bto work by\b|\bpendelt\b|\bau travail en\b|\bal trabajo en\b"
         r"|\bpara o trabalho de\b|\bal lavoro in\b|通勤", "commute"),
        (r"\bhost(s|ed|ing)\b|\bhospeda|\bhébergé|\bospitat|\bgehostet\b|ホスティング",
         "hosting"),
        (r"\bdrives? an?\b|\bcar\b|\bvoiture\b|\bcoche\b|\bcarro\b|\bmacchina\b"
         r"|\bfährt (einen|ein)\b|\bAuto\b|車", "car"),
        (r"\bpartner|\bwife\b|\bhusband\b|\bgirlfriend\b|\bboyfriend\b|\bspouse\b"
         r"|\bmarried to\b|\bdating\b|\bfiancée?\b|\b(ehe)?frau\b|\behemann\b|\bépou"
         r"|\bconjoint|\bnovi[oa]\b|\besposa\b|\bmarido\b|\bnamorad[oa]\b|\bfidanzat"
         r"|\bmoglie\b|\bmarito\b|彼女|彼氏|妻", "partner"),
        (r"\bteam(mate)?s?\b.*\b(is|are|includes?|joined)\b|\bon (my|the|their) team\b",
         "team_member"),
        (r"\ballerg|\ballergi|\ballergique|\balérgic|\bintoleran", "allergy"),
        (r"\b(lives?|living|moved|relocated|based|resides?) (in|to)\b|\bwohnt\b|\bgezogen\b"
         r"|\bhabite\b|\bdéménagé\b|\bvive en\b|\bmudó\b|\bmudado\b|\bmora (em|no|na)\b"
         r"|\bmudou-se\b|\bvive a\b|\babita a\b|\btrasferit[oa] a\b|に住んで", "location"),
        (r"\b(works?|working) (at|for)\b|\bjoined\b|\bemployer\b|\barbeitet bei\b"
         r"|\btravaille (chez|pour)\b|\btrabaja (en|para)\b"
         r"|\btrabalha (na|no|em|para)\b|\blavora (per|presso|da|in)\b|で働", "employer"),
        (r"\b(job title|works as|is an? (senior |junior |staff |lead )?\w+ (engineer|developer|"
         r"designer|manager|analyst)|role)\b", "role"),
        (r"\bmanager\b|\breports to\b|\bboss\b|\bvorgesetzte|\bchef(fe)? est\b|\bjefe\b",
         "manager"),
        (r"\b(speaks?|speaking|fluent in|native language)\b|\bspricht\b|\bparle\b|\bhabla\b",
         "language"),
        (r"\b(tea|coffee|espresso|matcha|kaffee|tee|café|thé)\b", "drink"),
        (r"\b(react|vue|angular|svelte|next\.js)\b", "frontend_framework"),
        (r"\b(vegetarian|vegan|pescatarian|keto)\b", "diet"),
        (r"\btime ?zone\b|\bUTC[+-]", "timezone"),
    )
)  # fmt: skip


_RELATIVE = re.compile(
    r"^\W*(?:(?:my|the user's|his|her|their|a|die|der|das|seine?|ihre?|la|le|el|su|sa|son|mon|ma"
    r"|o|il|lo|sua|seu)\s+)?(?:sister|brother|mother|father|mom|dad|mum|son|cousin|aunt|uncle"
    r"|friend|schwester|bruder|mutter|vater|sohn|tochter|freund\w*|sœur|frère|mère|père|fils"
    r"|fille|ami\w*|hermana|hermano|madre|padre|hij[oa]|amig[oa]|irmã|irmão|mãe|pai|filh[oa]"
    r"|sorella|fratello|figli[oa]|\w+'s partner)\b|^(?:姉|兄|妹|弟|母|父|友達)(?:は|が|の)",
    re.IGNORECASE,
)
"""A statement about a relative or friend ("Brother lives in Denver", "A irmã mora em
Lisboa"): it fills none of the user's own slots."""


def infer_subject(text: str, category: FactCategory) -> str | None:
    """The subject a plain statement is about, when one of the known phrasings says so; none
    for a statement about someone else (`_RELATIVE`)."""
    if _RELATIVE.search(text):
        return None
    for pattern, subject in _INFER:
        if pattern.search(text):
            return subject
    if category is FactCategory.TECHNICAL_STACK:
        return "tool"
    return None
