"""The language server, driven over stdio with real LSP messages (``planner lsp`` in a subprocess)."""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest
from conftest import ROOT, SHEETS, TOKEN_COST

from lsp_client import LspClient

import planner

GPU = SHEETS / "gpu_compare.plan"
LIBRARY = ROOT / "planner" / "library"


@pytest.fixture(scope="module")
def lsp():
    client = LspClient(cwd=ROOT)
    client.capabilities = client.initialize(ROOT)
    yield client
    assert client.close() == 0


def _at(text: str, needle: str, nth: int = 0, shift: int = 0) -> dict:
    """The LSP position of the nth occurrence of ``needle`` (plus ``shift`` characters)."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    i += shift
    line = text.count("\n", 0, i)
    return {"line": line, "character": i - (text.rfind("\n", 0, i) + 1)}


def _doc(path) -> dict:
    return {"textDocument": {"uri": path.as_uri()}}


def _apply(text: str, edits: list[dict]) -> str:
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def off(p):
        return offsets[p["line"]] + p["character"]

    for e in sorted(edits, key=lambda e: off(e["range"]["start"]), reverse=True):
        text = text[:off(e["range"]["start"])] + e["newText"] + text[off(e["range"]["end"]):]
    return text


@pytest.fixture(scope="module")
def token_cost(lsp):
    text = TOKEN_COST.read_text(encoding="utf-8")
    lsp.open(TOKEN_COST, text)
    assert lsp.diagnostics(TOKEN_COST) == []  # every check passes: nothing to say
    return text


@pytest.fixture(scope="module")
def gpu(lsp):
    text = GPU.read_text(encoding="utf-8")
    lsp.open(GPU, text)
    assert lsp.diagnostics(GPU) == []
    return text


def test_the_server_announces_what_it_does(lsp):
    caps = lsp.capabilities["capabilities"]
    assert caps["hoverProvider"] and caps["definitionProvider"] and caps["documentSymbolProvider"]
    assert caps["referencesProvider"] and caps["documentFormattingProvider"] and caps["documentRangeFormattingProvider"]
    assert caps["renameProvider"] == {"prepareProvider": True}
    assert "@" in caps["completionProvider"]["triggerCharacters"]
    assert lsp.capabilities["serverInfo"]["name"] == "planner"


def test_diagnostics_follow_the_typing(lsp, tmp_path):
    path = tmp_path / "typing.plan"
    lsp.open(path, "size = 2 GB\ntime = 3 s\n")
    assert lsp.diagnostics(path, 1) == []
    lsp.change(path, "size = 2 GB\ntime = 3 s\ntotal = size + time\n", 2)
    (d,) = lsp.diagnostics(path, 2)
    assert d["code"] == "unit" and d["severity"] == 1 and d["source"] == "planner"
    assert d["range"]["start"] == {"line": 2, "character": 13}  # the `+`
    assert d["message"].startswith("cannot add")
    assert "\nhelp: both operands need the same dimension" in d["message"]
    # keystrokes in quick succession: the diagnostics published are those of the last text
    for version, text in enumerate(["size = 2 GB\ntime = 3 s\ntotal = size + tim\n",
                                    "size = 2 GB\ntime = 3 s\ntotal = size + ti\n",
                                    "size = 2 GB\ntime = 3 s\ntotal = size / time -> GB/s\n"], start=3):
        lsp.change(path, text, version)
    assert lsp.diagnostics(path, 5) == []
    # an incremental change, as editors send them: `/` becomes `+` again
    lsp.notify("textDocument/didChange", {"textDocument": {"uri": path.as_uri(), "version": 6}, "contentChanges": [
        {"range": {"start": {"line": 2, "character": 13}, "end": {"line": 2, "character": 14}}, "text": "+"}]})
    (d,) = lsp.diagnostics(path, 6)
    assert d["code"] == "unit"


def test_syntax_errors_and_failed_checks(lsp, tmp_path):
    path = tmp_path / "checks.plan"
    lsp.open(path, "x = 2\ncheck x == 3\ny = (x +\n")
    syntax, check = lsp.diagnostics(path)  # the broken statement is set aside: the rest is still checked
    assert syntax["code"] == "syntax" and syntax["range"]["start"]["line"] == 2
    assert check["code"] == "check" and check["range"]["start"]["line"] == 1
    lsp.change(path, "x = 2\ncheck x == 3\ncheck x ~= 2.0\n", 2)
    (d,) = lsp.diagnostics(path, 2)
    assert d["severity"] == 2 and d["code"] == "check" and d["message"] == "check fails: expected 3, got 2"
    assert d["range"]["start"] == {"line": 1, "character": 0}


def test_an_error_in_an_imported_plan_points_at_the_import(lsp, tmp_path):
    (tmp_path / "parts.plan").write_text("a = 1 GB\nb = a + 1 s\n", encoding="utf-8")
    path = tmp_path / "main.plan"
    lsp.open(path, 'title "uses parts"\nimport "parts.plan" as parts\nc = parts.b\n')
    (d,) = lsp.diagnostics(path)
    assert d["range"]["start"]["line"] == 1 and d["message"].startswith("in parts.plan: cannot add")
    related = d["relatedInformation"][0]  # where the error is, then its labels (the operands)
    assert related["location"]["uri"] == (tmp_path / "parts.plan").as_uri()
    assert related["location"]["range"]["start"]["line"] == 1


def test_hover_shows_values_per_scenario_unit_doc_tags_and_formula(lsp, token_cost):
    result = lsp.request("textDocument/hover", {**_doc(TOKEN_COST), "position": _at(token_cost, "weight_bytes", 2)})
    text = result["result"]["contents"]["value"]
    assert "**weight_bytes** (derived, GB)" in text and "weights read once per step" in text
    # the article's figures: 140 GB in BF16, 70 GB in FP8, 36.3125 GB for INT4 with group scales
    assert "| bf16 | 140 GB |" in text and "| fp8_e4m3 | 70 GB |" in text and "| int4_g128 | 36.3125 GB |" in text
    assert "weight_bytes = parameters * bits_per_weight -> GB" in text and "`headline`" in text
    result = lsp.request("textDocument/hover", {**_doc(TOKEN_COST), "position": _at(token_cost, "alpha      =")})
    text = result["result"]["contents"]["value"]
    assert "**alpha** (input)" in text and "= **0.8**" in text and "`0 <= alpha < 1`" in text
    result = lsp.request("textDocument/hover", {**_doc(TOKEN_COST), "position": _at(token_cost, "TB/s", 0, 1)})
    assert "1 TB = 1e+12 B (bytes)" in result["result"]["contents"]["value"]
    comment = _at(token_cost, "# ---- The model", 0, 9)
    result = lsp.request("textDocument/hover", {**_doc(TOKEN_COST), "position": comment})
    assert result["result"] is None  # nothing in comments


def test_hover_and_definition_reach_into_imported_plans(lsp, gpu):
    pos = _at(gpu, "h100.hbm_bandwidth", 0, 6)
    text = lsp.request("textDocument/hover", {**_doc(GPU), "position": pos})["result"]["contents"]["value"]
    assert "**h100.hbm_bandwidth** (input, TB/s)" in text and "3.35 TB/s" in text
    assert "defined in h100_sxm.plan" in text
    loc = lsp.request("textDocument/definition", {**_doc(GPU), "position": pos})["result"]
    h100 = LIBRARY / "hardware" / "h100_sxm.plan"
    assert loc["uri"] == h100.as_uri()
    line = next(i for i, row in enumerate(h100.read_text().splitlines()) if row.startswith("hbm_bandwidth"))
    assert loc["range"]["start"] == {"line": line, "character": 0}
    # a function brought in with `from ... import`, and the imported file itself
    loc = lsp.request("textDocument/definition", {**_doc(GPU), "position": _at(gpu, "step_bound(", 0, 2)})["result"]
    assert loc["uri"] == (LIBRARY / "llm" / "roofline.plan").as_uri()
    loc = lsp.request("textDocument/definition", {**_doc(GPU), "position": _at(gpu, "hardware/mi300x", 0, 3)})
    assert loc["result"]["uri"] == (LIBRARY / "hardware" / "mi300x.plan").as_uri()
    # a scenario named in a check, and a quantity of this plan
    loc = lsp.request("textDocument/definition", {**_doc(GPU), "position": _at(gpu, "step_time ~=", 0, 1)})["result"]
    assert loc["uri"] == GPU.as_uri() and loc["range"]["start"]["line"] == gpu[:gpu.index("step_time  ")].count("\n")


def _labels(lsp, path, text, needle, nth=0, shift=None):
    pos = _at(text, needle, nth, len(needle) if shift is None else shift)
    result = lsp.request("textDocument/completion", {**_doc(path), "position": pos})["result"]
    return {item["label"]: item for item in result["items"]}


def test_completion(lsp, token_cost, gpu, tmp_path):
    names = _labels(lsp, TOKEN_COST, token_cost, "weight_gib            = ")
    assert names["weight_bytes"]["detail"] == "derived = 140 GB" and names["batch"]["kind"] == 21  # Constant
    assert names["step_bound"]["textEdit"]["newText"] == "step_bound($1)" and "max" in names and "where" in names
    assert names["step_bound"]["insertTextFormat"] == 2  # a snippet
    units = _labels(lsp, TOKEN_COST, token_cost, "2048 ")
    assert {"token", "TB", "GiB", "ms", "FLOP"} <= set(units) and units["ms"]["kind"] == 11  # Unit
    assert "weight_bytes" not in units
    units = _labels(lsp, TOKEN_COST, token_cost, "-> G")  # after `->`: units, even part typed
    assert "GB" in units
    scenarios = _labels(lsp, TOKEN_COST, token_cost, "batch_step_bound@")
    assert {"bf16", "fp8_e4m3", "int4_g128", "base"} <= set(scenarios)
    picks = _labels(lsp, TOKEN_COST, token_cost, "check weight_bytes == 140 GB in ")
    assert {"bf16", "int4_g128", "all"} <= set(picks)
    picks = _labels(lsp, GPU, gpu, "check step_time ~= 48.2014 ms in ")
    assert {"model=", "gpu=", "precision="} <= set(picks)
    members = _labels(lsp, GPU, gpu, "in model=large, gpu=")
    assert {"h100", "mi300x", "all"} <= set(members)
    namespace = _labels(lsp, GPU, gpu, "h100.")
    assert "hbm_bandwidth" in namespace and "peak_bf16_dense" in namespace
    paths = _labels(lsp, GPU, gpu, 'import "')
    assert {"hardware/h100_sxm.plan", "llm/roofline.plan", "token_cost.plan"} <= set(paths)
    assert paths["hardware/h100_sxm.plan"]["documentation"] == "NVIDIA H100 SXM5 80GB"
    assert _labels(lsp, TOKEN_COST, token_cost, "# ---- The model") == {}


def test_completion_offers_every_name_of_an_import_and_replaces_what_was_typed(lsp, tmp_path):
    """After `h100.` every figure of the imported file, not only those the plan uses yet; each item says
    what it replaces (the name part typed after the dot; the path typed since the quote), as editors that
    split words at `/` or `.` need."""
    path = tmp_path / "members.plan"
    text = 'import "hardware/h100_sxm.plan" as h100\nbw = h100.hbm_bandwidth\nx = h100.pe\n'
    lsp.open(path, text)
    lsp.diagnostics(path)
    members = _labels(lsp, path, text, "h100.pe")
    assert {"hbm_bandwidth", "tdp", "peak_fp8_dense", "ridge_bf16"} <= set(members)
    assert members["tdp"]["detail"] == "in hardware/h100_sxm.plan" and members["tdp"]["kind"] == 21  # an input
    assert members["peak_fp8_dense"]["textEdit"] == {"newText": "peak_fp8_dense", "range": {
        "start": {"line": 2, "character": 9}, "end": {"line": 2, "character": 11}}}  # `pe`, after the dot
    typed = text + 'import "hardware/h1'
    lsp.change(path, typed, 2)
    paths = _labels(lsp, path, typed, 'import "hardware/h1', nth=1)
    assert paths["hardware/h100_sxm.plan"]["textEdit"]["range"] == {
        "start": {"line": 3, "character": 8}, "end": {"line": 3, "character": 19}}  # the whole path typed


def test_document_symbols(lsp, token_cost, gpu):
    symbols = lsp.request("textDocument/documentSymbol", _doc(TOKEN_COST))["result"]
    kinds = {s["name"]: s["kind"] for s in symbols}
    assert kinds["weight_bytes"] == 13 and kinds["alpha"] == 14 and kinds["step_bound"] == 12  # Variable, Constant
    assert kinds["bf16"] == 3 and kinds["check weight_bytes == 140 GB in bf16"] == 24  # Namespace, Event
    weight = next(s for s in symbols if s["name"] == "weight_bytes")
    assert weight["detail"] == "parameters * bits_per_weight -> GB"
    axes = [s for s in lsp.request("textDocument/documentSymbol", _doc(GPU))["result"] if s["kind"] == 10]  # Enum
    assert [a["name"] for a in axes] == ["model", "gpu", "precision"]
    assert [m["name"] for m in axes[2]["children"]] == ["bf16", "fp8", "int4"]


def test_rename_a_quantity_across_the_plan(lsp, tmp_path):
    path = tmp_path / "token_cost.plan"
    shutil.copy(TOKEN_COST, path)
    text = path.read_text(encoding="utf-8")
    lsp.open(path, text)
    lsp.diagnostics(path)
    pos = _at(text, "batch          =")
    prepared = lsp.request("textDocument/prepareRename", {**_doc(path), "position": pos})["result"]
    assert prepared["placeholder"] == "batch"
    refs = lsp.request("textDocument/references", {**_doc(path), "position": pos, "context": {
        "includeDeclaration": True}})["result"]
    edit = lsp.request("textDocument/rename", {**_doc(path), "position": pos, "newName": "sequences_per_step"})
    edits = edit["result"]["changes"][path.as_uri()]
    assert len(edits) == len(refs)
    renamed = _apply(text, edits)
    # every use follows: formulas, `with batch = 1`, `solve min batch`; the function's own `sequences` does not
    assert "solve min sequences_per_step where" in renamed and "with sequences_per_step = 1" in renamed
    assert not re.search(r"\bbatch\b(?![_\w])", re.sub(r"#.*|\"[^\"]*\"", "", renamed))
    before = planner.loads(text, str(path), tmp_path).eval(scenario="all")
    after = planner.loads(renamed, str(path), tmp_path).eval(scenario="all")
    assert after["batch_step_bound"] == before["batch_step_bound"]
    assert after["sequences_per_step"] == before["batch"]


def test_rename_refuses_what_would_change_the_plan(lsp, token_cost, gpu):
    pos = _at(token_cost, "alpha      =")
    for new, why in [("gamma", "already defined"), ("2x", "not a name"), ("where", "keyword")]:
        answer = lsp.request("textDocument/rename", {**_doc(TOKEN_COST), "position": pos, "newName": new})
        assert why in answer["error"]["message"]
    # `weights` is a parameter of step_bound, whose body uses the quantity `kv_bytes_per_sequence`
    pos = _at(token_cost, "kv_bytes_per_sequence =")
    answer = lsp.request("textDocument/rename", {**_doc(TOKEN_COST), "position": pos, "newName": "weights"})
    assert "parameter of `step_bound`" in answer["error"]["message"]
    answer = lsp.request("textDocument/prepareRename", {**_doc(GPU), "position": _at(gpu, "h100.hbm_bandwidth", 0, 7)})
    assert "defined in h100_sxm.plan" in answer["error"]["message"]


def test_formatting(lsp, tmp_path):
    path = tmp_path / "messy.plan"
    text = "a=1\nlong_name = a*2  # twice\n"
    lsp.open(path, text)
    lsp.diagnostics(path)
    edits = lsp.request("textDocument/formatting", {**_doc(path), "options": {"tabSize": 4, "insertSpaces": True}})
    assert _apply(text, edits["result"]) == "a         = 1\nlong_name = a * 2  # twice\n"
    # a long plan whose only change is one line: one edit of that line, not the whole document
    text = "".join(f"q{i} = {i}\n" for i in range(10, 60)) + "z   = q10+1\n"
    lsp.change(path, text, 2)
    lsp.diagnostics(path, 2)
    edits = lsp.request("textDocument/formatting", {**_doc(path), "options": {"tabSize": 4, "insertSpaces": True}})
    assert _apply(text, edits["result"]) == text.replace("z   = q10+1", "z   = q10 + 1")
    assert [(e["range"]["start"]["line"], e["range"]["end"]["line"]) for e in edits["result"]] == [(50, 51)]


@pytest.mark.parametrize("encoding, column, alpha", [("utf-16", 6, 9), ("utf-8", 8, 12), ("utf-32", 6, 8)])
def test_positions_in_the_encoding_the_client_chose(tmp_path, encoding, column, alpha):
    client = LspClient(cwd=ROOT)
    try:
        result = client.initialize(ROOT, (encoding,))
        assert result["capabilities"]["positionEncoding"] == encoding
        bad = tmp_path / "bad.plan"
        client.open(bad, "α = 0.8\nβ = α + 1 GB\n")
        (d,) = client.diagnostics(bad)
        assert d["range"]["start"] == {"line": 1, "character": column}  # the `+` after `β = α `
        good = tmp_path / "good.plan"
        client.open(good, "α = 0.8\nβ = α * 2\n𝛾 = β + α\n")  # 𝛾 is outside the BMP: two UTF-16 units, 4 bytes
        assert client.diagnostics(good) == []
        hover = client.request("textDocument/hover", {**_doc(good), "position": {"line": 2, "character": alpha}})
        assert hover["result"]["contents"]["value"].startswith("**α** (input)")
        assert hover["result"]["range"] == {"start": {"line": 2, "character": alpha},
                                            "end": {"line": 2, "character": alpha + (2 if encoding == "utf-8" else 1)}}
    finally:
        assert client.close() == 0


HALF_TYPED = '''title "a plan half typed"
from "llm/roofline.plan" import step_bound
import "hardware/h100_sxm.plan" as h100

weights = 140 GB  "the weights, bf16"
bandwidth = h100.hbm_bandwidth
step_time = weights / bandwidth -> ms
kv = 3 GB *
tokens = 2048 token
rate = tokens / step_time -> token/s
cost = rate * priice
per_token = cost / rate
check step_time > 1 ms
'''


def test_a_plan_with_errors_still_answers_for_the_rest(lsp, tmp_path):
    """One broken statement is one diagnostic; every other statement keeps its name, unit and value."""
    path = tmp_path / "half.plan"
    text = HALF_TYPED
    lsp.open(path, text)
    found = lsp.diagnostics(path)
    assert [(d["code"], d["range"]["start"]["line"]) for d in found] == [("syntax", 7), ("unknown-name", 10)]
    assert found[0]["message"].startswith("this statement is not finished: it stops after `*`")
    assert "priice" in found[1]["message"] and "`price`" not in found[1]["message"]
    # hover: the value of a quantity after the broken statement, and one from an import
    hover = lsp.request("textDocument/hover", {**_doc(path), "position": _at(text, "rate =")})["result"]
    assert "**rate** (derived, token/s)" in hover["contents"]["value"]
    assert "49,005" in hover["contents"]["value"] or "49005" in hover["contents"]["value"]  # 2048 / 41.791 ms
    hover = lsp.request("textDocument/hover", {**_doc(path), "position": _at(text, "step_time =")})["result"]
    assert "41.791" in hover["contents"]["value"]  # 140 GB / 3.35 TB/s = 41.79 ms, by hand
    hover = lsp.request("textDocument/hover", {**_doc(path), "position": _at(text, "h100.hbm", 0, 6)})["result"]
    assert "3.35 TB/s" in hover["contents"]["value"]
    # the broken one and the one that uses it are named, as unknown
    hover = lsp.request("textDocument/hover", {**_doc(path), "position": _at(text, "cost =")})["result"]
    assert "**cost** (unknown: its definition has an error: unknown name `priice`)" in hover["contents"]["value"]
    hover = lsp.request("textDocument/hover", {**_doc(path), "position": _at(text, "per_token =")})["result"]
    assert "depends on `cost`" in hover["contents"]["value"]
    # completion: the plan's names (before and after the error), the imports', functions
    names = _labels(lsp, path, text, "per_token = ")
    assert {"weights", "step_time", "tokens", "rate", "bandwidth", "cost", "step_bound", "max"} <= set(names)
    assert "per_token" not in names  # not its own name
    assert names["step_time"]["detail"].startswith("derived = 41.79")
    assert "hbm_bandwidth" in _labels(lsp, path, text, "h100.")
    # definition of a name defined after the broken statement, of an imported one, of the broken one
    loc = lsp.request("textDocument/definition", {**_doc(path), "position": _at(text, "tokens /", 0, 1)})["result"]
    assert loc["uri"] == path.as_uri() and loc["range"]["start"] == {"line": 8, "character": 0}
    loc = lsp.request("textDocument/definition", {**_doc(path), "position": _at(text, "h100.hbm", 0, 7)})["result"]
    assert loc["uri"] == (LIBRARY / "hardware" / "h100_sxm.plan").as_uri()
    loc = lsp.request("textDocument/definition", {**_doc(path), "position": _at(text, "cost /", 0, 1)})["result"]
    assert loc["range"]["start"] == {"line": 10, "character": 0}
    # symbols: every statement that parses, the unknown ones too
    symbols = [s["name"] for s in lsp.request("textDocument/documentSymbol", _doc(path))["result"]]
    assert symbols[:4] == ["weights", "bandwidth", "step_time", "tokens"] and "cost" in symbols and "kv" not in symbols
    # references and rename: through the plan, the broken statement's text included
    refs = lsp.request("textDocument/references", {**_doc(path), "position": _at(text, "weights ="),
                                                   "context": {"includeDeclaration": True}})["result"]
    assert [r["range"]["start"]["line"] for r in refs] == [4, 6]
    edited = text.replace("kv = 3 GB *", "kv = weights *")
    lsp.change(path, edited, 2)
    lsp.diagnostics(path, 2)
    edit = lsp.request("textDocument/rename", {**_doc(path), "position": _at(edited, "weights ="), "newName": "w"})
    renamed = _apply(edited, edit["result"]["changes"][path.as_uri()])
    assert "w = 140 GB" in renamed and "step_time = w / bandwidth" in renamed and "kv = w *" in renamed


def test_a_statement_that_does_not_parse_still_has_a_hover_and_a_definition(lsp, tmp_path):
    """Hover on a name whose statement does not parse (or on a use of it) says why it is unknown, and
    definition goes to it; a name at the margin after a number on the line before is no unit; signature
    help inside a parenthesis within a call is the call's."""
    path = tmp_path / "broken.plan"
    text = "a = 128\nnew_cost = (a * 2 -> ms\nuse = new_cost * 2\nspelt = a_typo * 2\nw = max(a, (a + 1\n"
    lsp.open(path, text)
    lsp.diagnostics(path)
    hover = lsp.request("textDocument/hover", {**_doc(path), "position": _at(text, "new_cost * 2", 0, 3)})["result"]
    assert hover["contents"]["value"].startswith("**new_cost** (unknown: its definition has an error:")
    loc = lsp.request("textDocument/definition", {**_doc(path), "position": _at(text, "new_cost * 2", 0, 3)})["result"]
    assert loc["range"]["start"] == {"line": 1, "character": 0}
    hover = lsp.request("textDocument/hover", {**_doc(path), "position": _at(text, "spelt =", 0, 2)})["result"]
    assert "unknown name `a_typo`" in hover["contents"]["value"]  # (it was an empty unit hover)
    sig = lsp.request("textDocument/signatureHelp", {**_doc(path), "position": _at(text, "(a + 1", 0, 6)})["result"]
    assert sig["signatures"][0]["label"].startswith("max(") and sig["activeParameter"] == 1


def test_hover_says_when_its_values_are_of_the_text_before_the_last_edit(tmp_path):
    """A keystroke is checked at once and evaluated after a pause: in between, hover shows the values
    of the text before it, and says so (a user who typed `batch = 33` read 32's step time as current)."""
    from planner.lsp.analysis import Document

    text = "batch = 32\nstep = batch * 2 ms -> ms\n"
    doc = Document(tmp_path / "t.plan", text)
    doc.update(text)
    hover, _ = doc.hover(1, 1)
    assert "= **64 ms**" in hover and "updating" not in hover
    doc.check(text.replace("32", "33"))  # the keystroke's fast half only
    hover, _ = doc.hover(1, 1)
    assert "= **64 ms**" in hover and "as evaluated before the last edit: updating" in hover
    doc.update(text.replace("32", "33"))
    hover, _ = doc.hover(1, 1)
    assert "= **66 ms**" in hover and "updating" not in hover


def test_typing_a_statement_in_the_middle_keeps_the_rest_answering(lsp, tmp_path):
    """Keystroke by keystroke, a statement typed between two others (a bracket open most of the
    way) is the only one with an error, and hover, definition and completion answer for the rest."""
    path = tmp_path / "middle.plan"
    head = "size = 4 GB\nrate = 2 GB/s\n"
    tail = "after = size / rate\nlast = after * 2\n"
    typed = "probe = (size * 2 + sise) / rate\n"
    lsp.open(path, head + tail)
    assert lsp.diagnostics(path, 1) == []
    for k in range(1, len(typed) + 1):
        part = typed[:k] if typed[:k].endswith("\n") else typed[:k] + "\n"
        text = head + part + tail
        lsp.change(path, text, k + 1)
        found = lsp.diagnostics(path, k + 1, final=False)
        assert {d["range"]["start"]["line"] for d in found} <= {2}, (typed[:k], found)
        hover = lsp.request("textDocument/hover", {**_doc(path), "position": {"line": 3, "character": 1}})["result"]
        assert hover["contents"]["value"].startswith("**after** (derived, s)"), typed[:k]
        loc = lsp.request("textDocument/definition", {**_doc(path), "position": _at(text, "after *", 0, 1)})["result"]
        assert loc["range"]["start"] == {"line": 3, "character": 0}, typed[:k]
        assert {"size", "rate", "after"} <= set(_labels(lsp, path, text, "after * ")), typed[:k]
    (d,) = lsp.diagnostics(path, len(typed) + 1)
    assert d["code"] == "unknown-name" and "`sise`" in d["message"] and "`size`" in d["message"]


def test_diagnostics_of_syntax_and_names_come_first(lsp, tmp_path):
    """The fast half (parse, names, units) is published before the values and the checks."""
    path = tmp_path / "fast.plan"
    lsp.open(path, "x = 2\ncheck x == 3\n")
    assert lsp.diagnostics(path, 1, final=False) == []  # parsed and checked: nothing wrong yet
    (d,) = lsp.diagnostics(path, 1)  # then the checks ran
    assert d["code"] == "check"


def test_the_server_survives_a_client_that_sends_garbage():
    """Bad framing, bad JSON and early requests are answered with the protocol's codes, no traceback,
    and the server answers the next good request."""
    client = LspClient(cwd=ROOT)
    try:
        raw = client.proc.stdin

        def send(data: bytes) -> None:
            raw.write(data)
            raw.flush()

        def error() -> dict:
            return client._wait(lambda m: "error" in m, 20)["error"]

        early = client.request("textDocument/hover", {"textDocument": {"uri": "file:///x.plan"},
                                                      "position": {"line": 0, "character": 0}}, timeout=20)
        assert early["error"]["code"] == -32002 and "initialize" in early["error"]["message"]
        client.capabilities = client.initialize(ROOT)
        send(b"Content-Length: 99999999999999\r\n\r\n{}")
        e = error()
        assert e["code"] == -32600 and "larger than the limit" in e["message"] and "data" not in e
        send(b"Content-Length: 18446744073709551617\r\n\r\n")
        assert error()["code"] == -32600
        send(b"Content-Length: ten\r\n\r\n")
        assert "not a number" in error()["message"]
        body = b'{"jsonrpc": "2.0", "id": 99, "method": '
        send(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        e = error()
        assert e["code"] == -32700 and "traceback" not in json.dumps(e).lower()
        body = b"[1, 2, 3]"
        send(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        assert error()["code"] == -32600
        send(b"Content-Type: application/json\r\n\r\n")  # no length at all
        assert error()["code"] == -32600
        # and then it still works
        path = ROOT / "sheets" / "token_cost.plan"
        client.open(path, path.read_text(encoding="utf-8"))
        assert client.diagnostics(path) == []
        hover = client.request("textDocument/hover", {**_doc(path), "position": {"line": 0, "character": 1}})
        assert "error" not in hover
    finally:
        assert client.close() == 0


def test_untitled_documents_and_refused_imports(lsp, tmp_path):
    """An untitled document is a plan without a file: its locations keep its own URI; an import the
    plan may not read (outside its folder and the library) is never a location."""
    uri = "untitled:Untitled-1"
    text = 'import "/etc/passwd" as pw\nx = 2 GB\ny = x + 1 s\n'
    lsp.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "plan", "version": 1,
                                                         "text": text}})
    found = lsp.diagnostics(tmp_path, uri=uri)
    assert {d["code"] for d in found} >= {"unit"}
    for d in found:
        for rel in d.get("relatedInformation") or ():
            assert rel["location"]["uri"] == uri, rel
    loc = lsp.request("textDocument/definition", {"textDocument": {"uri": uri}, "position": _at(text, "passwd")})
    assert loc["result"] is None
    loc = lsp.request("textDocument/definition", {"textDocument": {"uri": uri}, "position": _at(text, "x +")})
    assert loc["result"]["uri"] == uri and loc["result"]["range"]["start"] == {"line": 1, "character": 0}


def test_an_importer_follows_its_import_changing_on_disk(lsp, tmp_path):
    """workspace/didChangeWatchedFiles (and a save of the imported plan) check the importers again."""
    parts = tmp_path / "parts.plan"
    parts.write_text("a = 1 GB\n", encoding="utf-8")
    path = tmp_path / "main.plan"
    text = 'import "parts.plan" as parts\nc = parts.a / 1 s -> GB/s\ncheck c == 1 GB/s\n'
    lsp.open(path, text)
    assert lsp.diagnostics(path, 1) == []
    parts.write_text("a = 2 GB\n", encoding="utf-8")  # changed by another program
    lsp.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": parts.as_uri(), "type": 2}]})
    (d,) = lsp.diagnostics(path, 1)
    assert d["code"] == "check" and "got 2 GB/s" in d["message"]
    hover = lsp.request("textDocument/hover", {**_doc(path), "position": _at(text, "c =")})["result"]
    assert "2 GB/s" in hover["contents"]["value"]
    parts.write_text("a = 1 s\n", encoding="utf-8")  # now wrong in its unit: the import is where it shows
    lsp.open(parts, "a = 1 s\n")
    lsp.diagnostics(parts, 1)
    lsp.notify("textDocument/didSave", {"textDocument": {"uri": parts.as_uri()}})
    found = lsp.diagnostics(path, 1)
    assert found and found[0]["range"]["start"]["line"] == 1 and found[0]["code"] in ("unit", "display-unit")
    parts.unlink()  # deleted: the import is the error
    lsp.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": parts.as_uri(), "type": 3}]})
    found = lsp.diagnostics(path, 1)
    assert found[0]["range"]["start"]["line"] == 0


def _fixes(lsp, path, diagnostic) -> dict:
    answer = lsp.request("textDocument/codeAction", {**_doc(path), "range": diagnostic["range"],
                                                     "context": {"diagnostics": [diagnostic]}})["result"]
    return {a["title"]: a["edit"]["changes"][path.as_uri()] for a in answer}


def test_quick_fixes_do_what_the_help_says(lsp, tmp_path):
    path = tmp_path / "fixes.plan"
    text = ('title "fixes"\nprice = 3 USD\nunit USD\nunit W\nusers = 30,000\n'
            'cost = 2 * pricee\nsize = 3 gb\nrate = 4 widgets\n')
    lsp.open(path, text)
    found = {d["code"] + ":" + d["message"].split(" (")[0]: d for d in lsp.diagnostics(path)}
    assert len(found) == 5  # each broken statement once
    fixed = text
    grouped = next(d for k, d in found.items() if k.startswith("syntax"))
    (edits,) = _fixes(lsp, path, grouped).values()
    assert _apply(text, edits).count("users = 30_000\n") == 1
    typo = found["unknown-name:unknown name `pricee`"]
    assert _apply(text, _fixes(lsp, path, typo)["Change to `price`"]).count("cost = 2 * price\n") == 1
    # a client that sends no diagnostics with the request (a lightbulb at the cursor) gets the same fix
    cursor = _at(text, "pricee", 0, 3)
    bare = lsp.request("textDocument/codeAction", {**_doc(path), "range": {"start": cursor, "end": cursor},
                                                   "context": {"diagnostics": []}})["result"]
    assert "Change to `price`" in [a["title"] for a in bare]
    unit = found["unknown-unit:unknown unit `gb`"]
    assert "size = 3 GB\n" in _apply(text, _fixes(lsp, path, unit)["Change to `GB`"])
    widgets = found["unknown-unit:unknown unit `widgets`"]
    declared = _apply(text, _fixes(lsp, path, widgets)["Declare `unit widgets` (a new dimension)"])
    assert declared.startswith('title "fixes"\nunit widgets\nprice')
    builtin = next(d for k, d in found.items() if k.startswith("compat"))  # a warning: `W` is built in now
    assert builtin["severity"] == 2
    removed = _apply(text, _fixes(lsp, path, builtin)["Remove the declaration (use the built-in unit)"])
    assert "unit W" not in removed and "unit USD\n" in removed
    # all of them applied at once (as "fix all" does): the plan is clean
    chosen = [_fixes(lsp, path, grouped), _fixes(lsp, path, typo)["Change to `price`"],
              _fixes(lsp, path, unit)["Change to `GB`"],
              _fixes(lsp, path, widgets)["Declare `unit widgets` (a new dimension)"],
              _fixes(lsp, path, builtin)["Remove the declaration (use the built-in unit)"]]
    chosen[0] = next(iter(chosen[0].values()))
    fixed = _apply(text, [e for edits in chosen for e in edits])
    lsp.change(path, fixed, 2)
    assert lsp.diagnostics(path, 2) == [], fixed


def test_add_the_unit_a_formula_is_shown_in(lsp, tmp_path):
    path = tmp_path / "shown.plan"
    text = 'size = 4 GB\nrate = 2 GB/s\nt = (size / rate)  "time"\nv = t -> min\nbad = size +\n'
    lsp.open(path, text)
    lsp.diagnostics(path)

    def actions(line):
        answer = lsp.request("textDocument/codeAction", {**_doc(path), "range": {
            "start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}},
            "context": {"diagnostics": []}})["result"]
        return {a["title"]: a["edit"]["changes"][path.as_uri()] for a in answer}

    added = _apply(text, actions(2)["Add `-> s` to `t`"])  # GB / (GB/s) is seconds: after the bracket
    assert added.splitlines()[2] == 't = (size / rate) -> s  "time"'
    assert actions(0) == {} and actions(3) == {} and actions(4) == {}  # an input, a unit written, broken
    lsp.change(path, added, 2)
    assert [d["range"]["start"]["line"] for d in lsp.diagnostics(path, 2)] == [4]  # only `bad` is wrong


def test_semantic_tokens(lsp, tmp_path):
    path = tmp_path / "colours.plan"
    text = ('# costs\nunit widget\nrate = 3 widget/s  "how fast"\nf(x, y = 2) = x * y\n'
            'total = f(rate * 1 s / 1 widget) + max(1, gpu.count)\nbroken = (1 +\nscenario fast { rate = 5 widget/s }\n')
    lsp.open(path, text)
    lsp.diagnostics(path)
    legend = lsp.capabilities["capabilities"]["semanticTokensProvider"]["legend"]
    assert legend == {"tokenTypes": ["keyword", "variable", "function", "parameter", "type", "number",
                                     "string", "comment"], "tokenModifiers": ["declaration", "defaultLibrary"]}
    data = lsp.request("textDocument/semanticTokens/full", _doc(path))["result"]["data"]
    rows, line, char, got = text.split("\n"), 0, 0, []
    for i in range(0, len(data), 5):
        dl, dc, n, kind, mods = data[i:i + 5]
        line, char = line + dl, (char + dc if dl == 0 else dc)
        got.append((line, rows[line][char:char + n], legend["tokenTypes"][kind],
                    [m for j, m in enumerate(legend["tokenModifiers"]) if mods >> j & 1]))
    assert got == [
        (0, "# costs", "comment", []), (1, "unit", "keyword", []), (1, "widget", "type", ["declaration"]),
        (2, "rate", "variable", ["declaration"]), (2, "3", "number", []), (2, "widget", "type", []),
        (2, "s", "type", []), (2, '"how fast"', "string", []),
        (3, "f", "function", ["declaration"]), (3, "x", "parameter", ["declaration"]),
        (3, "y", "parameter", ["declaration"]), (3, "2", "number", []), (3, "x", "parameter", []),
        (3, "y", "parameter", []),
        (4, "total", "variable", ["declaration"]), (4, "f", "function", []), (4, "rate", "variable", []),
        (4, "1", "number", []), (4, "s", "type", []), (4, "1", "number", []), (4, "widget", "type", []),
        (4, "max", "function", ["defaultLibrary"]), (4, "1", "number", []), (4, "gpu.count", "variable", []),
        (5, "1", "number", []),  # the broken statement: what the text shows (its name is no name yet)
        (6, "scenario", "keyword", []), (6, "rate", "variable", []), (6, "5", "number", []),
        (6, "widget", "type", []), (6, "s", "type", [])]
    # a question's input and answer name, and a quantity in a scenario (`rate@fast`), are names too
    asked = text + "maximize total over rate in 1..3 as best_rate\ncheck rate@fast > 1 widget/s\n"
    lsp.change(path, asked, 2)
    lsp.diagnostics(path, 2)
    data = lsp.request("textDocument/semanticTokens/full", _doc(path))["result"]["data"]
    rows, line, char, got = asked.split("\n"), 0, 0, []
    for i in range(0, len(data), 5):
        dl, dc, n, kind, mods = data[i:i + 5]
        line, char = line + dl, (char + dc if dl == 0 else dc)
        got.append((line, rows[line][char:char + n], legend["tokenTypes"][kind]))
    assert {(7, "rate", "variable"), (7, "best_rate", "variable"), (8, "rate", "variable")} <= set(got), got[-12:]


def test_range_formatting_lays_out_whole_statements(lsp, tmp_path):
    path = tmp_path / "ranged.plan"
    text = "a   =  1 s\nlonger_name=2*a\nc=3\n"
    lsp.open(path, text)
    lsp.diagnostics(path)
    options = {"tabSize": 4, "insertSpaces": True}

    def fmt(start, end):
        return lsp.request("textDocument/rangeFormatting", {**_doc(path), "options": options, "range": {
            "start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}}})

    # the first statement only, lined up with the others as `planner fmt` lines them up
    assert _apply(text, fmt((0, 2), (0, 3))["result"]) == "a           = 1 s\nlonger_name=2*a\nc=3\n"
    broken = "a   =  1 s\nb = (1 +\nc=3*a\n"  # the plan does not parse: the statements on their own
    lsp.change(path, broken, 2)
    lsp.diagnostics(path, 2)
    assert _apply(broken, fmt((2, 0), (2, 1))["result"]) == "a   =  1 s\nb = (1 +\nc = 3 * a\n"
    assert fmt((1, 0), (1, 1))["result"] is None  # the broken one: its diagnostic says why


def test_inlay_hints_show_each_definitions_value(lsp, tmp_path):
    path = tmp_path / "hints.plan"
    text = ("weights = 140 GB\nbandwidth = 3.35 TB/s\nstep_time = weights / bandwidth -> ms\n"
            "scenario fast {\n  bandwidth = 8 TB/s\n}\n")
    lsp.open(path, text)
    lsp.diagnostics(path)
    hints = lsp.request("textDocument/inlayHint", {**_doc(path), "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": 6, "character": 0}}})["result"]
    (hint,) = hints  # the inputs are their own values: no hint repeats them
    assert hint["position"] == {"line": 2, "character": len("step_time = weights / bandwidth -> ms")}
    assert hint["label"] == " = 41.791 ms (varies by scenario)"  # 140 GB / 3.35 TB/s, by hand
    assert "fast: 17.5 ms" in hint["tooltip"]  # 140 GB / 8 TB/s
    lsp.notify("workspace/didChangeConfiguration", {"settings": {"planner": {"inlayHints": False}}})
    assert lsp.request("textDocument/inlayHint", {**_doc(path), "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": 6, "character": 0}}})["result"] == []
    lsp.notify("workspace/didChangeConfiguration", {"settings": {"planner": {"inlayHints": True}}})


def test_signature_help_highlights_and_folding(lsp, tmp_path):
    path = tmp_path / "sig.plan"
    text = ('# one\n# two\nf(a, b = 2) = a * b  "twice, or b times"\nscenario s {\n  x = 1\n}\n'
            'x = 2\nz = x + x\ny = f(3, ')  # a call being typed, at the end of the plan
    lsp.open(path, text)
    lsp.diagnostics(path)
    sig = lsp.request("textDocument/signatureHelp", {**_doc(path), "position": _at(text, "f(3, ", 0, 5)})["result"]
    assert sig["signatures"][0]["label"] == "f(a, b = 2)" and sig["activeParameter"] == 1
    assert sig["signatures"][0]["documentation"] == "twice, or b times"
    typed = text[:-len("f(3, ")] + "max("
    lsp.change(path, typed, 2)
    sig = lsp.request("textDocument/signatureHelp", {**_doc(path), "position": _at(typed, "max(", 0, 4)})["result"]
    assert sig["signatures"][0]["label"].startswith("max(x, y") and sig["activeParameter"] == 0
    marks = lsp.request("textDocument/documentHighlight", {**_doc(path), "position": _at(typed, "z = x", 0, 4)})
    assert [(h["range"]["start"]["line"], h["kind"]) for h in marks["result"]] == [(4, 2), (6, 3), (7, 2), (7, 2)]
    folds = lsp.request("textDocument/foldingRange", _doc(path))["result"]
    assert {(f["startLine"], f["endLine"]) for f in folds} >= {(0, 1), (3, 5)}


@pytest.mark.parametrize("text, errors, kept, unknown", [
    ("a = 3 s\nf = 1 +\ng = 2\n", [(1, "not finished: it stops after `+`")], ["a", "g"], {}),
    ("a = 1\nh = (a +\nk = 3\nm = k\n", [(1, "not finished")], ["a", "k", "m"], {}),
    ("x = f(3, \ny = max(1, \nscenario s {\n  x = 1\n}\nz = x + x\nw = 2\n",
     [(0, "not finished"), (1, "not finished")], ["w"], {"s": "x", "z": "x"}),
    ("p = 2\nq = p * rr\nr = q + 1\nt = p\n", [(1, "unknown name `rr`")], ["p", "t"], {"r": "q"}),
    ("x = 30,000\ny = 2\n", [(0, "unexpected `,`")], ["y"], {}),
    # a question that uses the broken statement goes, with its closing sentence (a live value of its answer
    # on the line below): the rest of the plan is still checked and evaluated
    ("a = 2\nb = (a * 3\nmaximize b over a in 1..3 as best\n    \"best is {best}\"\nc = 5\n",
     [(1, "not finished")], ["a", "c"], {"best": "b"}),
    # a note that names the answer set aside waits (no error of its own); one that names nothing is an error
    ("a = 2\nb = (a * 3\nmaximize b over a in 1..3 as best\nnote \"best is {best}\"\nc = 5\n",
     [(1, "not finished")], ["a", "c"], {"best": "b"}),
    ("a = 2\nnote \"best is {bst}\"\nc = 5\n", [(1, "unknown name `bst`")], ["a", "c"], {}),
])
def test_one_broken_statement_is_one_error(tmp_path, text, errors, kept, unknown):
    from planner.lsp.tolerant import recover

    name = str(tmp_path / "t.plan")
    got = recover(name, text, lambda t: planner.loads(t, name, tmp_path))
    assert len(got.errors) == len(errors), [e.message for e in got.errors]
    for e, (line, needle) in zip(got.errors, errors):
        assert e.span.line - 1 == line and needle in e.message, e.message
    assert sorted(got.plan.quantities) == sorted(kept) and got.unknown == unknown


def test_a_keystroke_parses_only_the_statement_it_changed(tmp_path):
    """The statements a keystroke did not touch are kept (the same objects), and what is parsed
    so is what parsing the whole text gives: every statement's kind and place, the title, the notes."""
    from planner.language.lower import lower
    from planner.language.source import Source
    from planner.lsp.tolerant import Parts, parse_tolerant

    from planner.language import ir

    def kept(statement) -> bool:  # a probability check is made again from its check when parts are joined
        return not isinstance(statement, ir.ProbabilityCheck)

    def shape(plan_ir):
        return (plan_ir.title, plan_ir.notes,
                [(type(s).__name__, s.span.start, s.span.end, s.span.line) for s in plan_ir.statements])

    text = (SHEETS / "llm_cost.plan").read_text(encoding="utf-8")
    name = str(tmp_path / "t.plan")
    parts = Parts()
    first = parse_tolerant(name, text, parts).syntax
    assert shape(first) == shape(lower(Source(name, text)))
    typed = text + "\nextra = 2 *"  # half typed at the end: one error, the rest kept
    got = parse_tolerant(name, typed, parts)
    assert len(got.errors) == 1 and got.errors[0].span.line == typed.count("\n") + 1
    assert all(a is b for a, b in zip(first.statements, got.syntax.statements) if kept(a))
    assert len(got.syntax.statements) == len(first.statements)
    typed = text + "\nextra = 2 * 3\n"
    got = parse_tolerant(name, typed, parts).syntax
    assert all(a is b for a, b in zip(first.statements, got.statements) if kept(a))
    assert shape(got) == shape(lower(Source(name, typed)))
    # a line added at the top moves every statement: each is parsed again at its new place
    moved = "# a comment\n" + text
    got = parse_tolerant(name, moved, Parts()).syntax
    assert shape(got) == shape(lower(Source(name, moved)))
    # a statement broken in the middle of a file opened cold: the run it is in is parsed one by one
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if i > 100 and line[:1].isalpha() and " = " in line)
    broken = "".join(lines[:at] + [lines[at].replace(" = ", " = (", 1)] + lines[at + 1:])
    got = parse_tolerant(name, broken, Parts())
    assert [e.span.line for e in got.errors] == [at + 1]
    assert len(got.syntax.statements) == len(first.statements) - 1


def test_workspace_symbols_reach_into_imports(lsp, gpu):
    found = lsp.request("workspace/symbol", {"query": "hbmband"})["result"]
    where = {(s["name"], s["location"]["uri"]) for s in found}
    assert ("h100.hbm_bandwidth", (LIBRARY / "hardware" / "h100_sxm.plan").as_uri()) in where
    found = lsp.request("workspace/symbol", {"query": "step_bound"})["result"]
    assert any(s["location"]["uri"] == (LIBRARY / "llm" / "roofline.plan").as_uri() for s in found)


def test_a_code_lens_shows_each_questions_answer(lsp, token_cost):
    lenses = lsp.request("textDocument/codeLens", _doc(TOKEN_COST), timeout=120)["result"]
    lines = token_cost.split("\n")
    shown = {lines[x["range"]["start"]["line"]].split(" as ")[-1].strip(): x["command"]["title"] for x in lenses}
    assert shown["breakeven_alpha"] == "= 0.287108"  # the article's break-even acceptance rate
    assert "bf16: 98" in shown["crossover_batch"] and "int4_g128: 26" in shown["crossover_batch"]


def test_framing_never_fails_on_random_input():
    """Frames (planner/lsp/framing.py) on random bytes, random headers and good messages cut anywhere:
    it never raises, hands on only whole JSON-RPC messages, and each refusal is a JSON-RPC error frame."""
    import io
    import json as _json

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from planner.lsp.framing import Frames, LockedOutput

    good = b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}'
    pieces = st.sampled_from([b"Content-Length: ", b"%d" % len(good), b"\r\n", b"\r\n\r\n", good, b"{", b"}",
                              b"Content-Length: 99999999999999999999", b"Content-Type: x", b"\n", b"\xff\xfe"])
    chunks = st.lists(st.one_of(pieces, st.binary(max_size=20)), max_size=30)

    @settings(max_examples=300, deadline=None)
    @given(chunks)
    def run(parts):
        out = io.BytesIO()
        frames = Frames(io.BytesIO(b"".join(parts)), LockedOutput(out))
        frames.initialized = True
        while True:
            message = frames.next_message()
            if message is None:
                break
            assert isinstance(message, dict) and ("method" in message or "id" in message)
        written = out.getvalue()
        while written:
            head, _, rest = written.partition(b"\r\n\r\n")
            n = int(head.split(b": ")[1])
            message = _json.loads(rest[:n])
            assert message["error"]["code"] in (-32700, -32600, -32002)
            written = rest[n:]

    run()


def test_an_unclosed_scenario_block_keeps_the_definitions_after_it(lsp, tmp_path):
    """`scenario big {` never closed is one error, at the scenario; the definitions after it keep their
    names: hover, definition and completion answer for them."""
    path = tmp_path / "open_block.plan"
    text = "x = 2 GB\nscenario big {\n  x = 4 GB\ny = x * 2\nz = y + 1 GB\n"
    lsp.open(path, text)
    (d,) = lsp.diagnostics(path, final=False)
    assert d["range"]["start"]["line"] == 2 and "not finished" in d["message"] and "`}`" in d["message"]
    assert len(lsp.diagnostics(path)) == 1  # and once evaluated: still that one
    hover = lsp.request("textDocument/hover", {**_doc(path), "position": _at(text, "z =")})["result"]
    assert hover["contents"]["value"].startswith("**z** (derived, B)")
    assert "= **5,000,000,000 B**" in hover["contents"]["value"]  # 2 GB * 2 + 1 GB, in bytes (no `->`)
    found = lsp.request("textDocument/definition", {**_doc(path), "position": _at(text, "y +")})["result"]
    assert found["uri"] == path.as_uri() and found["range"]["start"] == {"line": 3, "character": 0}
    labels = {i["label"] for i in lsp.request("textDocument/completion", {
        **_doc(path), "position": {"line": 5, "character": 0}})["result"]["items"]}
    assert {"x", "y", "z"} <= labels


sys.path.insert(0, str(ROOT / "benchmarks"))
from lsp_scale import broken, generate  # noqa: E402


def test_positions_by_the_line_index_are_those_counted_through_the_text():
    """A long text's positions come from its index of lines (a bisect): the same (line, character) and
    offsets as counting through the text, in every encoding, astral characters and CRLF lines included."""
    import random

    from planner.lsp import positions

    rows = [f"x{i} = {i} \"{'α𝛾' * (i % 3)}\"" + ("\r" if i % 5 == 0 else "") for i in range(3000)]
    text = "\n".join(rows) + "\n"
    assert len(text) >= positions._INDEXED
    rng = random.Random(40)
    try:
        for unit in ("utf-16", "utf-8", "utf-32"):
            positions.ENCODING["unit"] = unit
            for at in [0, len(text), len(text) - 1] + [rng.randrange(len(text)) for _ in range(300)]:
                line = text.count("\n", 0, at)
                start = text.rfind("\n", 0, at) + 1
                want = (line, positions.units(text[start:at]))
                assert positions.position(text, at) == want
                if text[at - 1:at] != "\r" and at < len(text) and text[at] != "\r":
                    assert positions.offset(text, *want) == at
            assert positions.offset(text, len(rows) + 5, 0) == len(text)  # past the last line: the end
            assert positions.offset(text, 5, 10**6) == text.index("\r\n", text.index("x5 ="))  # past a line's end
    finally:
        positions.ENCODING["unit"] = "utf-16"


def _work(tmp_path, n: int) -> tuple[int, int]:
    """(Python calls, characters handed to the parser) of what opening a generated plan of ``n``
    statements with three broken ones costs the server: the first check, the requests an editor makes
    on opening (symbols, semantic tokens, folding, inlay hints, the quick fixes of a range), then a
    keystroke's check. Counted, not timed: the machine may be busy."""
    import threading

    from planner.language import lower as lowering
    from planner.lsp.analysis import Document

    text = broken(generate(n), 3)
    doc = Document(tmp_path / f"big{n}.plan", text)
    values, _ = doc.evaluate(None, text)
    calls, parsed = [0], [0]
    part = lowering.lower_part

    def counted(source):
        parsed[0] += len(source.text)
        return part(source)

    def hook(frame, event, arg):
        if event == "call":  # (a generator resumed counts too: a scan of a list by `next(...)` does)
            calls[0] += 1

    middle = text.find("\nload", len(text) // 2) + 1
    digit = text.index(" ", middle) + 3
    edited = text[:digit] + str((int(text[digit]) + 1) % 10) + text[digit + 1:]
    lowering.lower_part = counted
    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        found = doc.check(text)
        doc.values, doc.values_text = doc.evaluate(doc.plan, text)[0], text
        doc.symbols(), doc.semantic_tokens(), doc.folding(), doc.inlay_hints(0, n), doc.unit_actions(0, n)
        again = doc.check(edited)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        lowering.lower_part = part
    assert len(found) == 3 and len(again) == 3, (found, again)
    assert not any(d.code == "internal" for d in found + again)
    return calls[0], parsed[0]


def test_opening_a_big_plan_costs_the_same_per_statement_at_any_size(tmp_path):
    """Issue 40: the first diagnostics of a big plan came after minutes (a scan of the statements for
    each statement). What a plan of 4,000 statements costs per statement (Python calls, characters
    parsed) is what one of 1,000 costs, within a generous margin: a step that grows with the square
    of the plan is 4 times dearer per statement there."""
    small, large = _work(tmp_path, 1000), _work(tmp_path, 4000)
    calls = (large[0] / 4000) / (small[0] / 1000)
    parsed = (large[1] / 4000) / (small[1] / 1000)
    assert calls < 1.5, f"Python calls per statement grew {calls:.2f}x from 1,000 to 4,000 statements"
    assert parsed < 1.5, f"characters parsed per statement grew {parsed:.2f}x from 1,000 to 4,000 statements"


def test_a_big_plan_through_the_server_never_fails_inside(lsp, tmp_path):
    """A generated plan of 3,000 statements with broken ones, through the server as an editor drives
    it: first diagnostics (the broken statements, nothing internal), the requests made on opening,
    then a keystroke that fixes one of them."""
    path = tmp_path / "big.plan"
    text = broken(generate(3000), 6)
    lsp.open(path, text)
    found = lsp.diagnostics(path, 1, final=False, timeout=300)
    assert len(found) == 6 and not any(d["code"] == "internal" for d in found), found
    for method, extra in (("textDocument/semanticTokens/full", {}), ("textDocument/documentSymbol", {}),
                          ("textDocument/foldingRange", {}),
                          ("textDocument/inlayHint", {"range": {"start": {"line": 0, "character": 0},
                                                                "end": {"line": 3000, "character": 0}}}),
                          ("textDocument/hover", {"position": _at(text, "total100 =")})):
        got = lsp.request(method, {**_doc(path), **extra}, timeout=300)
        assert "error" not in got, (method, got)
    fixed = text.replace("* 0.4 + (", "* 0.4 +", 1)
    lsp.change(path, fixed, 2)
    found = lsp.diagnostics(path, 2, final=False, timeout=300)
    assert len(found) == 5 and not any(d["code"] == "internal" for d in found), found
    lsp.notify("textDocument/didClose", _doc(path))


def test_the_token_count_that_spares_a_second_parse_is_never_below_the_lexers(monkeypatch):
    """A keystroke parses the whole text once more (for the limit on a file's tokens) only when a count
    made without parsing may be over the limit: that count must never be below the lexer's own, or a
    file over the limit would pass in the editor and fail on the command line."""
    from planner.language import limits
    from planner.language.errors import PlanError
    from planner.language.lower import lower_part
    from planner.language.source import Source
    from planner.lsp.tolerant import _TOKENISH

    seen = [0]
    see = limits.TokenBudget.see

    def counted(self, tok):
        seen[0] += 1
        return see(self, tok)

    monkeypatch.setattr(limits.TokenBudget, "see", counted)
    checked = 0
    for path in sorted(ROOT.glob("**/*.plan")):
        if ".venv" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        seen[0] = 0
        try:
            lower_part(Source(str(path), text))
        except PlanError:
            continue
        assert sum(1 for _ in _TOKENISH.finditer(text)) >= seen[0], path
        checked += 1
    assert checked > 100


def test_a_probability_check_shows_in_the_editor_as_planner_check_runs_it(lsp, tmp_path):
    """The editor runs the one check door (:func:`planner.questions.every_check.run_every_check`): a
    probability check that fails is a warning on its line, as `planner check` fails it."""
    path = tmp_path / "chance.plan"
    text = "x = uniform(0, 10)\ncheck P(x > 9) >= 50%\ncheck P(x < 11) >= 99%\n"
    lsp.open(path, text)
    (d,) = lsp.diagnostics(path)
    assert d["code"] == "check" and d["severity"] == 2 and d["range"]["start"]["line"] == 1
    assert "P(x > 9) = 10" in d["message"] and "samples" in d["message"]
    lsp.change(path, text.replace("x > 9", "x > 1"), 2)
    assert lsp.diagnostics(path, 2) == []


def test_hover_shows_the_plan_as_written_beside_scenarios_that_all_change_it(tmp_path):
    """A plan whose every scenario changes an input: hover lists the plan as written too. It listed only
    the scenarios and said `runway` was never "in every scenario" while the plan as written runs out in
    month 2; a scenario that restates the plan as written stands for it (as `--scenario all` shows them)."""
    from planner.lsp.analysis import Document

    text = ("unit USD\nperiods = 1 month..3 month\nburn = 60 USD\nseries cash = 100 USD - burn then previous - burn\n"
            "runway = first(period where cash < 0 USD)\nscenario frugal { burn = 10 USD }\n")
    doc = Document(tmp_path / "t.plan", text)
    doc.update(text)
    hover, _ = doc.hover(4, 1)
    assert "| base | 2 month |" in hover and "| frugal | never |" in hover, hover
    hover, _ = doc.hover(3, 8)
    assert "| base | first **40.00 USD** (month 1), last **-80.00 USD** (month 3)" in hover, hover
    restated = text + "scenario as_written { burn = 60 USD }\n"
    doc.update(restated)
    hover, _ = doc.hover(4, 1)
    assert "| as_written | 2 month |" in hover and "| base |" not in hover, hover


def test_completion_offers_the_words_of_a_plan_with_periods(tmp_path):
    """`previous`, `period`, `first`, `last`, `mean`, `sum` and `never` were not offered while typing a series
    (they are not reserved words, so the keyword list had none of them); a plan without periods gets no
    `previous` or `period`."""
    from planner.lsp.analysis import Document

    text = "periods = 1 month..12 month\nseries a = 1 then previous + 1\nseries b = prev"
    doc = Document(tmp_path / "t.plan", text)
    doc.update(text)
    got = {c.label: c for c in doc.complete(2, len("series b = prev"))}
    for word in ("previous", "period", "first", "last", "mean", "sum", "never"):
        assert word in got, sorted(got)
    assert got["previous"].insert == "previous($1)" and "period before" in got["previous"].detail
    ok = "periods = 1 month..3 month\nseries a = 1 then previous + 1\nb = "
    doc = Document(tmp_path / "s.plan", ok)
    doc.update(ok)
    got = {c.label: c for c in doc.complete(2, 4)}  # a series said "defined", as a name the plan does not have yet
    assert got["a"].detail == "series = first 1 (month 1), last 3 (month 3), lowest 1 (month 1)", got["a"]
    hover, _ = doc.hover(1, 20)  # `previous` said nothing
    assert "**previous**" in hover and "the period before" in hover and "`1 month..3 month`" in hover, hover
    plain = "x = 1\ny = "
    doc = Document(tmp_path / "u.plan", plain)
    doc.update(plain)
    labels = {c.label for c in doc.complete(1, 4)}
    assert "previous" not in labels and "period" not in labels and "x" in labels
