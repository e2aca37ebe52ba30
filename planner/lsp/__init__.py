"""The language server: ``planner lsp`` speaks the Language Server Protocol on stdio.

A door, like the CLI and the API: it reads plans through the API
(:mod:`planner.plan`) and answers an editor with diagnostics (the located
errors with their help lines, failed checks), hover (each quantity's value
per scenario, unit, doc, tags and formula), go to definition (into imported
plans too), completion (names, units, functions, scenarios and axis members,
library paths), document symbols, references, rename and formatting.

:mod:`planner.lsp.analysis` answers in plain data; :mod:`planner.lsp.server`
turns protocol messages into its calls and back; :mod:`planner.lsp.protocol` carries the
messages (JSON-RPC over stdio, with the standard library only).
"""
