"""The main job: cook a real model and run it on the C runtime.

examples/digits.onnx is a small CNN trained here on scikit-learn's 8x8 digits
(examples/train_digits.py). This script cooks it into a plan, loads the plan in the
C runtime, classifies the 450 held-out digits one by one, and prints the accuracy,
the agreement with the cook-side numpy reference, and the timings. Then it runs the
same plan with the pure-C command line `ember-run`, as a device would.

    python examples/digits.py
"""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import ember

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "build", "digits")


def main():
    os.makedirs(OUT, exist_ok=True)
    test = np.load(os.path.join(HERE, "digits_test.npz"))
    images = test["images"].astype(np.float32) / 16.0          # N x 1 x 8 x 8
    labels = test["labels"]

    started = time.perf_counter()
    inference_model = ember.onnx().load(os.path.join(HERE, "digits.onnx"))
    inference_model.set_input_fact(0, "1,1,8,8,f32")
    model = inference_model.into_model()
    plan = os.path.join(OUT, "digits.nnef.tgz")
    ember.nnef().write_model_to_tar_gz(model, plan)
    cook_ms = (time.perf_counter() - started) * 1e3
    print(f"cooked examples/digits.onnx -> {os.path.relpath(plan, ROOT)} "
          f"({os.path.getsize(plan)} bytes) in {cook_ms:.0f} ms")

    started = time.perf_counter()
    runnable = ember.load_model(plan).into_runnable()
    load_ms = (time.perf_counter() - started) * 1e3
    print(f"C runtime: loaded and prepared in {load_ms:.2f} ms, "
          f"{runnable.memory_bytes} bytes of working memory")

    predictions, run_us, worst = [], [], 0.0
    for image in images:
        x = image[None]
        t0 = time.perf_counter()
        logits = runnable.run([x])[0]
        run_us.append((time.perf_counter() - t0) * 1e6)
        predictions.append(int(logits.argmax()))
        reference = model.run_reference([x])[0]
        worst = max(worst, float(np.abs(logits - reference).max()))
    accuracy = float(np.mean(np.array(predictions) == labels))
    print(f"accuracy on {len(labels)} held-out digits: {accuracy:.4f}")
    print(f"max |C runtime - numpy reference| over all logits: {worst:.2e}")
    print(f"per-image latency (Python call included): median {statistics.median(run_us):.1f} us")
    for i in range(5):
        print(f"  digit #{i}: label {labels[i]}, predicted {predictions[i]}")

    ember_run = os.path.join(ROOT, "build", "host", "ember-run")
    sample = os.path.join(OUT, "sample.npy")
    np.save(sample, images[:1])
    print(f"\n$ ember-run {os.path.relpath(plan, ROOT)} -i {os.path.relpath(sample, ROOT)} --bench 1000")
    sys.stdout.flush()
    subprocess.run([ember_run, plan, "-i", sample, "--bench", "1000"], check=True)
    if accuracy < 0.9 or worst > 1e-3:
        sys.exit("unexpected result: accuracy below 0.9 or C runtime far from the reference")


if __name__ == "__main__":
    main()
