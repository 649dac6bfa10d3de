"""Secrets recognised by their own shape, wherever they appear: token prefixes (``hf_…``,
``sk-…``), key blocks (PEM, SSH2, PuTTY), password hashes, a URL's user info, a JSON Web
Key's private members. The key-name rules (``PASSWORD=…``) are in ``_redact.py``."""

from __future__ import annotations

import re
from collections.abc import Callable

_KEY_BLOCK = r"(?:-----|---- )BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?(?:-----| ----)"

FORMATS: list[tuple[str, re.Pattern[str]]] = [
    # PEM, and RFC 4716's SSH2 framing (`---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`)
    ("private-key", re.compile(
        _KEY_BLOCK + r".*?(?:(?:-----|---- )END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?"
        r"(?:-----| ----)|\Z)", re.S)),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("hf-token", re.compile(r"\bhf_[A-Za-z0-9]{20,}")),
    ("hf-org-token", re.compile(r"\bapi_org_[A-Za-z0-9]{20,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
    ("vault-token", re.compile(r"\bhv[sbr]\.[A-Za-z0-9_\-]{20,}")),
    ("docker-auth", re.compile(r"(?i)(\"auth\"\s*:\s*\")[A-Za-z0-9+/=]{8,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)(?![A-Z0-9]*EXAMPLE)[A-Z0-9]{16}\b")),
    # The prefixes below are what identifies each service's tokens; lengths have changed
    # over the years, so a prefix with 20+ token characters after it is enough.
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}")),
    ("google-oauth-token", re.compile(r"\bya29\.[0-9A-Za-z_\-]{20,}")),
    ("stripe-key", re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("url-credentials", re.compile(r"(?<=://)[^/\s:@]*:[^/\s]+(?=@)")),
    # a token as the user part alone (https://TOKEN@host, a Sentry DSN's key)
    ("url-credentials", re.compile(
        r"(?<=://)(?=[^/\s:@]*\d)(?=[^/\s:@]*[A-Za-z])[A-Za-z0-9_\-.~%+]{16,}(?=@)")),
    ("url-signature", re.compile(
        r"(?i)(?<=[?&])((?:sig|signature|x-amz-signature|x-goog-signature|access_token|"
        r"client_secret)=)[^&\s\"'#]{8,}")),
    ("auth-header", re.compile(
        r"(?i)(?<=authorization)([\"']?\s*[:=]\s*[\"']?)"
        r"(?:(?:bearer|basic|token|digest)\s+)?[A-Za-z0-9._~+/=\-]{8,}")),
    ("bearer", re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=\-]{12,}")),
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{30,}")),
    ("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{30,}")),
    ("digitalocean-token", re.compile(r"\bdo[por]_v1_[a-f0-9]{32,}")),
    ("tailscale-key", re.compile(r"\btskey-[a-z]+-[A-Za-z0-9_\-]{10,}")),
    ("age-key", re.compile(r"\bAGE-SECRET-KEY-1[0-9A-Z]{40,}")),
    ("databricks-token", re.compile(r"\bdapi[a-f0-9]{20,}")),
    ("nvidia-api-key", re.compile(r"\bnvapi-[A-Za-z0-9_\-]{20,}")),
    ("grafana-token", re.compile(r"\bgl(?:sa|c)_[A-Za-z0-9_\-]{20,}")),
    ("replicate-token", re.compile(r"\br8_[A-Za-z0-9]{20,}")),
    ("groq-key", re.compile(r"\bgsk_[A-Za-z0-9]{20,}")),
    ("shopify-token", re.compile(r"\bshp(?:at|ss|ca|pa)_[A-Za-z0-9]{20,}")),
    ("openai-org", re.compile(r"\borg-(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{20,}")),
    ("slack-webhook", re.compile(r"(?<=hooks\.slack\.com/services/)[A-Za-z0-9/]{20,}")),
    ("azure-account-key", re.compile(r"(?i)(?<=AccountKey=)[A-Za-z0-9+/=]{20,}")),
    ("kube-client-key", re.compile(r"(?<=client-key-data: )[A-Za-z0-9+/=]{20,}")),
    # crypt(3) and Apache hashes (htpasswd, shadow copies): offline-crackable
    ("password-hash", re.compile(
        r"\$(?:apr1|1|2[abxy]?|5|6|y|gy|7|argon2(?:i|d|id))\$[./A-Za-z0-9$=,+\-]{8,}")),
]

# The literal each format above needs (its prefix), for the trigger net in ``_redact.py``.
TRIGGERS = (r"sk-|hf_|api_org_|gh[pousr]_|github_pat_|glpat-|xox|akia|asia|aiza|ya29\.|"
            r"sg\.|npm_|pypi-|_v1_|tskey-|age-secret|dapi|nvapi-|gl(?:sa|c)_|r8_|gsk_|shp|"
            r"org-|hooks\.slack|accountkey|k_live_|eyj|://|authoriz|bearer|hv[sbr]\.|"
            r"\"auth\"|sig=|signature=|access_token=|\$[0-9a-z]{1,7}\$|begin |putty|\"kty\"")

# PuTTY's .ppk: the lines after `Private-Lines: N` are the private key; its MAC is keyed by
# the passphrase (an offline guessing oracle), so it goes too.
_PPK = re.compile(r"(?ms)^(Private-Lines:[ \t]*\d+[ \t]*\r?\n)(.*?)(?=^Private-(?:MAC|Hash)|\Z)")
_PPK_MAC = re.compile(r"(?m)^(Private-(?:MAC|Hash):[ \t]*)\S+")
# A JSON Web Key's private members (RFC 7518 §6.2.2, §6.3.2, §6.4.1).
_JWK_PRIVATE = re.compile(r'("(?:d|p|q|dp|dq|qi|k|r|t)"\s*:\s*")[A-Za-z0-9_\-+/=]{8,}')


def redact_structured(text: str) -> str:
    """Key files whose secret part has no prefix of its own (PuTTY, JWK)."""
    if "Private-Lines" in text and "PuTTY-User-Key-File" in text:
        text = _PPK.sub(lambda m: m.group(1) + "[REDACTED:private-key]"
                        + "\n" * m.group(2).count("\n"), text)
        text = _PPK_MAC.sub(r"\1[REDACTED:private-key]", text)
    if '"kty"' in text:
        text = _JWK_PRIVATE.sub(r"\1[REDACTED:private-key]", text)
    return text


def format_sub(kind: str) -> Callable[[re.Match[str]], str]:
    # A pattern's first group, when it has one, is context to keep (`Authorization: `).
    # Line breaks inside a match (a PEM block) are kept so that line numbers still hold.
    return lambda m: ((m.group(1) or "" if m.re.groups else "") + f"[REDACTED:{kind}]"
                      + "\n" * m.group(0).count("\n"))
