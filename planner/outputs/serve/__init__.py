"""``planner serve FILE``: a local web page for a plan, with its inputs as sliders
(:mod:`.live` computes, :mod:`.app` serves; the page is ``page.html`` and ``page.js``)."""
