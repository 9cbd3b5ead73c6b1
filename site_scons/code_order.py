"""The linker script that lays out first the code runs reach (csrc/code_order.txt).

Linux maps a program's code in 64 KiB windows around each page it runs (fault-around),
so what a process keeps resident is every window holding something it ran. Compiled with
-ffunction-sections, each of ember's functions is a section of its own (.text.NAME) and
the script below lists them in the order of csrc/code_order.txt, in an output section
inserted before .text; a static program also gets the C library's members that define
the listed functions (the C library is not built with function sections: its members go
whole), or the members listed by name, and the start files' code. Everything unlisted
stays in .text, after them, in link order. A static program's math library tables go
last, after .eh_frame (MATH_TABLES_LAST).
"""
import re
import shlex
import subprocess


def static_libraries(cc, flags):
    """The archives of the static C, math, GCC and GCC unwinder libraries, where the
    toolchain has them. A linker script in their place (glibc's libm.a: GROUP(libm-2.36.a libmvec.a))
    stands for the archives it names."""
    found = []
    for query in ('-print-file-name=libc.a', '-print-file-name=libm.a',
                  '-print-libgcc-file-name', '-print-file-name=libgcc_eh.a'):
        try:
            path = subprocess.run(shlex.split(cc) + flags + [query], capture_output=True,
                                  text=True).stdout.strip()
            with open(path, 'rb') as f:
                head = f.read(4096)
        except OSError:
            continue
        if head.startswith(b'!<arch>'):
            found.append(path)
        else:
            group = re.search(rb'(?:GROUP|INPUT)\s*\(([^)]*)\)', head)
            found += [word.decode() for word in group.group(1).split()
                      if word.endswith(b'.a')] if group else []
    return found


def c_library_members(cc, flags, nm):
    """{function: [(archive, member)]} of the toolchain's static C, math and GCC
    libraries; empty where the toolchain has none or nm cannot read them. A local
    function names its member only where no other member has one of that name (strtod's
    round_and_return is in eight; the global function beside it names the member)."""
    defined = {}
    for archive in static_libraries(cc, flags):
        try:
            listing = subprocess.run([nm, '-A', '--defined-only', archive],
                                     capture_output=True, text=True).stdout
        except OSError:
            continue
        name = archive.rsplit('/', 1)[-1]
        # "/usr/lib/x86_64-linux-gnu/libc.a:printf_fp.o:0000000000000000 T __printf_fp"
        for line in listing.splitlines():
            found = re.match(r'.*?\.a:([^:]+):\S*\s+([tTwWi])\s+(\S+)$', line)
            if found:
                member, kind, function = found.groups()
                defined.setdefault(function, []).append((name, member, kind != 't'))
    return {function: [(archive, member) for archive, member, is_global in places
                       if is_global or len(places) == 1]
            for function, places in defined.items()}


def read_order(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith('#')]


# The start files' code (crt1.o's _start, crtbegin's frame_dummy and the rest) runs in
# every process but is no function section and no library member: a static program
# lists it first, or its window stays mapped for a few hundred bytes.
START_FILES = ('crt1.o', 'crtbegin*.o', 'crtend*.o')


# glibc's static libm brings some 150 KB of tables for the double-precision functions
# ember's reference paths name (asin, atan and tan in four ISA variants, sin and cos, exp,
# log, pow), read only by runs that call them; in .rodata they sit between the data
# every run reads and cost a 64 KiB window (fault-around) to every run. This section
# puts them after .eh_frame, whose first page every run reads at startup, where only a
# run that calls them maps them. The float functions' data (expf's, logf's, powf's,
# sinf's: the *f_data.o and *f_log2_data.o members, 1.2 KB) stays in .rodata: the
# scalar tails of the f32 kernels call them.
MATH_TABLES_LAST = """SECTIONS
{
  .rodata.math_tables :
  {
    *libm*.a:*(EXCLUDE_FILE (*libm*.a:*f_data.o *libm*.a:*f_log2_data.o) .rodata)
  }
}
INSERT AFTER .eh_frame;
"""


def script(entries, library_members):
    """The linker script's text: one input-section line per function (its section, as
    gcc names it, and main's; a function's cold part, NAME.cold, is gcc's
    .text.unlikely.NAME), or per C library member the first time one is needed; an
    entry ARCHIVE:MEMBER names a member itself (where the function run is a local one
    that several members define: code_order.py resolved it by its address). The start
    files and named members only come where the C library's members do (a static
    program; the shared library has neither)."""
    lines = [f'    *{name}(.text .text.*)' for name in START_FILES] if library_members else []
    seen = set()

    def member(archive, name):
        if (archive, name) not in seen:
            seen.add((archive, name))
            lines.append(f'    *{archive}:{name}(.text .text.*)')
    for entry in entries:
        if ':' in entry:
            if library_members:      # (a program without the C library has none)
                member(*entry.split(':', 1))
            continue
        if entry.endswith('.cold'):
            lines.append(f'    *(.text.unlikely.{entry[:-len(".cold")]})')
        else:
            lines.append(f'    *(.text.{entry} .text.startup.{entry} .text.hot.{entry})')
        for archive, name in library_members.get(entry, []):
            member(archive, name)
    return ('/* written by site_scons/code_order.py from csrc/code_order.txt */\n'
            'SECTIONS\n{\n  .text.run_order :\n  {\n' + '\n'.join(lines) +
            '\n  }\n}\nINSERT BEFORE .text;\n' + (MATH_TABLES_LAST if library_members else ''))


def write_script(path, order_path, cc, flags, nm, with_c_library):
    members = c_library_members(cc, flags, nm) if with_c_library else {}
    with open(path, 'w') as out:
        out.write(script(read_order(order_path), members))
