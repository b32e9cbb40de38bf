"""The prices file hookbus reads (the shipped snapshot and the refreshed cache): its shape,
how a lookup reads it (:class:`Index`), and the dataset's own match rules.

The data is genai-prices' (https://github.com/pydantic/genai-prices, MIT), cut down by
:mod:`hookbus.handlers.guard.prices.convert` to what a price comparison needs: per provider, per
model, the id, its match clause and the input and output price per million tokens in effect. Clauses
keep the dataset's meaning (``genai_prices/types.py``): ``equals``, ``starts_with``, ``ends_with``,
``contains`` (their strings lower-cased once, when the file is made; ids are lower-cased before
matching, as genai-prices does), ``regex`` (Python ``re.search`` on the lower-cased id, as
genai-prices applies it), ``or``, ``and``. Each is a tagged array (``["starts_with",
"claude-sonnet-4-5"]``): the file stays small and decoding checks every clause's shape.

Matching never raises, whatever the id: a regex that does not compile matches nothing
(it was checked when the file was made; a hand-edited cache can only lose matches).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import msgspec

if TYPE_CHECKING:
    import re


class Equals(msgspec.Struct, frozen=True, array_like=True, tag="equals"):
    """The id is exactly ``value``."""

    value: str

    def test(self, ref: str) -> bool:
        return ref == self.value


class StartsWith(msgspec.Struct, frozen=True, array_like=True, tag="starts_with"):
    """The id starts with ``value``."""

    value: str

    def test(self, ref: str) -> bool:
        return ref.startswith(self.value)


class EndsWith(msgspec.Struct, frozen=True, array_like=True, tag="ends_with"):
    """The id ends with ``value``."""

    value: str

    def test(self, ref: str) -> bool:
        return ref.endswith(self.value)


class Contains(msgspec.Struct, frozen=True, array_like=True, tag="contains"):
    """The id contains ``value``."""

    value: str

    def test(self, ref: str) -> bool:
        return self.value in ref


_compiled: dict[str, re.Pattern[str] | None] = {}


def compiled(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` compiled once per process; None when it is not a valid expression."""
    try:
        return _compiled[pattern]
    except KeyError:
        pass
    import re  # here: most lookups never reach a regex clause, and re costs ~2 ms

    try:
        found: re.Pattern[str] | None = re.compile(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        found = None
    _compiled[pattern] = found
    return found


class Regex(msgspec.Struct, frozen=True, array_like=True, tag="regex"):
    """``re.search(value, id)`` finds something."""

    value: str

    def test(self, ref: str) -> bool:
        pattern = compiled(self.value)
        return pattern is not None and pattern.search(ref) is not None


class AnyOf(msgspec.Struct, frozen=True, array_like=True, tag="or"):
    """One of ``clauses`` matches."""

    clauses: tuple[Clause, ...]

    def test(self, ref: str) -> bool:
        return any(clause.test(ref) for clause in self.clauses)


class AllOf(msgspec.Struct, frozen=True, array_like=True, tag="and"):
    """Every one of ``clauses`` matches."""

    clauses: tuple[Clause, ...]

    def test(self, ref: str) -> bool:
        return all(clause.test(ref) for clause in self.clauses)


Clause = Equals | StartsWith | EndsWith | Contains | Regex | AnyOf | AllOf


class Model(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One model of a provider: None prices when the dataset prices it otherwise (per
    request, per audio hour): it is known, and has no token price to compare."""

    id: str
    match: Clause
    input_mtok: float | None = None
    output_mtok: float | None = None


class Provider(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One provider, its models in the dataset's order (the first that matches wins)."""

    id: str
    #: Which model ids this provider is the home of (genai-prices' provider routing).
    model_match: Clause | None = None
    #: Which provider names mean this one (``bedrock`` and ``amazon`` mean ``aws``).
    provider_match: Clause | None = None
    #: Providers whose models this one also serves at their prices (one step, as
    #: genai-prices does): Azure falls back to OpenAI's and Anthropic's.
    fallbacks: tuple[str, ...] = ()
    models: tuple[Model, ...] = ()


class Origin(msgspec.Struct, frozen=True, kw_only=True):
    """Where the data came from, and its licence (kept with the data, as MIT asks)."""

    dataset: str = "genai-prices"
    #: The release or commit the data is from, as far as it is known.
    release: str = ""
    #: The URL or file it was read from, and the SHA-256 of what was read.
    source: str = ""
    sha256: str = ""
    #: The UTC date conditional prices were resolved at (``YYYY-MM-DD``).
    resolved: str = ""
    license: str = "MIT"
    copyright: str = "Copyright (c) Pydantic Services Inc. 2025 to present"


class Dataset(msgspec.Struct, frozen=True, kw_only=True):
    """A whole prices file: ``format`` and ``version`` say it is one this hookbus reads
    (a newer format is a new version, refused as a cache, never half-read)."""

    format: Literal["hookbus-prices"]
    version: Literal[1]
    origin: Origin
    providers: tuple[Provider, ...]


class _ProviderRead(msgspec.Struct, frozen=True, kw_only=True):
    """A provider as a lookup reads it: its models left undecoded until searched."""

    id: str
    model_match: Clause | None = None
    provider_match: Clause | None = None
    fallbacks: tuple[str, ...] = ()
    models: msgspec.Raw = msgspec.Raw(b"[]")


class _DatasetRead(msgspec.Struct, frozen=True, kw_only=True):
    format: Literal["hookbus-prices"]
    version: Literal[1]
    origin: Origin
    providers: tuple[_ProviderRead, ...]


# A lookup decodes the routing of every provider (0.4 ms for the snapshot) and the models
# of the few it searches (a Claude id: Anthropic's 27), not all 2 300 models (3 ms).
_read_decoder = msgspec.json.Decoder(_DatasetRead)
_models_decoder = msgspec.json.Decoder(tuple[Model, ...])
encoder = msgspec.json.Encoder()


def encode(dataset: Dataset) -> bytes:
    """The file's bytes: one provider per line, so a diff of two snapshots reads well."""
    head = msgspec.structs.replace(dataset, providers=())
    lines = [encoder.encode(provider) for provider in dataset.providers]
    text = encoder.encode(head)[: -len(b"[]}")] + b"[\n" + b",\n".join(lines) + b"\n]}\n"
    return text


# LiteLLM and OpenRouter write dated ids compactly (``gpt-5.2-20251211``) where the data
# has ``-2025-12-11``: genai-prices retries such an id in the dashed form
# (``types._normalize_compact_dated_ref``; it also checks the date is a real one), and so
# do we.
_COMPACT_DATE = r"-(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)"


def dashed_dates(ref: str) -> str:
    """``ref`` with each compact ``-YYYYMMDD`` that is a real date written ``-YYYY-MM-DD``."""
    if "-20" not in ref:
        return ref
    pattern = compiled(_COMPACT_DATE)
    if pattern is None:  # a constant that compiles: never, but the checker cannot know
        return ref

    def dashed(m: re.Match[str]) -> str:
        import datetime

        try:
            datetime.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            return m[0]
        return f"-{m[1]}-{m[2]}-{m[3]}"

    return pattern.sub(dashed, ref)


class Index:
    """A prices file ready for lookups: providers by id, models decoded on first search.

    Raises msgspec.DecodeError when the file is not a prices file of this version (its
    JSON is checked whole, each provider's models when first searched: a provider whose
    models do not decode then has none, and ``broken`` names it)."""

    __slots__ = ("_models", "broken", "by_id", "origin", "providers")

    def __init__(self, data: bytes) -> None:
        read = _read_decoder.decode(data)
        self.origin = read.origin
        self.providers = read.providers
        self.by_id = {p.id: p for p in read.providers}
        self._models: dict[str, tuple[Model, ...]] = {}
        self.broken: list[str] = []

    def models(self, provider: _ProviderRead) -> tuple[Model, ...]:
        """The models of ``provider``, in the file's order."""
        found = self._models.get(provider.id)
        if found is None:
            try:
                found = _models_decoder.decode(provider.models)
            except msgspec.DecodeError as exc:
                self.broken.append(f"{provider.id}: {exc}")
                found = ()
            self._models[provider.id] = found
        return found

    def provider(self, name: str) -> _ProviderRead | None:
        """The provider ``name`` means: its id, else the first whose ``provider_match``
        matches it (genai-prices' ``find_provider_by_id``)."""
        name = name.strip().lower()
        found = self.by_id.get(name)
        if found is not None:
            return found
        for provider in self.providers:
            if provider.provider_match is not None and provider.provider_match.test(name):
                return provider
        return None

    def _in(self, provider: _ProviderRead, ref: str) -> Model | None:
        for model in self.models(provider):
            if model.match.test(ref):
                return model
        return None

    def _with_fallbacks(self, provider: _ProviderRead, ref: str) -> Model | None:
        model = self._in(provider, ref)
        for other_id in provider.fallbacks if model is None else ():
            other = self.by_id.get(other_id)
            if other is not None and (model := self._in(other, ref)) is not None:
                break
        return model

    def find_in(self, provider: _ProviderRead, ref: str) -> Model | None:
        """The model ``ref`` (lower-cased) is at ``provider``: its own, else one step
        into its fallbacks (priced as there), then the same with dashed dates."""
        model = self._with_fallbacks(provider, ref)
        if model is None and (dashed := dashed_dates(ref)) != ref:
            model = self._with_fallbacks(provider, dashed)
        return model

    def find(self, ref: str, provider: str | None = None) -> tuple[str, Model] | None:
        """The provider id and model ``ref`` (lower-cased) is priced as. The order: the
        provider named, when one is; then the providers whose ``model_match`` claims the
        id (the vendor's own, as genai-prices routes it: Anthropic for ``claude``, OpenAI
        for ``gpt-``, Google for ``gemini``), in the file's order; then every other
        provider in the file's order (clouds and resellers, for ids no vendor claims).
        A provider found through its fallbacks is still the one reported (Azure's
        ``gpt-4o`` at OpenAI's price is Azure's)."""
        seen = ""
        if provider is not None:
            named = self.provider(provider)
            if named is not None:
                seen = named.id
                if (model := self.find_in(named, ref)) is not None:
                    return named.id, model
        rest: list[_ProviderRead] = []
        for candidate in self.providers:
            if candidate.id == seen:
                continue
            if candidate.model_match is not None and candidate.model_match.test(ref):
                if (model := self.find_in(candidate, ref)) is not None:
                    return candidate.id, model
            else:
                rest.append(candidate)
        for candidate in rest:
            if (model := self.find_in(candidate, ref)) is not None:
                return candidate.id, model
        return None
