"""The trace viewer's HTML: one run's header, its timeline of steps, approvals and usage, as one page.

Pure functions over a `RunResult`. Every piece of trace text is redacted again and HTML-escaped (the
trace is model and tool output: untrusted), and the page needs no font or image to load. People are shown by the
names they had when they acted (from the audit log), and times in UTC, which one small script of ours (the only
one the page's CSP lets run, by its hash) rewrites in the reader's own time zone, keeping UTC on hover.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from bot.verdict import PROSE_SAID, Claim, Verdict, refusal_of, tool_steps, verdict_of
from bot.words import duration
from kernel import DEFAULT_REDACTOR, FINISH_TOOL, Redactor, RunResult, SourceLink, Step

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:28px 0 10px}
.meta{color:#5a6272;margin:0}.meta code{color:#1d2330}
.box{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:14px 16px;margin:12px 0}
.ok{border-left:5px solid #2e9e5b}.failed{border-left:5px solid #d64545}.partial{border-left:5px solid #e0a100}
.label{font-weight:600;margin:10px 0 6px}.box>.label:first-child{margin-top:0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:6px 0 0;font:13px/1.4 ui-monospace,Menlo,Consolas,monospace;
background:#f7f8fa;border:1px solid #e6e9ee;border-radius:6px;padding:8px 10px;max-height:480px;overflow:auto}
ol.steps{list-style:none;padding:0;margin:0}
.step{background:#fff;border:1px solid #dde1e8;border-left:5px solid #2e9e5b;border-radius:8px;padding:12px 16px;margin:10px 0}
.step.error{border-left-color:#d64545}
.step header{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:baseline}
.index{font-weight:700}.tool{font:600 14px ui-monospace,Menlo,Consolas,monospace}
.badge{font-size:12px;padding:1px 8px;border-radius:10px;background:#e3f4ea;color:#1f6e40}
.error .badge{background:#fbe3e3;color:#9c2525}
.numbers{color:#5a6272;font-size:13px;margin-left:auto}
.thought{margin:8px 0 0;color:#3a4150;font-style:italic;white-space:pre-wrap}
.note{color:#8a5a00;font-size:13px;margin:6px 0 0}.unsupported{color:#8a5a00;font-weight:600}
.headline{margin:8px 0 0;font-weight:600}.links{margin:4px 0 0;font-size:13px}
table{border-collapse:collapse;background:#fff;width:100%}
td,th{border:1px solid #dde1e8;padding:6px 10px;text-align:left;vertical-align:top}th{background:#eef0f4}
"""


LOCAL_TIMES = (
    'for(const t of document.querySelectorAll("time[datetime]")){const d=new Date(t.dateTime);'
    'if(!isNaN(d))t.textContent=d.toLocaleString(undefined,{year:"numeric",month:"short",day:"numeric",'
    'hour:"2-digit",minute:"2-digit",second:"2-digit",timeZoneName:"short"})}'
)
"""Each time, written in UTC, rewritten in the reader's time zone (its `title` keeps UTC, shown on hover)."""
LOCAL_TIMES_HASH = "'sha256-" + base64.b64encode(hashlib.sha256(LOCAL_TIMES.encode()).digest()).decode() + "'"
"""The CSP source that lets `LOCAL_TIMES` run, and nothing else."""


def run_page(
    result: RunResult,
    *,
    names: Mapping[str, str] | None = None,
    stopped_by: str = "",
    priced: bool = False,
    redactor: Redactor = DEFAULT_REDACTOR,
) -> str:
    """The whole page of one run: header and outcome, steps, approvals, usage and cost. `names`: people's names by
    user id (who approved, denied, stopped); `stopped_by`: who stopped the run; `priced`: whether its model has a
    price (else the cost reads "no price", not $0)."""
    text = _Text(redactor, names)
    body = [
        f"<h1>{text(result.task)}</h1>",
        f'<p class="meta">Run <code>{text(result.run_id)}</code> · model <code>{text(result.model or "?")}</code>'
        f" · started {_time(result.started_at)}</p>",
        _task_data(result, text),
        _outcome(result, text, stopped_by),
        _guidance(result, text),
        f'<h2>Steps <span class="meta">({_step_count(result)})</span></h2>',
        '<ol class="steps">' + "".join(_step(result, step, text) for step in result.steps) + "</ol>"
        if result.steps
        else '<p class="meta">The run took no steps.</p>',
        _approvals(result, text),
        _usage(result, priced=priced),
    ]
    return _document(f"Trace {result.run_id}", "".join(body), text, script=LOCAL_TIMES)


def notice_page(title: str, message: str) -> str:
    """A small page that says why a trace cannot be shown (expired, refused, unknown) and what to do."""
    text = _Text(DEFAULT_REDACTOR)
    return _document(title, f'<h1>{text(title)}</h1><div class="box">{_paragraphs(message, text)}</div>', text)


_CODE_SPAN = re.compile(r"`([^`\n]+)`")
"""An inline code span of Markdown and mrkdwn; matched after escaping, so its text is already safe."""


class _Text:
    """Trace text made safe for the page: redacted again (defence in depth), then HTML-escaped; people by name."""

    def __init__(self, redactor: Redactor, names: Mapping[str, str] | None = None) -> None:
        self._redactor = redactor
        self._names = names or {}

    def __call__(self, value: str) -> str:
        return html.escape(self._redactor.redact(value))

    def person(self, who: str) -> str:
        """Who acted, by the name they had then; their id (or `opsagent`, `alertmanager`) when none is known."""
        return self(self._names.get(who) or who)

    def inline(self, value: str) -> str:
        """The same, with the model's `code` spans shown as code (as Slack and the terminal show them)."""
        return _CODE_SPAN.sub(r"<code>\1</code>", self(value))


def _document(title: str, body: str, text: _Text, *, script: str = "") -> str:
    tail = f"<script>{script}</script>" if script else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="referrer" content="no-referrer"><title>{text(title)} · OpsAgent</title>'
        f"<style>{STYLE}</style></head><body><main>{body}</main>{tail}</body></html>"
    )


def _task_data(result: RunResult, text: _Text) -> str:
    """What the task came with (an alert's details, an earlier answer), as the model saw it: data, not the task."""
    if not result.task_data.strip():
        return ""
    label = "What the task came with (shown to the model as data, not instructions)"
    return (
        f'<section class="box" id="task-data"><p class="label">{label}</p><pre>{text(result.task_data)}</pre></section>'
    )


def _outcome(result: RunResult, text: _Text, stopped_by: str) -> str:
    """The verdict (`bot.verdict`, as Slack and the terminal show it): the answer with its gated confidence,
    evidence linked to its steps and sources, what was ruled out, next steps (a side effect that did not happen among
    them, by hand) and every side effect with what came of it; or the stop, with the same side effects."""
    verdict = verdict_of(result, stopped_by=stopped_by)
    detail = f'<p class="meta">{text(verdict.detail)}</p>' if verdict.detail and not verdict.stop.by else ""
    if not verdict.ok:
        head = f'<p class="label">{verdict.stop.said(person=text.person, text=text)} <code>({text(result.stop_reason.value)})</code></p>'
        partial = ""
        if verdict.partial_answer:
            partial = (
                '<div class="box partial" id="partial-answer"><p class="label">NOT an answer: what the agent knew'
                f" when it stopped, unchecked</p><pre>{text(verdict.partial_answer)}</pre></div>"
            )
        shown = f"{head}{detail}{partial}{_actions(verdict, text)}{_next_steps(verdict, text)}"
        return f'<section class="box failed" id="outcome">{shown}</section>'
    level = f" · confidence <b>{text(verdict.confidence_words)}</b>" if verdict.confidence_words else ""
    if verdict.derived and verdict.derived_because:  # the level in bold, how the gate derived it beside it
        level = f" · confidence <b>{text(verdict.level)}</b> · <i>{text(verdict.derived_because)}</i>"
    parts = [f'<p class="label">{text(verdict.stop.said())}: {text(verdict.title)}{level}</p>', detail]
    parts.append(f'<p class="summary"><b>{text.inline(verdict.summary)}</b></p>')
    if verdict.root_cause:
        parts.append(f"<p><b>Root cause:</b> {text.inline(verdict.root_cause)}</p>")
    for title, claims in (("Evidence", verdict.evidence), ("Ruled out", verdict.ruled_out)):
        if claims:
            items = "".join(f"<li>{_claim(claim, text)}</li>" for claim in claims)
            parts.append(f'<p class="label">{title}</p><ul class="{title.lower().replace(" ", "-")}">{items}</ul>')
        if title == "Evidence" and verdict.rest:  # what a prose answer says besides, after its evidence
            parts.append(f'<div class="rest">{_markdown_blocks(verdict.rest, text)}</div>')
    parts.append(_next_steps(verdict, text))
    parts.append(_actions(verdict, text))
    for claim in verdict.claimed_not_taken:
        parts.append(f'<p class="note">Claimed, not done: {text(claim)} No approved step took this action.</p>')
    return f'<section class="box ok" id="outcome">{"".join(parts)}</section>'


def _markdown_blocks(markdown: str, text: _Text) -> str:
    """The model's Markdown as paragraphs (a line break kept within one) and its code blocks as `<pre>`."""
    blocks: list[str] = []
    lines: list[str] = []
    code: list[str] | None = None
    for line in [*markdown.splitlines(), ""]:
        if code is not None:
            if line.lstrip().startswith("```"):
                blocks.append(f"<pre>{text(chr(10).join(code))}</pre>")
                code = None
            else:
                code.append(line)
        elif line.lstrip().startswith("```") or not line.strip():
            if lines:
                blocks.append(f"<p>{'<br>'.join(text.inline(part) for part in lines)}</p>")
            lines, code = [], [] if line.strip() else None
        else:
            lines.append(line.strip())
    if code:
        blocks.append(f"<pre>{text(chr(10).join(code))}</pre>")
    return "".join(blocks)


def _claim(claim: Claim, text: _Text) -> str:
    found = "found in " if claim.matched and claim.steps else ""
    steps = found + ", ".join(f'<a href="#step-{index}">step {index}</a>' for index in claim.steps)
    sources = " · ".join(_source(link, text) for link in claim.links)
    refs = " · ".join(part for part in (steps, sources) if part)
    if not claim.supported:
        return f'<span class="unsupported">unsupported ({text(claim.problem)}):</span> {text.inline(claim.text)} {refs}'
    return f"{text.inline(claim.text)} {refs}"


def _actions(verdict: Verdict, text: _Text) -> str:
    """Every side effect the run proposed, with what came of it (who approved or denied it, when, the outcome)."""
    if not verdict.actions:
        return ""
    items = "".join(
        f'<li class="action {a.state}"><a href="#step-{a.step}">step {a.step}</a> <code>{text(a.call)}</code> · '
        f"{a.said(person=text.person, moment=_time, text=text)}</li>"
        for a in verdict.actions
    )
    return f'<p class="label">Actions</p><ul class="actions">{items}</ul>'


def _next_steps(verdict: Verdict, text: _Text) -> str:
    """The answer's next steps, then each side effect that did not happen, by hand."""
    items = [f"<li>{text.inline(step)}</li>" for step in verdict.next_steps]
    items += [
        f"<li>{action.by_hand(code=lambda call: f'<code>{text(call)}</code>')}</li>" for action in verdict.by_hand
    ]
    return f'<p class="label">Next steps</p><ul class="next-steps">{"".join(items)}</ul>' if items else ""


def _source(link: SourceLink, text: _Text) -> str:
    """A source link, only for http(s) URLs: anything else is shown as text, never as a link."""
    if not link.url.lower().startswith(("https://", "http://")):
        return text(f"{link.label}: {link.url}")
    return f'<a href="{text(link.url)}" rel="noopener noreferrer">{text(link.label)}</a>'


def _step(result: RunResult, step: Step, text: _Text) -> str:
    status = "ok" if step.ok else f"error: {step.error}"
    tool = step.call.name if step.call is not None else "(prose answer)" if step.prose else "(no usable action)"
    numbers = f"{duration(step.ms)} · {step.prompt_tokens:,} prompt + {step.completion_tokens:,} completion tokens"
    parts = [
        f'<li class="step{"" if step.ok else " error"}" id="step-{step.index}" data-index="{step.index}"><header>'
        f'<span class="index">Step {step.index}</span><span class="tool">{text(tool)}</span>'
        f'<span class="badge">{text(status)}</span><span class="numbers">{text(numbers)}</span></header>'
    ]
    if step.headline:
        parts.append(f'<p class="headline">{text(step.headline)}</p>')
    if step.links:
        parts.append(f'<p class="links">{" · ".join(_source(link, text) for link in step.links)}</p>')
    if step.thought.strip():
        parts.append(f'<p class="thought">{text(step.thought.strip())}</p>')
    if step.call is not None and step.call.args:
        answer = step.call.args.get("answer") if step.call.name == FINISH_TOOL else None
        label, shown = ("Answer", answer) if isinstance(answer, str) else ("Arguments", _json(step.call.args))
        parts.append(f'<p class="label">{label}</p><pre class="arguments">{text(shown)}</pre>')
    if step.approval is not None:
        parts.append(f'<p class="note approval">{_approval_line(step, text)}</p>')
    if step.error is not None or step.prose:  # the person's words: the model's hint stays in the trace
        said = step.said_for_people if step.error is not None else PROSE_SAID
        return "".join(parts) + f'<p class="label">What happened</p><pre class="observation">{text(said)}</pre></li>'
    full = result.full_output(step)
    if full != step.observation:
        parts.append(
            f'<p class="note">Full output, {len(full):,} characters: the model was shown a truncated'
            f" version of {len(step.observation):,} characters.</p>"
        )
    if full:
        parts.append(f'<p class="label">Observation</p><pre class="observation">{text(full)}</pre>')
    return "".join(parts) + "</li>"


def _approval_line(step: Step, text: _Text) -> str:
    approval = step.approval
    assert approval is not None
    if (refusal := refusal_of(approval)) is not None:
        return "Approval " + refusal.said(person=text.person, moment=_time, text=text)
    by = f" by {text.person(approval.by)}" if approval.by else ""
    at = f" at {_time(approval.at)}" if approval.at else ""
    reason = f": {text(approval.reason)}" if approval.reason else ""
    return f"Approval {text(approval.decision)}{by}{at}{reason}"


def _guidance(result: RunResult, text: _Text) -> str:
    """What people told the run while it ran (their words, not the model's), and the step each came before."""
    if not result.guidance:
        return ""
    items = [
        f"<li><b>{text(taken.guidance.by)}</b> at {_time(taken.guidance.at)}, taken before "
        f'<a href="#step-{taken.step}">step {taken.step}</a>: {text(taken.guidance.text)}</li>'
        for taken in result.guidance
    ]
    return f'<h2>Guidance</h2><ul id="guidance">{"".join(items)}</ul>'


def _approvals(result: RunResult, text: _Text) -> str:
    decided = [s for s in result.steps if s.approval is not None]
    if not decided:
        return '<h2>Approvals</h2><p class="meta">No step needed an approval.</p>'
    rows = []
    for step in decided:
        approval = step.approval
        assert approval is not None
        call = step.call.render() if step.call is not None else ""
        at = _time(approval.at) if approval.at else ""
        by = text.person(approval.by) if approval.by else ""
        cells = [text(str(step.index)), text(call), text(approval.decision), by, at, text(approval.reason)]
        cells.append(text(approval.approval_id))
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("Step", "Call", "Decision", "By", "When", "Reason", "Approval id"))
    return f'<h2>Approvals</h2><table id="approvals"><tr>{head}</tr>{"".join(rows)}</table>'


def _step_count(result: RunResult) -> str:
    """The run's step count (`bot.verdict.tool_steps`, as Slack and the terminal say it), and how many entries of the
    timeline it leaves out (the `finish`, replies without a tool call, calls not run)."""
    count = tool_steps(result.steps)
    others = len(result.steps) - count
    return f"{count}" + (f" · {others} more not counted" if others else "")


def _usage(result: RunResult, *, priced: bool) -> str:
    usage = result.usage
    cost = f"${usage.cost_usd:.4f}" if priced or usage.cost_usd else "no price (add the model to [llm.prices])"
    estimated = f" (≈, {usage.estimated_turns} turns estimated)" if usage.estimated_turns else ""
    rows = [
        ("Steps", f"{tool_steps(result.steps)}"),
        ("Model turns", f"{usage.turns}"),
        ("Prompt tokens", f"{usage.prompt_tokens:,}{estimated}"),
        ("Completion tokens", f"{usage.completion_tokens:,}"),
        ("Cost", cost),
        ("Duration", duration(usage.elapsed_s * 1000) + " (not counting waits for approval)"),
    ]
    body = "".join(f"<tr><th>{name}</th><td>{html.escape(value)}</td></tr>" for name, value in rows)
    return f'<h2>Usage and cost</h2><table id="usage">{body}</table>'


def _paragraphs(message: str, text: _Text) -> str:
    return "".join(f"<p>{text(part)}</p>" for part in message.split("\n\n") if part.strip())


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _time(at: datetime) -> str:
    """A moment as the page shows it: UTC, readable, and marked up for `LOCAL_TIMES` (UTC stays on hover)."""
    utc = at.astimezone(UTC)
    said = f"{utc:%Y-%m-%d %H:%M:%S} UTC"
    stamp = utc.isoformat(timespec="seconds").replace("+00:00", "Z")
    return f'<time datetime="{stamp}" title="{said}">{said}</time>'
