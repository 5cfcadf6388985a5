#!/usr/bin/env python3
"""tests/cuda-compat-gen.py — writes the checks of tests/cuda-compat.

Reads what ncclsim's public headers declare from clang's own AST (JSON
dump): every function (C API, the narrow-float functions and operators,
make_*), every struct with its public fields, every enumerator. Prints a
C++ file of checks, one per line, each ending in a comment naming what it
checks:

  - a function: its address converted to the exact pointer type that
    ncclsim declares (a different signature, or no such function, fails
    to compile; of several overloads, one must match);
  - a struct: sizeof, alignof and offsetof of each public field;
  - an enumerator: its value.

Layout and values are ncclsim's, computed by a probe program that this
script writes (--probe) and the test compiles against ncclsim's headers.

  cuda-compat-gen.py --ast AST.json --probe   > probe.cc
  cuda-compat-gen.py --ast AST.json --checks  > checks.inc

Two sets of headers, each compared with the real header that declares
the same things: "host" (the default) is nccl.h, cuda_runtime.h and
cuda_fp8.h; "device" (--set device, the AST made from <nccl_device.h>)
is what ncclsim's nccl_device/core.h declares, which NCCL 2.30.7 declares
in its nccl_device/core.h (ncclsim's nccl_device.h itself holds ncclsim's
own device communicator, with no counterpart to compare).
"""
import argparse
import json
import os
import re
import sys

# Per set: the headers included, and the files whose declarations are
# checked. "host" is what a host program includes (nccl.h brings
# cuda_runtime.h, cuda_fp16.h and cuda_bf16.h, as NCCL's does).
SETS = {
    "host": ("#include <nccl.h>\n#include <cuda_runtime.h>\n#include <cuda_fp8.h>\n#include <cuda.h>\n", "/sim/include/"),
    "device": ("#include <nccl_device.h>\n", "/sim/include/nccl_device/"),
}
HEADERS, SIM_INCLUDE = SETS["host"]
# ncclsim's own names (ncclsim.h, helpers of the fp headers) have no
# counterpart in CUDA or NCCL.
OWN = re.compile(r"^(ncclsim|NCCLSIM|pncclsim)")


def walk_files(node, state):
    """Visit node in serialization order, tracking the last file named:
    clang writes "file" only when it changes."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "includedFrom":
                continue
            if k == "file":
                state["file"] = v
            else:
                walk_files(v, state)
    elif isinstance(node, list):
        for v in node:
            walk_files(v, state)


def pointer_type(qual):
    """'R (A, B)' -> 'R (*)(A, B)': the parameter list is the last
    parenthesised group."""
    depth, i = 0, len(qual) - 1
    while i >= 0:
        if qual[i] == ")":
            depth += 1
        elif qual[i] == "(":
            depth -= 1
            if depth == 0:
                break
        i -= 1
    ret, params = qual[:i].rstrip(), qual[i:]
    params = re.sub(r"\bconst (?=[^,*&()]*[,)])", "", params)  # top-level const on a parameter is not part of the type
    return f"{ret} (*){params}"


def top_level(nodes, state):
    """Yields (declaration, its file) at namespace scope, in order, looking
    into extern "C" blocks."""
    for n in nodes:
        walk_files(n.get("loc", {}), state)
        here = state["file"]
        if n.get("kind") == "LinkageSpecDecl":
            walk_files(n.get("range", {}), state)
            yield from top_level(n.get("inner", []), state)
            continue
        walk_files({k: v for k, v in n.items() if k != "loc"}, state)
        yield n, here


def collect(ast):
    state = {"file": ""}
    funcs, records, typedefs, enums = [], {}, [], []
    for n, here in top_level(ast.get("inner", []), state):
        # normpath: nccl_device/core.h includes "../nccl.h".
        if SIM_INCLUDE not in os.path.normpath(here) or n.get("isImplicit"):
            continue
        kind, name = n.get("kind"), n.get("name", "")
        if kind == "FunctionDecl" and name and not OWN.match(name):
            funcs.append((name, pointer_type(n["type"]["qualType"])))
        elif kind in ("RecordDecl", "CXXRecordDecl") and n.get("completeDefinition"):
            public = n.get("tagUsed") != "class"
            fields, has_access = [], False
            for c in n.get("inner", []):
                if c.get("kind") == "AccessSpecDecl":
                    has_access = True
                    public = c.get("access") == "public"
                elif c.get("kind") == "FieldDecl" and public and c.get("name"):
                    fields.append(c["name"])
            # offsetof needs a standard-layout type: classes that mix
            # access levels (__half) get sizeof and alignof only.
            records[n["id"]] = {"name": name, "fields": [] if has_access else fields}
        elif kind == "TypedefDecl" and name:
            typedefs.append((name, n))
        elif kind == "EnumDecl":
            for c in n.get("inner", []):
                if c.get("kind") == "EnumConstantDecl" and not OWN.match(c["name"]):
                    enums.append(c["name"])
    # An anonymous struct is known by its typedef (ncclUniqueId, __half_raw).
    for name, n in typedefs:
        ids = set(re.findall(r'"id": "(0x[0-9a-f]+)"', json.dumps(n.get("inner", []))))
        for rid in ids & records.keys():
            if not records[rid]["name"]:
                records[rid]["name"] = name
    recs = [r for r in records.values() if r["name"] and not OWN.match(r["name"])]
    return funcs, recs, enums


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ast", required=True)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--probe", action="store_true")
    mode.add_argument("--checks", action="store_true")
    ap.add_argument("--set", choices=sorted(SETS), default="host")
    a = ap.parse_args()
    global HEADERS, SIM_INCLUDE
    HEADERS, SIM_INCLUDE = SETS[a.set]
    with open(a.ast) as f:
        funcs, recs, enums = collect(json.load(f))
    if a.probe:
        # Prints the layout and enumerator checks with ncclsim's values.
        print(HEADERS + "#include <cstdio>\n#include <cstddef>\nint main() {")
        for r in recs:
            t = r["name"]
            print(f'  std::printf("static_assert(sizeof({t}) == %zu, \\"\\"); // sizeof({t})\\n", sizeof({t}));')
            print(f'  std::printf("static_assert(alignof({t}) == %zu, \\"\\"); // alignof({t})\\n", alignof({t}));')
            for fld in r["fields"]:
                print(f'  std::printf("static_assert(offsetof({t}, {fld}) == %zu, \\"\\"); // {t}::{fld}\\n",'
                      f" offsetof({t}, {fld}));")
        for e in enums:
            print(f'  std::printf("static_assert({e} == %lld, \\"\\"); // {e}\\n", (long long){e});')
        print("  return 0;\n}")
    else:
        seen = set()
        for i, (name, ptr) in enumerate(funcs):
            if (name, ptr) in seen:
                continue
            seen.add((name, ptr))
            print(f"using n4c_t{i} = {ptr}; static const n4c_t{i} n4c_f{i} __attribute__((unused)) = &{name}; // {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
