"""The language server over stdio (pygls; its one home, with lsprotocol).

Handlers translate protocol messages to :class:`planner.lsp.analysis.Document`
calls and back. Analysis (parse, check, evaluate, run the checks) runs on
one worker thread, a short pause after the last keystroke, and its
diagnostics are published only if the text has not changed meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from . import analysis
from .analysis import Document, RenameError

DEBOUNCE = 0.25  # seconds of quiet typing before a new analysis

_SEVERITY = {analysis.ERROR: t.DiagnosticSeverity.Error, analysis.WARNING: t.DiagnosticSeverity.Warning,
             analysis.INFORMATION: t.DiagnosticSeverity.Information}
_COMPLETION = {"quantity": t.CompletionItemKind.Variable, "input": t.CompletionItemKind.Constant,
               "function": t.CompletionItemKind.Function, "unit": t.CompletionItemKind.Unit,
               "scenario": t.CompletionItemKind.EnumMember, "axis": t.CompletionItemKind.Enum,
               "keyword": t.CompletionItemKind.Keyword, "file": t.CompletionItemKind.File}
_SYMBOL = {"input": t.SymbolKind.Constant, "quantity": t.SymbolKind.Variable, "function": t.SymbolKind.Function,
           "unit": t.SymbolKind.Struct, "scenario": t.SymbolKind.Namespace, "axis": t.SymbolKind.Enum,
           "member": t.SymbolKind.EnumMember, "check": t.SymbolKind.Event, "question": t.SymbolKind.Method}


class PlanServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("planner", __version__, text_document_sync_kind=t.TextDocumentSyncKind.Incremental)
        self.docs: dict[str, Document] = {}
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="planner-analysis")

    def doc(self, uri: str) -> Document:
        if uri not in self.docs:
            text = self.workspace.get_text_document(uri).source
            self.docs[uri] = Document(Path(to_fs_path(uri) or uri), text)
        doc = self.docs[uri]
        doc.text = self.workspace.get_text_document(uri).source
        return doc

    def schedule(self, uri: str, delay: float = DEBOUNCE) -> None:
        """Analyse ``uri`` once typing has paused for ``delay`` seconds."""
        loop = asyncio.get_running_loop()
        if uri in self.pending:
            self.pending[uri].cancel()
        self.pending[uri] = loop.call_later(delay, lambda: asyncio.ensure_future(self.analyse(uri)))

    async def analyse(self, uri: str) -> None:
        self.pending.pop(uri, None)
        if uri not in self.docs:
            return
        document = self.workspace.get_text_document(uri)
        text, version = document.source, document.version
        doc = self.docs[uri]
        try:
            found = await asyncio.get_running_loop().run_in_executor(self.worker, doc.update, text)
        except Exception as exc:  # a bug in planner: say so in the editor, never crash the server
            logging.exception("analysis failed")
            found = [analysis.Diagnostic(analysis.Range((0, 0), (0, 0)),
                                         f"planner: internal error: {type(exc).__name__}: {exc}", analysis.ERROR,
                                         "internal")]
        if self.workspace.get_text_document(uri).version != version:
            return  # the text changed meanwhile: the next analysis publishes
        self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=[_diagnostic(d) for d in found]))


server = PlanServer()


def _position(p: tuple[int, int]) -> t.Position:
    return t.Position(line=p[0], character=p[1])


def _range(r: analysis.Range) -> t.Range:
    return t.Range(start=_position(r.start), end=_position(r.end))


def _location(loc: analysis.Location) -> t.Location:
    return t.Location(uri=from_fs_path(str(loc.path)), range=_range(loc.range))


def _diagnostic(d: analysis.Diagnostic) -> t.Diagnostic:
    related = [t.DiagnosticRelatedInformation(location=_location(loc), message=text) for loc, text in d.related]
    return t.Diagnostic(range=_range(d.range), message=d.message, severity=_SEVERITY[d.severity], code=d.code,
                        source="planner", related_information=related or None)


@server.feature(t.INITIALIZED)
def initialized(ls: PlanServer, params: t.InitializedParams) -> None:
    chosen = ls.workspace.position_encoding or "utf-16"
    encoding = str(getattr(chosen, "value", chosen))  # an enum member, or its text
    analysis.ENCODING["unit"] = encoding if encoding in ("utf-8", "utf-16", "utf-32") else "utf-16"


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


@server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: PlanServer, params: t.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.docs.pop(uri, None)
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
    return None if found is None else _location(found)


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
    except RenameError:
        return []
    return [t.Location(uri=uri, range=_range(r)) for r in found]


@server.feature(t.TEXT_DOCUMENT_PREPARE_RENAME)
def prepare_rename(ls: PlanServer, params: t.PrepareRenameParams):
    try:
        rng, name = ls.doc(params.text_document.uri).prepare_rename(params.position.line, params.position.character)
    except RenameError as exc:
        raise JsonRpcException(code=-32803, message=str(exc)) from None  # RequestFailed
    return t.PrepareRenamePlaceholder(range=_range(rng), placeholder=name)


@server.feature(t.TEXT_DOCUMENT_RENAME)
def rename(ls: PlanServer, params: t.RenameParams) -> t.WorkspaceEdit:
    uri = params.text_document.uri
    try:
        edits = ls.doc(uri).rename(params.position.line, params.position.character, params.new_name)
    except RenameError as exc:
        raise JsonRpcException(code=-32803, message=str(exc)) from None
    return t.WorkspaceEdit(changes={uri: [t.TextEdit(range=_range(r), new_text=new) for r, new in edits]})


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
    server.start_io()
