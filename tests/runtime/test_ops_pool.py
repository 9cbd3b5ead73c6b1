"""max_pool, avg_pool and box against ref_pool, on hand-written plans through the C runtime
(the harness of test_ops.py): every path of csrc/ops/pool.c and pool_plane.c — the general
loop, per row (with the f32_pool_row kernel where the CPU has a vector one), the whole
plane, step 2 onto half the plane — for both borders."""
import pytest

from test_ops import check, nnef_list, nnef_padding, rand, ref_pool, same_padding

POOL_CASES = {
    "3x3-s2-pad": ((1, 3, 9, 11), [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (1, 1)], [1, 1, 2, 2],
                   [1, 1, 1, 1]),
    "2x2-s2": ((2, 2, 8, 7), [1, 1, 2, 2], [(0, 0), (0, 0), (0, 0), (0, 0)], [1, 1, 2, 2],
               [1, 1, 1, 1]),
    "asym-pad": ((1, 2, 7, 6), [1, 1, 3, 2], [(0, 0), (0, 0), (2, 0), (0, 1)], [1, 1, 1, 2],
                 [1, 1, 1, 1]),
    "dilated": ((1, 2, 9, 9), [1, 1, 2, 3], [(0, 0), (0, 0), (1, 1), (1, 1)], [1, 1, 1, 1],
                [1, 1, 2, 2]),
    "auto": ((1, 3, 10, 7), [1, 1, 3, 3], None, [1, 1, 2, 2], [1, 1, 1, 1]),
    "channel-window": ((1, 5, 6, 5), [1, 2, 3, 2], [(0, 0), (1, 0), (1, 1), (0, 1)],
                       [1, 2, 1, 2], [1, 1, 1, 1]),
    "spatial-only-lists": ((1, 2, 6, 5), [3, 3], [(1, 1), (1, 1)], [1, 1], [1, 1]),
    "wide-3x3-s2-ceil": ((1, 2, 12, 37), [1, 1, 3, 3], [(0, 0), (0, 0), (0, 1), (0, 1)],
                         [1, 1, 2, 2], [1, 1, 1, 1]),
    # step 2, every window inside its row (SqueezeNet's and Inception v1's max pools): on
    # x86 the f32_pool_row kernel, rows of 27 (8-wide steps, the last taken back), 6
    # (4-wide) and 2 (scalar) outputs; the vertical padding leaves 2-row windows
    "valid-3x3-s2": ((1, 3, 15, 55), [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (0, 0)],
                     [1, 1, 2, 2], [1, 1, 1, 1]),
    "valid-3x3-s2-narrow": ((2, 3, 13, 13), [1, 1, 3, 3], [(0, 0)] * 4, [1, 1, 2, 2],
                            [1, 1, 1, 1]),
    "valid-2x2-s2": ((1, 2, 7, 40), [1, 1, 2, 2], [(0, 0), (0, 0), (0, 1), (0, 0)],
                     [1, 1, 2, 2], [1, 1, 1, 1]),
    "valid-3x2-s2-tiny": ((1, 2, 5, 5), [1, 1, 3, 2], [(0, 0)] * 4, [1, 1, 2, 2],
                          [1, 1, 1, 1]),
    # step 2, no padding left but some right (Inception v2's max pools): the kernel for the
    # windows inside the row, the cut one after it
    "cut-3x3-s2": ((1, 2, 9, 56), [1, 1, 3, 3], [(0, 0), (0, 0), (0, 1), (0, 1)],
                   [1, 1, 2, 2], [1, 1, 1, 1]),
    "cut-2x2-s2": ((1, 2, 6, 41), [1, 1, 2, 2], [(0, 0), (0, 0), (0, 0), (0, 2)],
                   [1, 1, 2, 2], [1, 1, 1, 1]),
    "wide-pad2-s1": ((1, 2, 5, 21), [1, 1, 3, 3], [(0, 0), (0, 0), (2, 2), (2, 2)],
                     [1, 1, 1, 1], [1, 1, 1, 1]),
    # one window over each whole plane: reduced as mean_reduce reduces (reduce.c)
    "global": ((1, 3, 7, 19), [1, 1, 7, 19], [(0, 0)] * 4, [1, 1, 1, 1], [1, 1, 1, 1]),
    "global-7x7-planes": ((2, 40, 7, 7), [1, 1, 7, 7], [(0, 0)] * 4, [1, 1, 1, 1],
                          [1, 1, 1, 1]),
    "wide-2x2-s1-pad": ((1, 2, 6, 19), [1, 1, 2, 2], [(0, 0), (0, 0), (1, 0), (0, 1)],
                        [1, 1, 1, 1], [1, 1, 1, 1]),
    # stride 1, the plane's size kept: the whole-plane path (pool_plane.c)
    "same-3x3": ((1, 4, 14, 14), [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (1, 1)],
                 [1, 1, 1, 1], [1, 1, 1, 1]),
    "same-5x5-asym": ((1, 2, 9, 8), [1, 1, 5, 5], [(0, 0), (0, 0), (1, 3), (4, 0)],
                      [1, 1, 1, 1], [1, 1, 1, 1]),
    "same-7x7-past-plane": ((1, 2, 4, 4), [1, 1, 7, 7], [(0, 0), (0, 0), (3, 3), (3, 3)],
                            [1, 1, 1, 1], [1, 1, 1, 1]),
    "same-3x3-one-row": ((1, 3, 1, 9), [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (1, 1)],
                         [1, 1, 1, 1], [1, 1, 1, 1]),
    "same-1x3": ((2, 2, 5, 6), [1, 1, 1, 3], [(0, 0), (0, 0), (0, 0), (1, 1)],
                 [1, 1, 1, 1], [1, 1, 1, 1]),
    # more planes than one stack holds (4096 floats: 163 of 5×5), the last stack partial,
    # so the flat passes cross planes and stacks
    "same-3x3-stacks": ((2, 400, 5, 5), [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (1, 1)],
                        [1, 1, 1, 1], [1, 1, 1, 1]),
    "same-5x5-asym-stacks": ((1, 700, 4, 3), [1, 1, 5, 5], [(0, 0), (0, 0), (4, 0), (1, 3)],
                             [1, 1, 1, 1], [1, 1, 1, 1]),
    # step 2 onto half the size (pool_step2.c): the stack taken flat, the windows
    # a row's end or a plane's edge cuts redone; ResNet's and ShuffleNet's (padded both
    # sides), Inception v2's (padded after), DenseNet's 2x2; a left padding of 2 (two cut
    # columns); more planes than a stack (16384 input floats) and a plane past one
    "half-3x3-s2-pad": ((2, 5, 14, 12), [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (1, 1)],
                        [1, 1, 2, 2], [1, 1, 1, 1]),
    "half-3x3-s2-after": ((1, 3, 14, 14), [1, 1, 3, 3], [(0, 0), (0, 0), (0, 1), (0, 1)],
                          [1, 1, 2, 2], [1, 1, 1, 1]),
    "half-2x2-s2": ((1, 4, 8, 6), [1, 1, 2, 2], [(0, 0)] * 4, [1, 1, 2, 2], [1, 1, 1, 1]),
    "half-2x3-s2-left2": ((1, 3, 6, 10), [1, 1, 2, 3], [(0, 0), (0, 0), (1, 0), (2, 0)],
                          [1, 1, 2, 2], [1, 1, 1, 1]),
    "half-3x3-s2-stacks": ((1, 300, 8, 8), [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (1, 1)],
                           [1, 1, 2, 2], [1, 1, 1, 1]),
    "half-3x3-s2-big-plane": ((1, 2, 130, 132), [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (1, 1)],
                              [1, 1, 2, 2], [1, 1, 1, 1]),
    # odd widths (w = 2·ow + 1: SqueezeNet's), the last column of each row kept apart
    "half-3x3-s2-odd": ((2, 4, 11, 9), [1, 1, 3, 3], [(0, 0)] * 4, [1, 1, 2, 2], [1, 1, 1, 1]),
    "half-2x2-s2-odd": ((1, 2, 7, 9), [1, 1, 2, 2], [(0, 0)] * 4, [1, 1, 2, 2], [1, 1, 1, 1]),
    "half-3x3-s2-odd-left": ((1, 3, 10, 13), [1, 1, 3, 3], [(0, 0), (0, 0), (1, 0), (1, 0)],
                             [1, 1, 2, 2], [1, 1, 1, 1]),
    "half-3x3-s2-odd-stacks": ((1, 200, 9, 11), [1, 1, 3, 3], [(0, 0)] * 4, [1, 1, 2, 2],
                               [1, 1, 1, 1]),
}


def full_rank(values, rank, fill):
    return [fill] * (rank - len(values)) + list(values)


@pytest.mark.parametrize("case", sorted(POOL_CASES))
@pytest.mark.parametrize("op,border", [("max_pool", "constant"), ("max_pool", "ignore"),
                                       ("avg_pool", "constant"), ("avg_pool", "ignore"),
                                       ("box", "constant"), ("box", "ignore"),
                                       ("box-sum", "constant")])
def test_pool(case, op, border):
    xs, size, pads, stride, dilation = POOL_CASES[case]
    x = rand(*xs)
    rank = len(xs)
    full_size = full_rank(size, rank, 1)
    full_stride, full_dilation = full_rank(stride, rank, 1), full_rank(dilation, rank, 1)
    explicit = (full_rank(pads, rank, (0, 0)) if pads is not None
                else same_padding(xs, full_size, full_stride, full_dilation))
    kind = {"max_pool": "max", "avg_pool": "avg", "box": "avg", "box-sum": "sum"}[op]
    expected = ref_pool(x, full_size, explicit, full_stride, full_dilation, kind, border)
    padding = "[]" if pads is None else nnef_padding(pads)
    name = "box" if op.startswith("box") else op
    extra = ", normalize = true" if op == "box" else (", normalize = false" if op == "box-sum" else "")
    check({"x": x}, [f"y = {name}(x, size = {nnef_list(size)}, border = '{border}', "
                     f"padding = {padding}, stride = {nnef_list(stride)}, "
                     f"dilation = {nnef_list(dilation)}{extra});"], expected)
