"""The model adapters: the `LLM` interface (`kernel.llm`) spoken over each provider's wire, and a scripted model.

Each raises `LLMError` only after its own retries, so the loop has one failure to handle. The rest of the kernel
enters by the names re-exported here.

- `openai_compat.py` OpenAI chat completions and the servers that copy it (Azure, vLLM, Ollama, LiteLLM).
- `anthropic.py`     Anthropic's Messages API.
- `http_retry.py`    one JSON POST with retries and error mapping, shared by both.
- `http_adapter.py`  what else they share: an HTTP client they may own, URLs, settings from the environment.
- `scripted.py`      a strict scripted model for tests and demos.
"""

from kernel.adapters.anthropic import AnthropicLLM
from kernel.adapters.http_retry import RetryPolicy
from kernel.adapters.openai_compat import OpenAICompatibleLLM
from kernel.adapters.scripted import ScriptedModel, ScriptError, native_turn, text_turn

__all__ = [
    "AnthropicLLM",
    "OpenAICompatibleLLM",
    "RetryPolicy",
    "ScriptError",
    "ScriptedModel",
    "native_turn",
    "text_turn",
]
