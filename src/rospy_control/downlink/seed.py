"""The original board program's protocol, host side: each trajectory on its own TCP connection as a 4-byte
little-endian length plus a ``JointTrajectoryPoints``, points in the board's axis order, in radians.

The original board program reads into a 64 KiB buffer and waits forever for a longer message, so nothing
larger is ever sent: a trajectory that does not fit is re-sampled (points dropped where the straight
line between the kept ones -- how the original board program moves between points -- stays within the path
tolerance of every dropped point, on every joint), or refused with its size and the limit.
"""
from __future__ import annotations

import socket
import struct
from typing import List, Optional, Sequence, Tuple

import numpy as np

from ..board.core import TrajPoint
from ..board import wire


class SeedTooLarge(wire.DownlinkError):
    """The trajectory does not fit the original board's buffer even re-sampled within the tolerance."""


class SeedSender:
    """Sends trajectories to a seed-protocol board.

    :param axis_names: the board's axes (joint names) in its order: the order positions are sent in.
    :param path_tolerance: the largest deviation (rad) re-sampling may cause at a dropped point.
    :param include_derivatives: send velocities and accelerations too (the original board program's own
        client sends positions only and its board reads only positions; they cost 2/3 of the bytes).
    """

    def __init__(self, host: str, port: int, axis_names: Sequence[str], max_bytes: int = wire.SEED_MAX_BYTES,
                 path_tolerance: float = 0.005, include_derivatives: bool = False,
                 connect_timeout: float = 3.0) -> None:
        self.host = host
        self.port = port
        self.axis_names = list(axis_names)
        self.max_bytes = max_bytes
        self.path_tolerance = path_tolerance
        self.include_derivatives = include_derivatives
        self.connect_timeout = connect_timeout
        self.last_info: dict = {}

    @property
    def board_name(self) -> str:
        return f"original board at {self.host}:{self.port}"

    def order(self, joint_names: Sequence[str], points: Sequence[TrajPoint]) -> List[TrajPoint]:
        names = list(joint_names)
        for j in names:
            if j not in self.axis_names:
                raise wire.DownlinkError(f"joint {j!r} is not an axis of the {self.board_name} "
                                         f"(axes: {', '.join(self.axis_names)})")
        missing = [a for a in self.axis_names if a not in names]
        if missing:
            raise wire.DownlinkError(f"{self.board_name}: the trajectory leaves axis/axes "
                                     f"{', '.join(missing)} "
                                     "out; the original board program takes every axis in every point")
        idx = [names.index(a) for a in self.axis_names]

        def pick(arr):
            return None if arr is None else np.asarray(arr, float)[idx]
        return [TrajPoint(p.t, pick(p.p), pick(p.v), pick(p.a)) for p in points]

    def encode(self, points: Sequence[TrajPoint]) -> bytes:
        msg = wire.pb().JointTrajectoryPoints()
        for pt in points:
            p = msg.points.add()
            p.positions.extend(pt.p.tolist())
            if self.include_derivatives and pt.v is not None:
                p.velocities.extend(pt.v.tolist())
                if pt.a is not None:
                    p.accelerations.extend(pt.a.tolist())
            p.time_frome_start = pt.t
        return msg.SerializeToString()

    def fit(self, joint_names: Sequence[str], points: Sequence[TrajPoint]) -> bytes:
        """The bytes to send: the trajectory as it is, or re-sampled to fit; :class:`SeedTooLarge`."""
        ordered = self.order(joint_names, points)
        data = self.encode(ordered)
        self.last_info = {"points": len(ordered), "bytes": len(data), "sent_points": len(ordered),
                          "resampled": False, "max_deviation": 0.0}
        if len(data) <= self.max_bytes:
            return data
        keep, dev = resample(ordered, self.path_tolerance)
        reduced = [ordered[i] for i in keep]
        small = self.encode(reduced)
        if len(small) > self.max_bytes:
            raise SeedTooLarge(
                f"{self.board_name}: the trajectory of {len(ordered)} points is {len(data)} bytes; the "
                f"original board holds at most {self.max_bytes} bytes, and re-sampled within the path "
                f"tolerance {self.path_tolerance:g} rad it still needs {len(reduced)} points "
                f"({len(small)} bytes); not sent")
        self.last_info.update(sent_points=len(reduced), resampled=True, max_deviation=dev,
                              bytes_sent=len(small))
        return small

    def send(self, joint_names: Sequence[str], points: Sequence[TrajPoint]) -> dict:
        """Fit and send one trajectory on a new connection; returns what was sent (points, bytes)."""
        data = self.fit(joint_names, points)
        try:
            with socket.create_connection((self.host, self.port), timeout=self.connect_timeout) as sock:
                sock.sendall(struct.pack("<i", len(data)) + data)
                sock.shutdown(socket.SHUT_WR)
        except OSError as err:
            raise wire.DownlinkError(f"{self.board_name}: sending {len(data)} bytes failed ({err})") from err
        self.last_info["bytes_sent"] = len(data)
        return dict(self.last_info)


def resample(points: Sequence[TrajPoint], tolerance: float) -> Tuple[List[int], float]:
    """Indices of the points to keep (first and last always) so that the straight lines between kept
    points pass within ``tolerance`` of every dropped point on every joint (Douglas-Peucker in time);
    also the largest deviation that remains."""
    t = np.array([p.t for p in points])
    P = np.stack([p.p for p in points])
    keep = {0, len(points) - 1}
    stack = [(0, len(points) - 1)]
    worst = 0.0
    while stack:
        i, j = stack.pop()
        if j - i < 2:
            continue
        w = (t[i + 1:j] - t[i]) / (t[j] - t[i])
        line = P[i] + w[:, None] * (P[j] - P[i])
        dev = np.max(np.abs(P[i + 1:j] - line), axis=1)
        k = int(np.argmax(dev))
        if dev[k] > tolerance:
            m = i + 1 + k
            keep.add(m)
            stack.append((i, m))
            stack.append((m, j))
        else:
            worst = max(worst, float(dev[k]))
    return sorted(keep), worst


def seed_message_size(n_points: int, n_joints: int, derivatives: bool = False) -> Optional[int]:
    """Bytes of a JointTrajectoryPoints of ``n_points`` points (nonzero values), for planning."""
    arr = 2 + 8 * n_joints if n_joints else 0
    body = arr * (3 if derivatives else 1) + 9
    return n_points * (body + 1 + len(_varint(body)))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)
