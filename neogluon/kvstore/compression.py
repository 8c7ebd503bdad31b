"""Gradient compression with error feedback: MXNet's '2bit', and the later '1bit'.

Each sender keeps a *residual* per (key, source). Before sending, the gradient is added to the
residual, the sum is quantised, and what the quantised value does not carry stays in the
residual for the next step. Nothing is lost, updates are only delayed.

'2bit' (MXNet 1.9.1): ``r += g``; ``q = +t`` where ``r >= t``, ``q = -t`` where ``r <= -t``,
otherwise ``q = 0``; ``r -= q``. Sixteen values pack into one float32 word.

'1bit' (MXNet 2.x): ``r += g``; ``q = +1`` where ``r > t`` (``r -= 1``), otherwise ``q = -1``
(``r += 1``). Thirty-two values pack into one float32 word.

The arithmetic follows MXNet's kernels in the gradient's own dtype, so the quantised values,
the residuals and the weights that result are the same bit for bit. The packed layout is
MXNet's too (byte ``i // 4`` holds value ``i`` for 2bit, high bits first), which is what the
distributed stores send over the wire; one process needs only the dequantised values.
"""
from __future__ import annotations

import torch

from ..base import MXNetError

__all__ = ["GradientCompression", "parse_compression_params"]

_TYPES = ("2bit", "1bit")
_DEFAULT_THRESHOLD = 0.5


def parse_compression_params(compression_params):
    """Validate a ``compression_params`` dict as MXNet does and return ``(type, threshold)``.

    MXNet turns every value into a string and parses it, so ``'0.5'`` and ``0.5`` are the same
    and keys it does not know are ignored.
    """
    if not isinstance(compression_params, dict):
        raise AssertionError(f"unexpected type for param_dict: {type(compression_params)}")
    params = {str(k): str(v) for k, v in compression_params.items()}
    if "type" not in params:
        raise MXNetError("Required parameter type of string is not presented: "
                         "compression_params needs a 'type', e.g. {'type': '2bit', "
                         "'threshold': 0.5}")
    ctype = params["type"]
    raw = params.get("threshold", None)
    if raw is None:
        threshold = _DEFAULT_THRESHOLD
    else:
        try:
            threshold = float(raw.strip())
        except ValueError:
            raise MXNetError(f"Invalid Parameter format for threshold expect float but "
                             f"value='{raw}'") from None
    if ctype == "2bit":
        if not threshold > 0:
            raise MXNetError(f"threshold must be greater than 0 for 2bit gradient compression, "
                             f"got {threshold}")
    elif ctype != "1bit":
        raise MXNetError(f"Unknown type for gradient compression {ctype}; supported types "
                         f"are {', '.join(_TYPES)}")
    return ctype, threshold


def _as_float32(value):
    # MXNet holds the threshold in a C float: round it the same way.
    return float(torch.tensor(value, dtype=torch.float32).item())


class GradientCompression:
    """A gradient quantiser with error feedback.

    Parameters
    ----------
    type : {'2bit', '1bit'}
        The quantisation.
    threshold : float
        '2bit': values whose accumulated magnitude reaches it are sent as ``+-threshold``.
        '1bit': accumulated values above it are sent as +1, the others as -1.
    """

    def __init__(self, type="2bit", threshold=_DEFAULT_THRESHOLD):  # noqa: A002 - MXNet's name
        ctype, thr = parse_compression_params({"type": type, "threshold": threshold})
        self.type = ctype
        self.threshold = _as_float32(thr)

    @classmethod
    def from_params(cls, compression_params):
        """Build from MXNet's ``compression_params`` dict (validated as MXNet does)."""
        ctype, thr = parse_compression_params(compression_params)
        return cls(ctype, thr)

    def __repr__(self):
        return f"GradientCompression(type={self.type!r}, threshold={self.threshold})"

    @property
    def values_per_word(self) -> int:
        """How many values one packed float32 word holds (16 for 2bit, 32 for 1bit)."""
        return 16 if self.type == "2bit" else 32

    def compressed_size(self, original_size: int) -> int:
        """Number of float32 words the packed form of ``original_size`` values takes."""
        k = self.values_per_word
        return (original_size + k - 1) // k

    # -------------------------------------------------------------- dense arithmetic
    def quantize_(self, grad: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """Quantise ``grad`` with error feedback and return the dequantised values.

        ``residual`` is updated in place. The result is what the receiver reconstructs, so a
        sender and a receiver in the same process can skip the packing.
        """
        with torch.no_grad():
            residual.add_(grad)
            t = self.threshold
            if self.type == "2bit":
                # +t where r >= t, -t where r <= -t, else 0 (exactly, in r's dtype)
                q = (residual >= t).to(residual.dtype)
                q.sub_((residual <= -t).to(residual.dtype)).mul_(t)
            else:
                q = (residual > t).to(residual.dtype).mul_(2).sub_(1)
            residual.sub_(q)
            return q

    # -------------------------------------------------------------- packed (wire) form
    def pack(self, q: torch.Tensor) -> torch.Tensor:
        """Pack dequantised values (from :meth:`quantize_`) into MXNet's float32 words."""
        flat = q.reshape(-1)
        n = flat.numel()
        words = self.compressed_size(n)
        u8 = torch.uint8
        if self.type == "2bit":
            # code 3 (binary 11) for +t, 2 (10) for -t, 0 for 0; four codes a byte, first
            # value in the high bits
            codes = torch.zeros(words * 16, dtype=u8, device=flat.device)
            c = codes[:n]
            c.copy_(flat > 0).mul_(3)
            c.add_((flat < 0).to(u8).mul_(2))
            c4 = codes.view(-1, 4)
            packed = c4[:, 0] << 6
            packed |= c4[:, 1] << 4
            packed |= c4[:, 2] << 2
            packed |= c4[:, 3]
        else:
            bits = torch.zeros(words * 32, dtype=u8, device=flat.device)
            bits[:n].copy_(flat > 0)
            b8 = bits.view(-1, 8)
            packed = b8[:, 0] << 7
            for j in range(1, 8):
                packed |= b8[:, j] << (7 - j)
        return packed.view(torch.float32)

    def _table(self, dtype, device):
        """Each byte value's decoded values (4 for 2bit, 8 for 1bit), as a lookup table."""
        key = (dtype, device)
        cache = self.__dict__.setdefault("_tables", {})
        table = cache.get(key)
        if table is None:
            byte = torch.arange(256, dtype=torch.int32)
            if self.type == "2bit":
                shifts = torch.tensor([6, 4, 2, 0], dtype=torch.int32)
                codes = (byte.unsqueeze(1) >> shifts) & 3
                t = self.threshold
                vals = torch.zeros(256, 4, dtype=torch.float64)
                vals[codes == 3] = t
                vals[codes == 2] = -t
            else:
                shifts = torch.arange(7, -1, -1, dtype=torch.int32)
                vals = torch.where(((byte.unsqueeze(1) >> shifts) & 1) == 1, 1.0, -1.0)
            table = cache[key] = vals.to(dtype).to(device)
        return table

    def unpack(self, packed: torch.Tensor, original_size: int, dtype=torch.float32):
        """Dequantise MXNet's packed float32 words back into ``original_size`` values."""
        raw = packed.reshape(-1).view(torch.uint8)
        per_byte = 4 if self.type == "2bit" else 8
        if raw.numel() * per_byte < original_size:
            raise MXNetError(f"packed gradient of {packed.numel()} words is too short for "
                             f"{original_size} values")
        table = self._table(dtype, raw.device)
        out = torch.index_select(table, 0, raw.to(torch.int32))
        return out.reshape(-1)[:original_size]

    def quantize(self, grad: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """Quantise with error feedback and return the packed words (MXNet's layout)."""
        return self.pack(self.quantize_(grad, residual))

    def dequantize(self, packed: torch.Tensor, original_size: int, dtype=torch.float32):
        """Inverse of :meth:`quantize` (the residual stays with the sender)."""
        return self.unpack(packed, original_size, dtype)
