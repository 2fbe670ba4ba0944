"""The scored mini-corpus (`parsing_corpus`): core families all read, stretch families at the target, no false call."""

from __future__ import annotations

from samples.parsing_corpus import CORPUS, Tier, failures, false_calls, score

STRETCH_TARGET = 95.0


def test_every_core_reply_is_read() -> None:
    assert failures(Tier.CORE) == []


def test_stretch_families_meet_the_target() -> None:
    result = score(Tier.STRETCH)
    assert result.percent >= STRETCH_TARGET, [case.reply[:80] for case in failures(Tier.STRETCH)]


def test_no_reply_yields_a_call_it_did_not_make() -> None:
    assert {case.reply[:80]: false_calls(case) for case in CORPUS if false_calls(case)} == {}


def test_call_like_prose_stays_prose() -> None:
    assert failures(Tier.PROSE) == []
