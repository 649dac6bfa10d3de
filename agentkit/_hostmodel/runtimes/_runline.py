"""``docker run`` / ``podman run`` command lines, read as the CLI reads them: which words are
options (and which of those take a value), the image, the command after it, and the
environment the container's process gets.

Facts from Docker's reference (``docker container run``, and docker/cli's ``opts/file.go``,
``opts/env.go``, ``cli/command/container/opts.go``), checked against the real CLI by
``tests/test_runtimes_runline.py`` (a fake daemon records what ``docker run`` sends):

- options come before the image; the first word that is not an option (or the value of one)
  is the image and every word after it is the container's command (no option parsing there);
- ``-e``/``--env`` and ``--env-file`` may repeat; the CLI sends the env-file lines first, in
  file order, then the ``-e`` values, so an ``-e`` wins over an env file (the process keeps the
  last occurrence of a name); the daemon puts these over the image's ``ENV``;
- an env file: leading whitespace trimmed, empty lines and ``#`` lines skipped, ``NAME=value``
  kept verbatim (no quote removal, no trailing trim, no ``$`` expansion), ``NAME`` alone takes
  the CLI's own environment value and is dropped when that is unset;
- ``-e NAME`` alone takes the CLI's value; unset there, it is sent bare, and the daemon then
  removes NAME from the image's environment.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

CLIS = ("docker", "podman")
# Options that take no value (`docker run --help`, Docker 28; Podman's own on top). Every
# other option takes one; an option in neither list makes the line not understood.
_BOOL_LONG = frozenset({
    "detach", "disable-content-trust", "help", "init", "interactive", "no-healthcheck",
    "oom-kill-disable", "privileged", "publish-all", "quiet", "read-only", "rm", "sig-proxy",
    "tty", "use-api-socket",
    # podman run
    "replace", "rmi", "tls-verify", "env-host", "http-proxy", "no-hosts", "read-only-tmpfs",
    "unsetenv-all", "rootfs",
})
_BOOL_SHORT = frozenset("diPqt")
_VALUE_SHORT = frozenset("aceEhlmpuvw")
_VALUE_LONG = frozenset({
    "add-host", "annotation", "attach", "blkio-weight", "blkio-weight-device", "cap-add",
    "cap-drop", "cgroup-parent", "cgroupns", "cidfile", "cpu-count", "cpu-percent",
    "cpu-period", "cpu-quota", "cpu-rt-period", "cpu-rt-runtime", "cpu-shares", "cpus",
    "cpuset-cpus", "cpuset-mems", "detach-keys", "device", "device-cgroup-rule",
    "device-read-bps", "device-read-iops", "device-write-bps", "device-write-iops", "dns",
    "dns-option", "dns-search", "domainname", "entrypoint", "env", "env-file", "expose", "gpus",
    "group-add", "health-cmd", "health-interval", "health-retries", "health-start-interval",
    "health-start-period", "health-timeout", "hostname", "io-maxbandwidth", "io-maxiops", "ip",
    "ip6", "ipc", "isolation", "kernel-memory", "label", "label-file", "link", "link-local-ip",
    "log-driver", "log-opt", "mac-address", "memory", "memory-reservation", "memory-swap",
    "memory-swappiness", "mount", "name", "network", "net", "network-alias", "net-alias",
    "oom-score-adj", "pid", "pids-limit", "platform", "publish", "pull", "restart", "runtime",
    "security-opt", "shm-size", "stop-signal", "stop-timeout", "storage-opt", "sysctl", "tmpfs",
    "ulimit", "user", "userns", "uts", "volume", "volume-driver", "volumes-from", "workdir",
    # podman run
    "arch", "authfile", "cgroup-conf", "cgroups", "chrootdirs", "conmon-pidfile", "decryption-key",
    "env-merge", "gidmap", "hostuser", "image-volume", "infra",
    "init-path", "os", "passwd-entry", "personality", "pod", "pod-id-file",
    "preserve-fds", "rdt-class", "requires", "retry", "retry-delay", "sdnotify", "seccomp-policy",
    "secret", "subgidname", "subuidname", "systemd", "timeout", "timezone", "uidmap", "umask",
    "unsetenv", "variant",
})
_SHORT_NAMES = {"a": "attach", "c": "cpu-shares", "e": "env", "h": "hostname", "l": "label",
                "m": "memory", "p": "publish", "u": "user", "v": "volume", "w": "workdir",
                "d": "detach", "i": "interactive", "P": "publish-all", "q": "quiet", "t": "tty",
                "E": "env"}
# Options of the CLI itself, before `run` (`docker --help`; podman's most used).
_GLOBAL_VALUE = frozenset({"config", "context", "host", "log-level", "tlscacert", "tlscert",
                           "tlskey", "root", "runroot", "cgroup-manager", "url", "connection",
                           "storage-driver", "events-backend", "identity", "network-cmd-path",
                           "runtime", "tmpdir", "conmon", "module"})
_GLOBAL_VALUE_SHORT = frozenset("cHl")
_GLOBAL_BOOL = frozenset({"debug", "tls", "tlsverify", "remote", "syslog"})
# What Go's strconv.ParseBool reads (pflag's `--rm=VALUE`); any other value is refused.
_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_GO_FALSE = ("0", "f", "F", "FALSE", "false", "False")


@dataclass
class RunLine:
    """One ``docker run`` / ``podman run`` line, as its options say."""

    cli: str
    image: str = ""
    command: list[str] = field(default_factory=list)
    entrypoint: list[str] | None = None  # --entrypoint, when given ("" clears the image's)
    options: list[tuple[str, str]] = field(default_factory=list)  # (long name, value) in order
    problem: str = ""  # why the line is not understood (then image and command are unknown)

    def values(self, name: str) -> list[str]:
        return [v for n, v in self.options if n == name]

    def last(self, name: str) -> str | None:
        got = self.values(name)
        return got[-1] if got else None

    def flag(self, name: str) -> bool:
        return self.last(name) in _GO_TRUE


def run_line(argv: list[str]) -> RunLine | None:
    """The run line ``argv`` is, or None when it is no ``docker``/``podman`` ``run``."""
    if not argv or argv[0].rsplit("/", 1)[-1] not in CLIS:
        return None
    line = RunLine(cli=argv[0].rsplit("/", 1)[-1])
    i = _skip_globals(argv, 1)
    if i is None:
        return None
    if argv[i : i + 1] == ["container"]:
        i += 1
    if argv[i : i + 1] != ["run"]:
        return None
    _options(line, argv, i + 1)
    return line


def _skip_globals(argv: list[str], i: int) -> int | None:
    while i < len(argv) and argv[i].startswith("-"):
        name, eq, _ = argv[i].lstrip("-").partition("=")
        long = argv[i].startswith("--")
        if (long and name in _GLOBAL_BOOL) or (not long and name in ("D",)):
            i += 1
        elif (long and name in _GLOBAL_VALUE) or (not long and name[:1] in _GLOBAL_VALUE_SHORT):
            i += 1 if eq or (not long and len(name) > 1) else 2
        else:
            return None  # an option of the CLI this reading does not know
    return i


class _NotUnderstood(Exception):
    """A word of the line this reading does not understand: the reading stops there."""


def _options(line: RunLine, argv: list[str], i: int) -> None:
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        try:
            i = _long(line, argv, i) if a.startswith("--") else _short(line, argv, i)
        except _NotUnderstood as e:
            line.problem = str(e)
            return
    if i >= len(argv):
        line.problem = "no image after the options"
        return
    line.image, line.command = argv[i], argv[i + 1 :]
    ep = line.last("entrypoint")
    if ep is not None:
        line.entrypoint = [ep] if ep else []


def _long(line: RunLine, argv: list[str], i: int) -> int:
    name, eq, value = argv[i][2:].partition("=")
    if name in _BOOL_LONG:
        if eq and value not in _GO_TRUE + _GO_FALSE:
            raise _NotUnderstood(f"--{name}={value} is no boolean the CLI reads (it refuses the "
                                 "line)")
        line.options.append((name, value if eq else "true"))
        return i + 1
    if name not in _VALUE_LONG:
        raise _NotUnderstood(f"option --{name} is not one this reading knows")
    if eq:
        line.options.append((name, value))
        return i + 1
    if i + 1 >= len(argv):
        raise _NotUnderstood(f"--{name} has no value")
    line.options.append((name, argv[i + 1]))
    return i + 2


def _short(line: RunLine, argv: list[str], i: int) -> int:
    """``-it``, ``-eK=V``, ``-e K=V``: booleans combine; a value option takes the rest of
    the word, else the next word (pflag's rules)."""
    word = argv[i][1:]
    for k, ch in enumerate(word):
        if ch in _BOOL_SHORT:
            line.options.append((_SHORT_NAMES[ch], "true"))
            continue
        if ch not in _VALUE_SHORT:
            raise _NotUnderstood(f"option -{ch} is not one this reading knows")
        rest = word[k + 1 :]
        if rest:
            line.options.append((_SHORT_NAMES[ch], rest.removeprefix("=")))
            return i + 1
        if i + 1 >= len(argv):
            raise _NotUnderstood(f"-{ch} has no value")
        line.options.append((_SHORT_NAMES[ch], argv[i + 1]))
        return i + 2
    return i + 1


@dataclass
class EnvEntry:
    """One variable the CLI sends: ``value`` None means sent bare (removed from the image's
    environment); ``file``/``line`` where it was read (an env file), else from ``-e``."""

    name: str
    value: str | None
    file: str = ""
    line: int = 0
    raw: str = ""


# Go's unicode.IsSpace: what the CLI trims from the start of an env-file line.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006" \
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def parse_env_file(text: str, caller: dict[str, str]) -> tuple[list[EnvEntry], str]:
    """An ``--env-file`` as the Docker CLI reads it (pkg/kvfile): entries, and the error that
    makes ``docker run`` refuse to start (empty when none)."""
    out: list[EnvEntry] = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for n, raw in enumerate(lines, 1):
        raw = raw.removesuffix("\r")  # Go's bufio.ScanLines drops one trailing \r
        if n == 1:
            raw = raw.removeprefix("\ufeff")
        line = raw.lstrip(_GO_SPACE)
        if not line or line.startswith("#"):
            continue
        name, eq, value = line.partition("=")
        if not name:
            return [], f"no variable name on line '{line}'"
        if " " in name or "\t" in name:
            return [], f"variable '{name}' contains whitespaces"
        if eq:
            out.append(EnvEntry(name, value, line=n, raw=raw))
        elif line in caller:
            out.append(EnvEntry(name, caller[line], line=n, raw=raw))
    return out, ""


def env_flag(value: str, caller: dict[str, str]) -> EnvEntry:
    """One ``-e`` value as the CLI sends it (opts/env.go ValidateEnv)."""
    name, eq, val = value.partition("=")
    if eq:
        return EnvEntry(name, val, raw=value)
    return EnvEntry(name, caller.get(name), raw=value)


def final_env(entries: list[EnvEntry]) -> dict[str, EnvEntry]:
    """What the process gets from these entries (over the image's ENV): the last occurrence
    of a name wins; a bare name removes it."""
    out: dict[str, EnvEntry] = {}
    for e in entries:
        out.pop(e.name, None)
        out[e.name] = e
    return out


COMPOSE_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
# `docker compose` options before the subcommand that take a value (Compose v2 reference)
_COMPOSE_VALUE = frozenset({"-f", "--file", "-p", "--project-name", "--project-directory",
                            "--env-file", "--profile", "--ansi", "--parallel", "--progress"})


def compose_files(argv: list[str], workdir: str) -> list[str] | None:
    """The Compose files ``docker compose … up`` (or ``docker-compose … up``) reads: the
    ``-f`` files (relative to the working directory), else the first default name found in
    ``--project-directory`` or the working directory (the caller checks which exists: every
    candidate is returned, in Compose's order). None when ``argv`` is no ``compose up``."""
    prog = argv[0].rsplit("/", 1)[-1] if argv else ""
    if prog in CLIS and argv[1:2] == ["compose"]:
        rest = argv[2:]
    elif prog == "docker-compose":
        rest = argv[1:]
    else:
        return None
    files: list[str] = []
    project_dir = workdir
    i = 0
    while i < len(rest) and rest[i].startswith("-"):
        name, eq, value = rest[i].partition("=")
        if name not in _COMPOSE_VALUE:
            i += 1
            continue
        if not eq:
            value = rest[i + 1] if i + 1 < len(rest) else ""
            i += 1
        i += 1
        if name in ("-f", "--file"):
            files.append(value)
        elif name == "--project-directory":
            project_dir = value
    if rest[i : i + 1] != ["up"]:
        return None
    # normalized: the Compose runtime finds a unit's files by the paths a glob returns
    base = posixpath.join(workdir, project_dir)
    return [posixpath.normpath(posixpath.join(workdir if files else base, f))
            for f in files or COMPOSE_NAMES]
