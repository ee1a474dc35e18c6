"""English written once: word tokens, stopwords, sentence splitting and the wording shared by every stage (a leaf
package).
"""
