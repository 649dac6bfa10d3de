"""Secrets recognised by their own shape, wherever they appear: token prefixes (``hf_…``,
``sk-…``), key blocks (PEM, SSH2, PuTTY), password hashes, a URL's user info, a JSON Web
Key's private members. The key-name rules (``PASSWORD=…``) are in ``_redact.py``."""

from __future__ import annotations

from collections.abc import Callable

from ... import _regex as re  # re, its compiled patterns kept on disk (_regex.py)

# A private key block's framing: PEM (PGP's `PRIVATE KEY BLOCK` too) and RFC 4716's SSH2
# (`---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`); the copies' tail windows use them too.
# In any case: ``-----begin rsa private key-----`` is the same block to a reader (issue 28, E2).
KEY_BEGIN = r"(?i:(?:-----|---- )BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?(?:-----| ----))"
KEY_END = r"(?i:(?:-----|---- )END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?(?:-----| ----))"

FORMATS: list[tuple[str, re.Pattern[str]]] = [
    ("private-key", re.compile(rf"{KEY_BEGIN}.*?(?:{KEY_END}|\Z)", re.S)),
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
    ("google-oauth-token", re.compile(r"\bya29\.[0-9A-Za-z_\-.]{20,}")),
    ("stripe-key", re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("url-credentials", re.compile(r"(?<=://)[^/\s:@]*:[^/\s]+(?=@)")),
    # a token as the user part alone (https://TOKEN@host, a Sentry DSN's key)
    ("url-credentials", re.compile(
        r"(?<=://)(?=[^/\s:@]*\d)(?=[^/\s:@]*[A-Za-z])[A-Za-z0-9_\-.~%+]{16,}(?=@)")),
    # query parameters that carry credentials (also after an HTML- or JSON-escaped &)
    ("url-signature", re.compile(
        r"(?i)(?:(?<=[?&;])|(?<=\\u0026))((?:sig|signature|x-amz-signature|x-goog-signature|"
        r"x-amz-credential|access_token|client_secret|key|api_key|apikey|token|auth|code|"
        r"password|secret)=)[^&\s\"'#\\]{8,}")),
    ("webhook-token", re.compile(
        r"(?<=discord\.com/api/webhooks/)\d+/[A-Za-z0-9_\-]{20,}|"
        r"(?<=discordapp\.com/api/webhooks/)\d+/[A-Za-z0-9_\-]{20,}")),
    ("telegram-bot-token", re.compile(
        r"\bbot\d{6,}:[A-Za-z0-9_\-]{20,}|\b\d{8,10}:AA[A-Za-z0-9_\-]{30,}")),
    ("auth-header", re.compile(
        r"(?i)(?<=authorization)([\"']?\s*[:=]\s*[\"']?|"
        # nginx proxy_set_header Authorization "Basic …"; a scheme word is then required
        r"[\"']?[ \t]+[\"']?(?=(?:bearer|basic|token|digest)[ \t]))"
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
    # more services' documented prefixes: Fireworks, Perplexity, Stripe test, xAI, LangSmith,
    # Slack app, Pinecone, Docker Hub PAT, GitLab runner/deploy, 1Password service, Sentry,
    # Doppler, PlanetScale, RunPod, Hugging Face org
    ("service-token", re.compile(
        r"\b(?:fw_|pplx-|[sr]k_test_|xai-|lsv2_(?:pt|sk)_|xapp-\d-|pcsk_|dckr_pat_|glrt-|gldt-|"
        r"ops_|sntrys_|dp\.(?:st|pt|ct)\.|pscale_(?:tkn|pw)_|rpa_|hf_org_)[A-Za-z0-9_\-.]{16,}")),
    ("openai-org", re.compile(r"\borg-(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{20,}")),
    ("slack-webhook", re.compile(r"(?<=hooks\.slack\.com/services/)[A-Za-z0-9/]{20,}")),
    ("azure-account-key", re.compile(r"(?i)(?<=AccountKey=)[A-Za-z0-9+/=]{20,}")),
    ("kube-client-key", re.compile(r"(?<=client-key-data: )[A-Za-z0-9+/=]{20,}")),
    # crypt(3) and Apache hashes (htpasswd, shadow copies): offline-crackable
    ("password-hash", re.compile(
        r"\$(?:apr1|1|2[abxy]?|5|6|y|gy|7|argon2(?:i|d|id)|scrypt|pbkdf2(?:-sha\d+)?|"
        r"bcrypt-sha256)\$[./A-Za-z0-9$=,+\-]{8,}|"
        r"\bpbkdf2_sha\d+\$\d+\$[./A-Za-z0-9$=+\-]{8,}|"  # Django
        r"\{(?:S?SHA\d*|S?MD5|CRYPT|PBKDF2[\w-]*)\}[./A-Za-z0-9$=+\-]{8,}")),  # LDAP, htpasswd
]

# The literals (lower case) one of which each format's match contains: a format whose
# literals are all absent from a text is not run on it (45 scans of a large file otherwise).
_HINTS: dict[str, tuple[str, ...]] = {
    "private-key": ("private key",), "anthropic-key": ("sk-ant-",), "openai-key": ("sk-",),
    "hf-token": ("hf_",), "hf-org-token": ("api_org_",), "github-token": ("gh", "github_pat_"),
    "gitlab-token": ("glpat-",), "slack-token": ("xox",), "vault-token": ("hvs.", "hvb.", "hvr."),
    "docker-auth": ('"auth"',), "aws-access-key": ("akia", "asia"), "google-api-key": ("aiza",),
    "google-oauth-token": ("ya29.",), "stripe-key": ("k_live_",), "jwt": ("eyj",),
    "url-credentials": ("//",), "url-signature": ("=",), "webhook-token": ("webhooks/",),
    "telegram-bot-token": (":",), "auth-header": ("authorization",), "bearer": ("bearer ",),
    "sendgrid-key": ("sg.",), "npm-token": ("npm_",), "pypi-token": ("pypi-",),
    "digitalocean-token": ("_v1_",), "tailscale-key": ("tskey-",), "age-key": ("age-secret",),
    "databricks-token": ("dapi",), "nvidia-api-key": ("nvapi-",), "grafana-token": ("gls", "glc_"),
    "replicate-token": ("r8_",), "groq-key": ("gsk_",), "shopify-token": ("shp",),
    "service-token": ("fw_", "pplx-", "_test_", "xai-", "lsv2_", "xapp-", "pcsk_", "dckr_",
                      "glrt-", "gldt-", "ops_", "sntrys_", "dp.", "pscale_", "rpa_", "hf_org_"),
    "openai-org": ("org-",), "slack-webhook": ("hooks.slack",),
    "azure-account-key": ("accountkey",), "kube-client-key": ("client-key-data",),
    "password-hash": ("$", "pbkdf2", "{"),
}


def formats_for(text: str) -> list[tuple[str, re.Pattern[str]]]:
    """The formats that can match ``text`` (those with a literal of theirs in it)."""
    low = text.lower()
    return [(kind, p) for kind, p in FORMATS if any(h in low for h in _HINTS[kind])]


# The literal each format above needs (its prefix), for the trigger net in ``_redact.py``.
TRIGGERS = (r"sk-|hf_|api_org_|gh[pousr]_|github_pat_|glpat-|xox|akia|asia|aiza|ya29\.|"
            r"sg\.|npm_|pypi-|_v1_|tskey-|age-secret|dapi|nvapi-|gl(?:sa|c)_|r8_|gsk_|shp|"
            r"org-|hooks\.slack|fw_|pplx-|_test_|xai-|lsv2_|xapp-|pcsk_|dckr_|glrt-|gldt-|ops_|"
            r"sntrys_|dp\.|pscale_|rpa_|accountkey|k_live_|eyj|://|authoriz|bearer|hv[sbr]\.|"
            r"\"auth\"|sig=|signature=|access_token=|\$[0-9a-z\-]{1,16}\$|begin |putty|kty|"
            r"key=|code=|webhooks/|bot\d|:aa|pbkdf2|\{s?sha|\{s?md5|\{crypt")

# PuTTY's .ppk: the lines after `Private-Lines: N` are the private key; its MAC is keyed by
# the passphrase (an offline guessing oracle), so it goes too.
_PPK = re.compile(r"(?ms)^(Private-Lines:[ \t]*\d+[ \t]*\r?\n)(.*?)(?=^Private-(?:MAC|Hash)|\Z)")
_PPK_MAC = re.compile(r"(?m)^(Private-(?:MAC|Hash):[ \t]*)\S+")
# A JSON Web Key's private members (RFC 7518 §6.2.2, §6.3.2, §6.4.1), as JSON, a Python
# repr, YAML, or JSON escaped inside a JSON string.
_JWK_PRIVATE = re.compile(
    r"""((?:^|(?<=[\s{,]))[ \t]*\\?["']?(?:d|p|q|dp|dq|qi|k|r|t)\\?["']?[ \t]*:[ \t]*\\?["']?)"""
    r"""[A-Za-z0-9_\-+/=]{8,}""", re.M)


def redact_structured(text: str) -> str:
    """Key files whose secret part has no prefix of its own (PuTTY, JWK)."""
    if "Private-Lines" in text and "PuTTY-User-Key-File" in text:
        text = _PPK.sub(lambda m: m.group(1) + "[REDACTED:private-key]"
                        + "\n" * m.group(2).count("\n"), text)
        text = _PPK_MAC.sub(r"\1[REDACTED:private-key]", text)
    if "kty" in text:
        text = _JWK_PRIVATE.sub(r"\1[REDACTED:private-key]", text)
    return text


def format_sub(kind: str) -> Callable[[re.Match[str]], str]:
    # A pattern's first group, when it has one, is context to keep (`Authorization: `).
    # Line breaks inside a match (a PEM block) are kept so that line numbers still hold.
    return lambda m: ((m.group(1) or "" if m.re.groups else "") + f"[REDACTED:{kind}]"
                      + "\n" * m.group(0).count("\n"))
