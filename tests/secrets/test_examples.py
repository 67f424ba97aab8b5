"""What only shows a credential's format is stored, what could be one is still refused: vendors'
documented example keys, names where `key` or `token` is not a credential, and tokens of a
service's format with nothing random in them. All values that are not a vendor's published
example are FAKE."""

from __future__ import annotations

import pytest

from memls import secrets
from memls.errors import InvalidInput
from memls.secrets import forms

# AWS's documented example keys, as its documentation and SDKs print them
AWS_DOCUMENTED = [
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    'AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    "[default]\naws_access_key_id = AKIAI44QH8DHBEXAMPLE\n"
    "aws_secret_access_key = je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE AWS_SECRET_ACCESS_KEY="
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "Use the AWS example key AKIAIOSFODNN7EXAMPLE from the docs in unit tests.",
]

# the same places with keys that could be real: the rule reads the value, not the place
AWS_REAL_LOOKING = [
    ("aws_access_key_id = AKIAQ3EGT7QW2M5XZ4NA", "AKIAQ3EGT7QW2M5XZ4NA"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYq8Rz2LmN",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYq8Rz2LmN",
    ),
    (
        "[default]\naws_access_key_id = AKIAJ5TQ2V7XW3LK9RMB\n"
        "aws_secret_access_key = Tq7vK2mZ9xRw4bN8pL3cY6hJ1sD5fG0aQeUiOtWy",
        "AKIAJ5TQ2V7XW3LK9RMB",
    ),
]


@pytest.mark.parametrize("text", AWS_DOCUMENTED)
def test_aws_documented_example_keys_are_stored(text):
    assert secrets.find(text) == []
    assert secrets.screen(text, "text", redact_it=False) == text


@pytest.mark.parametrize(("text", "secret"), AWS_REAL_LOOKING)
def test_a_key_in_the_same_place_that_could_be_real_is_refused(text, secret):
    found = secrets.find(text)
    assert secret in [text[f.start : f.end] for f in found]
    with pytest.raises(InvalidInput):
        secrets.screen(text, "text", redact_it=False)


# jwt.io's example token, signed with the secret the page publishes (`your-256-bit-secret`)
JWT_IO = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwia"
    "WF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


def test_a_token_signed_with_a_published_example_secret_is_stored():
    assert secrets.find(f"SESSION_TOKEN={JWT_IO}") == []


def test_the_same_token_with_another_signature_is_refused():
    header_payload = JWT_IO.rsplit(".", 1)[0]
    forged = f"{header_payload}.q7Rt2Zx9Lm4Kp8Vw3Nb6Yc1Hd5Jf0Gs2Tq7vK2mZ9xR"
    (finding,) = secrets.find(f"SESSION_TOKEN={forged}")
    assert finding.kind == "json-web-token"


# a name where `key`, `token` or `secret` is not a credential
NOT_CREDENTIAL_NAMES = [
    'public_key = "M0XvqZjxTW3xvboSRt5Mh3dAwVtRMflhbmuaptt0Azn"',
    'publicToken = "M0XvqZjxTW3xvboSRt5Mh3dAwVtRMflhbmuaptt0Azn"',
    "primaryKey=0DNRUQxA71p2Td8VKqxryo1nIj7BRd",
    "foreignKey=03Q2ybv097SHzxgQA6TCvY4dhKMlRd",
    "csrf-token=ZQ9QsTXUuSnH6av1Ib8pp1xxXHU0BScJXj675eVq30XYqaNUDqN9Nifp28uwCDydesokF5NSAllsNdV4",
    "issuerKeyHash=OUttYpATIk27f4t3tGolUByxRmXBYQ",
    "key_down_event=0DVbpag1xYKiuMw7TpHD8BHbNdZU0N",
    "secret_length = X25519.secret_length",
    'LLM_SECRET_NAME = "ORDERS-GPT4-API-KEY"',
]

# ... and the names that do name one, with the same values
CREDENTIAL_NAMES = [
    'private_key = "M0XvqZjxTW3xvboSRt5Mh3dAwVtRMflhbmuaptt0Azn"',
    'accessToken = "M0XvqZjxTW3xvboSRt5Mh3dAwVtRMflhbmuaptt0Azn"',
    "apiKey=0DNRUQxA71p2Td8VKqxryo1nIj7BRd",
    "SECRET_KEY_BASE=0J599dTCZWZYvRSZeyx4Ag8SsaxTmknuj64AX6VM2ewMuBY6rfNcAKEI",
    "client_secret=OUttYpATIk27f4t3tGolUByxRmXBYQ",
]


@pytest.mark.parametrize("text", NOT_CREDENTIAL_NAMES)
def test_a_name_that_is_not_a_credential_is_stored(text):
    assert secrets.find(text) == []


@pytest.mark.parametrize("text", CREDENTIAL_NAMES)
def test_a_credential_named_as_such_is_refused(text):
    assert secrets.find(text) != []


# a service's token format with nothing random in it
HOLLOW_TOKENS = [
    "xoxb-12345-abcd234",
    "xoxe.xoxp-1-initial",
    "xoxe.xoxp-1-SlackAppConfigurationAccessTokenHere",
]


@pytest.mark.parametrize("text", HOLLOW_TOKENS)
def test_a_token_with_nothing_random_in_it_is_stored(text):
    assert secrets.find(text) == []


def test_a_token_of_the_same_service_with_a_random_part_is_refused():
    token = "xoxb-422460291052-4185755453269-YJ2gClNbc7Hrd0APsmYaUSRC"
    (finding,) = secrets.find(f"the bot posts with {token}")
    assert finding.kind == "slack-token"


# values marked `SAMPLE` or `FAKE`, as TruffleHog's and detect-secrets' allowlists read them
# (FAKE otherwise)
SAMPLE_MARKED = [
    "stripe: sk_live_SAMPLE9vX4mZ8rW1pL5nB7cY3",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEYQ9",
    "token: ghp_SAMPLEk2Tq9vX4mZ8rW1pL5nB7cY3hJ6dF0a",
    "api_key = 'Sample7Tq9vX4mZ8rW1pL5nB7cY3hJ6d'",
]
SAMPLE_UNMARKED = [
    ("stripe: sk_live_Q7RKT9vX4mZ8rW1pL5nB7cY3", "sk_live_Q7RKT9vX4mZ8rW1pL5nB7cY3"),
    (
        "token: ghp_Q7RK2Tq9vX4mZ8rW1pL5nB7cY3hJ6dF0aWx",
        "ghp_Q7RK2Tq9vX4mZ8rW1pL5nB7cY3hJ6dF0aWx",
    ),
]


@pytest.mark.parametrize("text", SAMPLE_MARKED)
def test_a_value_marked_sample_is_stored(text):
    assert secrets.find(text) == []


@pytest.mark.parametrize(("text", "secret"), SAMPLE_UNMARKED)
def test_the_same_place_without_the_marker_is_refused(text, secret):
    assert secret in [text[f.start : f.end] for f in secrets.find(text)]


# code that reads the secret from elsewhere, assigned to a secret's name
CODE_REFERENCES = [
    "CLIENT_SECRET = settings.GITHUB_API_SECRET",
    "api_key = process.env.API_KEY",
    "password = config.dbPassword",
    "secret_key: Rails.application.credentials.secret_key_base",
    "db_password = self::DB_PASSWORD",
    'sb.append("MasterUserPassword: " + getMasterUserPassword() + ",");',
]
# the same places holding a value with a digit or a character no name has: a secret
NOT_CODE = [
    ("SECRET_KEY = Xk9.pQ2mZvR7wL", "Xk9.pQ2mZvR7wL"),
    ("password = hunter2.Xq9", "hunter2.Xq9"),
    ("api_key = q8Rz2LmN.Tq7vK2mZ9xRw4bN8pL3c", "q8Rz2LmN.Tq7vK2mZ9xRw4bN8pL3c"),
    ('api_key = getKey("sk_live_Q7RKT9vX4mZ8rW1pL5nB7cY3")', "sk_live_Q7RKT9vX4mZ8rW1pL5nB7cY3"),
    ("password = decrypt(q8Rz2LmNTq7vK2mZ9x)", "q8Rz2LmNTq7vK2mZ9x"),
]


# what anyone may read of a thing, or code around a name, where a reading expects a secret
NOT_SECRETS = [
    # a digest named by its algorithm (an image id, an image pinned by digest)
    'ImageID: "SHA256:AP3kQ7RzT2vKxw9LpN4bH8cY3jD6fG1aE5sUoIiPq0Wn"',
    "image: https://registry.internal:4443/team/api@sha256:"
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    # a cloud resource's name
    'IAMUserChangePassword = "arn:aws:iam::aws:policy/IAMUserChangePassword"',
    # an identifier in words with an acronym before them, where a token form matches
    "kind: APDosLogConf",
    # a name closing the code around it
    "new FacebookStrategy({clientSecret:config})",
]
# the same places holding what could be a secret
STILL_SECRETS = [
    ('ImageID: "AP3kQ7RzT2vKxw9LpN4bH8cY3jD6fG1aE5s"', "AP3kQ7RzT2vKxw9LpN4bH8cY3jD6fG1aE5s"),
    ("url = https://deploy:4443Qx9z@registry.internal/api", "4443Qx9z"),
    ("kind: AP6xK2mZ9qR4tWvB", "AP6xK2mZ9qR4tWvB"),
    ('db_password = "arm:aws:Qx9zK2mZ9qR4tWvB7nL3"', "arm:aws:Qx9zK2mZ9qR4tWvB7nL3"),
    ('new FacebookStrategy({clientSecret:"q8Rz2LmNTq7vK2mZ9x"})', "q8Rz2LmNTq7vK2mZ9x"),
]


# values in words that ask to be replaced, in a secret's place
ASK_TO_BE_REPLACED = [
    "gcp_secret = your_private_key_id_placeholder_here1234",
    "OPENAI_API_KEY=sk-proj-REPLACE_WITH_YOUR_KEY",
    'api_token: "YourApiTokenHere2024"',
    "DB_PASSWORD=placeholder-9",
    'client_secret = "replace-me-with-a-secret-42"',
]
# the same places holding what could be a secret, `your` or `replace` inside a random run
NOT_ASKING = [
    ("gcp_secret = Qx9zyourK2mZ9qR4tWvB7nL3pH6", "Qx9zyourK2mZ9qR4tWvB7nL3pH6"),
    ("OPENAI_API_KEY=sk-proj-Tq9vX4mZ8rW1pL5nB7cY3hJ6dF0aWxT3BlbkFJq8Rz2LmN", "sk-proj-"),
    ('client_secret = "replaceable9Xk2mQ7vT4w"', "replaceable9Xk2mQ7vT4w"),
]


# a slot a format or a template fills, or a reference escaped for Docker Compose, where a
# password goes
SLOTS_AND_ESCAPES = [
    'dsn := fmt.Sprintf("postgres://%s:%s@%s:%d/%s", user, pass, host, port, db)',
    'DSN = "mysql://%(user)s:%(password)s@db.internal/app" % settings',
    'BROKER_URL = "amqp://admin:%s@rabbit.internal:5672"',
    "CACHE_URL=redis://app:#{redis-password}#@cache.internal:6379",
    "healthcheck: pg_isready --username=app --password=$$POSTGRES_PASSWORD",
    'command: mysqladmin ping --user=app --password="$$DB_PASSWORD"',
]
# the same places holding what could be a password
SLOTS_FILLED = [
    ("dsn = 'postgres://app:Tq7vK2mZ9xRw@db.internal:5432/app'", "Tq7vK2mZ9xRw"),
    ('BROKER_URL = "amqp://admin:%sQx9zK2mZ9qR4@rabbit.internal:5672"', "%sQx9zK2mZ9qR4"),
    ("CACHE_URL=redis://app:#q8Rz2LmN7#@cache.internal:6379", "#q8Rz2LmN7#"),
    ("healthcheck: pg_isready --username=app --password=q8Rz$$2LmN7vK", "q8Rz$$2LmN7vK"),
]


# the word of the name a value is given to, written in as the value
NAMES_ITSELF = [
    'mysql --host=localhost --user=root --password="password"',
    'spring.datasource.password="password"',
    "SECRET_TOKEN: token",
]
NAMED_OTHERWISE = [
    ('mysql --host=localhost --user=root --password="Tq7vK2mZ9xRw"', "Tq7vK2mZ9xRw"),
    ('spring.datasource.password="q8Rz2LmN7vK2"', "q8Rz2LmN7vK2"),
]


def test_a_name_that_only_ends_in_the_value_is_not_its_own_word():
    assert not forms.names_itself('db_password="password1"', "password1")
    assert not forms.names_itself('db_pass="password"', "password")
    assert forms.names_itself('dbPassword = "password"', "password")


# masked, blank or self-describing values in a token's or a URL's place
STANDS_FOR_ONE = [
    "MONGO_URL=mongodb://app:xxx@mongo.internal:27017/orders",
    "DATABASE_URL=postgres://app:****@db.internal:5432/app",
    '"password": "pscale_pw_0000000000000000000000000000000000000000000"',
    "MAILGUN_KEY=key-00000000000000000000000000000000",
    "ibmcloud login --apikey=my_ibm_cloud_api_key_here_Q7x9Kz2mR4tW",
    'cmd += " --db.password=" + password + " --db.url=" + url;',
]
# the same places with values that could be real
STILL_REAL = [
    ("MONGO_URL=mongodb://app:x7Kq9zR2@mongo.internal:27017/orders", "x7Kq9zR2"),
    (
        '"password": "pscale_pw_Qx9zK2mZ9qR4tWvB7nL3pH6Tq7vK2mZ9xRw4bN8pL3c"',
        "pscale_pw_Qx9zK2mZ9qR4tWvB7nL3pH6Tq7vK2mZ9xRw4bN8pL3c",
    ),
    ("MAILGUN_KEY=key-3f9a2c7e1b8d4f6a0c5e9b2d7a1f4c8e", "key-3f9a2c7e1b8d4f6a0c5e9b2d7a1f4c8e"),
    ('cmd += " --db.password=Qx9zK2mZ9qR4tW --db.url=" + url;', "Qx9zK2mZ9qR4tW"),
]


def test_random_values_are_neither_slots_blank_nor_asking():
    # 2,000 random keys of a base64url alphabet: none reads as any of these kinds
    import random
    import string

    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + "_-"
    for _ in range(2000):
        key = "".join(rng.choice(alphabet) for _ in range(40))
        assert not forms.is_reference(key)
        assert not forms.is_blank(key)
        assert not forms.asks_to_be_replaced(key)
        assert not forms.url_password_stands_for_one(f"postgres://app:{key[:16]}@db:5432/app")


# a query string's plain word, a name or a path in words that names a secret, an IP address,
# and a plain word with a method called on it, each given to a secret's name
IN_THEIR_PLACE = [
    'String query = "password=guest&user=reader";',
    'url = "https://example.org/login?secret=visitor;lang=en"',
    'static final String KEYSTORE_PASSWORD = "keyStorePassword";',
    'private static final String RESET_SECRET = "/accounts/resetAccountSecret";',
    'db_secret = "fd12:3456:789a:1::42"',
    'server_secret = "10.20.30.40"',
    'char[] passwordChars = "password".toCharArray();',
]
# the same places with values that could be real
STILL_REAL_THERE = [
    ('String query = "password=Gq7#vR2mXk9p&user=reader";', "Gq7#vR2mXk9p"),
    ('url = "https://example.org/login?secret=Zt8qW3nVb6Lc;lang=en"', "Zt8qW3nVb6Lc"),
    ('static final String KEYSTORE_PASSWORD = "k3yS7oreP4ss!9";', "k3yS7oreP4ss!9"),
    ('apiKeyHint = "Hx9Kq2Lm7Pv4Rt8Wz3Nb"', "Hx9Kq2Lm7Pv4Rt8Wz3Nb"),
    ("_password=CorrectHorseBatteryStaple", "CorrectHorseBatteryStaple"),
    ('db_password = "correct horse battery staple"', "correct horse battery staple"),
    ('static final String KEYSTORE_PASSWORD = "SunflowerGardenGate";', "SunflowerGardenGate"),
    ('char[] passwordChars = "Vb6Lc2Zt8qW3".toCharArray();', "Vb6Lc2Zt8qW3"),
]


@pytest.mark.parametrize(("text", "secret"), STILL_REAL_THERE)
def test_a_value_that_could_be_real_there_is_refused_and_alone(text, secret):
    found = [text[f.start : f.end] for f in secrets.find(text)]
    assert secret in found  # the value alone: not the next pair, not the variable's name


def test_a_query_value_ends_at_the_next_pair():
    assert forms.before_next_pair("guest&user=reader") == "guest"
    assert forms.before_next_pair("visitor;lang=en") == "visitor"
    assert forms.before_next_pair("a&b") == "a&b"  # no `name=` after it: part of the value


def test_random_values_are_neither_words_nor_addresses():
    import random
    import string

    rng = random.Random(11)
    alphabet = string.ascii_letters + string.digits
    for _ in range(2000):
        key = "".join(rng.choice(alphabet) for _ in range(20))
        assert not forms.names_a_secret(key)
        assert not forms.is_public(key)
    for word in ("Tr0ub4dor&3", "correcthorse99", "QwXzKpTrVb", "CorrectHorseBatteryStaple"):
        assert not forms.names_a_secret(word)
    for name in ("trustStorePassword", "/users/resetUserPassword", "HTTPServerKey"):
        assert forms.names_a_secret(name)


#: each kind of value that is no secret, in a secret's place, beside the same places holding
#: what could be one (and the part a finding must cover)
KINDS = {
    "code that reads a secret from elsewhere": (CODE_REFERENCES, NOT_CODE),
    "a digest, an identifier or a name in code": (NOT_SECRETS, STILL_SECRETS),
    "a value that asks to be replaced": (ASK_TO_BE_REPLACED, NOT_ASKING),
    "a format slot or an escaped reference": (SLOTS_AND_ESCAPES, SLOTS_FILLED),
    "a value that is its own key's word": (NAMES_ITSELF, NAMED_OTHERWISE),
    "a masked, blank or self-describing value": (STANDS_FOR_ONE, STILL_REAL),
    "a name of a secret, an address or a query's plain word": (IN_THEIR_PLACE, STILL_REAL_THERE),
}


@pytest.mark.parametrize(
    "text", [pytest.param(t, id=f"{kind}: {t}") for kind, (no, _) in KINDS.items() for t in no]
)
def test_a_value_of_a_kind_that_is_no_secret_is_stored(text):
    assert secrets.find(text) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [pytest.param(t, v, id=f"{kind}: {t}") for kind, (_, yes) in KINDS.items() for t, v in yes],
)
def test_what_could_be_a_secret_in_the_same_place_is_refused(text, secret):
    assert any(secret in text[f.start : f.end] for f in secrets.find(text))
