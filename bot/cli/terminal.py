"""The terminal: one `Terminal` object through which every command writes, and the rendering of a run's events.

A run is the same typed event stream Slack consumes, rendered with `rich`. Rendering is a pure function of one
event (and whether a price is known), so it is easy to test and to reuse; `Terminal` prints what it returns and
keeps a spinner going while the agent works (on a terminal). Reports (`bot.cli.report`), data, errors and
warnings go through the same object, so colour, NO_COLOR, pipes and the width behave alike for every command.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import IO, assert_never

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.padding import Padding
from rich.spinner import Spinner
from rich.table import Table as RichTable
from rich.text import Text

from bot.cli.report import Heading, Mark, Report, StatusLine, Table
from bot.verdict import PROSE_SAID, Claim, Verdict, refusal_of, usage_facts, verdict_of
from bot.words import parallel_group
from kernel import (
    FINISH_TOOL,
    Event,
    GuidanceTaken,
    RunFinished,
    RunResult,
    RunStarted,
    Step,
    StepCompleted,
    StepStarted,
)

EXCERPT_CHARS = 1500
"""How much of an observation the terminal shows; the trace keeps all of it."""
_UNPRINTABLE = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c not in (0x09, 0x0A)}
"""Control characters in model or tool text, shown escaped so they cannot drive the terminal."""
MARK_STYLES = {Mark.OK: "bold green", Mark.FAILED: "bold red", Mark.WARNING: "bold yellow", Mark.NOTE: "dim"}


def render_event(event: Event, *, priced: bool = False, live: bool = False) -> RenderableType | None:
    """One event for the terminal; None when there is nothing to print (the finish step, whose answer the end of
    the run shows, and a step starting while a live spinner already says so). A turn's reads that run at once are
    announced as one group before their steps. `priced`: show the cost."""
    match event:
        case StepStarted(call=call) | StepCompleted(step=Step(call=call, error=None)) if (
            call and call.name == FINISH_TOOL
        ):
            return None
        case RunStarted(run_id=run_id, task=task, resumed=resumed):
            verb = "resumed" if resumed else "started"
            return Text.assemble(("▶ ", "bold cyan"), (f"run {run_id} {verb}: ", "bold"), printable(task))
        case StepStarted(index=index, call=call, together=together):
            line = Text(f"{'  ' if together else ''}… step {index}: {printable(call.render())}", style="dim")
            if together[:1] != (index,):  # alone, or not the first of its group
                return None if live else line
            head = Text(f"⇉ {parallel_group(together)}", style="bold cyan")
            return head if live else Group(head, line)
        case GuidanceTaken(taken=taken):
            return Text.assemble(
                ("✍ ", "bold magenta"),
                (f"guidance from {printable(taken.guidance.by)}, taken before step {taken.step}: ", "bold"),
                printable(taken.guidance.text),
            )
        case StepCompleted(step=step):
            return render_step(step)
        case RunFinished(result=result):
            return render_result(result, priced=priced)
        case _:
            assert_never(event)


def activity(event: Event) -> str:
    """What the spinner says after `event`: the call running, or that the model is thinking."""
    match event:
        case StepStarted(together=together) if together:
            return parallel_group(together)
        case StepStarted(index=index, call=call) if call.name != FINISH_TOOL:
            return f"step {index}: {printable(call.render())[:100]}"
        case StepStarted() | RunStarted() | StepCompleted() | GuidanceTaken():
            return "the model is thinking…"
        case RunFinished():
            return ""
        case _:
            assert_never(event)


def render_step(step: Step) -> RenderableType:
    """A completed step: status, call and time, then the thought, the approval, the outcome in one line and its
    source links, and an excerpt of the observation (or of a failure, its words for people)."""
    mark = Text("✗ ", style="bold red") if step.error else Text("✓ ", style="bold green")
    call = printable(step.call.render()) if step.call else "(no usable action)"
    head = Text.assemble(mark, (f"step {step.index} ", "bold"), call, (f" · {step.ms:.0f} ms", "dim"))
    if step.error:
        head.append(f" · {step.error}", style="red")
    lines: list[RenderableType] = [head]
    if step.thought:
        lines.append(labelled("thought", step.thought, "italic dim"))
    if step.approval:
        refusal = refusal_of(step.approval)
        said = refusal.said() if refusal else f"{step.approval.decision} by {step.approval.by or '-'}"
        lines.append(labelled("approval", said, "yellow"))
    if step.headline:
        lines.append(labelled("outcome", step.headline, "bold"))
    if step.links:
        lines.append(labelled("see", "  ".join(f"{link.label}: {link.url}" for link in step.links), "cyan"))
    if step.error is not None:  # the person's words; the model's hint stays in the observation
        lines.append(labelled("error", step.said_for_people, "red"))
        return Group(*lines)
    if step.prose:  # its observation is the kernel's reminder to the model
        lines.append(labelled("observation", PROSE_SAID, "dim"))
        return Group(*lines)
    observation = step.observation
    if len(observation) > EXCERPT_CHARS:
        observation = (
            observation[:EXCERPT_CHARS] + f"… [{len(observation) - EXCERPT_CHARS} more characters in the trace]"
        )
    lines.append(labelled("observation", observation, ""))
    return Group(*lines)


def render_result(result: RunResult, *, priced: bool = False) -> RenderableType:
    """The end of a run: the verdict (`bot.verdict`, as Slack and the viewer show it), or an explicit failure with
    its reason and best answer so far; then what the run took."""
    verdict = verdict_of(result)
    footer = Text(" · ".join([*usage_facts(verdict, priced=priced), f"stop: {result.stop_reason}"]), style="dim")
    if not verdict.ok:
        detail = f" ({printable(result.detail)})" if result.detail else ""
        lines: list[RenderableType] = [Text(f"■ {verdict.stop.said()}{detail}", style="bold red")]
        if verdict.partial_answer:
            lines.append(Text("  Not a final answer. What the agent knew when it stopped:", style="yellow"))
            lines.append(Padding(markdown(verdict.partial_answer), (0, 0, 0, 4)))
        return Group(*lines, *_actions(verdict), *_by_hand(verdict), footer)
    level = f" · confidence {verdict.confidence_words}" if verdict.confidence_words else ""
    lines = [Text(f"■ finished · {verdict.title}{level}", style="bold green")]
    lines.append(Text.assemble("  ", (printable(verdict.summary).strip(), "bold")))
    if verdict.root_cause:
        lines.append(labelled("root cause", verdict.root_cause, ""))
    lines += [
        labelled("evidence", _claim_words(claim), "" if claim.supported else "yellow") for claim in verdict.evidence
    ]
    if verdict.rest:  # what a prose answer says besides: a paragraph after its evidence
        lines.append(Padding(markdown(verdict.rest), (0, 0, 0, 2)))
    lines += [labelled("ruled out", _claim_words(c), "" if c.supported else "yellow") for c in verdict.ruled_out]
    lines += [labelled("next", step, "") for step in verdict.next_steps]
    lines += _by_hand(verdict)
    lines += _actions(verdict)
    lines += [labelled("claimed, not done", claim, "yellow") for claim in verdict.claimed_not_taken]
    return Group(*lines, footer)


def _claim_words(claim: Claim) -> str:
    """A claim with the steps that back it: "… (steps 1, 2)", "… (found in step 2)", "UNSUPPORTED (why): …"."""
    numbers = f"step{'s' if len(claim.steps) > 1 else ''} {', '.join(map(str, claim.steps))}" if claim.steps else ""
    cited = f" ({'found in ' if claim.matched else ''}{numbers})" if numbers else ""
    return claim.text + cited if claim.supported else f"UNSUPPORTED ({claim.problem}): {claim.text}{cited}"


def _actions(verdict: Verdict) -> list[RenderableType]:
    """Every side effect the run proposed, with what came of it (from the trace): "step 5 rollback_deployment
    order-service v2.13.2 · denied by U0BOB at 19:16 UTC: not now"."""
    return [
        labelled("action", f"step {a.step} {a.call} · {a.said()}", "" if a.ok else "yellow") for a in verdict.actions
    ]


def _by_hand(verdict: Verdict) -> list[RenderableType]:
    """The side effects that did not happen, as next steps by hand."""
    return [labelled("next", action.by_hand(), "") for action in verdict.by_hand]


def markdown(text: str) -> Markdown:
    """A model's Markdown for the terminal: its line breaks kept (models break lines as Slack does, where a single
    newline is a new line), code blocks left as they are."""
    lines, fenced = [], False
    for line in printable(text).strip().splitlines():
        fenced ^= line.lstrip().startswith("```")
        lines.append(line if fenced or line.lstrip().startswith("```") or not line.strip() else line + "  ")
    return Markdown("\n".join(lines))


def printable(text: str) -> str:
    """Model or tool text with control characters escaped (an ESC in a log line must not reach the terminal)."""
    return text.translate(_UNPRINTABLE)


def labelled(label: str, text: str, style: str) -> Text:
    """`label: text`, later lines indented under it."""
    body = "\n    ".join(printable(text).strip().splitlines())
    return Text.assemble(f"  {label}: ", (body, style))


class Terminal:
    """Everything the command line shows a person, for every command: a run's events, reports, data, errors,
    warnings, prompts and a spinner. Stdout carries what the command produces; stderr its errors, warnings and
    progress. On a terminal: colour (never with NO_COLOR), lines wrapped to the width, a table's cells wrapped in
    their columns, a spinner while waiting. In a pipe or a file: plain text, each line whole, no escape codes."""

    def __init__(self, console: Console | None = None, *, errors: Console | None = None) -> None:
        self.console = console or _Console(highlight=False)
        self.errors = errors or _Console(stderr=True, highlight=False)
        self._status: Live | None = None

    @property
    def live(self) -> bool:
        """Whether the view animates (a terminal): then starting steps show in the spinner, not as lines."""
        return _animates(self.console)

    def show(self, event: Event, *, priced: bool = False) -> None:
        """Print what `event` renders to (`priced`: with the cost), and set the spinner to what comes next."""
        renderable = render_event(event, priced=priced, live=self.live)
        if renderable is not None:
            self.print(renderable)
        self._spin(activity(event))

    def say(self, text: str, *, style: str = "") -> None:
        """A line of our own words (a banner, where the trace went)."""
        self.print(Text(printable(text), style=style))

    def success(self, text: str) -> None:
        """What a command did, said when it is done (a file written, incidents forgotten)."""
        self.say(text, style="bold green")

    def prompt(self, text: str) -> None:
        """A question, the answer typed on the same line."""
        self.print(Text(printable(text), style="bold cyan"), end="")

    def report(self, parts: Report) -> None:
        """A report's parts in order: words, status lines, headings and tables."""
        for part in parts:
            match part:
                case str():
                    self.say(part)
                case StatusLine():
                    self.print(_status_text(part))
                case Heading(text=text, note=note):
                    note_text = Text(f" [{printable(note)}]", style="yellow") if note else Text()
                    self.print(Text.assemble((printable(text), "bold cyan"), note_text))
                case Table():
                    self._table(part)
                case _:
                    assert_never(part)

    def data(self, text: str, *, end: str = "\n") -> None:
        """Output for programs (JSON, a Markdown draft, an observation): exactly these characters, never styled or
        wrapped, so a pipe gets them byte for byte; on a terminal control characters are shown escaped."""
        self.console.file.write((printable(text) if self.console.is_terminal else text) + end)

    def error(self, message: str) -> None:
        """Why the command failed, in words for a person: each line as `opsagent: …` on stderr."""
        for line in message.splitlines() or [message]:
            self._to_stderr(Text(f"opsagent: {printable(line)}", style="red"))

    def warn(self, line: str) -> None:
        """A warning on stderr, worded by the caller; the command goes on."""
        self._to_stderr(Text(printable(line), style="yellow"))

    def progress(self, line: str) -> None:
        """A line on stderr saying how far a long command is (a scenario done)."""
        self._to_stderr(Text(printable(line), style="dim"))

    @contextlib.contextmanager
    def working(self, text: str) -> Iterator[None]:
        """A spinner saying `text` while the block runs, on a terminal; nothing in a pipe."""
        self._spin(text)
        try:
            yield
        finally:
            self._spin("")

    def print(self, renderable: RenderableType, *, end: str = "\n") -> None:
        """Print on the console. Off a terminal, lines are not wrapped (a log reader or grep sees each whole),
        except Markdown (an answer's prose), which is laid out to the width."""
        _emit(self.console, renderable, end=end)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No spinner, and log lines held back until the block ends: for a question the person must answer."""
        spinning = self._status
        if spinning is not None:
            spinning.stop()
        held = io.StringIO()
        try:
            with contextlib.redirect_stderr(held):
                yield
        finally:
            sys.stderr.write(held.getvalue())
            if spinning is not None:
                spinning.start()

    def close(self) -> None:
        """Stop the spinner."""
        self._spin("")

    def flush(self) -> None:
        """Push out what was written: a reader that went away fails here, with a BrokenPipeError."""
        self.console.file.flush()

    def drop_output(self) -> None:
        """The reader went away: whatever is still to be written (at exit) goes nowhere, quietly."""
        os.dup2(os.open(os.devnull, os.O_WRONLY), self.console.file.fileno())

    def _table(self, table: Table) -> None:
        cells = Table(
            [printable(cell) for cell in table.header],
            [[printable(cell) for cell in row] for row in table.rows],
            right=table.right,
        )
        if not self.live:
            for line in cells.lines():
                self.print(Text(line))
            return
        # Too wide for the terminal, the widest column wraps first (folding a long word): nothing is cut off.
        grid = RichTable(box=None, pad_edge=False, padding=(0, 1), header_style="bold cyan", show_edge=False)
        for i, title in enumerate(cells.header):
            grid.add_column(title, justify="right" if i in cells.right else "left", overflow="fold")
        for row in cells.rows:
            grid.add_row(*row)
        self.console.print(grid)

    def _to_stderr(self, text: Text) -> None:
        # While a spinner runs on this very terminal, stderr lines go through its console, above the spinner.
        spinning = self._status is not None and _same_terminal(self.console.file, self.errors.file)
        _emit(self.console if spinning else self.errors, text)

    def _spin(self, text: str) -> None:
        if not self.live:
            return
        if not text:
            if self._status is not None:
                self._status.stop()
                self._status = None
        elif self._status is None:
            # Log lines go to stderr; only when stderr is this very terminal are they printed above the spinner
            # (through the console) rather than across it.
            self._status = Live(
                Spinner("dots", text, style="green"),
                console=self.console,
                transient=True,
                redirect_stderr=_same_terminal(self.console.file, sys.stderr),
            )
            self._status.start()
        else:
            self._status.update(Spinner("dots", text, style="green"))


class _Console(Console):
    """rich's console, except that a reader that went away (`| head`) is left to `main`, which exits quietly with
    141 as a process killed by SIGPIPE does; rich would exit 1."""

    def on_broken_pipe(self) -> None:
        """Raise it on, for `main`."""
        raise BrokenPipeError


def _animates(console: Console) -> bool:
    return console.is_terminal and not console.is_dumb_terminal


def _emit(console: Console, renderable: RenderableType, *, end: str = "\n") -> None:
    if isinstance(renderable, Group):
        for part in renderable.renderables:
            _emit(console, part)
        return
    laid_out = isinstance(renderable, Markdown | Padding)  # Markdown, or Markdown indented
    console.print(renderable, soft_wrap=not (_animates(console) or laid_out), end=end)


def _status_text(line: StatusLine) -> Text:
    return Text.assemble(" " * line.indent, (str(line.mark), MARK_STYLES[line.mark]), f" {printable(line.text)}")


def _same_terminal(first: IO[str], second: IO[str]) -> bool:
    try:
        return os.path.samestat(os.fstat(first.fileno()), os.fstat(second.fileno()))
    except (OSError, ValueError, AttributeError):
        return False
