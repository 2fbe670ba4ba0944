"""Secret redaction: each shipped format is masked inside realistic tool output, near-misses stay intact."""

from __future__ import annotations

import base64
import random
import re
import string
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.redaction import DEFAULT_PATTERNS, DEFAULT_REDACTOR, PatternRedactor, Redactor, SecretPattern
from samples.credentials import (
    ALNUM,
    ANTHROPIC,
    AWS_ID,
    AWS_SECRET,
    AWS_SESSION,
    AWS_STS_ID,
    AZURE_KEY,
    B64URL,
    GH_PAT,
    GHO,
    GHP,
    GHR,
    GHS,
    GHU,
    GLDT,
    GLPAT,
    GLRT,
    GOOGLE_KEY,
    HF,
    JWT,
    NEAR_MISSES,
    NPM,
    OPENAI_LEGACY,
    OPENAI_PROJ,
    PEM_BODY,
    SENDGRID,
    SLACK_HOOK_PATH,
    STRIPE_LIVE,
    STRIPE_RK,
    XAPP,
    XOXB,
    XOXE,
    XOXP,
    fake,
    pem,
)

redact = DEFAULT_REDACTOR.redact


SECRET_CASES = [
    # AWS
    pytest.param(
        f"AWS_ACCESS_KEY_ID={AWS_ID}\nAWS_DEFAULT_REGION=eu-west-1\nHOME=/root",
        [AWS_ID],
        ["AWS_ACCESS_KEY_ID=", "AWS_DEFAULT_REGION=eu-west-1\nHOME=/root"],
        "aws_access_key_id",
        id="aws-key-id-env-dump",
    ),
    pytest.param(
        f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\nregion = us-east-1\n",
        [AWS_ID, AWS_SECRET],
        ["[default]\naws_access_key_id = ", "aws_secret_access_key = ", "region = us-east-1"],
        "aws_secret_access_key",
        id="aws-credentials-file",
    ),
    pytest.param(
        f'{{"Credentials": {{"AccessKeyId": "{AWS_STS_ID}", "SecretAccessKey": "{AWS_SECRET}", '
        f'"SessionToken": "{AWS_SESSION}", "Expiration": "2024-05-01T13:00:00Z"}}}}',
        [AWS_STS_ID, AWS_SECRET, AWS_SESSION],
        ['"AccessKeyId": "', '"SecretAccessKey": "', '"SessionToken": "', '"Expiration": "2024-05-01T13:00:00Z"'],
        "aws_secret_access_key",
        id="aws-sts-assume-role-json",
    ),
    pytest.param(
        f"env:\n  - name: AWS_SECRET_ACCESS_KEY\n    value: {AWS_SECRET}\nexport AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
        [AWS_SECRET],
        ["- name: AWS_SECRET_ACCESS_KEY", "export AWS_SECRET_ACCESS_KEY="],
        "aws_secret_access_key",
        id="aws-secret-export",
    ),
    # Private keys
    pytest.param(
        '{"type": "service_account", "project_id": "acme-prod", "private_key_id": "'
        + fake("", 40, "0123456789abcdef")
        + '", "private_key": "'
        + pem("PRIVATE KEY", "\\n")
        + '\\n", "client_email": "deployer@acme-prod.iam.gserviceaccount.com"}',
        [*PEM_BODY, "BEGIN PRIVATE KEY", fake("", 40, "0123456789abcdef")],
        ['"project_id": "acme-prod"', '"client_email": "deployer@acme-prod.iam.gserviceaccount.com"'],
        "private_key",
        id="gcp-service-account-json",
    ),
    *[
        pytest.param(
            f"$ cat /etc/ssl/private/app.key\n{pem(label)}\n$ ls -l /etc/ssl/private",
            [*PEM_BODY, f"BEGIN {label}"],
            ["$ cat /etc/ssl/private/app.key\n", "\n$ ls -l /etc/ssl/private"],
            "private_key",
            id=f"pem-{label.split()[0].lower()}",
        )
        for label in (
            "RSA PRIVATE KEY",
            "EC PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "PRIVATE KEY",
        )
    ],
    pytest.param(
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n"
        + "\n".join(PEM_BODY)
        + "\n-----END RSA PRIVATE KEY-----\nkey loaded",
        [*PEM_BODY, "DEK-Info"],
        ["\nkey loaded"],
        "private_key",
        id="pem-legacy-encrypted-headers",
    ),
    pytest.param(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + "\n".join(PEM_BODY) + "\n-----END PGP PRIVATE KEY BLOCK-----",
        PEM_BODY,
        [],
        "private_key",
        id="pgp-private-key-block",
    ),
    pytest.param(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + "\n".join(PEM_BODY)
        + "\n[output truncated: 3.1 KB more, read_output('h7')]",
        PEM_BODY,
        ["\n[output truncated: 3.1 KB more, read_output('h7')]"],
        "private_key",
        id="pem-cut-off-before-footer",
    ),
    # Forges
    *[
        pytest.param(
            f"Cloning into 'repo'...\nexport GH_TOKEN={tok}\nremote: Enumerating objects: 42, done.",
            [tok],
            ["export GH_TOKEN=", "remote: Enumerating objects: 42, done."],
            "github_token",
            id=f"github-{tok[:4]}",
        )
        for tok in (GHP, GHO, GHU, GHS, GHR, GH_PAT)
    ],
    pytest.param(
        f"$ git clone https://x-access-token:{GHS}@github.com/acme/deploy.git\nfatal: repository not found",
        [GHS],
        ["https://x-access-token:", "@github.com/acme/deploy.git\nfatal: repository not found"],
        "github_token",
        id="github-token-in-clone-url",
    ),
    *[
        pytest.param(
            f"Running with gitlab-runner 16.9.1\n  CI_TOKEN: {tok}\nJob succeeded",
            [tok],
            ["Running with gitlab-runner 16.9.1", "CI_TOKEN: ", "Job succeeded"],
            "gitlab_token",
            id=f"gitlab-{tok.split('-')[0]}",
        )
        for tok in (GLPAT, GLRT, GLDT)
    ],
    # Slack
    *[
        pytest.param(
            f'slack_sdk.errors.SlackApiError: {{"ok": false, "error": "invalid_auth", "token": "{tok}"}}',
            [tok],
            ['"error": "invalid_auth"', '"token": "'],
            "slack_token",
            id=f"slack-{tok[:4]}",
        )
        for tok in (XOXB, XOXP, XOXE, XAPP)
    ],
    pytest.param(
        f"SLACK_BOT_TOKEN={XOXB}\nSLACK_APP_TOKEN={XAPP}\nSLACK_CHANNEL=#incidents",
        [XOXB, XAPP],
        ["SLACK_BOT_TOKEN=", "SLACK_APP_TOKEN=", "SLACK_CHANNEL=#incidents"],
        "slack_token",
        id="slack-env-dump",
    ),
    pytest.param(
        f"alertmanager:\n  slack_api_url: https://hooks.slack.com/services/{SLACK_HOOK_PATH}\n  channel: '#alerts'",
        [SLACK_HOOK_PATH, SLACK_HOOK_PATH.split("/")[-1]],
        ["slack_api_url: https://hooks.slack.com/services/", "channel: '#alerts'"],
        "slack_webhook",
        id="slack-webhook-url",
    ),
    # Vendors
    pytest.param(
        f"stripe.error.AuthenticationError: Invalid API Key provided: {STRIPE_LIVE}\n  at charge (payments.py:88)",
        [STRIPE_LIVE],
        ["Invalid API Key provided: ", "\n  at charge (payments.py:88)"],
        "stripe_key",
        id="stripe-secret-key",
    ),
    pytest.param(
        f"STRIPE_RESTRICTED={STRIPE_RK} ok",
        [STRIPE_RK],
        ["STRIPE_RESTRICTED=", " ok"],
        "stripe_key",
        id="stripe-restricted",
    ),
    pytest.param(
        f"OPENAI_API_KEY={OPENAI_PROJ}\nOPENAI_BASE_URL=https://api.openai.com/v1",
        [OPENAI_PROJ],
        ["OPENAI_API_KEY=", "OPENAI_BASE_URL=https://api.openai.com/v1"],
        "openai_api_key",
        id="openai-project-key",
    ),
    pytest.param(
        f"openai.AuthenticationError: Incorrect API key provided: {OPENAI_LEGACY}. You can find your key at ...",
        [OPENAI_LEGACY],
        ["Incorrect API key provided: ", ". You can find your key at ..."],
        "openai_api_key",
        id="openai-legacy-key",
    ),
    pytest.param(
        f"anthropic.AuthenticationError: 401 invalid x-api-key ({ANTHROPIC})",
        [ANTHROPIC, ANTHROPIC[10:40]],
        ["401 invalid x-api-key (", ")"],
        "anthropic_api_key",
        id="anthropic-key",
    ),
    pytest.param(
        f"GET https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={GOOGLE_KEY} 403",
        [GOOGLE_KEY],
        ["https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=", " 403"],
        "google_api_key",
        id="google-api-key-in-url",
    ),
    pytest.param(
        f"$ cat ~/.npmrc\n//registry.npmjs.org/:_authToken={NPM}\nalways-auth=true",
        [NPM],
        ["//registry.npmjs.org/:_authToken=", "always-auth=true"],
        "npm_token",
        id="npm-token",
    ),
    pytest.param(
        f"SENDGRID_API_KEY='{SENDGRID}' python send.py",
        [SENDGRID],
        ["SENDGRID_API_KEY='", "' python send.py"],
        "sendgrid_api_key",
        id="sendgrid",
    ),
    pytest.param(
        f"HF_TOKEN={HF} huggingface-cli whoami",
        [HF],
        ["HF_TOKEN=", " huggingface-cli whoami"],
        "huggingface_token",
        id="hf",
    ),
    pytest.param(
        f"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
        [AZURE_KEY, AZURE_KEY[:30]],
        ["DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=", ";EndpointSuffix=core.windows.net"],
        "azure_account_key",
        id="azure-storage-connection-string",
    ),
    # Tokens in HTTP
    pytest.param(
        f'{{"level":"info","msg":"login ok","id_token":"{JWT}","user":"bob"}}',
        [JWT, JWT.split(".")[1], JWT.split(".")[2]],
        ['{"level":"info","msg":"login ok","id_token":"', '","user":"bob"}'],
        "jwt",
        id="jwt-in-json-log",
    ),
    pytest.param(
        f"Set-Cookie: session={JWT}; Path=/; HttpOnly",
        [JWT],
        ["Set-Cookie: session=", "; Path=/; HttpOnly"],
        "jwt",
        id="jwt-cookie",
    ),
    pytest.param(
        "curl -sS -H 'Authorization: Bearer 8f2b1c9e4d7a6f3b0e5c2a1d9b8f7e6c' https://api.acme.io/v1/orders",
        ["8f2b1c9e4d7a6f3b0e5c2a1d9b8f7e6c"],
        ["curl -sS -H 'Authorization: Bearer ", "' https://api.acme.io/v1/orders"],
        "authorization",
        id="curl-bearer",
    ),
    pytest.param(
        "GET /metrics HTTP/1.1\r\nHost: app:8080\r\nAuthorization: Basic YWRtaW46czNjcjN0UGFzcw==\r\nAccept: */*",
        ["YWRtaW46czNjcjN0UGFzcw=="],
        ["Host: app:8080\r\nAuthorization: Basic ", "\r\nAccept: */*"],
        "authorization",
        id="http-basic-auth",
    ),
    pytest.param(
        "requests.get(url, headers={'Authorization': 'token 0123abcd4567ef89'}) -> 401",
        ["0123abcd4567ef89"],
        ["headers={'Authorization': 'token ", "'}) -> 401"],
        "authorization",
        id="python-headers-dict",
    ),
    pytest.param(
        f'{{"headers": {{"Authorization": "Bearer {JWT}", "Content-Type": "application/json"}}}}',
        [JWT],
        ['"Authorization": "Bearer ', '"Content-Type": "application/json"'],
        "jwt",
        id="json-headers-bearer-jwt",
    ),
    pytest.param(
        "upstream rejected: auth=Bearer q8Zr1Lx0Vb7Nw3Ty5Uk2 status=401",
        ["q8Zr1Lx0Vb7Nw3Ty5Uk2"],
        ["upstream rejected: auth=Bearer ", " status=401"],
        "bearer_token",
        id="bare-bearer",
    ),
    pytest.param(
        "$ curl -u admin:Adm1nPa55 http://es.internal:9200/_cluster/health",
        ["Adm1nPa55"],
        ["curl -u admin:", " http://es.internal:9200/_cluster/health"],
        "basic_auth",
        id="curl-user-password",
    ),
    # URLs and connection strings
    pytest.param(
        'Traceback (most recent call last):\n  File "/app/db.py", line 12, in connect\n'
        "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) could not connect "
        "(Background on this error at: postgresql://orders:Pg-S3cret!@db.internal:5432/orders)",
        ["Pg-S3cret!"],
        ['File "/app/db.py", line 12', "postgresql://orders:", "@db.internal:5432/orders)"],
        "url_password",
        id="dsn-in-stack-trace",
    ),
    pytest.param(
        "REDIS_URL=redis://:r3d1sPw@redis-master:6379/0\nAMQP_URL=amqps://svc:Rabb1t!@mq.internal/vhost",
        ["r3d1sPw", "Rabb1t!"],
        ["REDIS_URL=redis://:", "@redis-master:6379/0", "AMQP_URL=amqps://svc:", "@mq.internal/vhost"],
        "url_password",
        id="redis-amqp-urls",
    ),
    pytest.param(
        "MONGO_URI=mongodb+srv://app:Mg0-p4ss@cluster0.abcde.mongodb.net/prod?retryWrites=true",
        ["Mg0-p4ss"],
        ["mongodb+srv://app:", "@cluster0.abcde.mongodb.net/prod?retryWrites=true"],
        "url_password",
        id="mongodb-srv",
    ),
    pytest.param(
        "ConnectionString: Server=tcp:sql.acme.net,1433;Database=orders;User ID=svc;Password=Sq1S3rv3r!;Encrypt=True;",
        ["Sq1S3rv3r!"],
        ["Server=tcp:sql.acme.net,1433;Database=orders;User ID=svc;Password=", ";Encrypt=True;"],
        "password",
        id="ado-net-connection-string",
    ),
    pytest.param(
        "jdbc:sqlserver://sql:1433;databaseName=orders;user=svc;password=Jdbc!Pw;encrypt=true",
        ["Jdbc!Pw"],
        [";user=svc;password=", ";encrypt=true"],
        "password",
        id="jdbc-semicolon",
    ),
    pytest.param(
        "jdbc:mysql://db:3306/shop?user=app&password=MyS9lPw&useSSL=true",
        ["MyS9lPw"],
        ["?user=app&password=", "&useSSL=true"],
        "password",
        id="jdbc-query-string",
    ),
    pytest.param(
        "Driver={ODBC Driver 18 for SQL Server};Server=sql;UID=sa;PWD=0dbcPw!;TrustServerCertificate=yes",
        ["0dbcPw!"],
        ["UID=sa;PWD=", ";TrustServerCertificate=yes"],
        "password",
        id="odbc-pwd",
    ),
    pytest.param(
        "dsn: host=db port=5432 user=app password=L1bpqPw dbname=app sslmode=require\nPGPASSWORD=PgEnvPw psql -h db",
        ["L1bpqPw", "PgEnvPw"],
        ["user=app password=", " dbname=app sslmode=require", "PGPASSWORD=", " psql -h db"],
        "password",
        id="libpq-and-pgpassword",
    ),
    # Generic assignments
    pytest.param(
        "HOSTNAME=api-7f9c\nDB_PASSWORD=hunter2\nMYSQL_ROOT_PASSWORD=r00tPw\nPATH=/usr/local/bin:/usr/bin\nPWD=/srv/app",
        ["hunter2", "r00tPw"],
        ["HOSTNAME=api-7f9c\nDB_PASSWORD=", "MYSQL_ROOT_PASSWORD=", "PATH=/usr/local/bin:/usr/bin\nPWD=/srv/app"],
        "password",
        id="env-dump",
    ),
    pytest.param(
        'ts=2024-05-01T12:00:00Z level=debug msg="db connect" user=app password="pa ss word" retries=3',
        ["pa ss word"],
        ['level=debug msg="db connect" user=app password="', '" retries=3'],
        "password",
        id="logfmt-quoted",
    ),
    pytest.param(
        '"Env": [\n  "POSTGRES_PASSWORD=D0ckerPw",\n  "POSTGRES_USER=app",\n  "API_TOKEN=tok_9f8e7d6c"\n]',
        ["D0ckerPw", "tok_9f8e7d6c"],
        ['"POSTGRES_PASSWORD=', '"POSTGRES_USER=app"', '"API_TOKEN='],
        "token",
        id="docker-inspect-env",
    ),
    pytest.param(
        "Containers:\n  api:\n    Environment:\n      LOG_LEVEL:      info\n      API_TOKEN:      k8sT0kenValue\n"
        "      DB_PASSWORD:    <set to the key 'password' in secret 'db-creds'>  Optional: false",
        ["k8sT0kenValue"],
        [
            "LOG_LEVEL:      info",
            "API_TOKEN:      ",
            "DB_PASSWORD:    <set to the key 'password' in secret 'db-creds'>",
        ],
        "token",
        id="kubectl-describe-pod-env",
    ),
    pytest.param(
        '    env:\n    - name: DB_PASSWORD\n      value: "k8sPlainPw"\n    - name: LOG_LEVEL\n      value: info',
        ["k8sPlainPw"],
        ['- name: DB_PASSWORD\n      value: "', '"\n    - name: LOG_LEVEL\n      value: info'],
        "password",
        id="kubernetes-env-name-value",
    ),
    pytest.param(
        '"environment": [\n  {\n    "name": "JWT_SECRET",\n    "value": "ecsJwtS3cret"\n  },\n  {"name": "PORT", "value": "8080"}\n]',
        ["ecsJwtS3cret"],
        ['"name": "JWT_SECRET",\n    "value": "', '{"name": "PORT", "value": "8080"}'],
        "secret",
        id="ecs-task-definition-env",
    ),
    pytest.param(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-creds\ndata:\n  password: aHVudGVyMg==\n  username: YXBw\n",
        ["aHVudGVyMg=="],
        ["kind: Secret", "name: db-creds", "  password: ", "  username: YXBw"],
        "password",
        id="kubectl-get-secret-yaml",
    ),
    pytest.param(
        '{"oauth": {"client_id": "acme-web", "client_secret": "Cl13ntS3cr3t", "refresh_token": "1//0gRefresh"}}',
        ["Cl13ntS3cr3t", "1//0gRefresh"],
        ['"client_id": "acme-web"', '"client_secret": "', '"refresh_token": "'],
        "secret",
        id="json-oauth-config",
    ),
    pytest.param(
        "datadog:\n  api_key: 0123456789abcdef0123456789abcdef\n  site: datadoghq.eu",
        ["0123456789abcdef0123456789abcdef"],
        ["datadog:\n  api_key: ", "\n  site: datadoghq.eu"],
        "api_key",
        id="yaml-api-key",
    ),
    pytest.param(
        'curl -H "X-Api-Key: k3y-0f-acme" -H "Accept: application/json" https://api.acme.io',
        ["k3y-0f-acme"],
        ['curl -H "X-Api-Key: ', '" -H "Accept: application/json" https://api.acme.io'],
        "api_key",
        id="curl-api-key-header",
    ),
    pytest.param(
        'const cfg = {"accessToken": "acc-T0k3n-xyz", "dbPassword": "camelPw1"};',
        ["acc-T0k3n-xyz", "camelPw1"],
        ['{"accessToken": "', '"dbPassword": "', '"};'],
        "token",
        id="camel-case-keys",
    ),
    pytest.param(
        "psycopg2.connect(host='db', user='app', password='PyKw4rgPw')",
        ["PyKw4rgPw"],
        ["psycopg2.connect(host='db', user='app', password='", "')"],
        "password",
        id="python-kwargs",
    ),
    pytest.param(
        "+ vault login -method=userpass username=ops --password=V4ultPw && vault kv get secret/app",
        ["V4ultPw"],
        ["username=ops --password=", " && vault kv get secret/app"],
        "password",
        id="cli-flag",
    ),
    pytest.param(
        "GET /oauth/callback?code=abc&access_token=QueryT0ken123&state=xyz HTTP/1.1",
        ["QueryT0ken123"],
        ["?code=abc&access_token=", "&state=xyz HTTP/1.1"],
        "token",
        id="query-string-token",
    ),
    pytest.param(
        "https://acme.blob.core.windows.net/logs/app.log?sv=2022-11-02&se=2024-05-02&sp=r&sig=AbCdEf0123456789%2BXyZ%3D",
        ["AbCdEf0123456789%2BXyZ%3D"],
        ["https://acme.blob.core.windows.net/logs/app.log?sv=2022-11-02&se=2024-05-02&sp=r&sig="],
        "secret",
        id="azure-sas-signature",
    ),
]


@pytest.mark.parametrize(("text", "secrets", "kept", "name"), SECRET_CASES)
def test_secret_is_masked_and_its_context_kept(text: str, secrets: list[str], kept: list[str], name: str) -> None:
    out = redact(text)
    for secret in secrets:
        assert secret not in out
    for context in kept:
        assert context in out
    assert f"[REDACTED:{name}]" in out


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_miss_is_left_exactly_as_is(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("text", "secrets", "kept", "name"), SECRET_CASES)
def test_redacting_twice_changes_nothing_more(text: str, secrets: list[str], kept: list[str], name: str) -> None:
    once = redact(text)
    assert once != text
    assert redact(once) == once


SAMPLES = [
    AWS_ID, GHP, GH_PAT, GLPAT, XOXB, XOXE, STRIPE_LIVE, OPENAI_PROJ, OPENAI_LEGACY, ANTHROPIC,
    GOOGLE_KEY, NPM, SENDGRID, HF, JWT,
]  # fmt: skip
"""Secrets recognisable without any surrounding key (AWS secret keys and Azure keys need one)."""
FRAGMENTS = [
    *SAMPLES, AWS_SECRET, AZURE_KEY, "password", "PASSWORD", "dbPassword", "token", "secret", "api_key", "AccountKey", "sig", "pwd", "PWD",
    "=", ": ", ":", '"', "'", " ", "\n", "\t", ";", "; ", "&", "?", "@", "://", "/", "\\n", ".", "-", "_", "]", "[",
    "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----", PEM_BODY[0],
    "eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxIn0", "Bearer ", "Authorization: ", "Basic ", "AKIA", "ghp_", "sk-",
    "xoxb-", "hooks.slack.com/services/", "[REDACTED:token]", "[REDACTED:", "****", "${X}", "<x>", "{{ x }}",
    "-H '", "curl ", "-u ", "16 bytes", "null", "A", "z", "0",
]  # fmt: skip
mixed_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(mixed_text)
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_redaction_never_raises_and_is_idempotent_on_any_text(text: str) -> None:
    once = redact(text)
    assert isinstance(once, str)
    assert redact(once) == once


SAFE_WORDS = [
    "token", "password", "secret", "expired", "invalid", "Authorization", "header", "missing", "for", "user", "bob",
    "task-runner", "disk-usage", "order-service-7d9f8b6c4-x2lkq", "9fceb02d0ae598e95dc970b74767f19372d61af8",
    "3f2a9c1e-8b7d-4c5e-9f1a-2b3c4d5e6f70", "v1.28.3", "a1b2c3d4", "level=error", "status=503", '"level":"error"',
    "https://grafana.example.com/d/abc?orgId=1", "rate(http_requests_total[5m])", "sk-", "eyJ", "AKIA", "key",
    "password_reset_count=3", "token_count=17", "[REDACTED:token]", "****", "(", ")", "{", "}",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(SAFE_WORDS), max_size=40),
    st.lists(st.sampled_from([" ", "\n", ", ", "\t", " | "]), min_size=1),
)
def test_secret_free_text_is_returned_unchanged(words: list[str], seps: list[str]) -> None:
    text = "".join(word + seps[i % len(seps)] for i, word in enumerate(words))
    out = redact(text)
    assert len(out) <= len(text)
    assert out == text


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(SAMPLES),
    st.text(alphabet=string.ascii_lowercase + " .,()", max_size=40),
    st.text(alphabet=string.ascii_lowercase + " .,()", max_size=40),
)
def test_planted_secret_is_masked_and_surroundings_kept(secret: str, before: str, after: str) -> None:
    out = redact(f"{before}\n{secret}\n{after}")
    assert secret not in out
    assert out.startswith(f"{before}\n[REDACTED:")
    assert out.endswith(f"]\n{after}")


def test_custom_pattern_runs_first_and_returns_a_new_redactor() -> None:
    acme = SecretPattern("acme_token", re.compile(r"acme_[a-z0-9]{24}"))
    custom = DEFAULT_REDACTOR.with_patterns(acme)
    text = "ACME_TOKEN=acme_0123456789abcdefghijklmn done"
    assert custom.redact(text) == "ACME_TOKEN=[REDACTED:acme_token] done"
    assert DEFAULT_REDACTOR.redact(text) == "ACME_TOKEN=[REDACTED:token] done"
    assert custom.patterns == (acme, *DEFAULT_PATTERNS)
    assert DEFAULT_REDACTOR.patterns == DEFAULT_PATTERNS


def test_custom_pattern_masks_only_its_named_group() -> None:
    ticket = SecretPattern("pin", re.compile(r"PIN (?P<pin>\d{4,8})\b"), group="pin")
    redactor = PatternRedactor([ticket])
    assert redactor.redact("card PIN 123456 accepted") == "card PIN [REDACTED:pin] accepted"
    assert redactor.redact("card PIN 12 rejected") == "card PIN 12 rejected"


def test_empty_matches_and_placeholders_never_grow_the_text() -> None:
    redactor = PatternRedactor([SecretPattern("empty", re.compile(r"x*")), SecretPattern("stars", re.compile(r"\*+"))])
    assert redactor.redact("a**b") == "a**b"


def test_patterns_are_validated_when_declared() -> None:
    with pytest.raises(ValueError, match="no group"):
        SecretPattern("pin", re.compile(r"PIN (\d+)"), group="pin")
    with pytest.raises(ValueError, match="no group"):
        SecretPattern("pin", re.compile(r"PIN (\d+)"), group=2)
    with pytest.raises(ValueError, match="name"):
        SecretPattern("bad]name", re.compile("x"))


def test_default_redactor_is_a_redactor_and_private_keys_go_first() -> None:
    assert isinstance(DEFAULT_REDACTOR, Redactor)
    assert DEFAULT_PATTERNS[0].name == "private_key"
    assert PatternRedactor().patterns == DEFAULT_PATTERNS


def _megabyte_log() -> str:
    rng = random.Random(7)
    templates = [
        '2024-05-01T12:00:{s:02d}.123Z level=error msg="upstream timeout" trace_id={h} pod=order-service-7d9f8b6c4-x2lkq',
        '{{"ts":"2024-05-01T12:00:{s:02d}Z","level":"error","msg":"charge failed","request_id":"{r}","attempt":{n}}}',
        '  File "/app/payments/client.py", line {n}, in charge',
        "GET /api/v1/orders/{n}?page=2&limit=50 HTTP/1.1 200 {n}ms",
        "at com.acme.auth.TokenValidator.validate(TokenValidator.java:{n}) password_reset_count={n}",
        "DATABASE_URL=postgres://app:S3cret{n}@db.internal:5432/app API_TOKEN=t{h}",
        f"Authorization: Bearer {JWT}",
    ]
    lines, size = [], 0
    while size < 1_000_000:
        line = rng.choice(templates).format(
            s=rng.randrange(60),
            n=rng.randrange(10_000),
            h=f"{rng.getrandbits(128):032x}",
            r=f"{rng.getrandbits(32):08x}",
        )
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def test_one_megabyte_log_is_redacted_whole() -> None:
    out = redact(_megabyte_log())
    assert "S3cret" not in out
    assert "pod=order-service-7d9f8b6c4-x2lkq" in out


ADVERSARIAL = {
    "pem-headers-without-footer": "-----BEGIN PRIVATE KEY-----\n" * 20_000,
    "pem-header-then-prose": "-----BEGIN RSA PRIVATE KEY-----\n" + "some text; x " * 40_000,
    "keys-without-values": ("password=" + " " * 500 + "\n") * 1_000,
    "unclosed-quote": 'password="' + "a" * 500_000,
    "url-without-at": "://" + "a:" * 250_000,
    "jwt-like-without-dots": "eyJ" + "a" * 500_000,
    "curl-without-credentials": "curl -u " * 60_000,
    "long-indented-line": " " * 500_000 + "x",
    "many-keywords": "_pass_pwd_token_secret_apikey" * 20_000,
    "token-prefixes": "AKIA sk- xoxb- ghp_ glpat- eyJ " * 20_000,
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_input_completes(text: str) -> None:
    """Catastrophic backtracking would hang here; the suite's per-test timeout turns that into a failure."""
    once = redact(text)
    assert redact(once) == once


UNHINTED = PatternRedactor(replace(p, hints=()) for p in DEFAULT_PATTERNS)


@settings(max_examples=300)
@given(mixed_text)
def test_hints_only_skip_patterns_that_cannot_match(text: str) -> None:
    """The pre-check is an optimisation: with or without it, the same text comes out."""
    assert redact(text) == UNHINTED.redact(text)


@pytest.mark.parametrize("text", [*SAMPLES, AWS_SECRET, AZURE_KEY])
def test_hints_cover_every_sample(text: str) -> None:
    assert redact(f"x {text} y") == UNHINTED.redact(f"x {text} y")


# --- credential classes: each masked wherever it sits, its near-misses untouched ------------------------------

SURROUNDING = st.text(alphabet=string.ascii_lowercase + " .,()", max_size=40)
"""Prose around a planted secret, on its own lines."""
PASSWORD_CHARS = ALNUM + "!#$%^*()_+-@/&~"
passwords = st.builds(
    lambda head, body, digit: head + body + digit,
    st.sampled_from(string.ascii_letters),
    st.text(alphabet=PASSWORD_CHARS, min_size=6, max_size=30),
    st.sampled_from(string.digits),
)
"""Passwords as people choose them: `@`, `/`, `#` and `&` included, unencoded."""
b64_chars = st.text(alphabet=ALNUM + "+/", min_size=40, max_size=40)


def base64_of(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@st.composite
def credential(draw: st.DrawFn) -> tuple[str, str]:
    """One credential of a class the redactor must know, in one of the forms it is written in: (text, secret)."""
    kind = draw(st.sampled_from(CREDENTIAL_FORMS))
    return kind(draw)


def _url(draw: st.DrawFn) -> tuple[str, str]:
    pw = draw(passwords)
    scheme = draw(st.sampled_from(["postgres", "mysql", "redis", "amqp", "https", "mongodb+srv"]))
    return f"{scheme}://app:{pw}@db.internal:5432/orders", pw


def _cli(draw: st.DrawFn) -> tuple[str, str]:
    pw = draw(passwords.filter(lambda p: not set(p) & set("&;|()")))
    form = draw(
        st.sampled_from(
            [
                "mysql -h db -u root -p{pw} orders",
                "mysqldump --single-transaction -uroot -p{pw} shop",
                "mariadb -u app -p'{pw}' -e 'select 1'",
                "app-server --password {pw} --port 8080",
                "app-server --db-password '{pw}'",
                "app-server --password={pw}",
                "vault login --token {pw}",
                "oauth2-proxy --client-secret {pw}",
                "sshpass -p {pw} ssh deploy@web-1",
                "docker login -u bob -p {pw} registry.example.com",
            ]
        )
    )
    return form.format(pw=pw), pw


def _aws(draw: st.DrawFn) -> tuple[str, str]:
    key = draw(b64_chars)
    form = draw(
        st.sampled_from(
            ["aws configure set aws_secret_access_key {k}", "aws_secret_access_key    {k}", "aws_secret_access_key={k}"]
        )
    )
    return form.format(k=key), key


def _cookie(draw: st.DrawFn) -> tuple[str, str]:
    value = draw(st.text(alphabet=ALNUM, min_size=8, max_size=30)) + draw(st.text(alphabet=ALNUM + "%-_.", max_size=30))
    value += draw(st.sampled_from(string.digits))  # never a placeholder such as "undefined"
    form = draw(
        st.sampled_from(
            [
                "Cookie: theme=dark; session={v}",
                "Set-Cookie: sessionid={v}; Path=/; HttpOnly; Secure",
                "> Cookie: _gh_sess={v}",
                "curl -H 'Cookie: sid={v}' https://app.example.com/",
                "curl -s -b 'sid={v}' https://app.example.com/",
                '{{"headers": {{"Cookie": "sid={v}"}}}}',
            ]
        )
    )
    return form.format(v=value), value


def _slack(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(string.ascii_lowercase))
    token = f"xox{kind}-{draw(st.text(alphabet=string.digits, min_size=10, max_size=13))}-" + draw(
        st.text(alphabet=ALNUM + "%-", min_size=10, max_size=60)
    )
    return f"SLACK_TOKEN {token}", token


def _vault(draw: st.DrawFn) -> tuple[str, str]:
    token = draw(st.sampled_from(["hvs.", "hvb.", "hvr."])) + draw(st.text(alphabet=B64URL, min_size=24, max_size=120))
    return f"export VAULT_TOKEN_VALUE {token}", token


def _base64_key(draw: st.DrawFn) -> tuple[str, str]:
    label = draw(st.sampled_from(["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"]))
    encoded = base64_of(pem(label))
    form = draw(st.sampled_from(["  tls.key: {v}", "  ssh-privatekey: {v}", '"key.pem": "{v}"', "{v}"]))
    return form.format(v=encoded), encoded


def _docker(draw: st.DrawFn) -> tuple[str, str]:
    auth = base64_of(f"bob:{draw(passwords)}")
    config = '{"auths": {"registry.example.com": {"auth": "' + auth + '"}}}'
    if draw(st.booleans()):
        return config, auth
    encoded = base64_of(config)
    return f"  .dockerconfigjson: {encoded}", encoded


def _pem_separated(draw: st.DrawFn) -> tuple[str, str]:
    separator = draw(st.sampled_from([" ", "\\n", " ⏎ ", "\r\n", "\t"]))
    footer = draw(st.booleans())
    lines = [f"-----BEGIN {draw(st.sampled_from(['RSA PRIVATE KEY', 'PRIVATE KEY', 'EC PRIVATE KEY']))}-----"]
    lines += PEM_BODY + (["-----END RSA PRIVATE KEY-----"] if footer else [])
    cut = "" if footer else "…"  # a block without its footer swallows what looks like more of it: a cut line ends
    return "loaded key " + separator.join(lines) + cut, PEM_BODY[1]


CREDENTIAL_FORMS = [_url, _cli, _aws, _cookie, _slack, _vault, _base64_key, _docker, _pem_separated]


@settings(max_examples=600, deadline=None)
@given(credential(), SURROUNDING, SURROUNDING)
def test_a_credential_of_every_class_is_masked_in_any_surroundings(planted: tuple[str, str], before: str, after: str):
    text, secret = planted
    out = redact(f"{before}\n{text}\n{after}")
    assert out.startswith(f"{before}\n")
    assert out.endswith(f"\n{after}")
    planted_out = out[len(before) + 1 : len(out) - len(after) - 1]
    assert secret not in planted_out
    assert "[REDACTED:" in planted_out
    assert redact(out) == out


CLASS_NEAR_MISSES = [
    # flags that are not passwords, and -p where it is a port, a path or a prompt
    "docker login --password-stdin registry.example.com < token.txt",
    "app-server --password-file /run/secrets/db --token-ttl 3600 --secret-name db-creds",
    "psql --no-password -h db orders",
    "use --password to log in, or --token when a script calls it",
    "ssh -p 2222 deploy@web-1 && docker run -p 8080:80 nginx && mkdir -p /var/lib/app && gcc -pthread -o x x.c",
    "mysql -h db -P 3306 -u app -p orders",
    # URLs with a port, an @ in the path or the query, and no password
    "http://api.internal:8080/users/@me https://host:443?email=ops@example.com git@github.com:acme/repo.git",
    "ssh://git@github.com:22/acme/repo.git https://bob@github.com/acme/repo.git",
    # public key material and other base64
    f"  tls.crt: {base64_of('-----BEGIN CERTIFICATE-----')}MIIDdzCCAl+gAwIBAgIE",
    f"  ca.crt: {base64_of('-----BEGIN PUBLIC KEY-----')}",
    '{"auth": "required", "identitytoken": "", "auths": {}}',
    # words that look like token prefixes, and cookie talk
    "xoxo-gossip-girl hvs.short hvb.x",
    "Cookie: none\nSet-Cookie: <redacted>\nthe session cookie: expired\ncookie consent: accepted",
    "aws_secret_access_key is not set; run aws configure",
]


@pytest.mark.parametrize("text", CLASS_NEAR_MISSES)
def test_a_near_miss_of_a_credential_class_is_left_exactly_as_is(text: str) -> None:
    assert redact(text) == text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CLASS_NEAR_MISSES), min_size=1, max_size=6), SURROUNDING)
def test_near_misses_stay_intact_in_any_surroundings(near_misses: list[str], prose: str) -> None:
    text = f"\n{prose}\n".join(near_misses)
    assert redact(text) == text
