"""The run report: ``stats.json``, a self-contained ``report.html`` and the dataset card.

``paramine.pipelines.report.build.build_report(dataset_url)`` writes all three
beside a dataset's manifest; ``paramine report DIR`` runs it on a finished
dataset. The charts are SVG text written by ``plot``; no plotting library
is imported.
"""
