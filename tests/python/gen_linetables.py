# SPDX-License-Identifier: BSD-2-Clause
"""gen_linetables: CPython's own line numbers, as fixtures for check_pylines.

Run by the CPython whose tables are wanted (3.8 .. 3.13), it compiles a
sample module built below (loops, multi-line expressions, try/except,
decorators, lambdas, comprehensions, generators, a class, line gaps of
hundreds of lines both ways, lines with hundreds of bytes of bytecode and
columns past 128), walks every code object in it and prints, for each,
the raw line table and the line of every instruction offset as the
interpreter itself tells it:

  3.8, 3.9   PyCode_Addr2Line (through ctypes) at every offset, and four
             past the end; dis.findlinestarts must agree;
  3.10       co_lines() ranges; PyCode_Addr2Line must agree;
  3.11+      co_lines() ranges; co_positions() and PyCode_Addr2Line must
             agree.

A disagreement between the interpreter's own answers stops it (exit 1).
report/python/pylines.c is tested against what it prints; the fixtures in
tests/fixtures/pylines/ are its output (make pylines-fixtures, mk/pylines.mk),
committed so the unit test needs no Python.

    python3.Y gen_linetables.py > FILE

Output, one block per code object, lines of space-separated fields:

    # comments
    code PY_VERSION(hex) FIRSTLINENO NAME
    table HEX|-
    lines N RUN...      N offsets from 0; each RUN is LINE*COUNT or -*COUNT
                        (no line: -ENOENT), COUNT consecutive offsets
"""

import ctypes
import dis
import sys
import types

VERSION = sys.version_info[0] << 8 | sys.version_info[1]


def sample_source():
    """The module compiled: Python 3.8 syntax, with gaps built in code."""
    gap = "\n" * 300
    wide = " + ".join("value%d" % i for i in range(40))
    many = ", ".join("a" if i % 2 else "b" for i in range(200))
    return '''\
import functools


def loop(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        while total < i:
            total += 1
    return total


def multi_line(a, b,
               c=3):
    x = (a
         + b
         * c)
    y = call(
        a,
        b if x else
        c,
    )
    return [
        x, y,
    ]


def exceptions(f):
    try:
        f()
    except ValueError as e:
        return str(e)
    except (KeyError,
            IndexError):
        raise
    else:
        pass
    finally:
        f = None
    with open("/dev/null") as fh:
        fh.read()


@functools.lru_cache(maxsize=None)
@staticmethod
def decorated(x):
    return x


def lambdas_and_comprehensions(xs):
    key = lambda v: (v,
                     -v)
    squares = [x * x for x in xs if x]
    table = {x: [y for y in range(x)] for x in xs}
    gen = (x
           for x in xs)
    return sorted(squares, key=key), table, set(gen)


def generator(n):
    for i in range(n):
        yield i
    return (yield from range(n))


async def coroutine(aw):
    return await aw


class Klass:
    attr = 1

    def method(self):
        return super().method()


def big_gap():
    a = 1
    """''' + gap + '''"""
    b = a + 1
    for i in range(3):
        a += i
        """''' + gap + '''"""
        b += i
    return a + b


def long_line(a, b):
    return [''' + many + ''']


def wide_columns(''' + ", ".join("value%d" % i for i in range(40)) + '''):
    return ''' + wide + '''


def nested():
    def inner():
        def innermost():
            return 1
        return innermost
    return inner


x = loop(10) if __name__ == "__main__" else None
'''


def addr2line():
    """CPython's PyCode_Addr2Line(code, byte offset), from this interpreter."""
    f = ctypes.pythonapi.PyCode_Addr2Line
    f.argtypes = [ctypes.py_object, ctypes.c_int]
    f.restype = ctypes.c_int
    return f


def codes(code):
    """@code and every code object under it, depth first."""
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)


def fail(code, what):
    sys.stderr.write("gen_linetables: %s (line %d): %s\n" % (code.co_name, code.co_firstlineno, what))
    sys.exit(1)


def truth_lnotab(code, units, a2l):
    """3.8, 3.9: PyCode_Addr2Line, checked against dis.findlinestarts."""
    lines = [a2l(code, 2 * i) for i in range(units + 4)]
    starts = dict(dis.findlinestarts(code))
    cur = None
    for i in range(units):
        cur = starts.get(2 * i, cur)
        if cur != lines[i]:
            fail(code, "offset %d: findlinestarts %r, PyCode_Addr2Line %d" % (i, cur, lines[i]))
    return lines


def truth_co_lines(code, units, a2l):
    """3.10+: co_lines() ranges, checked against PyCode_Addr2Line and,
    3.11+, co_positions()."""
    lines = [None] * units
    end = 0
    for start, stop, line in code.co_lines():
        if start != end or stop <= start or stop > 2 * units or start % 2 or stop % 2:
            fail(code, "co_lines range %d..%d after %d" % (start, stop, end))
        for b in range(start, stop, 2):
            lines[b // 2] = line
        end = stop
    if end != 2 * units:
        fail(code, "co_lines ends at %d of %d" % (end, 2 * units))
    for i in range(units):
        a = a2l(code, 2 * i)
        if a != (-1 if lines[i] is None else lines[i]):
            fail(code, "offset %d: co_lines %r, PyCode_Addr2Line %d" % (i, lines[i], a))
    if VERSION >= 0x030b:
        positions = list(code.co_positions())
        if len(positions) != units:
            fail(code, "%d positions for %d code units" % (len(positions), units))
        for i, pos in enumerate(positions):
            if pos[0] != lines[i]:
                fail(code, "offset %d: co_lines %r, co_positions %r" % (i, lines[i], pos))
    return lines


def runs(lines):
    out = []
    for line in lines:
        text = "-" if line is None else str(line)
        if out and out[-1][0] == text:
            out[-1][1] += 1
        else:
            out.append([text, 1])
    return " ".join("%s*%d" % (text, n) for text, n in out)


def main():
    a2l = addr2line()
    module = compile(sample_source(), "linesample.py", "exec")
    sys.stdout.write("# gen_linetables.py: CPython %s (%s)%s\n" % (
        sys.version.split()[0], sys.executable,
        ", -X no_debug_ranges" if "no_debug_ranges" in sys._xoptions else ""))
    for code in codes(module):
        units = len(code.co_code) // 2
        if VERSION <= 0x0309:
            table = code.co_lnotab
            lines = truth_lnotab(code, units, a2l)
        else:
            table = code.co_linetable
            lines = truth_co_lines(code, units, a2l)
        sys.stdout.write("code %04x %d %s\n" % (VERSION, code.co_firstlineno,
                                                getattr(code, "co_qualname", code.co_name)))
        sys.stdout.write("table %s\n" % (table.hex() or "-"))
        sys.stdout.write("lines %d %s\n" % (len(lines), runs(lines)))


if __name__ == "__main__":
    main()
