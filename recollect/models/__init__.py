"""Chat models by name, and the offline stand-in."""
