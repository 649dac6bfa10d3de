"""Argument rules for the container and cluster CLIs (docker, podman, crictl, kubectl):
listing and inspecting only.

Global options that reach another daemon or cluster (``-H``/``--host``, ``--context``,
``--url``, ``--server``, ``--token``, ``--as``) are refused by not being listed; so are every
subcommand that changes state, ``exec``/``run``/``cp`` (they run or copy), ``logs -f`` (never
ends) and ``kubectl get secrets`` (credentials). ``kubectl kustomize DIR`` builds manifests
offline, with no options at all.
"""

from __future__ import annotations

import re

from ._rules import Checked, Refused

_NAME = re.compile(r"[A-Za-z0-9][\w.-]{0,127}")
# an image reference (registry/name:tag@digest), for `inspect --type image` only
_IMAGE = re.compile(r"[A-Za-z0-9][\w./:@-]{0,254}")
_JSON = {"{{json .}}", "json", "{{ json . }}"}


def _container_cli(program: str, args: list[str]) -> Checked:
    if not args:
        raise Refused(f"{program} needs one of: ps, inspect, image inspect, logs")
    sub, rest = args[0], args[1:]
    if sub == "ps":
        _options(program, sub, rest, flags={"-a", "--all", "--no-trunc", "-q", "--quiet"},
                 valued={"--format": lambda v: v in _JSON}, operands=0)
    elif sub == "inspect":
        image = "--type=image" in rest or any(
            a == "--type" and rest[i + 1:i + 2] == ["image"] for i, a in enumerate(rest))
        _options(program, sub, rest, flags=set(),
                 valued={"--type": lambda v: v in ("container", "image")}, operands=64,
                 names=_IMAGE if image else _NAME)
    elif sub == "image" and rest[:1] == ["inspect"]:  # the same as inspect --type image
        _options(program, "image inspect", rest[1:], flags=set(), valued={}, operands=64,
                 names=_IMAGE)
    elif sub == "logs":
        _options(program, sub, rest, flags={"-t", "--timestamps"},
                 valued={"--tail": lambda v: v.isdigit(), "-n": lambda v: v.isdigit(),
                         "--since": lambda v: re.fullmatch(r"[\w:.+-]{1,40}", v) is not None},
                 operands=1)
    else:
        raise Refused(f"{program} subcommand {sub!r} is not allowed (ps, inspect, image "
                      "inspect, logs)")
    return Checked([program, *args], env={"DOCKER_CLI_HINTS": "false"})


def _options(program: str, sub: str, args: list[str], flags: set[str],
             valued: dict[str, object], operands: int, names: re.Pattern[str] = _NAME
             ) -> None:
    seen = 0
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        name, eq, value = a.partition("=")
        if a in flags:
            continue
        if name in valued:
            if not eq:
                if i >= len(args):
                    raise Refused(f"{program} {sub} {name} needs a value")
                value = args[i]
                i += 1
            check = valued[name]
            if not callable(check) or not check(value):
                raise Refused(f"{program} {sub} {name} {value!r} is not allowed")
            continue
        if a.startswith("-"):
            raise Refused(f"{program} {sub}: option {a!r} is not allowed")
        if not names.fullmatch(a):
            raise Refused(f"{program} {sub}: {a!r} is not a container name or id")
        seen += 1
        if seen > operands:
            raise Refused(f"{program} {sub} takes at most {operands} names")


def docker(args: list[str]) -> Checked:
    return _container_cli("docker", args)


def podman(args: list[str]) -> Checked:
    return _container_cli("podman", args)


def crictl(args: list[str]) -> Checked:
    """The CRI's view of a Kubernetes node's containers: ``crictl ps`` and ``crictl inspect
    ID`` only (JSON, with the container's environment: redacted like any output). Global
    options (``-r``/``--runtime-endpoint``, ``-c``/``--config``) are refused: the verb comes
    first."""
    if not args or args[0] not in ("ps", "inspect"):
        raise Refused("crictl needs one of: ps, inspect")
    if args[0] == "ps":
        _options("crictl", "ps", args[1:], flags={"-a", "--all", "--no-trunc", "-q", "--quiet"},
                 valued={"-o": lambda v: v == "json", "--output": lambda v: v == "json"},
                 operands=0)
    else:
        _options("crictl", "inspect", args[1:], flags=set(),
                 valued={"-o": lambda v: v == "json", "--output": lambda v: v == "json"},
                 operands=16)
    return Checked(["crictl", *args])


# Kinds an investigation reads; never secrets.
KUBE_KINDS = frozenset({"pods", "pod", "deployments", "deployment", "deploy", "statefulsets",
                        "statefulset", "sts", "daemonsets", "daemonset", "ds", "configmaps",
                        "configmap", "cm", "nodes", "node", "replicasets", "rs", "jobs"})
KUBECONFIGS = re.compile(r"/etc/kubernetes/admin\.conf|/root/\.kube/config|"
                         r"/home/[\w.-]+/\.kube/config|/etc/rancher/k3s/k3s\.yaml")


def _kustomize(args: list[str]) -> Checked:
    """``kubectl kustomize DIR`` and nothing more: what ``kubectl apply -k DIR`` would apply,
    built offline. No flag is accepted, so none of kustomize's code-running features can be
    switched on (``--enable-alpha-plugins``, ``--enable-exec``, ``--enable-helm``), nor its
    load restrictor relaxed (``--load-restrictor``); it needs no kubeconfig, and gets no
    network (needs_of): a remote base fails instead of being fetched."""
    if len(args) != 1 or args[0].startswith("-") or not args[0].startswith("/"):
        raise Refused("kubectl kustomize: exactly one absolute directory, no options")
    return Checked(["kubectl", "kustomize", args[0]], paths=[args[0]],
                   env={"KUBECACHEDIR": "/dev/null/kube-cache",
                        "KUSTOMIZE_PLUGIN_HOME": "/dev/null/kustomize-plugins"})


def kubectl(argv: list[str]) -> Checked:
    if argv[:1] == ["kustomize"]:
        return _kustomize(argv[1:])
    rest = argv
    while rest and rest[0].startswith("--kubeconfig="):  # a global option before the verb
        if not KUBECONFIGS.fullmatch(rest[0].split("=", 1)[1]):
            raise Refused(f"kubectl {rest[0]!r}: only the standard kubeconfig locations")
        rest = rest[1:]
    if rest[:1] != ["get"]:
        raise Refused("kubectl: only `get KINDS -o json` is allowed")
    kinds: list[str] = []
    output = False
    args = rest
    i = 1
    while i < len(args):
        a = args[i]
        i += 1
        name, eq, value = a.partition("=")
        if a in ("-A", "--all-namespaces"):
            continue
        if name in ("-o", "--output"):
            value = value if eq else (args[i] if i < len(args) else "")
            i += 0 if eq else 1
            if value != "json":
                raise Refused("kubectl get: only -o json is allowed")
            output = True
        elif a == "-ojson":
            output = True
        elif name in ("-n", "--namespace", "-l", "--selector"):
            value = value if eq else (args[i] if i < len(args) else "")
            i += 0 if eq else 1
            if not re.fullmatch(r"[\w.,=!/-]{1,253}", value):
                raise Refused(f"kubectl get {name} {value!r} is not allowed")
        elif name == "--kubeconfig":
            value = value if eq else (args[i] if i < len(args) else "")
            i += 0 if eq else 1
            if not KUBECONFIGS.fullmatch(value):
                raise Refused(f"kubectl --kubeconfig {value!r}: only the standard locations")
        elif a.startswith("-"):
            raise Refused(f"kubectl get: option {a!r} is not allowed")
        else:
            for kind in a.split(","):
                if kind not in KUBE_KINDS:
                    raise Refused(f"kubectl get {kind!r} is not allowed "
                                  f"({', '.join(sorted(KUBE_KINDS))})")
            kinds.append(a)
    if not kinds or not output:
        raise Refused("kubectl get needs KINDS and -o json")
    # kubectl makes $HOME/.kube/cache for its discovery cache: a directory, which no file-size
    # limit stops (the red team found /nonexistent/.kube made in allowlist-only mode). A path
    # under /dev/null can never be made, and kubectl works without its cache.
    return Checked(["kubectl", *argv], env={"KUBECACHEDIR": "/dev/null/kube-cache"})
