"""Links in the model's Markdown cannot show one place and lead to another: a label that reads as an address (a URL,
a host, an IP, an e-mail; with lookalike dots or invisible characters) is replaced by the real target. Property tests
plant such labels on random targets; plain-word labels keep their text."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from bot.slack.mrkdwn import markdown_to_mrkdwn

SLACK_LINK = re.compile(r"<([^<>|]+)(?:\|([^<>]*))?>")
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10)
DOT = st.sampled_from([".", "\u3002", "\uff0e", "\uff61", "\u2024", "\u00b7"])
INVISIBLE = st.sampled_from(["", "", "\u200b", "\u200e", "\u2066", "\u00ad"])


@st.composite
def hosts(draw: st.DrawFn) -> str:
    """A host as a person would read it, written with any dot a browser (or an eye) takes for one."""
    labels = draw(st.lists(WORD, min_size=2, max_size=4))
    dots = [draw(DOT) + draw(INVISIBLE) for _ in labels[1:]]
    return labels[0] + "".join(dot + label for dot, label in zip(dots, labels[1:], strict=True))


@st.composite
def address_labels(draw: st.DrawFn) -> str:
    """A link label that names a place: a URL, a host with a path or a port, an IPv4 or IPv6 address, an e-mail,
    alone or among words."""
    kind = draw(st.sampled_from(["url", "host", "path", "port", "ipv4", "ipv6", "email"]))
    host = draw(hosts())
    match kind:
        case "url":
            address = draw(st.sampled_from(["https://", "http://", "HTTPS://", "https:\uff0f\uff0f"])) + host
        case "host":
            address = host
        case "path":
            address = f"{host}/{draw(WORD)}/{draw(WORD)}"
        case "port":
            address = f"{host}:{draw(st.integers(1, 65535))}"
        case "ipv4":
            address = ".".join(str(draw(st.integers(0, 255))) for _ in range(4))
        case "ipv6":
            address = f"2001:db8::{draw(st.integers(1, 0xFFFF)):x}"
        case _:
            address = f"{draw(WORD)}@{host}"
    before, after = draw(st.sampled_from([("", ""), ("see ", ""), ("", " dashboard"), ("open ", " now")]))
    return f"{before}{address}{after}"


targets = st.builds(lambda host, path: f"https://{host}.example/{path}", WORD, WORD)


@given(label=address_labels(), target=targets)
def test_a_label_that_reads_as_an_address_shows_the_real_target(label: str, target: str) -> None:
    rendered = markdown_to_mrkdwn(f"Root cause: see [{label}]({target}) for the graph.")
    links = SLACK_LINK.findall(rendered)
    assert links == [(target, "")], rendered  # the link shows where it goes, and nothing else


@given(words=st.lists(WORD.filter(lambda w: w not in ("www", "localhost")), min_size=1, max_size=4), target=targets)
def test_a_label_of_plain_words_is_kept(words: list[str], target: str) -> None:
    label = " ".join(words)
    assert SLACK_LINK.findall(markdown_to_mrkdwn(f"[{label}]({target})")) == [(target, label)]


def test_the_reported_spoof_links_to_its_real_target_only() -> None:
    rendered = markdown_to_mrkdwn("[https://grafana.example/d/x](https://evil.example/y)")
    assert rendered == "<https://evil.example/y>"
