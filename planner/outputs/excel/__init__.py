"""Live Excel workbooks: XlsxWriter writes them (formulas with planner's cached values), openpyxl reads
them back.

* :mod:`.generator`: the plan's IR to Excel formulas, as the plan writes them (one method per node;
  precedence, units into display units, Excel's limits), a solve's closed form too (translated back
  into the IR by :mod:`planner.compute.closed`); nothing here imports SymPy;
* :mod:`.names`: plan names to Excel defined names (one mangling rule);
* :mod:`.book`: the shared state and the plain grid every sheet is written into;
* :mod:`.summary`, :mod:`.inputs`, :mod:`.derived`, :mod:`.scenarios`: the Summary, Inputs, Model,
  Scenarios and Check contexts sheets;
* :mod:`.tables`: live row-per-point tables, the sweep sheets and their charts;
* :mod:`.solving`: the Solve sheet (closed forms, in-sheet bisection, optima);
* :mod:`.checking`: the Checks sheet;
* :mod:`.writer`: composes the sheets and renders them with XlsxWriter (the only home of XlsxWriter);
* :mod:`.reader`: ``planner import``, reading edited inputs back (the only home of openpyxl).

Import the submodules where they are needed: the spreadsheet libraries cost ~0.1 s.
"""
