"""benchmarks/bench_ab.c, the A/B of two builds in one process, kept working: it builds
from its header's line, compares a library with a copy of itself (identical outputs, a
ratio reported) and refuses a symbolic input with a clear message."""
import os
import re
import shutil
import subprocess

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBRARY = os.path.join(ROOT, "build", "host", "libember.so")


def build_bench_ab(tmp_path):
    program = str(tmp_path / "bench_ab")
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE",
                    "-I" + os.path.join(ROOT, "include"),
                    os.path.join(ROOT, "benchmarks", "bench_ab.c"), "-ldl", "-lm", "-o",
                    program], check=True, capture_output=True, text=True)
    return program


def digits_plan(tmp_path, fact):
    model = ember.onnx().load(os.path.join(ROOT, "examples", "digits.onnx"))
    model.set_input_fact(0, fact)
    plan = str(tmp_path / "digits.tar")
    ember.nnef().write_model_to_tar(model.into_model(), plan)
    return plan


def test_a_build_against_a_copy_of_itself(tmp_path):
    assert os.path.exists(LIBRARY), "build/host/libember.so is missing: run scons"
    program = build_bench_ab(tmp_path)
    copy = str(tmp_path / "copy.so")
    shutil.copy(LIBRARY, copy)
    result = subprocess.run([program, copy, LIBRARY, digits_plan(tmp_path, "1,1,8,8,f32"), "6"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "6 pairs" in result.stdout and "outputs: identical" in result.stdout, result.stdout
    ratio = re.search(r"B/A: median of pairs ([\d.]+) \(quartiles ([\d.]+)-([\d.]+)\); "
                      r"A run first ([\d.]+), B first ([\d.]+)", result.stdout)
    assert ratio and all(float(v) > 0 for v in ratio.groups()), result.stdout


def test_a_symbolic_input_is_refused(tmp_path):
    program = build_bench_ab(tmp_path)
    result = subprocess.run([program, LIBRARY, LIBRARY, digits_plan(tmp_path, "N,1,8,8,f32")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "a symbolic input dim: cook the plan at a fixed input shape" in result.stderr
