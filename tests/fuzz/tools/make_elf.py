# SPDX-License-Identifier: Apache-2.0
"""Writes the assembly of a small ELF program whose DWARF looks like a Go binary's.

    python3 make_elf.py > gostyle.S
    gcc -nostdlib -static -no-pie -Wl,--build-id=none -o gostyle gostyle.S

A real Go binary is over a megabyte, too big for a seed that a fuzzer mutates well.
This one is a few kilobytes with what heapref's binary reader looks for (DWARF 4, Go's
attribute extensions DW_AT_go_*): base, pointer, struct, slice, string, array, map,
channel, interface, func and unsafe.Pointer types with their Go kinds and runtime type
offsets, an embedded field, a typedef; globals in .data and .bss placed by DW_OP_addr;
functions with parameters and locals in the frame, in registers, in pieces, through a
location list, in a lexical block and an inlined call, and a closure's captured
variable; ELF symbols, runtime.types, and a .go.buildinfo with a Go version.
The program itself does nothing: heapref never runs it.

Standard library only.
"""

import sys

# DWARF constants used below.
TAG = dict(compile_unit=0x11, base_type=0x24, pointer_type=0x0F, structure_type=0x13,
           member=0x0D, array_type=0x01, subrange_type=0x21, typedef=0x16,
           subroutine_type=0x15, variable=0x34, subprogram=0x2E, formal_parameter=0x05,
           lexical_block=0x0B, inlined_subroutine=0x1D, unspecified_type=0x3B)
AT = dict(name=0x03, byte_size=0x0B, encoding=0x3E, type=0x49, data_member_location=0x38,
          count=0x37, upper_bound=0x2F, location=0x02, low_pc=0x11, high_pc=0x12,
          language=0x13, external=0x3F, inline=0x20, abstract_origin=0x31,
          frame_base=0x40, go_kind=0x2900, go_key=0x2901, go_elem=0x2902,
          go_embedded_field=0x2903, go_runtime_type=0x2904, go_closure_offset=0x2907)
FORM = dict(addr=0x01, data1=0x0B, data8=0x07, udata=0x0F, sdata=0x0D, string=0x08,
            ref_addr=0x10, ref4=0x13, exprloc=0x18, sec_offset=0x17, flag_present=0x19,
            flag=0x0C)
OP = dict(addr=0x03, call_frame_cfa=0x9C, consts=0x11, plus=0x22, reg0=0x50, reg3=0x53,
          piece=0x93, fbreg=0x91, stack_value=0x9F, lit1=0x31)

# Kinds, as reflect.Kind numbers them.
K = dict(bool=1, int=2, uint8=8, uintptr=12, array=17, chan=18, func=19, interface=20,
         map=21, ptr=22, slice=23, string=24, struct=25, unsafe=26)


class Abbrevs:
    def __init__(self):
        self.table = {}
        self.lines = []

    def code(self, tag, children, attrs):
        key = (tag, children, tuple(attrs))
        if key not in self.table:
            n = len(self.table) + 1
            self.table[key] = n
            self.lines += ["\t.uleb128 %d" % n, "\t.uleb128 0x%x" % TAG[tag],
                           "\t.byte %d" % (1 if children else 0)]
            for at, form in attrs:
                self.lines += ["\t.uleb128 0x%x" % AT[at], "\t.uleb128 0x%x" % FORM[form]]
            self.lines += ["\t.uleb128 0", "\t.uleb128 0"]
        return self.table[key]


class Info:
    """The DIEs of one compilation unit, as assembly lines."""

    def __init__(self, abbrevs):
        self.ab = abbrevs
        self.lines = []

    def die(self, tag, attrs, label=None, children=False):
        code = self.ab.code(tag, children, [(a, f) for a, f, _ in attrs])
        if label:
            self.lines.append("%s:" % label)
        self.lines.append("\t.uleb128 %d" % code)
        for at, form, v in attrs:
            self.lines += value(form, v)

    def end(self):
        self.lines.append("\t.byte 0")


def value(form, v):
    if form == "string":
        return ['\t.asciz "%s"' % v]
    if form == "data1":
        return ["\t.byte %d" % v]
    if form == "flag":
        return ["\t.byte %d" % v]
    if form == "data8":
        return ["\t.quad %s" % v]
    if form == "addr":
        return ["\t.quad %s" % v]
    if form == "udata":
        return ["\t.uleb128 %s" % v]
    if form == "sdata":
        return ["\t.sleb128 %s" % v]
    if form == "ref_addr":
        return ["\t.long %s - .Ldebug_info0" % v]
    if form == "ref4":
        return ["\t.long %s - .Lcu0" % v]
    if form == "sec_offset":
        return ["\t.long %s - .Ldebug_loc0" % v]
    if form == "flag_present":
        return []
    if form == "exprloc":  # v: list of assembly lines of the expression; length first
        return ["\t.uleb128 %s - %s" % (v[1], v[0]), "%s:" % v[0]] + v[2] + ["%s:" % v[1]]
    raise ValueError(form)


_expr_n = [0]


def expr(*ops):
    """An exprloc value: ops are assembly lines."""
    _expr_n[0] += 1
    n = _expr_n[0]
    return (".Le%da" % n, ".Le%db" % n, list(ops))


def types(d):
    base = lambda label, name, size, enc, kind, rt: d.die("base_type", [
        ("name", "string", name), ("encoding", "data1", enc), ("byte_size", "udata", size),
        ("go_kind", "data1", kind), ("go_runtime_type", "udata", rt)], label)
    base(".LTint", "int", 8, 5, K["int"], 0x100)
    base(".LTuint8", "uint8", 1, 8, K["uint8"], 0x120)
    base(".LTuintptr", "uintptr", 8, 7, K["uintptr"], 0x140)
    base(".LTbool", "bool", 1, 2, K["bool"], 0x160)
    ptr = lambda label, name, target, rt: d.die("pointer_type", [
        ("name", "string", name), ("type", "ref_addr", target), ("go_kind", "data1", K["ptr"]),
        ("go_runtime_type", "addr", rt)], label)
    ptr(".LTpnode", "*main.Node", ".LTnode", 0x200)
    ptr(".LTpu8", "*uint8", ".LTuint8", 0x220)
    ptr(".LTpint", "*int", ".LTint", 0x240)
    ptr(".LTpbucket", "*bucket<string,*main.Node>", ".LTbucket", 0)
    ptr(".LTphash", "*hash<string,*main.Node>", ".LThash", 0)
    ptr(".LTphchan", "*hchan<int>", ".LThchan", 0)
    d.die("pointer_type", [("name", "string", "unsafe.Pointer"),
                           ("go_kind", "data1", K["unsafe"]),
                           ("go_runtime_type", "udata", 0x260)], ".LTunsafe")

    def struct(label, name, size, kind, rt, members, extra=()):
        d.die("structure_type", [("name", "string", name), ("byte_size", "udata", size),
                                 ("go_kind", "data1", kind), ("go_runtime_type", "udata", rt)]
              + list(extra), label, children=True)
        for m in members:
            mname, mtype, off = m[:3]
            attrs = [("name", "string", mname), ("type", "ref_addr", mtype),
                     ("data_member_location", "udata", off)]
            if len(m) > 3:
                attrs.append(("go_embedded_field", "flag", 1))
            d.die("member", attrs)
        d.end()

    struct(".LTnode", "main.Node", 48, K["struct"], 0x300,
           [("Next", ".LTpnode", 0), ("Val", ".LTint", 8), ("Name", ".LTstring", 16),
            ("Data", ".LTslice", 32)])
    struct(".LTslice", "[]uint8", 24, K["slice"], 0x320,
           [("array", ".LTpu8", 0), ("len", ".LTint", 8), ("cap", ".LTint", 16)],
           [("go_elem", "ref_addr", ".LTuint8")])
    struct(".LTstring", "string", 16, K["string"], 0x340,
           [("str", ".LTpu8", 0), ("len", ".LTint", 8)])
    struct(".LTeface", "interface {}", 16, K["interface"], 0x360,
           [("_type", ".LTuintptr", 0), ("data", ".LTunsafe", 8)])
    struct(".LTouter", "main.Outer", 64, K["struct"], 0x380,
           [("Node", ".LTnode", 0, "embedded"), ("Extra", ".LTeface", 48)])
    struct(".LTbucket", "bucket<string,*main.Node>", 208, K["struct"], 0,
           [("tophash", ".LTarr8", 0), ("keys", ".LTkeys", 8), ("values", ".LTvals", 136),
            ("overflow", ".LTpbucket", 200)])
    struct(".LThash", "hash<string,*main.Node>", 48, K["struct"], 0,
           [("count", ".LTint", 0), ("buckets", ".LTpbucket", 16), ("oldbuckets", ".LTpbucket", 24),
            ("extra", ".LTunsafe", 40)])
    struct(".LThchan", "hchan<int>", 96, K["struct"], 0,
           [("qcount", ".LTuintptr", 0), ("dataqsiz", ".LTuintptr", 8), ("buf", ".LTunsafe", 16)])

    def array(label, name, elem, size, count, rt, upper=False):
        d.die("array_type", [("name", "string", name), ("type", "ref_addr", elem),
                             ("byte_size", "udata", size), ("go_kind", "data1", K["array"]),
                             ("go_runtime_type", "udata", rt)], label, children=True)
        if upper:
            d.die("subrange_type", [("type", "ref_addr", ".LTuintptr"),
                                    ("upper_bound", "udata", count - 1)])
        else:
            d.die("subrange_type", [("type", "ref_addr", ".LTuintptr"),
                                    ("count", "udata", count)])
        d.end()

    array(".LTarr4", "[4]*main.Node", ".LTpnode", 32, 4, 0x400)
    array(".LTarr8", "[8]uint8", ".LTuint8", 8, 8, 0x420, upper=True)
    array(".LTkeys", "[8]string", ".LTstring", 128, 8, 0)
    array(".LTvals", "[8]*main.Node", ".LTpnode", 64, 8, 0)
    d.die("typedef", [("name", "string", "map[string]*main.Node"), ("type", "ref_addr", ".LTphash"),
                      ("go_kind", "data1", K["map"]), ("go_key", "ref_addr", ".LTstring"),
                      ("go_elem", "ref_addr", ".LTpnode"), ("go_runtime_type", "udata", 0x500)],
          ".LTmap")
    d.die("typedef", [("name", "string", "chan int"), ("type", "ref_addr", ".LTphchan"),
                      ("go_kind", "data1", K["chan"]), ("go_elem", "ref_addr", ".LTint"),
                      ("go_runtime_type", "udata", 0x520)], ".LTchan")
    d.die("subroutine_type", [("name", "string", "func()"), ("byte_size", "udata", 8),
                              ("go_kind", "data1", K["func"]),
                              ("go_runtime_type", "udata", 0x540)], ".LTfunc")
    d.die("typedef", [("name", "string", "main.ID"), ("type", "ref_addr", ".LTint"),
                      ("go_kind", "data1", K["int"]), ("go_runtime_type", "udata", 0x560)],
          ".LTid")
    d.die("unspecified_type", [("name", "string", "void")], ".LTvoid")


GLOBALS = [("main.gNode", ".LTpnode", "data", 8), ("main.gMap", ".LTmap", "data", 8),
           ("main.gArr", ".LTarr4", "bss", 32), ("main.gStr", ".LTstring", "bss", 16),
           ("main.gAny", ".LTeface", "bss", 16), ("main.gOuter", ".LTouter", "bss", 64),
           ("main.gChan", ".LTchan", "data", 8), ("main.gFunc", ".LTfunc", "data", 8),
           ("main.gID", ".LTid", "data", 8)]


def sym(name):
    return '"%s"' % name


def functions(d):
    for name, typ, _, _ in GLOBALS:
        d.die("variable", [("name", "string", name), ("type", "ref_addr", typ),
                           ("external", "flag_present", None),
                           ("location", "exprloc", expr("\t.byte 0x%x" % OP["addr"],
                                                        "\t.quad %s" % sym(name)))])
    # an abstract function, inlined into main.main
    d.die("subprogram", [("name", "string", "main.helper"), ("inline", "data1", 1),
                         ("external", "flag_present", None)], ".LFhelper", children=True)
    d.die("formal_parameter", [("name", "string", "n"), ("type", "ref_addr", ".LTint")],
          ".LFhelper_n")
    d.end()
    cfa_minus = lambda k: expr("\t.byte 0x%x" % OP["call_frame_cfa"],
                               "\t.byte 0x%x" % OP["consts"], "\t.sleb128 %d" % -k,
                               "\t.byte 0x%x" % OP["plus"])
    d.die("subprogram", [("name", "string", "main.main"), ("low_pc", "addr", sym("main.main")),
                         ("high_pc", "data8", ".Lmain_end - \"main.main\""),
                         ("frame_base", "exprloc", expr("\t.byte 0x%x" % OP["call_frame_cfa"])),
                         ("external", "flag_present", None)], children=True)
    d.die("formal_parameter", [("name", "string", "p"), ("type", "ref_addr", ".LTpnode"),
                               ("location", "exprloc", expr("\t.byte 0x%x" % OP["call_frame_cfa"]))])
    d.die("variable", [("name", "string", "s"), ("type", "ref_addr", ".LTstring"),
                       ("location", "exprloc", cfa_minus(24))])
    d.die("variable", [("name", "string", "b"), ("type", "ref_addr", ".LTslice"),
                       ("location", "exprloc", expr("\t.byte 0x%x" % OP["fbreg"], "\t.sleb128 -48"))])
    d.die("variable", [("name", "string", "r"), ("type", "ref_addr", ".LTpint"),
                       ("location", "exprloc", expr("\t.byte 0x%x" % OP["reg0"]))])
    d.die("variable", [("name", "string", "pair"), ("type", "ref_addr", ".LTstring"),
                       ("location", "exprloc", expr(
                           "\t.byte 0x%x" % OP["reg3"], "\t.byte 0x%x" % OP["piece"], "\t.uleb128 8",
                           "\t.byte 0x%x" % OP["call_frame_cfa"], "\t.byte 0x%x" % OP["consts"],
                           "\t.sleb128 -8", "\t.byte 0x%x" % OP["plus"],
                           "\t.byte 0x%x" % OP["piece"], "\t.uleb128 8"))])
    d.die("variable", [("name", "string", "k"), ("type", "ref_addr", ".LTint"),
                       ("location", "exprloc", expr("\t.byte 0x%x" % OP["lit1"],
                                                    "\t.byte 0x%x" % OP["stack_value"]))])
    d.die("variable", [("name", "string", "listed"), ("type", "ref_addr", ".LTpnode"),
                       ("location", "sec_offset", ".Lloc_listed")])
    d.die("lexical_block", [("low_pc", "addr", ".Lblock"),
                            ("high_pc", "data8", ".Lblock_end - .Lblock")], children=True)
    d.die("variable", [("name", "string", "inner"), ("type", "ref_addr", ".LTouter"),
                       ("location", "exprloc", cfa_minus(112))])
    d.end()
    d.die("inlined_subroutine", [("abstract_origin", "ref_addr", ".LFhelper"),
                                 ("low_pc", "addr", ".Linl"),
                                 ("high_pc", "data8", ".Linl_end - .Linl")], children=True)
    d.die("formal_parameter", [("abstract_origin", "ref_addr", ".LFhelper_n"),
                               ("location", "exprloc", cfa_minus(120))])
    d.end()
    d.end()
    d.die("subprogram", [("name", "string", "main.main.func1"),
                         ("low_pc", "addr", sym("main.main.func1")),
                         ("high_pc", "data8", ".Lfunc1_end - \"main.main.func1\""),
                         ("external", "flag_present", None)], children=True)
    d.die("variable", [("name", "string", "&captured"), ("type", "ref_addr", ".LTpint"),
                       ("go_closure_offset", "udata", 8),
                       ("location", "exprloc", expr("\t.byte 0x%x" % OP["reg0"]))])
    d.end()


def program():
    ab = Abbrevs()
    d = Info(ab)
    d.die("compile_unit", [("name", "string", "main"), ("language", "data1", 0x16)],
          children=True)
    types(d)
    functions(d)
    d.end()
    out = ["# Generated by tests/fuzz/tools/make_elf.py: a Go-like DWARF in a tiny ELF.",
           "\t.text", "\t.globl _start", "_start:", "\t.globl \"main.main\"",
           "\t.type \"main.main\", @function", "\"main.main\":", "\tnop", ".Lblock:",
           "\tnop", "\tnop", ".Linl:", "\tnop", ".Linl_end:", "\tnop", ".Lblock_end:",
           "\tnop", "\tret", ".Lmain_end:",
           "\t.size \"main.main\", .Lmain_end - \"main.main\"",
           "\t.globl \"main.main.func1\"", "\t.type \"main.main.func1\", @function",
           "\"main.main.func1\":", "\tnop", "\tret", ".Lfunc1_end:",
           "\t.size \"main.main.func1\", .Lfunc1_end - \"main.main.func1\"",
           "\t.section .rodata", "\t.balign 32", "\t.globl \"runtime.types\"",
           "\"runtime.types\":", "\t.zero 0x600", "\t.size \"runtime.types\", 0x600",
           "\t.section .go.buildinfo,\"aw\"", "\t.ascii \"\\377 Go buildinf:\"",
           "\t.byte 8, 2", "\t.zero 16", "\t.byte 8", "\t.ascii \"go1.24.0\"",
           "\t.byte 13", "\t.ascii \"heapref/fuzz\\n\""]
    for section in ("data", "bss"):
        out.append("\t.%s" % section if section == "data" else "\t.section .bss,\"aw\",@nobits")
        out.append("\t.balign 32")
        for name, _, sec, size in GLOBALS:
            if sec != section:
                continue
            out += ["\t.globl %s" % sym(name), "\t.type %s, @object" % sym(name),
                    "%s:" % sym(name),
                    "\t.quad \"main.gNode\"" if section == "data" and size == 8 else "\t.zero %d" % size,
                    "\t.size %s, %d" % (sym(name), size)]
    out += ["\t.section .debug_abbrev,\"\",@progbits", ".Ldebug_abbrev0:"] + ab.lines + ["\t.byte 0"]
    out += ["\t.section .debug_info,\"\",@progbits", ".Ldebug_info0:", ".Lcu0:",
            "\t.long .Lcu0_end - .Lcu0_start", ".Lcu0_start:", "\t.value 4",
            "\t.long .Ldebug_abbrev0", "\t.byte 8"] + d.lines + [".Lcu0_end:"]
    out += ["\t.section .debug_loc,\"\",@progbits", ".Ldebug_loc0:", ".Lloc_listed:",
            "\t.quad \"main.main\"", "\t.quad .Lblock",
            "\t.value 1", "\t.byte 0x%x" % OP["reg0"],
            "\t.quad .Lblock", "\t.quad .Lmain_end",
            "\t.value 4", "\t.byte 0x%x" % OP["fbreg"], "\t.sleb128 -64", "\t.byte 0x%x" % OP["piece"],
            "\t.uleb128 8",
            "\t.quad 0", "\t.quad 0"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(program())
