"""Model prices, for comparing a child's model with its parent's.

::

    from hookbus.handlers.guard import prices

    price = prices.lookup("claude-sonnet-4-5-20250929")   # Price | None (unknown)
    price.total                                           # input + output $ per Mtok
    prices.models("anthropic")                            # the provider's ids, data order

The data is genai-prices' (MIT), never a table written here. Where a price comes from,
first found wins:

1. the user's override file (:mod:`hookbus.handlers.guard.prices.override`:
   ``$HOOKBUS_PRICES``, else ``$XDG_CONFIG_HOME/hookbus/prices.toml``);
2. the refreshed cache, ``prices.json`` in the state root, written by
   ``hookbus prices refresh``; one that is corrupt, of another format or refused by the
   state root's checks is ignored with a ``prices-cache-invalid`` diagnostic;
3. the snapshot shipped with hookbus (``snapshot.json`` beside this module).

The cache, when usable, *replaces* the snapshot (it is a whole newer copy of the same
data). How an id is matched and in what order providers are tried is
:meth:`hookbus.handlers.guard.prices.dataset.Index.find`'s.

Everything is read on the first lookup (a guard looks up two or three ids per hook):
importing this module reads nothing. A long-lived process (the warm server's worker)
reads again when the override file or the cache changed, or the state root did (two
``stat`` calls per lookup). Standard library and msgspec only.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

import msgspec

from hookbus.local import diagnostics, state

if TYPE_CHECKING:
    from hookbus.handlers.guard.prices.dataset import Index
    from hookbus.handlers.guard.prices.override import Overrides

#: The refreshed cache's name in the state root.
CACHE = "prices.json"
#: The largest prices file read (the snapshot is ~330 KB).
MAX_FILE = 32 << 20
SNAPSHOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snapshot.json")

Source = Literal["snapshot", "refreshed", "user"]


class Price(msgspec.Struct, frozen=True, kw_only=True):
    """What one model costs, and where the figure comes from."""

    provider: str  # "anthropic", "openai", "google", ...
    model: str  # the dataset's model id that matched (an override's name)
    input_mtok: float  # $ per million input tokens
    output_mtok: float  # $ per million output tokens
    source: Source

    @property
    def total(self) -> float:
        """Input plus output per million tokens: the one figure compared."""
        return self.input_mtok + self.output_mtok


class _Loaded:
    __slots__ = ("files", "generation", "index", "lookups", "overrides", "source", "stamp")

    def __init__(
        self, index: Index, source: Source, overrides: Overrides, files: tuple[str, ...],
        stamp: _Stamp,
    ) -> None:  # fmt: skip
        self.index = index
        self.source = source
        self.overrides = overrides
        self.files = files
        self.stamp = stamp
        self.generation = 0
        self.lookups: dict[tuple[str, str | None], Price | None] = {}


_Stamp = tuple[tuple[str, tuple[int, int, int] | None], ...]
_loaded: _Loaded | None = None


def _stamp() -> _Stamp:
    """What the data read depends on: the override file and the cache, each by path and
    (inode, size, mtime), or None where absent."""
    from hookbus.handlers.guard.prices import override

    seen: list[tuple[str, tuple[int, int, int] | None]] = []
    for where in (override.path(), state.path(CACHE)):
        try:
            st = os.stat(where)
            seen.append((where, (st.st_ino, st.st_size, st.st_mtime_ns)))
        except OSError:
            seen.append((where, None))
    return tuple(seen)


def _cache_problem(exc: Exception) -> None:
    diagnostics.emit(
        "prices-cache-invalid",
        f"{state.path(CACHE)} is not used ({exc}); the prices shipped with hookbus are",
        file=state.path(CACHE),
    )


def _read_cache() -> Index | None:
    from hookbus.handlers.guard.prices import dataset

    try:
        data = state.read(CACHE, limit=MAX_FILE)
    except FileNotFoundError:
        return None
    except OSError as exc:  # StateRefused, or the disk
        _cache_problem(exc)
        return None
    try:
        return dataset.Index(data)
    except msgspec.DecodeError as exc:
        _cache_problem(exc)
        return None


def _report_broken(loaded: _Loaded) -> None:
    """Say which providers' models did not decode (they were searched as having none)."""
    while loaded.index.broken:
        problem = loaded.index.broken.pop()
        where = loaded.files[-1]
        diagnostics.emit(
            "prices-cache-invalid", f"{where}: the models of {problem}; searched without them",
            file=where,
        )  # fmt: skip


def _load() -> _Loaded:
    from hookbus.handlers.guard.prices import dataset, override

    stamp = _stamp()  # before reading: a change meanwhile is seen by the next lookup
    files: list[str] = []
    user_file = override.path()
    overrides = override.load(user_file)
    if overrides is not None:
        files.append(user_file)
    index = _read_cache()
    source: Source = "refreshed"
    if index is not None:
        files.append(state.path(CACHE))
    else:
        source = "snapshot"
        with open(SNAPSHOT, "rb") as f:
            index = dataset.Index(f.read())
        files.append(SNAPSHOT)
    return _Loaded(index, source, overrides or override.EMPTY, tuple(files), stamp)


def _data() -> _Loaded:
    global _loaded
    if _loaded is None or _loaded.stamp != _stamp():
        generation = -1 if _loaded is None else _loaded.generation
        _loaded = _load()
        _loaded.generation = generation + 1
    return _loaded


def generation() -> int:
    """Which reading of the data is current: changes when it is read again (a cache of
    prices derived from lookups is stale once this moved)."""
    return _data().generation


def forget() -> None:
    """Read everything afresh on the next lookup (tests; a long-lived process after a
    refresh)."""
    global _loaded
    _loaded = None


def lookup(model_id: str, provider: str | None = None) -> Price | None:
    """The price of ``model_id`` (compared lower-cased); ``provider`` is tried first when
    given. None when no source knows a token price for it."""
    loaded = _data()
    key = (model_id, provider)
    try:
        return loaded.lookups[key]
    except KeyError:
        pass
    ref = model_id.strip().lower()
    found: Price | None = None
    entry = loaded.overrides.find(ref, provider) if ref else None
    if entry is not None:
        found = Price(
            provider=entry.provider or (provider or "").strip().lower(),
            model=entry.name,
            input_mtok=entry.input_mtok,
            output_mtok=entry.output_mtok,
            source="user",
        )
    elif ref:
        hit = loaded.index.find(ref, provider)
        _report_broken(loaded)
        if hit is not None:
            where, model = hit
            if model.input_mtok is not None and model.output_mtok is not None:
                found = Price(
                    provider=where,
                    model=model.id,
                    input_mtok=model.input_mtok,
                    output_mtok=model.output_mtok,
                    source=loaded.source,
                )
    loaded.lookups[key] = found
    return found


def models(provider: str) -> tuple[str, ...]:
    """The model ids of ``provider`` (its id, or a name its data answers to, such as
    ``bedrock`` for ``aws``) in the dataset's order; () for an unknown provider."""
    loaded = _data()
    found = loaded.index.provider(provider)
    if found is None:
        return ()
    ids = tuple(m.id for m in loaded.index.models(found))
    _report_broken(loaded)
    return ids


def source_files() -> tuple[str, ...]:
    """The files the prices were read from, in precedence order (loading them if need be)."""
    return _data().files
