"""``kubectl kustomize DIR`` builds from a private copy of the kustomization tree.

kustomize is a file reader and a transformer: left to open the files a kustomization names,
it read them past every file defence (the deny-list, the credential-by-content and inode
checks, the redaction a read_file gets) and re-encoded them so no output rule saw the secret:
``files:`` of a non-UTF-8 file becomes base64 ``binaryData``, ``envs:`` turns each line into a
key, a patch turns a Secret into a ConfigMap, ``replacements`` move a value away from its key
(red team round 4, K-A). So kustomize never opens a host file. The kustomizations are read
here, and every file they name (resources, bases, components, patches, generator sources,
replacement and openapi files, CRDs, configurations) is read through the file tools' own path
(the resolver, refusals by name, content and inode, binary files refused) and redacted as a
read_file of it is; a file a secretGenerator reads has its values withheld, since the Secret
it makes may be patched into another kind. The copy mirrors the host's paths under a private
directory, holds only regular files and directories (no link), and is all kustomize's sandbox
is given beyond the system's programs; a file refused is absent from it, so kustomize fails
with its own "not found" error and the result's ``withheld`` says which file and why.

References that would leave the copy are refused before kustomize runs: a remote base (it
would fetch it), an absolute path, a ``..`` above the root, and the fields that run or
configure plugins (``generators``, ``transformers``, ``validators``, Helm). kustomize parses
the copy's kustomizations as they were parsed here (written back from the parsed document),
so no difference between two YAML parsers can make it read a file this module did not vet.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any

import yaml

from .._bounded import LimitError, check_value, check_yaml
from ._copies import COMMAND_BUDGET, WHOLE_LIMIT
from ._kernel import KernelUnavailable, Needs, layer, wrap
from ._paths import PathRefused, Root, list_entries, normalize, opened, read_bytes_stat
from ._redact import redact_file
from ._redact._content import credential_kind
from ._spawn import _run
from ._tool import ToolContext, ToolError
from ._withheld import linked_notice, notice

KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
MAX_FILES = 500  # files one build may copy (kustomizations included)
MAX_KUSTOMIZATIONS = 100
_SECRET_MARK = "[REDACTED:k8s-secret]"
# Fields that name programs or plugin configurations kustomize would load (kubectl runs none
# of them without a flag it is never given, but their configurations name files too)
_REFUSED = ("generators", "transformers", "validators", "helmCharts", "helmGlobals",
            "helmChartInflationGenerator")
# Where a kustomization names files (kustomize's Kustomization type; an unknown field is an
# error to kustomize, so none names a file this module does not know)
_FILE_LISTS = ("crds", "configurations")
_DIR_LISTS = ("resources", "bases", "components")
_PATH_ITEMS = ("patches", "patchesJson6902", "replacements")
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git::|git@|[\w.-]+\.[a-z]{2,}/)", re.I)
_ENV_LINE = re.compile(r"^(\s*(?:export\s+)?[^=#\s][^=]*=)")


@dataclass
class Built:
    """What kustomize printed (paths named as the host names them) and the notices of the
    files left out of its copy or read strictly."""

    out: str
    err: str
    code: int
    timed_out: bool
    truncated: bool
    notices: list[str]


def build(ctx: ToolContext, host_dir: str, exe: str, env: dict[str, str], timeout: float,
          cap: int) -> Built:
    """``kubectl kustomize`` of the copy of ``host_dir``, under the kernel layer, in a
    sandbox holding the system's programs and the copy only (a snapshot's sandbox, whatever
    the root): no host file, no network, no program on its PATH (kustomize runs git for a
    remote base and helm for a chart)."""
    kernel_only(ctx)
    with tempfile.TemporaryDirectory(prefix="agentkit-cmd-") as scratch:
        copy_dir, copied = copy_tree(ctx.host.root, host_dir, scratch)
        env = {**env, "PATH": "/nonexistent"}
        boxed = functools.partial(wrap, env=env, live=False,
                                  needs=Needs(binds=(scratch, os.path.dirname(exe))))
        out, err, code, timed_out, truncated = _run(
            [exe, "kustomize", copy_dir], env, timeout, cap, "/", boxed)
    return Built(out.replace(copied.top, ""), err.replace(copied.top, ""), code, timed_out,
                 truncated, copied.notices)


def kernel_only(ctx: ToolContext) -> None:
    """Without the kernel layer kustomize would run with the host's files, network and
    programs in reach of what a kustomization names: refused (``agentkit doctor``)."""
    try:
        kernel = layer(ctx.host.sandbox).mode == "kernel"
    except KernelUnavailable:
        kernel = False
    if not kernel:
        raise ToolError("refused: kubectl kustomize runs only under the kernel layer (no "
                        "network, no host files but a redacted copy of the kustomization's): "
                        "a kustomization can name remote bases that kustomize fetches; "
                        "`agentkit doctor` says how to enable it")


@dataclass
class Copied:
    """The copy: its ``/`` (the host's paths mirrored below it), the file texts by host path,
    the notices of what was left out or read strictly, and the kustomizations read."""

    top: str
    texts: dict[str, str] = field(default_factory=dict)
    secret: set[str] = field(default_factory=set)  # read by a secretGenerator
    notices: list[str] = field(default_factory=list)
    kustomizations: set[str] = field(default_factory=set)
    spent: int = 0
    tried: int = 0
    linked: bool = False  # the file last read has other hard links


def copy_tree(root: Root, host_dir: str, scratch: str) -> tuple[str, Copied]:
    """The copy of the kustomization tree at ``host_dir``, written under ``scratch``: (the
    copy's DIR, what was copied). A ToolError refuses the build."""
    try:
        host_dir = normalize(host_dir)
    except PathRefused as exc:
        raise ToolError(f"refused: {exc}") from None
    copied = Copied(os.path.join(scratch, "root"))
    _kustomization(root, host_dir, copied, depth=0)
    _write(copied)
    return os.path.join(copied.top, host_dir.lstrip("/")), copied


def _kustomization(root: Root, host_dir: str, copied: Copied, depth: int) -> None:
    """Read the kustomization in ``host_dir`` and everything it names, recursively."""
    if host_dir in copied.kustomizations:
        return  # kustomize reports a cycle itself; a diamond is read once
    if len(copied.kustomizations) >= MAX_KUSTOMIZATIONS or depth > 20:
        raise ToolError(f"refused: this build reaches more than {MAX_KUSTOMIZATIONS} "
                        "kustomizations (or nests them deeper than 20)")
    copied.kustomizations.add(host_dir)
    try:
        names = [n for n, _ in list_entries(root, host_dir) if n in KUSTOMIZATIONS]
    except PathRefused as exc:
        raise ToolError(f"refused: {exc}") from None
    if not names:
        raise ToolError(f"refused: {host_dir} holds no kustomization file "
                        f"({', '.join(KUSTOMIZATIONS)})")
    for name in names:  # several: kustomize says it found more than one
        path = f"{host_dir.rstrip('/')}/{name}"
        raw = _vetted(root, path, copied, redacted=False)
        if raw is None:
            raise ToolError(f"refused: the kustomization {path} cannot be read: "
                            f"{copied.notices[-1].split(': ', 1)[1]}")
        raw_doc = _parsed(path, raw)
        doc = _parsed(path, redact_file(path, _dumped(raw_doc), copied.linked))
        if isinstance(doc, dict) and isinstance(raw_doc, dict):
            _keyed_sources(root, host_dir, raw_doc, doc)
        if isinstance(doc, dict):
            _names(root, host_dir, doc, copied, depth)
            doc = _secret_literals(doc)
        # not a mapping (empty, a list): kustomize says what it makes of it
        copied.texts[path] = "" if doc is None else _dumped(doc)


class _Block(yaml.SafeDumper):
    """Block style, no line folding, a text of several lines as a literal block: the form in
    which each value sits beside its key, line by line, as the redactor reads a file."""


_Block.add_representer(str, lambda d, s: d.represent_scalar(
    "tag:yaml.org,2002:str", s, style="|" if "\n" in s else None))


def _dumped(doc: Any) -> str:
    """A kustomization as this module parsed it. It is redacted in this form (a redaction
    mark in the author's flow style, ``[token=[REDACTED:…]]``, would not parse) and kustomize
    is given this form: what it parses is what was parsed here."""
    return yaml.dump(doc, Dumper=_Block, sort_keys=False, width=1 << 20,
                     allow_unicode=True)


def _parsed(path: str, text: str) -> Any:
    try:
        check_yaml(text)
        doc = yaml.safe_load(text)
        check_value(doc)
    except LimitError as exc:
        raise ToolError(f"refused: the kustomization {path} cannot be parsed: {exc}") from None
    except yaml.YAMLError as exc:
        # the parser's words quote the text, which is not redacted yet: the line only
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ToolError(f"refused: the kustomization {path} is not valid YAML{where}") from None
    return doc


def _names(root: Root, host_dir: str, doc: dict[str, Any], copied: Copied,
           depth: int) -> None:
    """Copy what the fields of one kustomization name."""
    for key in _REFUSED:
        if key in doc:
            raise ToolError(f"refused: {host_dir}: `{key}` configures plugins or Helm, which "
                            "this sandbox never runs")
    for key in _DIR_LISTS:
        for ref in _strings(doc.get(key)):
            _file_or_base(root, _resolve(host_dir, ref, key), copied, depth)
    for key in _FILE_LISTS:
        for ref in _strings(doc.get(key)):
            _file(root, _resolve(host_dir, ref, key), copied)
    for ref in _strings(doc.get("patchesStrategicMerge")):
        if "\n" not in ref and ":" not in ref:  # otherwise an inline patch
            _file(root, _resolve(host_dir, ref, "patchesStrategicMerge"), copied)
    for key in _PATH_ITEMS:
        for item in doc.get(key) or ():
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                _file(root, _resolve(host_dir, item["path"], key), copied)
    openapi = doc.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        _file(root, _resolve(host_dir, openapi["path"], "openapi"), copied)
    for key, secret in (("configMapGenerator", False), ("secretGenerator", True)):
        for gen in doc.get(key) or ():
            if isinstance(gen, dict):
                for ref in _sources(gen):
                    _file(root, _resolve(host_dir, ref, key), copied, secret)


_KEYED = re.compile(r"([\w.-]+)=([\w./-]+)")


def _keyed_sources(root: Root, host_dir: str, raw: dict[str, Any], doc: dict[str, Any]) -> None:
    """A generator's ``files: [pw=password.txt]`` is a data key and a path, which the
    redactor reads as a password: where the redacted entry differs and the raw one names a
    file that may be read, the raw entry is kept (the key and a file name, both listable;
    the file's text is vetted like any other), so the build does not fail on a mark."""
    for key in ("configMapGenerator", "secretGenerator"):
        pairs = zip(raw.get(key) or (), doc.get(key) or (), strict=False)
        for raw_gen, gen in pairs:
            if not (isinstance(raw_gen, dict) and isinstance(gen, dict)):
                continue
            was, now = _strings(raw_gen.get("files")), gen.get("files")
            if not isinstance(now, list) or len(was) != len(now):
                continue
            for i, (before, after) in enumerate(zip(was, now, strict=True)):
                m = _KEYED.fullmatch(before)
                if before != after and m and _readable(root, f"{host_dir}/{m.group(2)}"):
                    now[i] = before


def _readable(root: Root, host_path: str) -> bool:
    try:
        with opened(root, normalize(host_path)):
            return True
    except PathRefused:
        return False


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _sources(gen: dict[str, Any]) -> list[str]:
    """The files a generator reads: ``files`` (``key=path`` or ``path``), ``envs``, ``env``."""
    refs = [f.split("=", 1)[-1] for f in _strings(gen.get("files"))]
    refs += _strings(gen.get("envs"))
    if isinstance(gen.get("env"), str):
        refs.append(gen["env"])
    return refs


def _resolve(host_dir: str, ref: str, key: str) -> str:
    """The host path ``ref`` names from ``host_dir``; a reference out of the copy refused."""
    if _REMOTE.match(ref):
        raise ToolError(f"refused: {host_dir}: `{key}` names {ref!r}, a remote base or file "
                        "that kustomize would fetch; the build is offline, from host files")
    if ref.startswith("/"):
        raise ToolError(f"refused: {host_dir}: `{key}` names the absolute path {ref!r}; only "
                        "paths relative to the kustomization are built from")
    try:
        return normalize(f"{host_dir}/{ref}")
    except PathRefused as exc:
        raise ToolError(f"refused: {host_dir}: `{key}` names {ref!r}: {exc}") from None


def _file_or_base(root: Root, host_path: str, copied: Copied, depth: int) -> None:
    try:
        with opened(root, host_path, directory=True):
            pass
    except PathRefused:
        _file(root, host_path, copied)  # a file, or absent: kustomize says which
        return
    _kustomization(root, host_path, copied, depth + 1)


def _file(root: Root, host_path: str, copied: Copied, secret: bool = False) -> None:
    if secret:
        copied.secret.add(host_path)
    if host_path not in copied.texts:
        text = _vetted(root, host_path, copied)
        if text is not None:
            copied.texts[host_path] = text


def _vetted(root: Root, host_path: str, copied: Copied, redacted: bool = True) -> str | None:
    """The file's text as read_file would show it (redacted, strictly with other hard
    links), or None with a notice saying why it is left out. ``redacted=False``: a
    kustomization, redacted by the caller once parsed (``copied.linked`` says how)."""
    from ._files import decode_text  # the file tools' own decoding (a module above this)

    copied.tried += 1  # a file left out costs its look-up too
    if copied.tried > MAX_FILES:
        raise ToolError(f"refused: this build names more than {MAX_FILES} files")
    try:
        data, st, canonical = read_bytes_stat(root, host_path, WHOLE_LIMIT + 1)
    except PathRefused as exc:
        return _left_out(copied, host_path, str(exc))
    copied.spent += len(data)
    if copied.spent > COMMAND_BUDGET:
        raise ToolError(f"refused: the files of this build hold more than "
                        f"{COMMAND_BUDGET >> 20} MiB; kustomize builds from a redacted copy, "
                        "at most that much per command")
    if len(data) > WHOLE_LIMIT:
        return _left_out(copied, host_path, f"larger than {WHOLE_LIMIT >> 20} MiB")
    kind = credential_kind(data)
    if kind:
        return _left_out(copied, host_path, f"a credential file by its content ({kind})")
    text, binary = decode_text(data)
    if binary:
        return _left_out(copied, host_path, "a binary file; only text is copied")
    copied.linked = st.st_nlink > 1
    if copied.linked:
        copied.notices.append(linked_notice(canonical, st.st_nlink))
    return redact_file(canonical, text, copied.linked) if redacted else text


def _left_out(copied: Copied, host_path: str, why: str) -> str | None:
    """None (the file is not copied), noting why."""
    copied.notices.append(notice("left-out", f"{host_path}: {why}"))
    return None


def _secret_literals(doc: dict[str, Any]) -> dict[str, Any]:
    """A secretGenerator's literals with their values withheld (``KEY=`` kept)."""
    for gen in doc.get("secretGenerator") or ():
        if isinstance(gen, dict) and isinstance(gen.get("literals"), list):
            gen["literals"] = [f"{lit.split('=', 1)[0]}={_SECRET_MARK}"
                               if isinstance(lit, str) else lit for lit in gen["literals"]]
    return doc


def secret_values(text: str) -> str:
    """A file a secretGenerator reads, its values withheld: each ``KEY=value`` line keeps its
    key (``envs:`` makes the keys), every other line that is not blank or a comment is the
    mark (``files:`` makes one value of the whole file).

    >>> secret_values("# db\\nDB_PASSWORD=hunter22\\nplain\\n")
    '# db\\nDB_PASSWORD=[REDACTED:k8s-secret]\\n[REDACTED:k8s-secret]\\n'
    """
    out = []
    for line in text.splitlines():
        m = _ENV_LINE.match(line)
        if not line.strip() or line.lstrip().startswith("#"):
            out.append(line)
        else:
            out.append(m.group(1) + _SECRET_MARK if m else _SECRET_MARK)
    return "".join(f"{line}\n" for line in out)


def _write(copied: Copied) -> None:
    """Regular files and directories only, private to this process (0700/0600), valid
    UTF-8 (so kustomize never makes ``binaryData``: every value is text the rules saw)."""
    for host_path, text in copied.texts.items():
        if host_path in copied.secret:
            text = secret_values(text)
        dest = os.path.join(copied.top, host_path.lstrip("/"))
        os.makedirs(os.path.dirname(dest), mode=0o700, exist_ok=True)
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(text.encode("utf-8", "replace"))
    for host_dir in copied.kustomizations:  # a base that named nothing readable still is one
        os.makedirs(os.path.join(copied.top, host_dir.lstrip("/")), mode=0o700, exist_ok=True)
