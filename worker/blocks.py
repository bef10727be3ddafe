"""Blocks: a tensor cut into packets of N elements, the last one zero-padded (what every in-network protocol sends)."""

from __future__ import annotations

import numpy as np

__all__ = ["to_blocks", "block_view"]


def to_blocks(array: np.ndarray, num_elems: int, dtype: type) -> np.ndarray:
    """A (B, num_elems) copy of the flattened array in dtype, the last block zero-padded."""
    flat = np.ascontiguousarray(array, dtype=dtype).ravel()
    b = -(-flat.size // num_elems)
    out = np.zeros(b * num_elems, dtype=dtype)
    out[: flat.size] = flat
    return out.reshape(b, num_elems)


def block_view(array: np.ndarray, num_elems: int, dtype: type) -> np.ndarray:
    """The (B, num_elems) blocks of the flattened array in dtype: a view of the input when it already is a contiguous
    array of dtype whose size is a multiple of num_elems (read only, never written), else a padded copy."""
    arr = np.asarray(array)
    if arr.dtype == dtype and arr.flags.c_contiguous and arr.size % num_elems == 0:
        return arr.reshape(-1, num_elems)
    return to_blocks(arr, num_elems, dtype)
