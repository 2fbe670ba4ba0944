"""Side-effect actions (rollback, restart) executed through the operator's action webhook.

OpsAgent never talks to Argo CD or Jenkins itself: it POSTs a signed JSON request, with an
idempotency key, to one URL the operator controls. Dry runs return exactly what would be sent.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from kernel import CallContext, ToolFailure
from opsagent_tools.actions.journal import ActionJournal, InMemoryActionJournal, SideEffectState
from opsagent_tools.actions.settings import ActionWebhookSettings

SIGNATURE_HEADER = "X-OpsAgent-Signature"
TIMESTAMP_HEADER = "X-OpsAgent-Timestamp"
IDEMPOTENCY_HEADER = "Idempotency-Key"
SIGNATURE_SHOWN_IN_DRY_RUN = "<sha256 HMAC, computed when sent>"
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)
"""Failures before the request left: the action surely did not run."""
NO_BLIND_RETRY = "Do not retry blindly: ask the user to check the receiver."
"""The model's hint when the webhook may or may not have acted: a person must look before anyone retries."""


@dataclass(frozen=True)
class ActionRequest:
    """One action exactly as it is (or would be) sent."""

    url: str
    headers: dict[str, str]
    body: bytes

    def describe(self) -> dict[str, Any]:
        """A JSON-able view for dry runs and logs (the body decoded)."""
        return {"method": "POST", "url": self.url, "headers": self.headers, "body": json.loads(self.body)}


@dataclass(frozen=True)
class SentAction:
    """What became of an action: the receiver's answer as the model reads it, and its HTTP status for people."""

    outcome: str
    status: int | None
    """None when it was not sent again: the journal knows it is done."""
    resent: bool = False

    def summary(self) -> str:
        """ "webhook 200", "webhook 202 (re-sent)", or "already done (not sent again)"."""
        if self.status is None:
            return "already done (not sent again)"
        return f"webhook {self.status}" + (" (re-sent)" if self.resent else "")


class ActionWebhook:
    """Signs and sends action requests: HMAC-SHA256 over `timestamp.body`, plus an idempotency key."""

    def __init__(
        self,
        settings: ActionWebhookSettings,
        *,
        secret: bytes,
        client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
        journal: ActionJournal | None = None,
        previews_only: bool = False,
    ) -> None:
        if not secret and not previews_only:
            raise ValueError(f"the action webhook needs an HMAC secret: set {settings.secret_env}")
        self._settings = settings
        self._secret = secret
        self._client = client
        self._clock = clock
        self._journal: ActionJournal = journal if journal is not None else InMemoryActionJournal()

    @classmethod
    def from_env(
        cls,
        settings: ActionWebhookSettings,
        environ: Mapping[str, str] = os.environ,
        *,
        journal: ActionJournal | None = None,
        previews_only: bool = False,
    ) -> ActionWebhook:
        """The webhook with its secret read from the variable the settings name. `previews_only`: the policy never
        sends an action (read_only, dry_run), so a missing secret is no error; sending without one fails."""
        secret = environ.get(settings.secret_env, "").encode()
        return cls(settings, secret=secret, journal=journal, previews_only=previews_only)

    def prepare(self, action: str, params: dict[str, Any], ctx: CallContext) -> ActionRequest:
        """The request for `action`: the body, its idempotency key, and (unsigned) headers."""
        key = idempotency_key(ctx)
        body = json.dumps(
            {"action": action, "params": params, "run_id": ctx.run_id, "step": ctx.step, "idempotency_key": key},
            sort_keys=True,
            separators=(",", ":"),
        ).encode()
        headers = {
            **self._settings.headers,
            "Content-Type": "application/json",
            IDEMPOTENCY_HEADER: key,
            SIGNATURE_HEADER: SIGNATURE_SHOWN_IN_DRY_RUN,
        }
        return ActionRequest(url=self._settings.url, headers=headers, body=body)

    def sign(self, request: ActionRequest) -> ActionRequest:
        """The request with a fresh timestamp and its HMAC signature."""
        if not self._secret:
            raise ToolFailure(
                f"{self._settings.secret_env} is not set, so the action cannot be signed: it was not sent"
            )
        timestamp = str(int(self._clock()))
        mac = hmac.new(self._secret, timestamp.encode() + b"." + request.body, hashlib.sha256).hexdigest()
        headers = {**request.headers, TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: f"sha256={mac}"}
        return ActionRequest(url=request.url, headers=headers, body=request.body)

    async def send(self, request: ActionRequest, ctx: CallContext) -> SentAction:
        """Send the action once: journalled as executing first, done or failed after.

        An action the journal knows is done is not sent again; one whose outcome was lost is re-sent with
        the same idempotency key, and the answer says so.
        """
        key = request.headers[IDEMPOTENCY_HEADER]
        earlier = await self._journal.begin(
            key, run_id=ctx.run_id, step=ctx.step, tool=ctx.call.name, args_hash=ctx.args_hash
        )
        if earlier is not None and earlier.state is SideEffectState.DONE:
            done = f"already done earlier in this run (Idempotency-Key {key}); not sent again. {earlier.outcome}"
            return SentAction(done, None)
        resent = earlier is not None and earlier.state is SideEffectState.EXECUTING
        try:
            status, answer = await self._post(request)
        except ToolFailure as failure:
            cause = failure.__cause__
            in_doubt = isinstance(cause, httpx.HTTPError) and not isinstance(cause, NOT_SENT)
            if not in_doubt:  # an answer lost in transit stays `executing`: the next attempt re-sends the same key
                await self._journal.finish(key, SideEffectState.FAILED, str(failure))
            raise
        again = "re-sent after an interruption with the same Idempotency-Key (the receiver de-duplicates it): "
        outcome = (again if resent else "") + answer
        await self._journal.finish(key, SideEffectState.DONE, outcome)
        return SentAction(outcome, status, resent)

    async def _post(self, request: ActionRequest) -> tuple[int, str]:
        """POST the signed request; the receiver's status and answer, or a ToolFailure that says what is known."""
        signed = self.sign(request)
        key = signed.headers[IDEMPOTENCY_HEADER]
        client = self._client or httpx.AsyncClient()
        try:
            response = await client.post(
                signed.url, content=signed.body, headers=signed.headers, timeout=self._settings.timeout_s
            )
        except NOT_SENT as exc:
            raise ToolFailure(
                f"cannot reach the action webhook at {signed.url} ({type(exc).__name__}): the action did not run. "
                "Check tools.actions.webhook.url and that the receiver is up.",
                hint="Tell the user.",
            ) from exc
        except httpx.TimeoutException as exc:
            raise ToolFailure(
                f"the action webhook did not answer within {self._settings.timeout_s:g} s, so the action may or may "
                f"not have run: check the receiver (a retry reuses Idempotency-Key {key}, so it can de-duplicate it).",
                hint=NO_BLIND_RETRY,
            ) from exc
        except httpx.HTTPError as exc:  # the request may have reached the receiver before the connection broke
            raise ToolFailure(
                f"the connection to the action webhook broke ({type(exc).__name__}), so the action may or may not "
                f"have run: check the receiver (a retry reuses Idempotency-Key {key}, so it can de-duplicate it).",
                hint=NO_BLIND_RETRY,
            ) from exc
        finally:
            if self._client is None:
                await client.aclose()
        text = response.text.strip()[:500]
        if response.is_success:
            return response.status_code, (
                f"accepted by the action webhook (HTTP {response.status_code}, Idempotency-Key {key}): {text}"
            )
        raise ToolFailure(
            f"the action webhook refused the action (HTTP {response.status_code}): {text or '(empty body)'}. "
            "It did not run.",
            hint="Tell the user what the receiver said.",
        )


def idempotency_key(ctx: CallContext) -> str:
    """The same key for the same action (tool and arguments) within a run, however often it is sent or
    retried in later steps, so the receiver can de-duplicate it."""
    return hashlib.sha256(f"{ctx.run_id}:{ctx.args_hash}".encode()).hexdigest()[:32]
