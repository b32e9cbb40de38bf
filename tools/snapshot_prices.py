"""Make ``hookbus/handlers/guard/prices/snapshot.json`` from genai-prices' data, reproducibly.

The input is one of:

- a genai-prices wheel (``pip download --no-deps genai-prices==0.2.3``) or an unpacked
  ``genai_prices`` folder: its ``data.py`` (Python objects, generated upstream from the
  same YAML as the JSON) is read as a syntax tree, never imported (importing it needs
  pydantic), and turned into the v2 JSON shape;
- the v2 JSON itself (``prices/new_data/v2/data.json`` of the repository, or what
  ``hookbus prices refresh`` fetches).

Either way the document goes through :func:`hookbus.handlers.guard.prices.convert.convert`, the code
every refresh uses. Conditional prices are resolved on ``--at`` (default: today, UTC);
give the same ``--at`` and input to get the same bytes.

    python tools/snapshot_prices.py --wheel genai_prices-0.2.3-py3-none-any.whl \\
        --at 2026-12-01 --out hookbus/handlers/guard/prices/snapshot.json
"""

from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import io
import os
import sys
import zipfile
from typing import Any

import msgspec

from hookbus.handlers.guard.prices import convert, dataset

#: Keyword arguments whose Python name differs from the JSON key (a reserved word).
_RENAMED = {"or_": "or", "and_": "and"}


class _Reader(ast.NodeVisitor):
    """Evaluates the literal subset ``data.py`` is written in: calls of its classes with
    keyword arguments become objects, ``Decimal('3')`` a number, dates ISO strings."""

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.List | ast.Tuple):
            return [self.value(item) for item in node.elts]
        if isinstance(node, ast.Dict):
            pairs = zip(node.keys, node.values, strict=True)
            return {self.value(k): self.value(v) for k, v in pairs}  # type: ignore[arg-type]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.value(node.operand)
        if isinstance(node, ast.Attribute):
            return ast.unparse(node)  # datetime.UTC, as a tzinfo argument
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            args = [self.value(a) for a in node.args]
            if name == "Decimal":
                return float(args[0])
            if name == "datetime.date":
                return datetime.date(*args).isoformat()
            if name == "datetime.time":
                return datetime.time(*args).isoformat() + "Z"
            if args:
                raise ValueError(f"line {node.lineno}: {name}() with positional arguments")
            return {
                _RENAMED.get(k.arg or "", k.arg): self.value(k.value)
                for k in node.keywords
                if k.arg is not None
            }
        raise ValueError(f"line {node.lineno}: cannot read {ast.dump(node)[:80]}")


def providers_from_data_py(source: bytes) -> list[Any]:
    """The ``providers`` list of genai-prices' ``data.py`` as v2 JSON objects."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == "providers" for t in targets):
                assert node.value is not None
                found: list[Any] = _Reader().value(node.value)
                return found
    raise ValueError("data.py has no 'providers = [...]'")


def _from_wheel(path: str) -> tuple[bytes, str, str]:
    with zipfile.ZipFile(path) as wheel:
        data = wheel.read("genai_prices/data.py")
        meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        version = _version(wheel.read(meta))
    return data, version, f"{os.path.basename(path)}:genai_prices/data.py"


def _version(metadata: bytes) -> str:
    for line in io.TextIOWrapper(io.BytesIO(metadata), encoding="utf-8"):
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--wheel", help="a genai-prices wheel")
    source.add_argument("--package", help="an unpacked genai_prices folder")
    source.add_argument("--json", help="genai-prices' v2 data.json")
    parser.add_argument("--release", default="", help="release or commit (default: the wheel's)")
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    parser.add_argument("--at", default=today, help="resolve prices on this UTC date (YYYY-MM-DD)")
    parser.add_argument("--out", required=True, help="the file to write")
    opts = parser.parse_args(argv)
    release = opts.release
    if opts.wheel:
        data, version, where = _from_wheel(opts.wheel)
        release = release or version
        raw = providers_from_data_py(data)
    elif opts.package:
        where = os.path.join(opts.package, "data.py")
        with open(where, "rb") as f:
            data = f.read()
        raw = providers_from_data_py(data)
    else:
        where = opts.json
        with open(where, "rb") as f:
            data = f.read()
        raw = msgspec.json.decode(data)
    origin = dataset.Origin(
        release=release,
        source=os.path.basename(where) if not opts.wheel else where,
        sha256=hashlib.sha256(data).hexdigest(),
        resolved=opts.at,
    )
    done = convert.convert(raw, at=opts.at, origin=origin)
    out = dataset.encode(done.dataset)
    with open(opts.out, "wb") as f:
        f.write(out)
    providers = len(done.dataset.providers)
    sys.stdout.write(
        f"{opts.out}: {providers} providers, {done.models} models ({done.priced} priced), "
        f"{len(out)} bytes; {len(done.skipped)} skipped\n"
    )
    for line in done.skipped:
        sys.stdout.write(f"  skipped {line}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
