"""The language server over stdio: protocol messages in, :class:`planner.lsp.analysis.Document` calls, answers out.

Handlers take the request's params as the protocol writes them (JSON objects,
camelCase) and answer in the same form; :mod:`planner.lsp.protocol` carries
the messages. Analysis (parse, check, evaluate, run the checks) runs on
worker threads, a short pause after the last keystroke, and its diagnostics
are published only if the text has not changed meanwhile.

Nothing here imports the language until it is needed: ``initialize`` is
answered from the table below at once, while the language (lark, the
compute stage) loads on the checking worker.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

from .. import __version__
from .positions import ENCODING, SUPPORTED, TOKEN_MODIFIERS, TOKEN_TYPES, edit, position
from .protocol import Endpoint, RequestFailed, TextDocument


class _Analysis:
    """planner.lsp.analysis, imported on first use (it brings the whole language, lark and the compute
    stage: it loads on the checking worker while the client opens its files)."""

    def __getattr__(self, name: str):
        import importlib

        return getattr(importlib.import_module("planner.lsp.analysis"), name)


analysis = _Analysis()

CHECK_DELAY = 0.01  # seconds of quiet typing before a keystroke's text is parsed and checked
EVALUATE_DELAY = 0.4  # seconds of quiet after that before every scenario is evaluated and the checks run
DONE = "$/planner/analysed"  # sent after the last diagnostics of a version (clients may ignore `$/` messages)

# protocol numbers (the specification's enumerations)
_SEVERITY = {1: 1, 2: 2, 3: 3}  # analysis.ERROR, WARNING, INFORMATION -> DiagnosticSeverity
_COMPLETION = {"quantity": 6, "input": 21, "function": 3, "unit": 11, "scenario": 20, "axis": 13,
               "keyword": 14, "file": 17}  # CompletionItemKind: Variable, Constant, Function, Unit, EnumMember ...
_SYMBOL = {"input": 14, "quantity": 13, "function": 12, "unit": 23, "scenario": 3, "axis": 10,
           "member": 22, "check": 24, "question": 6}  # SymbolKind: Constant, Variable, Function, Struct ...
SNIPPET, QUICKFIX, INLAY_TYPE, WRITE, READ = 2, "quickfix", 1, 3, 2

CAPABILITIES = {
    "textDocumentSync": {"openClose": True, "change": 2, "save": True},  # change: Incremental
    "completionProvider": {"triggerCharacters": [".", "@", '"', ">", "="]},  # not a space: a popup after every word
    "hoverProvider": True,
    "signatureHelpProvider": {"triggerCharacters": ["(", ","]},
    "definitionProvider": True,
    "referencesProvider": True,
    "documentHighlightProvider": True,
    "documentSymbolProvider": True,
    "codeActionProvider": {"codeActionKinds": [QUICKFIX]},
    "codeLensProvider": {"resolveProvider": False},
    "workspaceSymbolProvider": {"resolveProvider": False},
    "documentFormattingProvider": True,
    "documentRangeFormattingProvider": True,
    "renameProvider": {"prepareProvider": True},
    "foldingRangeProvider": True,
    "semanticTokensProvider": {"legend": {"tokenTypes": TOKEN_TYPES, "tokenModifiers": TOKEN_MODIFIERS},
                               "full": True},
    "inlayHintProvider": {"resolveProvider": False},
}


def to_fs_path(uri: str) -> Optional[str]:
    """The file a ``file:`` URI names (None for another scheme)."""
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme != "file":
        return None
    path = urllib.parse.unquote(parts.path)
    if os.name == "nt":
        if re.match(r"/[A-Za-z]:", path):
            path = path[1:]
        if parts.netloc:
            return f"//{parts.netloc}{path}"
        return path.replace("/", "\\")
    return f"//{parts.netloc}{path}" if parts.netloc else path


def _path_of(uri: str) -> Path:
    """The file a document's URI names; an untitled document (``untitled:Untitled-1``) has none, and is
    taken as a plan in the current folder named after it, which is never read or written."""
    if uri.startswith("file:"):
        found = to_fs_path(uri)
        if found:
            return Path(found)
    name = re.sub(r"[^\w.-]+", "_", uri.split(":", 1)[-1]) or "untitled"
    return Path.cwd() / f"<{name}>"


class PlanServer(Endpoint):
    def __init__(self, out) -> None:
        super().__init__(out)
        self.texts: dict[str, TextDocument] = {}  # the open documents as the client has them
        self.docs: dict = {}  # a document's URI -> its analysis.Document
        self.uris: dict[str, str] = {}  # a document's path (as text) -> its URI, for locations in it
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="planner-check")
        self.evaluator = ThreadPoolExecutor(max_workers=1, thread_name_prefix="planner-evaluate")
        self.inlay_hints = True  # the client's `planner.inlayHints` setting

    def text_of(self, uri: str) -> TextDocument:
        """An open document; one the client has not opened is read from its file (empty if there is none)."""
        found = self.texts.get(uri)
        if found is not None:
            return found
        path = to_fs_path(uri) if uri.startswith("file:") else None
        try:
            text = Path(path).read_text(encoding="utf-8") if path else ""
        except (OSError, UnicodeDecodeError):
            text = ""
        return TextDocument(uri, text, None)

    def doc(self, uri: str):
        text = self.text_of(uri).source
        if uri not in self.docs:
            self.docs[uri] = analysis.Document(_path_of(uri), text)
            self.uris[str(self.docs[uri].path)] = uri
        doc = self.docs[uri]
        doc.text = text
        return doc

    def schedule(self, uri: str, delay: float = CHECK_DELAY) -> None:
        """Check ``uri`` once typing has paused for ``delay`` seconds (then evaluate it, later)."""
        if uri in self.pending:
            self.pending[uri].cancel()
        self.pending[uri] = self.loop.call_later(delay, lambda: asyncio.ensure_future(self.analyse(uri)))

    def _version(self, uri: str):
        return self.texts[uri].version if uri in self.docs and uri in self.texts else None

    async def analyse(self, uri: str) -> None:
        """Parse and check (fast: every keystroke), publish; then, after a pause, evaluate and run the checks."""
        self.pending.pop(uri, None)
        if uri not in self.docs:
            return
        document = self.text_of(uri)
        text, version = document.source, document.version
        doc = self.docs[uri]
        try:
            found = await self.loop.run_in_executor(self.checker, doc.check, text)
        except Exception as exc:  # a bug in planner: say so in the editor, never crash the server
            found = _internal(exc)
        if self._version(uri) != version:
            return  # the text changed meanwhile: the next analysis publishes
        self.publish(uri, version, found)
        self.pending[uri] = self.loop.call_later(EVALUATE_DELAY, lambda: asyncio.ensure_future(
            self.evaluate(uri, version, text, found)))

    async def evaluate(self, uri: str, version, text: str, checked: list) -> None:
        self.pending.pop(uri, None)
        if self._version(uri) != version:
            return  # cancelled by a newer keystroke
        doc = self.docs[uri]
        try:
            values, found = await self.loop.run_in_executor(
                self.evaluator, doc.evaluate, doc.plan if doc.plan_text == text else None, text)
        except Exception as exc:  # noqa: BLE001  (as in analyse)
            values, found = {}, _internal(exc)
        if self._version(uri) != version:
            return
        if values:
            doc.values, doc.values_text = values, text
        if found:
            self.publish(uri, version, checked + found)
        self.notify(DONE, {"uri": uri, "version": version})

    def publish(self, uri: str, version, found: list) -> None:
        params = {"uri": uri, "diagnostics": [_diagnostic(d, self) for d in found]}
        if version is not None:
            params["version"] = version
        self.notify("textDocument/publishDiagnostics", params)

    def reanalyse_importers(self, changed: set[Path]) -> None:
        """Check again every open plan that imports one of ``changed`` (directly or through others)."""
        for uri, doc in list(self.docs.items()):
            if doc.imports_any(changed):
                self.schedule(uri, 0)


def _internal(exc: Exception) -> list:
    logging.exception("analysis failed")
    return [analysis.Diagnostic(analysis.Range((0, 0), (0, 0)),
                                f"planner: internal error: {type(exc).__name__}: {exc}", analysis.ERROR, "internal")]


def _position(p: tuple[int, int]) -> dict:
    return {"line": p[0], "character": p[1]}


def _range(r) -> dict:
    return {"start": _position(r.start), "end": _position(r.end)}


def _range_of(r: dict) -> analysis.Range:
    """A protocol range as the analysis takes it."""
    return analysis.Range((r["start"]["line"], r["start"]["character"]), (r["end"]["line"], r["end"]["character"]))


def _uri(path: Path, ls: Optional[PlanServer] = None) -> str:
    """The URI of a file: an open document's own (an untitled one keeps its ``untitled:`` URI)."""
    if ls is not None and str(path) in ls.uris:
        return ls.uris[str(path)]
    return Path(path).absolute().as_uri()


def _location(loc, ls: Optional[PlanServer] = None) -> dict:
    return {"uri": _uri(loc.path, ls), "range": _range(loc.range)}


def _diagnostic(d, ls: Optional[PlanServer] = None) -> dict:
    out = {"range": _range(d.range), "message": d.message, "severity": _SEVERITY[d.severity], "code": d.code,
           "source": "planner"}
    related = [{"location": _location(loc, ls), "message": text} for loc, text in d.related]
    if related:
        out["relatedInformation"] = related
    return out


def _at(params: dict) -> tuple[int, int]:
    p = params["position"]
    return p["line"], p["character"]


def _uri_of(params: dict) -> str:
    return params["textDocument"]["uri"]


def _edits(edits) -> list[dict]:
    return [{"range": _range(r), "newText": new} for r, new in edits]


def _drop_none(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


def serve(out) -> PlanServer:
    """The server with its handlers, writing to ``out``."""
    ls = PlanServer(out)

    @ls.handle("initialize")
    def initialize(params: dict) -> dict:
        general = (params.get("capabilities") or {}).get("general") or {}
        chosen = next((e for e in general.get("positionEncodings") or () if e in SUPPORTED), "utf-16")
        ENCODING["unit"] = chosen
        return {"capabilities": {"positionEncoding": chosen, **CAPABILITIES},
                "serverInfo": {"name": "planner", "version": __version__}}

    @ls.handle("initialized")
    def initialized(params: dict) -> None:
        pass

    @ls.handle("textDocument/didOpen")
    def did_open(params: dict) -> None:
        item = params["textDocument"]
        ls.texts[item["uri"]] = TextDocument(item["uri"], item["text"], item.get("version"))
        ls.doc(item["uri"])
        ls.schedule(item["uri"], 0)

    @ls.handle("textDocument/didChange")
    def did_change(params: dict) -> None:
        uri = params["textDocument"]["uri"]
        document = ls.texts.get(uri)
        if document is None:
            return  # not opened: nothing to change
        for change in params.get("contentChanges") or ():
            document.source = edit(document.source, change)
        document.version = params["textDocument"].get("version")
        ls.doc(uri)
        ls.schedule(uri)

    @ls.handle("textDocument/didSave")
    def did_save(params: dict) -> None:
        uri = _uri_of(params)
        if uri not in ls.texts:
            return
        ls.schedule(uri, 0)  # an imported plan may have changed on disk
        if uri in ls.docs:
            ls.reanalyse_importers({ls.docs[uri].path.resolve()})

    @ls.handle("workspace/didChangeWatchedFiles")
    def did_change_watched_files(params: dict) -> None:
        """A plan changed on disk (saved by another editor, checked out, deleted): the open plans that
        import it are checked again."""
        changed = set()
        for event in params.get("changes") or ():
            found = to_fs_path(event["uri"])
            if found:
                changed.add(Path(found).resolve())
        if changed:
            ls.reanalyse_importers(changed)

    @ls.handle("textDocument/didClose")
    def did_close(params: dict) -> None:
        uri = _uri_of(params)
        ls.texts.pop(uri, None)
        gone = ls.docs.pop(uri, None)
        if gone is not None:
            ls.uris.pop(str(gone.path), None)
        if uri in ls.pending:
            ls.pending.pop(uri).cancel()
        ls.notify("textDocument/publishDiagnostics", {"uri": uri, "diagnostics": []})

    @ls.handle("textDocument/hover")
    def hover(params: dict) -> Optional[dict]:
        found = ls.doc(_uri_of(params)).hover(*_at(params))
        if found is None:
            return None
        text, rng = found
        return {"contents": {"kind": "markdown", "value": text}, "range": _range(rng)}

    @ls.handle("textDocument/definition")
    def definition(params: dict) -> Optional[dict]:
        found = ls.doc(_uri_of(params)).definition(*_at(params))
        return None if found is None else _location(found, ls)

    @ls.handle("textDocument/completion")
    def completion(params: dict) -> dict:
        items = []
        doc = ls.doc(_uri_of(params))
        typed = _range(doc.typed(*_at(params)))  # what each item replaces: the path or name typed so far
        for c in doc.complete(*_at(params)):
            item = _drop_none({"label": c.label, "kind": _COMPLETION[c.kind], "detail": c.detail or None,
                               "documentation": c.documentation or None, "sortText": c.sort or None})
            item["textEdit"] = {"range": typed, "newText": c.insert or c.label}
            if c.insert:
                item["insertTextFormat"] = SNIPPET
            items.append(item)
        return {"isIncomplete": False, "items": items}

    def symbol(s) -> dict:
        return _drop_none({"name": s.name, "kind": _SYMBOL[s.kind], "range": _range(s.range),
                           "selectionRange": _range(s.selection), "detail": s.detail or None,
                           "children": [symbol(c) for c in s.children] or None})

    @ls.handle("textDocument/documentSymbol")
    def symbols(params: dict) -> list[dict]:
        return [symbol(s) for s in ls.doc(_uri_of(params)).symbols()]

    @ls.handle("textDocument/references")
    def references(params: dict) -> list[dict]:
        uri = _uri_of(params)
        try:
            found = ls.doc(uri).references(*_at(params))
        except analysis.RenameError:
            return []
        return [{"uri": uri, "range": _range(r)} for r in found]

    @ls.handle("textDocument/prepareRename")
    def prepare_rename(params: dict) -> dict:
        try:
            rng, name = ls.doc(_uri_of(params)).prepare_rename(*_at(params))
        except analysis.RenameError as exc:
            raise RequestFailed(str(exc)) from None
        return {"range": _range(rng), "placeholder": name}

    @ls.handle("textDocument/rename")
    def rename(params: dict) -> dict:
        uri = _uri_of(params)
        try:
            edits = ls.doc(uri).rename(*_at(params), params["newName"])
        except analysis.RenameError as exc:
            raise RequestFailed(str(exc)) from None
        return {"changes": {uri: _edits(edits)}}

    @ls.handle("textDocument/codeAction")
    def code_action(params: dict) -> list[dict]:
        uri = _uri_of(params)
        given = [d for d in (params.get("context") or {}).get("diagnostics") or () if d.get("source") == "planner"]
        r = params["range"]
        if not given:  # a client that sends none (a lightbulb at the cursor): the document's own, where the range is
            here = _range_of(r)
            given = [_diagnostic(d, ls) for d in ls.doc(uri).diagnostics
                     if d.range.start <= here.end and here.start <= d.range.end]
        wanted = [(_range_of(d["range"]), d.get("message", ""), str(d.get("code") or "")) for d in given]
        doc = ls.doc(uri)
        out = []
        for title, edits, i in doc.code_actions(wanted):
            out.append({"title": title, "kind": QUICKFIX, "diagnostics": [given[i]],
                        "isPreferred": len(edits) == 1 and title.startswith(("Change to", "Write")),
                        "edit": {"changes": {uri: _edits(edits)}}})
        for title, edits in doc.unit_actions(r["start"]["line"], r["end"]["line"]):
            out.append({"title": title, "kind": QUICKFIX, "edit": {"changes": {uri: _edits(edits)}}})
        return out

    @ls.handle("textDocument/inlayHint")
    def inlay_hint(params: dict) -> list[dict]:
        if not ls.inlay_hints:
            return []
        r = params["range"]
        doc = ls.doc(_uri_of(params))
        return [_drop_none({"position": _position(at), "label": label, "kind": INLAY_TYPE, "paddingLeft": False,
                            "tooltip": tip or None})
                for at, label, tip in doc.inlay_hints(r["start"]["line"], r["end"]["line"])]

    @ls.handle("workspace/didChangeConfiguration")
    def did_change_configuration(params: dict) -> None:
        """``planner.inlayHints`` (true by default) turns the values beside each definition on or off."""
        settings = params.get("settings")
        planner = settings.get("planner", settings) if isinstance(settings, dict) else {}
        if isinstance(planner, dict) and "inlayHints" in planner:
            ls.inlay_hints = bool(planner["inlayHints"])

    @ls.handle("textDocument/signatureHelp")
    def signature_help(params: dict) -> Optional[dict]:
        found = ls.doc(_uri_of(params)).signature(*_at(params))
        if found is None:
            return None
        label, names, active, doc = found
        sig = _drop_none({"label": label, "documentation": doc or None,
                          "parameters": [{"label": n} for n in names]})
        return {"signatures": [sig], "activeSignature": 0, "activeParameter": active}

    @ls.handle("textDocument/documentHighlight")
    def document_highlight(params: dict) -> list[dict]:
        found = ls.doc(_uri_of(params)).highlights(*_at(params))
        return [{"range": _range(r), "kind": WRITE if is_def else READ} for r, is_def in found]

    @ls.handle("textDocument/foldingRange")
    def folding_range(params: dict) -> list[dict]:
        return [{"startLine": a, "endLine": b} for a, b in ls.doc(_uri_of(params)).folding()]

    @ls.handle("textDocument/codeLens")
    async def code_lens(params: dict) -> list[dict]:
        """Each question's answer above it, solved on the evaluation worker (remembered until the text changes)."""
        doc = ls.doc(_uri_of(params))
        text = doc.plan_text
        if doc.plan is None or doc.plan_text != doc.text:
            return []  # the text changed since it was checked: the client asks again
        if getattr(doc, "lens_text", None) != text:
            doc.lenses = await ls.loop.run_in_executor(ls.evaluator, doc.answers, doc.plan)
            doc.lens_text = text
        return [{"range": _range(r), "command": {"title": title, "command": ""}} for r, title in doc.lenses]

    @ls.handle("workspace/symbol")
    def workspace_symbol(params: dict) -> list[dict]:
        """The names of every open plan and of the plans they import, matching the query (letters in order)."""
        query = (params.get("query") or "").lower()
        out, seen = [], set()
        for doc in list(ls.docs.values()):
            for name, kind, loc, container in doc.workspace_symbols():
                key = (name, str(loc.path), loc.range.start)
                if key in seen or not _fuzzy(query, name.lower()):
                    continue
                seen.add(key)
                out.append(_drop_none({"name": name, "kind": _SYMBOL[kind], "location": _location(loc, ls),
                                       "containerName": container or None}))
        return out[:500]

    @ls.handle("textDocument/semanticTokens/full")
    def semantic_tokens(params: dict) -> dict:
        return {"data": ls.doc(_uri_of(params)).semantic_tokens()}

    @ls.handle("textDocument/rangeFormatting")
    async def range_formatting(params: dict) -> Optional[list[dict]]:
        r = _range_of(params["range"])
        doc = ls.doc(_uri_of(params))
        # (formatting the whole plan to line the range up with it takes a while on a long plan: off the loop,
        # so that hover and completion are answered meanwhile)
        got = await ls.loop.run_in_executor(None, doc.format_range, r.start, r.end)
        if got is None:
            return None  # the diagnostics already say why
        where, new = got
        return [{"range": _range(where), "newText": new}]

    @ls.handle("textDocument/formatting")
    def formatting(params: dict) -> Optional[list[dict]]:
        from ..language.errors import PlanError
        from ..language.format import format_text

        doc = ls.doc(_uri_of(params))
        crlf = "\r\n" in doc.text
        try:
            new = format_text(doc.text.replace("\r\n", "\n"), str(doc.path))
        except PlanError:
            return None  # the diagnostics already say why
        if crlf:
            new = new.replace("\n", "\r\n")
        if new == doc.text:
            return []
        return _line_edits(doc.text, new)

    return ls


def _line_edits(old: str, new: str) -> list[dict]:
    """The edits that turn ``old`` into ``new``, a run of changed lines each (difflib), so that an editor
    keeps the cursor, folds and marks of the lines formatting leaves alone."""
    import difflib

    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    at = [0]  # the offset of each line of the old text
    for line in a:
        at.append(at[-1] + len(line))
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        start, end = at[i1], at[i2]
        edits.append({"range": {"start": _position(position(old, start)), "end": _position(position(old, end))},
                      "newText": "".join(b[j1:j2])})
    return edits


def _fuzzy(query: str, name: str) -> bool:
    at = 0
    for ch in query:
        at = name.find(ch, at) + 1
        if at == 0:
            return False
    return True


def main() -> int:
    """Serve on stdin and stdout until ``exit``; then leave at once, with the protocol's exit status (0 after
    ``shutdown``), whatever the workers were doing (an evaluation is not waited for; the thread reading
    stdin, blocked in a read, could not be joined)."""
    import sys

    from .framing import Frames, LockedOutput

    out = LockedOutput(sys.stdout.buffer)
    ls = serve(out)
    ls.checker.submit(lambda: analysis.Document)  # the language loads while the client starts up
    code = ls.serve(Frames(sys.stdin.buffer, out))
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)
