"""TVM's arith test cases (v0.16.0), ported as tables, and what runs them.

``rewrite_cases.py`` is generated from TVM's file by
``scripts/port_tvm_arith_tests.py``; the other tables were ported by hand in
the same one-row-per-case form. ``known_failures.py`` lists every row that
does not pass, with the reason; ``python -m tests.tir.arith.tvm_port.report``
prints the pass rate per TVM class.
"""
