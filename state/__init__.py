"""Typed schemas only; this package imports nothing else of ours."""
