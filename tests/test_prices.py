"""Model prices: the shipped snapshot, the user's override file, the refreshed cache, and
``hookbus prices refresh`` against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples, hookbus_cli

from hookbus.handlers.guard import prices
from hookbus.handlers.guard.prices import convert, dataset
from hookbus.local import state

ROOT = Path(__file__).resolve().parent.parent

#: A small genai-prices v2 document with each shape the converter must read.
V2: list[dict[str, Any]] = [
    {
        "id": "anthropic",
        "model_match": {"contains": "claude"},
        "provider_match": {"contains": "anthropic"},
        "models": [
            {
                "id": "claude-test-1",
                "match": {"or": [{"starts_with": "claude-test-1"}, {"equals": "Test-One"}]},
                # The last active conditional price wins; a future one is not active yet.
                "prices": [
                    {"prices": {"input_mtok": 1, "output_mtok": 2}},
                    {
                        "constraint": {"start_date": "2000-01-01"},
                        "prices": {"input_mtok": 3, "output_mtok": 4},
                    },
                    {
                        "constraint": {"start_date": "2999-01-01"},
                        "prices": {"input_mtok": 99, "output_mtok": 99},
                    },
                ],
            },
            {
                "id": "claude-tiered",
                "match": {"regex": "^claude-tiered(-\\d+)?$"},
                "prices": {
                    "input_mtok": {"base": 5, "tiers": [{"start": 200000, "price": 10}]},
                    "output_mtok": 25,
                },
            },
            {
                "id": "claude-offpeak",
                "match": {"equals": "claude-offpeak"},
                "prices": [
                    {"prices": {"input_mtok": 2, "output_mtok": 8}},
                    {
                        "constraint": {"start_time": "16:30:00Z", "end_time": "00:30:00Z"},
                        "prices": {"input_mtok": 1, "output_mtok": 4},
                    },
                ],
            },
            {
                "id": "claude-voice",
                "match": {"starts_with": "claude-voice"},
                "prices": {"audio_hours": 1},
            },
            {
                "id": "claude-new-clause",
                "match": {"glob": "claude-new-*"},
                "prices": {"input_mtok": 1, "output_mtok": 1},
            },
        ],
    },
    {
        "id": "reseller",
        "models": [
            {
                "id": "voice-anything",
                "match": {"contains": "voice"},
                "prices": {"input_mtok": 1, "output_mtok": 1},
            },
            {
                "id": "llama-x",
                "match": {"equals": "llama-x"},
                "prices": {"input_mtok": 0.1, "output_mtok": 0.2},
            },
        ],
    },
    {
        "id": "cloud",
        "provider_match": {"and": [{"contains": "cloud"}, {"ends_with": "y"}]},
        "fallback_model_providers": ["anthropic"],
        "models": [
            {
                "id": "cloud-only",
                "match": {"equals": "cloud-only"},
                "prices": {"input_mtok": 7, "output_mtok": 7},
            },
        ],
    },
]


@pytest.fixture(autouse=True)
def fresh_prices(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test reads the prices afresh, with no override file or URL of the user's."""
    monkeypatch.delenv("HOOKBUS_PRICES", raising=False)
    monkeypatch.delenv("HOOKBUS_PRICES_URL", raising=False)
    state.forget()
    prices.forget()
    yield
    prices.forget()
    state.forget()


def converted(doc: object = V2, at: str = "2026-12-01") -> bytes:
    done = convert.convert(doc, at=at, origin=dataset.Origin(source="test"))
    return dataset.encode(done.dataset)


def write_cache(data: bytes) -> None:
    state.write(prices.CACHE, data=data)
    prices.forget()


def codes(state_dir: Path) -> list[dict[str, Any]]:
    log = state_dir / "diagnostics.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def write_override(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "xdg-config" / "hookbus"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "prices.toml"
    path.write_text(text)
    return path


# The snapshot: first-party ids of each vendor.


@pytest.mark.parametrize(
    ("model_id", "provider", "dataset_id", "input_mtok", "output_mtok"),
    [
        ("claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", 3.0, 15.0),
        ("claude-sonnet-4-5-20250929", "anthropic", "claude-sonnet-4-5", 3.0, 15.0),
        ("claude-haiku-4-5-20251001", "anthropic", "claude-haiku-4-5", 1.0, 5.0),
        ("Claude-Opus-4-8", "anthropic", "claude-opus-4-8", 5.0, 25.0),
        ("gpt-4o", "openai", "gpt-4o", 2.5, 10.0),
        ("gpt-5.2-20251211", "openai", "gpt-5.2", 1.75, 14.0),  # compact date, dashed
        ("gemini-2.5-pro", "google", "gemini-2.5-pro", 1.25, 10.0),
    ],
)
def test_snapshot_prices_first_party_ids(
    model_id: str, provider: str, dataset_id: str, input_mtok: float, output_mtok: float
) -> None:
    """A vendor's own id, dated or not and in any case, resolves to its dataset model."""
    assert prices.lookup(model_id) == prices.Price(
        provider=provider, model=dataset_id, input_mtok=input_mtok,
        output_mtok=output_mtok, source="snapshot",
    )  # fmt: skip


def test_snapshot_knows_the_claude_families() -> None:
    """Every Claude family the guard names has a price, and Opus costs more than Haiku."""
    found = {f: prices.lookup(f"claude-{f}-5") for f in ("fable", "opus", "sonnet")}
    assert all(price is not None for price in found.values()), found
    haiku, opus = prices.lookup("claude-haiku-4-5"), prices.lookup("claude-opus-4-8")
    assert haiku is not None and opus is not None
    assert haiku.total < opus.total


def test_unknown_and_empty_ids_have_no_price() -> None:
    """An id no provider knows, or an empty one, is None: the guard allows it."""
    assert prices.lookup("definitely-not-a-model-xyz") is None
    assert prices.lookup("") is None
    assert prices.lookup("   ") is None


def test_models_lists_a_provider_in_dataset_order() -> None:
    """models() gives the provider's ids in the data's order; its other names answer too."""
    anthropic = prices.models("anthropic")
    assert anthropic.index("claude-haiku-4-5") < anthropic.index("claude-sonnet-4-5")
    assert prices.models("Bedrock") == prices.models("aws") != ()
    assert prices.models("no-such-provider") == ()


def test_import_reads_nothing_until_the_first_lookup() -> None:
    """Importing hookbus.handlers.guard.prices reads no file and loads neither the data code, tomllib nor
    urllib; the first lookup loads the data."""
    probe = (
        "import sys, hookbus.handlers.guard.prices as p\n"
        "print(sorted(m for m in ('hookbus.handlers.guard.prices.dataset', 'hookbus.handlers.guard.prices.override', "
        "'tomllib', 'urllib.request') if m in sys.modules))\n"
        "p.lookup('claude-sonnet-4-5'); print('hookbus.handlers.guard.prices.dataset' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=60)  # fmt: skip
    assert done.stdout.split("\n")[:2] == ["[]", "True"]


def test_snapshot_names_its_origin_and_licence() -> None:
    """The shipped file says it is genai-prices' data, which release, and its MIT notice."""
    head = json.loads(
        (ROOT / "hookbus" / "handlers" / "guard" / "prices" / "snapshot.json").read_bytes()
    )["origin"]
    assert head["dataset"] == "genai-prices"
    assert head["release"] and head["sha256"] and head["resolved"]
    assert head["license"] == "MIT" and "Pydantic" in head["copyright"]


# The converter (the same code for the snapshot and every refresh).


def test_conversion_resolves_conditional_tiered_and_untimed_prices(
    isolated_environment: Path,
) -> None:
    """The last active dated price, a tier's base and the standard-hours price are kept;
    a model priced per audio hour answers for its ids with no price."""
    write_cache(converted())
    expected = {"claude-test-1": (3, 4), "claude-tiered-2": (5, 25), "claude-offpeak": (2, 8)}
    for model_id, (inp, out) in expected.items():
        price = prices.lookup(model_id)
        assert price is not None and (price.input_mtok, price.output_mtok) == (inp, out)
        assert price.source == "refreshed"
    assert prices.lookup("test-one") is not None  # an equals clause, lower-cased once
    # Known to Anthropic's data, unpriced: not handed on to the reseller's wider match.
    assert prices.lookup("claude-voice-2") is None
    assert prices.lookup("voice-2") == prices.Price(
        provider="reseller", model="voice-anything", input_mtok=1, output_mtok=1,
        source="refreshed",
    )  # fmt: skip


def test_conversion_skips_a_model_whose_clause_it_cannot_read() -> None:
    """A clause kind added upstream later costs that one model, not the document."""
    done = convert.convert(V2, at="2026-12-01", origin=dataset.Origin())
    assert [s.split(":")[0] for s in done.skipped] == ["anthropic/claude-new-clause"]
    assert done.priced == 6


@pytest.mark.parametrize(
    "doc",
    [{"not": "a list"}, [], [{"id": "x", "models": "no"}], [{"models": []}],
     [{"id": "x", "models": [{"id": "m", "match": {"equals": "m"},
                              "prices": {"input_mtok": "cheap"}}]}],
     [{"id": "x", "models": [{"id": "m", "match": {"equals": "m"},
                              "prices": {"input_mtok": -1, "output_mtok": 1}}]}],
     [{"id": "x", "models": [{"id": "m", "match": {"equals": "m"}, "prices": {}}]}]],
)  # fmt: skip
def test_conversion_rejects_what_is_not_v2_data(doc: object) -> None:
    """A document of another shape, a bad price or no price at all is refused whole."""
    with pytest.raises(convert.DataError):
        convert.convert(doc, at="2026-12-01", origin=dataset.Origin())


def test_provider_first_then_its_fallbacks() -> None:
    """A named provider is searched first, its fallbacks in one step, and by its other
    names; a model it lacks is still found at its vendor."""
    write_cache(converted())
    via_fallback = prices.lookup("claude-test-1", "cloudy")
    assert via_fallback is not None and (via_fallback.provider, via_fallback.total) == ("cloud", 7)
    own = prices.lookup("cloud-only", "cloud")
    assert own is not None and own.model == "cloud-only"
    assert prices.lookup("llama-x", "anthropic") == prices.lookup("llama-x")
    assert prices.models("cloudy") == ("cloud-only",)


# Precedence: the user's file, the refreshed cache, the snapshot.


def test_override_file_comes_first(tmp_path: Path) -> None:
    """The user's exact ids, then globs in file order, win over the data; a provider
    named in an entry confines it to lookups for that provider."""
    path = write_override(tmp_path, """
[models."claude-sonnet-4-5"]
input = 1.5
output = 7.5
provider = "anthropic"

[models."my-proxy-sonnet"]
input = 3
output = 15

[models.house]
match = "house-*"
input = 0.5
output = 2.0

[models.everything-house]
match = "house-big-*"
input = 100
output = 100
""")  # fmt: skip
    sonnet = prices.lookup("claude-sonnet-4-5")
    assert sonnet == prices.Price(provider="anthropic", model="claude-sonnet-4-5",
                                  input_mtok=1.5, output_mtok=7.5, source="user")  # fmt: skip
    assert prices.lookup("claude-sonnet-4-5", "openai") != sonnet  # not that provider's
    proxy = prices.lookup("MY-PROXY-SONNET")
    assert proxy is not None and (proxy.total, proxy.provider) == (18, "")
    house = prices.lookup("house-big-1")  # the first glob in the file wins
    assert house is not None and (house.model, house.total) == ("house", 2.5)
    assert prices.source_files() == (str(path), prices.SNAPSHOT)
    assert prices.lookup("gpt-4o") is not None and prices.lookup("gpt-4o").source == "snapshot"  # type: ignore[union-attr]


def test_hookbus_prices_names_the_override_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HOOKBUS_PRICES names the file in place of the XDG one."""
    named = tmp_path / "elsewhere.toml"
    named.write_text('[models."gpt-4o"]\ninput = 0\noutput = 0\n')
    write_override(tmp_path, '[models."gpt-4o"]\ninput = 9\noutput = 9\n')
    monkeypatch.setenv("HOOKBUS_PRICES", str(named))
    price = prices.lookup("gpt-4o")
    assert price is not None and (price.total, price.source) == (0, "user")


def test_bad_override_entries_are_skipped_with_a_diagnostic(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """Each invalid entry is skipped with a config-invalid line naming it; the valid
    ones still count, and nothing raises."""
    write_override(tmp_path, """
stray = 1
[models.no-output]
input = 1
[models.negative]
input = -1
output = 1
[models.typo]
input = 1
output = 1
ouptut = 2
[models.text]
input = "cheap"
output = 1
[models."fine"]
input = 1
output = 2
""")  # fmt: skip
    assert prices.lookup("fine") is not None
    assert prices.lookup("no-output") is None and prices.lookup("negative") is None
    lines = [d for d in codes(isolated_environment) if d["event"] == "config-invalid"]
    said = " ".join(d["message"] for d in lines)
    assert len(lines) == 5
    for name in ("stray", "no-output", "negative", "typo", "text"):
        assert name in said


def test_unreadable_override_file_is_ignored(tmp_path: Path, isolated_environment: Path) -> None:
    """A file that is not TOML is ignored with a diagnostic; the data still answers."""
    write_override(tmp_path, "[models\nnot toml")
    price = prices.lookup("gpt-4o")
    assert price is not None and price.source == "snapshot"
    assert [d["event"] for d in codes(isolated_environment)] == ["config-invalid"]


def test_refreshed_cache_replaces_the_snapshot(isolated_environment: Path) -> None:
    """A valid cache is read instead of the snapshot, and named by source_files()."""
    write_cache(converted())
    assert prices.lookup("gpt-4o") is None  # not in the small refreshed data
    assert prices.source_files() == (str(isolated_environment / prices.CACHE),)


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"format": "hookbus-prices", "version": 2, "origin": {}, "providers": []}',
     b'{"format": "other", "version": 1}', b"[]"],
)  # fmt: skip
def test_corrupt_or_foreign_cache_is_ignored(content: bytes, isolated_environment: Path) -> None:
    """A cache that does not decode as this version's format is ignored with a
    prices-cache-invalid diagnostic, and the snapshot answers."""
    write_cache(content)
    price = prices.lookup("gpt-4o")
    assert price is not None and price.source == "snapshot"
    assert [d["event"] for d in codes(isolated_environment)] == ["prices-cache-invalid"]
    assert prices.source_files() == (prices.SNAPSHOT,)


def test_cache_with_broken_models_is_searched_without_them(isolated_environment: Path) -> None:
    """A provider whose models do not decode is searched as empty, said once, no raise."""
    doc = json.loads(converted())
    doc["providers"][1]["models"] = [{"id": 3}]
    write_cache(json.dumps(doc).encode())
    assert prices.lookup("llama-x") is None
    assert prices.lookup("claude-test-1") is not None
    events = [d["event"] for d in codes(isolated_environment)]
    assert events == ["prices-cache-invalid"]


# hookbus prices refresh, against real servers on 127.0.0.1.


class _Server:
    """An HTTP server on 127.0.0.1 that answers every GET with ``body`` (with or
    without a Content-Length)."""

    def __init__(self, body: bytes, *, length: bool = True) -> None:
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if length:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.requests = 0
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v2/data.json"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextlib.contextmanager
def serving(body: bytes, *, length: bool = True) -> Iterator[_Server]:
    server = _Server(body, length=length)
    try:
        yield server
    finally:
        server.close()


def refresh(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return hookbus_cli(tmp_path, "prices", "refresh", *args)


def test_refresh_replaces_the_cache(tmp_path: Path, isolated_environment: Path) -> None:
    """A valid v2 document served locally becomes the cache; show reports it refreshed."""
    with serving(json.dumps(V2).encode()) as server:
        done = refresh(tmp_path, "--url", server.url, "--timeout", "60")
    assert done.returncode == 0, done.stderr
    assert server.requests == 1
    cache = isolated_environment / prices.CACHE
    assert json.loads(cache.read_bytes())["origin"]["source"] == server.url
    assert oct(cache.stat().st_mode & 0o777) == "0o600"
    shown = hookbus_cli(tmp_path, "prices", "show", "--json", "claude-test-1", "gpt-4o")
    lines = [json.loads(line) for line in shown.stdout.splitlines()]
    assert lines[0]["price"]["source"] == "refreshed" and lines[0]["total"] == 7
    assert lines[1]["price"] is None and shown.returncode == 1


def test_refresh_url_from_the_environment(tmp_path: Path, isolated_environment: Path) -> None:
    """HOOKBUS_PRICES_URL is fetched when no --url is given."""
    with serving(json.dumps(V2).encode()) as server:
        done = hookbus_cli(tmp_path, "prices", "refresh", env={"HOOKBUS_PRICES_URL": server.url})
    assert done.returncode == 0, done.stderr
    assert server.requests == 1 and (isolated_environment / prices.CACHE).exists()


@pytest.mark.parametrize(
    "body", [b"<html>not json</html>", b'{"providers": []}', json.dumps([{"id": 1}]).encode()]
)
def test_refresh_keeps_the_old_cache_on_garbage(
    body: bytes, tmp_path: Path, isolated_environment: Path
) -> None:
    """Served garbage exits non-zero, says why, and leaves the old cache byte for byte."""
    old = converted()
    write_cache(old)
    with serving(body) as server:
        done = refresh(tmp_path, "--url", server.url)
    assert done.returncode == 1
    assert "not genai-prices' v2 data" in done.stderr and "unchanged" in done.stderr
    assert (isolated_environment / prices.CACHE).read_bytes() == old


@pytest.mark.parametrize("length", [True, False], ids=["announced", "unannounced"])
def test_refresh_refuses_a_body_over_the_bound(
    length: bool, tmp_path: Path, isolated_environment: Path
) -> None:
    """A body larger than the bound is refused, whether or not its size is announced."""
    body = json.dumps(V2).encode()
    with serving(body, length=length) as server:
        done = refresh(tmp_path, "--url", server.url, "--max-bytes", str(len(body) - 1))
        assert done.returncode == 1
        assert "over the bound" in done.stderr or "more than the bound" in done.stderr
        assert not (isolated_environment / prices.CACHE).exists()
        fits = refresh(tmp_path, "--url", server.url, "--max-bytes", str(len(body)))
    assert fits.returncode == 0, fits.stderr


def test_refresh_refuses_other_schemes(tmp_path: Path) -> None:
    """Only http and https are fetched (no file: or ftp: through urllib)."""
    local = tmp_path / "data.json"
    local.write_text(json.dumps(V2))
    done = refresh(tmp_path, "--url", local.as_uri())
    assert done.returncode == 1 and "only http and https" in done.stderr


def _processes_with(text: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in cmdline:
                found.append(int(entry))
    return found


def test_refresh_is_stopped_at_its_timeout(tmp_path: Path, isolated_environment: Path) -> None:
    """A server that accepts and never answers: the CLI kills the refresh at --timeout,
    says so, exits non-zero, keeps the cache and leaves no process behind."""
    old = converted()
    write_cache(old)
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(listener.accept()[0])  # and never answer

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/hang/data.json"
    try:
        started = time.monotonic()
        done = refresh(tmp_path, "--url", url, "--timeout", "2")
        elapsed = time.monotonic() - started
        assert done.returncode == 1
        assert "did not finish within 2 s and was stopped" in done.stderr
        assert elapsed >= 2
        assert _processes_with(url) == []
    finally:
        listener.close()
        for conn in held:
            conn.close()
    assert (isolated_environment / prices.CACHE).read_bytes() == old


def test_refresh_from_a_file_is_the_snapshot_tool(tmp_path: Path) -> None:
    """The snapshot tool and the refresh convert alike: the same input and date give the
    same providers, byte for byte."""
    source = tmp_path / "data.json"
    source.write_text(json.dumps(V2))
    by_refresh, by_tool = tmp_path / "a.json", tmp_path / "b.json"
    subprocess.run([sys.executable, "-m", "hookbus.handlers.guard.prices.refresh", "--from", str(source),
                    "--to", str(by_refresh), "--at", "2026-12-01"], check=True, timeout=60)  # fmt: skip
    subprocess.run([sys.executable, str(ROOT / "tools" / "snapshot_prices.py"), "--json",
                    str(source), "--out", str(by_tool), "--at", "2026-12-01"],
                   check=True, timeout=60, capture_output=True)  # fmt: skip
    a, b = (p.read_bytes().split(b"\n", 1)[1] for p in (by_refresh, by_tool))
    assert a == b and b"claude-test-1" in a


def test_show_prints_each_id_and_its_source(tmp_path: Path) -> None:
    """prices show names the model matched, its prices and source, and what was read."""
    done = hookbus_cli(tmp_path, "prices", "show", "claude-sonnet-4-5-20250929", "nope-xyz")
    lines = done.stdout.splitlines()
    assert lines[0].startswith("claude-sonnet-4-5-20250929: anthropic/claude-sonnet-4-5  input $3")
    assert "from the snapshot prices" in lines[0]
    assert lines[1] == "nope-xyz: unknown (no price: the guard allows it)"
    assert lines[2].startswith("read: ") and lines[2].endswith("snapshot.json")
    assert done.returncode == 1


# Matching never raises.

_STRINGS = st.text(max_size=12)
#: Enough to write invalid expressions, not enough to write an exponential one (no * or +:
#: the dataset's own are short anchored patterns such as ``^claude-fable-5-\\d{8}$``).
_REGEX_CHARS = "()[]{}?|^$\\.ad0,"
_LEAVES = st.one_of(
    st.builds(dataset.Equals, _STRINGS), st.builds(dataset.StartsWith, _STRINGS),
    st.builds(dataset.EndsWith, _STRINGS), st.builds(dataset.Contains, _STRINGS),
    st.builds(dataset.Regex, st.text(alphabet=_REGEX_CHARS, max_size=10)),
)  # fmt: skip
_CLAUSES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.builds(dataset.AnyOf, st.lists(inner, max_size=3).map(tuple))
        | st.builds(dataset.AllOf, st.lists(inner, max_size=3).map(tuple))
    ),
    max_leaves=8,
)


# A generated pattern such as "[[" makes re warn (FutureWarning: possible nested set);
# the suite turns warnings into errors, a hook does not.
@pytest.mark.filterwarnings("ignore::FutureWarning")
@settings(max_examples=examples(300), deadline=None)
@given(clause=_CLAUSES, ref=st.text(max_size=40))
def test_match_clauses_never_raise(clause: dataset.Clause, ref: str) -> None:
    """Any clause tree (invalid regexes included) on any id answers a bool, and survives
    its own file's round trip."""
    assert clause.test(ref) in (True, False)
    again = msgspec.json.decode(msgspec.json.encode(clause), type=dataset.Clause)
    assert again == clause


@settings(max_examples=examples(200), deadline=None)
@given(ref=st.text(max_size=60), provider=st.none() | st.text(max_size=10))
def test_lookup_never_raises_on_arbitrary_ids(ref: str, provider: str | None) -> None:
    """Any id, any provider name: a Price or None from the real snapshot."""
    found = prices.lookup(ref, provider)
    assert found is None or found.total >= 0


def test_a_long_lived_process_sees_an_edited_override_and_a_new_cache(
    tmp_path: Path, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``forget``: an override written, edited or removed, a cache refreshed, or
    another file named by HOOKBUS_PRICES, is what the next lookup (and the guard's
    cached model reading) uses, as in a warm worker answering call after call."""
    from hookbus.handlers.guard import models

    assert models.identify("claude-haiku-4-5").price == 6.0
    written = write_override(tmp_path, '[models."claude-haiku-4-5"]\ninput = 50\noutput = 50\n')
    assert models.identify("claude-haiku-4-5").price == 100.0
    # Shorter: seen by its size even within the file system's mtime granularity.
    written.write_text('[models."claude-haiku-4-5"]\ninput = 1\noutput = 1\n')
    assert models.identify("claude-haiku-4-5").price == 2.0
    written.unlink()
    assert models.identify("claude-haiku-4-5").price == 6.0
    state.write(prices.CACHE, data=converted())
    found = prices.lookup("cloud-only")
    assert found is not None and found.source == "refreshed"
    other = tmp_path / "named.toml"
    other.write_text('[models."cloud-only"]\ninput = 0\noutput = 0\n')
    monkeypatch.setenv("HOOKBUS_PRICES", str(other))
    found = prices.lookup("cloud-only")
    assert found is not None and (found.total, found.source) == (0, "user")
