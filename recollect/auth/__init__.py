"""Who is calling the served API: API keys, identities, and what each may touch."""
