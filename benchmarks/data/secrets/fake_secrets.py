"""Realistic FAKE secrets in realistic memory sentences, for benchmarks/secrets_detect.py.

Every value is drawn from a seeded random generator in the published format of its service
(prefix, length, alphabet), so none is a real credential. Each item: the kind it stands for,
the memory text, and the secret as it appears in the text (what must be found and redacted).

    python benchmarks/data/secrets/fake_secrets.py [--seed 7] > fake-secrets.jsonl
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
from collections.abc import Callable
from urllib.parse import quote

UP = string.ascii_uppercase
LOW = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LOW + DIG
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# --- the values, one maker per kind -------------------------------------------------------


def aws_access_key(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, UP + DIG, 16)


def aws_secret_key(rng: random.Random) -> str:
    return pick(rng, ALNUM + "/+", 40)


def github_token(rng: random.Random) -> str:
    return rng.choice(["ghp", "gho", "ghs", "ghu"]) + "_" + pick(rng, ALNUM, 36)


def gitlab_token(rng: random.Random) -> str:
    return "glpat-" + pick(rng, URLSAFE, 20)


def slack_token(rng: random.Random) -> str:
    return (
        rng.choice(["xoxb", "xoxp"])
        + f"-{pick(rng, DIG, 12)}-{pick(rng, DIG, 13)}-{pick(rng, LOW + DIG, 24)}"
    )


def slack_webhook(rng: random.Random) -> str:
    return (
        "https://hooks.slack.com/services/T"
        + pick(rng, UP + DIG, 8)
        + "/B"
        + pick(rng, UP + DIG, 10)
        + "/"
        + pick(rng, ALNUM, 24)
    )


def stripe_key(rng: random.Random) -> str:
    return rng.choice(["sk_live_", "rk_live_"]) + pick(rng, ALNUM, 24)


def openai_key(rng: random.Random) -> str:
    return "sk-" + pick(rng, ALNUM, 20) + "T3BlbkFJ" + pick(rng, ALNUM, 20)


def sendgrid_key(rng: random.Random) -> str:
    return "SG." + pick(rng, URLSAFE, 22) + "." + pick(rng, URLSAFE, 43)


def twilio_key(rng: random.Random) -> str:
    return rng.choice(["SK", "AC"]) + pick(rng, HEX, 32)


def npm_token(rng: random.Random) -> str:
    return "npm_" + pick(rng, ALNUM, 36)


def pypi_token(rng: random.Random) -> str:
    return "pypi-AgEIcHlwaS5vcmc" + pick(rng, URLSAFE, 80)


def discord_token(rng: random.Random) -> str:
    return (
        rng.choice("MNO")
        + pick(rng, ALNUM, 23)
        + "."
        + pick(rng, URLSAFE, 6)
        + "."
        + pick(rng, URLSAFE, 27)
    )


def telegram_token(rng: random.Random) -> str:
    return pick(rng, DIG, 10) + ":" + "AA" + pick(rng, URLSAFE, 33)


def mailchimp_key(rng: random.Random) -> str:
    return pick(rng, HEX, 32) + "-us" + str(rng.randint(1, 21))


def azure_storage_key(rng: random.Random) -> str:
    return "AccountKey=" + base64.b64encode(rng.randbytes(64)).decode()


def square_secret(rng: random.Random) -> str:
    return "sq0csp-" + pick(rng, URLSAFE, 43)


def jwt(rng: random.Random) -> str:
    header = b64url(json.dumps({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    claims = {
        "sub": str(rng.randint(10**6, 10**9)),
        "name": rng.choice(["ci-bot", "alice", "deploy", "grafana"]),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
    }
    payload = b64url(json.dumps(claims).encode())
    return f"{header}.{payload}.{b64url(rng.randbytes(32))}"


def password(rng: random.Random) -> str:
    return pick(rng, ALNUM, rng.randint(3, 5)) + rng.choice("!#%^*-_") + pick(rng, ALNUM, 8)


def b64_secret(rng: random.Random) -> str:
    return base64.b64encode(rng.randbytes(rng.choice([24, 32, 48]))).decode()


def hex_secret(rng: random.Random) -> str:
    return pick(rng, HEX, rng.choice([32, 40, 64]))


PRIVATE_KEY_KINDS = ["RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"]


def private_key(rng: random.Random) -> str:
    label = rng.choice(PRIVATE_KEY_KINDS)
    body = base64.b64encode(rng.randbytes(rng.choice([96, 144, 192]))).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


# --- the sentences ------------------------------------------------------------------------

HOSTS = ["db.internal", "pg-staging.corp.local", "10.0.3.14", "redis.prod.svc", "mq.internal"]
USERS = ["admin", "deploy", "app", "svc_reports", "ci"]
DBS = ["orders", "billing", "analytics", "app"]

Template = Callable[[random.Random, str], str]

SENTENCES: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "aws-access-key": (
        aws_access_key,
        [
            "The staging deploy role uses access key {s} with the secret in 1Password.",
            "CI uploads artifacts to S3 with AWS_ACCESS_KEY_ID={s}",
            "If boto3 complains about credentials, export AWS_ACCESS_KEY_ID={s} first.",
            "Backups bucket: key id {s}, region eu-west-1, rotated quarterly.",
            "aws configure set aws_access_key_id {s} --profile staging",
        ],
    ),
    "aws-secret-key": (
        aws_secret_key,
        [
            'In settings.py we keep aws_secret_access_key = "{s}" for the reports job.',
            "The terraform backend reads aws_secret_key: '{s}' from the CI vars.",
            'boto3.client("s3", aws_secret_access_key="{s}") is how the uploader connects.',
        ],
    ),
    "github-token": (
        github_token,
        [
            "The release workflow pushes tags with the bot token {s}.",
            "Use GITHUB_TOKEN={s} when running the changelog script locally.",
            "For the private submodule, clone with {s} as the password.",
            "gh auth login --with-token <<< {s} sets up the runner.",
        ],
    ),
    "gitlab-token": (
        gitlab_token,
        [
            "Mirror job authenticates to GitLab with personal access token {s}.",
            "Set CI_JOB_PUSH_TOKEN={s} so the pipeline can tag releases.",
            "The renovate bot uses {s} (scope api, expires next year).",
        ],
    ),
    "slack-token": (
        slack_token,
        [
            "Alerts go to #oncall via the bot token {s}.",
            "SLACK_BOT_TOKEN={s} is needed by the notifier service.",
            "The standup reminder app posts with {s}; ask Dana before rotating it.",
        ],
    ),
    "slack-webhook": (
        slack_webhook,
        [
            "Deploy notifications are sent to {s}",
            "The nightly job posts its summary with curl -X POST {s}",
            "Grafana contact point for #alerts: {s}",
        ],
    ),
    "stripe-key": (
        stripe_key,
        [
            "Billing service uses Stripe key {s} in production.",
            "STRIPE_SECRET_KEY={s} must never be used in tests; use the test key.",
            "Webhook replays need the live key {s} and the endpoint secret.",
        ],
    ),
    "openai-key": (
        openai_key,
        [
            "The summariser calls the API with key {s}.",
            "OPENAI_API_KEY={s} is set on the eval runner.",
        ],
    ),
    "sendgrid-key": (
        sendgrid_key,
        [
            "Password-reset mails are sent through SendGrid with {s}.",
            "SENDGRID_API_KEY={s} lives in the mailer's env file.",
        ],
    ),
    "twilio-key": (
        twilio_key,
        [
            "SMS 2FA uses the Twilio key {s} for the EU account.",
            "TWILIO_API_KEY={s} is read by the notifications worker.",
        ],
    ),
    "npm-token": (
        npm_token,
        [
            "Publishing needs //registry.npmjs.org/:_authToken={s} in .npmrc",
            "The scoped packages are installed with //npm.pkg.example.com/:_authToken={s}",
        ],
    ),
    "pypi-token": (
        pypi_token,
        [
            "twine upload uses the project token {s}",
            "TWINE_PASSWORD={s} is set in the release job.",
        ],
    ),
    "discord-token": (
        discord_token,
        [
            "The community bot logs in with token {s}.",
            "DISCORD_TOKEN={s} goes in the bot's .env.",
        ],
    ),
    "telegram-token": (
        telegram_token,
        [
            "Ops alerts are mirrored to Telegram by the bot {s}.",
            "TELEGRAM_BOT_TOKEN={s} is needed for the alert relay.",
        ],
    ),
    "mailchimp-key": (
        mailchimp_key,
        [
            "Newsletter sync calls Mailchimp with {s}.",
            "MAILCHIMP_API_KEY={s} belongs to the marketing account.",
        ],
    ),
    "azure-storage-key": (
        azure_storage_key,
        [
            "Blob uploads use DefaultEndpointsProtocol=https;AccountName=exportsprod;{s};"
            "EndpointSuffix=core.windows.net",
            "The connection string is AccountName=logsarchive;{s}",
        ],
    ),
    "square-secret": (
        square_secret,
        ["Square OAuth for the POS integration uses application secret {s}."],
    ),
    "json-web-token": (
        jwt,
        [
            "To call the admin API by hand, send Authorization: Bearer {s}",
            "The service account's long-lived token is {s}; it never expires.",
            "Grafana provisioning uses the JWT {s} for the datasource.",
        ],
    ),
    "url-credentials": (
        password,
        [
            "The app connects with DATABASE_URL=postgres://{u}:{s}@{h}:5432/{d}",
            "Celery's broker is amqp://{u}:{s}@{h}:5672/ in staging.",
            "Cache: redis://{u}:{s}@{h}:6379/0 (db 0 is sessions).",
            "Clone the vendored fork with https://{u}:{s}@git.example.com/platform/fork.git",
            "SQLALCHEMY_DATABASE_URI = 'mysql+pymysql://{u}:{s}@{h}/{d}'",
            "Mongo for the analytics job: mongodb://{u}:{s}@{h}:27017/{d}?authSource=admin",
        ],
    ),
    "password-assignment": (
        password,
        [
            'The admin login for the staging dashboard is password = "{s}".',
            "DB_PASSWORD={s}",
            "postgres_password: {s}",
            "In docker-compose, POSTGRES_PASSWORD: '{s}' for the local stack.",
            "The keystore is opened with keystore_password={s} in gradle.properties.",
            'Set client_secret = "{s}" in the OAuth app config.',
        ],
    ),
    "high-entropy-assignment": (
        b64_secret,
        [
            "SESSION_SIGNING_KEY={s}",
            "export WEBHOOK_SIGNING_KEY={s}",
            "JWT_SIGNING_KEY: {s}",
            "encryption_key = '{s}'",
            'HMAC_KEY="{s}"',
        ],
    ),
    "high-entropy-hex-assignment": (
        hex_secret,
        [
            "API_TOKEN={s}",
            "export SENTRY_AUTH_TOKEN={s}",
            "master_key: {s}",
            "DATADOG_API_KEY={s}",
        ],
    ),
    "private-key": (
        private_key,
        [
            "The deploy key for the infra repo:\n{s}",
            "Use this key to ssh into the bastion:\n{s}\n(added to authorized_keys on 2024-03-01)",
            "Service TLS key, kept here until the vault migration:\n{s}",
        ],
    ),
}


def generate(seed: int = 7, per_kind: int = 16) -> list[dict[str, str]]:
    rng = random.Random(seed)
    items: list[dict[str, str]] = []
    for kind, (make, templates) in SENTENCES.items():
        for n in range(per_kind):
            secret = make(rng)
            template = templates[n % len(templates)]
            if "://{u}:{s}@" in template:  # a URL carries its password percent-encoded
                secret = quote(secret, safe="")
            text = template.format(
                s=secret, u=rng.choice(USERS), h=rng.choice(HOSTS), d=rng.choice(DBS)
            )
            items.append({"kind": kind, "text": text, "secret": secret})
    return items


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--per-kind", type=int, default=16)
    args = ap.parse_args()
    for item in generate(args.seed, args.per_kind):
        sys.stdout.write(json.dumps(item) + "\n")


if __name__ == "__main__":
    main()
