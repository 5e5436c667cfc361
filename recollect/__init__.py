"""Recollect: a LangGraph agent template whose memory is bounded, durable and private."""
