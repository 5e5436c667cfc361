"""The offline update rule: cues in several languages, the rule judge, and which neighbours
are put before a judge."""

from __future__ import annotations

import pytest

from recollect.longterm.cues import only_retracts, says_addition, says_change, says_plan
from recollect.longterm.records import FactCategory
from recollect.longterm.rule_judge import RuleJudge, numeric_update
from recollect.longterm.subjects import infer_subject, is_multi_valued
from recollect.longterm.supersession import Neighbour, candidates, decide

JUDGE = RuleJudge()


@pytest.mark.parametrize(
    "text",
    [
        "Prefers espresso these days",
        "Wohnt jetzt in Leipzig",
        "Boit du café le matin maintenant",
        "Ahora trabaja en Santander",
        "Agora mora em Recife",
        "Adesso vive a Bologna",
        "今は大阪に住んでいる",
    ],
)
def test_a_change_is_heard_in_every_language(text: str) -> None:
    assert says_change(text)


def test_plans_additions_and_bare_retractions_are_told_apart() -> None:
    assert says_plan("Will start at a new firm in September")
    assert says_plan("Zieht nächsten Monat nach Wien")
    assert says_plan("来月から楽天で働く予定")
    assert not says_plan("Lives in Oslo")
    assert says_addition("Spricht auch Niederländisch")
    assert only_retracts("Forget that I have a cat")
    assert only_retracts("Turns out not allergic to penicillin after all")
    assert not only_retracts("Stopped using Jenkins and now uses GitLab CI")


def test_the_rule_judge_says_yes_only_where_the_words_do() -> None:
    assert JUDGE.contradicts("Writes code in Sublime Text", "These days codes in Zed")
    assert JUDGE.contradicts("Banks with Northwind", "Main bank account is now with Southbank")
    assert JUDGE.contradicts("Has a cat named Miso", "Forget that I have a cat")
    assert not JUDGE.contradicts("Allergic to peanuts", "No longer allergic to shellfish")
    assert not JUDGE.contradicts("Speaks Spanish", "Now speaks Italian too")
    assert not JUDGE.contradicts("Lives in Stockholm", "Next month moving to Oslo")
    assert not JUDGE.contradicts("Plays the cello", "Prefers morning meetings")
    assert not JUDGE.contradicts("Caroline adopted a dog", "Caroline has a new job")
    assert not JUDGE.contradicts(
        "Frontend moved to React 19", "Team moved to React 19 last week, by the way"
    ), "a restatement of the same value"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Hat am 3. Mai Geburtstag", "Hat am 4. Mai Geburtstag, nicht am 3."),
        ("Son bureau porte le numéro 214", "Son bureau porte le numéro 241, pas 214"),
    ],
)
def test_a_correction_replaces_what_it_corrects(old: str, new: str) -> None:
    assert JUDGE.contradicts(old, new)


def test_a_new_amount_replaces_the_old_one() -> None:
    assert numeric_update("Laptop budget is 1500 euros", "Laptop budget is now 900 euros")
    assert JUDGE.contradicts("Laptop budget is 1500 euros", "Laptop budget is now 900 euros")
    assert not numeric_update("Has 2 kids", "Runs 5 km a day")
    assert not is_multi_valued("laptop_budget", FactCategory.CONSTRAINT)
    assert infer_subject("Presupuesto para el coche de 15000 euros", FactCategory.CONSTRAINT) == (
        "budget"
    )


def test_candidates_put_the_same_category_and_the_closest_first() -> None:
    far = Neighbour("1", "Plays the cello", None, 0.86, "preference")
    near = Neighbour("2", "Writes code in Sublime Text", None, 0.88, "technical_stack")
    other = Neighbour("3", "Grew up near the sea", None, 0.90, "biographical")
    ranked = candidates(None, "technical_stack", [far, other, near])
    assert [n.id for n in ranked] == ["2", "3", "1"]


def test_a_change_on_a_list_subject_reaches_the_judge_and_a_plan_ends_nothing() -> None:
    tool = Neighbour("1", "Writes code in Sublime Text", "tool", 0.88, "technical_stack")
    asked = decide("These days codes in Zed", "tool", [tool], multi_valued=True)
    assert asked.ask == (tool,)
    assert decide("Also uses Zed", "tool", [tool], multi_valued=True).ask == ()
    home = Neighbour("2", "Lives in Stockholm", "location", 0.9, "biographical")
    plan = decide("Next month moving to Oslo", "location", [home])
    assert plan.supersede == ()
    assert plan.ask == ()
    budget = Neighbour("3", "Laptop budget is 1500 euros", "budget", 0.95, "constraint")
    numeric = decide("Laptop budget is now 900 euros", "budget", [budget], multi_valued=False)
    assert numeric.supersede == ("3",)


def test_a_retraction_in_any_language_ends_only_the_value_it_names() -> None:
    drums = Neighbour("1", "Toca bateria", None, 0.9, "preference")
    guitar = Neighbour("2", "Toca violão", None, 0.9, "preference")
    assert decide("Já não toca bateria", None, [drums, guitar]).supersede == ("1",)
    spotify = Neighbour("3", "Hat ein Abo bei Spotify", None, 0.9, "preference")
    netflix = Neighbour("4", "Hat ein Abo bei Netflix", None, 0.9, "preference")
    assert decide("Hat das Spotify-Abo gekündigt", None, [spotify, netflix]).supersede == ("3",)


def test_a_relatives_fact_fills_none_of_the_users_slots() -> None:
    assert infer_subject("A irmã mora em Lisboa", FactCategory.BIOGRAPHICAL) is None
    assert infer_subject("Brother lives in Denver", FactCategory.BIOGRAPHICAL) is None
    assert infer_subject("Mora no Porto", FactCategory.BIOGRAPHICAL) == "location"
    assert infer_subject("Partner is called Sam", FactCategory.BIOGRAPHICAL) == "partner"


@pytest.mark.parametrize(
    ("ended", "kept", "new"),
    [
        ("Es alérgico al polen", "Es alérgico a los gatos", "Resulta que no es alérgico al polen"),
        ("È intollerante alle uova", "È intollerante al lattosio",
         "In realtà non è intollerante alle uova"),
        ("Verträgt keine Nüsse", "Verträgt keinen Sellerie",
         "Hat sich herausgestellt, dass sie Nüsse doch verträgt"),
        ("Spotifyに加入している", "Huluに加入している", "Spotifyを解約した"),
    ],
)  # fmt: skip
def test_it_turns_out_not_ends_only_the_value_it_names(ended: str, kept: str, new: str) -> None:
    assert JUDGE.contradicts(ended, new)
    assert not JUDGE.contradicts(kept, new)
    first, second = (
        Neighbour("1", ended, None, 0.9, "constraint"),
        Neighbour("2", kept, None, 0.9, "constraint"),
    )
    assert decide(new, None, [first, second]).supersede == ("1",)


def test_only_is_no_addition_and_a_japanese_correction_is_heard() -> None:
    assert not says_addition("Schläft nur noch 6 Stunden")
    assert says_addition("Hat noch einen Bruder")
    assert JUDGE.contradicts(
        "Schläft 8 Stunden pro Nacht", "Schläft jetzt nur noch 6 Stunden pro Nacht"
    )
    assert JUDGE.contradicts("会議は3時から", "会議は4時から、3時ではない")
