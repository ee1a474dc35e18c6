"""The index: embedding models (in-process ONNX/torch or a remote server), Chroma storage and the SQLite catalog
with BM25.
"""
