"""genai-prices' data (its v2 JSON: a list of providers) cut down to a prices file.

The same code makes the shipped snapshot (``tools/snapshot_prices.py``) and every refreshed cache
(:mod:`hookbus.handlers.guard.prices.refresh`), so both read alike. What is kept, per provider and
model: the id, the match clauses, and the input and output price per million tokens *in effect*:

- a model with one set of prices uses it;
- a model with a list of conditional prices uses the last whose constraint is active,
  else the first (genai-prices' ``ModelInfo.get_prices``); a ``start_date`` is active from
  that UTC date on, compared with the date the file is made (``at``); a time-of-day
  constraint (off-peak discounts) is taken as inactive, so the figure compared is the
  standard-hours price, the same at every hour;
- a tiered price (more per token past a context size) uses its ``base``;
- a model priced otherwise (per request, per audio hour) is kept without token prices,
  so it still answers for its ids ("known, nothing to compare") rather than letting a
  later model's wider match claim them.

Extractors, price variants (batch, service tiers), cache and audio prices are dropped: a
guard comparing two models needs neither. A model whose match clause this code cannot
read (a clause kind added upstream later, a regex Python rejects) is left out and
counted in :attr:`Converted.skipped`; anything else malformed rejects the whole document
with :class:`DataError`, so a refresh never replaces a good cache with half a file.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from hookbus.bus.errors import HookbusError
from hookbus.handlers.guard.prices import dataset as ds

_STRING_CLAUSES: dict[str, type[ds.Equals | ds.StartsWith | ds.EndsWith | ds.Contains]] = {
    "equals": ds.Equals,
    "starts_with": ds.StartsWith,
    "ends_with": ds.EndsWith,
    "contains": ds.Contains,
}


class DataError(HookbusError, ValueError):
    """The data is not genai-prices' v2 shape; ``path`` says where (``$[3].models``)."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{problem} at {path}")


class _Unreadable(Exception):
    """A clause this code cannot read: the model is skipped, not the document."""


class Converted(msgspec.Struct, frozen=True, kw_only=True):
    """A converted document and what it says about itself."""

    dataset: ds.Dataset
    models: int
    priced: int
    #: ``provider/model`` ids left out, with why.
    skipped: tuple[str, ...] = ()


def clause(raw: object, path: str) -> ds.Clause:
    """A v2 match clause (``{"starts_with": "x"}``, ``{"or": [...]}``) as a dataset clause.
    Raises :class:`_Unreadable` (the model is skipped) for a clause it does not know."""
    if not isinstance(raw, dict) or len(raw) != 1:
        raise _Unreadable(f"{path}: a clause is an object of one key")
    ((kind, value),) = raw.items()
    if kind in _STRING_CLAUSES:
        if not isinstance(value, str):
            raise _Unreadable(f"{path}.{kind}: not a string")
        return _STRING_CLAUSES[kind](value.lower())
    if kind == "regex":
        if not isinstance(value, str) or ds.compiled(value) is None:
            raise _Unreadable(f"{path}.regex: not a regular expression Python compiles")
        return ds.Regex(value)
    if kind in ("or", "and"):
        if not isinstance(value, list) or not value:
            raise _Unreadable(f"{path}.{kind}: not a list of clauses")
        parts = tuple(clause(item, f"{path}.{kind}[{i}]") for i, item in enumerate(value))
        return ds.AnyOf(parts) if kind == "or" else ds.AllOf(parts)
    raise _Unreadable(f"{path}: unknown clause {kind!r}")


def _active(constraint: object, at: str, path: str) -> bool:
    if constraint is None:
        return True
    if not isinstance(constraint, dict):
        raise DataError(path, "a constraint is not an object")
    start = constraint.get("start_date")
    if start is not None:
        if not isinstance(start, str):
            raise DataError(f"{path}.start_date", "not a date")
        return start[:10] <= at  # ISO dates compare as strings
    if "start_time" in constraint:
        return False  # time of day: the standard-hours price is the one compared
    raise DataError(path, f"unknown constraint {sorted(constraint)}")


def current(prices: object, at: str, path: str) -> dict[str, Any]:
    """The price object in effect on ``at`` (``YYYY-MM-DD``)."""
    if isinstance(prices, dict):
        return prices
    if prices is None or prices == []:
        return {}  # no prices at all: known, nothing to compare
    if not isinstance(prices, list):
        raise DataError(path, "prices are neither an object nor a list of conditional prices")
    for i, entry in enumerate(prices):
        if not isinstance(entry, dict) or not isinstance(entry.get("prices"), dict):
            raise DataError(f"{path}[{i}]", "a conditional price without prices")
    for i in range(len(prices) - 1, -1, -1):
        if _active(prices[i].get("constraint"), at, f"{path}[{i}].constraint"):
            chosen: dict[str, Any] = prices[i]["prices"]
            return chosen
    first: dict[str, Any] = prices[0]["prices"]
    return first


def _per_mtok(value: object, path: str) -> float | None:
    """A price per million tokens: a number, or a tiered price's base."""
    if value is None:
        return None
    if isinstance(value, dict):
        value = value.get("base")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DataError(path, "a price is not a number")
    price = float(value)
    if not math.isfinite(price) or price < 0:
        raise DataError(path, f"a price of {price} is not a finite price")
    return price


def _string(raw: dict[str, Any], key: str, path: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise DataError(f"{path}.{key}", "missing or not a string")
    return value


def convert(raw: object, *, at: str, origin: ds.Origin) -> Converted:
    """genai-prices' v2 document (decoded JSON) as a dataset, prices resolved on ``at``."""
    if not isinstance(raw, list) or not raw:
        raise DataError("$", "the document is not a list of providers")
    providers: list[ds.Provider] = []
    skipped: list[str] = []
    count = priced = 0
    for p, raw_provider in enumerate(raw):
        where = f"$[{p}]"
        if not isinstance(raw_provider, dict):
            raise DataError(where, "a provider is not an object")
        provider_id = _string(raw_provider, "id", where).lower()
        raw_models = raw_provider.get("models")
        if not isinstance(raw_models, list):
            raise DataError(f"{where}.models", "not a list")
        models: list[ds.Model] = []
        for m, raw_model in enumerate(raw_models):
            at_model = f"{where}.models[{m}]"
            if not isinstance(raw_model, dict):
                raise DataError(at_model, "a model is not an object")
            model_id = _string(raw_model, "id", at_model)
            prices = current(raw_model.get("prices"), at, f"{at_model}.prices")
            try:
                match = clause(raw_model.get("match"), f"{at_model}.match")
            except _Unreadable as exc:
                skipped.append(f"{provider_id}/{model_id}: {exc}")
                continue
            model = ds.Model(
                id=model_id,
                match=match,
                input_mtok=_per_mtok(prices.get("input_mtok"), f"{at_model}.prices.input_mtok"),
                output_mtok=_per_mtok(prices.get("output_mtok"), f"{at_model}.prices.output_mtok"),
            )
            count += 1
            priced += model.input_mtok is not None
            models.append(model)
        routing: dict[str, ds.Clause | None] = {}
        for key in ("model_match", "provider_match"):
            value = raw_provider.get(key)
            try:
                routing[key] = None if value is None else clause(value, f"{where}.{key}")
            except _Unreadable as exc:
                skipped.append(f"{provider_id} routing: {exc}")
                routing[key] = None
        fallbacks = raw_provider.get("fallback_model_providers") or []
        if not isinstance(fallbacks, list) or not all(isinstance(f, str) for f in fallbacks):
            raise DataError(f"{where}.fallback_model_providers", "not a list of provider ids")
        providers.append(
            ds.Provider(
                id=provider_id,
                model_match=routing["model_match"],
                provider_match=routing["provider_match"],
                fallbacks=tuple(f.lower() for f in fallbacks),
                models=tuple(models),
            )
        )
    if not priced:
        raise DataError("$", "no model has a token price")
    data = ds.Dataset(format="hookbus-prices", version=1, origin=origin, providers=tuple(providers))
    return Converted(dataset=data, models=count, priced=priced, skipped=tuple(skipped))
