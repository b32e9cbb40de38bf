"""Write ``<name>.expected.json`` beside each golden payload that lacks one.

Existing expectations are never overwritten: a changed decode must be reviewed and the
expectation edited by hand (or deleted and regenerated on purpose).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hookbus import drivers
from hookbus.testing.contract import portable


def main(folder_name: str) -> None:
    """Regenerate missing expectations in ``folder_name`` (``claude``, ``claude/real``)."""
    folder = Path(__file__).parent / folder_name
    driver = drivers.load(folder_name.split("/", maxsplit=1)[0])
    for payload in sorted(folder.glob("*.json")):
        if payload.name.endswith(".expected.json"):
            continue
        expected = payload.with_suffix(".expected.json")
        if expected.exists():
            continue
        event = driver.decode(payload.read_bytes())
        expected.write_text(json.dumps(portable(event), indent=2, sort_keys=True) + "\n")
        print(f"wrote {expected}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "claude")
