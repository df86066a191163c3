"""The run report: ``stats.json``, a self-contained ``report.html`` and the dataset card.

``paramine.pipelines.report.build.build_report(dataset_url)`` writes all three
beside a dataset's manifest; ``paramine report DIR`` runs it on a finished
dataset. The package's modules import matplotlib only when a report is drawn,
and ``calibration`` (used inside the pipeline) imports nothing heavy.
"""
