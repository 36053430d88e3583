"""The semantic layer: node embeddings in the graph file, query embedding without torch, vector search.

Only ``ctx embed`` imports sentence-transformers (and so torch). ``ctx build`` embeds a free-text
topic with :mod:`ctx.semantic.numpy_bert`, which runs the same BERT weights in numpy, and reuses
cached or stored vectors whenever it can so that most builds load no model at all.
"""
