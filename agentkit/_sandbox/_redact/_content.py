"""Credential files told by their content, wherever they live and whatever their name.

The path guard knows credential files by name (``/etc/shadow``, ``id_rsa``, ``.netrc``); a
copy under another name (``/opt/app/backup.dat``) was read like any file (issue 28). A file
whose start is a key ring's signature, a private key, or whose lines are password hashes is
refused whole, as its name would be: redacting it would still show its shape and its users.
"""

from __future__ import annotations

from ... import _regex as re  # re, its compiled patterns kept on disk (_regex.py)
from ._formats import KEY_BEGIN

# Signatures at the start of a file (or at a fixed offset): GNOME keyring, KDE wallet,
# GnuPG's keybox (``KBXf`` at byte 8), a Java keystore, PuTTY and OpenSSH private keys.
_MAGIC = (b"GnomeKeyring\n\r\x00\n", b"KWALLET\n\r\x00\r\n", b"\xfe\xed\xfe\xed",
          b"PuTTY-User-Key-File-", b"openssh-key-v1\x00")
_PEM_KEY = re.compile(rb"\A\s*" + KEY_BEGIN.encode())
# crypt(3) and htpasswd hashes after a user name: shadow, htpasswd, a dumped password list
_HASH_LINE = re.compile(
    rb"^[^:\s#]{1,64}:(?:\$(?:1|2[abxy]?|5|6|7|y|gy|apr1|sha1|md5|argon2(?:id|i|d)?|"
    rb"pbkdf2[-\w]*|scrypt)\$[^\s:]{8,}|\{SSHA?\}[A-Za-z0-9+/=]{20,}|[!*]?\$[^\s:]{20,})",
    re.M)
_SAMPLE = 64 << 10


def credential_kind(data: bytes) -> str | None:
    """What credential file ``data`` (a file's start) is, or None."""
    head = data[:_SAMPLE]
    if head.startswith(_MAGIC) or head[8:12] == b"KBXf":
        return "a key ring or key store"
    if _PEM_KEY.match(head):
        return "a private key"
    lines = [ln for ln in head.splitlines() if ln.strip() and not ln.startswith(b"#")]
    hashes = sum(1 for ln in lines if _HASH_LINE.match(ln))
    if hashes and hashes * 2 >= len(lines):
        return "a list of password hashes"
    return None


def credential_refusal(host_path: str, data: bytes) -> str | None:
    """Why the file at ``host_path`` is never read, when its start ``data`` is a credential
    file's; None otherwise. The one wording of read_file, grep and the programs' copies."""
    kind = credential_kind(data)
    return f"{host_path} is a credential file by its content ({kind}); the sandbox never " \
        "reads it" if kind else None
