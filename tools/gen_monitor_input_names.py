"""List the MXNet 1.9.1 operators that declare their input names (nnvm's FListInputNames).

MXNet's executor monitor (``set_monitor_callback(..., monitor_all=True)``) names an
operator's inputs ``<node>_<input name>`` by that attribute, and ``<node>_input<i>`` for
operators without it. This reads an MXNet 1.9.1 source tree (``src/``) and prints the
names (operators and their aliases) that have it: registrations whose block sets the
attribute, registrations through a macro whose definition sets it, and the legacy
OperatorProperty operators (their arguments' names). The result is kept in
neogluon/_monitor_names.py.

    python tools/gen_monitor_input_names.py /path/to/mxnet-1.9.1 > names.txt
"""
import os
import re
import sys

_START = re.compile(r"^[ \t]*(NNVM_REGISTER_OP|MXNET_[A-Z0-9_]*REGISTER[A-Z0-9_]*)\s*\(\s*"
                    r"([A-Za-z0-9_]+)", re.M)
_ALIAS = re.compile(r'\.add_alias\(\s*"([^"]+)"\s*\)')
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define\s+([A-Z0-9_]+)\b", re.M)


def _sources(root):
    for base, _, files in os.walk(os.path.join(root, "src")):
        for f in files:
            if f.endswith((".cc", ".h", ".cu")) and not f.endswith(".cu"):
                yield os.path.join(base, f)


def _macro_bodies(text):
    """``{macro name: body}`` of the #define's in ``text`` (backslash-continued lines)."""
    out = {}
    for m in _DEFINE.finditer(text):
        lines = []
        for line in text[m.start():].splitlines():
            lines.append(line)
            if not line.rstrip().endswith("\\"):
                break
        out[m.group(1)] = "\n".join(lines)
    return out


def main(root):
    texts = {p: open(p, encoding="utf-8", errors="replace").read() for p in _sources(root)}
    macros = {}
    for t in texts.values():
        for name, body in _macro_bodies(t).items():
            macros[name] = macros.get(name, "") + "\n" + body   # (every definition)
    naming = {name for name, body in macros.items() if "FListInputNames" in body}
    # macros that expand to another naming macro
    changed = True
    while changed:
        changed = False
        for name, body in macros.items():
            if name not in naming and any(re.search(r"\b%s\b" % n, body) for n in naming
                                          if n != name):
                naming.add(name)
                changed = True
    names, without = set(), set()
    for t in texts.values():
        # drop #define bodies: their registrations are templates
        body_free = t
        for body in _macro_bodies(t).values():
            body_free = body_free.replace(body, "")
        starts = list(_START.finditer(body_free))
        for i, m in enumerate(starts):
            block = body_free[m.start(): starts[i + 1].start() if i + 1 < len(starts)
                              else len(body_free)]
            macro, op = m.group(1), m.group(2)
            if macro in ("MXNET_REGISTER_OP_PROPERTY",):
                has = True   # legacy operators: their ListArguments
            else:
                has = "FListInputNames" in block or macro in naming or any(
                    re.search(r"\b%s\b" % n, block) for n in naming)
            ops = [op] + _ALIAS.findall(block)
            (names if has else without).update(ops)
    for n in sorted(names):
        print(n)


if __name__ == "__main__":
    main(sys.argv[1])
