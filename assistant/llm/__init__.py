"""The language model: prompt templates and the citation grammar (prompts), the OpenAI-compatible client (client)
and the bundled model server (local).
"""
