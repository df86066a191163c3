"""The cut's rules: the calibrated threshold, the ratio margin, the calibration's report.

The cut stages (``../``) apply them; the settings read their defaults and names.
"""
