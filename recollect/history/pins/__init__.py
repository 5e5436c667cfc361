"""Finders of exact values, one class per family: amounts, dates, identifiers, payment and
contact values, and the words that take a value back."""
