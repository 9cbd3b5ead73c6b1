"""conv against a direct numpy reference, on hand-written plans through the C runtime (the
harness of test_ops.py): every conv path of csrc/ops/conv*.c — in place, im2col, few and
one output pixels, depthwise — and the epilogue fusions that stop or go on around it."""
import os

import numpy as np
import pytest

from test_ops import (ATOL, RTOL, check, nnef_list, nnef_padding, rand, ref_conv, run,
                      same_padding)


CONV_CASES = {
    # name: (x shape, filter shape, groups, padding or None for auto, stride, dilation)
    "plain-3x3": ((1, 3, 11, 13), (5, 3, 3, 3), 1, [(1, 1), (1, 1)], [1, 1], [1, 1]),
    "stride2-asym-pad": ((2, 4, 14, 9), (7, 4, 3, 2), 1, [(0, 2), (1, 0)], [2, 2], [1, 1]),
    "dilation": ((1, 3, 15, 12), (6, 3, 3, 3), 1, [(2, 2), (2, 2)], [1, 1], [2, 2]),
    "groups": ((1, 6, 9, 10), (9, 2, 3, 3), 3, [(1, 1), (1, 1)], [1, 2], [1, 1]),
    "depthwise": ((1, 7, 12, 11), (7, 1, 3, 3), 0, [(1, 1), (1, 1)], [2, 2], [1, 1]),
    "depthwise-multiplier": ((1, 4, 8, 8), (8, 1, 5, 5), 4, [(2, 2), (2, 2)], [1, 1], [1, 1]),
    "depthwise-1d-dilated": ((2, 5, 23), (5, 1, 3), 0, [(2, 1)], [2], [2]),
    "depthwise-3d": ((1, 3, 5, 6, 7), (6, 1, 2, 3, 3), 3, [(1, 0), (1, 1), (0, 2)], [1, 1, 2],
                     [1, 2, 1]),
    "depthwise-huge-pad": ((1, 2, 3, 4), (2, 1, 3, 3), 0, [(4, 5), (6, 3)], [2, 3], [1, 1]),
    "depthwise-3x3-s1-wide": ((1, 3, 6, 37), (3, 1, 3, 3), 0, [(1, 1), (1, 1)], [1, 1], [1, 1]),
    "depthwise-3x3-s2-wide": ((1, 2, 7, 40), (4, 1, 3, 3), 2, [(0, 1), (1, 0)], [2, 2], [1, 1]),
    "depthwise-3x3-tiny-pad": ((1, 2, 2, 2), (2, 1, 3, 3), 0, [(2, 2), (2, 2)], [1, 1], [1, 1]),
    # the phase-plane path: every stride up to 4, dilation per dim, uneven pads, 1-d, planes
    # of one vector or less, no padding; stride 5 takes the generic loops
    "depthwise-5x5-s2-dilated": ((2, 3, 17, 19), (3, 1, 5, 5), 0, [(3, 2), (4, 1)], [2, 2],
                                 [2, 1]),
    "depthwise-s3x4-multiplier": ((1, 3, 20, 23), (6, 1, 3, 4), 3, [(1, 2), (0, 3)], [3, 4],
                                  [1, 1]),
    "depthwise-s5": ((1, 2, 16, 16), (2, 1, 3, 3), 0, [(1, 1), (1, 1)], [5, 5], [1, 1]),
    "depthwise-1d-long": ((1, 4, 300), (4, 1, 5), 0, [(2, 2)], [1], [1]),
    "depthwise-7x7-plane": ((1, 16, 7, 7), (16, 1, 3, 3), 0, [(1, 1), (1, 1)], [1, 1], [1, 1]),
    "depthwise-2x3-plane": ((1, 3, 2, 3), (3, 1, 3, 3), 0, [(1, 1), (1, 1)], [1, 1], [1, 1]),
    # 3×3 stride 2: the row-phase layout and the kernel's own run (wide pads, none, a
    # single output, TF-style (0, 1) pads, long rows of several passes)
    "depthwise-3x3-s2-wide-pads": ((1, 3, 16, 15), (3, 1, 3, 3), 0, [(2, 3), (3, 2)], [2, 2],
                                   [1, 1]),
    "depthwise-3x3-s2-valid-batch": ((2, 5, 17, 18), (5, 1, 3, 3), 0, [(0, 0), (0, 0)],
                                     [2, 2], [1, 1]),
    "depthwise-3x3-s2-one-output": ((1, 4, 2, 2), (4, 1, 3, 3), 0, [(1, 1), (1, 1)], [2, 2],
                                    [1, 1]),
    "depthwise-3x3-s2-same-upper": ((1, 6, 28, 28), (6, 1, 3, 3), 0, [(0, 1), (0, 1)], [2, 2],
                                    [1, 1]),
    "depthwise-3x3-s2-long-rows": ((1, 2, 9, 121), (2, 1, 3, 3), 0, [(1, 1), (1, 1)], [2, 2],
                                   [1, 1]),
    # 3×3 "same" stride 1 from 14 wide: read and written in place (conv_depthwise.c's
    # same_plane): batch and multiplier, two rows (no run between the first and last),
    # rows of whole vectors
    "depthwise-same-in-place": ((2, 3, 15, 14), (6, 1, 3, 3), 3, [(1, 1), (1, 1)], [1, 1],
                                [1, 1]),
    "depthwise-same-two-rows": ((1, 2, 2, 33), (2, 1, 3, 3), 0, [(1, 1), (1, 1)], [1, 1],
                                [1, 1]),
    "depthwise-same-vector-rows": ((1, 2, 5, 64), (2, 1, 3, 3), 0, [(1, 1), (1, 1)], [1, 1],
                                   [1, 1]),
    # 3x3 stride 2 with rows of 48 outputs or more, read in place (stride2_plane): no top
    # padding, a multiplier and batch 2
    "depthwise-3x3-s2-in-place-no-top-pad": ((1, 3, 10, 100), (3, 1, 3, 3), 0,
                                             [(0, 1), (1, 1)], [2, 2], [1, 1]),
    "depthwise-3x3-s2-in-place-multiplier": ((2, 2, 7, 96), (4, 1, 3, 3), 2, [(1, 1), (1, 1)],
                                             [2, 2], [1, 1]),
    # planes of at most 64 outputs: the blocked kernel, 8 channels a call (two blocks and
    # a partial one, batch 2, 5x5)
    "depthwise-blocked-channels": ((2, 20, 8, 8), (20, 1, 5, 5), 0, [(2, 2), (2, 2)], [1, 1],
                                   [1, 1]),
    "depthwise-valid": ((1, 3, 9, 8), (3, 1, 3, 3), 0, [(0, 0), (0, 0)], [1, 1], [1, 1]),
    "pointwise": ((2, 19, 7, 9), (23, 19, 1, 1), 1, [(0, 0), (0, 0)], [1, 1], [1, 1]),
    "pointwise-stride2": ((1, 5, 9, 9), (3, 5, 1, 1), 1, [(0, 0), (0, 0)], [2, 2], [1, 1]),
    # 1x1 strided over many pixels: im2col rows read from the input planes in place (in
    # blocks of pixels starting mid-image: 600 channels), but not when the rows are
    # contiguous (stride 1 along them)
    "pointwise-stride2x3-in-place": ((1, 600, 40, 37), (5, 600, 1, 1), 1, [(0, 0), (0, 0)],
                                     [2, 3], [1, 1]),
    "pointwise-stride3x1": ((1, 4, 30, 21), (6, 4, 1, 1), 1, [(0, 0), (0, 0)], [3, 1], [1, 1]),
    "auto-same-stride2": ((1, 3, 13, 10), (4, 3, 3, 3), 1, None, [2, 2], [1, 1]),
    "auto-same-even-kernel": ((1, 2, 7, 7), (3, 2, 4, 2), 1, None, [1, 1], [1, 1]),
    "conv1d": ((2, 3, 29), (5, 3, 4), 1, [(2, 1)], [3], [1]),
    "conv3d": ((1, 2, 5, 6, 7), (3, 2, 2, 3, 2), 1, [(1, 0), (1, 1), (0, 1)], [1, 2, 1],
               [1, 1, 2]),
    "big-not-tile-multiple": ((1, 17, 31, 29), (37, 17, 3, 3), 1, [(1, 1), (1, 1)], [1, 1],
                              [1, 1]),
    "many-pixels": ((1, 3, 96, 90), (8, 3, 5, 5), 1, [(2, 2), (2, 2)], [1, 1], [1, 1]),
    # 2-d convs through pack_im2col_2d: borders wider than the kernel, strides, dilations
    "2d-huge-pad-strided-dilated": ((2, 3, 4, 5), (4, 3, 3, 2), 1, [(4, 3), (2, 5)], [2, 1],
                                    [1, 2]),
    "2d-deep-one-panel-blocks": ((1, 130, 9, 7), (5, 130, 3, 3), 1, [(1, 1), (1, 1)], [1, 1],
                                 [1, 1]),
    # the implicit GEMM (conv_implicit.c): several bands, stride phases, and the im2col
    # path beyond it (past 256 output channels, stride 5)
    "implicit-bands": ((1, 8, 40, 700), (8, 8, 3, 3), 1, [(1, 1), (1, 1)], [1, 1], [1, 1]),
    "implicit-stride2-dilated-bands": ((2, 6, 70, 400), (6, 6, 5, 3), 1, [(2, 1), (0, 3)],
                                       [2, 2], [2, 1]),
    # 24 output channels: on AVX-512 the 12-row kernel (ember_f32_gemm_for_rows), in place
    "implicit-12-row-tiles": ((1, 8, 40, 300), (24, 8, 3, 3), 1, [(1, 1), (1, 1)], [1, 1],
                              [1, 1]),
    "implicit-stride4-11x11": ((1, 3, 47, 45), (5, 3, 11, 11), 1, [(2, 2), (2, 2)], [4, 4],
                               [1, 1]),
    "implicit-stride3x2-grouped": ((1, 12, 31, 29), (10, 6, 3, 3), 2, [(1, 1), (1, 1)],
                                   [3, 2], [1, 1]),
    # planes of the blocked kernel past 64 outputs (conv_depthwise.c's blocked_pays, on
    # x86): 3x3 padded to size at 12x12, stride 2 from 24x24, 5x5 at 28x28 (9 channels:
    # a block of 8 and one of 1)
    "depthwise-blocked-3x3-same-12": ((2, 9, 12, 12), (9, 1, 3, 3), 0, [(1, 1), (1, 1)],
                                      [1, 1], [1, 1]),
    "depthwise-blocked-3x3-s2-24": ((1, 9, 24, 23), (9, 1, 3, 3), 0, [(1, 1), (1, 0)],
                                    [2, 2], [1, 1]),
    "depthwise-blocked-5x5-28": ((1, 9, 28, 28), (9, 1, 5, 5), 0, [(2, 2), (2, 2)], [1, 1],
                                 [1, 1]),
    # im2col and pointwise GEMMs over K slices of whole input channels (conv.c's
    # SLICE_DEPTH): uneven last slices, several pixel blocks, groups, 1-d, strides
    "im2col-k-slices": ((1, 100, 23, 22), (97, 100, 3, 3), 1, [(1, 1), (1, 1)], [1, 1],
                        [1, 1]),
    "im2col-k-slices-grouped-strided": ((2, 262, 17, 16), (122, 131, 3, 3), 2,
                                        [(1, 0), (0, 1)], [2, 1], [1, 1]),
    "im2col-k-slices-1d": ((1, 300, 70), (9, 300, 3), 1, [(1, 2)], [1], [2]),
    "pointwise-k-slices": ((1, 803, 21, 20), (30, 803, 1, 1), 1, [(0, 0), (0, 0)], [1, 1],
                           [1, 1]),
    # pointwise with B read in place (conv.c's pointwise_in_place_pays: few row tiles, K of
    # 64 to 256, planes of whole cache lines): batch 2, groups of 80 channels in, whole
    # column tiles only (128 pixels), and 48 pixels, whose last tile of AVX-512's 32
    # columns is packed apart
    "pointwise-in-place-batch2": ((2, 70, 8, 6), (30, 70, 1, 1), 1, [(0, 0), (0, 0)],
                                  [1, 1], [1, 1]),
    "pointwise-in-place-whole-tiles": ((1, 64, 8, 16), (16, 64, 1, 1), 1, [(0, 0), (0, 0)],
                                       [1, 1], [1, 1]),
    "pointwise-in-place-grouped": ((1, 160, 4, 12), (24, 80, 1, 1), 2, [(0, 0), (0, 0)],
                                   [1, 1], [1, 1]),
    # Winograd F(2x2, 3x3) (conv_winograd.c; its cost model takes these with tiles of 4,
    # 8 and 16): odd sizes (tiles cut at the edges), two blocks of tiles and several of
    # output channels, the last ones partial for 4, 6 and 8 rows a panel, groups,
    # batch 2, asymmetric padding, a 7x7 plane
    "winograd-odd-blocks": ((1, 256, 21, 19), (62, 256, 3, 3), 1, [(1, 1), (1, 1)], [1, 1],
                            [1, 1]),
    "winograd-grouped-batch-asym-pad": ((2, 256, 16, 17), (128, 128, 3, 3), 2, [(0, 2), (1, 0)],
                                        [1, 1], [1, 1]),
    "winograd-7x7": ((1, 512, 7, 7), (64, 512, 3, 3), 1, [(1, 1), (1, 1)], [1, 1], [1, 1]),
    "winograd-12-row-panels": ((1, 256, 21, 19), (48, 256, 3, 3), 1, [(1, 1), (1, 1)],
                               [1, 1], [1, 1]),
    # two blocks of tiles under a transformed filter past FILTER_KEPT_BYTES (4 MiB): the
    # filter transformed again per block (the cases above keep theirs for the run)
    "winograd-filter-not-kept": ((1, 256, 18, 18), (256, 256, 3, 3), 1, [(1, 1), (1, 1)],
                                 [1, 1], [1, 1]),
    "im2col-many-outputs": ((1, 8, 9, 9), (260, 8, 3, 3), 1, [(1, 1), (1, 1)], [1, 1], [1, 1]),
    # a filter past L2 (conv.c's IM2COL_FILTER_STREAMED_BYTES): blocks of 512 KiB, several
    "im2col-filter-past-l2": ((1, 64, 80, 75), (240, 64, 3, 3), 1, [(1, 1), (0, 1)], [2, 2],
                              [1, 1]),
    "pointwise-filter-past-l2": ((1, 600, 31, 30), (240, 600, 1, 1), 1, [(0, 0), (0, 0)],
                                 [1, 1], [1, 1]),
    "im2col-stride5": ((1, 3, 23, 21), (4, 3, 3, 3), 1, [(1, 1), (1, 1)], [5, 5], [1, 1]),
    # few output pixels (conv_few_pixels.c): pixels as the GEMM's rows, with channel
    # counts for which that pays on AVX-512, AVX2 and NEON (330: a narrow last column
    # tile; 160: 49 rows, the last tile one row)
    "few-pixels-3x3": ((1, 20, 7, 7), (224, 20, 3, 3), 1, [(1, 1), (1, 1)], [1, 1], [1, 1]),
    "few-pixels-pointwise-batch2": ((2, 384, 7, 7), (160, 384, 1, 1), 1, [(0, 0), (0, 0)],
                                    [1, 1], [1, 1]),
    "few-pixels-pointwise-narrow": ((1, 330, 7, 7), (330, 330, 1, 1), 1, [(0, 0), (0, 0)],
                                    [1, 1], [1, 1]),
    "few-pixels-grouped": ((1, 16, 7, 7), (448, 8, 3, 3), 2, [(1, 1), (1, 1)], [1, 1], [1, 1]),
    "few-pixels-strided": ((1, 8, 13, 13), (320, 8, 3, 3), 1, [(1, 1), (1, 1)], [2, 2], [1, 1]),
    # one output pixel: the transposed GEMM of conv.c's one_pixel
    "one-pixel-2d-padded": ((2, 5, 3, 3), (7, 5, 3, 3), 1, [(1, 0), (0, 1)], [2, 2], [1, 1]),
    "one-pixel-grouped-dilated": ((1, 6, 6), (10, 3, 3), 2, [(1, 0)], [1], [3]),
    "one-pixel-channels-past-a-panel": ((1, 40, 3), (70, 40, 3), 1, [(0, 0)], [1], [1]),
}


@pytest.mark.parametrize("case", sorted(CONV_CASES))
@pytest.mark.parametrize("bias", ["vector", "scalar", "row", "none"])
def test_conv(case, bias):
    xs, ws, groups, pads, stride, dilation = CONV_CASES[case]
    # deep filters scaled so their sums stay near 1: the tolerance is absolute
    x, w = rand(*xs), rand(*ws) / np.float32(max(1.0, np.prod(ws[1:]) / 100) ** 0.5)
    o = ws[0]
    real_groups = groups or xs[1]
    b = {"vector": rand(o), "scalar": rand(1), "row": rand(1, o), "none": np.zeros(1, np.float32)}[bias]
    explicit = pads if pads is not None else same_padding(xs[2:], ws[2:], stride, dilation)
    expected = ref_conv(x, w, b, explicit, stride, dilation, real_groups)
    variables = {"w": w} if bias == "none" else {"w": w, "b": b}
    padding = nnef_list([]) if pads is None else nnef_padding(pads)
    bias_arg = "" if bias == "none" else ", b"
    check({"x": x},
          [f"y = conv(x, w{bias_arg}, border = 'constant', padding = {padding}, "
           f"stride = {nnef_list(stride)}, dilation = {nnef_list(dilation)}, groups = {groups});"],
          expected, variables)


@pytest.mark.parametrize("size, stride", [((9, 16), 1), ((2, 14), 1), ((7, 7), 1),
                                          ((9, 101), 2)])
def test_depthwise_nan_reaches_only_its_outputs(size, stride):
    # in place, the run between the first and last rows reads the neighbouring row's end
    # and start for columns 0 and width - 1, then computes those again (stride 1), and a
    # row's ends are computed apart (stride 2): a NaN at a row's end or start, or in a
    # corner, must reach exactly the outputs whose taps hold it
    h, w_ = size
    x, w, b = rand(1, 3, h, w_), rand(3, 1, 3, 3), rand(3)
    x[0, 0, h // 2, w_ - 1] = np.nan
    x[0, 1, h - 1, 0] = np.nan
    x[0, 2, 0, w_ - 1] = np.inf
    expected = ref_conv(x, w, b, [(1, 1), (1, 1)], [stride] * 2, [1, 1], 3)
    (got,) = run({"x": x}, [f"y = conv(x, w, b, padding = [(1, 1), (1, 1)], "
                            f"stride = [{stride}, {stride}], groups = 0);"],
                 ("y",), {"w": w, "b": b})
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=RTOL, atol=ATOL)


def test_conv_with_computed_filter_and_bias():
    x, w, b = rand(1, 4, 9, 8), rand(6, 4, 3, 3), rand(6)
    expected = ref_conv(x, w, b, [(1, 1), (1, 1)], [1, 1], [1, 1], 1)
    check({"x": x, "w": w, "b": b}, ["y = conv(x, w, b, padding = [(1, 1), (1, 1)]);"], expected)


@pytest.mark.parametrize("path, cin, cout, size, scale", [
    # K slices: the residual accumulated before the first slice, the clamp after the last
    ("k-slices", 90, 64, (12, 11), 9),
    # Winograd: the residual and the clamp applied in the output transform
    ("winograd", 256, 128, (14, 14), 16),
    # pointwise, B in place: the residual accumulated by the in-place and the packed tail
    ("pointwise-in-place", 96, 24, (8, 14), 10),
])
def test_conv_residual_relu_fused(path, cin, cout, size, scale):
    k = 1 if path.startswith("pointwise") else 3
    pad = [((k - 1) // 2,) * 2] * 2
    x, w, b = rand(1, cin, *size), rand(cout, cin, k, k) / scale, rand(cout)
    r = rand(1, cout, *size)
    conv = ref_conv(x, w, b, pad, [1, 1], [1, 1], 1)
    check({"x": x, "r": r},
          [f"c = conv(x, w, b, padding = {nnef_padding(pad)});", "d = add(c, r);",
           "y = relu(d);"],
          np.maximum(conv + r, 0), {"w": w, "b": b})


def test_conv_winograd_keeps_the_filter_size_and_turns_off(monkeypatch, tmp_path):
    # Winograd keeps the 3x3 filter (transformed per run, not 16/9 of it kept);
    # EMBER_WINOGRAD=0 (read at prepare) turns it off: the direct sum, whose rounding
    # differs, both within tolerance of the reference
    ember = pytest.importorskip("ember")
    from test_ops import write_plan
    x, w = rand(1, 256, 14, 14), rand(128, 256, 3, 3) / 16
    write_plan(str(tmp_path), {"x": x}, ["y = conv(x, w, padding = [(1, 1), (1, 1)]);"], ["y"],
               {"w": w})
    outputs, packed = {}, {}
    for setting in ("1", "0"):
        monkeypatch.setenv("EMBER_WINOGRAD", setting)
        runnable = ember.load_model(str(tmp_path)).into_runnable()
        outputs[setting] = np.asarray(runnable.run([x])[0])
        packed[setting] = runnable.memory()["packed_bytes"]
    expected = ref_conv(x, w, np.zeros(1), [(1, 1), (1, 1)], [1, 1], [1, 1], 1)
    for setting in outputs:
        np.testing.assert_allclose(outputs[setting], expected, rtol=RTOL, atol=ATOL)
    assert not np.array_equal(outputs["1"], outputs["0"])
    assert w.nbytes <= packed["1"] <= w.nbytes * 1.05 and packed["0"] >= w.nbytes, packed


CORE_CLASSES = ("generic", "zen5", "zen4", "sapphire_rapids", "zen3")  # as EMBER_CORE names them


def padded_3x3_plan(tmp_path, x, w):
    """A plan of one 3x3 conv padded by 1 in tmp_path, its input x.npy beside it; and the
    environment to run ember-run in (no ISA or Winograd setting forced)."""
    from test_ops import write_plan
    plan = tmp_path / "plan"
    plan.mkdir()
    write_plan(str(plan), {"x": x}, ["y = conv(x, w, padding = [(1, 1), (1, 1)]);"], ["y"],
               {"w": w})
    np.save(tmp_path / "x.npy", x)
    env = {k: v for k, v in os.environ.items() if k not in ("EMBER_ISA", "EMBER_WINOGRAD")}
    return plan, env


def test_conv_winograd_choice_follows_the_core_class(tmp_path):
    # SqueezeNet's 32 -> 128 at 27x27: the cost models fitted to a Zen 5, a Zen 4, a
    # Sapphire Rapids and a Zen 3 (EMBER_CORE=zen5, zen4, sapphire_rapids, zen3) take
    # Winograd there, the generic one the direct sum; off
    # NEON (whose model has no class) the two roundings differ, both within tolerance.
    # The class is read once per process: ember-run (the harness's, EMBER_RUN) runs each.
    import subprocess
    from test_ops import EMBER_RUN
    x, w = rand(1, 32, 27, 27), rand(128, 32, 3, 3) / 6
    plan, env = padded_3x3_plan(tmp_path, x, w)
    outputs, kernels = {}, {}
    for core in CORE_CLASSES:
        out = tmp_path / f"y_{core}.npy"
        for args in ([str(plan), "-i", str(tmp_path / "x.npy"), "-o", str(out)], ["--kernels"]):
            result = subprocess.run([EMBER_RUN, *args], capture_output=True, text=True,
                                    timeout=60, env=dict(env, EMBER_CORE=core))
            assert result.returncode == 0, result.stderr
        kernels[core] = result.stdout
        outputs[core] = np.load(out)
    expected = ref_conv(x, w, np.zeros(1), [(1, 1), (1, 1)], [1, 1], [1, 1], 1)
    for core in outputs:
        np.testing.assert_allclose(outputs[core], expected, rtol=RTOL, atol=ATOL)
    for core in CORE_CLASSES[1:]:
        assert kernels[core].splitlines()[-1] == "core " + core
        if "neon" not in kernels[core]:
            assert not np.array_equal(outputs["generic"], outputs[core])
        np.testing.assert_array_equal(outputs["zen5"], outputs[core])


def test_conv_at_6x6_takes_the_few_pixel_form_not_winograd(tmp_path):
    # Inception v1's 3x3 160 -> 320 at 6x6: 9 Winograd tiles fill 16 columns, while 36
    # pixels are whole row tiles transposed; weighed against the few-pixel form (not the
    # im2col one), every class's Winograd model leaves it to that form (a Zen 3 ran it in
    # 0.79x Winograd's time)
    import subprocess
    from test_ops import EMBER_RUN
    x, w = rand(1, 160, 6, 6), rand(320, 160, 3, 3) / np.float32(36)
    plan, env = padded_3x3_plan(tmp_path, x, w)
    expected = ref_conv(x, w, np.zeros(1), [(1, 1), (1, 1)], [1, 1], [1, 1], 1)
    for core in CORE_CLASSES:
        run_args = [EMBER_RUN, str(plan), "-i", str(tmp_path / "x.npy")]
        for args in (["-o", str(tmp_path / "y.npy")], ["--profile", "1"]):
            result = subprocess.run(run_args + args, capture_output=True, text=True,
                                    timeout=60, env=dict(env, EMBER_CORE=core))
            assert result.returncode == 0, result.stderr
        row = next(line.split() for line in result.stdout.splitlines() if " conv " in line)
        assert row[5] == "few_pixels", (core, result.stdout)
        np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=RTOL,
                                   atol=ATOL)


@pytest.mark.parametrize("channels, groups, form", [(384, 1, "few_pixels"),
                                                    (136, 1, "pointwise"),
                                                    (272, 4, "pointwise")])
def test_pointwise_few_pixels_choice(tmp_path, channels, groups, form):
    # 1x1 convs at 7x7 into 160 channels (conv_few_pixels.c's TRANSPOSE_OUT_COST): deep
    # (384 -> 160, MobileNetV2's 576 -> 160 and DenseNet's 512 -> 128 alike) the saved
    # multiply-adds outweigh the transpose into the output on every kernel; shallow
    # (136 -> 136, ShuffleNet's grouped 272 -> 272 at 68 a group) they do not
    import subprocess
    from test_ops import EMBER_RUN, write_plan
    out = 160 if channels == 384 else channels
    x = rand(1, channels, 7, 7)
    w = rand(out, channels // groups, 1, 1) / np.float32((channels // groups) ** 0.5)
    plan = tmp_path / "plan"
    plan.mkdir()
    write_plan(str(plan), {"x": x}, [f"y = conv(x, w, groups = {groups});"], ["y"], {"w": w})
    np.save(tmp_path / "x.npy", x)
    env = {k: v for k, v in os.environ.items() if k != "EMBER_ISA"}
    run_args = [EMBER_RUN, str(plan), "-i", str(tmp_path / "x.npy")]
    for args in (["-o", str(tmp_path / "y.npy")], ["--profile", "1"]):
        result = subprocess.run(run_args + args, capture_output=True, text=True, timeout=60,
                                env=env)
        assert result.returncode == 0, result.stderr
    row = next(line.split() for line in result.stdout.splitlines() if " conv " in line)
    assert row[5] == form, result.stdout
    expected = ref_conv(x, w, np.zeros(1), [(0, 0), (0, 0)], [1, 1], [1, 1], groups)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=RTOL, atol=ATOL)


def test_conv_relu_fused():
    x, w, b = rand(1, 5, 10, 11), rand(8, 5, 3, 3), rand(8)
    conv = ref_conv(x, w, b, [(1, 1), (1, 1)], [1, 1], [1, 1], 1)
    check({"x": x}, ["c = conv(x, w, b, padding = [(1, 1), (1, 1)]);", "y = relu(c);"],
          np.maximum(conv, 0), {"w": w, "b": b})


def test_conv_add_max_fused_tract_style():
    # tract writes the bias as a separate add and relu as max(x, 0.0).
    x, w, b = rand(2, 3, 9, 9), rand(6, 3, 3, 3), rand(1, 6, 1, 1)
    conv = ref_conv(x, w, np.zeros(1), [(0, 0), (0, 0)], [1, 1], [1, 1], 1)
    check({"x": x}, ["c = conv(x, w, 0.0, padding = [(0, 0), (0, 0)]);", "d = add(b, c);",
                     "y = max(d, 0.0);"], np.maximum(conv + b, 0), {"w": w, "b": b})


def test_fusion_stops_at_shared_value():
    # c feeds both relu and the output sum: its unclamped bytes must survive.
    x, w = rand(1, 3, 6, 6), rand(4, 3, 1, 1)
    conv = ref_conv(x, w, np.zeros(1), [(0, 0), (0, 0)], [1, 1], [1, 1], 1)
    check({"x": x}, ["c = conv(x, w);", "r = relu(c);", "y = add(r, c);"],
          np.maximum(conv, 0) + conv, {"w": w})


def test_fused_values_as_graph_outputs():
    x, w = rand(1, 3, 6, 6), rand(4, 3, 1, 1)
    conv = ref_conv(x, w, np.zeros(1), [(0, 0), (0, 0)], [1, 1], [1, 1], 1)
    outs = run({"x": x}, ["c = conv(x, w);", "y = relu(c);"], ("c", "y"), {"w": w})
    np.testing.assert_allclose(outs[0], conv, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(outs[1], np.maximum(conv, 0), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("plane, kernel, outputs", [((6, 5), (1, 1), 4), ((6, 5), (3, 3), 4),
                                                   ((1, 1), (3, 3), 4), ((7, 7), (3, 3), 96)])
def test_conv_of_no_input_channels_is_its_bias(plane, kernel, outputs):
    # K = 0 (im2col, pointwise, one and few output pixels): the GEMM still runs once and
    # writes the bias, clamped; fuzzed plans once divided by the zero channel count
    x, w, b = rand(1, 0, *plane), rand(outputs, 0, *kernel), rand(outputs)
    pad = [(k // 2, k // 2) for k in kernel]
    expected = np.broadcast_to(np.maximum(b.reshape(1, outputs, 1, 1), 0), (1, outputs) + plane)
    check({"x": x}, [f"c = conv(x, w, b, padding = {nnef_padding(pad)});", "y = relu(c);"],
          expected.astype(np.float32), {"w": w, "b": b})
