"""What a plan asks: the third stage.

Sweep values (:mod:`.ranges`), sweeps (:mod:`.sweep`), solving
(:mod:`.solve`, with the one-unknown mathematics in :mod:`.roots`),
sensitivity (:mod:`.sensitivity`), the ``check`` statements
(:mod:`.checks`) and ``planner explain`` (:mod:`.explain`).

Imports only from :mod:`planner.language` and :mod:`planner.compute`.
"""
