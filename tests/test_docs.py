"""The documentation follows the code: every diagnostic code hookbus writes has its
section, every configuration key its entry, every host its row, every relative link a
target."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from hookbus.hosts import HOSTS, PLANNED_HOSTS
from hookbus.runtime import config

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "hookbus"
DOCS = ROOT / "docs"

#: The functions a diagnostic code is handed to as their first argument.
EMITTERS = frozenset({"emit", "line"})
#: What a code looks like: lowercase words joined by hyphens.
CODE = re.compile(r"[a-z]+(?:-[a-z]+)+")
#: Codes built by an f-string (``f"handler-{outcome.status}"``): the literal prefix, the
#: module and ``Literal`` alias that declare the values of the varying part, and the
#: values that never reach the f-string.
FAMILIES: dict[str, tuple[str, str, frozenset[str]]] = {
    # runtime/process.report skips the handlers whose outcome is "ok".
    "handler-": ("bus/dispatch.py", "Status", frozenset({"ok"})),
    # runtime/worker reports only an index that is not fresh.
    "index-": ("runtime/index.py", "Freshness", frozenset({"fresh"})),
    # A child that answered is no diagnostic; one that timed out is "watchdog-fired".
    "worker-": ("runtime/isolate.py", "Status", frozenset({"ok", "timeout"})),
}


@cache  # a tree's, made for the modules that emit a code only, once
def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _scope(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    """The function (or module) ``node`` is in: where a name it uses is assigned."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node
    return node


def _strings(node: ast.AST, scope: ast.AST) -> Iterator[tuple[str, bool]]:
    """The strings an expression can evaluate to, as ``(text, is_prefix)``: a literal, the
    literal head of an f-string, both arms of a conditional, what a local name is given."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value, False
    elif isinstance(node, ast.JoinedStr):
        head = ""
        for part in node.values:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                break
            head += part.value
        yield head, True
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body, scope)
        yield from _strings(node.orelse, scope)
    elif isinstance(node, ast.Name):
        for assign in ast.walk(scope):
            if isinstance(assign, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == node.id for t in assign.targets
            ):
                yield from _strings(assign.value, scope)


def _literal_values(module: str, alias: str) -> set[str]:
    """The strings of ``alias = Literal[...]`` in ``hookbus/<module>``."""
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == alias for t in node.targets)
            and isinstance(node.value, ast.Subscript)
        ):
            items = node.value.slice
            elements = items.elts if isinstance(items, ast.Tuple) else [items]
            return {e.value for e in elements if isinstance(e, ast.Constant)}
    raise AssertionError(f"no {alias} = Literal[...] in hookbus/{module}")


#: The plugins and extensions hookbus ships in its host folders (``hookbus/hosts/*/*.js``,
#: ``.ts``) write their diagnostic lines themselves, as JavaScript objects:
#: ``event: "hook-unavailable"``.
SHIM_CODE = re.compile(r'\bevent: "([a-z]+(?:-[a-z]+)+)"')


def shims(*suffixes: str) -> list[Path]:
    """The JavaScript and TypeScript files hookbus ships (``suffixes``: those only)."""
    return sorted(
        p for p in (PACKAGE / "hosts").rglob("*.[jt]s") if p.suffix in (suffixes or (".js", ".ts"))
    )


@cache
def package_trees() -> tuple[tuple[Path, ast.Module], ...]:
    """Every module of the package, parsed (once: five scans read them; none changes a
    tree)."""
    return tuple((path, ast.parse(path.read_text(encoding="utf-8")))
                 for path in sorted(PACKAGE.rglob("*.py")))  # fmt: skip


@cache  # a scan of every module, asked for by several tests, which only read it
def emitted_codes() -> dict[str, list[str]]:
    """Every diagnostic code hookbus's source can write -> where (``file:line``)."""
    found: dict[str, list[str]] = {}
    for path in shims():
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for code in SHIM_CODE.findall(text):
                found.setdefault(code, []).append(f"{path.relative_to(ROOT)}:{number}")
    for path, tree in package_trees():
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call) or not call.args:
                continue
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name not in EMITTERS:
                continue
            where = f"{path.relative_to(ROOT)}:{call.lineno}"
            for text, is_prefix in _strings(call.args[0], _scope(call, _parents(tree))):
                if is_prefix:
                    assert text in FAMILIES, (
                        f"{where}: a code built as f'{text}{{...}}': add the family to FAMILIES"
                    )
                    module, alias, never = FAMILIES[text]
                    codes = sorted(_literal_values(module, alias) - never)
                    for value in codes:
                        found.setdefault(text + value, []).append(where)
                elif CODE.fullmatch(text):
                    found.setdefault(text, []).append(where)
    return found


def shim_codes() -> dict[str, list[str]]:
    """The codes the JavaScript plugin shims write (``diagnose("code", ...)``)."""
    found: dict[str, list[str]] = {}
    for path in shims(".js"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for code in re.findall(r'diagnose\("([a-z-]+)"', line):
                found.setdefault(code, []).append(f"{path.relative_to(ROOT)}:{number}")
    return found


def documented_codes() -> set[str]:
    """The codes docs/diagnostics.md gives a section (a heading that is the code alone)."""
    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    return set(re.findall(r"^###\s+`([a-z-]+)`\s*$", text, re.MULTILINE))


def test_the_code_scan_finds_the_known_codes() -> None:
    """The scan sees literal codes, f-string families and codes picked by a conditional,
    so that the checks below cannot pass by finding nothing."""
    codes = emitted_codes()
    assert len(codes) >= 20, sorted(codes)
    assert {
        "config-invalid",
        "config-ignored",
        "handler-timeout",
        "handler-error",
        "index-missing",
        "index-refused",
        "worker-died",
        "watchdog-fired",
        "input-invalid",
    } <= codes.keys()
    assert not {"handler-ok", "index-fresh", "worker-timeout"} & codes.keys()


def test_every_emitted_code_is_documented() -> None:
    """Each code hookbus can write has its own section in docs/diagnostics.md."""
    codes = {**emitted_codes(), **shim_codes()}
    missing = {code: codes[code] for code in sorted(codes.keys() - documented_codes())}
    assert not missing, f"codes without a section in docs/diagnostics.md: {missing}"


def test_every_documented_code_is_emitted() -> None:
    """docs/diagnostics.md describes no code that hookbus no longer writes."""
    stale = sorted(documented_codes() - emitted_codes().keys() - shim_codes().keys())
    assert not stale, f"docs/diagnostics.md documents codes nothing emits: {stale}"


def test_every_configuration_key_is_documented() -> None:
    """Each key a configuration file may hold, top-level or in a handler's table, is
    in docs/configuration.md."""
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    keys = config._File.__struct_fields__
    assert {"budget", "enable", "handlers"} <= set(keys)
    for key in keys:
        assert re.search(rf"^###\s+`\[?{key}\b", text, re.MULTILINE), (
            f"configuration key {key!r} has no section in docs/configuration.md"
        )
    for key in config._RESERVED:
        assert f"| `{key}` |" in text, f"handler setting {key!r} is not in the table"


def test_every_host_is_listed() -> None:
    """docs/hosts/README.md has a row for every host hookbus has a driver for, and for
    every planned one (hosts that tests register, with drivers of their own, are not)."""
    text = (DOCS / "hosts" / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\|[^|]*\| `([a-z0-9-]+)` \|", text, re.MULTILINE))
    ours = {name for name, facts in HOSTS.items() if facts.driver.startswith("hookbus.hosts.")}
    assert "claude" in ours
    assert rows == ours | PLANNED_HOSTS


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _prose(text: str) -> Iterator[str]:
    """The lines of a Markdown text outside fenced code blocks."""
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for line in _prose(path.read_text(encoding="utf-8")):
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading is None:
            continue
        slug = _slug(heading.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(path: Path) -> Iterator[str]:
    for line in _prose(path.read_text(encoding="utf-8")):
        line = re.sub(r"``[^`]*``|`[^`]*`", "`code`", line)  # noqa: PLW2901
        yield from re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", line)
        yield from re.findall(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", line)


PAGES = sorted(
    p for p in [ROOT / "README.md", ROOT / "CHANGELOG.md", *DOCS.rglob("*.md")] if p.exists()
)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_files_that_exist(page: Path) -> None:
    """Every relative link of the page names an existing file, and its #anchor, when it
    has one and the target is Markdown, an existing heading."""
    broken = []
    for link in _links(page):
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", link):  # https:, mailto:
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(f"{link}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{link}: {path.name} has no heading #{anchor}")
    assert not broken, broken


def test_the_link_check_sees_links() -> None:
    """The link scan finds the docs' own links (a scan that finds none checks nothing)."""
    assert DOCS.is_dir()
    links = [link for page in PAGES for link in _links(page)]
    assert "diagnostics.md#config-invalid" in links
    assert len(links) >= 30


def _section(path: Path, heading: str) -> str:
    """The text of ``path`` under the heading ``heading``, up to the next heading of its
    level or above."""
    text = path.read_text(encoding="utf-8")
    found = re.search(rf"^(#+) {re.escape(heading)}\s*$", text, re.MULTILINE)
    assert found is not None, f"{path.name} has no heading {heading!r}"
    level = len(found.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE).search(text, found.end())
    return text[found.end() : end.start() if end else len(text)]


#: The environment variables that are hookbus's own, or the XDG ones it follows.
OWN_VARIABLE = r"(?:HOOKBUS|XDG)_[A-Z0-9_]+"


def _read_by_name(node: ast.AST) -> str | None:
    """The variable ``node`` reads when it is ``os.environ.get("NAME")``,
    ``getenv("NAME")`` or ``os.environ["NAME"]`` (any object named like environ)."""
    if isinstance(node, ast.Call) and node.args:
        func, first = node.func, node.args[0]
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        owner = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
        if (name == "get" and "environ" in owner) or name == "getenv":
            return first.value if isinstance(first, ast.Constant) else None
    if isinstance(node, ast.Subscript) and "environ" in ast.unparse(node.value):
        key = node.slice
        return key.value if isinstance(key, ast.Constant) else None
    return None


@cache  # a scan of every module, asked for by several tests, which only read it
def variables_in_code() -> dict[str, list[str]]:
    """Every environment variable hookbus reads -> where (``file:line``): a name read
    literally (``os.environ.get("NAME")``), a string that is a hookbus or XDG variable's
    name alone (kept in a constant, then read), a shim's ``env.NAME`` or quoted name, and
    the variables the host registry names (a project folder, a payload)."""
    found: dict[str, list[str]] = {}
    for path, tree in package_trees():
        for node in ast.walk(tree):
            name = _read_by_name(node)
            if name is None and isinstance(node, ast.Constant) and isinstance(node.value, str):
                name = node.value if re.fullmatch(OWN_VARIABLE, node.value) else None
            if isinstance(name, str):
                where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
                found.setdefault(name, []).append(where)
    for path in shims():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name in re.findall(rf"(?:env\.|[\"'])({OWN_VARIABLE})\b", line):
                found.setdefault(name, []).append(f"{path.relative_to(ROOT)}:{number}")
    for host, facts in HOSTS.items():
        for name in (*facts.project_env, *filter(None, [facts.payload_env])):
            found.setdefault(name, []).append(f"hookbus/hosts/{host}/facts.py")
    return found


def documented_variables() -> set[str]:
    """The variables the tables of docs/configuration.md#environment-variables name (in
    a row's first cell)."""
    section = _section(DOCS / "configuration.md", "Environment variables")
    cells = re.findall(r"^\|([^|]*)\|", section, re.MULTILINE)
    return {name for cell in cells for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", cell)}


def test_the_variable_scan_finds_the_known_variables() -> None:
    """The scan sees variables read by name, kept in constants, read by the shims and
    named by the host registry, so that the check below cannot pass by finding nothing."""
    found = variables_in_code()
    assert {"HOOKBUS_CONFIG", "HOOKBUS_SERVE_IDLE", "XDG_RUNTIME_DIR", "HOME"} <= found.keys()
    assert {"CODEX_HOME", "CLAUDE_PROJECT_DIR", "USER_PROMPT"} <= found.keys()
    assert any(".js:" in where for where in found["HOOKBUS_CLAUDE_SPAWN_MOD"])
    assert "HOOKBUS_CONFIG" in documented_variables()


def test_every_variable_hookbus_reads_is_in_the_table() -> None:
    """docs/configuration.md's environment tables name every variable the code reads,
    and no hookbus or XDG variable that it does not."""
    code = variables_in_code()
    documented = documented_variables()
    missing = {name: code[name] for name in sorted(code.keys() - documented)}
    assert not missing, f"variables read but not in docs/configuration.md: {missing}"
    own = {name for name in documented if re.fullmatch(OWN_VARIABLE, name)}
    stale = sorted(own - code.keys())
    assert not stale, f"docs/configuration.md documents variables nothing reads: {stale}"


def test_every_project_variable_of_a_host_is_in_the_handlers_guide() -> None:
    """Each variable a host names its project folder in is in
    docs/handlers.md#project-folder, where ``ctx.project_dir`` is explained."""
    variables = {name for facts in HOSTS.values() for name in facts.project_env}
    assert "CLAUDE_PROJECT_DIR" in variables
    section = _section(DOCS / "handlers.md", "Project folder")
    missing = sorted(name for name in variables if f"`{name}`" not in section)
    assert not missing, f"project variables docs/handlers.md does not name: {missing}"


def _linked(page: Path) -> set[Path]:
    """The files ``page`` links to, resolved."""
    return {(page.parent / link.partition("#")[0]).resolve() for link in _links(page)}


def test_every_docs_page_is_in_the_index() -> None:
    """docs/README.md links every page of docs/ and docs/hosts/."""
    pages = {p.resolve() for p in DOCS.rglob("*.md")} - {(DOCS / "README.md").resolve()}
    missing = sorted(str(p.relative_to(DOCS)) for p in pages - _linked(DOCS / "README.md"))
    assert not missing, f"docs pages docs/README.md does not link: {missing}"


def test_every_host_has_a_page_linked_from_the_index_and_the_readme() -> None:
    """Each host hookbus has a driver for has docs/hosts/<name>.md, and both docs/README.md
    and the README link it."""
    ours = sorted(name for name, facts in HOSTS.items() if facts.driver.startswith("hookbus."))
    assert len(ours) > 1
    for index in (DOCS / "README.md", ROOT / "README.md"):
        linked = _linked(index)
        missing = [n for n in ours if (DOCS / "hosts" / f"{n}.md").resolve() not in linked]
        assert not missing, f"{index.relative_to(ROOT)} links no page for the hosts {missing}"


def test_no_page_calls_a_supported_host_planned() -> None:
    """A host with a driver is not described as planned in the docs (the changelog's
    history aside)."""
    ours = {name for name in HOSTS if name not in PLANNED_HOSTS}
    stale = [
        f"{page.relative_to(ROOT)}: {line.strip()}"
        for page in PAGES
        if page.name != "CHANGELOG.md"
        for line in _prose(page.read_text(encoding="utf-8"))
        if "planned" in line.lower() and set(re.findall(r"`([a-z0-9-]+)`", line)) & ours
    ]
    assert not stale, stale


def test_every_built_in_handler_is_in_the_enable_section() -> None:
    """docs/configuration.md#enable has a row for each built-in handler hookbus ships."""
    from hookbus.handlers import BUILTIN

    section = _section(DOCS / "configuration.md", "`enable`")
    assert BUILTIN
    missing = [name for name in sorted(BUILTIN) if f"| `{name}` |" not in section]
    assert not missing, f"built-in handlers docs/configuration.md#enable does not name: {missing}"


def test_no_line_lists_some_hosts_as_if_they_were_all() -> None:
    """A line naming five hosts or more names every one (better: it links the hosts
    index), so that a new host cannot leave a hand-written list behind."""
    ours = {name for name, facts in HOSTS.items() if facts.driver.startswith("hookbus.")}
    partial = [
        f"{page.relative_to(ROOT)}: {line.strip()[:100]}"
        for page in PAGES
        if page.name != "CHANGELOG.md"
        for line in _prose(page.read_text(encoding="utf-8"))
        if 5 <= len(set(re.findall(r"`([a-z0-9-]+)`", line)) & ours) < len(ours)
    ]
    assert not partial, f"lines listing some hosts; link docs/hosts/README.md: {partial}"


def _fenced(path: Path, language: str) -> list[str]:
    """The contents of the page's fenced code blocks in ``language``."""
    text = path.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def test_the_offline_example_shown_is_the_one_the_suite_runs() -> None:
    """docs/testing.md shows examples/offline-claude/test_offline_claude.py whole, as it
    is (the end-to-end suite runs that file against the real Claude Code)."""
    example = ROOT / "examples" / "offline-claude" / "test_offline_claude.py"
    assert example.read_text(encoding="utf-8") in _fenced(DOCS / "testing.md", "python")
