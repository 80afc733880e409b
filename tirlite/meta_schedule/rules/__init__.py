"""The schedule rules: one module per kind of block (see ``block_kinds``)."""
