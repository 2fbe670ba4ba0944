"""The OpsAgent kernel: a ReAct loop that never crashes on model output and never hides a failure.

It knows nothing of Slack or of any backend; everything public is re-exported here.
"""

from kernel.adapters import (
    AnthropicLLM,
    OpenAICompatibleLLM,
    RetryPolicy,
    ScriptedModel,
    ScriptError,
    native_turn,
    text_turn,
)
from kernel.answer import (
    ActionTaken,
    CitationIssue,
    CitationProblem,
    ClaimCheck,
    ClaimRole,
    ClaimStatus,
    Confidence,
    Evidence,
    EvidenceCheck,
    Findings,
    FinishedBy,
    Hypothesis,
    RuledOut,
    StepCitations,
    UnbackedAction,
    answer_rest,
    check_evidence,
    cited_steps,
    findings_from_prose,
    hypothesis_in,
    step_references,
)
from kernel.budget import Budget, PriceTable, Pricing, Usage
from kernel.call_context import CallContext
from kernel.calls import FINISH_TOOL, ToolCall, canonical_args, visible_text
from kernel.clock import RunControl
from kernel.context import ContextPolicy
from kernel.deferral import LOAD_TOOLS_TOOL
from kernel.dispatch import DRY_RUN_PREFIX, Dispatcher, DispatchResult
from kernel.events import Event, GuidanceTaken, RunFinished, RunStarted, RunStream, StepCompleted, StepStarted
from kernel.guidance import GUIDANCE_TEMPLATE, Guidance, TakenGuidance
from kernel.llm import (
    LLM,
    ChatRequest,
    LLMError,
    LLMErrorKind,
    LLMResponse,
    Message,
    NativeToolCall,
    TokenUsage,
    ToolSpec,
)
from kernel.loop import Agent, new_run_id, react
from kernel.observations import READ_OUTPUT_TOOL, truncate_observation
from kernel.parsing import ParsedOutput, ReplyKind, classify_reply, parse_output
from kernel.policy import (
    ApprovalRequest,
    Approved,
    ConfirmHook,
    Decision,
    Deferred,
    Denied,
    SideEffectMode,
    SideEffectPolicy,
)
from kernel.prompt import fence, follow_up_data
from kernel.redaction import (
    DEFAULT_REDACTOR,
    PatternRedactor,
    Redactor,
    SecretPattern,
    StreamRedactor,
    masked_argv,
    masked_env_value,
)
from kernel.stop import StopReason
from kernel.text_protocol import prepare_conversation
from kernel.tokens import estimate_tokens
from kernel.tool_errors import ErrorKind, StepError, ToolFailure, denial_reason
from kernel.tool_output import SourceLink, ToolOutput
from kernel.tools import Tool, ToolRegistry, tool_from_function
from kernel.trace import (
    SCHEMA_VERSION,
    ApprovalRecord,
    RunResult,
    Step,
    load_trace,
)
from kernel.verification import Verification, VerificationOutcome

__all__ = [
    "DEFAULT_REDACTOR",
    "DRY_RUN_PREFIX",
    "FINISH_TOOL",
    "GUIDANCE_TEMPLATE",
    "LLM",
    "LOAD_TOOLS_TOOL",
    "READ_OUTPUT_TOOL",
    "SCHEMA_VERSION",
    "ActionTaken",
    "Agent",
    "AnthropicLLM",
    "ApprovalRecord",
    "ApprovalRequest",
    "Approved",
    "Budget",
    "CallContext",
    "ChatRequest",
    "CitationIssue",
    "CitationProblem",
    "ClaimCheck",
    "ClaimRole",
    "ClaimStatus",
    "Confidence",
    "ConfirmHook",
    "ContextPolicy",
    "Decision",
    "Deferred",
    "Denied",
    "DispatchResult",
    "Dispatcher",
    "ErrorKind",
    "Event",
    "Evidence",
    "EvidenceCheck",
    "Findings",
    "FinishedBy",
    "Guidance",
    "GuidanceTaken",
    "Hypothesis",
    "LLMError",
    "LLMErrorKind",
    "LLMResponse",
    "Message",
    "NativeToolCall",
    "OpenAICompatibleLLM",
    "ParsedOutput",
    "PatternRedactor",
    "PriceTable",
    "Pricing",
    "Redactor",
    "ReplyKind",
    "RetryPolicy",
    "RuledOut",
    "RunControl",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "RunStream",
    "ScriptError",
    "ScriptedModel",
    "SecretPattern",
    "SideEffectMode",
    "SideEffectPolicy",
    "SourceLink",
    "Step",
    "StepCitations",
    "StepCompleted",
    "StepError",
    "StepStarted",
    "StopReason",
    "StreamRedactor",
    "TakenGuidance",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolFailure",
    "ToolOutput",
    "ToolRegistry",
    "ToolSpec",
    "UnbackedAction",
    "Usage",
    "Verification",
    "VerificationOutcome",
    "answer_rest",
    "canonical_args",
    "check_evidence",
    "cited_steps",
    "classify_reply",
    "denial_reason",
    "estimate_tokens",
    "fence",
    "findings_from_prose",
    "follow_up_data",
    "hypothesis_in",
    "load_trace",
    "masked_argv",
    "masked_env_value",
    "native_turn",
    "new_run_id",
    "parse_output",
    "prepare_conversation",
    "react",
    "step_references",
    "text_turn",
    "tool_from_function",
    "truncate_observation",
    "visible_text",
]
