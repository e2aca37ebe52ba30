"""What people receive: the fourth stage.

What each command prints, as views that render themselves (:mod:`.views`,
over :mod:`.terminal`'s tables, JSON and CSV), the report's view model
(:mod:`.viewmodel`), Markdown reports (:mod:`.report`, the only home of
jinja2), plots (:mod:`.plots`, the only home of matplotlib), ``planner
build`` and safe file writing (:mod:`.build`), and live workbooks
(:mod:`.excel`, the only home of the spreadsheet library).

Imports from the stages below it, never from :mod:`planner.cli` or the API.
"""
