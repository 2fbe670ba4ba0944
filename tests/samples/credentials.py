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


# --- Where credentials live (issue 19, findings 2 and 8) -------------------------------------------------------------
# Kubernetes env literals, probe commands and container logs: the names the redactor missed, and what must stay.

HEX = "0123456789abcdef"
BY_NAME, BY_FLAG, BY_SHAPE, CLEAR = "name", "flag", "shape", ""
"""Why a value is masked: its name holds a credential, a credential flag comes before it, or it looks like key
material; or it is not masked."""

ENV_LITERALS: list[tuple[str, str, str]] = [
    # (name, literal value, why it is masked or CLEAR)
    # the finding's names
    ("HMAC_KEY", fake("", 64, HEX), BY_NAME),
    ("ADMIN_PW", "Adm1n-pw!", BY_NAME),
    ("CREDENTIALS", "svc-deploy:Cr3ds!", BY_NAME),
    ("LDAP_BIND_PW", "ld4p-B1nd", BY_NAME),
    ("APP_KEY", "base64:" + fake("", 43, ALNUM + "+/") + "=", BY_NAME),
    ("LICENSE_KEY", "ACME-7F3K-99QX-P2LM", BY_NAME),
    ("NPM_AUTH", "Ym90Om5wbS1wYXNz", BY_NAME),
    ("TWILIO_AUTH", fake("", 32, HEX), BY_NAME),
    ("DB_CONN", "postgresql://app:Db-C0nn@db:5432/orders", BY_NAME),
    ("SENTRY_DSN", "https://" + fake("", 32, HEX) + "@o42.ingest.sentry.io/7", BY_NAME),
    # the rest of the lexicon, matched on whole words of the name
    ("DB_PWD", "pwd-Value1", BY_NAME),
    ("PWD", "hunter2", BY_NAME),  # the issue: *PWD* is a password; only a path under bare PWD is the working directory
    ("MYSQL_PASS", "my-Pass1", BY_NAME),
    ("SMTP_PASSWORD", "smtp pass word", BY_NAME),
    ("GPG_PASSPHRASE", "correct horse", BY_NAME),
    ("SESSION_SECRET", "s3ss-secret", BY_NAME),
    ("GITHUB_TOKEN_2", "t0ken-two", BY_NAME),
    ("GCP_CREDS", "svc@acme-prod:gcp-Cr3ds", BY_NAME),
    ("TLS_CERT", "/etc/tls/ledger.crt", BY_NAME),  # a certificate's own variable: masked even when it holds a path
    ("PASSWORD_SALT", "pepper-and-salt", BY_NAME),
    ("RAILS_MASTER_KEY", "rails-master", BY_NAME),
    ("SSO_PRIVATE", "pr1vate", BY_NAME),
    ("SESSION", "sess-42", BY_NAME),
    ("COOKIE_SIGNATURE", "sig-abc", BY_NAME),
    ("REDISCLI_AUTH", "r3dis", BY_NAME),
    ("DB_CONNSTR", "Server=db;Database=app", BY_NAME),
    ("hmacKey", "camel-hmac", BY_NAME),
    ("dbPassword", "camel-pw", BY_NAME),
    ("APIKey", "acronym-key", BY_NAME),
    ("OAuthToken", "oauth-t0k", BY_NAME),
    ("CLIENTSECRET", "one-word-secret", BY_NAME),
    ("spring.datasource.password", "dotted-pw", BY_NAME),
    ("x-api-key", "dashed-key", BY_NAME),
    # key material, whatever the name
    ("SIGNER_MATERIAL", fake("", 43, ALNUM + "+/") + "=", BY_SHAPE),
    ("UPSTREAM", fake("", 48, HEX), BY_SHAPE),
    ("BUILD_ARG", GHP, BY_SHAPE),
    ("FORWARDED_ID", JWT, BY_SHAPE),
    ("BOOTSTRAP", fake("", 32, string.ascii_lowercase + string.digits), BY_SHAPE),
    ("TLS_BUNDLE", pem("RSA PRIVATE KEY"), BY_SHAPE),
    # near-misses: whole words only, qualifiers, lookup keys, public material, ids, paths
    ("KEYBOARD_LAYOUT", "de-nodeadkeys", CLEAR),
    ("MONKEY_MODE", "chaos", CLEAR),
    ("AUTHOR", "ops team", CLEAR),
    ("PASSIVE_MODE", "on", CLEAR),
    ("CERTIFICATE_PATH", "/etc/tls/tls.crt", CLEAR),
    ("LOG_LEVEL", "info", CLEAR),
    ("KEY_COUNT", "3", CLEAR),
    ("PWD", "/app", CLEAR),
    ("OLDPWD", "/", CLEAR),
    ("DB_PASSWORD_FILE", "/run/secrets/db-password", CLEAR),
    ("TOKEN_TTL", "3600", CLEAR),
    ("MAX_TOKENS", "1024", CLEAR),
    ("SESSION_TIMEOUT", "30m", CLEAR),
    ("AUTH_URL", "https://auth.example.com/oauth2/token", CLEAR),
    ("COOKIE_DOMAIN", ".example.com", CLEAR),
    ("ROUTING_KEY", "orders.created", CLEAR),
    ("PUBLIC_KEY_PATH", "/etc/jwt/public.pem", CLEAR),
    ("CA_CERT", "/etc/ssl/certs/ca.pem", CLEAR),
    ("OAuthClientId", "checkout-web", CLEAR),
    ("GIT_COMMIT", "9fceb02d0ae598e95dc970b74767f19372d61af8", CLEAR),
    ("REQUEST_ID", "3f2a9c1e-8b7d-4c5e-9f1a-2b3c4d5e6f70", CLEAR),
    ("HOSTNAME", "checkout-7d9f8c6b5-x2x9k", CLEAR),
    ("IMAGE", "registry.example.com/checkout:v3.8.0", CLEAR),
    ("JAVA_OPTS", "-Xmx512m -XX:+UseG1GC", CLEAR),
    ("OTEL_SERVICE_NAME", "CheckoutServiceApplication", CLEAR),
    ("DATABASE_URL", "postgres://db:5432/orders", CLEAR),
    ("FEATURE_FLAGS", "new-cart,fast-checkout", CLEAR),
]
"""Env literals and how they must come out: masked whole (by name or by shape) or exactly as they are."""

COMMANDS: list[tuple[list[str], list[str], str]] = [
    # (argv, the secrets in it, why they are masked); probes and container commands as Kubernetes holds them
    (["redis-cli", "-a", "r3d1s-Pw", "ping"], ["r3d1s-Pw"], BY_FLAG),
    (["timeout", "5", "redis-cli", "-h", "redis", "-p", "6379", "-a", "r3d1s-Pw", "ping"], ["r3d1s-Pw"], BY_FLAG),
    (["mysqladmin", "-uroot", "-pMy-R00t", "ping"], ["My-R00t"], BY_FLAG),
    (["sshpass", "-p", "ssh-Pass1", "ssh", "deploy@web-1"], ["ssh-Pass1"], BY_FLAG),
    (["ldapwhoami", "-x", "-D", "cn=admin,dc=acme", "-w", "ld4p-Pw"], ["ld4p-Pw"], BY_FLAG),
    (["mongosh", "--quiet", "-u", "admin", "-p", "m0ngo-Pw", "--eval", "db.ping()"], ["m0ngo-Pw"], BY_FLAG),
    (["curl", "-fsS", "-u", "bob:curl-Pw1", "http://127.0.0.1:8080/healthz"], ["curl-Pw1"], BY_FLAG),
    (
        ["app", "--password", "flag-Pw1", "--token=flag-T0k", "--api-key", "k3y-flag"],
        ["flag-Pw1", "flag-T0k", "k3y-flag"],
        BY_FLAG,
    ),
    (["app", "--db-password", "pass with spaces"], ["pass with spaces"], BY_FLAG),
    (["curl", "-H", "Authorization: Bearer b3arer-T0ken", "http://api/v1"], ["b3arer-T0ken"], BY_FLAG),
    (["curl", "-H", "Authorization: Basic YWRtaW46czNjcjN0", "http://api/v1"], ["YWRtaW46czNjcjN0"], BY_FLAG),
    (["sh", "-c", "redis-cli -a r3d1s-Pw ping | grep PONG"], ["r3d1s-Pw"], BY_FLAG),
    (["sh", "-c", "mysql -uroot -pMy-R00t -e 'select 1'"], ["My-R00t"], BY_FLAG),
    (["worker", "--signing", fake("", 64, HEX)], [fake("", 64, HEX)], BY_SHAPE),
]
"""Commands (exec probes, a container's command and args) with credentials in them, by position or by flag."""

COMMAND_NEAR_MISSES: list[list[str]] = [
    ["ssh", "-p", "2222", "deploy@web-1"],  # -p is a port after ssh, docker and redis-cli
    ["docker", "run", "-p", "8080:80", "nginx"],
    ["redis-cli", "-p", "6379", "ping"],
    ["mysql", "-h", "db", "-P", "3306", "-u", "app", "-p", "orders"],  # bare -p prompts; orders is the database
    ["mkdir", "-p", "/var/lib/app"],
    ["ls", "-a", "/tmp"],
    ["curl", "-u", "bob", "http://127.0.0.1/"],  # a user alone: curl asks for the password
    ["app", "--password-file", "/run/secrets/db", "--token-ttl", "3600", "--no-password"],
    ["docker", "login", "--password-stdin", "registry.example.com"],
    ["java", "-jar", "/app/app.jar", "--server.port=8080"],
    ["sh", "-c", "wget -qO- http://127.0.0.1:8080/healthz || exit 1"],
    ["cat", "/tmp/healthy"],
]
"""Commands with nothing to mask: they must come out exactly as they went in."""

COOKIE_LINES: list[tuple[str, list[str], list[str]]] = [
    # (line, secrets, what must stay)
    (
        "GET /cart 200 12ms cookie: sid=s1d-Value; theme=dark ua=curl/8.5",
        ["s1d-Value", "dark"],
        ["ua=curl/8.5", "sid="],
    ),
    ("upstream said Set-Cookie: session=sEss-42; Path=/; HttpOnly", ["sEss-42"], ["Path=/; HttpOnly", "session="]),
    (
        '{"level":"info","msg":"req","cookie":"a=c00kie-A; b=c00kie-B","path":"/"}',
        ["c00kie-A", "c00kie-B"],
        ['"path":"/"'],
    ),
    ('{"headers":{"Cookie":["sid=c00kie-List"]},"status":200}', ["c00kie-List"], ['"status":200']),
    ('msg="{\\"cookie\\":\\"sid=esc4ped-C\\"}" level=warn', ["esc4ped-C"], ["level=warn"]),
    ('level=debug cookie="sid=logfmt-C00k; lang=en" user=bob', ["logfmt-C00k"], ["user=bob"]),
    ("req COOKIE=sid=upper-C00k host=web-1", ["upper-C00k"], ["host=web-1"]),
    ("proxy: forwarded SET-COOKIE: token=up-Set-C; Secure", ["up-Set-C"], ["; Secure"]),
]
"""Cookies in the middle of a log line, any case, in JSON fields too."""

COOKIE_NEAR_MISSES = [
    "the session cookie: expired after 30m",
    "cookie consent: accepted; cookies=3 stored",
    "set cookie failed: no space left on device",
    "x-cookie-policy: strict",
]
"""Cookie talk without a cookie value: left exactly as is."""
