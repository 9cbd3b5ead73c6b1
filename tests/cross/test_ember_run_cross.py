"""Plans cooked on the host run on aarch64 and armv7 (under QEMU) with the same outputs.

The cross-built ember-run reads a host-cooked .tgz plan and .npy inputs and writes .npy
outputs; they must equal the host's within 1e-4. Each target runs twice: with its NEON
kernels and with EMBER_ISA=scalar.
"""
import os

import numpy as np
import pytest

import cross
import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST_EMBER_RUN = os.path.join(ROOT, "build", "host", "ember-run")


def cook_digits(directory):
    im = ember.onnx().load(os.path.join(ROOT, "examples", "digits.onnx"))
    im.set_input_fact(0, "3,1,8,8,f32")
    plan = os.path.join(directory, "digits.nnef.tgz")
    ember.nnef().write_model_to_tar_gz(im.into_model(), plan)
    x = np.random.default_rng(0).random((3, 1, 8, 8), dtype=np.float32)
    return plan, x


def cook_squeezenet(directory):
    import zoo
    im = ember.onnx().load(zoo.randomized_light_model("squeezenet", seed=1))
    plan = os.path.join(directory, "squeezenet.nnef.tgz")
    ember.nnef().write_model_to_tar_gz(im.into_model(), plan)
    x = np.random.default_rng(1).random((1, 3, 224, 224), dtype=np.float32)
    return plan, x


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("cross-plans"))
    cases = {}
    for name, cook in [("digits", cook_digits), ("squeezenet", cook_squeezenet)]:
        plan, x = cook(directory)
        x_path = os.path.join(directory, f"{name}-x.npy")
        np.save(x_path, x)
        cases[name] = (plan, x_path, x)
    return cases


def run_host(plan, x_path, out_path):
    import subprocess
    assert os.path.exists(HOST_EMBER_RUN), "build/host/ember-run is missing: run scons"
    subprocess.run([HOST_EMBER_RUN, plan, "-i", x_path, "-o", out_path], check=True,
                   capture_output=True, timeout=300)
    return np.load(out_path)


@pytest.mark.parametrize("isa", ["default", "scalar"])
@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
@pytest.mark.parametrize("model", ["digits", "squeezenet"])
def test_cross_ember_run_matches_host(arch, isa, model, plans, tmp_path):
    cross.require_cross(arch)
    cross.cross_build(arch)
    plan, x_path, x = plans[model]
    host = run_host(plan, x_path, str(tmp_path / "host.npy"))
    # The host result itself is checked against the Python binding of the same plan.
    np.testing.assert_allclose(host, ember.load_model(plan).into_runnable().run([x])[0],
                               rtol=1e-6, atol=1e-6)
    out = str(tmp_path / f"{arch}.npy")
    env = dict(os.environ, EMBER_ISA="scalar") if isa == "scalar" else None
    result = cross.run_under_qemu(
        arch, [os.path.join(ROOT, "build", arch, "ember-run"), plan, "-i", x_path, "-o", out],
        env=env, timeout=900)
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(np.load(out), host, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
def test_cross_corrupt_plan_is_an_error(arch, tmp_path):
    cross.require_cross(arch)
    cross.cross_build(arch)
    bad = tmp_path / "bad.tgz"
    bad.write_bytes(b"\x1f\x8b\x08\x00" + os.urandom(500))
    result = cross.run_under_qemu(arch, [os.path.join(ROOT, "build", arch, "ember-run"),
                                         str(bad)], timeout=120)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert result.stderr.strip()


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
def test_cross_symbolic_plan_at_two_lengths(arch, tmp_path):
    """One plan with free N and T, run by the cross-built ember-run at two shapes."""
    import zoo
    cross.require_cross(arch)
    cross.cross_build(arch)
    plan = str(tmp_path / "conv1d.nnef.tar")
    ember.nnef().write_model_to_tar(
        ember.onnx().load(zoo.symbolic_conv1d_model()).into_model(), plan)
    runnable = ember.load_model(plan).into_runnable()
    for n, t in [(1, 7), (2, 19)]:
        x = np.random.default_rng(t).standard_normal((n, 4, t)).astype(np.float32)
        x_path, out = str(tmp_path / f"x{t}.npy"), str(tmp_path / f"y{t}.npy")
        np.save(x_path, x)
        result = cross.run_under_qemu(
            arch, [os.path.join(ROOT, "build", arch, "ember-run"), plan, "-i", x_path,
                   "-o", out], timeout=300)
        assert result.returncode == 0, result.stderr
        np.testing.assert_allclose(np.load(out), runnable.run([x])[0], rtol=1e-5, atol=1e-5)
        assert np.load(out).shape == (n, 8 * t)
