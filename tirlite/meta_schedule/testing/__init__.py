"""Workloads for testing and benchmarking the tuner (TVM's ``meta_schedule.testing``)."""
