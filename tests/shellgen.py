"""Start scripts generated for the differential test against bash (test_shell_differential):
the shapes real start scripts use, mixed at random from a seed, plus the constructs whose
outcome depends on run time. Run-time inputs are files under ``<case>/rt/`` (a flag that exists
or not, a value file that is empty or not); the test runs bash once per combination ("world"),
so a variable whose value differs between worlds is one the static reading must call not
established, and one that is the same in every world is one it must get right.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

NAMES = ["NCCL_PROTO", "NCCL_ALGO", "NCCL_P2P_LEVEL", "NCCL_IB_DISABLE", "CUDA_VISIBLE_DEVICES",
         "CUDA_DEVICE_ORDER"]
HELPERS = ["MODEL", "TP", "Y"]
VALUES = ["LL", "Ring", "SYS", "0", "1", "'a b'", '"x y"', "a\\ b", '"$Y"', "${Y:-dflt}",
          '"${TP-unset}"', "'$LIT'", '"q\\"t"', '""', "pre${TP}post", "${NCCL_PROTO:+alt}",
          '"${MODEL}/sub"', "$TP", "${CUDA_VISIBLE_DEVICES:-0,1}", "'it'\"'\"'s'"]
SAFE_VALUES = [v for v in VALUES if "'" not in v]  # fit inside '…' (bash -c, eval)
# for env NAME=VALUE before the engine: no word splitting (env would run another program)
ENV_VALUES = ["LL", "Ring", "'a b'", '"x y"', '"$Y"', '"${TP-unset}"', '"${Y:-dflt}"']
MAX_INPUTS = 3  # run-time inputs per case: at most 2**3 worlds, plus the ones a construct adds


@dataclass
class Case:
    root: str
    argv: list[str]
    env: dict[str, str]
    files: dict[str, str] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)  # rt/<flag>: exists or not
    values: dict[str, str] = field(default_factory=dict)  # rt/<name>: "" or this text
    wild: bool = False  # has code the reading cannot follow (eval of run-time text, …)
    engine_conditional: bool = False

    def worlds(self) -> list[tuple[set[str], dict[str, str]]]:
        out: list[tuple[set[str], dict[str, str]]] = [(set(), {})]
        for f in self.flags:
            out = [(w | {f}, v) for w, v in out] + out
        for name, text in self.values.items():
            out = [(w, {**v, name: text}) for w, v in out] + [(w, {**v, name: ""})
                                                              for w, v in out]
        return out


class Gen:
    def __init__(self, rng: random.Random, root: str, engine: str) -> None:
        self.r = rng
        self.root = root
        self.engine = engine
        self.case = Case(root, [], {})
        self.nfiles = 0
        self.nfuncs = 0
        self.depth = 0

    def name(self) -> str:
        return self.r.choice(NAMES + NAMES + HELPERS)

    def value(self, safe: bool = False) -> str:
        return self.r.choice(SAFE_VALUES if safe else VALUES)

    def flag(self) -> str:
        """A fresh run-time flag: no two constructs test the same one, so the worlds never
        correlate two conditions (a reading that does not compare conditions is right)."""
        f = f"f{len(self.case.flags)}"
        self.case.flags.append(f)
        return f"{self.root}/rt/{f}"

    def rtvalue(self, text: str | None = None) -> str:
        v = f"v{len(self.case.values)}"
        self.case.values[v] = text or f"rt{v}"
        return f"{self.root}/rt/{v}"

    @property
    def inputs(self) -> int:
        return len(self.case.flags) + len(self.case.values)

    # ---- statements -------------------------------------------------------------------------

    def stmts(self, n: int, safe: bool = False, runtime: bool = True) -> list[str]:
        return [self.stmt(safe, runtime) for _ in range(n)]

    def stmt(self, safe: bool = False, runtime: bool = True) -> str:
        r, n, v = self.r, self.name, lambda: self.value(safe)
        simple = [
            lambda: f"export {n()}={v()}", lambda: f"{n()}={v()}", lambda: f"{n()}={v()}",
            lambda: f"export {n()}", lambda: f"export {n()}={v()} {n()}",
            lambda: f"declare -x {n()}={v()}", lambda: f"typeset -x {n()}",
            lambda: f"export -n {n()}", lambda: f"declare +x {n()}",
            lambda: f"unset {n()}", lambda: f"unset -v {n()}", lambda: f"{n()}+={v()}",
            lambda: f': "${{{n()}:={v()}}}"', lambda: f"{n()}={v()} true",
            lambda: f"true && export {n()}={v()}", lambda: f"false || {n()}={v()}",
            lambda: f"false && export {n()}={v()}", lambda: f"( export {n()}={v()} )",
            lambda: f"{{ export {n()}={v()}; }}", lambda: f"echo x | export {n()}={v()}",
        ]
        if self.depth == 0 and not safe:  # under a condition: known limits (docs/testing.md)
            simple += [lambda: f"readonly {n()}={v()}",
                       lambda: r.choice(["set -a", "set +a", "set -o allexport",
                                         "set +o allexport"])]
        if not safe:
            simple.append(lambda: f"for x in a 'b c'; do export {n()}=\"$x\"; done")
            simple += [lambda: f"eval '{self.stmt(safe=True, runtime=False)}'",
                       lambda: f"bash -c '{self.stmt(safe=True, runtime=False)}'"]
        if self.depth < 2 and not safe:
            simple += [self.source, self.function, self.function]
        if runtime and self.inputs < MAX_INPUTS:
            simple += [self.condition, self.substitution, self.substitution, self.case_,
                       self.read, self.andor]
            if self.depth == 0:  # a loop consumes its flags: in a function called twice it
                simple.append(self.loop)  # would run only the first time
            if not safe and r.random() < 0.03:
                simple.append(self.wild)
        return r.choice(simple)()

    def nested(self, n: int, safe: bool = False) -> str:
        self.depth += 1
        try:
            return "; ".join(self.stmts(n, safe)) or ":"
        finally:
            self.depth -= 1

    def source(self) -> str:
        path = f"{self.root}/src{self.nfiles}.sh"
        self.nfiles += 1
        self.depth += 1
        self.case.files[path] = "\n".join(["# sourced", *self.stmts(self.r.randint(1, 4))]) + "\n"
        self.depth -= 1
        return f"{self.r.choice(['source', '.'])} {path}"

    def host_file(self) -> str:
        """A file of the host, the same in every world and given to the reading too: tested
        with -e/-f/-s (and !), then sourced, as in ``[ -f F ] && . F``. The reading decides
        these from the file it read; a file it cannot read is a run-time flag above."""
        path = f"{self.root}/etc/h{self.nfiles}.env"
        self.nfiles += 1
        self.depth += 1
        self.case.files[path] = "\n".join(["# host file", *self.stmts(self.r.randint(1, 3))]) \
            + "\n"
        other = self.nested(1)
        self.depth -= 1
        op = self.r.choice(["-e", "-f", "-s"])
        test = self.r.choice([f"[ {op} {path} ]", f"test {op} {path}"])
        negated = self.r.choice([f"[ ! {op} {path} ]", f"test ! {op} {path}"])
        src = self.r.choice([". ", "source "]) + path
        return self.r.choice([f"{test} && {src}", f"{negated} || {src}",
                              f"{negated} && {{ {other}; }}",
                              f"if {test}; then {src}; else {other}; fi",
                              f"if {negated}; then {other}; fi"])

    def function(self) -> str:
        name = f"fn{self.nfuncs}"
        self.nfuncs += 1
        body = self.nested(self.r.randint(1, 3))
        if self.r.random() < 0.4:
            body = f"local {self.name()}={self.value()}; {body}"
        # NAME=V f only for helper names: bash's rules for a declare in f on such a NAME are
        # not modelled (docs/testing.md)
        calls = self.r.choice([name, f"{name} a", f"{self.r.choice(HELPERS)}={self.value()} {name}",
                               f"{name}; {name}", ""])
        return f"{name}() {{ {body}; }}" + (f"\n{calls}" if calls else "")

    def condition(self) -> str:
        f = self.flag()
        other = f" else {self.nested(self.r.randint(1, 2))};" if self.r.random() < 0.5 else ""
        return f"if [ -e {f} ]; then {self.nested(self.r.randint(1, 2))};{other} fi"

    def andor(self) -> str:
        return f"[ -e {self.flag()} ] {self.r.choice(['&&', '||'])} {self.nested(1)}"

    def substitution(self) -> str:
        path = self.rtvalue()
        return self.r.choice([f"export {self.name()}=$(cat {path})",
                              f"{self.name()}=\"pre$(cat {path})\"",
                              f"{self.name()}=`cat {path}`",
                              f"export {self.name()}=\"${{Y:-$(cat {path})}}\""])

    def loop(self) -> str:
        """Runs 0, 1 or 2 times (flag, flag and a second flag), as the reading assumes."""
        f, again = self.flag(), self.flag()
        kind = self.r.choice(["while [ -e {f} ]", "until [ ! -e {f} ]"]).format(f=f)
        return (f"{kind}; do {self.nested(self.r.randint(1, 2))}; if [ -e {again} ]; then "
                f"rm -f {again}; else rm -f {f}; fi; done")

    def case_(self) -> str:
        path = self.rtvalue()
        return (f'case "$(cat {path})" in rt*) {self.nested(1)};; *) {self.nested(1)};; '
                "esac")

    def read(self) -> str:
        return f"read -r {self.name()} < {self.rtvalue()} || true"

    def wild(self) -> str:
        self.case.wild = True
        if self.r.random() < 0.5:
            return f"source {self.root}/missing.sh"
        return f'eval "$(cat {self.rtvalue("export NCCL_ALGO=Tree")})"'

    # ---- the engine -------------------------------------------------------------------------

    def launch(self) -> str:
        r, eng = self.r, self.engine
        args = r.choice(['serve "$MODEL" --tp "$TP" "$@"', "serve /m $TP", 'serve "$@"',
                         "serve ${MODEL:-/dflt} --x=\"$Y\"", "serve /m 'a b' \"$NCCL_PROTO\""])
        line = r.choice([f"exec {eng} {args}", f"{eng} {args}", f"{eng} {args}",
                         f"{self.name()}={self.value()} exec {eng} {args}",
                         f"exec env {self.name()}={r.choice(ENV_VALUES)} {eng} {args}",
                         f"exec env -u {self.name()} {eng} {args}",
                         f"exec env -i PATH=/usr/bin:/bin {self.name()}=1 {eng} {args}",
                         f"{eng} {args} 2>&1 | cat",
                         f"exec bash -c 'export {self.name()}={self.value(safe=True)}; exec "
                         f"{eng} serve \"$@\"' name a 'b c'",
                         f"launch() {{ exec {eng} {args}; }}\nlaunch --fn"])
        if r.random() < 0.04:
            line = f"exec {eng} serve $(cat {self.rtvalue()})"
        if r.random() < 0.04:
            self.case.engine_conditional = True
            line = f"if [ -e {self.flag()} ]; then exec {eng} serve /cond; fi\n{line}"
        return line


def _host_files(seed: int, g: Gen, body: list[str]) -> None:
    """Tests on host files, put among the statements from a random stream of their own (so
    the rest of each case is the script it was before they were added), and only before a
    loop: its ``rm`` may change files, after which the reading rightly decides no file test."""
    h = Gen(random.Random(seed + 1_000_003), g.root, g.engine)
    h.case, h.nfiles, h.nfuncs = g.case, g.nfiles + 100, g.nfuncs + 100
    loops = [i for i, line in enumerate(body) if "rm -f" in line]
    for _ in range(h.r.choice([0, 1, 1, 2])):
        body.insert(h.r.randint(0, loops[0] if loops else len(body)), h.host_file())


def generate(seed: int, root: str, engine: str) -> Case:
    r = random.Random(seed)
    g = Gen(r, root, engine)
    env = {k: r.choice(["LL", "Simple", "2,3", "x y", "1"]) for k in NAMES if r.random() < 0.3}
    env.update({"PATH": "/usr/bin:/bin", "MODEL": "/models/m"} if r.random() < 0.7 else
               {"PATH": "/usr/bin:/bin"})
    if r.random() < 0.5:
        env["TP"] = r.choice(["8", "2 4"])
    g.case.env = env
    body = [*(["set -e"] if r.random() < 0.15 else []), *(["set -u"] if r.random() < 0.08 else []),
            *g.stmts(r.randint(2, 9))]
    _host_files(seed, g, body)
    body.append(g.launch())
    text = "\n".join(body) + "\n"
    args = r.choice([[], ["--port", "1"], ["a b", "c"]])
    form = r.random()
    if form < 0.2:
        g.case.argv = ["/bin/bash", "-c", text, "start", *args]
    else:
        path = f"{root}/start.sh"
        g.case.files[path] = "#!/bin/bash\n" + text
        if form < 0.5:
            g.case.argv = [path, *args]
        elif form < 0.6:
            g.case.argv = ["/usr/bin/env", f"{r.choice(NAMES)}=envset", "/bin/bash", path, *args]
        else:
            g.case.argv = ["/bin/bash", path, *args]
    return g.case
