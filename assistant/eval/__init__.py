"""Scoring: recall@k, citation precision/recall and facts on question sets; the citation verifier on labelled
claims.
"""
