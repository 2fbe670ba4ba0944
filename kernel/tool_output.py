"""What a tool may return besides plain text: a one-line outcome for people and links to see it at the source.

The model reads `text` only; Slack, the terminal and the viewer show `headline` and `links` on the step, so a
person sees "5xx 0.2% → 31% at t-11m ▁▁▇██" and can open the same query in Prometheus or Grafana.
"""

from __future__ import annotations

from pydantic.dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceLink:
    """A page where a person sees an observation for themselves: the backend's own view of the same query.

    Built from configured public base URLs, never from the API URLs the bot uses, so it carries no credentials.
    """

    label: str
    """What the page is, in a word or two: "graph", "logs", "diff", "file"."""
    url: str


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's result with what people are shown of it; a tool that returns a plain string has neither."""

    text: str
    """What the model reads (redacted, truncated and fenced by dispatch and the loop like any output)."""
    headline: str = ""
    """The outcome in one line for people (redacted like the text), e.g. a metric's change with a sparkline."""
    links: tuple[SourceLink, ...] = ()
    more: str = ""
    """What `text` leaves out when it is a digest (a log search's other lines behind its exemplars): kept after
    `text` behind the step's handle, redacted alike, so `read_output` pages it; the model is told how."""
