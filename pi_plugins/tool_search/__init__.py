"""pi 1.6's ``tool_search``: ranks the tools not declared to the model and declares the
matches for the next call. :mod:`.ranking` is the BM25 ranker it shares with codemode."""
