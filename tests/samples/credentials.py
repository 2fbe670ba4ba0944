"""Credentials in every format the redactor knows, fake but well-formed, and near-misses that only look like one.

Shared by the redactor's own tests and the log-redaction tests, which check the same values reach no log.
"""

from __future__ import annotations

import random
import string

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"


def fake(prefix: str, n: int, alphabet: str = ALNUM) -> str:
    """A deterministic, format-valid fake credential (built at run time so scanners skip this file)."""
    rng = random.Random(f"{prefix}/{n}/{alphabet}")
    return prefix + "".join(rng.choice(alphabet) for _ in range(n))


AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_STS_ID = "ASIA" + "Y34FZKBOKMUTVV7A"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
AWS_SESSION = fake("IQoJb3JpZ2luX2VjE", 120)
GHP = fake("ghp_", 36)
GHS = fake("ghs_", 36)
GHO = fake("gho_", 36)
GHU = fake("ghu_", 36)
GHR = fake("ghr_", 36)
GH_PAT = fake("github_pat_", 82, ALNUM + "_")
GLPAT = fake("glpat-", 20, B64URL)
GLRT = fake("glrt-", 20, B64URL)
GLDT = fake("gldt-", 20, B64URL)
XOXB = "xoxb-" + fake("", 12, string.digits) + "-" + fake("", 13, string.digits) + "-" + fake("", 24)
XOXP = "xoxp-" + fake("", 12, string.digits) + "-" + fake("", 12, string.digits) + "-" + fake("", 32)
XOXE = "xoxe.xoxp-1-" + fake("", 60)
XAPP = "xapp-1-A" + fake("", 10) + "-" + fake("", 13, string.digits) + "-" + fake("", 64, "0123456789abcdef")
SLACK_HOOK_PATH = (
    "T0" + fake("", 8, string.ascii_uppercase) + "/B0" + fake("", 8, string.ascii_uppercase) + "/" + fake("", 24)
)
STRIPE_LIVE = fake("sk_live_", 99)
STRIPE_RK = fake("rk_live_", 99)
OPENAI_PROJ = fake("sk-proj-", 156, B64URL)
OPENAI_LEGACY = fake("sk-", 48)
ANTHROPIC = fake("sk-ant-api03-", 93, B64URL) + "-AAAA"
GOOGLE_KEY = fake("AIza", 35, B64URL)
NPM = fake("npm_", 36)
SENDGRID = fake("SG.", 22, B64URL) + "." + fake("", 43, B64URL)
HF = fake("hf_", 34)
JWT = (
    "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9."
    + fake("eyJzdWIiOiIxMjM0NTY3ODkwIiwi", 40, B64URL)
    + "."
    + fake("", 86, B64URL)
)
PEM_BODY = [fake("MII", 61, ALNUM + "+/"), fake("", 64, ALNUM + "+/"), fake("", 40, ALNUM + "+/") + "=="]
AZURE_KEY = fake("", 86, ALNUM + "+/") + "=="


def pem(label: str, newline: str = "\n") -> str:
    head, foot = f"-----BEGIN {label}-----", f"-----END {label}-----"
    return newline.join([head, *PEM_BODY, foot])


NEAR_MISSES = [
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Bob <bob@example.com>\nMerge: 1a2b3c4 5d6e7f8",
    "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7 request_id=3f2a9c1e-8b7d-4c5e-9f1a-2b3c4d5e6f70",
    "password_reset_count=3 password_expired=false token_count=17 max_tokens=1024 prompt_tokens: 512",
    "password= user=bob",
    "password: <redacted>\npassword: ****\n  password: ${DB_PASSWORD}\n  token: '{{ .Values.api.token }}'",
    '{"password": "", "token": null, "api_key": "********", "secret": "<hidden>"}',
    "NAME                            READY   STATUS    RESTARTS   AGE\norder-service-7d9f8b6c4-x2lkq   1/1     Running   0          5m",
    "WARN invalid password for user bob; token expired; please re-authenticate",
    "login failed: invalid token: signature mismatch",
    '{"level":"error","msg":"token: invalid signature","logger":"auth"}',
    "401 Unauthorized: the request had no Authorization header\nAuthorization: none",
    "bearer token rejected by upstream",
    "task-runner disk-usage risk-score desk-booking-service-7f9c whisk-0123456789abcdefghij",
    'sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="payments",pod=~"order-service-.*"}[5m]))',
    'histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket{job="api"}[5m])) by (le)) > 0.5',
    '{app="auth"} |= "password" != "password_reset" | json | level="error" | line_format "{{.msg}}"',
    '{app="api"} |~ "token=.*" | logfmt',
    "https://grafana.example.com/d/abc?orgId=1&var-pod=api-7f9c&from=now-1h",
    "git remote: https://bob@github.com/acme/repo.git ssh://git@github.com:22/acme/repo.git http://[::1]:8080/healthz",
    "https://api.internal:8443/v1/orders?page=2 and sentry at https://o123.ingest.sentry.io/456",
    "req=a1b2c3d4 parent=9f8e7d6c version=v1.28.3 chart=api-1.2.3-rc.1+build.5 image=acme/api:2024.05.01",
    '{"ts":"2024-05-01T12:00:00Z","level":"error","status":503,"path":"/checkout","user_id":42}',
    "Name:         db-creds\nType:  Opaque\n\nData\n====\npassword:  16 bytes\nusername:  3 bytes",
    "        env:\n        - name: DB_PASSWORD\n          valueFrom:\n            secretKeyRef:\n              name: db-creds\n              key: password",
    '  File "/app/auth/password.py", line 42, in verify_token\n    raise TokenExpired(token_id)',
    "def check_password(password: str) -> bool:\n    password: str\n    token: str | None = None",
    "at com.acme.auth.TokenValidator.validate(TokenValidator.java:42)",
    "user AIDAJQABLZS4A3QDU576Q assumed role arn:aws:iam::123456789012:role/deploy; AKIA is a prefix",
    "annotation: eyJhbGciOiJIUzI1NiJ9 (a base64 JSON header, not a token)",
    "already [REDACTED:token] and password=[REDACTED:password] and https://u:[REDACTED:url_password]@h",
]
