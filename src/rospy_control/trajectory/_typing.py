"""Type aliases of the trajectory package: per-joint values given as a sequence or a numpy array."""
from __future__ import annotations

from typing import Sequence, Union

import numpy as np

__all__ = ["FloatSeq", "IntSeq", "BoolSeq"]

FloatSeq = Union[Sequence[float], np.ndarray]
IntSeq = Union[Sequence[int], np.ndarray]
BoolSeq = Union[Sequence[bool], np.ndarray]
