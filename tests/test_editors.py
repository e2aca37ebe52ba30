"""Editor support: the TextMate grammar (generated from planner's grammar, tokenized here with
VS Code's own engine) and the VS Code extension folder."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess

import pytest
from conftest import ROOT, SHEETS, TOKEN_COST

from planner.language.parser import keywords

VSCODE = ROOT / "editors" / "vscode"
SYNTAX = VSCODE / "syntaxes" / "plan.tmLanguage.json"


def _generator():
    spec = importlib.util.spec_from_file_location("textmate", ROOT / "editors" / "textmate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_grammar_is_what_the_generator_writes():
    for path, text in _generator().files().items():
        assert path.read_text(encoding="utf-8") == text, f"run: python editors/textmate.py ({path.name} is stale)"


def test_every_keyword_of_the_language_is_highlighted():
    text = SYNTAX.read_text(encoding="utf-8")
    for word in keywords():
        assert f"|{word}|" in text or f"(?:{word}|" in text or f"|{word})" in text, word


def test_the_extension_declares_the_language_the_grammars_and_the_server():
    package = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    (language,) = package["contributes"]["languages"]
    assert language["id"] == "plan" and language["extensions"] == [".plan"]
    assert (VSCODE / language["configuration"]).is_file()
    for g in package["contributes"]["grammars"]:
        assert (VSCODE / g["path"]).is_file()
    assert package["activationEvents"] == ["onLanguage:plan"]
    # the package runs the bundle of extension.js (npm run bundle; vsce package runs it first)
    assert package["main"] == "./dist/extension.js" and "extension.js" in package["scripts"]["bundle"]
    assert package["scripts"]["vscode:prepublish"] == "npm run bundle" and (VSCODE / "LICENSE").is_file()
    shipped = (VSCODE / ".vscodeignore").read_text(encoding="utf-8").split()
    assert "**" in shipped and "!dist/extension.js" in shipped and not any("test" in x for x in shipped)
    assert "vscode-languageclient" in package["dependencies"]
    config = json.loads((VSCODE / "language-configuration.json").read_text(encoding="utf-8"))
    assert config["comments"]["lineComment"] == "#"
    assert package["contributes"]["configuration"]["properties"]["planner.server.args"]["default"] == ["lsp"]


def _node_ready() -> bool:
    ready = shutil.which("node") is not None and all(
        (VSCODE / "node_modules" / p).is_dir() for p in ("vscode-textmate", "vscode-jsonrpc"))
    if not ready and os.environ.get("CI"):
        pytest.fail("node and editors/vscode/node_modules are needed (npm ci --prefix editors/vscode)")
    return ready


def test_the_client_script_is_valid_javascript():
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    for script in ("extension.js", "server.js", "test/client.js"):
        proc = subprocess.run(["node", "--check", str(VSCODE / script)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


@functools.lru_cache(maxsize=None)
def _tokens(path, scope="source.plan"):
    proc = subprocess.run(["node", str(VSCODE / "test" / "tokenize.js"), str(path), scope], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _scope(tokens, line_text_start: str, text: str, lines: list[str]) -> list[str]:
    row = next(i for i, line in enumerate(lines) if line.startswith(line_text_start))
    text = lines[row] if text is None else text  # None: the whole line is one token
    return next(t[3] for t in tokens if t[0] == row and t[2] == text)


@pytest.mark.skipif(not _node_ready(), reason="node and editors/vscode/node_modules (npm ci --prefix editors/vscode)")
@pytest.mark.parametrize("needle, token, scope", [
    ("hbm_bandwidth", "hbm_bandwidth", "variable.other.definition.plan"),
    ("hbm_bandwidth", "3.0", "constant.numeric.plan"),
    ("hbm_bandwidth", "TB/s", "support.type.unit.plan"),
    ("hbm_bandwidth", '"', "string.quoted.double.plan"),
    ("hbm_bandwidth", "where", "storage.modifier.constraint.plan"),
    ("weight_bytes ", "->", "keyword.operator.arrow.plan"),
    ("weight_bytes ", "GB", "support.type.unit.plan"),
    ("step_bound(", "step_bound", "entity.name.function.plan"),
    ("    max(", "max", "support.function.builtin.plan"),
    ("batch_step_bound ", "step_bound", "entity.name.function.call.plan"),
    ("scenario bf16", "scenario", "storage.type.plan"),
    ("scenario bf16", "bf16", "entity.name.namespace.plan"),
    ("check weight_bytes == 140 GB", "check", "keyword.control.question.plan"),
    ("check weight_bytes == 140 GB", "==", "keyword.operator.comparison.plan"),
    ("check weight_bytes == 140 GB", "in", "keyword.other.plan"),
    ("check bits_per_weight@bf16", "@", "keyword.operator.scenario.plan"),
    ("sweep gamma in 1..8", "..", "keyword.operator.range.plan"),
    ("# ---- Bytes", None, "comment.line.number-sign.plan"),
])
def test_the_grammar_highlights_a_shipped_plan_as_vscode_would(needle, token, scope):
    lines = TOKEN_COST.read_text(encoding="utf-8").splitlines()
    tokens = _tokens(TOKEN_COST)
    assert scope in _scope(tokens, needle, token, lines)


@pytest.mark.skipif(not _node_ready(), reason="node and editors/vscode/node_modules (npm ci --prefix editors/vscode)")
def test_plan_blocks_in_markdown_are_highlighted(tmp_path):
    md = tmp_path / "doc.md"
    md.write_text("Some text\n\n```plan\nx = 3 TB/s  # a comment\n```\n\n```\nx = 3 TB/s\n```\n", encoding="utf-8")
    tokens = _tokens(md, "text.html.markdown")
    inside = [t for t in tokens if t[0] == 3]
    assert any(t[2] == "TB/s" and "support.type.unit.plan" in t[3] and "meta.embedded.block.plan" in t[3]
               for t in inside)
    assert not any("source.plan" in s or "support.type.unit.plan" in s for t in tokens if t[0] == 7 for s in t[3])


@pytest.mark.skipif(not _node_ready(), reason="node and editors/vscode/node_modules (npm ci --prefix editors/vscode)")
def test_a_keyword_after_a_number_is_not_a_unit():
    tokens = _tokens(SHEETS / "gpu_compare.plan")
    units = {t[2] for t in tokens if "support.type.unit.plan" in t[3]}
    assert units.isdisjoint(keywords()) and {"TB/s", "GB", "bit", "token", "ms"} <= units


@pytest.mark.skipif(not _node_ready(), reason="node and editors/vscode/node_modules (npm ci --prefix editors/vscode)")
def test_the_extensions_client_talks_to_planner_lsp(tmp_path):
    """editors/vscode/test/client.js starts the server from the extension's own server options
    (server.js, the settings' defaults: `planner lsp` on the PATH) and speaks vscode-jsonrpc to it:
    initialize, the diagnostics of a plan with one broken statement, a hover beside it."""
    import sys

    path = tmp_path / "typed.plan"
    path.write_text("rate = 2 GB/s\nsize = 4 GB\nt = size / rate\nbroken = (1 +\n", encoding="utf-8")
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    proc = subprocess.run(["node", str(VSCODE / "test" / "client.js"), str(path), "2", "0"], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["initialize"]["name"] == "planner" and got["exit"] == 0
    (diagnostic,) = got["diagnostics"]
    assert diagnostic["range"]["start"]["line"] == 3 and diagnostic["code"] == "syntax"
    assert "not finished" in diagnostic["message"] and diagnostic["source"] == "planner"
    hover = got["hover"]["contents"]["value"]
    assert hover.startswith("**t** (derived, s)") and "t = size / rate" in hover


def test_the_extension_starts_the_server_from_its_settings():
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    script = ("const {serverOptions} = require(process.argv[1]);"
              "const given = {command: '/venv/bin/python', args: ['-m', 'planner', 'lsp']};"
              "console.log(JSON.stringify([serverOptions((k, d) => d), serverOptions((k, d) => given[k])]));")
    proc = subprocess.run(["node", "-e", script, str(VSCODE / "server.js")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    defaults, chosen = json.loads(proc.stdout)
    assert defaults["run"] == defaults["debug"] == {"command": "planner", "args": ["lsp"], "transport": 0}
    assert chosen["run"] == {"command": "/venv/bin/python", "args": ["-m", "planner", "lsp"], "transport": 0}


def test_planner_lsp_answers_initialize_from_its_table_without_the_language():
    """The server speaks the protocol itself (planner/lsp/protocol.py, no pygls or lsprotocol: importing
    them took most of a second before `initialize` was answered) and answers `initialize` from its table
    before the language (lark, the compute stage) is loaded; each capability it declares has a handler."""
    import sys

    code = r"""
import io, json, sys
sys.modules["pygls"] = sys.modules["lsprotocol"] = None  # importing either fails
from planner.lsp import server
from planner.lsp.framing import Frames, LockedOutput

def frame(m):
    body = json.dumps(m).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body

given = b"".join(frame(m) for m in [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {
        "general": {"positionEncodings": ["utf-32", "utf-8"]}}}},
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    {"jsonrpc": "2.0", "id": 2, "method": "no/such/method", "params": {}},
    {"jsonrpc": "2.0", "id": 3, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}])
out = io.BytesIO()
ls = server.serve(LockedOutput(out))
status = ls.serve(Frames(io.BytesIO(given), LockedOutput(out)))
loaded = sorted({"lark", "numpy", "sympy", "planner.lsp.analysis", "planner.language.parser"} & set(sys.modules))
print(json.dumps({"status": status, "loaded": loaded, "out": out.getvalue().decode(), "handlers": sorted(ls.handlers)}))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["status"] == 0 and got["loaded"] == []
    answers, rest = [], got["out"]
    while rest:
        head, _, rest = rest.partition("\r\n\r\n")
        n = int(head.split(": ")[1])
        answers.append(json.loads(rest[:n]))
        rest = rest[n:]
    init, missing, down = answers
    assert init["id"] == 1 and init["result"]["serverInfo"]["name"] == "planner"
    caps = init["result"]["capabilities"]
    assert caps["positionEncoding"] == "utf-32"  # the client's first choice the server has
    assert missing["error"]["code"] == -32601 and down == {"jsonrpc": "2.0", "id": 3, "result": None}
    provider = {"completionProvider": "textDocument/completion", "hoverProvider": "textDocument/hover",
                "signatureHelpProvider": "textDocument/signatureHelp", "definitionProvider": "textDocument/definition",
                "referencesProvider": "textDocument/references",
                "documentHighlightProvider": "textDocument/documentHighlight",
                "documentSymbolProvider": "textDocument/documentSymbol", "codeActionProvider": "textDocument/codeAction",
                "codeLensProvider": "textDocument/codeLens", "workspaceSymbolProvider": "workspace/symbol",
                "documentFormattingProvider": "textDocument/formatting",
                "documentRangeFormattingProvider": "textDocument/rangeFormatting",
                "renameProvider": "textDocument/rename", "foldingRangeProvider": "textDocument/foldingRange",
                "semanticTokensProvider": "textDocument/semanticTokens/full",
                "inlayHintProvider": "textDocument/inlayHint", "textDocumentSync": "textDocument/didChange"}
    assert set(caps) - {"positionEncoding"} == set(provider)
    assert {provider[c] for c in provider} <= set(got["handlers"])
    asked = {m for m in got["handlers"] if not m.startswith(("textDocument/did", "workspace/did", "initialize"))}
    assert asked <= set(provider.values()) | {"textDocument/prepareRename"}  # (renameProvider.prepareProvider)
