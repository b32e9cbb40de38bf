"""``python -m hookbus.handlers.guard.prices.refresh``: fetch genai-prices' data and replace the
cache.

``hookbus prices refresh`` runs this in a process of its own and kills its process group
when it outlives ``--timeout``: a fetch that hangs (a server that accepts and never
answers) costs a bounded time, and nothing a hook runs ever waits on it. On its own, its
sockets time out after ``--socket-timeout`` seconds of silence.

The steps, each of which leaves the old cache in place when it fails (exit 1):

1. fetch ``--url`` (default ``$HOOKBUS_PRICES_URL``, else genai-prices' own update URL)
   with urllib, http or https only, reading at most ``--max-bytes`` (16 MiB; the data is
   ~1 MB): a larger body, announced or not, is refused;
2. decode it as JSON and convert it with :func:`hookbus.handlers.guard.prices.convert.convert`, the
   code that made the shipped snapshot (a document that is not genai-prices' v2 shape is
   refused, saying where);
3. write ``prices.json`` in the state root in one rename (or ``--to FILE``).

``--from FILE`` converts a local v2 document instead of fetching one.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import sys

import msgspec

from hookbus.handlers.guard.prices import CACHE, convert, dataset
from hookbus.local import state

DEFAULT_URL = (
    "https://raw.githubusercontent.com/pydantic/genai-prices/refs/heads/main/"
    "prices/new_data/v2/data.json"
)
MAX_BYTES = 16 << 20
SOCKET_TIMEOUT = 60.0


class FetchError(Exception):
    """The data could not be fetched whole; the message says why."""


def url() -> str:
    return os.environ.get("HOOKBUS_PRICES_URL") or DEFAULT_URL


def fetch(address: str, *, max_bytes: int, timeout: float) -> bytes:
    """The body at ``address``, at most ``max_bytes`` of it (more is refused)."""
    import urllib.error
    import urllib.request

    scheme = address.split(":", 1)[0].lower()
    if scheme not in ("http", "https"):
        raise FetchError(f"{address}: only http and https URLs are fetched")
    request = urllib.request.Request(address, headers={"User-Agent": "hookbus-prices-refresh"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            announced = response.headers.get("Content-Length")
            if announced and announced.isdigit() and int(announced) > max_bytes:
                raise FetchError(f"{address} announces {announced} bytes, over the bound of "
                                 f"{max_bytes}; refused")  # fmt: skip
            chunks: list[bytes] = []
            size = 0
            while size <= max_bytes:
                chunk = response.read(min(1 << 16, max_bytes + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{address}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise FetchError(f"{address}: {reason}") from None
    if size > max_bytes:
        raise FetchError(f"{address} sent more than the bound of {max_bytes} bytes; refused")
    return b"".join(chunks)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m hookbus.handlers.guard.prices.refresh",
        description="Fetch genai-prices' data and replace hookbus's prices cache.",
    )
    parser.add_argument("--url", default=None, help=f"where to fetch (default: {DEFAULT_URL})")
    parser.add_argument("--from", dest="source", metavar="FILE",
                        help="convert this local v2 data.json instead of fetching")  # fmt: skip
    parser.add_argument("--to", metavar="FILE", help="write here, not to the cache")
    parser.add_argument("--max-bytes", type=int, default=MAX_BYTES)
    parser.add_argument("--socket-timeout", type=float, default=SOCKET_TIMEOUT)
    parser.add_argument("--at", default=None, help="resolve prices on this UTC date (YYYY-MM-DD)")
    return parser.parse_args(argv)


def _read_file(path: str, max_bytes: int) -> bytes:
    with open(path, "rb") as f:
        body = f.read(max_bytes + 1)
    if len(body) > max_bytes:
        raise FetchError(f"{path} is over the bound of {max_bytes} bytes")
    return body


def _write_file(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    opts = _arguments(argv)
    address = opts.url or url()
    try:
        if opts.source:
            where = opts.source
            body = _read_file(where, opts.max_bytes)
        else:
            where = address
            body = fetch(address, max_bytes=opts.max_bytes, timeout=opts.socket_timeout)
    except (FetchError, OSError) as exc:
        sys.stderr.write(f"hookbus: cannot fetch the prices: {exc}; the cache is unchanged\n")
        return 1
    at = opts.at or datetime.datetime.now(datetime.UTC).date().isoformat()
    origin = dataset.Origin(
        release="main" if where == DEFAULT_URL else "",
        source=where,
        sha256=hashlib.sha256(body).hexdigest(),
        resolved=at,
    )
    try:
        done = convert.convert(msgspec.json.decode(body), at=at, origin=origin)
    except (msgspec.DecodeError, convert.DataError, RecursionError) as exc:
        sys.stderr.write(f"hookbus: {where} is not genai-prices' v2 data ({exc}); "
                         "the cache is unchanged\n")  # fmt: skip
        return 1
    out = dataset.encode(done.dataset)
    try:
        if opts.to:
            _write_file(opts.to, out)
            target = opts.to
        else:
            state.write(CACHE, data=out)
            target = state.path(CACHE)
    except OSError as exc:
        sys.stderr.write(f"hookbus: cannot write the prices ({exc}); the cache is unchanged\n")
        return 1
    sys.stdout.write(
        f"prices: {done.priced} priced models of {len(done.dataset.providers)} providers "
        f"from {where} written to {target}"
        + (f" ({len(done.skipped)} models skipped: unreadable match rules)" if done.skipped
           else "") + "\n"
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
