"""Write ``<name>.expected.json`` beside each golden payload that lacks one.

Existing expectations are never overwritten: a changed decode must be reviewed and the
expectation edited by hand (or deleted and regenerated on purpose). ``--additive``
rewrites existing ones only where the new decode keeps every old value and merely adds
fields (a new event field defaulted everywhere), and prints what it added.

For a host whose payloads do not name their event, the event is the golden's name up to
its first dot (``BeforeCall.sh.json`` is a ``BeforeCall``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent / "toy"))

from hookbus import hosts
from hookbus.testing.contract import portable


def _contains(new: object, old: object, added: list[str], where: str) -> bool:
    if isinstance(old, dict) and isinstance(new, dict):
        ok = all(k in new and _contains(new[k], v, added, f"{where}.{k}") for k, v in old.items())
        added.extend(f"{where}.{k}" for k in new.keys() - old.keys())
        return ok
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return all(_contains(n, o, added, f"{where}[]") for n, o in zip(new, old, strict=True))
    return new == old


def main(folder_name: str, *, additive: bool = False) -> None:
    """Regenerate missing expectations in ``folder_name`` (``claude``, ``claude/real``)."""
    folder = Path(__file__).parent / folder_name
    host = folder_name.split("/", maxsplit=1)[0]
    if host == "toy":
        hosts.register("toy")
    driver = hosts.driver(host)
    for payload in sorted(folder.glob("*.json")):
        if payload.name.endswith(".expected.json"):
            continue
        expected = payload.with_name(payload.stem + ".expected.json")
        native = payload.name.split(".")[0] if driver.facts.event_required else None
        new = portable(driver.decode(payload.read_bytes(), native))
        if expected.exists():
            old = json.loads(expected.read_text())
            added: list[str] = []
            if not additive or new == old:
                continue
            if not _contains(new, old, added, "$"):
                print(f"CHANGED, not rewritten (review by hand): {expected}")
                continue
            print(f"added {sorted(set(added))} to {expected.name}")
        expected.write_text(json.dumps(new, indent=2, sort_keys=True) + "\n")
        print(f"wrote {expected}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(args[0] if args else "claude", additive="--additive" in sys.argv)
