"""What a user may ask of their data: show, export, forget; and how long it lives."""
