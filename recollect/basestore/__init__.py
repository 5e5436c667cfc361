"""Recollect behind LangGraph's `BaseStore`: namespaces as scopes, items as facts."""
