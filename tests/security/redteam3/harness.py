import sys, random, string, time, json
from agentkit._sandbox._redact import redact, redact_file, redact_entry, redact_strict, redact_env_file
from agentkit._sandbox._procs import redact_argv

rng = random.Random(1234)
def S(n=None):
    n = n or rng.randint(20, 36)
    while True:
        s = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s) and s[0].isalpha():
            return s

def leaked(secret, out):
    return any(secret[i:i+12] in out for i in range(len(secret) - 11))

CASES = []  # (cat, kind, label, call, inp, secrets)
def L(cat, label, tmpl, name="config.yaml", n=1, call="file", **kw):
    """tmpl: function of secrets -> text (or argv list / (key,value))."""
    ss = [S() for _ in range(n)]
    inp = tmpl(*ss)
    CASES.append((cat, "leak", label, call, name, inp, ss))
def O(cat, label, inp, name="notes.txt", call="file"):
    CASES.append((cat, "over", label, call, name, inp, None))

def run_call(call, name, inp):
    if call == "file": return redact_file(name, inp)
    if call == "redact": return redact(inp)
    if call == "argv": return redact_argv(inp)
    if call == "entry": return redact_entry(*inp)
    if call == "entry_env": return redact_entry(inp[0], inp[1], True)
    if call == "strict": return redact_strict(inp)
    raise ValueError(call)

def evaluate():
    res = []
    for cat, kind, label, call, name, inp, ss in CASES:
        t = time.perf_counter()
        out = run_call(call, name, inp)
        dt = time.perf_counter() - t
        outs = out if isinstance(out, str) else (out.decode() if isinstance(out, bytes) else json.dumps(out))
        if kind == "leak":
            bad = any(leaked(s, outs) for s in ss)
        else:
            bad = out != inp
        res.append(dict(cat=cat, kind=kind, label=label, call=call, name=name, inp=inp,
                        out=out, bad=bad, secrets=ss, dt=dt))
    return res
