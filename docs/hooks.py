"""MkDocs hook: the API reference's docstrings are written with Sphinx roles (``:class:`Plan```), which
mkdocstrings leaves as text (":class:" before the code). Each role becomes its code, linked to the
object's entry where the page has exactly one that the name can mean; ``~a.b.C`` shows as ``C``."""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|mod|data|exc|obj|const):<code>(~?)([^<]*)</code>")
ANCHOR = re.compile(r'id="([A-Za-z_][\w.]*)"')


def on_page_content(html, page, config, files):
    if ":<code>" not in html:
        return html
    ids = set(ANCHOR.findall(html))

    def replace(m: re.Match) -> str:
        short, name = m.group(1), m.group(2)
        shown = name.rsplit(".", 1)[-1] if short else name
        bare = name.rstrip("()")
        found = [i for i in ids if i == bare or i.endswith("." + bare)]
        code = f"<code>{shown}</code>"
        return f'<a href="#{found[0]}">{code}</a>' if len(found) == 1 else code

    return ROLE.sub(replace, html)
