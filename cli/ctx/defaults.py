"""What a build uses when neither the command line nor a config file says otherwise.

A leaf: ``ctx.config`` (which merges these with the user's files) and ``ctx.assemble`` (whose
``BuildRequest`` starts from them) both read it, so neither has to import the other.
"""

from __future__ import annotations

# The default lens, chosen per build from the topics (``ctx.assemble.lens_choice``): a topic that
# names a node (id, title, alias) gets the graph-walk lens, a question or phrase gets the question lens.
AUTO_LENS = "auto"
DEFAULT_LENS = AUTO_LENS
GRAPH_LENS = "general"
QUESTION_LENS = "answer"
DEFAULT_MAX_TOKENS = 4000
DEFAULT_ENCODING = "cl100k_base"
