"""ctx: build LLM context from a local knowledge graph."""

__version__ = "0.1.0"
