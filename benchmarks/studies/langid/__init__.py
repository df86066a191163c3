"""Language identification for the prefilter: the study behind py3langid and its ratio rule."""
