"""What a question asks, read from its wording once per turn (parse: the :class:`~assistant.understand.parse.Question`
holding facts asked, names, premises from question.py and the intent from intents.py), the trained classifiers
(learned), and the per-turn memo of model outputs (turn)."""
