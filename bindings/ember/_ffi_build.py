"""Build the cffi extension `ember._native` over include/ember.h and libember.a.

The declarations come from the public header itself (never a hand-kept copy): comments,
preprocessor lines and the C++ guards are stripped, integer #defines are substituted.
"""
import os
import re
import subprocess
import sys

import cffi

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "include", "ember.h")
STATIC_LIB = os.path.join(ROOT, "build", "host", "libember.a")


def header_declarations(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    constants = dict(re.findall(r"^\s*#\s*define\s+(\w+)\s+(\d+)\s*$", text, flags=re.M))
    # Drop the C++ guard blocks, then every remaining preprocessor line.
    text = re.sub(r"#ifdef __cplusplus.*?#endif", "", text, flags=re.S)
    text = re.sub(r"^\s*#[^\n]*$", "", text, flags=re.M)
    text = text.replace("EMBER_API", "")
    for name, value in constants.items():
        text = re.sub(rf"\b{name}\b", value, text)
    # Substituted above so array sizes parse; declared again so Python sees them as lib.X.
    return text + "".join(f"#define {name} {value}\n" for name, value in constants.items())


def build_host():
    # All of build/host, not only the library: ember-run and the C test programs are
    # part of what `pip install -e .` promises.
    subprocess.check_call([sys.executable, "-m", "SCons", "-C", ROOT, "-Q", "-j2"])


ffibuilder = cffi.FFI()
with open(HEADER) as f:
    ffibuilder.cdef(header_declarations(f.read()))
build_host()
ffibuilder.set_source(
    "ember._native",
    '#include "ember.h"',
    include_dirs=[os.path.join(ROOT, "include")],
    extra_objects=[STATIC_LIB],
    libraries=["m", "pthread"],
)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=os.path.join(ROOT, "build", "cffi"), verbose=True)
