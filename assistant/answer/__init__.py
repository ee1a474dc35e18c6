"""One answer per turn: the Answerer (retrieve -> plan -> generate and verify), per-intent strategies, answers
built by code, rendering.
"""
