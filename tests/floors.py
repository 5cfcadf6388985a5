#!/usr/bin/env python3
"""make check (tests/floors.sh): ncclsim's engine keeps its floors.

The engine's rooms are the folders of sim/ whose files include sim/sim.h;
each stands on a floor (FLOORS). A room may use the functions of its own
room and of rooms on its floor or below, and include the headers of those
rooms; sim/*.h (what every room shares) and sim/include/ (the public
headers) serve every room. Anything else climbs: a lower room that must
tell an upper one something takes a hook that the upper one registers
(docs/hacking.md, "Ownership of the simulator's internals").

Read from the sources, without the compiler: a function of a room is one
defined at file scope in its .c files (static ones stay in their file) or
in its headers (inline ones reach every includer); a use is its name
anywhere else in code (a call, or a pointer taken), outside comments and
strings, and not a member (x.name, p->name). A folder half written is read
as far as it goes.

Usage: floors.py [SRCDIR]    prints each climb, exits 1 if there is any
       floors.py --self-test checks that this script finds planted climbs
"""
import os
import re
import sys
import tempfile

# Lower numbers are lower floors. kernel/ (CUDA kernels on fibers) stands on
# cuda and below core.
FLOORS = {
    "util": 1,
    "cuda": 2, "net": 2,
    "kernel": 3,
    "core": 4,
    "comm": 5,
    "p2p": 6, "rma": 6, "coll": 6, "dev": 6,
}
SHARED = 1  # sim/*.h and sim/*.c: util's floor (sim.h is util's header too)
PUBLIC = 0  # sim/include/

KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "_Alignof", "alignof", "_Static_assert",
            "defined", "_Generic", "__attribute__", "__typeof__", "typeof", "__builtin_expect"}

TOKEN = re.compile(r"[A-Za-z_]\w*|->|[{}()\[\];,.=]|\S")


def strip(text):
    """Comments, strings and character constants blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_directives(text):
    """(code without preprocessor lines, [directive lines]); continuations joined."""
    code, dirs = [], []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("#"):
            d = line
            while d.endswith("\\") and i + 1 < len(lines):
                i += 1
                d = d[:-1] + " " + lines[i]
                code.append("")
            dirs.append(d.strip())
            code.append("")
        else:
            code.append(line)
        i += 1
    return "\n".join(code), dirs


class Source:
    def __init__(self, path, room):
        self.path, self.room = path, room
        with open(path, errors="replace") as f:
            raw = f.read()
        # Includes are read before strings are blanked: their names are strings.
        self.includes = re.findall(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', raw, re.M)
        code, dirs = split_directives(strip(raw))
        self.tokens = TOKEN.findall(code)
        # A macro's body is code of the header that holds it.
        self.macro_tokens = []
        for d in dirs:
            m = re.match(r"#\s*define\s+\w+(\([^)]*\))?(.*)", d)
            if m:
                self.macro_tokens += TOKEN.findall(m.group(2))

    def definitions(self):
        """Functions defined here at file scope: {name: static?}."""
        out = {}
        toks, depth, start = self.tokens, 0, 0
        for i, t in enumerate(toks):
            if t == "{":
                if depth == 0 and i > 0 and toks[i - 1] == ")":
                    name = self._declarator(i - 1)
                    if name:
                        out[name] = "static" in toks[start:i]
                depth += 1
            elif t == "}":
                depth = max(0, depth - 1)
                if depth == 0:
                    start = i + 1
            elif t == ";" and depth == 0:
                start = i + 1
        return out

    def _declarator(self, close):
        """The name before the parameter list that ends at toks[close]."""
        toks = self.tokens
        while close >= 0:
            level, j = 0, close
            while j >= 0:
                level += toks[j] == ")"
                level -= toks[j] == "("
                if level == 0:
                    break
                j -= 1
            if j <= 0:
                return None
            name = toks[j - 1]
            if name in ("__attribute__", "__asm__", "asm") or name.startswith("__"):
                close = j - 2  # an attribute after the parameters: look before it
                if close < 0 or toks[close] != ")":
                    return None
                continue
            return name if re.match(r"[A-Za-z_]\w*$", name) and name not in KEYWORDS else None
        return None

    def uses(self):
        """Names used in code: not as members, nor as the name that a
        declaration or definition at file scope gives (NAME( at depth 0)."""
        out = set()
        for toks, code in ((self.tokens, True), (self.macro_tokens, False)):
            depth = 0
            for i, t in enumerate(toks):
                depth += (t == "{") - (t == "}")
                if not re.match(r"[A-Za-z_]\w*$", t) or t in KEYWORDS or (i and toks[i - 1] in (".", "->")):
                    continue
                if code and depth <= 0 and i + 1 < len(toks) and toks[i + 1] == "(":
                    continue
                out.add(t)
        return out


def rooms_of(sim):
    """{room: [paths]} for every folder of sim/ that includes sim.h, and the files directly in sim/."""
    rooms, unknown = {}, []
    for entry in sorted(os.listdir(sim)):
        d = os.path.join(sim, entry)
        if not os.path.isdir(d) or entry == "include":
            continue
        files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith((".c", ".h")))
        if entry in FLOORS:
            rooms[entry] = files
        elif any(re.search(r'#\s*include\s*"\.\./sim\.h"', open(f, errors="replace").read()) for f in files):
            unknown.append(entry)
    return rooms, unknown


def floor_of_path(sim, path):
    """(room or None, floor or None) of a file of the tree."""
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(sim))
    if rel.startswith(".."):
        return None, None
    parts = rel.split(os.sep)
    if len(parts) == 1:
        return "sim", SHARED
    if parts[0] == "include":
        return "include", PUBLIC
    return parts[0], FLOORS.get(parts[0])


def check(root):
    sim = os.path.join(root, "sim")
    rooms, unknown = rooms_of(sim)
    breaches = [f"sim/{u}/: a room of the engine (its files include sim/sim.h) with no floor in tests/floors.py"
                for u in unknown]
    sources = [Source(p, room) for room, paths in rooms.items() for p in paths]
    sources += [Source(os.path.join(sim, f), "sim") for f in sorted(os.listdir(sim))
                if f.endswith((".c", ".h")) and os.path.isfile(os.path.join(sim, f))]
    floor = dict(FLOORS, sim=SHARED)
    owner = {}  # function -> rooms that define it where others can reach it
    for s in sources:
        for name, static in s.definitions().items():
            if not static or s.path.endswith(".h"):
                owner.setdefault(name, set()).add(s.room)
    for s in sources:
        me = floor[s.room]
        rel = os.path.relpath(s.path, root)
        own = set(s.definitions())
        for name in sorted(s.uses() - own):
            rooms_def = owner.get(name)
            if not rooms_def or s.room in rooms_def:
                continue
            lowest = min(floor[r] for r in rooms_def)
            if lowest > me:
                breaches.append(f"{rel} ({s.room}, floor {me}) uses {name} "
                                f"({'/'.join(sorted(rooms_def))}, floor {lowest})")
        for kind, inc in s.includes:
            cands = [os.path.join(os.path.dirname(s.path), inc)] if kind == '"' else []
            cands.append(os.path.join(sim, "include", inc))
            target = next((c for c in cands if os.path.isfile(c)), None)
            if not target:
                continue  # config.h, the system's
            room, f = floor_of_path(sim, target)
            if room is None or room == s.room:
                continue
            if f is None:
                breaches.append(f"{rel} ({s.room}) includes {inc}, of sim/{room}/, which has no floor")
            elif f > me:
                breaches.append(f"{rel} ({s.room}, floor {me}) includes {inc} ({room}, floor {f})")
    return breaches


def self_test():
    """A tree with one climbing call, one climbing include, one taken pointer and
    one unknown room is refused, each told; the same tree without them passes."""
    files = {
        "sim/sim.h": "#define SIM_LOG(x) sim_log(x)\nvoid sim_log(int x);\n",
        "sim/util/log.c": '#include "../sim.h"\nvoid sim_log(int x) { (void)x; }\n',
        "sim/cuda/dev.c": '#include "../sim.h"\n/* sim_comm_fail( in a comment */\n'
                          'int sim_dev(void) { SIM_LOG(1); return s.sim_comm_fail + p->sim_comm_fail; }\n'
                          'static const char *t = "sim_comm_fail(";\n',
        "sim/core/core.h": '#include "../sim.h"\nint sim_comm_fail(int r);\n'
                           'static inline int sim_core_inline(void) { return sim_dev(); }\n',
        "sim/core/fail.c": '#include "core.h"\nint sim_comm_fail(int r) { return r + sim_dev(); }\n'
                           "__attribute__((constructor)) static void hook(void) { sim_dev(); }\n",
        "sim/comm/init.c": '#include "../core/core.h"\nint sim_comm_init(void) { return sim_comm_fail(0); }\n',
        "sim/util/decl.h": "/* a declaration is no use */\nint sim_comm_init(void);\n",
        "sim/nvcc/main.c": '#include "nvcc.h"\nint main(void) { return 0; }\n',
        "sim/include/nccl.h": "",
    }
    planted = {
        "sim/net/peer_wait.c": '#include "../sim.h"\n#include "../core/core.h"\n'
                               "int sim_net_gone(void) {\n  return sim_comm_fail(1);\n}\n"
                               "int (*sim_net_hook)(int) = sim_comm_fail;\n",
        "sim/wild/x.c": '#include "../sim.h"\nint sim_wild(void) { return 0; }\n',
        "sim/util/wait.c": '#include "../sim.h"\n#include "nccl.h"\nint sim_wait(void) { return sim_comm_init(); }\n',
    }
    ok = True
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        clean = check(root)
        if clean:
            print("self-test: a tree without climbs was refused:\n  " + "\n  ".join(clean))
            ok = False
        for name, text in planted.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        got = check(root)
        want = [
            "sim/net/peer_wait.c (net, floor 2) uses sim_comm_fail (core, floor 4)",
            "sim/net/peer_wait.c (net, floor 2) includes ../core/core.h (core, floor 4)",
            "sim/util/wait.c (util, floor 1) uses sim_comm_init (comm, floor 5)",
            "sim/wild/: a room of the engine (its files include sim/sim.h) with no floor in tests/floors.py",
        ]
        for w in want:
            if w not in got:
                print(f"self-test: not found: {w}")
                ok = False
        for g in got:
            if g not in want:
                print(f"self-test: found, and not planted: {g}")
                ok = False
    return ok


def main(argv):
    if argv[1:] == ["--self-test"]:
        if not self_test():
            return 1
        print("self-test: every planted climb found, nothing else")
        return 0
    root = argv[1] if len(argv) > 1 else "."
    if not os.path.isdir(os.path.join(root, "sim")):
        print(f"{root}: no sim/ folder")
        return 99
    breaches = check(root)
    for b in breaches:
        print(b)
    print(f"{len(breaches)} climbs of the engine's floors")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
