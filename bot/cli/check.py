"""`opsagent check`: the configuration loads, the model answers a tiny tool-call probe, each backend is reached.

One line per part (`✓`, `✗` with what to do, `·` for what is not configured, `⚠` under a part for what works but
needs a look, such as an MCP tool left out); the exit code is 1 when any part fails (not for a `⚠`), so a
deployment script can run it before `opsagent serve`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot.agent import PREVIEW_MODES, build_llm
from bot.api.check import api_check
from bot.cli.memory import memory_check
from bot.cli.report import Mark, StatusLine
from bot.cli.terminal import Terminal
from bot.settings import Settings
from kernel import (
    AnthropicLLM,
    ChatRequest,
    LLMError,
    Message,
    OpenAICompatibleLLM,
    RetryPolicy,
    ToolSpec,
)
from opsagent_tools.runbooks import RunbookLibrary
from opsagent_tools.toolset import check_backends

PROBE_TOOL = ToolSpec(
    name="report_ready",
    description="Report that you are ready to investigate.",
    parameters={"type": "object", "properties": {"ready": {"type": "boolean"}}, "required": ["ready"]},
)
PROBE = ChatRequest(
    instructions="You are a connectivity check. Answer only by calling the tool you are given.",
    tools=[PROBE_TOOL],
    messages=[Message(role="user", content="Call report_ready with ready=true.")],
)
PROBE_RETRY = RetryPolicy(max_attempts=1, timeout=30.0)
"""One attempt: `check` says at once that the endpoint is down instead of backing off for a minute."""
HOSTED = {"api.openai.com": "OPSAGENT_LLM_API_KEY or OPENAI_API_KEY", "api.anthropic.com": "ANTHROPIC_API_KEY"}
"""Hosted endpoints, which always need a key (a local server may need none)."""
NO_MODEL = StatusLine(Mark.NOTE, "model: none configured (the demo still runs offline)")
NO_BACKENDS = StatusLine(
    Mark.NOTE,
    "no backends configured: add [tools.metrics], [tools.logs], [tools.repos], [tools.kubernetes] or "
    "[knowledge] runbooks (`opsagent init`)",
)


@dataclass(frozen=True)
class ModelCheck:
    """The model's answer to the probe: whether it works, and the words that say so."""

    ok: bool
    text: str

    @property
    def line(self) -> StatusLine:
        """The model's line in `opsagent check`."""
        return StatusLine(Mark.OK if self.ok else Mark.FAILED, self.text)


async def check_model(settings: Settings, environ: Mapping[str, str] = os.environ) -> ModelCheck | None:
    """Send the probe to the configured model (None when no model is configured): its name, whether native tool
    calling works, and the latency; a missing key, an unreachable endpoint or a refused key fails."""
    try:
        llm = build_llm(settings.llm, environ, retry=PROBE_RETRY)
    except ValueError as exc:
        return ModelCheck(False, f"model: {exc}")
    if llm is None:
        return None
    assert isinstance(llm, OpenAICompatibleLLM | AnthropicLLM)  # what build_llm makes
    where = f"{llm.model} at {llm.url}"
    host = urlsplit(llm.url).hostname or ""
    if not llm.has_key and host in HOSTED:
        return ModelCheck(False, f"model: {where}: no API key is set: export {HOSTED[host]}")
    try:
        return await _probe(llm, where)
    finally:
        await llm.aclose()


async def _probe(llm: OpenAICompatibleLLM | AnthropicLLM, where: str) -> ModelCheck:
    began = time.perf_counter()
    try:
        response = await llm.complete(PROBE)
    except LLMError as exc:
        return ModelCheck(False, f"model: {where}: {exc}")
    ms = (time.perf_counter() - began) * 1000
    served = f" (served as {response.model})" if response.model and response.model != llm.model else ""
    head = f"model: {where}{served} answered in {ms:.0f} ms"
    no_key = "" if llm.has_key else "; no API key was sent (fine for a local server)"
    if any(call.name == PROBE_TOOL.name for call in response.tool_calls):
        return ModelCheck(True, f"{head}; native tool calling works{no_key}")
    if not llm.native_tools:
        return ModelCheck(True, f"{head}; tools go through the text protocol (native tool calls are off){no_key}")
    return ModelCheck(
        True,
        f"{head}, but in text, not with a native tool call: if runs fail to parse, set "
        f"[llm] native_tools = false{no_key}",
    )


async def run_check(settings: Settings, terminal: Terminal) -> int:
    """Check the model, the policy and every backend, one line each (a spinner while they answer); 0 when nothing
    failed."""
    with terminal.working("asking the model…"):
        model = await check_model(settings)
    terminal.report(
        [model.line if model else NO_MODEL, StatusLine(Mark.OK, f"policy: side effects {settings.policy.mode}")]
    )
    runbooks = RunbookLibrary.from_settings(settings.knowledge)
    previews_only = settings.policy.mode in PREVIEW_MODES
    with terminal.working("reaching the backends…"):
        results = await check_backends(settings.tools, runbooks=runbooks, previews_only=previews_only)
        if not results:
            terminal.report([NO_BACKENDS])
        if (memory := await memory_check(settings)) is not None:
            results.append(memory)
        if (api := api_check(settings.api)) is not None:
            results.append(api)
    for result in results:
        terminal.report(
            [
                StatusLine(Mark.OK if result.ok else Mark.FAILED, f"{result.name}: {result.message}"),
                *(StatusLine(Mark.WARNING, f"{result.name}: {warning}") for warning in result.warnings),
            ]
        )
    failed = (model is not None and not model.ok) or not all(result.ok for result in results)
    return 1 if failed else 0
