"""What redaction puts in place of a secret, exactly: the replacement text, what it keeps
(keys, quotes, prefixes, line breaks) and where each net stops."""

from __future__ import annotations

import pytest

from agentkit._sandbox._redact import redact, redact_env_file

KEY = "a1b2c3d4e5f6g7h8i9j0"  # 20 characters, letters and digits


def test_formats_keep_context_and_line_count() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabcd\n-----END RSA PRIVATE KEY-----"
    assert redact(f"x\n{pem}\ny") == "x\n[REDACTED:private-key]\n\n\n\ny"
    assert redact("Authorization: Bearer abcdefgh12345678") == \
        "Authorization: [REDACTED:auth-header]"
    assert redact("curl -H 'authorization=token zzzzzzzz9'") == \
        "curl -H 'authorization=[REDACTED:auth-header]'"
    assert redact("https://user:pa55w0rd@host/x") == "https://[REDACTED:url-credentials]@host/x"
    assert redact(f"hf_{KEY}") == "[REDACTED:hf-token]"


def test_assignments_keep_key_separator_and_opening_quote() -> None:
    assert redact(f"DB_PASSWORD={KEY}") == "DB_PASSWORD=[REDACTED:secret]"
    assert redact(f'"api_key": "{KEY}"') == '"api_key": "[REDACTED:secret]"'
    assert redact(f"secret: {KEY}, next: 1") == "secret: [REDACTED:secret], next: 1"
    assert redact(f"token = '{KEY}'") == "token = '[REDACTED:secret]'"
    assert redact("PASSWORD=changeme") == "PASSWORD=[REDACTED:secret]"
    assert redact(f"serve --api-key {KEY} --port 8000") == \
        "serve --api-key [REDACTED:secret] --port 8000"


@pytest.mark.parametrize("benign", ["PASSWORD=", "TOKEN=true", "secret: null", "PASSWORD=***",
                                    "API_KEY=<your-key>", "TOKEN=${HF_TOKEN}",
                                    "PASSWORD_FILE=/run/secrets/db", "max_tokens=4096",
                                    "TOKEN=[REDACTED:secret]"])
def test_benign_values_stay(benign: str) -> None:
    assert redact(benign) == benign


def test_a_value_continued_on_the_next_line_keeps_its_line_breaks() -> None:
    text = f"Environment=API_KEY={KEY}\\\n{KEY}\nNEXT=1"
    assert redact(text) == "Environment=API_KEY=[REDACTED:secret]\\\n\nNEXT=1"


def test_netrc_password() -> None:
    assert redact("machine h.example login bob password s3cr3tpw") == \
        "machine h.example login bob password [REDACTED:secret]"
    # no machine or login: not netrc, but a line that is a key and a value (redis.conf's
    # `requirepass v`) is a directive; inside a sentence it is neither
    assert redact("password s3cr3tpw") == "password [REDACTED:secret]"
    assert redact("see password s3cr3tpw here") == "see password s3cr3tpw here"


def test_kubernetes_secret_data_only() -> None:
    text = ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  user: YWRtaW4=\n"
            "  # a comment stays\n  pass: cGFzcw==\ntype: Opaque\nother:\n  key: visible\n")
    assert redact(text) == (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n"
        "  user: [REDACTED:k8s-secret]\n  # a comment stays\n  pass: [REDACTED:k8s-secret]\n"
        "type: Opaque\nother:\n  key: visible\n")
    grep_out = "/m.yaml:2:kind: Secret\n/m.yaml:3:stringData:\n/m.yaml:4:  token: abc\n"
    assert redact(grep_out) == ("/m.yaml:2:kind: Secret\n/m.yaml:3:stringData:\n"
                                "/m.yaml:4:  token: [REDACTED:k8s-secret]\n")
    plain = "kind: ConfigMap\ndata:\n  user: YWRtaW4=\n"
    assert redact(plain) == plain


@pytest.mark.parametrize("value,redacted", [
    ("a1b2c3d4e5f6g7h8", True), ("a1b2c3d4e5f6g7h", False), ("abcdefghijklmnopq", False),
    ("1234567890123456", False), ("http://a1b2c3d4e5f6g7h8", False),
    ("/opt/a1b2c3d4e5f6g7h8", False), ("A1B2C3D4E5F6G7H8", True),
])
def test_env_files_redact_credential_looking_values(value: str, redacted: bool) -> None:
    out = redact_env_file(f"MODEL_REV={value}\n")
    assert out == ("MODEL_REV=[REDACTED:env-file]\n" if redacted else f"MODEL_REV={value}\n")
    assert redact_env_file(f'export X="{value}"  # c\n').startswith(
        'export X="[REDACTED:env-file]' if redacted else f'export X="{value}')


def test_long_texts_are_redacted_the_same() -> None:
    text = "x" * 5000 + f"\nPASSWORD={KEY}\n"
    assert redact(text) == "x" * 5000 + "\nPASSWORD=[REDACTED:secret]\n"
    assert redact(text) == redact(text)
