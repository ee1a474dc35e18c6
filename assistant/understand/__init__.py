"""What a question asks, read from its wording: facts asked, names, premises (question) and the intent (intents)."""
