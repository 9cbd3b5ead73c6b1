"""Scaled dot-product attention (ONNX Attention, opsets 23+): cook-only, numpy reference.

Inputs by name (`present` lists those given): Q, K, V [B, heads, S, size] or 3-D
[B, S, heads·size] (then `q_heads` / `kv_heads` split them), attn_mask (bool: True
attends; or an additive float bias; a short last dim is padded as masked), past_key,
past_value [B, kv_heads, P, size], nonpad_kv_seqlen [B]. Outputs: Y, present_key,
present_value, and the scores at the stage `qk_mode` picks (0/1 after the product and
softcap, 2 with the mask added, 3 after the softmax). Rows whose keys are all masked give
zeros. Grouped-query attention repeats each K/V head for its group of query heads.
"""
import numpy as np

from ..errors import ShapeError
from ..facts import Fact
from .base import Op

INPUTS = ("Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen")


class Attention(Op):
    name = "Attention"

    def __init__(self, present, q_heads=None, kv_heads=None, scale=None, causal=False,
                 softcap=0.0, qk_mode=0, left_window=-1, right_window=-1, outputs=1):
        self.present = tuple(present)
        self.q_heads = q_heads
        self.kv_heads = kv_heads
        self.scale = scale
        self.causal = bool(causal)
        self.softcap = float(softcap or 0.0)
        self.qk_mode = int(qk_mode)
        self.left_window = int(left_window)
        self.right_window = int(right_window)
        self.outputs = int(outputs)

    def _geometry(self, facts):
        q, k, v = facts["Q"].shape, facts["K"].shape, facts["V"].shape
        if len(q) == 3:
            if not self.q_heads or not self.kv_heads:
                raise ShapeError("3-D inputs need q_num_heads and kv_num_heads")
            heads, kv_heads = self.q_heads, self.kv_heads
            size_q, size_k, size_v = q[2] // heads, k[2] // kv_heads, v[2] // kv_heads
            seq_q, seq_kv = q[1], k[1]
        elif len(q) == 4:
            heads, kv_heads = q[1], k[1]
            size_q, size_k, size_v = q[3], k[3], v[3]
            seq_q, seq_kv = q[2], k[2]
        else:
            raise ShapeError("Q, K, V must be 3-D or 4-D")
        past = facts["past_key"].shape[2] if "past_key" in facts else 0
        return q[0], heads, kv_heads, seq_q, seq_kv + past, size_q, size_k, size_v

    def output_facts(self, inputs):
        facts = dict(zip(self.present, inputs))
        batch, heads, kv_heads, seq_q, total, _, size_k, size_v = self._geometry(facts)
        dt = facts["Q"].datum_type
        y = (batch, seq_q, heads * size_v) if facts["Q"].rank == 3 else \
            (batch, heads, seq_q, size_v)
        results = [Fact(dt, y), Fact(dt, (batch, kv_heads, total, size_k)),
                   Fact(dt, (batch, kv_heads, total, size_v)),
                   Fact(dt, (batch, heads, seq_q, total))]
        return results[:self.outputs]

    @staticmethod
    def _heads(x, heads):
        if x.ndim == 4:
            return x
        b, s, hidden = x.shape
        return x.reshape(b, s, heads, hidden // heads).transpose(0, 2, 1, 3)

    def eval(self, inputs):
        given = dict(zip(self.present, inputs))
        dtype = given["Q"].dtype
        q = self._heads(given["Q"], self.q_heads).astype(np.float64)
        k = self._heads(given["K"], self.kv_heads)
        v = self._heads(given["V"], self.kv_heads)
        if "past_key" in given:
            k = np.concatenate([given["past_key"], k], axis=2)
            v = np.concatenate([given["past_value"], v], axis=2)
        present_k, present_v = k, v
        heads, kv_heads = q.shape[1], k.shape[1]
        if heads != kv_heads:
            k = np.repeat(k, heads // kv_heads, axis=1)
            v = np.repeat(v, heads // kv_heads, axis=1)
        seq_q, total = q.shape[2], k.shape[2]
        scale = self.scale if self.scale is not None else 1.0 / np.sqrt(q.shape[3])
        scores = (q @ np.swapaxes(k.astype(np.float64), -1, -2)) * scale
        if self.softcap > 0:
            scores = self.softcap * np.tanh(scores / self.softcap)
        bias = self._bias(given, seq_q, total)
        biased = scores + bias
        shifted_max = np.max(biased, axis=-1, keepdims=True)
        blocked = np.isneginf(np.max(bias, axis=-1, keepdims=True)) | np.isneginf(shifted_max)
        with np.errstate(invalid="ignore", over="ignore"):
            e = np.exp(biased - np.where(np.isneginf(shifted_max), 0, shifted_max))
            total_e = e.sum(axis=-1, keepdims=True)
            probs = np.where(blocked, 0.0, e / np.where(total_e == 0, 1, total_e))
        probs = probs.astype(dtype).astype(np.float64)
        y = probs @ v.astype(np.float64)
        if given["Q"].ndim == 3:
            y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], seq_q, -1)
        qk = {2: biased, 3: probs}.get(self.qk_mode, scores)
        results = [y.astype(dtype), present_k, present_v, np.asarray(qk).astype(dtype)]
        return results[:self.outputs]

    def _bias(self, given, seq_q, total):
        bias = np.zeros((seq_q, total))
        mask = given.get("attn_mask")
        if mask is not None:
            short = total - mask.shape[-1]
            if short > 0:
                fill = False if mask.dtype == np.bool_ else -np.inf
                mask = np.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, short)],
                              constant_values=fill)
            mask = np.where(mask, 0.0, -np.inf) if mask.dtype == np.bool_ \
                else mask.astype(np.float64)
            bias = bias + mask
        nonpad = given.get("nonpad_kv_seqlen")
        if "past_key" in given:
            offset = np.array(given["past_key"].shape[2])
        elif nonpad is not None:
            offset = nonpad.astype(np.int64).reshape(-1, 1, 1, 1) - seq_q
        else:
            offset = np.array(0)
        i = np.arange(seq_q).reshape(-1, 1)
        j = np.arange(total).reshape(1, -1)
        reach = i + offset - j                       # query position minus key position
        allowed = np.ones(np.broadcast_shapes(reach.shape), bool)
        if self.causal:
            allowed &= reach >= 0
        if self.left_window >= 0:
            allowed &= reach <= self.left_window
        if self.right_window >= 0:
            allowed &= -reach <= self.right_window
        bias = bias + np.where(allowed, 0.0, -np.inf)
        if nonpad is not None:
            keys = j < nonpad.astype(np.int64).reshape(-1, 1, 1, 1)
            bias = bias + np.where(keys, 0.0, -np.inf)
        return bias


class RotaryEmbedding(Op):
    """Rotary position embedding (ONNX RotaryEmbedding): rotate pairs of the first
    `rotary_dim` features by the cached cos/sin of each position (halves, or interleaved
    pairs)."""

    name = "RotaryEmbedding"

    def __init__(self, interleaved=False, rotary_dim=0, num_heads=0, with_positions=True):
        self.interleaved = bool(interleaved)
        self.rotary_dim = int(rotary_dim)
        self.num_heads = int(num_heads)
        self.with_positions = bool(with_positions)

    def output_facts(self, inputs):
        if len(inputs) != (4 if self.with_positions else 3):
            raise ShapeError("expects x, cos_cache, sin_cache (and position_ids)")
        x = inputs[0]
        if x.rank not in (3, 4) or (x.rank == 3 and not self.num_heads):
            raise ShapeError(f"x {x} must be 4-D, or 3-D with num_heads")
        return [x.without_value()]

    def eval(self, inputs):
        x, cos, sin = inputs[0], inputs[1], inputs[2]
        if self.with_positions:
            positions = inputs[3].astype(np.int64)
            cos, sin = cos[positions], sin[positions]            # [B, S, rd/2]
        shape = x.shape
        if x.ndim == 3:                                          # [B, S, H·D] -> [B, S, H, D]
            x = x.reshape(shape[0], shape[1], self.num_heads, -1)
            cos, sin = cos[:, :, None, :], sin[:, :, None, :]
        else:                                                    # [B, H, S, D]
            cos, sin = cos[:, None, :, :], sin[:, None, :, :]
        rotary = self.rotary_dim or x.shape[-1]
        xf = x.astype(np.float64)
        part, rest = xf[..., :rotary], xf[..., rotary:]
        cos, sin = cos.astype(np.float64), sin.astype(np.float64)
        if self.interleaved:
            first, second = part[..., 0::2], part[..., 1::2]
        else:
            first, second = part[..., :rotary // 2], part[..., rotary // 2:]
        real = cos * first - sin * second
        imaginary = sin * first + cos * second
        if self.interleaved:
            rotated = np.stack([real, imaginary], axis=-1).reshape(part.shape)
        else:
            rotated = np.concatenate([real, imaginary], axis=-1)
        y = np.concatenate([rotated, rest], axis=-1).reshape(shape)
        return [y.astype(inputs[0].dtype)]
