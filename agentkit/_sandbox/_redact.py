"""Secret redaction, applied to everything a tool returns before it leaves the sandbox.

Two nets: token *formats* that are secret wherever they appear (``hf_…``, ``sk-…``, PEM
blocks, JWTs …) and *assignments* whose key names a secret (``PASSWORD=…``,
``"api_key": "…"``, ``Authorization: Bearer …``). Benign look-alikes (commit SHAs, UUIDs,
AWS's documented ``…EXAMPLE`` keys) stay readable.
"""

from __future__ import annotations

import re

_FORMATS: list[tuple[str, re.Pattern[str]]] = [
    ("private-key", re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
        re.S)),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("hf-token", re.compile(r"\bhf_[A-Za-z0-9]{20,}")),
    ("hf-org-token", re.compile(r"\bapi_org_[A-Za-z0-9]{20,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)(?![A-Z0-9]*EXAMPLE)[A-Z0-9]{16}\b")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("stripe-key", re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("url-credentials", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
    ("auth-header", re.compile(
        r"(?i)(?<=authorization:)\s*(?:bearer|basic|token|digest)?\s*[A-Za-z0-9._~+/=\-]{8,}")),
    ("bearer", re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=\-]{12,}")),
]

# The key must *end* in the secret word: HF_TOKEN, db_password, aws_secret_access_key; not
# bos_token_id or max_tokens.
_SECRET_KEY = (
    r"(?:[A-Za-z0-9_.\-]*(?:pass(?:word|wd|phrase)?|secret|token|api[_\-]?key|apikey|"
    r"access[_\-]?key|private[_\-]?key|credentials?|auth[_\-]?key|session[_\-]?key|"
    r"client[_\-]?secret|secret[_\-]?key)(?![A-Za-z0-9_]))"
)
# KEY=value, KEY: value, "key": "value", Environment="KEY=value"; the value is replaced.
_ASSIGN = re.compile(
    rf"""(?ix)
    (?P<key>["']?{_SECRET_KEY}["']?)
    (?P<sep>\s*[:=]\s*)
    (?P<q>["']?)
    (?P<val>(?(q)[^"'\n]*|[^\s"',;}}\]]*))
    """
)
# A benign value that only looks secret: placeholders, booleans, references, paths.
_BENIGN_VALUE = re.compile(
    r"(?i)^(?:|true|false|yes|no|none|null|[\d.]+|\*+|<[^>]*>|\[[A-Z_]+\]|"
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|"
    r"\[REDACTED[^\]]*\]|[A-Za-z0-9_\-]*EXAMPLE[A-Za-z0-9_\-]*|/[^\s]*)$"
)
# Kubernetes Secret manifests carry base64 values under data:/stringData:.
_K8S_SECRET = re.compile(r"(?m)^kind:\s*Secret\s*$")
_K8S_DATA_LINE = re.compile(r"(?m)^(\s+[A-Za-z0-9_.\-]+:\s*)(\S.*)$")


def redact(text: str) -> str:
    """Return ``text`` with every secret replaced by ``[REDACTED:<kind>]``.

    >>> redact("HF_TOKEN=hf_abcdefghijklmnopqrstuvwx")
    'HF_TOKEN=[REDACTED:secret]'
    """
    if not text:
        return text
    for kind, pattern in _FORMATS:
        text = pattern.sub(f"[REDACTED:{kind}]", text)
    text = _ASSIGN.sub(_assignment, text)
    if _K8S_SECRET.search(text):
        text = _redact_k8s(text)
    return text


def _assignment(m: re.Match[str]) -> str:
    val = m.group("val")
    if _BENIGN_VALUE.match(val):
        return m.group(0)
    return f"{m.group('key')}{m.group('sep')}{m.group('q')}[REDACTED:secret]"


def _redact_k8s(text: str) -> str:
    out: list[str] = []
    in_data = False
    for line in text.split("\n"):
        stripped = line.strip()
        if re.match(r"^(data|stringData):\s*$", line):
            in_data = True
        elif line and not line[0].isspace():
            in_data = False
        elif in_data and stripped and not stripped.startswith("#"):
            line = _K8S_DATA_LINE.sub(r"\1[REDACTED:k8s-secret]", line)
        out.append(line)
    return "\n".join(out)


def is_secret_env(name: str) -> bool:
    """Whether an environment variable's *name* says it holds a secret."""
    return re.fullmatch(_SECRET_KEY, name, re.I) is not None or name.upper().endswith("_KEY")
