"""``VectorizeLoop``'s rewrite: a vectorized loop's body as vector code.

- ``expr_rules``: the expression rules, one ``visit_<node>`` per kind (``ExprVectorizer``);
- ``stmt_rules``: the statement rules and scalarization (``Vectorizer``);
- ``loops``: finding the vectorized loops, extent checks, remarks (``LoopVectorizer``);
- ``lanes``: replicate / repeat / concatenate vectors.
"""
