"""Live Excel workbooks (the only home of openpyxl).

* :mod:`.printer`: SymPy to Excel formulas (strict; precedence, limits);
* :mod:`.names`: plan names to Excel defined names;
* :mod:`.writer`: the workbook (Inputs, Model, Scenarios) and saving it;
* :mod:`.tables`: live row-per-point tables and the sweep sheets;
* :mod:`.solving`: the Solve sheet (closed forms, in-sheet bisection, optima);
* :mod:`.checking`: the Checks sheet;
* :mod:`.reader`: ``planner import``, reading edited inputs back.

Import the submodules where they are needed: openpyxl costs ~0.1 s.
"""
