"""The detector on the forms people paste credentials in, and on what only stands for one: each
credential is found whole (its kind, its place, redacted without a piece left), each
placeholder is not. All values are FAKE."""

from __future__ import annotations

import pytest

from memls import secrets

CREDENTIALS = [
    # a URL's password with reserved characters
    ("postgres://admin:S3cr3tPassw0rd!@db.internal:5432/app", "url-password", "S3cr3tPassw0rd!"),
    ("mongodb+srv://app:Xk29!fLq@cluster0.example.net/prod", "url-password", "Xk29!fLq"),
    ("redis://:p4ssw0rd!x9@cache.internal:6379", "url-password", "p4ssw0rd!x9"),
    ("amqp://svc:Rb7$kq1mZ@rabbit.internal:5672/", "url-password", "Rb7$kq1mZ"),
    ("mysql://root:Tr0ub4dor&3@db:3306/app", "url-password", "Tr0ub4dor&3"),
    # credentials on a command line
    (
        "curl -u deploy:N0tMyR3alPa55! https://api.example.com",
        "command-line-password",
        "N0tMyR3alPa55!",
    ),
    ("docker login -u ci -p 'Zq8!mW2x' registry.example.com", "command-line-password", "Zq8!mW2x"),
    ("mysql -u root -pGl4ss-0nion db", "command-line-password", "Gl4ss-0nion"),
    (
        "helm repo add corp https://charts.corp --password Hq7_vv2Lp",
        "command-line-password",
        "Hq7_vv2Lp",
    ),
    ("Authorization: Basic YWRtaW46czNjcjN0IVB3", "authorization-header", "YWRtaW46czNjcjN0IVB3"),
    # a password in prose
    ("The SMTP password is hunter2!Xq9 (ask ops before rotating)", "prose-password", "hunter2!Xq9"),
    ("password for root on the NAS: Wd40-Rust.Free", "prose-password", "Wd40-Rust.Free"),
    # a JSON Web Token whose parts can be one (payload `eyJ...`, a signature of HS256's length)
    (
        "SESSION_TOKEN=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "json-web-token",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
]


@pytest.mark.parametrize(("text", "kind", "secret"), CREDENTIALS)
def test_a_credential_is_found_whole_and_redacted(text, kind, secret):
    (finding,) = secrets.find(text)
    assert finding.kind == kind
    assert text[finding.start : finding.end] == secret
    assert secret not in secrets.redact(text)
    assert f"[REDACTED:{kind}]" in secrets.redact(text)


PLACEHOLDERS = [
    "postgres://USER:PASSWORD@HOST:PORT/DB",
    "mongodb://<user>:<password>@localhost:27017",
    "redis://:${REDIS_PASSWORD}@cache:6379",
    "postgres://postgres:postgres@localhost:5432/dev",
    "curl -u $USER:$TOKEN https://api.example.com",
    "curl -u <user:password> https://api.example.com",
    'docker login -u "$CI_USER" -p "$CI_PASSWORD" registry',
    "docker run -u 1000:1000 -p 8080:80 app",
    "ssh -p 2222 deploy@host and mkdir -p build/out",
    "Authorization: Bearer <token>",
    "api_key = 'xxxxxxxxxxxxxxxxxxxxxxxx'",
    "password: ********",
    "password=changeme",
    "The password is required and must be rotated yearly.",
    "Reset the password at https://id.example.com/reset first.",
    "token = ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "secret_key = 'sk_abcdefghijklmnopqrstuv'",
    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    # made up to show a format: letters and digits each in order, a JWT that cannot be one
    "client_secret = 'a1B2c3D4e5F6g7H8i9J0k1L2'",
    "API_TOKEN=abc123def456ghi789jkl012mno345pqr",
    "ACCOUNT_PIN=1234-1234-1234-1234",
    "SESSION_TOKEN=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.signature",
    "auth_token: eyJshort.payload.signature",
]


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_a_placeholder_is_not_a_secret(text):
    assert secrets.find(text) == []


def test_a_token_of_a_current_format_is_found_by_its_service():
    # an Anthropic key and a fine-grained GitHub token: formats detect-secrets does not know
    anthropic = "sk-ant-api03-" + "Q7w2" * 23 + "x" + "AA"
    github = "github_pat_11ABCDEFG0" + "q7Rt2Zx9Lm4K" + "_" + "p8Vw3Nb6Yc1H" * 4 + "Zx9Lm4Kp8Vw"
    for text in (f"ANTHROPIC_API_KEY={anthropic}", f"the release job uses {github}"):
        (finding,) = secrets.find(text)
        assert finding.kind not in ("secret-keyword", "base64-high-entropy-string")
        assert "REDACTED" in secrets.redact(text)


def test_a_refusal_names_the_kind_the_line_and_the_column():
    text = "staging\ncache is redis://:p4ssw0rd!x9@cache.internal:6379"
    with pytest.raises(Exception) as err:
        secrets.screen(text, "text", redact_it=False)
    message = str(err.value)
    assert "(url-password) at line 2, column 19" in message
    assert "--redact" in message


def test_a_token_on_the_line_after_its_name_is_placed_on_its_own_line():
    # Betterleaks reports a match that starts at the key's line; the finding is where the
    # token is
    token = "q7Rt2Zx9Lm4Kp8Vw3Nb6Yc1Hd5Jf0Gs2"
    text = f"<adafruitToken>\n    {token}\n</adafruitToken>"
    (finding,) = secrets.find(text)
    assert finding.line == 1
    assert text[finding.start : finding.end] == token
    assert secrets.where(text, finding) == "line 2, column 5"
