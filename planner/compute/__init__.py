"""Model to numbers: the second stage.

SymPy trees built from the IR (:mod:`.symbolic`, the home of SymPy
construction), the whole plan compiled to one numpy function
(:mod:`.compiled`), evaluation per scenario with overrides and constraints
(:mod:`.evaluation`), and the diagnosis of values that are not finite
(:mod:`.diagnose`).

Imports only from :mod:`planner.language`.
"""
