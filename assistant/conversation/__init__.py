"""One conversation: its state (turns, stable ``[n]`` labels; state.py), follow-up resolution (which papers a
question points back to and what to search; resolve.py), the session file (store.py), and the
:class:`~assistant.conversation.session.ChatSession` that runs a turn through them (session.py)."""
