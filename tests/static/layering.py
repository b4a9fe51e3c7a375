#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The file-level call graph of drivers/softcm, checked against the layering
# that Documentation/design.rst writes down ("Layers").
#
#   layering.py [--doc RST] [--src DIR] [--obj DIR] CHECK
#
#   CHECK   files       every file of DIR has exactly one level
#           calls       every cross-file reference goes down a level, or is
#                       a named upcall, or is a listed exception
#           exceptions  every listed exception still occurs
#           graph       print every cross-file reference and succeed
#
# Where the edges come from:
#  - the objects, exactly: what X.o leaves undefined (nm "U") that Y.o
#    defines is a reference X.c -> Y.c, function or variable alike (a
#    tracepoint's symbols count as the call trace_NAME() into trace.c);
#  - the headers, by text: a static inline function or function-like macro
#    of a header belongs to that header.  A .c file that names one refers
#    to the header; what its body names refers, from the header, to the
#    file that defines it.  An object's undefined symbol that its .c file
#    never names but a header body does is the header's reference, not the
#    .c file's.
# Comments, strings and character constants are stripped before any text
# is read.  X.h and X.c are one unit unless the list places X.h itself.
#
# Exit status: 0 pass, 1 the check failed (each finding on its own line),
# 2 usage, or the list or the objects could not be read.

import argparse
import os
import re
import subprocess
import sys

TRACE_PREFIXES = ("__tracepoint_", "__traceiter_", "__SCK__tp_func_",
                  "__SCT__tp_func_")
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]*\b")
CALLED = re.compile(r"\b([A-Za-z_][A-Za-z_0-9]*)\s*\(")


class Fatal(Exception):
    pass


def strip_c(text):
    """Comments, strings and character constants blanked, newlines kept."""
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
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


# --- the list in design.rst -------------------------------------------------

def literal_block(lines, anchor):
    """The literal block after the RST comment `.. layering: ANCHOR`:
    (line number, text) of each line, dedented, blank lines dropped."""
    try:
        start = lines.index(".. layering: " + anchor)
    except ValueError:
        raise Fatal("design.rst has no '.. layering: %s' block" % anchor)
    i = start + 1
    while i < len(lines) and not lines[i].rstrip().endswith("::"):
        i += 1
    i += 1
    block = []
    while i < len(lines):
        line = lines[i]
        if line.strip() and not line[0].isspace():
            break
        if line.strip():
            block.append((i + 1, line.strip()))
        i += 1
    if not block:
        raise Fatal("design.rst: the '%s' block is empty (an empty list "
                    "is written '# none')" % anchor)
    return block


def parse_edge(lineno, text):
    """'CALLERS -> CALLEE: SYM SYM...' -> ([caller], callee, [sym])."""
    m = re.fullmatch(r"(.+?)\s*->\s*(\S+)\s*:\s*(.+)", text)
    if not m:
        raise Fatal("design.rst:%d: not 'caller -> callee: function...': %s"
                    % (lineno, text))
    return m.group(1).split(), m.group(2), m.group(3).replace(",", " ").split()


def entries(block):
    """Join each entry's continuation lines (those without '->') to it:
    (line number, text, the '# why' line above it or None)."""
    out, why = [], None
    for lineno, text in block:
        if text.startswith("#"):
            why = text
        elif "->" in text or not out:
            out.append([lineno, text, why])
        else:
            out[-1][1] += " " + text
    return out


class Layering:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        self.level = {}		# file -> level number
        self.layer = {}		# layer name -> set of files
        lvl = name = None
        for lineno, text in literal_block(lines, "levels"):
            words = text.split()
            if words[0] == "level":
                continue	# the heading
            if words[0].isdigit() and len(words) >= 3:
                lvl, name, files = int(words[0]), words[1], words[2:]
            elif lvl is not None and not words[0].isdigit():
                files = words	# a continuation line
            else:
                raise Fatal("design.rst:%d: not 'LEVEL LAYER FILE...': %s"
                            % (lineno, text))
            for f in files:
                if f in self.level:
                    raise Fatal("design.rst:%d: %s is listed twice"
                                % (lineno, f))
                self.level[f] = lvl
                self.layer.setdefault(name, set()).add(f)
        self.upcalls = set()	# (caller, callee, sym)
        for lineno, text, _ in entries(literal_block(lines, "upcalls")):
            callers, callee, syms = parse_edge(lineno, text)
            for x in callers + [callee]:
                if x not in self.level and x not in self.layer:
                    raise Fatal("design.rst:%d: %s is neither a listed file "
                                "nor a layer" % (lineno, x))
            for c in callers:
                for f in self.layer.get(c, {c}):
                    for s in syms:
                        self.upcalls.add((f, callee, s))
        self.exceptions = {}	# (caller, callee, sym) -> design.rst line
        for lineno, text, why in entries(literal_block(lines, "exceptions")):
            if why is None:
                raise Fatal("design.rst:%d: an exception needs a '# why' line "
                            "above it" % lineno)
            callers, callee, syms = parse_edge(lineno, text)
            for c in callers:
                for s in syms:
                    self.exceptions[(c, callee, s)] = lineno

    def unit(self, f):
        """The listed name of a file: itself, or for an unlisted X.h, X.c."""
        if f in self.level:
            return f
        if f.endswith(".h") and f[:-2] + ".c" in self.level:
            return f[:-2] + ".c"
        return None


# --- the graph ----------------------------------------------------------------

def header_bodies(text):
    """{name: body} for the static inline functions and function-like macros."""
    bodies = {}
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\((.*(?:\\\n.*)*)",
                         text, re.M):
        bodies[m.group(1)] = m.group(2)
    for m in re.finditer(r"\bstatic\s+(?:__always_inline|inline)\b[^;{]*?"
                         r"\b(\w+)\s*\([^;{]*\)\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        bodies[m.group(1)] = text[m.end():i]
    return bodies


def nm(path):
    out = subprocess.run(["nm", path], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRGSVW":
            defined.add(parts[2])
    return defined, undefined


def call_name(sym):
    for p in TRACE_PREFIXES:
        if sym.startswith(p):
            return "trace_" + sym[len(p):]
    return sym


def graph(src, obj):
    """{(caller file, callee file, symbol)} of drivers/softcm."""
    names = sorted(f for f in os.listdir(src) if re.fullmatch(r"\w+\.[ch]", f))
    text, idents = {}, {}
    for f in names:
        with open(os.path.join(src, f), encoding="utf-8") as fh:
            text[f] = strip_c(fh.read())
        idents[f] = set(IDENT.findall(text[f]))

    inline = {}		# header function or macro -> its header
    bodies = {}		# header -> {name: (identifiers, names called)}
    for f in names:
        if f.endswith(".h"):
            bodies[f] = {k: (set(IDENT.findall(v)), set(CALLED.findall(v)))
                         for k, v in header_bodies(text[f]).items()}
            for k in bodies[f]:
                inline[k] = f

    owner, undef = {}, {}
    for f in names:
        if not f.endswith(".c"):
            continue
        o = os.path.join(obj, f[:-2] + ".o")
        if not os.path.exists(o):
            raise Fatal("no object %s (build the module first)" % o)
        defined, undef[f] = nm(o)
        for s in defined:
            owner[call_name(s)] = f

    in_headers = set()
    for h in bodies.values():
        for ids, _ in h.values():
            in_headers |= ids

    edges = set()
    for f, syms in undef.items():
        for s in syms:
            name = call_name(s)
            callee = owner.get(name)
            if callee is None or callee == f:
                continue
            if name in idents[f] or name not in in_headers:
                edges.add((f, callee, name))
    for f in names:		# calls of header inlines
        for name in set(CALLED.findall(text[f])) & inline.keys():
            if inline[name] != f:
                edges.add((f, inline[name], name))
    for h, fns in bodies.items():	# what header inlines use
        for ids, called in fns.values():
            for name in ids:
                if name in owner and owner[name] != h:
                    edges.add((h, owner[name], name))
            for name in called & inline.keys():
                if inline[name] != h:
                    edges.add((h, inline[name], name))
    return names, edges


# --- the checks ---------------------------------------------------------------

def classify(lay, edges):
    """The violations, as (caller, callee, sym, why), and the set of the
    listed exceptions that occur, as (caller, callee, sym)."""
    bad, seen = [], set()
    for caller, callee, sym in sorted(edges):
        a, b = lay.unit(caller), lay.unit(callee)
        if a is None or b is None or a == b:
            continue	# unlisted files fail the 'files' check
        la, lb = lay.level[a], lay.level[b]
        key = (caller, callee, sym)
        if key in lay.exceptions:
            seen.add(key)
            if la > lb:
                bad.append(key + ("listed as an exception but it goes down",))
            continue
        if la > lb:
            continue
        if la < lb and key in lay.upcalls:
            continue
        bad.append(key + (("up from level %d to %d" % (la, lb)) if la < lb
                          else "within level %d" % la,))
    return bad, seen


def main():
    top = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", default=os.path.join(top, "Documentation",
                                                  "design.rst"))
    ap.add_argument("--src", default=os.path.join(top, "drivers", "softcm"))
    ap.add_argument("--obj", default=os.path.join(top, "build", "kmod", "stock",
                                                  "drivers", "softcm"))
    ap.add_argument("check", choices=["files", "calls", "exceptions", "graph"])
    args = ap.parse_args()
    try:
        lay = Layering(args.doc)
        if args.check == "files":
            names = sorted(f for f in os.listdir(args.src)
                           if re.fullmatch(r"\w+\.[ch]", f))
            missing = [f for f in names if lay.unit(f) is None]
            for f in missing:
                print("%s is on no level of design.rst's list" % f)
            ghosts = sorted(set(lay.level) - set(names))
            for f in ghosts:
                print("%s: listed in design.rst but not in the tree" % f)
            return 1 if missing or ghosts else 0
        _, edges = graph(args.src, args.obj)
        if args.check == "graph":
            for caller, callee, sym in sorted(edges):
                print("%s -> %s: %s" % (caller, callee, sym))
            return 0
        bad, seen = classify(lay, edges)
        if args.check == "calls":
            for caller, callee, sym, why in bad:
                print("%s -> %s: %s (%s)" % (caller, callee, sym, why))
            return 1 if bad else 0
        stale = sorted(set(lay.exceptions) - seen,
                       key=lambda k: lay.exceptions[k])
        for caller, callee, sym in stale:
            print("design.rst:%d: %s -> %s: %s no longer occurs; take it off "
                  "the list" % (lay.exceptions[(caller, callee, sym)],
                                caller, callee, sym))
        return 1 if stale else 0
    except (Fatal, OSError, subprocess.CalledProcessError) as e:
        print("layering.py: %s" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main())
