"""The narrow git reader: the questions of _git.py answered from a private copy of the
repository (_gitcopy.py) by dulwich, a library that reads git objects and runs nothing.

The output has one shape, this module's. Every blob is decoded to text first (UTF-16/32,
NULs, escapes: _redact/_decode.py), redacted by its own file's rule (a ``.env`` as a .env,
whatever directory it sits in and whatever its name's characters), and only then diffed
with three lines of context: a secret is never in what is diffed, so no slicing of the diff
can show part of one. Messages and names are redacted like any output.
"""

from __future__ import annotations

import difflib
import os
import re
import tempfile
import time
from collections.abc import Iterator

from dulwich.diff_tree import tree_changes
from dulwich.index import Index
from dulwich.objects import Blob, Commit, Tree
from dulwich.objectspec import parse_commit
from dulwich.repo import Repo

from ._git import GitAsk, parse
from ._gitcopy import private_copy
from ._paths import Root
from ._redact import redact, redact_env_file, redact_file
from ._redact._decode import encoding_of, to_text
from ._rules import Refused

_STEP = re.compile(r"~(\d*)|\^(\d?)")
_BLOB_LIMIT = 4 << 20  # a blob bigger than this is named, not shown or diffed
DEADLINE_S = 20.0


def read_git(root: Root, args: list[str], limit: int) -> str:
    """The answer to ``git ARGS`` (``-C DIR`` names the repository, else ``/``), redacted;
    about ``limit`` characters at most are produced (the caller cuts to the limit)."""
    ask = parse(args)
    # in memory where there is a tmpfs: the copy is many small files, made and removed on
    # every call (on an overlay /tmp their removal alone took 0.6 s for 800 files)
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="agentkit-git-", dir=shm) as copy:
        private_copy(root, ask.repo, copy)
        r = Repo(copy)
        try:
            return redact(_answer(r, ask, limit))
        except KeyError as exc:
            raise Refused(f"git {ask.verb}: {_name(exc)} is not in this repository") from None
        except ValueError as exc:
            raise Refused(f"git {ask.verb}: {exc}") from None
        finally:
            r.close()


def _name(exc: KeyError) -> str:
    arg = exc.args[0] if exc.args else "?"
    return arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)


def _answer(r: Repo, ask: GitAsk, limit: int) -> str:
    if ask.verb == "rev-parse" and ask.names:
        return "".join(_abbrev(r, v) + "\n" for v in ask.revs or ["HEAD"])
    if ask.verb == "rev-parse":
        return "".join(_rev(r, v).id.decode() + "\n" for v in ask.revs or ["HEAD"])
    if ask.verb == "branch":
        return _branches(r, ask.all_refs)
    if ask.verb == "tag":
        return "".join(n + "\n" for n in _refs(r, b"refs/tags/"))
    if ask.verb == "ls-files":
        return _ls_files(r, ask.paths)
    if ask.verb == "show" and ask.revs and ":" in ask.revs[0]:
        return _show_path(r, ask.revs[0])
    if ask.verb == "show":
        return _show(r, ask.revs[0] if ask.revs else "HEAD", ask, limit)
    return _log(r, ask, limit)


def _rev(r: Repo, spec: str) -> Commit:
    """A commit from NAME[~N|^N]…: the name resolved by dulwich (HEAD, refs, object ids and
    their prefixes), each step walked here."""
    m = re.match(r"[^~^]+", spec)
    assert m is not None
    commit = parse_commit(r, m.group(0))
    for step in _STEP.finditer(spec[m.end():]):
        tilde, caret = step.groups()
        if tilde is not None:
            for _ in range(int(tilde or 1)):
                commit = _parent(r, commit, 1, spec)
        else:
            commit = _parent(r, commit, int(caret or 1), spec)
    return commit


def _parent(r: Repo, commit: Commit, n: int, spec: str) -> Commit:
    if n == 0:
        return commit
    if len(commit.parents) < n:
        raise ValueError(f"{spec!r}: the commit has no parent {n}")
    got = r[commit.parents[n - 1]]
    assert isinstance(got, Commit)
    return got


def _abbrev(r: Repo, spec: str) -> str:
    """``rev-parse --abbrev-ref``: HEAD as the branch it points to (``HEAD`` when detached),
    another name as given once it resolves."""
    if spec == "HEAD":
        head = bytes(r.refs.get_symrefs().get(b"HEAD") or b"")  # type: ignore[call-overload]
        return head[len(b"refs/heads/"):].decode("utf-8", "replace") if head else "HEAD"
    _rev(r, spec)
    return spec


def _refs(r: Repo, prefix: bytes) -> list[str]:
    return sorted(k[len(prefix):].decode("utf-8", "replace") for k in r.refs.allkeys()
                  if k.startswith(prefix))


def _branches(r: Repo, all_refs: bool) -> str:
    head = bytes(r.refs.get_symrefs().get(b"HEAD") or b"")  # type: ignore[call-overload]
    current = head[len(b"refs/heads/"):].decode("utf-8", "replace")
    out = [("* " if n == current else "  ") + n for n in _refs(r, b"refs/heads/")]
    if all_refs:
        out += ["  remotes/" + n for n in _refs(r, b"refs/remotes/")]
    return "".join(line + "\n" for line in out)


def _ls_files(r: Repo, paths: list[str]) -> str:
    path = os.path.join(r.controldir(), "index")  # the copy is bare: read its index as a file
    if not os.path.exists(path):
        return ""
    try:
        index = Index(path)
    except (OSError, ValueError, AssertionError) as exc:
        raise ValueError(f"the index could not be read ({type(exc).__name__})") from None
    names = sorted(p.decode("utf-8", "replace") for p in index.paths())
    if paths:
        names = [n for n in names if any(n == p or n.startswith(p.rstrip("/") + "/")
                                         for p in paths)]
    return "".join(n + "\n" for n in names)


def _show_path(r: Repo, spec: str) -> str:
    rev, path = spec.split(":", 1)
    tree = r[_rev(r, rev).tree]
    assert isinstance(tree, Tree)
    _, sha = tree.lookup_path(r.object_store.__getitem__, path.encode())
    obj = r[sha]
    if isinstance(obj, Tree):
        return "".join(n.path.decode("utf-8", "replace") + ("/" if n.mode & 0o40000 else "")
                       + "\n" for n in obj.iteritems())
    assert isinstance(obj, Blob)
    return _blob_text(obj.as_raw_string(), path) or f"(binary file {path}: not shown)\n"


def _blob_text(data: bytes, path: str | None) -> str | None:
    """A blob decoded, then redacted by its file's rule (by the strict .env rule when no
    name says what it is); None when it is binary."""
    if len(data) > _BLOB_LIMIT:
        return None
    if b"\0" in data[:8192] and encoding_of(data) == "utf-8":
        return None
    text = to_text(data)
    return redact_file(path, text) if path else redact_env_file(text)


def _show(r: Repo, spec: str, ask: GitAsk, limit: int) -> str:
    obj = r[spec.encode()] if re.fullmatch(r"[0-9a-f]{40}", spec) else None
    if isinstance(obj, Blob):  # `git show <blob id>`: a file with no name to judge it by
        return _blob_text(obj.as_raw_string(), None) or "(binary blob: not shown)\n"
    commit = _rev(r, spec)
    return "".join(_commit(r, commit, ask, patch=not ask.names))[:limit]


def _log(r: Repo, ask: GitAsk, limit: int) -> str:
    start = _rev(r, ask.revs[0] if ask.revs else "HEAD")
    walker = r.get_walker(include=[start.id], max_entries=ask.count or 500,
                          paths=[p.encode() for p in ask.paths] or None)
    out: list[str] = []
    size = 0
    deadline = time.monotonic() + DEADLINE_S
    for entry in walker:
        for part in _commit(r, entry.commit, ask, patch=ask.patch):
            out.append(part)
            size += len(part)
        if size > limit or time.monotonic() > deadline:
            out.append("[… history cut: narrow it with -n N or -- PATH]\n")
            break
    return "".join(out)


def _commit(r: Repo, c: Commit, ask: GitAsk, patch: bool) -> Iterator[str]:
    message = to_text(c.message)
    if ask.oneline:
        yield f"{c.id.decode()[:7]} {message.splitlines()[0] if message else ''}\n"
    else:
        yield f"commit {c.id.decode()}\n"
        if len(c.parents) > 1:
            yield "Merge: " + " ".join(p.decode()[:7] for p in c.parents) + "\n"
        yield f"Author: {to_text(c.author)}\n"
        yield f"Date:   {_date(c.author_time, c.author_timezone)}\n\n"
        yield "".join(f"    {line}\n" for line in message.splitlines()) + "\n"
    if (patch or ask.names) and len(c.parents) <= 1:
        yield from _changes(r, c, names_only=ask.names and not patch)


def _date(t: int, tz: int) -> str:
    sign = "-" if tz < 0 else "+"
    off = abs(tz)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t + tz))
    return f"{stamp} {sign}{off // 3600:02d}{off % 3600 // 60:02d}"


def _changes(r: Repo, c: Commit, names_only: bool) -> Iterator[str]:
    parent = r[c.parents[0]].tree if c.parents else None  # type: ignore[attr-defined]
    for ch in tree_changes(r.object_store, parent, c.tree):
        old_path = ch.old.path if ch.old and ch.old.path else None
        new_path = ch.new.path if ch.new and ch.new.path else None
        path = (new_path or old_path or b"").decode("utf-8", "replace")
        if names_only:
            yield path + "\n"
            continue
        yield _file_diff(r, path, ch.old.sha if old_path and ch.old else None,
                         ch.new.sha if new_path and ch.new else None)
    if not names_only:
        yield "\n"


def _file_diff(r: Repo, path: str, old: bytes | None, new: bytes | None) -> str:
    shown = path if path.isprintable() and " " not in path else repr(path)
    head = f"diff {shown}\n"
    texts = []
    for sha in (old, new):
        data = r[sha].as_raw_string() if sha else b""
        texts.append(_blob_text(data, path))
    if texts[0] is None or texts[1] is None:
        return head + "(binary or large file: changed, not shown)\n"
    lines = difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(),
                                 "a/" + shown if old else "/dev/null",
                                 "b/" + shown if new else "/dev/null", n=3, lineterm="")
    return head + "".join(line + "\n" for line in lines)
