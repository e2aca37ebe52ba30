"""The language server over stdio (pygls; its one home, with lsprotocol).

Handlers translate protocol messages to :class:`planner.lsp.analysis.Document`
calls and back. Analysis (parse, check, evaluate, run the checks) runs on
one worker thread, a short pause after the last keystroke, and its
diagnostics are published only if the text has not changed meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__

class _Analysis:
    """planner.lsp.analysis, imported on first use (after ``initialize`` is answered: it brings the
    whole language, lark and the compute stage, a third of the server's start)."""

    def __getattr__(self, name: str):
        import importlib

        return getattr(importlib.import_module("planner.lsp.analysis"), name)


analysis = _Analysis()

CHECK_DELAY = 0.01  # seconds of quiet typing before a keystroke's text is parsed and checked
EVALUATE_DELAY = 0.4  # seconds of quiet after that before every scenario is evaluated and the checks run
DONE = "$/planner/analysed"  # sent after the last diagnostics of a version (clients may ignore `$/` messages)

_SEVERITY = {1: t.DiagnosticSeverity.Error, 2: t.DiagnosticSeverity.Warning,  # analysis.ERROR, WARNING,
             3: t.DiagnosticSeverity.Information}  # INFORMATION
_COMPLETION = {"quantity": t.CompletionItemKind.Variable, "input": t.CompletionItemKind.Constant,
               "function": t.CompletionItemKind.Function, "unit": t.CompletionItemKind.Unit,
               "scenario": t.CompletionItemKind.EnumMember, "axis": t.CompletionItemKind.Enum,
               "keyword": t.CompletionItemKind.Keyword, "file": t.CompletionItemKind.File}
_SYMBOL = {"input": t.SymbolKind.Constant, "quantity": t.SymbolKind.Variable, "function": t.SymbolKind.Function,
           "unit": t.SymbolKind.Struct, "scenario": t.SymbolKind.Namespace, "axis": t.SymbolKind.Enum,
           "member": t.SymbolKind.EnumMember, "check": t.SymbolKind.Event, "question": t.SymbolKind.Method}


def _path_of(uri: str) -> Path:
    """The file a document's URI names; an untitled document (``untitled:Untitled-1``) has none, and is
    taken as a plan in the current folder named after it, which is never read or written."""
    if uri.startswith("file:"):
        found = to_fs_path(uri)
        if found:
            return Path(found)
    name = re.sub(r"[^\w.-]+", "_", uri.split(":", 1)[-1]) or "untitled"
    return Path.cwd() / f"<{name}>"


class PlanServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("planner", __version__, text_document_sync_kind=t.TextDocumentSyncKind.Incremental)
        self.docs: dict[str, Document] = {}
        self.uris: dict[str, str] = {}  # a document's path (as text) -> its URI, for locations in it
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="planner-check")
        self.evaluator = ThreadPoolExecutor(max_workers=1, thread_name_prefix="planner-evaluate")
        self.inlay_hints = True  # the client's `planner.inlayHints` setting

    def doc(self, uri: str) -> Document:
        if uri not in self.docs:
            text = self.workspace.get_text_document(uri).source
            self.docs[uri] = analysis.Document(_path_of(uri), text)
            self.uris[str(self.docs[uri].path)] = uri
        doc = self.docs[uri]
        doc.text = self.workspace.get_text_document(uri).source
        return doc

    def schedule(self, uri: str, delay: float = CHECK_DELAY) -> None:
        """Check ``uri`` once typing has paused for ``delay`` seconds (then evaluate it, later)."""
        loop = asyncio.get_running_loop()
        if uri in self.pending:
            self.pending[uri].cancel()
        self.pending[uri] = loop.call_later(delay, lambda: asyncio.ensure_future(self.analyse(uri)))

    def _version(self, uri: str):
        return self.workspace.get_text_document(uri).version if uri in self.docs else None

    async def analyse(self, uri: str) -> None:
        """Parse and check (fast: every keystroke), publish; then, after a pause, evaluate and run the checks."""
        self.pending.pop(uri, None)
        if uri not in self.docs:
            return
        document = self.workspace.get_text_document(uri)
        text, version = document.source, document.version
        doc = self.docs[uri]
        loop = asyncio.get_running_loop()
        try:
            found = await loop.run_in_executor(self.checker, doc.check, text)
        except Exception as exc:  # a bug in planner: say so in the editor, never crash the server
            found = _internal(exc)
        if self._version(uri) != version:
            return  # the text changed meanwhile: the next analysis publishes
        self.publish(uri, version, found)
        self.pending[uri] = loop.call_later(EVALUATE_DELAY, lambda: asyncio.ensure_future(
            self.evaluate(uri, version, text, found)))

    async def evaluate(self, uri: str, version, text: str, checked: list) -> None:
        self.pending.pop(uri, None)
        if self._version(uri) != version:
            return  # cancelled by a newer keystroke
        doc = self.docs[uri]
        try:
            values, found = await asyncio.get_running_loop().run_in_executor(
                self.evaluator, doc.evaluate, doc.plan if doc.plan_text == text else None, text)
        except Exception as exc:  # noqa: BLE001  (as in analyse)
            values, found = {}, _internal(exc)
        if self._version(uri) != version:
            return
        if values:
            doc.values = values
        if found:
            self.publish(uri, version, checked + found)
        self.protocol.notify(DONE, {"uri": uri, "version": version})

    def publish(self, uri: str, version, found: list) -> None:
        self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=[_diagnostic(d, self) for d in found]))

    def reanalyse_importers(self, changed: set[Path]) -> None:
        """Check again every open plan that imports one of ``changed`` (directly or through others)."""
        for uri, doc in list(self.docs.items()):
            if doc.imports_any(changed):
                self.schedule(uri, 0)


def _internal(exc: Exception) -> list:
    logging.exception("analysis failed")
    return [analysis.Diagnostic(analysis.Range((0, 0), (0, 0)),
                                f"planner: internal error: {type(exc).__name__}: {exc}", analysis.ERROR, "internal")]


server = PlanServer()


def _position(p: tuple[int, int]) -> t.Position:
    return t.Position(line=p[0], character=p[1])


def _range(r: analysis.Range) -> t.Range:
    return t.Range(start=_position(r.start), end=_position(r.end))


def _uri(path: Path, ls: Optional[PlanServer] = None) -> str:
    """The URI of a file: an open document's own (an untitled one keeps its ``untitled:`` URI)."""
    if ls is not None and str(path) in ls.uris:
        return ls.uris[str(path)]
    return from_fs_path(str(path)) or path.as_uri()


def _location(loc: analysis.Location, ls: Optional[PlanServer] = None) -> t.Location:
    return t.Location(uri=_uri(loc.path, ls), range=_range(loc.range))


def _diagnostic(d: analysis.Diagnostic, ls: Optional[PlanServer] = None) -> t.Diagnostic:
    related = [t.DiagnosticRelatedInformation(location=_location(loc, ls), message=text) for loc, text in d.related]
    return t.Diagnostic(range=_range(d.range), message=d.message, severity=_SEVERITY[d.severity], code=d.code,
                        source="planner", related_information=related or None)


@server.feature(t.INITIALIZED)
def initialized(ls: PlanServer, params: t.InitializedParams) -> None:
    chosen = ls.workspace.position_encoding or "utf-16"
    encoding = str(getattr(chosen, "value", chosen))  # an enum member, or its text
    analysis.ENCODING["unit"] = encoding if encoding in ("utf-8", "utf-16", "utf-32") else "utf-16"
    ls.checker.submit(lambda: analysis.Document)  # the language loads while the client opens its files


@server.feature(t.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: PlanServer, params: t.DidOpenTextDocumentParams) -> None:
    ls.doc(params.text_document.uri)
    ls.schedule(params.text_document.uri, 0)


@server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: PlanServer, params: t.DidChangeTextDocumentParams) -> None:
    ls.doc(params.text_document.uri)
    ls.schedule(params.text_document.uri)


@server.feature(t.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: PlanServer, params: t.DidSaveTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)  # an imported plan may have changed on disk
    if params.text_document.uri in ls.docs:
        ls.reanalyse_importers({ls.docs[params.text_document.uri].path.resolve()})


@server.feature(t.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(ls: PlanServer, params: t.DidChangeWatchedFilesParams) -> None:
    """A plan changed on disk (saved by another editor, checked out, deleted): the open plans that
    import it are checked again."""
    changed = set()
    for event in params.changes:
        found = to_fs_path(event.uri) if event.uri.startswith("file:") else None
        if found:
            changed.add(Path(found).resolve())
    if changed:
        ls.reanalyse_importers(changed)


@server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: PlanServer, params: t.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    gone = ls.docs.pop(uri, None)
    if gone is not None:
        ls.uris.pop(str(gone.path), None)
    if uri in ls.pending:
        ls.pending.pop(uri).cancel()
    ls.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(t.TEXT_DOCUMENT_HOVER)
def hover(ls: PlanServer, params: t.HoverParams) -> Optional[t.Hover]:
    found = ls.doc(params.text_document.uri).hover(params.position.line, params.position.character)
    if found is None:
        return None
    text, rng = found
    return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=text), range=_range(rng))


@server.feature(t.TEXT_DOCUMENT_DEFINITION)
def definition(ls: PlanServer, params: t.DefinitionParams) -> Optional[t.Location]:
    found = ls.doc(params.text_document.uri).definition(params.position.line, params.position.character)
    return None if found is None else _location(found, ls)


@server.feature(t.TEXT_DOCUMENT_COMPLETION, t.CompletionOptions(trigger_characters=[".", "@", '"', ">", " ", "="]))
def completion(ls: PlanServer, params: t.CompletionParams) -> t.CompletionList:
    items = []
    for c in ls.doc(params.text_document.uri).complete(params.position.line, params.position.character):
        item = t.CompletionItem(label=c.label, kind=_COMPLETION[c.kind], detail=c.detail or None,
                                documentation=c.documentation or None, sort_text=c.sort or None)
        if c.insert:
            item.insert_text = c.insert
            item.insert_text_format = t.InsertTextFormat.Snippet
        items.append(item)
    return t.CompletionList(is_incomplete=False, items=items)


def _symbol(s: analysis.Symbol) -> t.DocumentSymbol:
    return t.DocumentSymbol(name=s.name, kind=_SYMBOL[s.kind], range=_range(s.range),
                            selection_range=_range(s.selection), detail=s.detail or None,
                            children=[_symbol(c) for c in s.children] or None)


@server.feature(t.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def symbols(ls: PlanServer, params: t.DocumentSymbolParams) -> list[t.DocumentSymbol]:
    return [_symbol(s) for s in ls.doc(params.text_document.uri).symbols()]


@server.feature(t.TEXT_DOCUMENT_REFERENCES)
def references(ls: PlanServer, params: t.ReferenceParams) -> list[t.Location]:
    uri = params.text_document.uri
    try:
        found = ls.doc(uri).references(params.position.line, params.position.character)
    except analysis.RenameError:
        return []
    return [t.Location(uri=uri, range=_range(r)) for r in found]


@server.feature(t.TEXT_DOCUMENT_PREPARE_RENAME)
def prepare_rename(ls: PlanServer, params: t.PrepareRenameParams):
    try:
        rng, name = ls.doc(params.text_document.uri).prepare_rename(params.position.line, params.position.character)
    except analysis.RenameError as exc:
        raise JsonRpcException(code=-32803, message=str(exc)) from None  # RequestFailed
    return t.PrepareRenamePlaceholder(range=_range(rng), placeholder=name)


@server.feature(t.TEXT_DOCUMENT_RENAME)
def rename(ls: PlanServer, params: t.RenameParams) -> t.WorkspaceEdit:
    uri = params.text_document.uri
    try:
        edits = ls.doc(uri).rename(params.position.line, params.position.character, params.new_name)
    except analysis.RenameError as exc:
        raise JsonRpcException(code=-32803, message=str(exc)) from None
    return t.WorkspaceEdit(changes={uri: [t.TextEdit(range=_range(r), new_text=new) for r, new in edits]})


@server.feature(t.TEXT_DOCUMENT_CODE_ACTION, t.CodeActionOptions(code_action_kinds=[t.CodeActionKind.QuickFix]))
def code_action(ls: PlanServer, params: t.CodeActionParams) -> list[t.CodeAction]:
    uri = params.text_document.uri
    given = [d for d in params.context.diagnostics if d.source == "planner"]
    wanted = [(analysis.Range((d.range.start.line, d.range.start.character), (d.range.end.line, d.range.end.character)),
               d.message, str(d.code or "")) for d in given]
    out = []
    for title, edits, i in ls.doc(uri).code_actions(wanted):
        out.append(t.CodeAction(title=title, kind=t.CodeActionKind.QuickFix, diagnostics=[given[i]],
                                is_preferred=len(edits) == 1 and title.startswith(("Change to", "Write")),
                                edit=t.WorkspaceEdit(changes={uri: [t.TextEdit(range=_range(r), new_text=new)
                                                                    for r, new in edits]})))
    for title, edits in ls.doc(uri).unit_actions(params.range.start.line, params.range.end.line):
        out.append(t.CodeAction(title=title, kind=t.CodeActionKind.QuickFix,
                                edit=t.WorkspaceEdit(changes={uri: [t.TextEdit(range=_range(r), new_text=new)
                                                                    for r, new in edits]})))
    return out


@server.feature(t.TEXT_DOCUMENT_INLAY_HINT)
def inlay_hint(ls: PlanServer, params: t.InlayHintParams) -> list[t.InlayHint]:
    if not ls.inlay_hints:
        return []
    doc = ls.doc(params.text_document.uri)
    return [t.InlayHint(position=_position(at), label=label, kind=t.InlayHintKind.Type, padding_left=False,
                        tooltip=tip or None)
            for at, label, tip in doc.inlay_hints(params.range.start.line, params.range.end.line)]


@server.feature(t.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: PlanServer, params: t.DidChangeConfigurationParams) -> None:
    """``planner.inlayHints`` (true by default) turns the values beside each definition on or off."""
    settings = params.settings if isinstance(params.settings, dict) else {}
    planner = settings.get("planner", settings) if isinstance(settings, dict) else {}
    if isinstance(planner, dict) and "inlayHints" in planner:
        ls.inlay_hints = bool(planner["inlayHints"])


@server.feature(t.TEXT_DOCUMENT_SIGNATURE_HELP, t.SignatureHelpOptions(trigger_characters=["(", ","]))
def signature_help(ls: PlanServer, params: t.SignatureHelpParams) -> Optional[t.SignatureHelp]:
    found = ls.doc(params.text_document.uri).signature(params.position.line, params.position.character)
    if found is None:
        return None
    label, names, active, doc = found
    sig = t.SignatureInformation(label=label, documentation=doc or None,
                                 parameters=[t.ParameterInformation(label=n) for n in names])
    return t.SignatureHelp(signatures=[sig], active_signature=0, active_parameter=active)


@server.feature(t.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
def document_highlight(ls: PlanServer, params: t.DocumentHighlightParams) -> list[t.DocumentHighlight]:
    found = ls.doc(params.text_document.uri).highlights(params.position.line, params.position.character)
    return [t.DocumentHighlight(range=_range(r), kind=t.DocumentHighlightKind.Write if is_def
                                else t.DocumentHighlightKind.Read) for r, is_def in found]


@server.feature(t.TEXT_DOCUMENT_FOLDING_RANGE)
def folding_range(ls: PlanServer, params: t.FoldingRangeParams) -> list[t.FoldingRange]:
    return [t.FoldingRange(start_line=a, end_line=b) for a, b in ls.doc(params.text_document.uri).folding()]


@server.feature(t.TEXT_DOCUMENT_CODE_LENS)
async def code_lens(ls: PlanServer, params: t.CodeLensParams) -> list[t.CodeLens]:
    """Each question's answer above it, solved on the evaluation worker (remembered until the text changes)."""
    uri = params.text_document.uri
    doc = ls.doc(uri)
    text = doc.plan_text
    if doc.plan is None or doc.plan_text != doc.text:
        return []  # the text changed since it was checked: the client asks again
    if getattr(doc, "lens_text", None) != text:
        doc.lenses = await asyncio.get_running_loop().run_in_executor(ls.evaluator, doc.answers, doc.plan)
        doc.lens_text = text
    return [t.CodeLens(range=_range(r), command=t.Command(title=title, command="")) for r, title in doc.lenses]


@server.feature(t.WORKSPACE_SYMBOL)
def workspace_symbol(ls: PlanServer, params: t.WorkspaceSymbolParams) -> list[t.WorkspaceSymbol]:
    """The names of every open plan and of the plans they import, matching the query (letters in order)."""
    query = params.query.lower()
    out, seen = [], set()
    for doc in list(ls.docs.values()):
        for name, kind, loc, container in doc.workspace_symbols():
            key = (name, str(loc.path), loc.range.start)
            if key in seen or not _fuzzy(query, name.lower()):
                continue
            seen.add(key)
            out.append(t.WorkspaceSymbol(name=name, kind=_SYMBOL[kind], location=_location(loc, ls),
                                         container_name=container or None))
    return out[:500]


def _fuzzy(query: str, name: str) -> bool:
    at = 0
    for ch in query:
        at = name.find(ch, at) + 1
        if at == 0:
            return False
    return True


@server.feature(t.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
                t.SemanticTokensLegend(token_types=analysis.TOKEN_TYPES, token_modifiers=analysis.TOKEN_MODIFIERS))
def semantic_tokens(ls: PlanServer, params: t.SemanticTokensParams) -> t.SemanticTokens:
    return t.SemanticTokens(data=ls.doc(params.text_document.uri).semantic_tokens())


@server.feature(t.TEXT_DOCUMENT_RANGE_FORMATTING)
async def range_formatting(ls: PlanServer, params: t.DocumentRangeFormattingParams) -> Optional[list[t.TextEdit]]:
    r = params.range
    doc = ls.doc(params.text_document.uri)
    # (formatting the whole plan to line the range up with it takes a while on a long plan: off the loop,
    # so that hover and completion are answered meanwhile)
    got = await asyncio.get_running_loop().run_in_executor(
        None, doc.format_range, (r.start.line, r.start.character), (r.end.line, r.end.character))
    if got is None:
        return None  # the diagnostics already say why
    where, new = got
    return [t.TextEdit(range=_range(where), new_text=new)]


@server.feature(t.TEXT_DOCUMENT_FORMATTING)
def formatting(ls: PlanServer, params: t.DocumentFormattingParams) -> Optional[list[t.TextEdit]]:
    from ..language.errors import PlanError
    from ..language.format import format_text

    doc = ls.doc(params.text_document.uri)
    crlf = "\r\n" in doc.text
    try:
        new = format_text(doc.text.replace("\r\n", "\n"), str(doc.path))
    except PlanError:
        return None  # the diagnostics already say why
    if crlf:
        new = new.replace("\n", "\r\n")
    if new == doc.text:
        return []
    end = analysis.position(doc.text, len(doc.text))
    return [t.TextEdit(range=t.Range(start=t.Position(line=0, character=0), end=_position(end)), new_text=new)]


def main() -> None:
    import sys

    from .framing import Frames, LockedOutput

    out = LockedOutput(sys.stdout.buffer)
    server.start_io(Frames(sys.stdin.buffer, out), out)
