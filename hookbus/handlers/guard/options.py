"""The guard's options: one ``[handlers.guard]`` section, with per-host sections.

Everything has a default, so ``enable = ["guard"]`` works alone::

    [handlers.guard]
    mode = "enforce"                  # enforce | warn (record only) | off
    tiers = { cheap = "haiku", standard = "sonnet", premium = "opus" }
    lens = "hookbus-lens"             # inherits; takes its tier from the call
    parent = "hookbus-parent"         # runs on the parent (pins no model)
    [handlers.guard.profiles]         # agent type -> tier
    hookbus-cheap = "cheap"
    hookbus-standard = "standard"
    hookbus-premium = "premium"

    [handlers.guard.hosts.codex]      # any key above, for one host
    tiers = { cheap = "gpt-5-mini", standard = "gpt-5" }

A host section that does not validate is dropped alone (the others stay) and the
guard's rows then carry ``routing-config-invalid``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import msgspec

Mode = Literal["enforce", "warn", "off"]
Tier = Literal["cheap", "standard", "premium"]
TIERS: tuple[Tier, ...] = ("cheap", "standard", "premium")

DEFAULT_TIERS: dict[Tier, str] = {"cheap": "haiku", "standard": "sonnet", "premium": "opus"}
DEFAULT_PROFILES: dict[str, Tier] = {
    "hookbus-cheap": "cheap",
    "hookbus-standard": "standard",
    "hookbus-premium": "premium",
}


class HostSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Options for one host; what is unset comes from the main section."""

    mode: Mode | None = None
    tiers: dict[Tier, str] | None = None
    profiles: dict[str, Tier] | None = None
    lens: str | None = None
    parent: str | None = None


class GuardOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    mode: Mode = "enforce"
    tiers: dict[Tier, str] = msgspec.field(default_factory=lambda: dict(DEFAULT_TIERS))
    profiles: dict[str, Tier] = msgspec.field(default_factory=lambda: dict(DEFAULT_PROFILES))
    lens: str = "hookbus-lens"
    parent: str = "hookbus-parent"
    hosts: dict[str, HostSection] = msgspec.field(default_factory=dict)


class Policy(msgspec.Struct, frozen=True, kw_only=True):
    """The options in effect for one host."""

    mode: Mode = "enforce"
    tiers: dict[str, str] = msgspec.field(default_factory=lambda: _plain(DEFAULT_TIERS))
    profiles: dict[str, str] = msgspec.field(
        default_factory=lambda: dict[str, str](DEFAULT_PROFILES)
    )
    lens: str = "hookbus-lens"
    parent: str = "hookbus-parent"

    def tier_of(self, agent_type: str | None) -> str | None:
        return self.profiles.get(agent_type) if agent_type else None


def _plain(mapping: Mapping[Tier, str]) -> dict[str, str]:
    return {str(k): v for k, v in mapping.items()}


def policy_for(options: GuardOptions | None, host: str) -> Policy:
    """The policy for ``host``: its section over the main one."""
    options = options or GuardOptions()
    section = options.hosts.get(host) or HostSection()
    return Policy(
        mode=section.mode or options.mode,
        tiers=_plain(section.tiers if section.tiers is not None else options.tiers),
        profiles=dict[str, str](
            section.profiles if section.profiles is not None else options.profiles
        ),
        lens=section.lens if section.lens is not None else options.lens,
        parent=section.parent if section.parent is not None else options.parent,
    )
