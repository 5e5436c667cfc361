"""Test helpers shared by unit and integration tests; kept out of the shipped package."""
