"""The cuts' maths: the calibrated threshold, the ratio margin and the calibration's report.

The cut stages (``stages/cut/``) and the coherence filter run them; settings read the defaults.
"""
