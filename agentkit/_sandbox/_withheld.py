"""What a tool result held back or could not vouch for, said where it happens.

docs/security.md lists the sandbox's known limits. Where a limit's condition is seen in one
call (a command run without the kernel layer, host state read beyond the allowed paths, a
file with other hard links), the call's result carries a one-line notice under the data key
``withheld``; the run collects the notices' kinds, and the answer's notes name the limits in
force for that run (``run_notes``). A secret taken out of a text is marked in place as
``[REDACTED:<kind>]``: that mark is the visible "withheld" of the text itself.

A notice is ``"<kind>: <what>"``; the kind is the key of ``_NOTES``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# The data key a notice list is returned under, and where a run collects what it saw.
KEY = "withheld"
_RUN_KEY = "sandbox: limits in force"

# Programs whose output is host state, not a file of the allowed paths: they report it
# whatever Root.allow says, and their output is redacted as output only (no copy).
SYSTEM_STATE = frozenset({"journalctl", "systemctl", "ps", "nvidia-smi", "lspci", "env",
                          "printenv", "docker", "podman", "crictl", "kubectl"})

_DOC = "(docs/security.md, known limits)"
_NOTES = {
    "allowlist-only": "Commands ran allowlist-only: bubblewrap could not run, so the kernel "
                      "layer (read-only mounts, credential masks, namespaces, reaping of "
                      "grandchildren) was absent; AGENTKIT_SANDBOX=kernel refuses instead "
                      + _DOC + ".",
    "kernel-layer": "Commands ran under the kernel layer without a seccomp filter or a "
                    "Landlock ruleset, and their file operands were checked, then opened by "
                    "the program (a concurrent writer on the host could swap one) " + _DOC + ".",
    "live-root": "On this live host commands saw the whole / read-only minus the credential "
                 "masks: the allow list held by the path guard, not by the mounts " + _DOC + ".",
    "system-state": "Host state (journal, systemctl, processes, GPUs, containers) was read "
                    "beyond the allowed paths and redacted as output only " + _DOC + ".",
    "hard-link": "A file with other hard links was read with its credential-looking words "
                 "withheld; a shorter secret in it could not be vouched for " + _DOC + ".",
    "left-out": "kubectl kustomize built from a redacted copy of the kustomization's files; a "
                "file the sandbox refuses to read (a credential by name, content or inode, a "
                "binary file, one over the size limit) was left out of that copy, so the "
                "build reported it missing " + _DOC + ".",
}
# Always in force where a tool returned host text: no single output can show what the
# patterns did not recognise.
_PATTERN_NOTE = ("Secrets were withheld by pattern and marked [REDACTED:<kind>]: a secret in "
                 "a format the redactor does not know (an innocuous key name, an encoded "
                 "value, an argument to an unknown program) is not recognised " + _DOC + ".")


def notice(kind: str, what: str) -> str:
    """One line for a result's ``withheld`` list.

    >>> notice("hard-link", "/etc/x has 2 links")
    'hard-link: /etc/x has 2 links'
    """
    assert kind in _NOTES, kind
    return f"{kind}: {what}"


def command_notices(program: str, *, spawned: bool, kernel: bool, live: bool) -> list[str]:
    """The notices of one command's result: how it ran (when it ran) and what it reports."""
    out: list[str] = []
    if spawned and not kernel:
        out.append(notice("allowlist-only", "this command ran without the kernel layer "
                          "(bubblewrap could not run): no read-only mounts, no credential "
                          "masks, no namespaces; a grandchild that calls setsid() is not "
                          "reaped; the operands were checked, then opened by the program. "
                          "Only the argument allowlist and the redacted copies held"))
    elif spawned:
        out.append(notice("kernel-layer", "no seccomp filter or Landlock ruleset; the "
                          "operands were checked, then opened by the program"))
        if live:
            out.append(notice("live-root", "the program saw the host's whole / read-only, "
                              "minus the credential masks; the allow list is the path "
                              "guard's, not the mounts'"))
    if program in SYSTEM_STATE:
        out.append(notice("system-state", "this output is host state beyond the allowed "
                          "paths; it was redacted as output only"))
    return out


def linked_notice(host_path: str, links: int) -> str:
    """The notice of a file read with other hard links (``redact_strict``)."""
    return notice("hard-link", f"{host_path} has {links} hard links and may be a credential "
                  "file named elsewhere: words of 16+ letters and digits were withheld as "
                  "[REDACTED:linked-file]; a shorter secret in it would not be")


def collect(shared: dict[str, Any], data: Mapping[str, Any]) -> None:
    """Note, for the run, the kinds of the notices in one result's data (a replayed result
    carries the notices it was recorded with)."""
    seen: dict[str, None] = shared.setdefault(_RUN_KEY, {})
    seen.setdefault("", None)  # a tool returned host text
    for line in data.get(KEY) or ():
        if isinstance(line, str) and line.split(":", 1)[0] in _NOTES:
            seen.setdefault(line.split(":", 1)[0], None)


def run_notes(shared: Mapping[str, Any]) -> list[str]:
    """The answer's notes on the limits in force for the run: one per kind seen, in a fixed
    order, and the redactor's own limit wherever a tool returned anything."""
    seen = shared.get(_RUN_KEY) or {}
    if not seen:
        return []
    return [*(note for kind, note in _NOTES.items() if kind in seen), _PATTERN_NOTE]


def with_notices(data: dict[str, Any], notices: Iterable[str]) -> dict[str, Any]:
    """``data`` with ``notices`` added under ``withheld`` (none: ``data`` itself)."""
    lines = list(dict.fromkeys([*(data.get(KEY) or ()), *notices]))
    return {**data, KEY: lines} if lines else data
