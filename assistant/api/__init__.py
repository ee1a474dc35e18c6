"""Programs other than ours talk to the assistant here: an OpenAI-compatible chat API, an MCP server and the
paper records they and ``assistant papers`` share. Above ``service`` and ``session``; used by ``cli`` and ``ui``."""
