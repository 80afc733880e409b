"""Passes over TIR and the infrastructure they run in."""
