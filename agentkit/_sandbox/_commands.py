"""``run_command``: allowlisted read-only programs, argv only, never a shell.

On a live host the program runs for real: a trusted absolute binary, a scrubbed environment,
no stdin, resource limits (no file may be written: ``RLIMIT_FSIZE`` is 0), its own process
group killed at the deadline, output capped. On a snapshot the captured output is served.
"""

from __future__ import annotations

import functools
import os
import stat
import tempfile
from typing import Annotated

import anyio.to_thread
from pydantic import Field

from ._captures import SnapshotError, find_command, read_capture
from ._copies import CONTENT_PRINTERS, Copy, make_copies
from ._kernel import KernelUnavailable, layer, needs_of, secret_inodes, within_any, wrap
from ._kustomize import build
from ._paths import PathRefused, check_policy, normalize
from ._programs import Checked, Refused, check
from ._redact import redact
from ._rooted import is_captured, is_kustomize, on_snapshot, program_of
from ._spawn import _STDERR_LIMIT, _run
from ._systemd_quote import redact_systemctl
from ._tool import ToolContext, ToolError, ToolOutput, tool
from ._withheld import command_notices, linked_notice

# Output read past the limit, so that what is cut after redaction was redacted with its
# context (a key on the line before the cut)
_MARGIN = 64 << 10
# Programs served from a snapshot's captures but never run on a live host
CAPTURE_ONLY = {
    "kubectl": "kubectl is never run on a live host: a kubeconfig can name a program it runs "
               "(users[].user.exec, auth-provider), and no argument check can stop that. "
               "Kubernetes objects are read from manifests on the host or a snapshot's capture"}
_BASE_ENV = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
             "HOME": "/nonexistent", "TERM": "dumb", "PAGER": "cat", "NO_COLOR": "1"}


def trusted_binary(name: str, dirs: tuple[str, ...]) -> str:
    for d in dirs:
        path = os.path.join(d, name)
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or not st.st_mode & 0o111:
            continue
        if st.st_mode & 0o002:
            raise ToolError(f"{path} is world-writable; refusing to run it")
        return path
    raise ToolError(f"{name} is not installed in the trusted directories {list(dirs)}")


@tool
async def run_command(
    ctx: ToolContext,
    argv: Annotated[list[str], Field(min_length=1, description="Program and arguments, e.g. "
                                     "['nvidia-smi', 'topo', '-m']; never a shell string")],
    timeout_s: Annotated[float, Field(gt=0, le=120)] = 20.0,
) -> ToolOutput:
    """Run an allowlisted read-only program (nvidia-smi, systemctl, journalctl, grep, …)."""
    try:
        checked = check(argv)
    except Refused as exc:
        raise ToolError(f"refused: {exc}") from None
    if is_kustomize(checked) and not is_captured(ctx, argv):
        return await _kustomized(ctx, argv, checked, timeout_s)
    if checked.git_repo is not None and not is_captured(ctx, argv):
        return await anyio.to_thread.run_sync(_narrow_git, ctx, argv, checked)
    if not ctx.host.is_live:
        rooted = on_snapshot(ctx, argv, checked)
        if rooted is None:
            return _captured(ctx, argv, checked.grep)
        checked = rooted
    elif argv[0] in CAPTURE_ONLY:
        raise ToolError(f"refused: {CAPTURE_ONLY[argv[0]]}")
    else:
        checked = _resolved(ctx, _walked(ctx, checked))
    exe = trusted_binary(checked.argv[0], ctx.host.trusted_bin_dirs)
    try:
        kernel = layer(ctx.host.sandbox).mode == "kernel"
    except KernelUnavailable as exc:
        raise ToolError(str(exc)) from None
    env = {**_BASE_ENV, **checked.env}
    timeout = min(timeout_s, ctx.host.command_timeout_s)
    _no_secret_links(checked)
    with tempfile.TemporaryDirectory(prefix="agentkit-cmd-") as scratch:
        # Redaction of a big copy takes seconds: off the event loop, which every subagent
        # shares
        checked = await anyio.to_thread.run_sync(_copied, ctx, checked, scratch)
        boxed = None
        if kernel:
            reached = _reached(checked, exe, scratch)
            if not ctx.host.is_live:  # by construction: nothing outside the snapshot's root
                inside = (ctx.host.root.path, scratch, *ctx.host.trusted_bin_dirs)
                reached = [p for p in reached if within_any(p, inside)]
            needs = needs_of(program_of(checked), reached, live=ctx.host.is_live)
            boxed = functools.partial(wrap, env=env, needs=needs, live=ctx.host.is_live)
        out, err, code, timed_out, truncated = await anyio.to_thread.run_sync(
            _run, [exe, *checked.argv[1:]], env, timeout, ctx.host.output_limit + _MARGIN,
            ctx.host.root.path, boxed
        )
    for real, host_path in checked.shown_as.items():  # name files as the host knows them
        out = out.replace(real, host_path)
        err = err.replace(real, host_path)
    shown = " ".join(argv)
    if timed_out:
        raise ToolError(f"`{shown}` did not finish within {timeout:g}s; its process group was "
                        "killed. Narrow the command (fewer files, -n N) and retry")
    # decoded (in _run), redacted, filtered, and only then cut to the limit
    shown = _grepped(checked.grep, _redacted_output(argv, out))
    return _ran(ctx, argv, checked, kernel, shown, redact(err), code, truncated)


def _ran(ctx: ToolContext, argv: list[str], checked: Checked, kernel: bool, shown: str,
         err: str, code: int, truncated: bool) -> ToolOutput:
    """A command's result, cut to the limit, saying how it ran and which files it read
    through a strictly redacted copy (other hard links)."""
    limit = ctx.host.output_limit
    result = _result(ctx, argv, shown[:limit], err, code, truncated or len(shown) > limit,
                     captured=None)
    result.withheld[:0] = command_notices(argv[0], spawned=True, kernel=kernel,
                                          live=ctx.host.is_live)
    result.withheld += [linked_notice(p, n) for p, n in checked.linked]
    return result


async def _kustomized(ctx: ToolContext, argv: list[str], checked: Checked,
                      timeout_s: float) -> ToolOutput:
    """``kubectl kustomize DIR`` built from a redacted copy of its tree, in a sandbox that
    holds that copy and the system's programs only (see _kustomize.py)."""
    exe = trusted_binary("kubectl", ctx.host.trusted_bin_dirs)
    timeout = min(timeout_s, ctx.host.command_timeout_s)
    # reading and redacting the copy takes seconds: off the event loop
    built = await anyio.to_thread.run_sync(
        build, ctx, checked.paths[0], exe, {**_BASE_ENV, **checked.env}, timeout,
        ctx.host.output_limit + _MARGIN)
    if built.timed_out:
        raise ToolError(f"`{' '.join(argv)}` did not finish within {timeout:g}s; its process "
                        "group was killed")
    shown, limit = redact(built.out), ctx.host.output_limit
    result = _result(ctx, argv, shown[:limit], redact(built.err), built.code,
                     built.truncated or len(shown) > limit, captured=None)
    # it saw no host file and no host state: the copy's notices, not the live root's
    result.withheld = [*command_notices("kustomize", spawned=True, kernel=True, live=False),
                       *built.notices]
    return result


def _narrow_git(ctx: ToolContext, argv: list[str], checked: Checked) -> ToolOutput:
    """git answered by the narrow reader (_gitread.py): objects read by a library from a
    private copy of the repository's metadata, in one fixed format, redacted per file."""
    # dulwich costs 15-25 ms to import and most runs never read git: imported when one does
    from ._gitread import read_git

    assert checked.git_repo is not None
    try:
        out = read_git(ctx.host.root, checked.argv[1:], ctx.host.output_limit)
    except Refused as exc:
        raise ToolError(f"refused: {exc}") from None
    limit = ctx.host.output_limit
    return _result(ctx, argv, out[:limit], "", 0, len(out) > limit,
                   captured=None if ctx.host.is_live else "snapshot")


def _grepped(pattern: str | None, text: str) -> str:
    """The lines of the redacted ``text`` that match ``pattern`` (journalctl's smart case: a
    pattern without capitals ignores case), matched here so it never sees a secret."""
    if pattern is None:
        return text
    from ._files import compile_linear

    rx = compile_linear(pattern, ignore_case=pattern == pattern.lower())
    return "".join(line for line in text.splitlines(keepends=True) if rx.search(line))


def _redacted_output(argv: list[str], out: str) -> str:
    out = redact_systemctl(argv, out, redact)  # Environment= one variable at a time
    return redact(out)


def _police(ctx: ToolContext, operand: str) -> str:
    """The file the kernel will reach for ``operand``, checked against the policy. Links are
    resolved before '..' as the kernel does (``/usr/lib/ssl/certs/../../shadow`` is
    ``/etc/shadow`` when certs links to /etc/ssl/certs), never the text normalized first."""
    path = operand if operand.startswith("/") else "/" + operand
    try:
        real = _realpath(path)
        check_policy(ctx.host.root, normalize(path))
        check_policy(ctx.host.root, real)
    except PathRefused as exc:
        raise ToolError(f"refused: {exc}") from None
    _not_special(operand, real)
    return real


def _not_special(operand: str, real: str) -> None:
    """A FIFO, socket or device is refused before any program opens it: reading a FIFO
    blocks until the deadline (``wc``, ``sha256sum``), a device never ends (issue 28)."""
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return  # absent: the program says so
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ToolError(f"refused: {operand} is not a regular file or a directory (a FIFO, "
                        "socket or device); programs here read only those")


def _realpath(path: str) -> str:
    """``os.path.realpath``, whose readlink raises when a link cannot be read (/proc/1/root)
    or was swapped for a file since its lstat (a race): a refusal, not an internal error."""
    try:
        return os.path.realpath(path)
    except OSError as exc:
        raise ToolError(f"refused: {path} cannot be resolved ({exc.strerror}); the path guard "
                        "checks where a path leads before a command may use it") from None


_MAX_WALKED = 5000


def _walked(ctx: ToolContext, checked: Checked) -> Checked:
    """``grep -r DIR``: the files under DIR listed through the path guard (so the deny-list
    applies to each, as the grep tool applies it) and grep given those files, not -r. A
    recursive grep run by the program itself would read credential files the guard refuses."""
    flags = [a for a in checked.argv[1:] if a.startswith("-") and not a.startswith("--")]
    if checked.argv[0] != "grep" or not any("r" in f[1:] for f in flags if len(f) > 1 and
                                            not f[1:].isdigit()):
        return checked
    from ._files import _grep_targets  # the grep tool's own walk

    files: dict[str, list[str]] = {}
    for operand in checked.paths:
        found, capped = _grep_targets(ctx, operand)
        if capped or sum(map(len, files.values())) + len(found) > _MAX_WALKED:
            raise ToolError(f"refused: grep -r {operand} would search more than {_MAX_WALKED} "
                            "files; give a narrower directory")
        files[operand] = found
    argv = ["grep"]
    for a in checked.argv[1:]:
        if a in files:
            argv += files[a]
        elif a.startswith("-") and not a.startswith("--") and "r" in a[1:]:
            rest = a.replace("r", "")
            if rest != "-":
                argv.append(rest)
        else:
            argv.append(a)
    if not any(o in checked.paths for o in checked.argv[1:]):  # grep -r PATTERN: the root
        argv += files.get(".", [])
    if "-h" not in argv:
        argv.insert(1, "-H")  # file names, as grep -r prints them
    if not any(files.values()):
        argv.append("/dev/null")  # nothing readable matched: grep must not read stdin
    return Checked(argv, paths=[f for fs in files.values() for f in fs], env=checked.env)


def _copied(ctx: ToolContext, checked: Checked, scratch: str) -> Checked:
    """A program that prints file contents gets redacted copies of its file operands (see
    _copies.py); the output names the files as the host does."""
    if checked.argv[0] not in CONTENT_PRINTERS:
        return checked
    operands: dict[str, Copy] = {}
    for text in dict.fromkeys(checked.argv[1:]):
        if text in checked.shown_as or text in checked.paths:
            host_path = checked.shown_as.get(text, text)
            operands[text] = Copy(host_path if host_path.startswith("/") else "/" + host_path)
    linked: dict[str, int] = {}
    given = make_copies(checked.argv, operands, scratch, ctx.host.root, linked)
    if not given:
        return checked
    argv = [checked.argv[0], *(given.get(a, a) for a in checked.argv[1:])]
    shown = {**checked.shown_as, **{c: checked.shown_as.get(t, t) for t, c in given.items()}}
    return Checked(argv, paths=checked.paths, env=checked.env, shown_as=shown,
                   linked=tuple(linked.items()))


def _no_secret_links(checked: Checked) -> None:
    """Refuse an operand that is a credential file under another name (a hard link)."""
    secrets = secret_inodes()
    for a in checked.argv[1:]:
        if a in checked.paths or a in checked.shown_as:
            try:
                st = os.stat(a if a.startswith("/") else "/" + a)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in secrets:
                raise ToolError(f"refused: {checked.shown_as.get(a, a)} is a credential file "
                                "(matched by inode: a hard link under another name is too); "
                                "the sandbox never reads it")


_MAX_BINDS = 64  # mounts cost bubblewrap time: past this, mount the common directory


def _reached(checked: Checked, exe: str, scratch: str) -> list[str]:
    """What the kernel sandbox may need mounted beyond its default view: the redacted
    copies, the program's directory, each operand that is not a directory, and git's repository.
    needs_of() keeps those a live sandbox hides; a snapshot's sandbox mounts them all (and
    only them). A directory operand in an emptied place (``ls /tmp``) stays empty."""
    reached = [scratch, os.path.dirname(exe)]
    for a in checked.argv[1:]:
        if a in checked.shown_as or a in checked.paths:
            real = _realpath(a if a.startswith("/") else "/" + a)
            if os.path.exists(real) and not os.path.isdir(real):
                reached.append(real)
    reached += list(checked.trees)
    if len(reached) > _MAX_BINDS:  # grep -r's file list: one mount of the tree it walked
        reached = [scratch, os.path.dirname(exe), os.path.commonpath(reached[2:])]
    return [p for p in dict.fromkeys(reached) if os.path.exists(p)]


def _resolved(ctx: ToolContext, checked: Checked) -> Checked:
    """Each path operand policed and handed to the program as the real path that was
    checked, so the program opens what the policy saw (output still names the operand)."""
    mapped = {p: _police(ctx, p) for p in checked.paths}
    # only where a link changes where the text points (a plain path is passed as given)
    real = {p: r for p, r in mapped.items() if p in checked.argv[1:] and r != "/" and
            r != normalize(p if p.startswith("/") else "/" + p)}
    if not real or checked.git_repo is not None:
        return checked
    argv = [checked.argv[0], *(real.get(a, a) for a in checked.argv[1:])]
    return Checked(argv, paths=checked.paths, env=checked.env,
                   shown_as={r: p for p, r in real.items()})


def _captured(ctx: ToolContext, argv: list[str], grep: str | None = None) -> ToolOutput:
    manifest = ctx.host.snapshot
    if manifest is None:
        raise ToolError(
            f"`{' '.join(argv)}` cannot run: the root {ctx.host.root.path} is not the live host "
            "and has no snapshot manifest (.agentkit/snapshot.json); read files instead")
    cap = find_command(manifest, argv)
    if cap is None and grep is not None:  # the journal captured without a pattern, filtered
        cap = find_command(manifest, [a for a in argv if a not in _grep_words(argv)])
    if cap is None:
        have = "; ".join(" ".join(c.argv) for c in manifest.commands) or "none"
        raise ToolError(f"`{' '.join(argv)}` was not captured in this snapshot. Captured: {have}")
    try:
        out = read_capture(ctx.host.root, cap.stdout)
        err = read_capture(ctx.host.root, cap.stderr) if cap.stderr else ""
    except SnapshotError as exc:
        raise ToolError(str(exc)) from None
    limit = ctx.host.output_limit
    if len(out) > limit and argv[:1] == ["journalctl"]:
        # A journal reads oldest first: what is cut must be the oldest, not the newest lines
        # (the unit's current state is at the end). Redacted first (with a margin of lines
        # before the window, for context), then cut at a line start.
        tail = _grepped(grep, redact(_from_line(out[-(limit + _MARGIN):])))[-limit:]
        return _result(ctx, argv, _from_line(tail), redact(err[:_STDERR_LIMIT]),
                       cap.exit_code, True, captured=manifest.captured_at or "snapshot")
    # redacted whole, then cut: a cut made first could leave a secret's tail without its key
    shown = redact(redact_systemctl(argv, out, redact))
    return _result(ctx, argv, _grepped(grep, shown)[:limit], redact(err[:_STDERR_LIMIT]),
                   cap.exit_code, len(shown) > limit,
                   captured=manifest.captured_at or "snapshot")


def _from_line(text: str) -> str:
    return text[text.find("\n") + 1:]


def _grep_words(argv: list[str]) -> set[str]:
    """The words of a journalctl pattern option (``-g P``, ``--grep P``, ``--grep=P``)."""
    words = {a for a in argv if a.startswith("--grep=")}
    for i, a in enumerate(argv[:-1]):
        if a in ("-g", "--grep"):
            words |= {a, argv[i + 1]}
    return words


def _result(ctx: ToolContext, argv: list[str], out: str, err: str, code: int, truncated: bool,
            captured: str | None) -> ToolOutput:
    shown = " ".join(argv)
    locator = f"$ {shown} [exit {code}]" + (f" (captured {captured})" if captured else "")
    ev = ctx.evidence("command", locator, out, out)
    if truncated and argv[:1] == ["journalctl"] and captured:
        out += f"\n[… older lines cut: only the newest {ctx.host.output_limit} bytes are shown]"
    elif truncated:
        out += f"\n[… output truncated at {ctx.host.output_limit} bytes]"
    return ToolOutput(
        data={"argv": argv, "exit_code": code, "stdout": out, "stderr": err,
              "truncated": truncated, "captured": captured, "evidence_id": ev.id},
        evidence=[ev],
        # what the output is, whether it ran or was captured; how it ran is added by the
        # caller that ran it
        withheld=command_notices(argv[0], spawned=False, kernel=False, live=False),
    )
