"""What a hook process gives back to its host: stdout, stderr and an exit code.

A plain class rather than a Struct: the cold path builds and writes these before (and
often without) importing msgspec. It crosses the pipe from a forked worker as one frame.
"""

from __future__ import annotations


class HookOutput:
    """The bytes a host reads from a hook and the code it exits with."""

    __slots__ = ("exit_code", "stderr", "stdout")

    def __init__(self, stdout: bytes = b"", stderr: bytes = b"", exit_code: int = 0) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.exit_code = exit_code

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HookOutput):
            return NotImplemented
        return (self.stdout, self.stderr, self.exit_code) == (
            other.stdout,
            other.stderr,
            other.exit_code,
        )

    def __hash__(self) -> int:
        return hash((self.stdout, self.stderr, self.exit_code))

    def __repr__(self) -> str:
        fields = f"stdout={self.stdout!r}, stderr={self.stderr!r}, exit_code={self.exit_code}"
        return f"HookOutput({fields})"

    def to_frame(self) -> bytes:
        """One message: the exit code, the stdout length, then stdout and stderr."""
        return (
            (self.exit_code & 0xFF).to_bytes(1, "big")
            + len(self.stdout).to_bytes(8, "big")
            + self.stdout
            + self.stderr
        )

    @classmethod
    def from_frame(cls, frame: bytes) -> HookOutput:
        """The inverse of :meth:`to_frame`; ValueError on a frame too short to be one."""
        if len(frame) < 9:
            raise ValueError("a hook output frame has at least 9 bytes")
        size = int.from_bytes(frame[1:9], "big")
        if 9 + size > len(frame):
            raise ValueError("a hook output frame is shorter than its stdout length")
        return cls(frame[9 : 9 + size], frame[9 + size :], frame[0])
