"""Where a fleet's host names come from: a range (``gpu[01-64]``), a list, a file
(``@hosts.txt``, one name or range a line) or the concrete ``Host`` entries of an SSH config."""

from __future__ import annotations

import os
import re
import shlex

from ._names import InventoryError, expand, unique

SSH_CONFIG = "ssh-config"


def hosts_from(spec: str, ssh_config: str | None = None) -> list[str]:
    """The hosts ``spec`` names, each once, in order.

    >>> hosts_from("gpu[01-02],gpu01")
    ['gpu01', 'gpu02']
    """
    if spec == SSH_CONFIG:
        return config_hosts(ssh_config or os.path.expanduser("~/.ssh/config"))
    if spec.startswith("@"):
        return unique(h for line in _lines(spec[1:]) for h in expand(line))
    return unique(expand(spec))


_FORM = "one name or range a line"
_LIST = ("the host list", f"a text file with {_FORM}")
_SSH = ("the SSH config", "an ssh_config(5) file with Host entries")


def _lines(path: str, kind: tuple[str, str] = _LIST) -> list[str]:
    # each way the file can fail says what to do about it, in one line (the CLI prints it)
    what, form = kind
    try:
        with open(path, "rb") as f:
            data = f.read(16 * 1024 * 1024)
    except FileNotFoundError:
        raise InventoryError(f"{what} {path} does not exist: give the path of {form}") from None
    except IsADirectoryError:
        raise InventoryError(f"{what} {path} is a directory: give {form}"
                             + (" (a directory of snapshots goes to --fleet)"
                                if kind is _LIST else "")) from None
    except PermissionError:
        raise InventoryError(f"cannot read {what} {path}: permission denied; make it readable "
                             f"by this user ({form})") from None
    except OSError as exc:
        raise InventoryError(f"cannot read {what} {path}: {exc.strerror or exc}; give a "
                             f"readable {form.removeprefix('a ').removeprefix('an ')}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InventoryError(f"{what} {path} is not UTF-8 text (line {line}, byte "
                             f"{exc.start}): save it as UTF-8, {form}") from None
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    if not any(lines) and kind is _LIST:
        raise InventoryError(f"the host list {path} names no hosts ({_FORM})")
    return [ln for ln in lines if ln]


_KEYWORD = re.compile(r"^\s*(?P<key>[A-Za-z]+)(?:\s*=\s*|\s+)(?P<rest>.*)$")


def config_hosts(path: str) -> list[str]:
    """The concrete names of ``Host`` lines (patterns with ``*``, ``?`` or ``!`` are
    defaults for other hosts, not hosts)."""
    names = []
    for line in _lines(path, _SSH):
        # ssh_config(5): "keyword arguments", separated by whitespace or by one '=' with
        # optional whitespace; an argument may be double-quoted
        m = _KEYWORD.match(line)
        if m is None or m["key"].lower() != "host":
            continue
        try:
            values = shlex.split(m["rest"])
        except ValueError:
            raise InventoryError(f"{path}: cannot read the line {line.strip()!r} "
                                 "(an unclosed quote?)") from None
        names += [n for n in values if not any(c in n for c in "*?!")]
    if not names:
        raise InventoryError(f"{path} has no Host entry naming one host")
    return unique(names)
