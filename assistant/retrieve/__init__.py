"""Question -> ranked papers with evidence: dense + BM25 fused (retrieval), and the papers a question names
(references).
"""
