"""The questions the vector passes ask before they rewrite; each module is named after one.

- ``legality``: may a loop's iterations run as vector lanes (``analyze_loop``)? It reads
  ``accesses`` (every access of the body and where it runs), ``dependence`` (may two
  accesses meet: affine forms, GCD and bounds tests), ``aliasing`` (which buffers may
  share memory) and ``pair_buckets`` (which pairs need a test at all);
- ``branch_safety``: may an ``if`` become straight-line code, and if not, why;
- ``reductions`` and ``scans``: is a loop a reduction or a scan, with which op, or why not;
  ``searches``: is it a search (the best value and its index, a first or last match);
- ``while_search``: is a ``while`` loop a first-index search, and may it run vectorized;
- ``early_exit``: may a first match leave after the first block holding a match;
- ``strides``: which runtime strides are worth versioning on, and is it legal;
- ``interleaving``: which strided accesses form an interleave group.

None of them changes IR: the passes one level up act on their answers.
"""
