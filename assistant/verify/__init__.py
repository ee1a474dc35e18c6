"""Answer sentences -> supporting abstract sentences -> citations; a sentence nothing supports is dropped
(attribution).
"""
