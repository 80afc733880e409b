"""``LoopPartition`` (TVM's): analysis.py decides where to split, rewrite.py splits."""
# ruff: noqa: F401  (this file is the package's list of exports)

from .analysis import PARTITION_HINT, Partition, find_partitions, select_candidates
from .rewrite import LoopPartition, PartitionConfig, loop_partition
