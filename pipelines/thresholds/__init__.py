"""Group support and coherence: the maths two stages share.

The cut's calibration (``stages/cut/``) measures them and the CoherenceFilter
(``stages/filter/``) cuts by them, so they live below both; the cut's own
maths (the calibrated threshold, the ratio margin) is in ``stages/cut/rules/``.
"""
