"""Where credentials live: env values masked by their name or their shape, command flags masked by position, and the
same lexicon in text (an env dump logged by a container), cookies anywhere in a line; near-misses left as they are."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.redaction import DEFAULT_PATTERNS, DEFAULT_REDACTOR, PatternRedactor
from kernel.redaction.secret_lexicon import (
    LEXICON_HINTS,
    SECRET_WORDS,
    looks_like_key_material,
    masked_argv,
    masked_env_value,
    name_segments,
)
from samples.credentials import (
    BY_FLAG,
    BY_NAME,
    BY_SHAPE,
    CLEAR,
    COMMAND_NEAR_MISSES,
    COMMANDS,
    COOKIE_LINES,
    COOKIE_NEAR_MISSES,
    ENV_LITERALS,
)

redact = DEFAULT_REDACTOR.redact
MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")


@pytest.mark.parametrize(
    ("name", "value", "why"), ENV_LITERALS, ids=[f"{n}-{w or 'clear'}" for n, _, w in ENV_LITERALS]
)
def test_an_env_literal_is_masked_whole_by_its_name_or_its_shape_and_near_misses_stay(name, value, why):
    shown = masked_env_value(name, value, redact)
    if why == CLEAR:
        assert shown == value
    else:
        assert MARKER.fullmatch(shown), f"{name}: {shown!r}"


def test_the_name_is_read_in_whole_words_whatever_the_separator_or_case():
    assert name_segments("LDAP_BIND_PW") == ["LDAP", "BIND", "PW"]
    assert name_segments("hmacKey") == ["HMAC", "KEY"]
    assert name_segments("APIKey2") == ["API", "KEY", "2"]
    assert name_segments("spring.datasource.password") == ["SPRING", "DATASOURCE", "PASSWORD"]
    assert name_segments("OAuthToken") == ["OAUTH", "TOKEN"]


def test_every_lexicon_word_is_found_by_the_redactors_pre_check():
    """The text pattern skips text without a hint: every word must contain one, or a name would slip past."""
    for word in SECRET_WORDS:
        assert any(hint in word.lower() for hint in LEXICON_HINTS), word


@pytest.mark.parametrize(
    "value",
    ["hunter2", "k8sT0kenValue", "CheckoutServiceApplication", "v3.8.0-rc.1+build.5", "ABCD-EFGH-IJKL-MNOP-QRST",
     "9fceb02d0ae598e95dc970b74767f19372d61af8", "12345678901234567890123456789012", "a" * 64, "-Xmx512m",
     "/Users/Bob/Applications/MyApp2", "3f2a9c1e-8b7d-4c5e-9f1a-2b3c4d5e6f70", "checkout-7d9f8c6b5-x2x9k"],
)  # fmt: skip
def test_words_versions_commits_and_plain_numbers_are_not_key_material(value):
    assert not looks_like_key_material(value)


# --- commands: the word after a credential flag, by position ----------------------------------------------------------


@pytest.mark.parametrize(("argv", "secrets", "why"), COMMANDS, ids=[" ".join(a)[:40] for a, _, _ in COMMANDS])
def test_a_credential_in_a_command_is_masked_by_position_and_the_rest_kept(argv, secrets, why):
    shown = masked_argv(argv, redact)
    assert len(shown) == len(argv)
    for secret in secrets:
        assert not [word for word in shown if secret in word]
    kept = [word for word in argv if not any(secret in word for secret in secrets)]
    assert kept == [word for word in shown if not MARKER.search(word)]


@pytest.mark.parametrize("argv", COMMAND_NEAR_MISSES, ids=[" ".join(a)[:40] for a in COMMAND_NEAR_MISSES])
def test_a_command_without_credentials_is_kept_word_for_word(argv):
    assert masked_argv(argv, redact) == argv


def test_only_the_password_of_a_user_and_password_is_masked():
    assert masked_argv(["curl", "--user=bob:pw-1", "-u", "al:pw-2"], redact) == [
        "curl", "--user=bob:[REDACTED:basic_auth]", "-u", "al:[REDACTED:basic_auth]",
    ]  # fmt: skip


WRITTEN_COMMANDS = [(a, s) for a, s, why in COMMANDS if why == BY_FLAG and not any(" " in word for word in a)]


@pytest.mark.parametrize(("argv", "secrets"), WRITTEN_COMMANDS, ids=[" ".join(a)[:40] for a, _ in WRITTEN_COMMANDS])
def test_the_same_command_written_in_a_log_line_is_masked_too(argv, secrets):
    """Text masks by flag; a word masked for its shape alone is masked where its position is known."""
    line = f"probe failed: {' '.join(argv)} exited 1"
    out = redact(line)
    for secret in secrets:
        assert secret not in out
    assert out.startswith("probe failed: ")
    assert out.endswith(" exited 1")


@pytest.mark.parametrize("argv", COMMAND_NEAR_MISSES, ids=[" ".join(a)[:40] for a in COMMAND_NEAR_MISSES])
def test_the_same_near_miss_written_in_a_log_line_stays(argv):
    line = " ".join(argv)
    assert redact(line) == line


# --- a container's logged environment: the same lexicon in text ---------------------------------------------------------

TEXT_FORMS = {
    "assignment": "{name}={quoted}",
    "export": "+ export {name}={quoted}",
    "json": 'env: {{"{name}": {json}, "PORT": "8080"}}',
    "yaml": "{name}: {quoted}",
    "kubernetes-env": "- name: {name}\n  value: {json}",
}


def _env_style(name: str) -> bool:
    return re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*", name) is not None


def _text_cases() -> list[tuple[str, str, str, str]]:
    cases = []
    for name, value, why in ENV_LITERALS:
        if why == BY_SHAPE or "\n" in value:
            continue  # text masks by name; key material by shape is masked in known positions only
        for form, template in TEXT_FORMS.items():
            if form == "yaml" and "_" not in name:
                continue  # `AUTH: failed` at a line's start may be prose: only NAME_WITH_WORDS: v counts
            if form != "kubernetes-env" and not _env_style(name):
                continue  # lower-case keys in text are logfmt fields (cache_key=…); a Kubernetes env entry is not
            quoted = f'"{value}"' if " " in value else value
            cases.append((template.format(name=name, quoted=quoted, json=json.dumps(value)), name, value, why))
    return cases


@pytest.mark.parametrize(("text", "name", "value", "why"), _text_cases(), ids=lambda v: str(v)[:30])
def test_an_env_dump_in_a_log_line_goes_through_the_same_lexicon(text, name, value, why):
    out = redact(text)
    if why == CLEAR:
        assert out == text
    else:
        assert why == BY_NAME
        assert value not in out
        assert name in out, "the name stays, only its value is masked"
        assert redact(out) == out


def test_prose_that_names_a_variable_is_not_an_assignment():
    for text in ["AUTH: failed for user bob", "missing APP_KEY: set it in the chart", "KEY_COUNT=3 LOG_LEVEL=info"]:
        assert redact(text) == text


# --- cookies anywhere in a line ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "secrets", "kept"), COOKIE_LINES, ids=[line[:30] for line, _, _ in COOKIE_LINES])
def test_a_cookie_in_the_middle_of_a_log_line_is_masked_and_the_rest_kept(line, secrets, kept):
    out = redact(line)
    for secret in secrets:
        assert secret not in out
    for context in kept:
        assert context in out
    assert "[REDACTED:cookie]" in out
    assert redact(out) == out


@pytest.mark.parametrize("line", COOKIE_NEAR_MISSES)
def test_cookie_talk_without_a_value_stays(line):
    assert redact(line) == line


# --- linear on untrusted text: each new pattern on 10k characters made to make it work hard --------------------------

ADVERSARIAL = {
    # id: (text, what must come out)
    "env-names-without-values": ("A_B_C_KEY" * 1200,) * 2,
    "env-assignments-of-nothing": ("HMAC_KEY= " * 1000,) * 2,
    "env-assignments": ("HMAC_KEY=x " * 1000, "HMAC_KEY=[REDACTED:api_key] " * 1000),
    "long-env-name": ("KEY_" * 2500 + "=v",) * 2,
    "yaml-names-without-colon": ("\n".join(["  APP_KEY_" * 40] * 30),) * 2,
    "k8s-name-without-value": ("name: APP_KEY\n" * 700,) * 2,
    "cookie-pairs": ("x cookie=" + "a=b; " * 2000, "x cookie=" + "a=[REDACTED:cookie]; " * 2000),
    "cookie-long-pair": (
        "x cookie: " + "a" * 5000 + "=" + "b" * 5000,
        "x cookie: " + "a" * 5000 + "=[REDACTED:cookie]",
    ),
    "cookie-names-without-equals": ("x cookie: " + "ab" * 5000,) * 2,
    "set-cookie-long-pair": ("x set-cookie: " + "a" * 5000 + "=" + "b" * 5000 + "; Path=/",
                             "x set-cookie: " + "a" * 5000 + "=[REDACTED:cookie]; Path=/"),
    "json-names-without-colon": ('"APP_KEY' * 1250,) * 2,
    "json-env": ('{"APP_KEY": "v", ' * 600, '{"APP_KEY": "[REDACTED:api_key]", ' * 600),
    "program-without-flag": ("redis-cli " * 1000,) * 2,
    "flags-without-program": ("-a x -p y -w z " * 700,) * 2,
    "program-then-far-flag": ("mysql " + "x" * 10_000 + " -pS3cret", "mysql " + "x" * 10_000 + " -p[REDACTED:password]"),
    "programs-and-flags": ("redis-cli -a x " * 700, "redis-cli -a [REDACTED:password] " * 700),
    "program-then-command-end": ("mysql -h db; " * 800 + "ls -pX",) * 2,
}  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_each_new_pattern_on_adversarial_text_gives_the_expected_result(text, expected):
    assert redact(text) == expected


def test_positional_masking_on_adversarial_words_gives_the_expected_result():
    long_name = "_".join(["KEY"] * 3000)
    assert masked_env_value(long_name, "v" * 10_000, redact) == "[REDACTED:api_key]"
    assert masked_env_value("X" * 10_000, "Aa1" * 3400, redact) == "[REDACTED:key_material]"
    assert masked_env_value("aB" * 5000, "word " * 2000, redact) == "word " * 2000
    argv = ["redis-cli", *(["-a"] * 5000)]
    assert masked_argv(argv, redact) == ["redis-cli", *(["-a", "[REDACTED:password]"] * 2500)]


# --- the redactor's pre-check ------------------------------------------------------------------------------------------

UNHINTED = PatternRedactor(replace(p, hints=()) for p in DEFAULT_PATTERNS)
CORPUS_TEXTS = [
    *(" ".join(argv) for argv, _, _ in COMMANDS),
    *(" ".join(argv) for argv in COMMAND_NEAR_MISSES),
    *(line for line, _, _ in COOKIE_LINES),
    *COOKIE_NEAR_MISSES,
    *(text for text, _, _, _ in _text_cases()),
]


@pytest.mark.parametrize("text", CORPUS_TEXTS, ids=[t[:30] for t in CORPUS_TEXTS])
def test_the_pre_check_never_skips_a_pattern_that_would_mask_a_corpus_text(text):
    assert redact(text) == UNHINTED.redact(text)


FRAGMENTS = [
    "HMAC_KEY", "LDAP_BIND_PW", "APP_KEY", "NPM_AUTH", "PWD", "KEY_COUNT", "=", ": ", '"', "'", " ", "\n", ";", "/app",
    "export ", "- name: ", "value: ", "redis-cli", "keydb-cli", " -a ", " -p", "-w ", "mysql", "ldapsearch", "mongosh",
    "curl", " -u ", "bob:", "cookie", "Set-Cookie", "sid=", "a=b", "\\\"", "[", "s3cr3t", "x", "1",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=24).map("".join))
def test_new_kinds_mixed_at_random_are_masked_alike_with_or_without_the_pre_check_and_twice(text):
    once = redact(text)
    assert once == UNHINTED.redact(text)
    assert redact(once) == once
