"""Text to checked model: the first stage.

Source text and spans (:mod:`.source`), errors as data (:mod:`.errors`),
the LALR parser (:mod:`.parser`, the only home of lark with :mod:`.lower`),
lowering to the typed, frozen IR (:mod:`.lower`, :mod:`.ir`), imports
(:mod:`.imports`), static analysis of names, arity, cycles and scenarios
(:mod:`.analysis`), types and dimensions (:mod:`.dims`, :mod:`.units`), the
dependency graph (:mod:`.graph`) and the checked model (:mod:`.model`).

Imports nothing from the other stages.
"""
