"""What a model id names: its vendor, its Claude family and alias, and its price.

Claude Code's Agent tool takes the aliases ``haiku``, ``sonnet``, ``opus`` and ``fable``, not full
transcript ids (the seed's live verification), and runs an alias on the parent's exact model when
the families agree. So a capped child is named by its parent's *family alias*. Bedrock ids
(``us.anthropic.claude-sonnet-4-5-20250929-v1:0``, with or without the cross-region prefix) and
Vertex ids (``claude-sonnet-4-5@20250929``) name their family and price like the first-party id;
``provider/model`` ids (OpenCode, OpenRouter) are read after the slash. Prices come from
:mod:`hookbus.handlers.guard.prices` (a snapshot of the genai-prices dataset, a refreshed cache, the
user's overrides): never a table here."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

import msgspec

#: Claude families, and the ones the Agent tool accepts as an alias.
FAMILIES = ("haiku", "sonnet", "opus", "fable", "mythos")
ALIASES = frozenset({"haiku", "sonnet", "opus", "fable"})
#: How Anthropic's model ids begin (``claude-sonnet-4-5``, ``claude-3-5-haiku-…``): a
#: model family's mark, not the name of a host.
ANTHROPIC_ID_PREFIX = "claude-"

_BEDROCK = re.compile(
    r"^(?:[a-z]{2,6}\.)?anthropic\.(?P<id>claude-[a-z0-9.-]+?)(?:-v\d+(?::\d+)?)?$"
)
_VERTEX = re.compile(r"^(?P<id>claude-[a-z0-9.-]+)@(?P<date>\d{8})$")
#: ``sonnet[1m]``: Claude Code's long-context spelling of an alias.
_SUFFIX = re.compile(r"\[[^\]]*\]$")
_DATE = re.compile(r"-\d{8}$")


class Model(msgspec.Struct, frozen=True, kw_only=True):
    """One model id, read."""

    id: str
    #: The id prices are looked up by (first-party spelling; an alias's latest model).
    canonical: str
    family: str | None = None
    #: The alias Claude's Agent tool accepts for this family, if it has one.
    alias: str | None = None
    #: Dollars per million input plus output tokens; None when no price is known.
    price: float | None = None

    @property
    def is_alias(self) -> bool:
        return self.id in ALIASES


Identify = Callable[[str], Model]


def canonical(model_id: str) -> str:
    """``model_id`` in its first-party spelling (lower case, no provider, region or
    version decoration)."""
    text = _SUFFIX.sub("", model_id.strip().lower())
    if "/" in text:
        text = text.rsplit("/", 1)[1]
    if match := _BEDROCK.match(text):
        return match["id"]
    if match := _VERTEX.match(text):
        return f"{match['id']}-{match['date']}"
    return text


def family_of(canonical_id: str) -> str | None:
    """The Claude family a canonical id names (``claude-3-5-sonnet-…`` too), else None."""
    if canonical_id in FAMILIES:
        return canonical_id
    if not canonical_id.startswith(ANTHROPIC_ID_PREFIX):
        return None
    parts = canonical_id.split("-")
    return next((p for p in parts if p in FAMILIES), None)


def _version(model_id: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", _DATE.sub("", model_id)) if len(n) < 8)


def latest(family: str, ids: tuple[str, ...]) -> str | None:
    """The newest model of ``family`` among ``ids`` (the highest version number)."""
    members = [i for i in ids if family_of(i) == family and not i.endswith("-latest")]
    return max(members, key=_version, default=None)


#: ``price_of(model id, provider or None)``: dollars per million input plus output tokens.
PriceOf = Callable[[str, "str | None"], "float | None"]
#: ``models_of(provider)``: the provider's model ids.
ModelsOf = Callable[[str], tuple[str, ...]]


def read(model_id: str, price_of: PriceOf, models_of: ModelsOf) -> Model:
    """``model_id`` read, priced by ``price_of`` (an alias by its family's newest model)."""
    text = canonical(model_id)
    family = family_of(text)
    provider = "anthropic" if family else None
    looked_up = text
    if text in FAMILIES:
        looked_up = latest(text, models_of("anthropic")) or text
    price = price_of(looked_up, provider)
    if price is None and _DATE.search(looked_up):
        price = price_of(_DATE.sub("", looked_up), provider)
    alias = family if family in ALIASES else None
    return Model(id=model_id, canonical=looked_up, family=family, alias=alias, price=price)


def identify(model_id: str) -> Model:
    """``model_id`` read, with its price from :mod:`hookbus.handlers.guard.prices` (cached while the
    prices read stay current)."""
    from hookbus.handlers.guard import prices

    global _generation
    current = prices.generation()
    if current != _generation:
        _identify.cache_clear()
        _generation = current
    return _identify(model_id)


_generation = -1


@lru_cache(maxsize=64)
def _identify(model_id: str) -> Model:
    return read(model_id, _price_of, _models_of)


def _price_of(model_id: str, provider: str | None) -> float | None:
    from hookbus.handlers.guard import prices

    price = prices.lookup(model_id, provider)
    return None if price is None else price.total


def _models_of(provider: str) -> tuple[str, ...]:
    from hookbus.handlers.guard import prices

    return prices.models(provider)
