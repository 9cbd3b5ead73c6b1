"""The per-node profile (ember_runnable_profile; runnable.profile / profile_json;
ember-run --profile; ember MODEL dump --profile --html): every node of the plan that
runs is there once, with its op, the FLOPs its shapes give, a time that adds up to the
profile's total; symbolic and control-flow plans too."""
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

import ember
from ember import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMBER_RUN = os.path.join(ROOT, "build", "host", "ember-run")


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    im = ember.onnx().load(os.path.join(ROOT, "examples", "digits.onnx"))
    im.set_input_fact(0, "1,1,8,8,f32")
    plan = str(tmp_path_factory.mktemp("profile") / "digits.tar")
    ember.nnef().write_model_to_tar(im.into_model(), plan)
    return plan, [np.random.default_rng(0).random((1, 1, 8, 8), dtype=np.float32)]


def plan_ops(plan):
    import tarfile
    text = tarfile.open(plan).extractfile("graph.nnef").read().decode()
    return dict(re.findall(r"^\s*(\w+) = (\w+)\(", text, re.M))


def test_every_node_once_with_its_op_and_cost(digits):
    plan, inputs = digits
    nodes = ember.load_model(plan).into_runnable().profile(inputs, runs=3)
    ops = plan_ops(plan)
    names = [n["name"] for n in nodes]
    assert len(names) == len(set(names)) and len(names) >= 5
    for n in nodes:
        assert ops[n["name"]] == n["op"], n
        assert n["seconds"] >= 0 and n["bytes"] > 0
    conv = next(n for n in nodes if n["op"] == "conv")
    assert all(n["form"] for n in nodes if n["op"] == "conv")
    assert not any(n["form"] for n in nodes if n["op"] != "conv")
    # the first conv: 16 channels × 8 × 8 outputs, each 1 × 3 × 3 multiply-adds
    assert conv["shape"] == [1, 16, 8, 8] and conv["flops"] == 2 * 16 * 8 * 8 * 9
    matmul = next(n for n in nodes if n["op"] == "matmul")
    assert matmul["flops"] == 2 * 10 * 128


def test_profile_json_has_tracts_shape(digits):
    plan, inputs = digits
    runnable = ember.load_model(plan).into_runnable()
    profile = json.loads(runnable.profile_json(inputs, runs=4))
    assert profile["profiling_info"]["iterations"] == 4
    total = sum(n["secs_per_iter"] for n in profile["nodes"])
    assert profile["profiling_info"]["secs_per_iter"] == pytest.approx(total)
    for n in profile["nodes"]:
        assert {"node_name", "op_name", "secs_per_iter", "cost"} <= set(n)
        assert int(n["cost"]["FMA(F32)"]) == int(n["flops"] // 2)
    # the runnable still runs as before
    assert runnable.run(inputs)[0].shape == (1, 10)


def test_ember_run_profile_lists_every_node(digits):
    plan, _ = digits
    result = subprocess.run([EMBER_RUN, plan, "--profile", "5"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    count = int(re.match(r"profile: 5 runs, [\d.]+ ms per run in (\d+) nodes", lines[0]).group(1))
    rows = [line.split() for line in lines[2:2 + count]]
    profiled = ember.load_model(plan).into_runnable().profile(
        [np.zeros((1, 1, 8, 8), np.float32)], runs=1)
    assert sorted(r[6] for r in rows) == sorted(n["name"] for n in profiled)
    assert all(plan_ops(plan)[r[6]] == r[4] for r in rows)
    forms = {n["name"]: n["form"] or "-" for n in profiled}
    assert all(forms[r[6]] == r[5] for r in rows)
    assert sum(float(r[2]) for r in rows) == pytest.approx(100, abs=0.5)
    assert "op" in lines[3 + count] and "nodes" in lines[3 + count]
    # under conv, indented, its forms: the nodes' own, adding up to its nodes
    summary = lines[4 + count:]
    conv = next(i for i, line in enumerate(summary) if line.split()[0] == "conv")
    under = [line.split() for line in summary[conv + 1:]]
    under = under[:next((i for i, line in enumerate(summary[conv + 1:])
                         if not line.startswith("  ")), len(under))]
    conv_forms = {forms[n["name"]] for n in profiled if n["op"] == "conv"}
    assert {row[0] for row in under} == conv_forms
    assert sum(int(row[1]) for row in under) == int(summary[conv].split()[1])


def test_a_symbolic_plan_and_a_control_flow_plan_profile(tmp_path):
    import zoo
    model = zoo.symbolic_conv1d_model()
    path = str(tmp_path / "sym.tar")
    ember.nnef().write_model_to_tar(ember.onnx().load(model).into_model(), path)
    runnable = ember.load_model(path).into_runnable()
    fact = runnable.input_facts()[0]
    x = np.zeros([d if isinstance(d, int) and d > 0 else 50 for d in fact.shape], np.float32)
    nodes = runnable.profile([x], runs=2)
    assert nodes and all(n["seconds"] >= 0 for n in nodes)

    from test_silero_vad import cooked
    _, names, typed = cooked("silero_vad.onnx", (1, 512))
    feeds = {"input": np.zeros((1, 512), np.float32), "state": np.zeros((2, 1, 128), np.float32),
             "sr": np.array(16000, np.int64)}
    nodes = typed.into_runnable().profile([feeds[n] for n in names], runs=2)
    assert "ember_if" in {n["op"] for n in nodes}


def test_the_html_report_carries_every_node(digits, tmp_path, capsys):
    plan, _ = digits
    report = str(tmp_path / "report.html")
    assert cli.main([plan, "dump", "--profile", "--profile-runs", "3", "--html", report]) == 0
    capsys.readouterr()
    page = open(report).read()
    charts = re.findall(r"<svg.*?</svg>", page, re.S)
    assert len(charts) == 2
    per_node = ElementTree.fromstring(charts[1])
    labels = {t.text for t in per_node.iter("{http://www.w3.org/2000/svg}text")}
    nodes = ember.load_model(plan).into_runnable().profile(
        [np.zeros((1, 1, 8, 8), np.float32)], runs=1)
    for n in nodes:
        form = ", " + n["form"] if n["form"] else ""
        assert f'{n["name"]} ({n["op"]}{form})' in labels
